"""Clustering indices: external (against the classes), pair-counting, and internal.

* *external* indices compare two 1-D label arrays of the same length (class
  labels against cluster ids) and return a float. Labels are compared as
  values: class codes, cluster ids or strings all work, and cluster ids need
  not match class codes (the indices do not care how clusters are numbered).
  The pair-counting indices (Rand, Jaccard, Fowlkes-Mallows, Wallace) are
  computed from the contingency table, in time linear in the number of
  instances;
* *internal* indices judge a partition by the data alone: they take the data
  matrix ``X`` (n_samples, n_features) and the cluster labels, and use
  Euclidean distances between rows.

scikit-learn and scipy are imported inside the functions that use them, so
importing this module stays cheap.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.scores._common import _check_labels


def nmi(labels_true, labels_pred):
    """Normalised mutual information with the geometric-mean normalisation.

    ``NMI(X, Y) = I(X; Y) / sqrt(H(X) * H(Y))``, Strehl & Ghosh's definition,
    computed from the contingency table of the two labelings. The logarithm
    base cancels out.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition (usually the class labels).
    labels_pred : array-like of shape (n_samples,)
        Partition to score (cluster ids; any integers or other labels).

    Returns
    -------
    float
        In [0, 1]; 1 when the two partitions are identical up to renaming the
        clusters, 0 when they are independent. It is symmetric in its
        arguments. When both partitions put every instance in one cluster the
        value is 1 (they agree); when only one of them does, it is 0.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    Notes
    -----
    Equals :func:`sklearn.metrics.normalized_mutual_info_score` with
    ``average_method="geometric"``; scikit-learn's *default* is the
    arithmetic mean, which gives different numbers.

    References
    ----------
    .. [1] A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse
       framework for combining multiple partitions", JMLR 3:583-617, 2002,
       Eq. (2) (with the sqrt of the product of entropies).
    """
    from sklearn.metrics import normalized_mutual_info_score

    labels_true, labels_pred = _check_labels(labels_true, labels_pred, ("labels_true", "labels_pred"))
    return float(normalized_mutual_info_score(labels_true, labels_pred, average_method="geometric"))


def purity(labels_true, labels_pred):
    """Cluster purity: share of instances in their cluster's majority class.

    ``purity = (1/n) * sum_k max_c n_kc`` where ``n_kc`` is the number of
    instances of class ``c`` in cluster ``k``.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        True class labels.
    labels_pred : array-like of shape (n_samples,)
        Cluster ids.

    Returns
    -------
    float
        In (0, 1]; 1 when every cluster holds a single class. It is *not*
        symmetric, and it rewards many small clusters (n singleton clusters
        score 1), so report it together with NMI or ARI.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    References
    ----------
    .. [1] Y. Zhao and G. Karypis, "Criterion functions for document
       clustering", University of Minnesota TR 01-40, 2001 (purity).
    .. [2] C. D. Manning, P. Raghavan and H. Schuetze, *Introduction to
       Information Retrieval*, 2008, Sec. 16.3.
    """
    from sklearn.metrics.cluster import contingency_matrix

    labels_true, labels_pred = _check_labels(labels_true, labels_pred, ("labels_true", "labels_pred"))
    table = contingency_matrix(labels_true, labels_pred)  # rows: classes, columns: clusters
    return float(table.max(axis=0).sum() / labels_true.shape[0])


def adjusted_rand(labels_true, labels_pred):
    """Adjusted Rand index: pair agreement corrected for chance.

    ``ARI = (RI - E[RI]) / (max RI - E[RI])`` under the permutation model,
    computed from the pair counts of the contingency table.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition.
    labels_pred : array-like of shape (n_samples,)
        Partition to score.

    Returns
    -------
    float
        At most 1 (identical partitions up to renaming); about 0 for random
        labelings; can be negative (worse than chance). Symmetric.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    Notes
    -----
    Equals :func:`sklearn.metrics.adjusted_rand_score`.

    References
    ----------
    .. [1] L. Hubert and P. Arabie, "Comparing partitions", Journal of
       Classification 2:193-218, 1985.
    """
    from sklearn.metrics import adjusted_rand_score

    labels_true, labels_pred = _check_labels(labels_true, labels_pred, ("labels_true", "labels_pred"))
    return float(adjusted_rand_score(labels_true, labels_pred))


# --------------------------------------------------------------------------- pair counting
def pair_counts(labels_true, labels_pred):
    """Pair counts of two partitions, from their contingency table.

    A pair is an unordered pair of distinct instances. With ``n_ij`` the
    contingency table (rows: ``labels_true``, columns: ``labels_pred``):

    * ``n11 = sum_ij C(n_ij, 2)``: pairs together in both partitions;
    * ``together_true = sum_i C(n_i., 2) = n11 + n01``: pairs together in
      ``labels_true``;
    * ``together_pred = sum_j C(n_.j, 2) = n11 + n10``: pairs together in
      ``labels_pred``;
    * ``total = C(n, 2)``.

    Only the non-zero cells of the table are visited, so the cost is
    O(n_samples) time and O(number of non-empty cells) memory; no pair of
    instances is enumerated.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition (usually the classes).
    labels_pred : array-like of shape (n_samples,)
        Partition to score (the clustering).

    Returns
    -------
    n11, together_true, together_pred, total : int
        Exact integer counts (Python ints).

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    Notes
    -----
    scikit-learn's :func:`sklearn.metrics.cluster.pair_confusion_matrix`
    counts *ordered* pairs, i.e. twice these numbers.

    References
    ----------
    .. [1] L. Hubert and P. Arabie, "Comparing partitions", Journal of
       Classification 2:193-218, 1985 (pair counts from the contingency table).
    """
    from sklearn.metrics.cluster import contingency_matrix

    labels_true, labels_pred = _check_labels(labels_true, labels_pred, ("labels_true", "labels_pred"))
    table = contingency_matrix(labels_true, labels_pred, sparse=True).tocsr()
    cells = table.data.astype(np.int64)
    rows = np.asarray(table.sum(axis=1), dtype=np.int64).ravel()
    cols = np.asarray(table.sum(axis=0), dtype=np.int64).ravel()

    def pairs(counts):
        return int((counts * (counts - 1) // 2).sum())

    n = int(labels_true.shape[0])
    return pairs(cells), pairs(rows), pairs(cols), n * (n - 1) // 2


def rand(labels_true, labels_pred):
    """Rand index: share of instance pairs on which two partitions agree.

    ``R = (n11 + n00) / C(n, 2)``, where ``n11`` counts pairs together in both
    partitions and ``n00`` pairs apart in both (see :func:`pair_counts`).

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition.
    labels_pred : array-like of shape (n_samples,)
        Partition to score.

    Returns
    -------
    float
        In [0, 1]; 1 for identical partitions (up to renaming). Symmetric.
        With a single instance (no pair) the value is 1. Same value as
        :func:`sklearn.metrics.rand_score`.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    References
    ----------
    .. [1] W. M. Rand, "Objective criteria for the evaluation of clustering
       methods", JASA 66(336):846-850, 1971.
    """
    n11, together_true, together_pred, total = pair_counts(labels_true, labels_pred)
    if total == 0:
        return 1.0
    n00 = total - together_true - together_pred + n11
    return float((n11 + n00) / total)


def jaccard(labels_true, labels_pred):
    """Jaccard index of two partitions over instance pairs.

    ``J = n11 / (n11 + n10 + n01)``: pairs together in both partitions over
    pairs together in at least one (see :func:`pair_counts`).

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition.
    labels_pred : array-like of shape (n_samples,)
        Partition to score.

    Returns
    -------
    float
        In [0, 1]; 1 for identical partitions with at least one pair
        together. Symmetric. Defined as 0 when ``n11 = 0`` (also when no
        pair is together in either partition), as the other pair indices here.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    References
    ----------
    .. [1] P. Jaccard, "Nouvelles recherches sur la distribution florale",
       Bull. Soc. Vaud. Sci. Nat. 44:223-270, 1908; as a partition index in
       A. Ben-Hur, A. Elisseeff and I. Guyon, "A stability based method for
       discovering structure in clustered data", PSB 2002.
    """
    n11, together_true, together_pred, _ = pair_counts(labels_true, labels_pred)
    if n11 == 0:
        return 0.0
    return float(n11 / (together_true + together_pred - n11))


def fowlkes_mallows(labels_true, labels_pred):
    """Fowlkes-Mallows index: geometric mean of the two Wallace indices.

    ``FM = n11 / sqrt((n11 + n10) (n11 + n01))`` (see :func:`pair_counts`).

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition.
    labels_pred : array-like of shape (n_samples,)
        Partition to score.

    Returns
    -------
    float
        In [0, 1]; 1 for identical partitions with at least one pair
        together; 0 when ``n11 = 0``. Symmetric. Same value as
        :func:`sklearn.metrics.fowlkes_mallows_score`.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    References
    ----------
    .. [1] E. B. Fowlkes and C. L. Mallows, "A method for comparing two
       hierarchical clusterings", JASA 78(383):553-569, 1983.
    """
    n11, together_true, together_pred, _ = pair_counts(labels_true, labels_pred)
    if n11 == 0:
        return 0.0
    return float(n11 / np.sqrt(float(together_true) * float(together_pred)))


def wallace_10(labels_true, labels_pred):
    """Wallace index W10: of the pairs the clustering puts together, the share the classes also do.

    ``W10 = n11 / (n11 + n10)``, with ``n11 + n10`` the pairs together in
    ``labels_pred`` (the clustering), as R's ``profdpm::pci(clustering,
    classes)``. It is the probability that a pair placed in one cluster
    also shares a class (a precision over pairs).

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition (the classes).
    labels_pred : array-like of shape (n_samples,)
        The clustering.

    Returns
    -------
    float
        In [0, 1]; 0 when ``n11 = 0``. Not symmetric:
        ``wallace_10(a, b) == wallace_01(b, a)``.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    References
    ----------
    .. [1] D. L. Wallace, "Comment on 'A method for comparing two
       hierarchical clusterings'", JASA 78(383):569-576, 1983.
    """
    n11, _, together_pred, _ = pair_counts(labels_true, labels_pred)
    return 0.0 if n11 == 0 else float(n11 / together_pred)


def wallace_01(labels_true, labels_pred):
    """Wallace index W01: of the pairs the classes put together, the share the clustering also does.

    ``W01 = n11 / (n11 + n01)``, with ``n11 + n01`` the pairs together in
    ``labels_true`` (the classes), as R's ``profdpm::pci(clustering,
    classes)``. It is a recall over pairs.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference partition (the classes).
    labels_pred : array-like of shape (n_samples,)
        The clustering.

    Returns
    -------
    float
        In [0, 1]; 0 when ``n11 = 0``. Not symmetric.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.

    References
    ----------
    .. [1] D. L. Wallace, "Comment on 'A method for comparing two
       hierarchical clusterings'", JASA 78(383):569-576, 1983.
    """
    n11, together_true, _, _ = pair_counts(labels_true, labels_pred)
    return 0.0 if n11 == 0 else float(n11 / together_true)


# --------------------------------------------------------------------------- internal indices
# Rows of a block of the pairwise distance matrix: blocks of about 32 MiB.
_BLOCK_BYTES = 32 * 2**20

#: Neighbours per instance in :func:`connectivity` (clValid's default ``neighbSize``).
CONNECTIVITY_NEIGHBOURS = 10


def _check_internal(X, labels, min_clusters=1):
    """Validate ``X`` and ``labels`` for an internal index; return (X, codes, n_clusters)."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise InputError(f"X must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise InputError(f"X must be numeric, got dtype {X.dtype}")
    X = X.astype(np.float64, copy=False)
    if not np.isfinite(X).all():
        raise InputError("X contains NaN or infinite values; impute or drop them first")
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise InputError(f"labels must be a 1-D array, got shape {labels.shape}")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise InputError("labels contain missing values (NaN)")
    if labels.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but labels has {labels.shape[0]} entries")
    if X.shape[0] < 2:
        raise InputError(f"an internal index needs at least 2 instances, got {X.shape[0]}")
    _, codes = np.unique(labels, return_inverse=True)
    n_clusters = int(codes.max()) + 1
    if n_clusters < min_clusters:
        raise InputError(f"the index needs at least {min_clusters} clusters, got {n_clusters}")
    return X, codes.astype(np.intp), n_clusters


