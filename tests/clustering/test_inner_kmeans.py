"""Tests of ensemblekit.clustering.inner_kmeans (IEK-m, Algorithm 6 of Inner Ensembles)."""

from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from ensemblekit.clustering.inner_kmeans import (
    InnerEnsembleKMeans,
    _draw_feature_weights,
    _inner_lloyd,
    _n_subset_features,
    _subset_sq_distances,
    _update_centers,
    _vote_assign,
)
from ensemblekit.clustering.kmeans import KMeans, initial_centers

from ektesting import support
from ektesting.estimator_checks import parametrize_with_checks_per_class

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def load_numeric(name):
    """Numeric attributes of a sample ARFF file (class = last attribute, dropped) and k."""
    X, y = support.load_numeric(name)
    return X, len(set(y))


def votes_reference(X, centers, W):
    """Plain loops: member distances, votes, and the documented tie-break."""
    n, k, E = X.shape[0], centers.shape[0], W.shape[0]
    D = np.zeros((n, E, k))
    votes = np.zeros((n, k), dtype=int)
    labels = np.zeros(n, dtype=int)
    for i in range(n):
        full = [((X[i] - centers[c]) ** 2).sum() for c in range(k)]
        for e in range(E):
            for c in range(k):
                D[i, e, c] = sum(W[e, f] * (X[i, f] - centers[c, f]) ** 2
                                 for f in range(X.shape[1]))
            best = 0
            for c in range(1, k):
                if D[i, e, c] < D[i, e, best]:
                    best = c
            votes[i, best] += 1
        top = votes[i].max()
        candidates = [c for c in range(k) if votes[i, c] == top]
        labels[i] = min(candidates, key=lambda c: (full[c], c))
    return D, votes, labels


# ---------------------------------------------------------------------------
# the assignment kernel, by hand
# ---------------------------------------------------------------------------
def test_vote_majority_by_hand():
    # x = (1, 3); centres (0, 0) and (4, 1).
    # member 0 uses feature 0: 1 vs 9 -> centre 0
    # member 1 uses feature 1: 9 vs 4 -> centre 1
    # member 2 drew feature 1 twice: 18 vs 8 -> centre 1
    X = np.array([[1.0, 3.0]])
    centers = np.array([[0.0, 0.0], [4.0, 1.0]])
    W = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0]])
    assert_array_equal(_subset_sq_distances(X, centers, W)[0], [[1, 9], [9, 4], [18, 8]])
    labels, votes = _vote_assign(X, centers, W, return_votes=True)
    assert_array_equal(votes, [[1, 2]])
    assert_array_equal(labels, [1])


def test_vote_tie_goes_to_nearest_in_full_space():
    # x = (4, 1); centres (0, 0), (3, 3). Feature 0: 16 vs 1 -> 1; feature 1:
    # 1 vs 4 -> 0. Tied 1:1; full space 17 vs 5 -> centre 1 (not the lowest index).
    X = np.array([[4.0, 1.0]])
    centers = np.array([[0.0, 0.0], [3.0, 3.0]])
    W = np.eye(2)
    labels, votes = _vote_assign(X, centers, W, return_votes=True)
    assert_array_equal(votes, [[1, 1]])
    assert_array_equal(labels, [1])


def test_vote_double_tie_goes_to_lowest_index():
    # x = (0, 0); centres (5, 5), (1, 0), (0, 1). Feature 0 -> centre 2,
    # feature 1 -> centre 1; full distances 50, 1, 1 -> lowest index, 1.
    X = np.zeros((1, 2))
    centers = np.array([[5.0, 5.0], [1.0, 0.0], [0.0, 1.0]])
    labels, votes = _vote_assign(X, centers, np.eye(2), return_votes=True)
    assert_array_equal(votes, [[0, 1, 1]])
    assert_array_equal(labels, [1])


def test_member_tie_goes_to_lowest_index():
    # x = 0 is equally far from -1 and 1 -> the single member votes centre 0.
    X = np.zeros((1, 1))
    centers = np.array([[1.0], [-1.0]])
    labels, votes = _vote_assign(X, centers, np.ones((1, 1)), return_votes=True)
    assert_array_equal(votes, [[1, 0]])
    assert_array_equal(labels, [0])


