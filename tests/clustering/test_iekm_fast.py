"""IEK-m's compiled assignment step against plain references (issue 21, acceptance 1).

The assignment step of :mod:`ensemblekit.clustering.inner_kmeans` runs in a
numba kernel that visits only each member's features. Its results must be
those of the previous implementation (a dense matrix product over every
feature, then numpy reductions), bit for bit. Three references:

* a plain loop that evaluates every distance as the dense product does -- a
  chain of fused multiply-adds over all features in order, done exactly in
  rationals here -- then votes with the documented tie rule;
* on small-integer data, where every distance is exact whatever the order,
  a plain loop in integers (many tied votes);
* the previous numpy implementation, kept below, for whole fits.

The previous implementation is run with one BLAS thread. OpenBLAS computes
each entry of a product as that chain, except in a block that ends with a
single row, whose last row it sums differently; with two threads it splits
the rows between them and can make such a block (a 300-row product on two
threads does), so the previous results depended on the number of threads.
The blocks of these data sets are even-sized, so with one thread every
entry is the chain. The new kernel does not depend on threads or blocks.
"""

from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from threadpoolctl import threadpool_limits

from ensemblekit.clustering._inner_kmeans_kernels import cluster_sums
from ensemblekit.clustering.inner_kmeans import (
    InnerEnsembleKMeans,
    _draw_feature_weights,
    _member_centres,
    _n_subset_features,
    _update_centers,
    _vote_assign,
)
from ensemblekit.clustering.kmeans import initial_centers

from ektesting import support


def centred(name, rows=None):
    X, y = support.load_numeric(name)
    X = X[:rows]
    return X - X.mean(axis=0), len(set(y))


def fma(x, y, z):
    """x * y + z rounded once, computed exactly in rationals."""
    return float(Fraction(x) * Fraction(y) + Fraction(z))


# ---------------------------------------------------------------------------
# plain-loop references
# ---------------------------------------------------------------------------
def vote_reference_fma(X, centers, W):
    """Plain loops: each distance as the dense product's chain of fused multiply-adds.

    Distance of instance i to centre c for member e (up to a constant of i, e):
    acc = 0; acc = fma(x_f, -2 W[e, f] mu[c, f], acc) for f = 0 .. d - 1 (zero
    weights included); plus sum_f W[e, f] mu[c, f]**2. Member ties -> lowest
    index; vote ties -> nearest in the full space, then lowest index.
    """
    n, d = X.shape
    k, E = centers.shape[0], W.shape[0]
    M, b = _member_centres(centers, np.vstack([W, np.ones((1, d))]))

    def dist(i, e, c):
        acc = 0.0
        for f in range(d):
            acc = fma(X[i, f], M[f, e * k + c], acc)
        return acc + b[e * k + c]

    labels = np.zeros(n, dtype=int)
    votes = np.zeros((n, k), dtype=int)
    for i in range(n):
        for e in range(E):
            best, best_c = np.inf, 0
            for c in range(k):
                v = dist(i, e, c)
                if v < best:
                    best, best_c = v, c
            votes[i, best_c] += 1
        tied = [c for c in range(k) if votes[i, c] == votes[i].max()]
        best, labels[i] = np.inf, 0
        if len(tied) == 1:
            labels[i] = tied[0]
            continue
        for c in tied:
            v = dist(i, E, c)
            if v < best:
                best, labels[i] = v, c
    return labels, votes


def vote_reference_exact(X, centers, W):
    """Plain loops in integers (data, centres and weights small integers)."""
    Xi, Ci, Wi = X.astype(int), centers.astype(int), W.astype(int)
    n, d = Xi.shape
    k, E = Ci.shape[0], Wi.shape[0]
    labels = np.zeros(n, dtype=int)
    votes = np.zeros((n, k), dtype=int)
    for i in range(n):
        for e in range(E):
            dists = [sum(int(Wi[e, f]) * int(Xi[i, f] - Ci[c, f]) ** 2 for f in range(d))
                     for c in range(k)]
            votes[i, dists.index(min(dists))] += 1  # first minimum: lowest index
        top = votes[i].max()
        full = [sum(int(Xi[i, f] - Ci[c, f]) ** 2 for f in range(d)) for c in range(k)]
        labels[i] = min((c for c in range(k) if votes[i, c] == top), key=lambda c: (full[c], c))
    return labels, votes


