"""The lazy ensembles on values near the float limits (issue 29, item 7).

Near +-1e308 the training range of Eq. 2 overflowed and the k-d tree refused the NaN
it made (exit 1); naive Bayes squared the values to inf. A column that large (or that
small) is now measured in a power-of-two unit of its own, which changes no bit of a
range-normalised distance: the data gets the neighbours, weights and votes of the same
data in an ordinary unit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.lazy import lazy_bagging
from ensemblekit.lazy.distance import WeightedDistance, gain_ratios, normalise_weights
from ensemblekit.lazy.lazy_bagging import LazyBaggingClassifier
from ensemblekit.lazy.lazy_stacking import LazyStackingClassifier
from ensemblekit.units import UNIT_LIMIT, in_units, unit_exponents

from ektesting.support import centred_iris

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.fixture(scope="module")
def iris_centred():
    return centred_iris(5)


def test_unit_exponents_leave_ordinary_columns_alone():
    X = np.array([[1e308, 3.0, np.nan, 1e-300, 2.0 ** UNIT_LIMIT, 0.0],
                  [-1e308, -4.0, np.nan, -2e-300, 1.0, 0.0]])
    exponents = unit_exponents(X, [0, 1, 2, 3, 4, 5])
    assert exponents.tolist() == [1024, 0, 0, -995, 0, 0]
    scaled = in_units(X, exponents)
    assert np.abs(scaled[:, [0, 3]]).max() < 1 and np.abs(scaled[:, [0, 3]]).max() >= 0.5
    np.testing.assert_array_equal(scaled[:, [1, 2, 4, 5]], X[:, [1, 2, 4, 5]])
    assert unit_exponents(X, [1]).tolist() == [0] * 6  # nominal columns keep their codes
    assert in_units(X, np.zeros(6, dtype=np.int64)) is X  # no copy when nothing moves


@pytest.mark.parametrize("exponent", [1022, -1000])
def test_the_distance_of_data_near_the_limits_has_the_bits_of_the_ordinary_unit(
        iris_centred, exponent):
    X, y = iris_centred
    scaled = np.ldexp(X, exponent)
    np.testing.assert_array_equal(gain_ratios(scaled, y), gain_ratios(X, y))
    plain = WeightedDistance().fit(X[:100], y[:100])
    extreme = WeightedDistance().fit(scaled[:100], y[:100])
    assert extreme.pairwise(scaled[100:]).tobytes() == plain.pairwise(X[100:]).tobytes()
    query = X[100:].copy()
    query[0, 1] = np.nan  # one row by the formula, the others by the k-d tree
    d_plain, i_plain = plain.kneighbors(query, 7)
    d_big, i_big = extreme.kneighbors(np.ldexp(query, exponent), 7)
    assert d_big.tobytes() == d_plain.tobytes() and i_big.tolist() == i_plain.tolist()


def test_a_query_beyond_any_float_distance_is_answered_without_nan(iris_centred):
    X, y = iris_centred
    dist = WeightedDistance().fit(X, y)
    far = X[:2].copy()
    far[:, 0] = [1e308, -1e308]  # ~1e308 training ranges away: further than a float holds
    d, i = dist.kneighbors(far, 5)
    assert np.isinf(d).all() and not np.isnan(d).any() and i.shape == (2, 5)
    # two such values on the same side are at a finite distance of each other
    assert np.isfinite(dist.pairwise(far[:1], far[:1])).all()


@pytest.mark.parametrize("model", [
    LazyBaggingClassifier(n_estimators=5, random_state=0),
    LazyStackingClassifier(n_estimators=6, random_state=0),
])
def test_lazy_ensembles_near_the_limits_predict_as_in_the_ordinary_unit(
        iris_centred, model, monkeypatch):
    # a row's bags are seeded by a hash of its values, which differ from one unit to
    # another; seed them by position, so that the two runs draw the same bags
    monkeypatch.setattr(lazy_bagging, "_row_keys", lambda X: list(range(X.shape[0])))
    X, y = iris_centred
    scaled = np.ldexp(X, 1022)
    plain = model.fit(X[:100], y[:100]).predict_proba(X[100:])
    extreme = model.fit(scaled[:100], y[:100]).predict_proba(scaled[100:])
    assert extreme.tobytes() == plain.tobytes()
    assert (plain.argmax(axis=1) == y[100:]).mean() >= 0.85  # a classifier, not the prior


def test_naive_bayes_members_give_no_nan_for_a_query_far_from_every_class(iris_centred):
    X, y = iris_centred
    model = LazyStackingClassifier(n_estimators=3, base_estimators="nb", random_state=0)
    far = X[:1].copy()
    far[0, 0] = 1e308
    proba = model.fit(X, y).predict_proba(far)
    assert np.isfinite(proba).all() and proba.sum() == pytest.approx(1.0)


def test_scores_whose_sum_overflows_are_still_normalised():
    assert normalise_weights([1e308, 1e308, 0.0]).tolist() == [0.5, 0.5, 0.0]
    assert normalise_weights([1.5e308, 0.5e308]).tolist() == [0.75, 0.25]
