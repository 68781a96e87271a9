"""C4.5 and the MDL cut points between two values whose sum overflows (issue 29, item 7).

A cut point is the midpoint of two adjacent values; near +-1e308 their sum overflowed
to inf, so C4.5 sent every row down one branch and split the same rows again without
end (bagging on such data grew past 24 GB), and the MDL cut (the gain ratios of the
lazy ensembles, the K2 discretisation) fell at inf. The midpoint is now taken from
halves there, which gives the very bits of the same data in an ordinary unit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.bayesnet.bagging import BaggedK2Classifier
from ensemblekit.bayesnet.classifier import K2Classifier
from ensemblekit.classifiers.bagging import BaggedTreeClassifier, fit_weighted_c45
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.discretize import equal_frequency_cut_points, mdl_cut_points

from ektesting.support import centred_iris

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

#: Eight values of one sign near the float limit: the best cut lies between 1.4e308 and
#: 1.5e308, whose sum overflows.
_BIG = np.array([1.1e308, 1.2e308, 1.3e308, 1.4e308, 1.5e308, 1.6e308, 1.7e308, 1.75e308])
_CLASSES = np.array([0, 0, 0, 0, 1, 1, 1, 1])
_SMALL = np.ldexp(_BIG, -1000)  # the same numbers in an ordinary unit (about 1e7)


def test_c45_splits_between_values_whose_sum_overflows():
    big = C45Tree(unpruned=True).fit(_BIG[:, None], _CLASSES)
    small = C45Tree(unpruned=True).fit(_SMALL[:, None], _CLASSES)
    assert big.feature_.tolist() == small.feature_.tolist() == [0, -1, -1]
    # the threshold moves to the training value below the cut, as J48's does
    assert big.threshold_[0] == 1.4e308 == np.ldexp(small.threshold_[0], 1000)
    assert big.predict(_BIG[:, None]).tolist() == _CLASSES.tolist()


def test_a_weighted_c45_tree_on_such_values_ends():
    counts = np.array([2.0, 1, 0, 3, 1, 2, 0, 1])
    tree = fit_weighted_c45(_BIG[:, None], _CLASSES, counts, n_classes=2)
    assert tree.feature_.size == 3 and tree.threshold_[0] == 1.4e308


def test_mdl_and_equal_frequency_cuts_between_such_values_are_finite_and_exact():
    cuts = mdl_cut_points(_BIG, _CLASSES, 2)
    assert cuts.tolist() == [1.45e308]
    assert cuts.tolist() == np.ldexp(mdl_cut_points(_SMALL, _CLASSES, 2), 1000).tolist()
    freq = equal_frequency_cut_points(_BIG, 2)
    assert freq.tolist() == np.ldexp(equal_frequency_cut_points(_SMALL, 2), 1000).tolist()
    assert np.isfinite(freq).all()


@pytest.mark.parametrize("make", [
    lambda: C45Tree(),
    lambda: BaggedTreeClassifier(n_estimators=3, random_state=0),
    lambda: K2Classifier(),
    lambda: BaggedK2Classifier(n_estimators=2, random_state=0),
], ids=["c45", "bagging", "k2", "bagged-k2"])
def test_classifiers_take_values_of_both_signs_near_the_limits_without_a_warning(make):
    # scikit-learn's input check sums the data first: 1.3e308 + ... - 1.3e308 ... made an
    # "invalid value" RuntimeWarning on stderr before every fit on such data
    X, y = centred_iris(0)
    X = np.ldexp(X, 1022)
    with np.errstate(over="ignore"), pytest.warns(RuntimeWarning, match="invalid value"):
        np.sum(X)  # the data does make the warning the check met
    model = make().fit(X, y)
    assert (model.predict(X) == y).mean() > 0.9


def test_growth_refuses_more_rows_than_its_32_bit_row_indices_hold(monkeypatch):
    # the growth kernel keeps row indices as int32 (issue 30): past the bound, an error,
    # never an overflow (the bound itself is lowered here, 2**31 rows cannot be built)
    import numpy as np

    from ensemblekit.classifiers import _c45_growth
    from ensemblekit.errors import InputError

    monkeypatch.setattr(_c45_growth, "_MAX_ROWS", 4)
    X, y = np.zeros((5, 1)), np.array([0, 1, 0, 1, 0])
    with pytest.raises(InputError, match="fewer than 4 rows, got 5"):
        _c45_growth.grow_c45(X, y, None, np.array([False]), np.array([0]), 2)
    _c45_growth.grow_c45(X[:3], y[:3], None, np.array([False]), np.array([0]), 2)
