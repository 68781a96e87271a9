"""The lazy ensembles grow unpruned ``c45`` trees (Weka's ``J48 -U``) by default.

(1) a lazy-bagging row done by hand with public pieces: its neighbours, its bags, the
unpruned C4.5 tree grown on every bag written out row by row (nominal codes and missing
values as they are), the vote; (2) lazy stacking's tree members are the same trees
(trees only = lazy bagging); (3) a declared class without training rows; (4) the
registry entries expose the tree choice, and ``max_depth`` is refused with ``c45``.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit import registry
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.lazy.lazy_bagging import LazyBaggingClassifier, _row_keys, lazy_bag_counts
from ensemblekit.lazy.lazy_stacking import LazyStackingClassifier

from ektesting import support


@pytest.fixture(scope="module")
def labor():
    # 57 rows, numeric and nominal attributes, missing values in most rows
    return support.load_coded("labor")


def _by_hand(clf, X_train, y_train, x, nominal, n_cat):
    """LB for one row: neighbours, bags, unpruned C4.5 on the written-out bag, vote or mean."""
    _, nn = clf.distance_.kneighbors(x[None, :], clf.k_)
    rng = np.random.default_rng(np.random.SeedSequence([clf.seed_, _row_keys(clf, x[None, :])[0]]))
    L = clf.n_estimators
    counts = lazy_bag_counts(rng, len(y_train), nn[0], L)
    proba = np.zeros(clf.classes_.size)
    for b in range(L):
        rows = np.repeat(np.arange(len(y_train)), counts[b].astype(int))
        tree = C45Tree(unpruned=True, min_samples_leaf=clf.min_samples_leaf,
                       nominal_features=nominal, n_categories=n_cat,
                       n_classes=clf.classes_.size).fit(X_train[rows], y_train[rows])
        p = tree.predict_proba(x[None, :])[0]
        if clf.voting == "hard":
            proba[np.argmax(p)] += 1
        else:
            proba += p
    # hard: vote shares; soft: the sum of the trees' rows normalised (as Weka's Bagging)
    return proba / L if clf.voting == "hard" else proba / proba.sum()


@pytest.mark.parametrize("voting", ["hard", "soft"])
def test_prediction_is_the_procedure_done_by_hand_with_c45(labor, voting):
    _, X, y, nominal, n_cat = labor
    train, test = np.arange(45), np.arange(45, 57)
    clf = LazyBaggingClassifier(n_estimators=5, voting=voting, nominal_features=nominal,
                                n_categories=n_cat, random_state=4).fit(X[train], y[train])
    assert clf.tree == "c45"
    proba = clf.predict_proba(X[test])
    for r, row in enumerate(X[test]):
        np.testing.assert_allclose(proba[r], _by_hand(clf, X[train], y[train], row, nominal,
                                                      n_cat), rtol=0, atol=1e-12)


def test_c45_trees_read_the_rows_as_they_are(labor):
    _, X, y, nominal, n_cat = labor
    clf = LazyBaggingClassifier(n_estimators=2, nominal_features=nominal, n_categories=n_cat,
                                random_state=0).fit(X, y)
    assert clf.X_tree_.dtype == np.float64
    np.testing.assert_array_equal(clf.X_tree_, X)  # codes and NaN, no one-hot, no imputation


def test_stacking_tree_members_are_the_lazy_bagging_trees(labor):
    _, X, y, nominal, n_cat = labor
    common = {"n_estimators": 3, "nominal_features": nominal, "n_categories": n_cat,
              "random_state": 6}
    ls = LazyStackingClassifier(base_estimators="tree", **common).fit(X, y)
    lb = LazyBaggingClassifier(**common).fit(X, y)
    assert ls.predict_proba(X[:10]).tobytes() == lb.predict_proba(X[:10]).tobytes()
    stacked = LazyStackingClassifier(combiner="stacking", meta_rows=20, **common).fit(X, y)
    proba = stacked.predict_proba(X[:10])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_a_declared_class_without_rows_gets_probability_zero(labor):
    _, X, y, nominal, n_cat = labor
    for cls in (LazyBaggingClassifier, LazyStackingClassifier):
        clf = cls(n_estimators=3, nominal_features=nominal, n_categories=n_cat, random_state=1,
                  n_classes=3).fit(X, y)
        proba = clf.predict_proba(X[:8])
        assert proba.shape == (8, 3)
        np.testing.assert_array_equal(proba[:, 2], 0.0)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", ["lazy-bagging", "lazy-stacking"])
def test_registry_entries_expose_the_tree(name, labor):
    ds, X, y, _, _ = labor
    spec = registry.get(name)
    assert spec.defaults()["tree"] == "c45" and spec.defaults()["max_depth"] is None
    with pytest.raises(registry.ParameterError, match="c45|cart-entropy"):
        spec.resolve({"tree": "j48"})
    params = spec.resolve({"n_estimators": "2", "tree": "cart-entropy"})
    model = registry.make_estimator(name, ds.schema, params, 0).fit(X, y)
    assert model["model"].X_tree_.dtype == np.float32  # cart-entropy's one-hot matrix
    bad = registry.make_estimator(name, ds.schema, spec.resolve({"max_depth": "3"}), 0)
    with pytest.raises(ValueError, match="max_depth=3 applies to tree='cart-entropy'"):
        bad.fit(X, y)
