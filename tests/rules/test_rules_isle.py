"""ISLE generation (Akdemir & Jannink 2014, Algorithm 1)."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from ensemblekit.rules.isle import default_sample_size, generate_isle


def _data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, 4)
    y = 3 * X[:, 0] + (X[:, 1] > 0.5) + 0.1 * rng.randn(n)
    return X, y


@pytest.mark.parametrize("n, expected", [(1000, 289), (100, 50), (10000, 700), (3, 1), (1, 1)])
def test_default_sample_size_is_friedman_and_popescus(n, expected):
    # min(N/2, 100 + 6 sqrt(N)): 1000 -> min(500, 289.7); 10000 -> min(5000, 700)
    assert default_sample_size(n) == expected


def test_subsamples_are_drawn_without_replacement_and_out_of_bag_is_their_complement():
    X, y = _data()
    ensemble = generate_isle(X, y, n_estimators=7, max_samples=0.3, random_state=1)
    oob = ensemble.out_of_bag(X.shape[0])
    for j, rows in enumerate(ensemble.samples):
        assert rows.size == 90 and np.unique(rows).size == 90
        assert np.array_equal(np.flatnonzero(~oob[:, j]), rows)
    assert len({tuple(rows) for rows in ensemble.samples}) == 7


def test_memory_zero_fits_every_tree_to_y_and_memory_fits_residuals():
    X, y = _data()
    for nu in (0.0, 0.5):
        ensemble = generate_isle(X, y, n_estimators=4, max_depth=2, learning_rate=nu, random_state=3)
        F = np.zeros_like(y)
        for tree, rows in zip(ensemble.trees, ensemble.samples):
            again = DecisionTreeRegressor(max_depth=2, random_state=tree.random_state)
            again.fit(X[rows], y[rows] - F[rows])
            np.testing.assert_array_equal(again.predict(X), tree.predict(X))
            F = F + nu * tree.predict(X)
        np.testing.assert_allclose(ensemble.prediction, F)
    # with memory the later trees see smaller targets
    assert np.abs(ensemble.trees[-1].tree_.value).max() < np.abs(ensemble.trees[0].tree_.value).max()


def test_random_tree_sizes_vary_around_the_mean_number_of_leaves():
    X, y = _data(n=2000)
    ensemble = generate_isle(X, y, n_estimators=200, max_depth=3, tree_size="random",
                             max_samples=0.5, random_state=0)
    leaves = np.array([t.get_n_leaves() for t in ensemble.trees])
    assert leaves.min() == 2 and leaves.max() > 12
    assert 6 < leaves.mean() < 10  # 2 + exponential(mean 6): mean 8


def test_same_seed_same_trees():
    X, y = _data()
    a = generate_isle(X, y, n_estimators=5, max_features=0.5, random_state=7)
    b = generate_isle(X, y, n_estimators=5, max_features=0.5, random_state=7)
    np.testing.assert_array_equal(a.outputs(X), b.outputs(X))


@pytest.mark.parametrize("kwargs, text", [
    ({"n_estimators": 0}, "n_estimators"),
    ({"max_depth": 0}, "max_depth"),
    ({"max_samples": 1.5}, "max_samples"),
    ({"learning_rate": -0.1}, "learning_rate"),
    ({"max_features": 0.0}, "max_features"),
    ({"tree_size": "huge"}, "tree_size"),
    ({"tree_size": "random", "max_depth": None}, "max_depth"),
])
def test_bad_parameters_are_named(kwargs, text):
    X, y = _data(n=20)
    with pytest.raises(ValueError, match=text):
        generate_isle(X, y, **kwargs)


def test_y_of_the_wrong_length_is_refused():
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="shape"):
        generate_isle(X, y[:-1])
