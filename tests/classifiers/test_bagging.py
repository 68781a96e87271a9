"""Tests of ``bagging`` (TB), classifiers/bagging.py.

(1) a tree grown from bootstrap counts as sample weights is the ``cart-entropy`` tree
grown on the bag written out row by row; (2) the ensemble's probabilities are the mean
of its trees' (soft) or their vote shares (hard), each tree on its own bag;
(3) a seed reproduces the model; (4) scikit-learn's estimator checks;
(5) bad parameters. The ``c45`` base tree (the default) is tested in
test_bagging_c45_wiring.py; here ``tree="cart-entropy"``.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit import registry
from ensemblekit.classifiers.bagging import (
    BaggedTreeClassifier,
    bootstrap_counts,
    fit_weighted_tree,
)
from ensemblekit.classifiers.cart import CartEntropyTree
from ensemblekit.data import load_dataset

from ektesting.support import data_path


# scikit-learn's checks of the class run on its default (c45) trees in test_bagging_c45_wiring.py;
# these, with cart-entropy trees, in the whole suite only
@pytest.mark.slow
@parametrize_with_checks([BaggedTreeClassifier(n_estimators=3, tree="cart-entropy", random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _random_bag(rng, missing=0.0):
    n = int(rng.integers(5, 80))
    d = int(rng.integers(1, 5))
    # few distinct values: many equal gains, so the feature order matters
    X = np.round(rng.random((n, d)) * rng.integers(2, 10), 1).astype(np.float32)
    X[rng.random((n, d)) < missing] = np.nan
    y = rng.integers(0, 3, n)
    counts = bootstrap_counts(rng, n, 1)[0]
    return X, y, counts


def _full_proba(tree_classes, ref):
    """Map a reference tree's probabilities onto the classes of the weighted tree."""

    def f(Q):
        out = np.zeros((Q.shape[0], tree_classes.size))
        out[:, np.searchsorted(tree_classes, ref.classes_)] = ref.predict_proba(Q)
        return out

    return f


@pytest.mark.parametrize("min_samples_leaf", [1, 2, 3])
def test_weighted_tree_is_the_cart_tree_on_the_written_out_bag(min_samples_leaf):
    rng = np.random.default_rng(min_samples_leaf)
    for _trial in range(60):
        X, y, counts = _random_bag(rng)
        seed = int(rng.integers(1000))
        tree = fit_weighted_tree(X, y, counts, min_samples_leaf=min_samples_leaf, random_state=seed)
        rows = np.repeat(np.arange(len(y)), counts.astype(int))
        ref = CartEntropyTree(min_samples_leaf=min_samples_leaf, random_state=seed).fit(X[rows], y[rows])
        np.testing.assert_array_equal(tree.tree_.feature, ref.tree_.tree_.feature)
        np.testing.assert_array_equal(tree.tree_.threshold, ref.tree_.tree_.threshold)
        Q = (rng.random((40, X.shape[1])) * 10).astype(np.float32)
        np.testing.assert_array_equal(tree.predict_proba(Q), _full_proba(tree.classes_, ref)(Q))


def test_weighted_tree_with_missing_values_has_the_same_splits():
    # Same splits and the same routing of missing values wherever training saw
    # them; see fit_weighted_tree for the one documented difference.
    rng = np.random.default_rng(9)
    for _ in range(60):
        X, y, counts = _random_bag(rng, missing=0.15)
        tree = fit_weighted_tree(X, y, counts, random_state=3)
        rows = np.repeat(np.arange(len(y)), counts.astype(int))
        ref = CartEntropyTree(random_state=3).fit(X[rows], y[rows])
        np.testing.assert_array_equal(tree.tree_.feature, ref.tree_.tree_.feature)
        np.testing.assert_array_equal(tree.tree_.threshold, ref.tree_.tree_.threshold)
        Q = (rng.random((40, X.shape[1])) * 10).astype(np.float32)  # no NaN
        np.testing.assert_array_equal(tree.predict_proba(Q), _full_proba(tree.classes_, ref)(Q))


def test_bag_too_small_to_split_is_one_leaf():
    X = np.array([[0.0], [1.0], [2.0]], dtype=np.float32)
    tree = fit_weighted_tree(X, np.array([0, 1, 1]), np.array([1.0, 2.0, 0.0]), min_samples_leaf=2)
    assert tree.tree_.node_count == 1
    np.testing.assert_allclose(tree.predict_proba(X), [[1 / 3, 2 / 3]] * 3)


def test_bootstrap_counts():
    rng = np.random.default_rng(0)
    counts = bootstrap_counts(rng, 50, 7)
    assert counts.shape == (7, 50)
    np.testing.assert_array_equal(counts.sum(axis=1), 50)
    # the same draws, bag by bag
    draws = np.random.default_rng(0).integers(0, 50, size=(7, 50))
    for b in range(7):
        np.testing.assert_array_equal(counts[b], np.bincount(draws[b], minlength=50))


@pytest.fixture(scope="module")
def iris():
    ds = load_dataset(data_path("iris.arff"))
    return ds.X, ds.y