# ---------------------------------------------------------------------------
# the previous implementation (numpy, dense product), for whole fits
# ---------------------------------------------------------------------------
def previous_chunk_size(n_estimators, n_clusters):
    row_bytes = 8 * (n_estimators + 1) * n_clusters
    return max(1, min(max(64, 2**20 // row_bytes), 64 * 2**20 // row_bytes))


def previous_vote_assign(X, centers, W):
    n, E, k = X.shape[0], W.shape[0], centers.shape[0]
    chunk = previous_chunk_size(E, k)
    M, b = _member_centres(centers, np.vstack([W, np.ones((1, W.shape[1]))]))
    labels = np.empty(n, dtype=np.intp)
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        rows = stop - start
        block = X[start:stop] @ M
        block += b
        block = block.reshape(rows, E + 1, k)
        nearest = block[:, :E, :].argmin(axis=2)
        flat = (np.arange(rows)[:, None] * k + nearest).ravel()
        votes = np.bincount(flat, minlength=rows * k).reshape(rows, k)
        tied = votes == votes.max(axis=1, keepdims=True)
        labels[start:stop] = np.where(tied, block[:, E, :], np.inf).argmin(axis=1)
    return labels


def previous_sums(X, labels, k):
    sums = np.empty((k, X.shape[1]))
    for f in range(X.shape[1]):
        sums[:, f] = np.bincount(labels, weights=X[:, f], minlength=k)
    return sums, np.bincount(labels, minlength=k).astype(np.float64)


def previous_fit(X, k, seed, E, max_features, bootstrap, resample, max_iter):
    """The previous implementation's fit on the documented random stream:
    (centres, labels, n_iter) in input units."""
    rng = np.random.RandomState(seed)
    init = initial_centers(X, k, "random", rng.randint(np.iinfo(np.int32).max))
    m = _n_subset_features(max_features, X.shape[1])
    W_once = _draw_feature_weights(rng, E, X.shape[1], m, bootstrap) if resample == "once" else None

    def draw():
        return W_once if W_once is not None else _draw_feature_weights(
            rng, E, X.shape[1], m, bootstrap)

    mean = X.mean(axis=0)
    Xc = X - mean
    centers = init - mean
    labels_old = np.full(X.shape[0], -1)
    converged = False
    for n_iter in range(1, max_iter + 1):  # noqa: B007
        labels = previous_vote_assign(Xc, centers, draw())
        sums, counts = previous_sums(Xc, labels, k)
        assert counts.min() > 0  # (relocation is not exercised by these data)
        new = sums * (1.0 / counts)[:, None]
        unmoved = not np.any(new != centers)
        centers = new
        if np.array_equal(labels, labels_old):
            converged = True
            break
        if unmoved:
            break
        labels_old = labels
    if not converged:
        labels = previous_vote_assign(Xc, centers, draw())
    return centers + mean, labels, n_iter


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------
REAL = [pytest.param("letter-300.arff", 30, marks=pytest.mark.slow),  # 16 features, 26 centres
        ("pendigits-300.arff", 60), ("glass.arff", 80), ("iris.arff", 150)]


@pytest.mark.parametrize("name, rows", REAL)
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])  # a Python loop
@pytest.mark.parametrize("bootstrap", [False, True])
def test_kernel_matches_plain_fma_loop(name, rows, seed, bootstrap):
    X, k = centred(name)
    rng = np.random.RandomState(seed)
    # Centres as K-means makes them: means of (random) groups of instances.
    groups = rng.randint(k, size=X.shape[0])
    groups[:k] = np.arange(k)
    centers = np.array([X[groups == c].mean(axis=0) for c in range(k)])
    m = _n_subset_features(0.5, X.shape[1])
    W = _draw_feature_weights(rng, 6, X.shape[1], m, bootstrap)
    Xs = X[rng.permutation(X.shape[0])[:rows]]
    labels_ref, votes_ref = vote_reference_fma(Xs, centers, W)
    labels, votes = _vote_assign(Xs, centers, W, return_votes=True)
    assert_array_equal(votes, votes_ref)
    assert_array_equal(labels, labels_ref)
    assert (votes_ref.max(axis=1) < 6).any()  # some instances had split votes


@pytest.mark.parametrize("n_features", [2, 3, 6])
def test_integer_data_with_tied_votes(n_features):
    n_tied = n_double = 0
    for seed in range(6):
        rng = np.random.RandomState(seed)
        X = rng.randint(0, 4, size=(200, n_features)).astype(float)
        centers = rng.randint(0, 4, size=(5, n_features)).astype(float)
        centers[4] = centers[3]  # equal centres: every member's distances tie between them
        W = rng.randint(0, 3, size=(4, n_features)).astype(float)  # multiplicities 0..2
        W[W.sum(axis=1) == 0, 0] = 1.0
        labels_ref, votes_ref = vote_reference_exact(X, centers, W)
        for chunk_size in (None, 1, 7):
            labels, votes = _vote_assign(X, centers, W, chunk_size=chunk_size,
                                         return_votes=True)
            assert_array_equal(votes, votes_ref)
            assert_array_equal(labels, labels_ref)
        with threadpool_limits(1, user_api="blas"):
            assert_array_equal(previous_vote_assign(X, centers, W), labels_ref)
        # how often the tie rules decided
        tied = votes_ref == votes_ref.max(axis=1, keepdims=True)
        full = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)
        full_tied = np.where(tied, full, np.inf)
        n_tied += (tied.sum(axis=1) > 1).sum()
        n_double += ((full_tied == full_tied.min(axis=1, keepdims=True)).sum(axis=1) > 1).sum()
    assert n_tied >= 50  # vote ties, decided by the full-space distance ...
    assert n_double >= 5  # ... and ties on that too, decided by the lowest index


