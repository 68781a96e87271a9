"""IBk (``knn``): distances, missing values, ranges, ties and votes computed by hand.

Every expected number below is worked out from Weka's rules (see the module docstring of
``ensemblekit.classifiers.ibk``), not read from the code. Distances are read back through
the public ``neighbour_weights`` with ``weights="similarity"`` and one class per training
row: row ``j``'s weight is then ``1 - sqrt(squared distance / n_features)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone

from ensemblekit import api
from ensemblekit.classifiers import ibk_model as ibk_module
from ensemblekit.classifiers.ibk import IBk
from ensemblekit.constraints import InvalidParameterError

from ektesting.estimator_checks import parametrize_with_checks_per_class
from ektesting.support import data_path, load_coded

nan = np.nan


@parametrize_with_checks_per_class(
    [IBk()], variants=[IBk(n_neighbors=3, weights="inverse", range_update="none")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def squared_distances(X_train, X, **params):
    """Squared IBk distances of the rows of ``X`` to every training row, via the votes."""
    n, p = X_train.shape
    clf = IBk(n_neighbors=n, weights="similarity", n_classes=n, **params)
    clf.fit(X_train, np.arange(n))
    w = clf.neighbour_weights(np.asarray(X, dtype=float))
    return p * (1.0 - w) ** 2


# A numeric column (range 0..10), a nominal column of 3 codes, a numeric column (range 2..6).
TRAIN = np.array([[0.0, 0, 2], [10, 1, nan], [4, nan, 6]])


def test_distances_with_missing_values_by_hand():
    sq = squared_distances(TRAIN, [[2.0, 0, nan], [2.0, 0, 3]], nominal_features=[1],
                           n_categories=[3])
    # row 1: query missing in column 2
    #   to t0: (0.2 - 0)^2 + 0 (same code) + t0 scaled 0 < 0.5 -> 1 - 0 = 1   -> 1.04
    #   to t1: (0.2 - 1)^2 + 1 (codes differ) + both missing -> 1              -> 2.64
    #   to t2: (0.2 - 0.4)^2 + 1 (t2's code missing) + t2 scaled 1 -> 1        -> 2.04
    # row 2: column 2 known, scaled (3 - 2) / 4 = 0.25
    #   to t0: 0.04 + 0 + 0.25^2                                               -> 0.1025
    #   to t1: 0.64 + 1 + t1 missing: 0.25 < 0.5 -> 0.75, squared 0.5625       -> 2.2025
    #   to t2: 0.04 + 1 + (0.25 - 1)^2                                         -> 1.6025
    np.testing.assert_allclose(sq, [[1.04, 2.64, 2.04], [0.1025, 2.2025, 1.6025]], atol=1e-12)


def test_nearest_neighbour_predicts_its_class():
    clf = IBk(nominal_features=[1], n_categories=[3]).fit(TRAIN, [0, 1, 2])
    assert clf.predict([[2.0, 0, nan], [9.0, 1, nan]]).tolist() == [0, 1]


def test_missing_against_known_takes_the_larger_side():
    # Range 0..8; a missing query against a training value scaled to v gives max(v, 1 - v).
    X_train = np.array([[0.0], [2], [6], [8]])
    sq = squared_distances(X_train, [[nan]])
    np.testing.assert_allclose(sq, [[1.0, 0.75 ** 2, 0.75 ** 2, 1.0]], atol=1e-12)


def test_constant_column_scales_to_zero_but_missing_still_costs_one():
    # Column 0 is 5 in every training row (range 0): known values scale to 0 and differ by
    # 0; against a missing value the scaled 0 < 0.5 gives 1. Column 1 has range 0..4.
    X_train = np.array([[5.0, 0], [5, 4]])
    sq = squared_distances(X_train, [[5.0, 1], [nan, 1]], range_update="none")
    np.testing.assert_allclose(sq, [[0.0625, 0.5625], [1.0625, 1.5625]], atol=1e-12)
    # a known query value outside a range of 0 still scales to 0 without range updates
    sq = squared_distances(X_train, [[7.0, 1]], range_update="none")
    np.testing.assert_allclose(sq, [[0.0625, 0.5625]], atol=1e-12)
    # with them, the range becomes 5..7: the query scales to 1, the rows to 0
    sq = squared_distances(X_train, [[7.0, 1]])
    np.testing.assert_allclose(sq, [[1.0625, 1.5625]], atol=1e-12)


def test_column_without_known_training_values_costs_one():
    X_train = np.array([[nan, 0.0], [nan, 4]])
    for mode in ("cumulative", "none"):
        sq = squared_distances(X_train, [[3.0, 1], [nan, 1]], range_update=mode)
        np.testing.assert_allclose(sq, [[1.0625, 1.5625]] * 2, atol=1e-12)


def test_each_test_row_widens_the_ranges_for_itself_and_later_rows():
    # Two numeric columns, both ranged 0..10 by the training rows (classes 0 and 1).
    X_train = np.array([[0.0, 0], [10, 10]])
    query = np.array([4.0, 7])
    # Alone: (0.4^2 + 0.7^2 = 0.65) vs (0.6^2 + 0.3^2 = 0.45): class 1 is nearer.
    clf = IBk().fit(X_train, [0, 1])
    assert clf.predict([query]).tolist() == [1]
    # After a row with column 1 = 100 the range of column 1 is 0..100:
    # (0.16 + 0.07^2 = 0.1649) vs (0.36 + 0.03^2 = 0.3609): class 0 is nearer.
    assert clf.predict([[5.0, 100], query]).tolist() == [1, 0]
    sq = squared_distances(X_train, [[5.0, 100], query])
    np.testing.assert_allclose(sq[1], [0.1649, 0.3609], atol=1e-12)
    # the first row sees its own value: (0.5^2 + 1) vs (0.5^2 + 0.9^2)
    np.testing.assert_allclose(sq[0], [1.25, 1.06], atol=1e-12)
    # without range updates every row is scaled by the training ranges alone
    fixed = IBk(range_update="none").fit(X_train, [0, 1])
    assert fixed.predict([[5.0, 100], query]).tolist() == [1, 1]
    # the fitted model is not changed by predicting: the query alone is class 1 again
    assert clf.predict([query]).tolist() == [1]


def test_rows_tied_with_the_kth_distance_all_vote():
    # Range 0..4; query 2 scales to 0.5; the rows scale to 0, .25, .75, 1: squared
    # distances .25, .0625, .0625, .25 (exact in binary).
    X_train = np.array([[0.0], [1], [3], [4]])
    y = np.array([0, 1, 2, 0])
    one = IBk(n_neighbors=1, n_classes=3).fit(X_train, y)
    # k = 1: rows 1 and 2 tie -> one vote each for classes 1 and 2; every class starts at
    # 1/n = 1/4, total 3/4 + 2.
    np.testing.assert_allclose(one.predict_proba([[2.0]]), [[0.25 / 2.75, 1.25 / 2.75,
                                                             1.25 / 2.75]])
    assert one.predict([[2.0]]).tolist() == [1]  # the first of the tied classes
    # k = 3: the 3rd distance is .25, shared by rows 0 and 3 -> all four rows vote
    three = IBk(n_neighbors=3, n_classes=3).fit(X_train, y)
    np.testing.assert_allclose(three.predict_proba([[2.0]]), [[2.25 / 4.75, 1.25 / 4.75,
                                                               1.25 / 4.75]])
    assert three.predict([[2.0]]).tolist() == [0]


def test_a_class_tie_goes_to_the_lowest_code():
    # the row of class 1 comes first in the training data, yet class 0 wins the tie
    clf = IBk().fit(np.array([[0.0], [2]]), [1, 0])
    np.testing.assert_allclose(clf.predict_proba([[1.0]]), [[0.5, 0.5]])
    assert clf.predict([[1.0]]).tolist() == [0]


def test_distance_weightings():
    # One attribute, range 0..4: query 1 is at d = 0.25 from row 0 and 0.75 from row 1.
    X_train = np.array([[0.0], [4]])
    for weights, w0, w1 in (("inverse", 1 / 0.251, 1 / 0.751), ("similarity", 0.75, 0.25)):
        clf = IBk(n_neighbors=2, weights=weights).fit(X_train, [0, 1])
        expected = np.array([0.5 + w0, 0.5 + w1]) / (1 + w0 + w1)
        np.testing.assert_allclose(clf.predict_proba([[1.0]]), [expected])
    # d is the distance over the square root of the number of attributes
    clf = IBk(n_neighbors=1, weights="similarity").fit(np.array([[0.0, 0], [4, 4]]), [0, 1])
    d = math.sqrt((0.25 ** 2 + 0.25 ** 2) / 2)
    np.testing.assert_allclose(clf.neighbour_weights(np.array([[1.0, 1]])), [[1 - d, 0]])


def test_uniform_votes_are_added_one_at_a_time_as_weka():
    # IBk.makeDistribution starts each class at 1/n and the total at C/n, then adds each
    # neighbour's 1.0 in turn, rounding each sum: with n = 3, (1/3 + 1) + 1 is one ulp
    # below 1/3 + 2 (and the probability one ulp below the one of the summed count).
    X = np.array([[0.0], [0.0], [1.0]])
    c0 = (1 / 3 + 1.0) + 1.0
    total = (2 / 3 + 1.0) + 1.0
    assert c0 != 1 / 3 + 2
    for clf in (IBk(n_neighbors=2).fit(X, [0, 0, 1]),
                ibk_module.IBkModel(n_neighbors=2).fit_coded(X, np.array([0, 0, 1]))):
        assert clf.predict_proba([[0.0]]).tolist() == [[c0 / total, (1 / 3) / total]]
        assert clf.neighbour_weights([[0.0]]).tolist() == [[2.0, 0.0]]


def test_weighted_votes_are_added_nearest_first_as_weka():
    # Range 0..3, query 0: the rows lie at 1/3 (class 0), 2/3 (class 1), 0 (class 0) and
    # 1. LinearNNSearch lists the 3 nearest nearest first (rows 2, 0, 1) and
    # makeDistribution adds their weights 1/(d + 0.001) in that order, onto 1/4 per class
    # and 2/4 for the total; the total in training-row order differs in the last bit.
    xs = [1.0, 2.0, 0.0, 3.0]
    w = [1.0 / (math.sqrt(math.sqrt((0.0 - x / 3.0) ** 2) ** 2 / 1) + 0.001) for x in xs]
    c0 = (0.25 + w[2]) + w[0]
    c1 = 0.25 + w[1]
    total = ((0.5 + w[2]) + w[0]) + w[1]
    clf = IBk(n_neighbors=3, weights="inverse").fit(np.array(xs)[:, None], [0, 1, 0, 1])
    assert clf.predict_proba([[0.0]]).tolist() == [[c0 / total, c1 / total]]
    assert total != 0.5 + ((w[0] + w[1]) + w[2])  # the order matters here


def test_declared_class_without_rows_keeps_its_start():
    clf = IBk(n_classes=3).fit(np.array([[0.0], [1]]), [0, 2])
    np.testing.assert_allclose(clf.predict_proba([[0.0]]), [[(0.5 + 1) / 2.5, 0.5 / 2.5,
                                                             0.5 / 2.5]])
    assert clf.classes_.tolist() == [0, 1, 2]


@pytest.mark.parametrize("mode", ["cumulative", "none"])
def test_blocks_and_range_runs_do_not_change_results(monkeypatch, mode):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    X[:, 3] = rng.integers(0, 3, 60)
    X[rng.random(X.shape) < 0.1] = nan
    y = rng.integers(0, 3, 60)
    Xq = rng.normal(scale=2, size=(40, 4))  # often outside the training ranges
    Xq[:, 3] = rng.integers(0, 3, 40)
    Xq[rng.random(Xq.shape) < 0.1] = nan
    clf = IBk(n_neighbors=3, range_update=mode, nominal_features=[3], n_categories=[3])
    clf.fit(X, y)
    whole = clf.predict_proba(Xq)
    monkeypatch.setattr(ibk_module, "_BLOCK", 1)  # one test row per block
    np.testing.assert_array_equal(clf.predict_proba(Xq), whole)
    # row by row, each row after the rows before it (cumulative) or on its own (none)
    for i in range(len(Xq)):
        rows = Xq[: i + 1] if mode == "cumulative" else Xq[i:i + 1]
        np.testing.assert_array_equal(clf.predict_proba(rows)[-1], whole[i])


def test_bad_input_is_refused():
    with pytest.raises(InvalidParameterError):
        IBk(n_neighbors=0).fit([[0.0]], [0])
    with pytest.raises(InvalidParameterError):
        IBk(weights="distance").fit([[0.0]], [0])
    with pytest.raises(ValueError, match="codes"):
        IBk(nominal_features=[0], n_categories=[2]).fit([[0.0], [2.0]], [0, 1])
    clf = IBk(nominal_features=[0], n_categories=[2]).fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="codes"):
        clf.predict([[0.5]])
    assert clone(clf).get_params() == clf.get_params()


# --------------------------------------------------------------------------- model files
def test_a_saved_model_predicts_the_same(tmp_path):
    _, X, _, _, _ = load_coded("labor")
    model = api.fit("knn", data_path("labor.arff"))
    api.save_model(model, tmp_path / "m.ekm")
    loaded = api.load_model(tmp_path / "m.ekm")
    np.testing.assert_array_equal(loaded.pipeline.predict_proba(X), model.pipeline.predict_proba(X))