@pytest.mark.parametrize("chunk_size", [1, 4, 7, 30, 1000, None])
def test_chunked_kernel_matches_loop_reference(chunk_size):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30, 5))
    centers = rng.normal(size=(4, 5))
    W = rng.randint(0, 3, size=(6, 5)).astype(float)
    W[W.sum(axis=1) == 0, 0] = 1.0
    D_ref, votes_ref, labels_ref = votes_reference(X, centers, W)
    assert_allclose(_subset_sq_distances(X, centers, W), D_ref, rtol=1e-12, atol=1e-12)
    labels, votes = _vote_assign(X, centers, W, chunk_size=chunk_size, return_votes=True)
    assert_array_equal(votes, votes_ref)
    assert_array_equal(labels, labels_ref)
    assert_array_equal(votes.sum(axis=1), 6)


# ---------------------------------------------------------------------------
# subsets
# ---------------------------------------------------------------------------
def test_subset_size_rounding():
    assert _n_subset_features(0.5, 5) == 2  # 2.5 -> 2 (half to even)
    assert _n_subset_features(0.5, 7) == 4  # 3.5 -> 4
    assert _n_subset_features(0.3, 10) == 3
    assert _n_subset_features(0.1, 3) == 1  # 0.3 -> 0 -> at least 1
    assert _n_subset_features(1.0, 9) == 9


@pytest.mark.parametrize("bootstrap", [False, True])
def test_draw_feature_weights(bootstrap):
    rng = np.random.RandomState(0)
    W = _draw_feature_weights(rng, 200, 6, 3, bootstrap)
    assert W.shape == (200, 6)
    assert_array_equal(W.sum(axis=1), 3)
    assert_array_equal(W, np.round(W))
    if bootstrap:
        assert W.max() >= 2  # some feature drawn twice among 200 draws
    else:
        assert set(np.unique(W)) == {0.0, 1.0}
    # every feature is used about equally often (3/6 of the members)
    assert np.all(np.abs(W.mean(axis=0) - 0.5) < 0.15)
    again = _draw_feature_weights(np.random.RandomState(0), 200, 6, 3, bootstrap)
    assert_array_equal(W, again)


# ---------------------------------------------------------------------------
# the iteration, by hand
# ---------------------------------------------------------------------------
X4 = np.array([[0.0, 0.0], [1.0, 10.0], [10.0, 0.0], [11.0, 10.0]])
INIT4 = np.array([[0.0, 0.0], [11.0, 10.0]])


def test_inner_lloyd_feature0_members_by_hand():
    # Members that only see feature 0 (two of three) outvote the one seeing
    # feature 1: split {0, 1} | {2, 3}; means (0.5, 5), (10.5, 5); stable at step 2.
    W = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    centers, labels, inertia, n_iter = _inner_lloyd(X4, INIT4, lambda: W, max_iter=10)
    assert_array_equal(labels, [0, 0, 1, 1])
    assert_array_equal(centers, [[0.5, 5.0], [10.5, 5.0]])
    assert n_iter == 2
    assert inertia == pytest.approx(4 * (0.25 + 25.0))


def test_inner_lloyd_feature1_member_by_hand():
    # A member seeing only feature 1: split {0, 2} | {1, 3}; means (5, 0), (6, 10).
    W = np.array([[0.0, 1.0]])
    centers, labels, inertia, n_iter = _inner_lloyd(X4, INIT4, lambda: W, max_iter=10)
    assert_array_equal(labels, [0, 1, 0, 1])
    assert_array_equal(centers, [[5.0, 0.0], [6.0, 10.0]])
    assert (n_iter, inertia) == (2, 100.0)


def test_inner_lloyd_max_iter_relabels_with_final_centres():
    W = np.array([[1.0, 0.0]])
    centers, labels, _, n_iter = _inner_lloyd(X4, INIT4, lambda: W, max_iter=1)
    assert n_iter == 1
    assert_array_equal(centers, [[0.5, 5.0], [10.5, 5.0]])
    assert_array_equal(labels, [0, 0, 1, 1])


def test_update_centers_relocates_empty_cluster_by_hand():
    # All three points in cluster 0 (old centre 0). Clusters 1 and 2 are empty:
    # the farthest point (10, distance 100) goes to cluster 1, the next (1) to
    # cluster 2; cluster 0 keeps only 0.
    X = np.array([[0.0], [1.0], [10.0]])
    centers = _update_centers(X, np.array([0, 0, 0]), np.array([[0.0], [5.0], [100.0]]))
    assert_array_equal(centers, [[0.0], [10.0], [1.0]])


def test_empty_cluster_during_fit_matches_kmeans():
    # The centre at 300 gets no instance in step 1 and is relocated.
    X = np.array([[0.0], [1.0], [2.0], [3.0], [50.0], [51.0]])
    init = np.array([[1.0], [1.5], [300.0]])
    km = KMeans(3, init=init).fit(X)
    ie = InnerEnsembleKMeans(3, n_estimators=1, max_features=1.0, init=init).fit(X)
    assert_array_equal(ie.labels_, km.labels_)
    assert_array_equal(ie.cluster_centers_, km.cluster_centers_)
    assert ie.n_iter_ == km.n_iter_
    assert len(np.unique(ie.labels_)) == 3