@pytest.mark.parametrize("name", ["letter-300.arff", "pendigits-300.arff", "glass.arff",
                                  "iris.arff"])
@pytest.mark.parametrize("bootstrap, resample", [(False, "each-iteration"), (True, "once"),
                                                 (True, "each-iteration")])
def test_fit_equals_previous_implementation(name, bootstrap, resample):
    X, y = support.load_numeric(name)
    k = len(set(y))
    for seed in range(3):
        params = dict(n_estimators=10, max_features=0.5, bootstrap_features=bootstrap,
                      resample=resample, max_iter=40, random_state=seed)
        model = InnerEnsembleKMeans(k, **params).fit(X)
        with threadpool_limits(1, user_api="blas"):
            centers, labels, n_iter = previous_fit(X, k, seed, 10, 0.5, bootstrap, resample, 40)
        assert_array_equal(model.labels_, labels)
        assert_array_equal(model.cluster_centers_, centers)
        assert model.n_iter_ == n_iter


def test_block_size_does_not_change_labels():
    X, k = centred("letter-300.arff")
    rng = np.random.RandomState(3)
    centers = X[rng.choice(X.shape[0], k, replace=False)] + 0.25
    W = _draw_feature_weights(rng, 10, X.shape[1], 8, True)
    expected = _vote_assign(X, centers, W)
    with threadpool_limits(1, user_api="blas"):
        assert_array_equal(previous_vote_assign(X, centers, W), expected)
    for chunk_size in (1, 2, 3, 255, 256, 257, 1000):
        assert_array_equal(_vote_assign(X, centers, W, chunk_size=chunk_size), expected)


def test_cluster_sums_are_bincount_sums():
    X, k = centred("pendigits-300.arff")
    labels = np.random.RandomState(0).randint(k, size=X.shape[0])
    sums, counts = cluster_sums(np.ascontiguousarray(X), labels.astype(np.intp), k)
    sums_ref, counts_ref = previous_sums(X, labels, k)
    assert_array_equal(sums, sums_ref)
    assert_array_equal(counts, counts_ref)
    # and the update step: the means, bit for bit
    assert_array_equal(_update_centers(X, labels, np.zeros((k, X.shape[1]))),
                       sums_ref * (1.0 / counts_ref)[:, None])