@pytest.mark.parametrize("voting", ["soft", "hard"])
def test_proba_combines_the_members(iris, voting):
    X, y = iris
    clf = BaggedTreeClassifier(n_estimators=7, voting=voting, tree="cart-entropy", random_state=2).fit(X, y)
    assert len(clf.estimators_) == 7
    np.testing.assert_array_equal(clf.bag_counts_.sum(axis=1), len(y))
    X32 = X.astype(np.float32)
    member = np.stack([t.predict_proba(X32) for t in clf.estimators_])
    if voting == "soft":
        expected = member.mean(axis=0)
    else:
        expected = np.stack([np.eye(3)[m.argmax(axis=1)] for m in member]).mean(axis=0)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[expected.argmax(axis=1)])
    assert (clf.predict(X) == y).mean() > 0.95


def _tree_seeds(random_state, n_samples, n_estimators):
    """The seeds ``fit`` gives its trees: drawn after the bags, from the bags' generator."""
    rng = np.random.default_rng(np.random.RandomState(random_state).randint(np.iinfo(np.int32).max))
    bootstrap_counts(rng, n_samples, n_estimators)
    return rng.integers(0, np.iinfo(np.int32).max, size=n_estimators)


def test_each_member_is_cart_on_its_bag(iris):
    X, y = iris
    clf = BaggedTreeClassifier(n_estimators=4, tree="cart-entropy", random_state=5).fit(X, y)
    X32 = X.astype(np.float32)
    seeds = _tree_seeds(5, len(y), 4)
    for tree, counts, seed in zip(clf.estimators_, clf.bag_counts_, seeds):
        rows = np.repeat(np.arange(len(y)), counts.astype(int))
        ref = CartEntropyTree(random_state=int(seed)).fit(X32[rows], y[rows])
        np.testing.assert_array_equal(tree.predict_proba(X32), _full_proba(tree.classes_, ref)(X32))


def test_same_seed_same_model_other_seed_other_bags(iris):
    X, y = iris
    a = BaggedTreeClassifier(tree="cart-entropy", random_state=1).fit(X, y)
    b = BaggedTreeClassifier(tree="cart-entropy", random_state=1).fit(X, y)
    c = BaggedTreeClassifier(tree="cart-entropy", random_state=2).fit(X, y)
    np.testing.assert_array_equal(a.bag_counts_, b.bag_counts_)
    assert a.predict_proba(X).tobytes() == b.predict_proba(X).tobytes()
    assert not np.array_equal(a.bag_counts_, c.bag_counts_)


def test_registry_entry_with_cart_trees_sees_cart_entropys_matrix():
    ds = load_dataset(data_path("labor.arff"))  # nominal and numeric, missing values
    model = registry.make_estimator("bagging", ds.schema, {"n_estimators": 5,
                                                           "tree": "cart-entropy"}, 3)
    cart = registry.make_estimator("cart-entropy", ds.schema, None, 3)
    keep = ds.y >= 0
    model.fit(ds.X[keep], ds.y[keep])
    cart.fit(ds.X[keep], ds.y[keep])
    bagger = model["model"]
    # the trees see exactly the matrix cart-entropy sees (its one-hot preprocessing)
    np.testing.assert_array_equal(bagger._tree_matrix(ds.X),
                                  cart["prep"].transform(ds.X).astype(np.float32))
    # ... and the model is the bagging estimator with the given size and the unit's seed,
    # the same model as before the tree became a choice (bagging of one-hot columns)
    assert isinstance(bagger, BaggedTreeClassifier)
    assert (bagger.n_estimators, bagger.random_state) == (5, 3)
    direct = BaggedTreeClassifier(n_estimators=5, tree="cart-entropy", random_state=3).fit(
        cart["prep"].transform(ds.X[keep]), ds.y[keep])
    np.testing.assert_array_equal(model.predict_proba(ds.X),
                                  direct.predict_proba(cart["prep"].transform(ds.X)))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_estimators": 0},
         "'n_estimators' parameter of BaggedTreeClassifier must be int >= 1 and <= 1000;"),
        ({"n_estimators": 2.0},
         "'n_estimators' parameter of BaggedTreeClassifier must be int >= 1 and <= 1000;"),
        ({"voting": "mean"}, r"'voting' parameter of BaggedTreeClassifier must be soft\|hard;"),
        ({"min_samples_leaf": 0},
         "'min_samples_leaf' parameter of BaggedTreeClassifier must be int >= 1;"),
        ({"max_depth": 0},
         "'max_depth' parameter of BaggedTreeClassifier must be int >= 1, or none;"),
        ({"tree": "j48"}, r"'tree' parameter of BaggedTreeClassifier must be c45\|cart-entropy;"),
        ({"max_depth": 3}, "max_depth=3 applies to tree='cart-entropy'; the c45 tree"),
    ],
)
def test_bad_parameters_fail_at_fit(params, message):
    clf = BaggedTreeClassifier(**params)  # accepted at construction (scikit-learn rule)
    with pytest.raises(ValueError, match=message):
        clf.fit([[0.0], [1.0]], [0, 1])
