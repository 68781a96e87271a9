"""Tests of ``lazy-stacking`` (LS), lazy/lazy_stacking.py.

(1) with trees only LS is LB, byte for byte; (2) the naive-Bayes members agree with
scikit-learn's CategoricalNB / GaussianNB given the same weights and priors, and with
a hand computation where values are missing; (3) the kNN members take the k nearest
bag instances, repeats counted (by hand), under the unweighted Eq. 2 (done by hand
for a whole prediction); (4) the stacked combination learns the accurate learner
type (by hand) and falls back to the vote; (5) determinism; (6) scikit-learn's
estimator checks; (7) bad parameters.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.naive_bayes import CategoricalNB, GaussianNB
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit import registry
from ensemblekit.classifiers.bagging import bootstrap_counts
from ensemblekit.lazy.lazy_bagging import (
    LazyBaggingClassifier,
    _row_keys,
    lazy_bag_counts,
)
from ensemblekit.lazy.lazy_stacking import (
    LazyStackingClassifier,
    _knn_proba,
    _NaiveBayesTables,
    _stack,
    parse_base_estimators,
)

from ektesting import support


@pytest.mark.slow  # each check predicts lazily: bags and trees per test row
@parametrize_with_checks([
    LazyStackingClassifier(n_estimators=3, random_state=0),
    LazyStackingClassifier(n_estimators=3, combiner="stacking", meta_rows=20, random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


_load = support.load_coded


@pytest.fixture(scope="module")
def labor():
    return _load("labor")


# --------------------------------------------------------------------------
# (1) trees only = lazy bagging
# --------------------------------------------------------------------------
def test_trees_only_is_lazy_bagging(labor):
    _, X, y, nominal, n_cat = labor
    common = {"n_estimators": 4, "nominal_features": nominal, "n_categories": n_cat, "random_state": 8}
    ls = LazyStackingClassifier(base_estimators="tree", **common).fit(X, y)
    lb = LazyBaggingClassifier(voting="hard", **common).fit(X, y)
    assert ls.predict_proba(X).tobytes() == lb.predict_proba(X).tobytes()


def test_parse_base_estimators():
    assert parse_base_estimators("tree,knn,nb") == ("tree", "knn", "nb")
    assert parse_base_estimators(" nb , tree") == ("nb", "tree")
    assert parse_base_estimators(["knn", "knn"]) == ("knn", "knn")
    for bad in ("", "tree,svm", [], ["tree", 3], 5):
        with pytest.raises(ValueError, match="base_estimators must list learner types"):
            parse_base_estimators(bad)


# --------------------------------------------------------------------------
# (2) naive Bayes members
# --------------------------------------------------------------------------
def _laplace_prior(y, counts, n_classes):
    w = np.bincount(y, weights=counts, minlength=n_classes)
    return (w + 1) / (counts.sum() + n_classes)


def test_nominal_naive_bayes_equals_categorical_nb():
    rng = np.random.default_rng(0)
    n, n_cat = 90, [3, 4, 2]
    X = np.column_stack([rng.integers(0, r, n) for r in n_cat]).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, n)) % 3
    y = y.astype(int)
    counts = bootstrap_counts(rng, n, 3)
    tables = _NaiveBayesTables(X, y, 3, [0, 1, 2], n_cat, [])
    Q = np.column_stack([rng.integers(0, r, 10) for r in n_cat]).astype(float)
    ours = tables.proba(counts, Q)
    for b in range(3):
        assert np.all(np.bincount(y, weights=counts[b]) > 0)
        ref = CategoricalNB(alpha=1.0, min_categories=n_cat,
                            class_prior=_laplace_prior(y, counts[b], 3))
        ref.fit(X, y, sample_weight=counts[b])
        np.testing.assert_allclose(ours[b], ref.predict_proba(Q), rtol=1e-10, atol=1e-12)


def test_numeric_naive_bayes_equals_gaussian_nb():
    rng = np.random.default_rng(1)
    n = 120
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + y[:, None] * [1.0, -0.5, 2.0]
    counts = bootstrap_counts(rng, n, 2)
    tables = _NaiveBayesTables(X, y, 2, [], [], [0, 1, 2])
    assert np.all(tables.sd_floor < 0.05)  # far below the spreads: no flooring
    Q = rng.normal(size=(15, 3))
    ours = tables.proba(counts, Q)
    for b in range(2):
        ref = GaussianNB(priors=_laplace_prior(y, counts[b], 2), var_smoothing=0.0)
        ref.fit(X, y, sample_weight=counts[b])
        np.testing.assert_allclose(ours[b], ref.predict_proba(Q), rtol=1e-9, atol=1e-12)


def test_naive_bayes_skips_missing_values_by_hand():
    # rows (v0, a), (v1, a), (?, a), (v0, b), each once; query v0.
    # prior a = (3 + 1) / (4 + 2), b = (1 + 1) / (4 + 2) (Laplace)
    # P(v0 | a) = (1 + 1) / (2 + 2): the missing row does not count for a's total;
    # P(v0 | b) = (1 + 1) / (1 + 2). Joint a = 1/3, b = 2/9 -> posterior 0.6, 0.4.
    X = np.array([[0.0], [1.0], [np.nan], [0.0]])
    y = np.array([0, 0, 0, 1])
    tables = _NaiveBayesTables(X, y, 2, [0], [2], [])
    np.testing.assert_allclose(tables.proba(np.ones((1, 4)), np.array([[0.0]]))[0, 0], [0.6, 0.4])
    # a missing query value leaves the prior: 4/6, 2/6
    np.testing.assert_allclose(tables.proba(np.ones((1, 4)), np.array([[np.nan]]))[0, 0],
                               [2 / 3, 1 / 3])
    # a class absent from the bag gets 0
    np.testing.assert_array_equal(
        tables.proba(np.array([[1.0, 1.0, 1.0, 0.0]]), np.array([[0.0]]))[0, 0], [1.0, 0.0])


def test_weka_precision_floor_of_the_standard_deviation():
    # values 0, 1, 2, 3 -> mean gap 1 -> smallest sd 1/6; a class whose values are
    # all equal gets that sd, so its density at the value is the normal pdf there.
    X = np.array([[0.0], [0.0], [3.0], [1.0], [2.0]])
    y = np.array([0, 0, 1, 1, 1])
    tables = _NaiveBayesTables(X, y, 2, [], [], [0])
    np.testing.assert_allclose(tables.sd_floor, [1 / 6])
    lj = tables.log_joint(np.array([[1.0, 1, 0, 0, 0]]), np.array([[0.0]]))
    # class 0 only in the bag: prior (2 + 1) / (2 + 2), density N(0; 0, 1/6)
    assert lj[0, 0, 0] == pytest.approx(np.log(0.75) - 0.5 * np.log(2 * np.pi) + np.log(6))
    assert lj[0, 0, 1] == -np.inf


# --------------------------------------------------------------------------
# (3) kNN members
# --------------------------------------------------------------------------
def test_knn_members_by_hand():
    y_onehot = np.eye(2)[[0, 1, 0, 0, 1]]  # classes of rows 0..4
    order = np.array([[3, 1, 0, 2, 4]])  # the query's nearest rows first
    counts = np.array([[0.0, 2, 1, 0, 3],  # in bag, nearest first: 1, 1, 2, 4, 4, 4
                       [1.0, 0, 0, 1, 0]])  # 3, 0 (both class 0)
    np.testing.assert_allclose(_knn_proba(counts, order, y_onehot, 1)[:, 0], [[0, 1], [1, 0]])
    np.testing.assert_allclose(_knn_proba(counts, order, y_onehot, 3)[:, 0],
                               [[1 / 3, 2 / 3], [1, 0]])  # bag 2 has only 2 instances
    np.testing.assert_allclose(_knn_proba(counts, order, y_onehot, 4)[0, 0], [1 / 4, 3 / 4])


def test_knn_only_prediction_by_hand(labor):
    # 1-NN members on the unweighted Eq. 2, nearest bag instance, ties to the
    # lower training index; bags as lazy-bagging draws them
    _, X, y, nominal, n_cat = labor
    train, test = np.arange(0, 57, 2), np.arange(1, 57, 2)
    clf = LazyStackingClassifier(n_estimators=5, base_estimators="knn", nominal_features=nominal,
                                 n_categories=n_cat, random_state=1).fit(X[train], y[train])
    proba = clf.predict_proba(X[test])
    codes = np.searchsorted(clf.classes_, y[train])
    weights = np.full(X.shape[1], 1.0 / X.shape[1])
    lo, hi = np.nanmin(X[train], axis=0), np.nanmax(X[train], axis=0)
    for r, x in enumerate(X[test]):
        _, nn = clf.distance_.kneighbors(x[None, :], clf.k_)
        rng = np.random.default_rng(np.random.SeedSequence([clf.seed_, _row_keys(clf, x[None, :])[0]]))
        counts = lazy_bag_counts(rng, len(train), nn[0], 5)
        dist = []
        for t in X[train]:
            total = 0.0
            for f in range(X.shape[1]):
                if np.isnan(x[f]) or np.isnan(t[f]):
                    d = 1.0
                elif f in nominal:
                    d = float(x[f] != t[f])
                else:
                    d = abs(x[f] - t[f]) / (hi[f] - lo[f])
                total += weights[f] * d * d
            dist.append(total)
        order = np.argsort(np.round(dist, 12), kind="stable")
        votes = np.zeros(clf.classes_.size)
        for b in range(5):
            nearest = next(i for i in order if counts[b, i] > 0)
            votes[codes[nearest]] += 1
        np.testing.assert_allclose(proba[r], votes / 5, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------
# (4) stacked combination
# --------------------------------------------------------------------------
def test_stacking_learns_the_accurate_type_by_hand():
    kind = np.array(["tree", "knn", "tree", "knn"])
    y_meta = np.array([0, 1, 0, 1])
    right = np.eye(2)[y_meta]  # (M, C): certain and right
    wrong = np.eye(2)[1 - y_meta]
    proba_meta = np.stack([right, wrong, right, wrong])
    oob = np.ones((4, 4), dtype=bool)
    proba_x = np.array([[0.6, 0.4], [0.1, 0.9], [0.8, 0.2], [0.1, 0.9]])
    # NNLS per class: weight 1 on the trees' probability, 0 on kNN's; x gets the
    # trees' mean probabilities (0.7, 0.3), although kNN would out-vote them
    np.testing.assert_allclose(_stack(proba_x, proba_meta, oob, kind, y_meta, 2), [0.7, 0.3],
                               rtol=0, atol=1e-12)
    # no meta row out of a kNN member's bag: nothing to train on
    oob[[1, 3]] = False
    assert _stack(proba_x, proba_meta, oob, kind, y_meta, 2) is None


@pytest.mark.slow
def test_stacking_end_to_end(labor):
    _, X, y, nominal, n_cat = labor
    common = {"nominal_features": nominal, "n_categories": n_cat, "random_state": 2}
    clf = LazyStackingClassifier(n_estimators=6, combiner="stacking", meta_rows=30, **common)
    proba = clf.fit(X[:40], y[:40]).predict_proba(X[40:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (clf.predict(X[40:]) == y[40:]).mean() >= 0.8
    par = clone(clf).set_params(n_jobs=2).fit(X[:40], y[:40]).predict_proba(X[40:])
    assert proba.tobytes() == par.tobytes()


# --------------------------------------------------------------------------
# (5) determinism
# --------------------------------------------------------------------------
@pytest.mark.slow  # starts two worker processes
def test_same_seed_identical_serial_parallel_and_chunked(labor):
    _, X, y, nominal, n_cat = labor
    params = {"n_estimators": 6, "nominal_features": nominal, "n_categories": n_cat, "random_state": 5}
    clf = LazyStackingClassifier(**params).fit(X, y)
    serial = clf.predict_proba(X)
    parallel = LazyStackingClassifier(n_jobs=2, **params).fit(X, y).predict_proba(X)
    assert serial.tobytes() == parallel.tobytes()
    pieces = np.vstack([clf.predict_proba(X[a : a + 5]) for a in range(0, len(y), 5)])
    assert serial.tobytes() == pieces.tobytes()
    np.testing.assert_allclose(serial * 6, np.round(serial * 6), atol=1e-12)  # vote shares
    assert (clf.predict(X) == y).mean() > 0.85


def test_registry_entry():
    ds, X, y, _nominal, _n_cat = _load("vote")
    spec = registry.get("lazy-stacking")
    assert spec.encode == "codes" and not spec.impute_numeric
    params = spec.resolve({"n_estimators": "4", "base_estimators": "nb,tree"})
    model = registry.make_estimator("lazy-stacking", ds.schema, params, 3).fit(X[:300], y[:300])
    assert model["model"].learner_types_ == ("nb", "tree")
    assert (model.predict(X[300:]) == y[300:]).mean() > 0.9
    with pytest.raises(registry.ParameterError, match="base_estimators"):
        spec.resolve({"base_estimators": "tree,svm"})


# --------------------------------------------------------------------------
# (7) bad parameters
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, message",
    [
        ({"base_estimators": "tree,svm"},
         r"'base_estimators' parameter of LazyStackingClassifier must be comma-separated list "
         r"of tree\|knn\|nb"),
        ({"combiner": "mean"},
         r"'combiner' parameter of LazyStackingClassifier must be vote\|stacking;"),
        ({"knn_neighbors": 0},
         "'knn_neighbors' parameter of LazyStackingClassifier must be int >= 1;"),
        ({"meta_rows": 0}, "'meta_rows' parameter of LazyStackingClassifier must be int >= 1;"),
        ({"beta": 1.0}, "'beta' parameter of LazyStackingClassifier must be float > 0 and < 1;"),
        ({"n_estimators": 0},
         "'n_estimators' parameter of LazyStackingClassifier must be int >= 1 and <= 1000;"),
    ],
)
def test_bad_parameters_fail_at_fit(params, message):
    clf = LazyStackingClassifier(**params)
    with pytest.raises(ValueError, match=message):
        clf.fit(np.arange(6.0)[:, None], [0, 0, 0, 1, 1, 1])
