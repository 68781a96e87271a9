"""knn (IBk) on values near the float limits: the predictions of the same data in an ordinary unit.

Issue 29 (7): with max - min overflowing, IBk's scaled values became 0 or NaN and knn
predicted the majority class. Scaling data by a power of two changes no bit of IBk's
scaled differences when nothing overflows, so the data near +-1e308 (and near 1e-301)
must give exactly the probabilities of the same data in an ordinary unit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.classifiers.ibk import IBk
from ensemblekit.classifiers.ibk_model import _scale

from ektesting.support import centred_iris

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.fixture(scope="module")
def iris_centred():
    return centred_iris(3)


@pytest.mark.parametrize("exponent", [1022, -1000])  # |x| up to 1.3e308; down to ~1e-302
@pytest.mark.parametrize("range_update", ["cumulative", "none"])
@pytest.mark.parametrize("weights", ["uniform", "inverse", "similarity"])
def test_data_near_the_float_limits_gets_the_bits_of_the_ordinary_unit(
        iris_centred, exponent, range_update, weights):
    X, y = iris_centred
    scaled = np.ldexp(X, exponent)
    assert np.abs(scaled).max() > 1e308 or np.abs(scaled).max() < 1e-300
    params = dict(n_neighbors=3, weights=weights, range_update=range_update)
    plain = IBk(**params).fit(X[:100], y[:100])
    extreme = IBk(**params).fit(scaled[:100], y[:100])
    want = plain.predict_proba(X[100:])
    got = extreme.predict_proba(scaled[100:])
    assert got.tobytes() == want.tobytes()
    assert (plain.predict(X[100:]) == y[100:]).mean() > 0.9  # a real classifier, not the prior


def test_a_range_that_overflows_is_scaled_from_halves():
    values = np.array([1e308, -1e308, 0.0, np.nan, 5e307])
    np.testing.assert_array_equal(_scale(values, -1e308, 1e308), [1.0, 0.0, 0.5, np.nan, 0.75])
    # x - min overflows although max - min does not (a test row outside the training range)
    assert _scale(np.array([-1.5e308]), 1e308, 1.5e308).tolist() == [-5.0]
    # a column without known values, and a constant one, still scale to 0
    assert _scale(np.array([3.0]), np.inf, -np.inf).tolist() == [0.0]
    assert _scale(np.array([1e308]), 1e308, 1e308).tolist() == [0.0]


@pytest.mark.parametrize("weights", ["uniform", "inverse", "similarity"])
def test_a_test_value_beyond_any_float_distance_gives_no_nan(iris_centred, weights):
    # with the training ranges fixed, 1e308 lies ~1e308 ranges away: a distance beyond a
    # float, in any unit of the data; every training row is then "nearest" (Weka's ties)
    X, y = iris_centred
    model = IBk(weights=weights, range_update="none").fit(X, y)
    row = X[:1].copy()
    row[0, 2] = 1e308
    proba = model.predict_proba(row)
    assert not np.isnan(proba).any()
    assert model.predict(row)[0] in model.classes_
    if weights == "uniform":  # every row votes: the class shares of the training set
        np.testing.assert_allclose(proba[0], np.bincount(y) / y.size)
