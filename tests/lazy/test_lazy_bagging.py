"""Tests of ``lazy-bagging`` (LB), lazy/lazy_bagging.py.

(1) the bags: N - K draws from all rows plus K from the neighbours; (2) a row's
prediction is the paper's procedure done by hand: the K nearest rows under Eq. 2,
the bags, the cart-entropy tree on every bag written out row by row, the majority vote
(the c45 trees, the default, in test_lazy_c45_wiring.py);
(3) same seed -> identical results, serial or parallel, whatever the chunking, the
order or the company of a row; (4) K from beta or n_neighbors; the registry entry;
(5) scikit-learn's estimator checks; (6) bad parameters and input.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit import registry
from ensemblekit.classifiers.cart import CartEntropyTree
from ensemblekit.lazy.lazy_bagging import (
    LazyBaggingClassifier,
    _row_keys,
    lazy_bag_counts,
)

from ektesting import support


@pytest.mark.slow  # each check predicts lazily: bags and trees per test row
@parametrize_with_checks([LazyBaggingClassifier(n_estimators=2, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


_load = support.load_coded


@pytest.fixture(scope="module")
def labor():
    # 57 rows, 8 numeric and 8 nominal attributes, missing values in most rows
    return _load("labor")


# --------------------------------------------------------------------------
# (1) bags
# --------------------------------------------------------------------------
def test_lazy_bag_counts_draws_n_minus_k_from_all_and_k_from_the_neighbours():
    n, neighbours, L = 40, np.array([3, 17, 29, 8, 11]), 6
    counts = lazy_bag_counts(np.random.default_rng(7), n, neighbours, L)
    assert counts.shape == (L, n)
    np.testing.assert_array_equal(counts.sum(axis=1), n)
    rng = np.random.default_rng(7)
    base = rng.integers(0, n, size=(L, n - 5))
    local = neighbours[rng.integers(0, 5, size=(L, 5))]
    for b in range(L):
        np.testing.assert_array_equal(
            counts[b], np.bincount(np.concatenate([base[b], local[b]]), minlength=n)
        )
    # only the N - K draws can land outside the neighbours
    outside = np.setdiff1d(np.arange(n), neighbours)
    assert np.all(counts[:, outside].sum(axis=1) <= n - 5)
    assert np.all(counts[:, neighbours].sum(axis=1) >= 5)


def test_lazy_bag_counts_without_neighbours_is_a_bootstrap():
    counts = lazy_bag_counts(np.random.default_rng(1), 30, np.array([], dtype=int), 4)
    draws = np.random.default_rng(1).integers(0, 30, size=(4, 30))
    for b in range(4):
        np.testing.assert_array_equal(counts[b], np.bincount(draws[b], minlength=30))
    with pytest.raises(ValueError, match="neighbours for 3 training rows"):
        lazy_bag_counts(np.random.default_rng(1), 3, np.arange(4), 1)


# --------------------------------------------------------------------------
# (2) the procedure by hand
# --------------------------------------------------------------------------
def _by_hand(clf, X_train, y_train, x, voting):
    """LB for one row from public pieces: neighbours, bags, cart-entropy on repeated rows, vote."""
    _, nn = clf.distance_.kneighbors(x[None, :], clf.k_)
    rng = np.random.default_rng(np.random.SeedSequence([clf.seed_, _row_keys(clf, x[None, :])[0]]))
    L = clf.n_estimators
    counts = lazy_bag_counts(rng, len(y_train), nn[0], L)
    seeds = rng.integers(0, np.iinfo(np.int32).max, size=L)
    X_tree = clf._tree_matrix(X_train)
    x_tree = clf._tree_matrix(x[None, :])
    codes = np.searchsorted(clf.classes_, y_train)
    proba = np.zeros(clf.classes_.size)
    for b in range(L):
        rows = np.repeat(np.arange(len(y_train)), counts[b].astype(int))
        tree = CartEntropyTree(random_state=int(seeds[b])).fit(X_tree[rows], codes[rows])
        p = np.zeros(clf.classes_.size)
        p[tree.classes_] = tree.predict_proba(x_tree)[0]
        if voting == "hard":
            proba[np.argmax(p)] += 1
        else:
            proba += p
    return proba / L


@pytest.mark.parametrize("voting", ["hard", "soft"])
def test_prediction_is_the_procedure_done_by_hand(voting):
    # iris: numeric attributes, no missing value (the by-hand trees then route
    # nothing differently from the weighted ones)
    _, X, y, _, _ = _load("iris")
    rng = np.random.default_rng(0)
    test = rng.choice(len(y), 12, replace=False)
    train = np.setdiff1d(np.arange(len(y)), test)
    clf = LazyBaggingClassifier(n_estimators=5, voting=voting, tree="cart-entropy",
                                random_state=4).fit(X[train], y[train])
    assert clf.k_ == 5  # 138 * 0.01 * log4(138) = 4.9
    proba = clf.predict_proba(X[test])
    for r, row in enumerate(X[test]):
        np.testing.assert_allclose(proba[r], _by_hand(clf, X[train], y[train], row, voting),
                                   rtol=0, atol=1e-12)


def test_cart_trees_see_cart_entropys_matrix(labor):
    ds, X, y, _nominal, _n_cat = labor
    clf = registry.make_estimator("lazy-bagging", ds.schema, {"tree": "cart-entropy"}, 0).fit(X, y)
    cart = registry.make_estimator("cart-entropy", ds.schema, None, 0).fit(X, y)
    np.testing.assert_array_equal(clf["model"]._tree_matrix(X),
                                  cart["prep"].transform(X).astype(np.float32))


# --------------------------------------------------------------------------
# (3) determinism
# --------------------------------------------------------------------------
@pytest.mark.slow  # starts two worker processes
def test_same_seed_identical_serial_parallel_and_chunked(labor):
    _, X, y, nominal, n_cat = labor
    params = {"n_estimators": 4, "nominal_features": nominal, "n_categories": n_cat, "random_state": 12}
    clf = LazyBaggingClassifier(**params).fit(X, y)
    serial = clf.predict_proba(X)
    parallel = clone(clf).set_params(n_jobs=2).fit(X, y).predict_proba(X)
    assert serial.tobytes() == parallel.tobytes()
    again = LazyBaggingClassifier(**params).fit(X, y).predict_proba(X)
    assert serial.tobytes() == again.tobytes()
    # a row's result depends on the row only: alone, in other chunks, reordered
    pieces = np.vstack([clf.predict_proba(X[a : a + 7]) for a in range(0, len(y), 7)])
    assert serial.tobytes() == pieces.tobytes()
    perm = np.random.default_rng(3).permutation(len(y))
    np.testing.assert_array_equal(clf.predict_proba(X[perm]), serial[perm])
    twice = clf.predict_proba(np.vstack([X[:3], X[:3]]))
    np.testing.assert_array_equal(twice[:3], twice[3:])
    # another seed, other bags
    other = LazyBaggingClassifier(**{**params, "random_state": 13}).fit(X, y).predict_proba(X)
    assert not np.array_equal(serial, other)


def test_missing_values_and_nominal_codes(labor):
    _, X, y, nominal, n_cat = labor
    assert np.isnan(X).any()
    clf = LazyBaggingClassifier(n_estimators=5, nominal_features=nominal, n_categories=n_cat,
                                random_state=0).fit(X, y)
    assert clf.k_ == 2  # 57 * 0.01 * log4(57) = 1.66
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # hard votes of 5 trees: shares are multiples of 1/5
    np.testing.assert_allclose(proba * 5, np.round(proba * 5), atol=1e-12)
    assert (clf.predict(X) == y).mean() > 0.85
    # the gain-ratio weights are Weka's (test_lazy_distance checks the values)
    assert clf.distance_.weights_.sum() == pytest.approx(1.0)
    assert clf.distance_.gain_ratios_[1] == pytest.approx(0.3516, abs=5e-5)


# --------------------------------------------------------------------------
# (4) K, registry
# --------------------------------------------------------------------------
def test_k_from_beta_or_set_directly():
    _, X, y, _, _ = _load("iris")
    assert LazyBaggingClassifier(n_estimators=1).fit(X, y).k_ == 5
    assert LazyBaggingClassifier(n_estimators=1, beta=0.9).fit(X, y).k_ == 54  # 54.2
    assert LazyBaggingClassifier(n_estimators=1, n_neighbors=0).fit(X, y).k_ == 0
    assert LazyBaggingClassifier(n_estimators=1, n_neighbors=150).fit(X, y).k_ == 150


def test_k_equal_n_takes_every_row_as_a_neighbour():
    # With K = N every row is a neighbour: a lazy bag is N draws from all rows,
    # i.e. a bootstrap bag, whatever the test row.
    _, X, y, _, _ = _load("iris")
    clf = LazyBaggingClassifier(n_estimators=3, n_neighbors=150, tree="cart-entropy",
                                random_state=0).fit(X, y)
    assert clf.k_ == 150
    _, nn = clf.distance_.kneighbors(X[:1], 150)
    np.testing.assert_array_equal(np.sort(nn[0]), np.arange(150))
    # no draw is left for the N - K part: all N come from the neighbours, that is from every row
    counts = lazy_bag_counts(np.random.default_rng(3), 150, nn[0], 3)
    picks = nn[0][np.random.default_rng(3).integers(0, 150, size=(3, 150))]
    for b in range(3):
        np.testing.assert_array_equal(counts[b], np.bincount(picks[b], minlength=150))
    proba = clf.predict_proba(X[:4])
    for r in range(4):
        np.testing.assert_allclose(proba[r], _by_hand(clf, X, y, X[r], clf.voting), rtol=0, atol=1e-12)


def test_registry_entry():
    ds, X, y, nominal, n_cat = _load("vote")
    spec = registry.get("lazy-bagging")
    assert spec.encode == "codes" and not spec.impute_numeric
    params = spec.resolve({"n_estimators": "3", "beta": "0.95"})
    model = registry.make_estimator("lazy-bagging", ds.schema, params, 5)
    est = model["model"]
    assert est.nominal_features == nominal and est.n_categories == n_cat
    model.fit(X[:300], y[:300])
    direct = LazyBaggingClassifier(n_estimators=3, beta=0.95, nominal_features=nominal,
                                   n_categories=n_cat, random_state=5).fit(X[:300], y[:300])
    np.testing.assert_array_equal(model.predict_proba(X[300:]), direct.predict_proba(X[300:]))
    assert (model.predict(X[300:]) == y[300:]).mean() > 0.9
    with pytest.raises(registry.ParameterError, match="beta"):
        spec.resolve({"beta": "1"})


# --------------------------------------------------------------------------
# (6) bad parameters and input
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_estimators": 0},
         "'n_estimators' parameter of LazyBaggingClassifier must be int >= 1 and <= 1000;"),
        ({"beta": 0.0}, "'beta' parameter of LazyBaggingClassifier must be float > 0 and < 1;"),
        ({"beta": 1.0}, "'beta' parameter of LazyBaggingClassifier must be float > 0 and < 1;"),
        ({"beta": 1.5}, "'beta' parameter of LazyBaggingClassifier must be float > 0 and < 1;"),
        ({"n_neighbors": -1},
         "'n_neighbors' parameter of LazyBaggingClassifier must be int >= 0, or none;"),
        ({"n_neighbors": 7}, "n_neighbors=7 is larger than the training set"),
        ({"voting": "mean"}, r"'voting' parameter of LazyBaggingClassifier must be hard\|soft;"),
        ({"min_samples_leaf": 0},
         "'min_samples_leaf' parameter of LazyBaggingClassifier must be int >= 1;"),
        ({"max_depth": 0},
         "'max_depth' parameter of LazyBaggingClassifier must be int >= 1, or none;"),
        ({"n_jobs": 0}, "n_jobs must be a non-zero integer or None"),
    ],
)
def test_bad_parameters_fail_at_fit(params, message):
    clf = LazyBaggingClassifier(**params)
    with pytest.raises(ValueError, match=message):
        clf.fit(np.arange(6.0)[:, None], [0, 0, 0, 1, 1, 1])


def test_bad_nominal_codes():
    X = np.array([[0.0, 1], [1.0, 0], [2.0, 1], [3.0, 0]])
    with pytest.raises(ValueError, match="not a code >= 0"):
        LazyBaggingClassifier(nominal_features=[1]).fit(X + [0, 0.5], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="not one of its 1 codes"):
        LazyBaggingClassifier(nominal_features=[1], n_categories=[1]).fit(X, [0, 0, 1, 1])
    clf = LazyBaggingClassifier(n_estimators=2, nominal_features=[1], random_state=0)
    clf.fit(X, [0, 0, 1, 1])
    with pytest.raises(ValueError, match="nominal feature 1 holds 2, not one of the codes 0..1"):
        clf.predict([[0.0, 2]])