# ---------------------------------------------------------------------------
# E = 1, all features == K-means
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["iris.arff", "glass.arff"])
@pytest.mark.parametrize("init", ["random", "k-means++"])
@pytest.mark.parametrize("scale", ["none", "minmax"])
def test_single_full_member_is_kmeans(name, init, scale):
    X, k = load_numeric(name)
    for seed in range(4):
        km = KMeans(k, init=init, scale=scale, random_state=seed).fit(X)
        ie = InnerEnsembleKMeans(k, n_estimators=1, max_features=1.0,
                                 bootstrap_features=False, init=init, scale=scale,
                                 random_state=seed).fit(X)
        assert_array_equal(ie.init_centers_, km.init_centers_)
        assert_array_equal(ie.labels_, km.labels_)
        assert_array_equal(ie.cluster_centers_, km.cluster_centers_)
        assert ie.n_iter_ == km.n_iter_
        assert ie.inertia_ == pytest.approx(km.inertia_, rel=1e-12)


def test_identical_full_members_are_kmeans():
    X, k = load_numeric("iris.arff")
    km = KMeans(k, random_state=11).fit(X)
    ie = InnerEnsembleKMeans(k, n_estimators=7, max_features=1.0, random_state=11).fit(X)
    assert_array_equal(ie.labels_, km.labels_)
    assert_array_equal(ie.cluster_centers_, km.cluster_centers_)


# ---------------------------------------------------------------------------
# randomness: documented streams, determinism
# ---------------------------------------------------------------------------
def _documented_run(X, k, seed, E, mf, bootstrap, resample, max_iter):
    """(init, centers, labels, n_iter) of the procedure fed the documented random stream:
    the first draw seeds the initial centres, later draws the feature subsets."""
    rng = np.random.RandomState(seed)
    init = initial_centers(X, k, "random", rng.randint(np.iinfo(np.int32).max))
    m = _n_subset_features(mf, X.shape[1])
    if resample == "once":
        W = _draw_feature_weights(rng, E, X.shape[1], m, bootstrap)
        draw = lambda: W  # noqa: E731
    else:
        draw = lambda: _draw_feature_weights(rng, E, X.shape[1], m, bootstrap)  # noqa: E731
    mean = X.mean(axis=0)
    centers, labels, _, n_iter = _inner_lloyd(X - mean, init - mean, draw, max_iter)
    return init, centers + mean, labels, n_iter


@pytest.mark.parametrize("resample", ["once", "each-iteration"])
@pytest.mark.parametrize("bootstrap", [False, True])
def test_random_stream_as_documented(resample, bootstrap):
    X, k = load_numeric("iris.arff")
    seed, E, mf, max_iter = 5, 4, 0.5, 20
    model = InnerEnsembleKMeans(k, n_estimators=E, max_features=mf,
                                bootstrap_features=bootstrap, resample=resample,
                                max_iter=max_iter, random_state=seed).fit(X)
    init, centers, labels, n_iter = _documented_run(X, k, seed, E, mf, bootstrap, resample, max_iter)
    assert_array_equal(model.init_centers_, init)
    assert_array_equal(model.labels_, labels)
    assert_array_equal(model.cluster_centers_, centers)
    assert model.n_iter_ == n_iter
    assert model.n_subset_features_ == 2


def test_same_seed_same_result_and_same_init_as_kmeans():
    X, k = load_numeric("glass.arff")
    for init in ("random", "k-means++"):
        params = dict(n_estimators=5, max_features=0.4, bootstrap_features=True,
                      init=init, scale="zscore", max_iter=30, random_state=42)
        a = InnerEnsembleKMeans(k, **params).fit(X)
        b = InnerEnsembleKMeans(k, **params).fit(X)
        for attr in ("labels_", "cluster_centers_", "init_centers_"):
            assert_array_equal(getattr(a, attr), getattr(b, attr))
        assert (a.n_iter_, a.inertia_) == (b.n_iter_, b.inertia_)
        km = KMeans(k, init=init, scale="zscore", random_state=42).fit(X)
        assert_array_equal(a.init_centers_, km.init_centers_)


def test_chunk_size_does_not_change_result():
    X, k = load_numeric("iris.arff")
    a = InnerEnsembleKMeans(k, max_iter=15, random_state=0, chunk_size=1).fit(X)
    b = InnerEnsembleKMeans(k, max_iter=15, random_state=0, chunk_size=None).fit(X)
    assert_array_equal(a.labels_, b.labels_)
    assert_array_equal(a.cluster_centers_, b.cluster_centers_)


