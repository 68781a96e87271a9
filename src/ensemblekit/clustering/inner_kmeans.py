"""Inner Ensemble K-means (IEK-m): K-means whose assignment step is a vote.

Source: Algorithm 6 of Abbasian, Drummond, Japkowicz and Matwin, *Inner
Ensembles: Using Ensemble Methods Inside the Learning Algorithm*, ECML PKDD
2013, LNAI 8190, pp. 33-48 (section 2.2; experiments in section 3.2).

The decision inside K-means that the paper turns into an ensemble is "which
centre is nearest to this instance". Each of ``E`` members answers it on a
random subset of the features; the centre named most often wins. Centres
stay ordinary means, so the model keeps one prototype per cluster, and a
fitted model labels a new row by its nearest centre without voting
(:mod:`ensemblekit.clustering.inner_kmeans_model`, numpy only).

Computation. For a feature-weight matrix ``W`` (E x d; ``W[e, f]`` is how
many times feature ``f`` is in member ``e``'s subset), the weighted squared
distance of instance ``i`` to centre ``c`` for member ``e`` is::

    D[i, e, c] = sum_f W[e, f] (X[i, f] - mu[c, f])**2
               = (X**2 @ W.T)[i, e] - 2 (X @ M)[i, e*k + c] + (mu**2 @ W.T)[c, e]

with ``M[f, e*k + c] = W[e, f] * mu[c, f]``: one matrix product gives all
``E * k`` distances of a block of rows. The first term is the same for every
centre, so the vote (an argmin over centres) leaves it out.

Cost. A dense product spends ``d`` multiply-adds on each of the ``E * k``
member distances, although member ``e`` has only ``m = |{f : W[e, f] > 0}|``
non-zero weights, and the full-space distance (the tie-break) is needed only
for instances whose vote is tied. The assignment step therefore runs in a
compiled kernel (:mod:`._inner_kmeans_kernels`, numba) that visits only the
``m`` features of each member, keeps the running minimum and the vote
counts in registers and cache-sized blocks, and computes full-space
distances for tied instances only: about ``n E k m`` multiply-adds instead
of ``n (E + 1) k d``. Each distance is the same chain of fused
multiply-adds, in the same feature order, as the dense product's
(zero weights add exact zeros), so the labels are those of the dense form.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .inner_kmeans_model import RESAMPLE_MODES, SUBSET_CONSTRAINTS, InnerEnsembleKMeansModel
from .kmeans import _BasePrototypeClustering

#: The modules of compiled (numba) kernels a fit loads (see
#: :data:`ensemblekit.classifiers.c45_model.KERNEL_MODULES`).
KERNEL_MODULES = ("ensemblekit.clustering._inner_kmeans_kernels",)

__all__ = ["InnerEnsembleKMeans", "RESAMPLE_MODES", "SUBSET_CONSTRAINTS"]

# Rows per block of the assignment kernel when chunk_size is None. A member's
# pass over a block reads its m feature rows of the block once per centre, so
# they should stay in the L1/L2 cache; 256 rows (16 KiB for m = 8) measured
# fastest on letter and about even on pendigits, against 128 and 512.
_BLOCK_ROWS = 256


def _n_subset_features(max_features, n_features):
    """Features per member: ``max(1, round(max_features * n_features))``.

    Python's ``round`` is used, which sends exact halves to the even integer
    (0.5 * 5 = 2.5 -> 2; 0.5 * 7 = 3.5 -> 4).
    """
    return max(1, int(round(max_features * n_features)))


def _draw_feature_weights(rng, n_estimators, n_features, n_subset, bootstrap):
    """Draw one feature subset per member, as a multiplicity matrix.

    Parameters
    ----------
    rng : numpy.random.RandomState
        Source of the draws.
    n_estimators : int
        Number of members ``E``.
    n_features : int
        Number of features ``d``.
    n_subset : int
        Features drawn per member, 1 <= n_subset (<= d without replacement).
    bootstrap : bool
        Draw with replacement (a feature may be drawn several times).

    Returns
    -------
    W : ndarray of shape (n_estimators, n_features), float64
        ``W[e, f]`` = number of times feature ``f`` was drawn for member ``e``;
        every row sums to ``n_subset``; without replacement the entries are 0/1.
    """
    if bootstrap:
        drawn = rng.randint(n_features, size=(n_estimators, n_subset))
    else:
        keys = rng.random_sample((n_estimators, n_features))
        drawn = np.argsort(keys, axis=1, kind="stable")[:, :n_subset]
    flat = (np.arange(n_estimators)[:, None] * n_features + drawn).ravel()
    counts = np.bincount(flat, minlength=n_estimators * n_features)
    return counts.reshape(n_estimators, n_features).astype(np.float64)


def _subset_sq_distances(X, centers, W):
    """Squared distances of every instance to every centre under every member's subset.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    centers : ndarray of shape (n_clusters, n_features)
    W : ndarray of shape (n_estimators, n_features)
        Feature multiplicities (non-negative).

    Returns
    -------
    D : ndarray of shape (n_samples, n_estimators, n_clusters)
        ``D[i, e, c] = sum_f W[e, f] (X[i, f] - centers[c, f])**2``, computed
        with the matrix-product expansion (so tiny negative values from
        rounding are possible). Holds the whole array: for tests and small data.
    """
    n_estimators = W.shape[0]
    n_clusters = centers.shape[0]
    M, b = _member_centres(centers, W)
    D = X @ M
    D += b
    D = D.reshape(X.shape[0], n_estimators, n_clusters)
    D += ((X * X) @ W.T)[:, :, None]
    return D


def _member_centres(centers, W):
    """Right-hand factors of the distance expansion.

    Returns ``M`` of shape (d, E*k) with ``M[f, e*k + c] = -2 W[e, f] mu[c, f]``
    (the factor -2 is folded in; scaling by a power of two is exact) and ``b``
    of shape (E*k,) with ``b[e*k + c] = sum_f W[e, f] mu[c, f]**2``.
    """
    n_features = W.shape[1]
    weighted = W[:, None, :] * centers[None, :, :]  # (E, k, d)
    b = np.einsum("ecf,cf->ec", weighted, centers).reshape(-1)
    M = (-2.0 * weighted).reshape(-1, n_features).T
    return M, b


def _padded_transpose(X):
    """The data as the kernels read them: ``X.T`` plus a last row of zeros.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    XT : ndarray of shape (n_features + 1, n_samples), float64, C-contiguous
        ``XT[f, i] = X[i, f]``; row ``n_features`` is zero (the feature that
        pads member subsets to whole groups, see :func:`_member_tables`).
    """
    n_samples, n_features = X.shape
    XT = np.zeros((n_features + 1, n_samples))
    XT[:n_features] = X.T
    return XT


def _member_tables(centers, W, group):
    """Per-member multipliers, offsets and feature lists for the assignment kernel.

    Parameters
    ----------
    centers : ndarray of shape (n_clusters, n_features)
    W : ndarray of shape (n_estimators, n_features)
        Feature multiplicities (non-negative).
    group : int
        The kernel's group of features (subsets are padded to a multiple).

    Returns
    -------
    A : ndarray of shape (n_estimators + 1, n_clusters, n_features + 1)
        ``A[e, c, f] = -2 W[e, f] centers[c, f]`` (the entries of ``M`` of
        :func:`_member_centres`), for ``W`` followed by a full-space member
        with every feature once; ``A[:, :, n_features] = 0``.
    b : ndarray of shape (n_estimators + 1, n_clusters)
        ``b[e, c] = sum_f W[e, f] centers[c, f]**2``, likewise.
    feats : ndarray of shape (n_estimators, n_slots), intp
        Row ``e``: the features with ``W[e, f] > 0`` in increasing order, then
        ``n_features`` (a zero feature with a zero multiplier, which adds an
        exact zero) up to ``n_slots``, the largest subset rounded up to a
        multiple of ``group``.
    """
    n_estimators, n_features = W.shape
    n_clusters = centers.shape[0]
    W_all = np.vstack([W, np.ones((1, n_features))])
    M, b = _member_centres(centers, W_all)
    A = np.zeros((n_estimators + 1, n_clusters, n_features + 1))
    A[:, :, :n_features] = M.T.reshape(n_estimators + 1, n_clusters, n_features)
    used = W > 0
    n_used = used.sum(axis=1)
    n_slots = max(group, -(-int(n_used.max()) // group) * group)
    # A stable sort of "unused" puts each member's features first, in order.
    order = np.argsort(~used, axis=1, kind="stable")
    order = np.hstack([order, np.full((n_estimators, n_slots), n_features)])[:, :n_slots]
    slot = np.arange(n_slots)[None, :]
    feats = np.where(slot < n_used[:, None], order, n_features).astype(np.intp)
    return A, b.reshape(n_estimators + 1, n_clusters), feats


def _vote_assign(X, centers, W, chunk_size=None, return_votes=False, XT=None):
    """Assignment step of IEK-m (Algorithm 6, lines 4-13) for a fixed set of subsets.

    Each member ``e`` votes for the centre nearest to the instance under the
    weighted squared distance of its subset (on equal distances, the lowest
    centre index); the centre with most votes wins; among centres tied on
    votes, the one nearest in the full feature space wins, then the lowest
    index. The work runs in a compiled kernel over blocks of ``chunk_size``
    rows (see the module docstring, *Cost*); distances are those of
    :func:`_subset_sq_distances` up to a per-(instance, member) constant,
    rounded as the dense matrix product rounds them.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data (float64).
    centers : ndarray of shape (n_clusters, n_features)
        Current centres.
    W : ndarray of shape (n_estimators, n_features)
        Feature multiplicities of each member's subset (see
        :func:`_draw_feature_weights`).
    chunk_size : int or None, default=None
        Rows per block (>= 1); None: 256. The result does not depend on it.
    return_votes : bool, default=False
        Also return the vote counts.
    XT : ndarray of shape (n_features + 1, n_samples) or None, default=None
        ``_padded_transpose(X)``, when the caller keeps it across steps.

    Returns
    -------
    labels : ndarray of shape (n_samples,), intp
        Winning centre of each instance.
    votes : ndarray of shape (n_samples, n_clusters), intp
        Number of members voting for each centre (rows sum to E). Only when
        ``return_votes`` is True.
    """
    from ._inner_kmeans_kernels import GROUP, vote_assign

    n_samples = X.shape[0]
    n_clusters = centers.shape[0]
    if XT is None:
        XT = _padded_transpose(np.asarray(X, dtype=np.float64))
    A, b, feats = _member_tables(np.asarray(centers, dtype=np.float64),
                                 np.asarray(W, dtype=np.float64), GROUP)
    labels = np.empty(n_samples, dtype=np.intp)
    votes = np.empty((n_samples if return_votes else 0, n_clusters), dtype=np.intp)
    block_rows = _BLOCK_ROWS if chunk_size is None else int(chunk_size)
    vote_assign(XT, A, b, feats, block_rows, labels, votes)
    if return_votes:
        return labels, votes
    return labels


def _update_centers(X, labels, centers_old):
    """Update step: centres = means of their instances; empty clusters relocated.

    Follows scikit-learn's Lloyd step so that a one-member, all-feature IEK-m
    reproduces K-means: per-cluster sums accumulated in instance order, each
    empty cluster moved onto one of the instances farthest from their current
    centre (that instance's contribution leaves its old cluster), then the
    sums multiplied by the reciprocal counts. When every instance already sits
    on its centre, relocation is pointless and an empty centre is put on the
    centre of the largest cluster.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    labels : ndarray of shape (n_samples,)
        Assignment, values in 0 .. k - 1.
    centers_old : ndarray of shape (n_clusters, n_features)
        Centres the assignment was made with.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
    """
    from ._inner_kmeans_kernels import cluster_sums

    n_clusters = centers_old.shape[0]
    sums, counts = cluster_sums(np.ascontiguousarray(X, dtype=np.float64),
                                np.asarray(labels, dtype=np.intp), n_clusters)

    empty = np.flatnonzero(counts == 0)
    if empty.size:
        far_dist = ((X - centers_old[labels]) ** 2).sum(axis=1)
        if far_dist.max() != 0:
            far = np.argpartition(far_dist, -empty.size)[: -empty.size - 1 : -1]
            for new_id, far_idx in zip(empty, far):
                old_id = labels[far_idx]
                sums[old_id] -= X[far_idx]
                sums[new_id] = X[far_idx]
                counts[new_id] = 1.0
                counts[old_id] -= 1.0

    centers = np.empty_like(sums)
    full = counts > 0
    centers[full] = sums[full] * (1.0 / counts[full])[:, None]
    if not full.all():
        centers[~full] = centers[np.argmax(counts)]
    return centers


def _inner_lloyd(X, centers_init, draw_weights, max_iter, chunk_size=None):
    """Run Algorithm 6 on centred data.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data (already scaled and centred).
    centers_init : ndarray of shape (n_clusters, n_features)
        Starting centres, same space as ``X``.
    draw_weights : callable
        ``draw_weights()`` returns the (n_estimators, n_features) multiplicity
        matrix to use for the next assignment step.
    max_iter : int
        Maximum number of assignment steps.
    chunk_size : int or None
        See :func:`_vote_assign`.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
    labels : ndarray of shape (n_samples,)
    inertia : float
        Sum of squared full-space distances to the assigned centre.
    n_iter : int
        Number of assignment/update steps run.
    """
    centers = np.array(centers_init, dtype=np.float64, copy=True)
    XT = _padded_transpose(X)  # the kernel's layout, made once
    labels_old = np.full(X.shape[0], -1, dtype=np.intp)
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter_ is the last value
        labels = _vote_assign(X, centers, draw_weights(), chunk_size, XT=XT)
        centers_new = _update_centers(X, labels, centers)
        unmoved = not np.any(centers_new != centers)
        centers = centers_new
        if np.array_equal(labels, labels_old):
            converged = True
            break
        if unmoved:  # tol = 0: centres identical although labels changed
            break
        labels_old = labels
    if not converged:
        # Re-assign with the final centres so labels and centres agree.
        labels = _vote_assign(X, centers, draw_weights(), chunk_size, XT=XT)
    inertia = float(((X - centers[labels]) ** 2).sum())
    return centers, labels, inertia, n_iter


class InnerEnsembleKMeans(InnerEnsembleKMeansModel, _BasePrototypeClustering):
    """Inner Ensemble K-means (IEK-m): K-means with a voted assignment step.

    Algorithm 6 of Abbasian et al. (2013). Each assignment step asks
    ``n_estimators`` members which centre is nearest to an instance, each
    member measuring the squared Euclidean distance on its own random subset
    of the features; the instance goes to the centre with most votes. The
    update step is that of K-means (centres = means of their instances), so
    the result keeps one interpretable prototype per cluster. Iteration stops
    when no assignment changes (or the centres do not move at all) or after
    ``max_iter`` steps.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters ``k`` (>= 1, <= number of instances).
    n_estimators : int, default=10
        Ensemble size ``E``: votes per instance in each assignment step (>= 1).
        The paper tries 10 to 100.
    max_features : float, default=0.5
        Fraction of the ``d`` features in each member's subset, in
        [0.1, 1.0] (the paper's "sample size", 10% to 100%). A member uses
        ``max(1, round(max_features * d))`` features; ``round`` is Python's,
        so an exact half goes to the even integer (0.5 x 5 features -> 2).
    bootstrap_features : bool, default=False
        Draw each subset with replacement. A feature drawn twice counts twice
        in that member's squared distance. The paper's tables report the
        with-replacement runs (set it to True to reproduce them); the default
        follows scikit-learn's bagging estimators, where a member's features
        are distinct.
    resample : {"each-iteration", "once"}, default="each-iteration"
        When subsets are drawn. ``"each-iteration"``: new subsets for every
        assignment step (the paper draws inside the loop), including the
        final re-assignment made when ``max_iter`` is reached.
        ``"once"``: one set of ``E`` subsets drawn before the first step and
        kept throughout. In both modes all instances of one step share the
        same ``E`` subsets; see Notes.
    init : {"random", "k-means++"} or array-like of shape (n_clusters, n_features), default="random"
        Starting centres, see :func:`~ensemblekit.clustering.kmeans.initial_centers`.
        With the same ``random_state``, :class:`~ensemblekit.clustering.kmeans.KMeans`
        starts from the same centres.
    scale : {"none", "minmax", "zscore"}, default="none"
        Attribute scaling, see :func:`~ensemblekit.clustering.kmeans.fit_scaling`.
        ``"none"`` as in the paper.
    max_iter : int, default=300
        Maximum number of assignment/update steps (>= 1).
    random_state : int, RandomState instance or None, default=None
        Seed. The first draw seeds the initialisation, later draws the
        feature subsets. The same seed gives identical results.
    chunk_size : int or None, default=None
        Rows processed per block in the assignment step (>= 1). The working
        memory of a step is about ``chunk_size x (k + 7)`` values of 8 bytes.
        None: 256 rows, which keeps a member's features of a block in the
        cache (the fastest measured). Results do not depend on it.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Final prototypes, in input units.
    scaled_centers_ : ndarray of shape (n_clusters, n_features)
        The same in the scaled space (what ``predict`` uses).
    labels_ : ndarray of shape (n_samples,)
        Voted cluster of every training instance, in ``0 .. n_clusters - 1``.
    n_iter_ : int
        Number of assignment steps run (1 .. max_iter).
    inertia_ : float
        Sum of squared full-space distances of the instances to their centre,
        in the scaled space.
    init_centers_ : ndarray of shape (n_clusters, n_features)
        Starting centres, in input units (a record of the fit, not kept in a
        model file).
    n_subset_features_ : int
        Features per member subset.
    scaling_offset_, scaling_factor_ : ndarray of shape (n_features,)
        The scaling map: scaled = (X - scaling_offset_) / scaling_factor_.
    n_features_in_ : int
        Number of attributes seen in ``fit``.

    Raises
    ------
    ValueError
        From ``fit``: on a parameter out of range (for example
        ``max_features`` outside [0.1, 1.0]), on NaN or non-numeric data, or
        when the data have fewer (distinct, for ``init="random"``) rows than
        ``n_clusters``.

    Notes
    -----
    *Subsets shared within a step.* Algorithm 6 draws a subset inside the loop
    over instances, so every instance gets its own ``E`` subsets. Here the
    ``E`` subsets of a step are shared by all instances. Each instance's votes
    have the same distribution either way (its ``E`` subsets are independent
    uniform draws); only the correlation between different instances' votes
    changes. Sharing is what lets one pass over the data, with one table of
    member-weighted centres per step, give all ``n x E x k`` distances,
    instead of a per-instance loop.

    *Speed.* The assignment step runs in a compiled kernel (numba) that
    visits only each member's features and computes full-space distances
    only for tied votes; see the module docstring. The first fit in a
    process imports numba and loads the kernels (about 0.6 s and 100 MiB
    here); they are compiled once per machine and cached on disk.

    *Ties.* Within a member, equally near centres go to the lowest index. When
    several centres share the most votes, the one nearest in the full feature
    space wins, then the lowest index. With ``n_estimators=1`` there is no tie.

    *Empty clusters.* As in scikit-learn's Lloyd iteration, a centre left
    without instances is moved onto an instance far from its own centre
    (the farthest first). Together with centring the data on their column
    means before iterating (as scikit-learn does, for precision), this makes
    ``n_estimators=1, max_features=1.0, bootstrap_features=False`` give
    K-means' labels, centres and ``n_iter_`` from the same start (bit for
    bit up to 256 instances, where scikit-learn sums centres in one pass;
    beyond, equal up to rounding).

    *Stopping.* The loop ends at the first step whose assignment equals the
    previous one, or whose centres are exactly unchanged. If ``max_iter`` is
    reached first, one more assignment step (a vote, with fresh subsets under
    ``resample="each-iteration"``) is made with the final centres, so
    ``labels_`` is the vote those centres receive; the centres are then not
    exactly the means of ``labels_``. With subsets redrawn at every step the
    assignment rarely repeats exactly, so on large data sets the loop often
    runs to ``max_iter``.

    References
    ----------
    Abbasian, Drummond, Japkowicz, Matwin, *Inner Ensembles: Using Ensemble
    Methods Inside the Learning Algorithm*, ECML PKDD 2013, LNAI 8190,
    pp. 33-48, section 2.2, Algorithm 6; section 3.2.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.clustering.inner_kmeans import InnerEnsembleKMeans
    >>> X = np.array([[0.0, 0.0], [0.5, 0.2], [9.0, 9.5], [9.5, 9.0]])
    >>> model = InnerEnsembleKMeans(n_clusters=2, n_estimators=5, random_state=0).fit(X)
    >>> sorted(np.bincount(model.labels_).tolist())
    [2, 2]
    """

    def _run(self, Xs, init_scaled, rng):
        n_features = Xs.shape[1]
        n_subset = _n_subset_features(self.max_features, n_features)
        self.n_subset_features_ = n_subset
        bootstrap = bool(self.bootstrap_features)

        def draw():
            return _draw_feature_weights(
                rng, self.n_estimators, n_features, n_subset, bootstrap
            )

        if self.resample == "once":
            W_once = draw()

            def draw_weights():
                return W_once
        else:
            draw_weights = draw

        # Centre the data on the column means, as scikit-learn's KMeans does,
        # so that near-equal distances are resolved the same way.
        mean = Xs.mean(axis=0)
        Xc = Xs - mean
        centers, labels, inertia, n_iter = _inner_lloyd(
            Xc, init_scaled - mean, draw_weights, self.max_iter, self.chunk_size
        )
        centers += mean
        n_found = np.unique(labels).size
        if n_found < self.n_clusters:
            warnings.warn(
                f"Number of distinct clusters ({n_found}) found smaller than "
                f"n_clusters ({self.n_clusters}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        return centers, labels, inertia, n_iter