def _block_rows(n_samples):
    return max(1, _BLOCK_BYTES // (8 * max(1, n_samples)))


def silhouette(X, labels):
    """Mean silhouette width (Euclidean distance).

    For instance ``i`` in cluster ``A``: ``a(i)`` is its mean distance to the
    other members of ``A``, ``b(i)`` the smallest mean distance to the members
    of another cluster, and ``s(i) = (b - a) / max(a, b)`` (0 for a singleton
    cluster). The index is the mean of ``s(i)`` over all instances.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data that were clustered (numeric, finite).
    labels : array-like of shape (n_samples,)
        Cluster of each instance.

    Returns
    -------
    float
        In [-1, 1]; higher is better. Same as
        :func:`sklearn.metrics.silhouette_score` (Euclidean), which this
        calls (O(n^2) time, memory in blocks).

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, or a number of
        clusters outside 2 .. n_samples - 1.

    References
    ----------
    .. [1] P. J. Rousseeuw, "Silhouettes: a graphical aid to the
       interpretation and validation of cluster analysis", J. Comput. Appl.
       Math. 20:53-65, 1987.
    """
    from sklearn.metrics import silhouette_score

    X, codes, _ = _check_internal(X, labels)
    return float(silhouette_score(X, codes, metric="euclidean"))


def davies_bouldin(X, labels):
    """Davies-Bouldin index: mean over clusters of the worst similarity ratio.

    ``DB = (1/k) sum_i max_{j != i} (s_i + s_j) / d(c_i, c_j)``, with ``s_i`` the
    mean Euclidean distance of cluster ``i``'s members to its centroid ``c_i``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data that were clustered (numeric, finite).
    labels : array-like of shape (n_samples,)
        Cluster of each instance.

    Returns
    -------
    float
        >= 0; *lower* is better. Same as
        :func:`sklearn.metrics.davies_bouldin_score`, which this calls.

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, or a number of
        clusters outside 2 .. n_samples - 1.

    References
    ----------
    .. [1] D. L. Davies and D. W. Bouldin, "A cluster separation measure",
       IEEE TPAMI 1(2):224-227, 1979.
    """
    from sklearn.metrics import davies_bouldin_score

    X, codes, _ = _check_internal(X, labels)
    return float(davies_bouldin_score(X, codes))


def calinski_harabasz(X, labels):
    """Calinski-Harabasz index (variance ratio criterion).

    ``CH = [B / (k - 1)] / [W / (n - k)]`` with ``B`` and ``W`` the between-
    and within-cluster sums of squares.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data that were clustered (numeric, finite).
    labels : array-like of shape (n_samples,)
        Cluster of each instance.

    Returns
    -------
    float
        >= 0; higher is better. Same as
        :func:`sklearn.metrics.calinski_harabasz_score`, which this calls.

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, or a number of
        clusters outside 2 .. n_samples - 1.

    References
    ----------
    .. [1] T. Calinski and J. Harabasz, "A dendrite method for cluster
       analysis", Communications in Statistics 3(1):1-27, 1974.
    """
    from sklearn.metrics import calinski_harabasz_score

    X, codes, _ = _check_internal(X, labels)
    return float(calinski_harabasz_score(X, codes))


def dunn(X, labels):
    """Dunn index, as R's ``clValid::dunn``.

    ``D = min_{A != B} min_{i in A, j in B} d(i, j) / max_C max_{i, j in C} d(i, j)``:
    the smallest single-link distance between two clusters over the largest
    cluster diameter, with Euclidean distances ``d``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data that were clustered (numeric, finite).
    labels : array-like of shape (n_samples,)
        Cluster of each instance.

    Returns
    -------
    float
        >= 0; higher is better. ``inf`` when every cluster has diameter 0
        (e.g. all singletons), as in clValid.

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, or fewer than
        2 clusters.

    Notes
    -----
    Exact distances ``sqrt(sum (x - y)**2)`` (:func:`scipy.spatial.distance.cdist`)
    are computed block by block (about 32 MiB per block): O(n^2 d) time,
    O(n) memory beyond the data; the n x n matrix is never held.

    References
    ----------
    .. [1] J. C. Dunn, "Well-separated clusters and optimal fuzzy
       partitions", Journal of Cybernetics 4(1):95-104, 1974.
    .. [2] G. Brock, V. Pihur, S. Datta and S. Datta, "clValid: an R package
       for cluster validation", J. Stat. Software 25(4), 2008.
    """
    from scipy.spatial.distance import cdist

    X, codes, k = _check_internal(X, labels, min_clusters=2)
    order = np.argsort(codes, kind="stable")
    Xo = X[order]
    co = codes[order]
    starts = np.searchsorted(co, np.arange(k))
    inter = np.full((k, k), np.inf)
    diameter = np.zeros(k)
    step = _block_rows(X.shape[0])
    for start in range(0, X.shape[0], step):
        rows = slice(start, start + step)
        block = cdist(Xo[rows], Xo)
        c = co[rows]
        nearest = np.minimum.reduceat(block, starts, axis=1)  # (rows, k)
        farthest = np.maximum.reduceat(block, starts, axis=1)
        np.minimum.at(inter, c, nearest)
        np.maximum.at(diameter, c, farthest[np.arange(c.shape[0]), c])
    np.fill_diagonal(inter, np.inf)
    widest = diameter.max()
    if widest == 0:
        return float("inf")
    return float(inter.min() / widest)


def connectivity(X, labels, n_neighbors=CONNECTIVITY_NEIGHBOURS):
    """Connectivity of a clustering (Handl et al. 2005), as R's ``clValid::connectivity``.

    ``Conn = sum_i sum_{j=1..L} x(i, nn_j(i)) / j``, where ``nn_j(i)`` is the
    ``j``-th nearest neighbour of instance ``i`` (Euclidean distance) and
    ``x = 1`` when it lies in another cluster than ``i``, else 0.

    Neighbours are ranked as clValid ranks them: each row of the distance
    matrix is sorted stably (equal distances in instance order) and the first
    entry of the order is skipped (it is ``i`` itself unless an exact
    duplicate of ``i`` comes earlier in the data, in which case the skipped
    entry is that duplicate and ``i`` counts as its own neighbour).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data that were clustered (numeric, finite).
    labels : array-like of shape (n_samples,)
        Cluster of each instance.
    n_neighbors : int, default=10
        ``L``, neighbours per instance (clValid's ``neighbSize``), >= 1;
        at most ``n_samples - 1`` are used.

    Returns
    -------
    float
        In [0, n * H_L] with ``H_L = 1 + 1/2 + ... + 1/L``; *lower* is better;
        0 when no instance has a neighbour in another cluster.

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, fewer than 2
        instances, or ``n_neighbors < 1``.

    Notes
    -----
    Exact distances are computed block by block (about 32 MiB per block):
    O(n^2 d) time, O(n) memory beyond the data.

    References
    ----------
    .. [1] J. Handl, J. Knowles and D. B. Kell, "Computational cluster
       validation in post-genomic data analysis", Bioinformatics
       21(15):3201-3212, 2005.
    .. [2] G. Brock, V. Pihur, S. Datta and S. Datta, "clValid: an R package
       for cluster validation", J. Stat. Software 25(4), 2008.
    """
    from scipy.spatial.distance import cdist

    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 1:
        raise InputError(f"n_neighbors must be an integer >= 1, got {n_neighbors!r}")
    X, codes, _ = _check_internal(X, labels)
    n = X.shape[0]
    L = min(int(n_neighbors), n - 1)
    weights = 1.0 / np.arange(1, L + 1)
    total = 0.0
    step = _block_rows(n)
    for start in range(0, n, step):
        block = cdist(X[start:start + step], X)
        # the (L+1)-th smallest distance of each row: every entry at or below
        # it is a candidate for the first L+1 places of the stable order
        kth = np.partition(block, L, axis=1)[:, L]
        for r in range(block.shape[0]):
            row = block[r]
            cand = np.flatnonzero(row <= kth[r])  # ascending instance order
            ranked = cand[np.argsort(row[cand], kind="stable")][1:L + 1]
            total += float(weights[codes[ranked] != codes[start + r]].sum())
    return float(total)
