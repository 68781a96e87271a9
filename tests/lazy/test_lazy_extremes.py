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

from ensemblekit.lazy.distance import WeightedDistance, gain_ratios, normalise_weights
from ensemblekit.lazy.lazy_bagging import LazyBaggingClassifier, _row_keys
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
def test_lazy_ensembles_near_the_limits_predict_as_in_the_ordinary_unit(iris_centred, model):
    # a row's bags are seeded by its places among the training values, which no rescaling
    # moves: the two runs draw the same bags, and every probability has the same bits
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


# --------------------------------------------------------------------------
# the rows' seeds (issue 29, item 4): places among the training values, not values
# --------------------------------------------------------------------------
def _mixed(X):
    """``X`` with a nominal column (codes 0..2) and a few missing values."""
    codes = (np.arange(X.shape[0]) % 3).astype(np.float64)
    out = np.column_stack([X, codes])
    out[::7, 1] = np.nan
    out[3::11, 4] = np.nan
    return out


@pytest.mark.parametrize("rescale", [
    lambda v: np.ldexp(v, 1022),  # to about +-1e308, exactly
    lambda v: v * 1e300,  # a factor that is not a power of two
    np.arctan,  # any strictly increasing map
], ids=["ldexp", "times-1e300", "arctan"])
def test_a_rows_seed_key_survives_any_increasing_rescaling_of_the_data(iris_centred, rescale):
    X, y = iris_centred
    plain, moved = _mixed(X), _mixed(X)
    moved[:, :4] = rescale(X)
    moved[np.isnan(plain)] = np.nan
    a = LazyBaggingClassifier(nominal_features=[4], random_state=0).fit(plain[:100], y[:100])
    b = LazyBaggingClassifier(nominal_features=[4], random_state=0).fit(moved[:100], y[:100])
    assert _row_keys(a, plain) == _row_keys(b, moved)


def test_a_rows_seed_key_depends_on_the_row_and_the_model_only(iris_centred):
    X, y = iris_centred
    data = _mixed(X)
    model = LazyBaggingClassifier(nominal_features=[4], random_state=0).fit(data[:100], y[:100])
    keys = _row_keys(model, data)
    order = np.random.default_rng(3).permutation(len(data))
    assert _row_keys(model, data[order]) == [keys[i] for i in order]
    assert [_row_keys(model, data[i : i + 1])[0] for i in range(5)] == keys[:5]
    # values between the same two training values share a place; a training value, a
    # missing value and another code each have a place of their own
    column = np.unique(data[:100, 0])
    low, high = column[10], column[11]
    row = data[:1].copy()
    places = []
    for value in (low + (high - low) / 3, low + (high - low) / 2, low, high, np.nan):
        row[0, 0] = value
        places.append(_row_keys(model, row)[0])
    assert places[0] == places[1] and len(set(places[1:])) == 4
    row[0, 4] = (row[0, 4] + 1) % 3
    assert _row_keys(model, row)[0] != places[-1]


def _scaled_iris_file(folder, down):
    """iris with each column centred and scaled by a power of two to about +-1e308, then
    divided by ``2**down`` (996: about +-1e8): the same data, one exact factor apart."""
    from ektesting.support import data_path

    lines = data_path("iris.arff").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().upper() == "@DATA") + 1
    rows = [line.split(",") for line in lines[start:] if line.strip() and line[0] != "%"]
    X = np.array([[float(v) for v in r[:4]] for r in rows])
    centred = X - (X.max(axis=0) + X.min(axis=0)) / 2
    top = np.floor(np.log2(np.finfo(float).max / np.abs(centred).max(axis=0))).astype(int)
    scaled = np.ldexp(centred, top - down)
    body = [",".join([*map(repr, map(float, x)), r[4]]) for x, r in zip(scaled, rows)]
    folder.mkdir()
    path = folder / "iris.arff"
    path.write_text("\n".join(lines[:start] + body) + "\n")
    return path, np.abs(scaled).max()


@pytest.mark.parametrize("algo", [
    pytest.param("lazy-bagging", marks=pytest.mark.slow),  # two CVs, two fits and predicts
    pytest.param("lazy-stacking", marks=pytest.mark.slow),
    "knn",
])
def test_cli_predictions_near_the_limits_are_those_of_the_ordinary_unit(tmp_path, algo):
    from ektesting.support import run_cli

    outputs = {}
    for tag, down in (("1e8", 996), ("1e308", 0)):
        data, largest = _scaled_iris_file(tmp_path / tag, down)
        assert 0.5e308 < largest * 2.0 ** down < np.finfo(float).max
        model = tmp_path / tag / "m.ekm"
        fit = run_cli("fit", algo, data, "-o", model, "--seed", "1")
        assert fit.exit_code == 0, fit.output
        predict = run_cli("predict", model, data, "--proba")
        cv = run_cli("evaluate", algo, data, "--cv", "5", "--repeats", "1", "--seed", "1",
                     "--format", "json")
        assert predict.exit_code == 0 and cv.exit_code == 0, predict.output + cv.output
        outputs[tag] = (predict.stdout, cv.stdout)
    # every probability of every row, and every fold's every measure (log-loss, RMSE and
    # the others read the probabilities): the same bits
    assert outputs["1e308"] == outputs["1e8"]
    assert len(outputs["1e8"][0].splitlines()) == 151