# ---------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("bootstrap", [False, True])
def test_invariants_after_convergence(bootstrap):
    X, k = load_numeric("glass.arff")
    model = InnerEnsembleKMeans(k, n_estimators=9, max_features=0.3,
                                bootstrap_features=bootstrap, resample="once",
                                scale="minmax", random_state=1).fit(X)
    assert model.n_iter_ < model.max_iter  # converged: labels unchanged
    labels = model.labels_
    assert labels.min() >= 0 and labels.max() < k
    for c in np.unique(labels):
        assert_allclose(model.cluster_centers_[c], X[labels == c].mean(axis=0),
                        rtol=1e-10, atol=1e-12)
    Xs = (X - model.scaling_offset_) / model.scaling_factor_
    assert model.inertia_ == pytest.approx(
        ((Xs - model.scaled_centers_[labels]) ** 2).sum(), rel=1e-10)
    # predict: nearest prototype in the full (scaled) space
    d = ((Xs[:, None, :] - model.scaled_centers_[None]) ** 2).sum(axis=2)
    assert_array_equal(model.predict(X), d.argmin(axis=1))
    assert_array_equal(model.fit_predict(X), labels)


def test_invariants_without_convergence():
    X, k = load_numeric("iris.arff")
    model = InnerEnsembleKMeans(k, n_estimators=3, max_features=0.5, max_iter=4,
                                random_state=3).fit(X)
    assert model.n_iter_ == 4  # stopped by max_iter, not converged
    # the state after the fourth step is the documented procedure's
    _, centers, labels, n_iter = _documented_run(X, k, 3, 3, 0.5, model.bootstrap_features,
                                                 model.resample, 4)
    assert n_iter == 4
    assert_array_equal(model.labels_, labels)
    assert_array_equal(model.cluster_centers_, centers)
    assert model.labels_.shape == (150,)
    assert set(np.unique(model.labels_)) <= set(range(k))
    assert model.cluster_centers_.shape == (k, 4)
    assert model.transform(X).shape == (150, k)


# ---------------------------------------------------------------------------
# bad parameters
# ---------------------------------------------------------------------------
def _of(name):
    return f"'{name}' parameter of InnerEnsembleKMeans"


@pytest.mark.parametrize(
    "params, message",
    [
        ({"max_features": 0.05}, f"{_of('max_features')} must be float >= 0.1 and <= 1;"),
        ({"max_features": 1.5}, f"{_of('max_features')} must be float >= 0.1 and <= 1;"),
        ({"max_features": "0.5"}, f"{_of('max_features')} must be float >= 0.1 and <= 1;"),
        ({"max_features": True}, f"{_of('max_features')} must be float >= 0.1 and <= 1;"),
        ({"n_estimators": 0}, f"{_of('n_estimators')} must be int >= 1 and <= 1000;"),
        ({"n_estimators": 2.0}, f"{_of('n_estimators')} must be int >= 1 and <= 1000;"),
        ({"bootstrap_features": "yes"}, rf"{_of('bootstrap_features')} must be true\|false;"),
        ({"resample": "never"}, rf"{_of('resample')} must be each-iteration\|once;"),
        ({"chunk_size": 0}, f"{_of('chunk_size')} must be int >= 1, or none;"),
        ({"n_clusters": -1}, f"{_of('n_clusters')} must be int >= 1;"),
        ({"scale": "l2"}, rf"{_of('scale')} must be none\|minmax\|zscore;"),
        ({"init": "first"}, rf"{_of('init')} must be random\|k-means\+\+, or an array-like;"),
        ({"max_iter": 0}, f"{_of('max_iter')} must be int >= 1 and <= 100000;"),
    ],
)
def test_bad_parameters(params, message):
    X = np.arange(20, dtype=float).reshape(10, 2)
    with pytest.raises(ValueError, match=message):
        InnerEnsembleKMeans(**{"n_clusters": 2, **params}).fit(X)


def test_bad_data():
    with pytest.raises(ValueError, match="n_samples=2 should be >= n_clusters=3"):
        InnerEnsembleKMeans(3).fit(np.eye(2))
    X = np.arange(10, dtype=float).reshape(5, 2)
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        InnerEnsembleKMeans(2).fit(X)


@parametrize_with_checks_per_class([InnerEnsembleKMeans(random_state=0)], variants=[
    InnerEnsembleKMeans(n_estimators=5, max_features=0.7, bootstrap_features=True,
                        resample="once", scale="zscore", random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)
