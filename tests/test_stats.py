import numpy as np
import pytest

from ensemblekit.stats import average_ranks


def test_average_ranks_hand_computed_with_ties():
    # data set 1: 0.9 > 0.8 = 0.8 -> ranks 1, 2.5, 2.5
    # data set 2: 0.9 > 0.7 > 0.6 -> ranks 2, 1, 3
    scores = [[0.9, 0.8, 0.8], [0.7, 0.9, 0.6]]
    np.testing.assert_allclose(average_ranks(scores), [1.5, 1.75, 2.75])


def test_average_ranks_lower_is_better_reverses():
    scores = [[1.0, 2.0, 3.0]]
    np.testing.assert_allclose(average_ranks(scores, greater_is_better=False), [1, 2, 3])
    np.testing.assert_allclose(average_ranks(scores, greater_is_better=True), [3, 2, 1])


def test_ranks_sum_to_k_k_plus_one_over_two():
    rng = np.random.default_rng(0)
    scores = rng.random((7, 5))
    assert average_ranks(scores).sum() == pytest.approx(5 * 6 / 2)


@pytest.mark.parametrize("bad", [[], [1.0, 2.0], [[np.nan, 1.0]]])
def test_average_ranks_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        average_ranks(bad)
