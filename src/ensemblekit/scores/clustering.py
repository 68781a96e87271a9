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

Everything here is numpy: the module imports neither scikit-learn nor scipy,
at import time or when a function runs, so scoring a model file needs only
numpy (issue 28). The indices that scikit-learn also offers (NMI, ARI,
silhouette, Davies-Bouldin, Calinski-Harabasz) are computed with the same
floating-point operations in the same order as scikit-learn 1.x, so the two
agree to the last bit on the data sizes where that is possible (see each
function's Notes); the distances of Dunn and connectivity are summed feature
by feature, as :func:`scipy.spatial.distance.cdist` sums them.
"""

from __future__ import annotations

import math

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.scores._common import _check_labels
from ensemblekit.units import unit_exponent


# --------------------------------------------------------------------------- contingency table
def _contingency(labels_true, labels_pred):
    """Sparse contingency table of two checked label vectors.

    Returns
    -------
    rows, cols : ndarray of shape (n_cells,), intp
        Class code and cluster code of each non-empty cell, in row-major
        order (by class, then by cluster; codes number the sorted distinct
        labels from 0).
    cells : ndarray of shape (n_cells,), int64
        Instances in each non-empty cell.
    row_sums, col_sums : ndarray, int64
        Instances per class and per cluster (every code occurs, so none is 0).
    """
    _, row_code = np.unique(labels_true, return_inverse=True)
    _, col_code = np.unique(labels_pred, return_inverse=True)
    row_code = row_code.reshape(-1).astype(np.int64)
    col_code = col_code.reshape(-1).astype(np.int64)
    n_cols = int(col_code.max()) + 1
    cell, cells = np.unique(row_code * n_cols + col_code, return_counts=True)
    rows, cols = np.divmod(cell, n_cols)
    return (rows.astype(np.intp), cols.astype(np.intp), cells.astype(np.int64),
            np.bincount(row_code).astype(np.int64), np.bincount(col_code).astype(np.int64))


def _entropy_nats(counts):
    """Shannon entropy (natural log) of a partition given its cluster sizes (all > 0)."""
    if counts.shape[0] == 1:
        return 0.0
    p = counts.astype(np.float64)
    total = p.sum()
    # log(p_i / N) as log(p_i) - log(N), which loses less precision
    return float(-np.sum((p / total) * (np.log(p) - math.log(total))))


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
    With ``n_ij`` the contingency table, ``a_i`` and ``b_j`` its row and
    column sums and ``N`` the number of instances,
    ``I = sum_ij (n_ij / N) log(N n_ij / (a_i b_j))`` over the non-empty cells,
    ``H(X) = -sum_i (a_i / N) log(a_i / N)``, and likewise ``H(Y)``.
    The value equals :func:`sklearn.metrics.normalized_mutual_info_score`
    with ``average_method="geometric"`` (the same operations in the same
    order, so the same bits); scikit-learn's *default* is the arithmetic mean
    ``(H(X) + H(Y)) / 2``, which gives different numbers. Terms of ``I``
    smaller than the machine epsilon are dropped and a negative sum (from
    rounding) is clipped to 0, as scikit-learn does.

    References
    ----------
    .. [1] A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse
       framework for combining multiple partitions", JMLR 3:583-617, 2002,
       Eq. (2) (with the sqrt of the product of entropies).
    """
    labels_true, labels_pred = _check_labels(labels_true, labels_pred, ("labels_true", "labels_pred"))
    rows, cols, cells, row_sums, col_sums = _contingency(labels_true, labels_pred)
    if row_sums.shape[0] == 1 and col_sums.shape[0] == 1:
        return 1.0  # neither labeling splits the data: they agree
    if row_sums.shape[0] == 1 or col_sums.shape[0] == 1:
        return 0.0  # one labeling has zero entropy, so I = 0
    n = float(labels_true.shape[0])
    share = cells / n
    # log(N n_ij / (a_i b_j)) = (log n_ij - log N) + (log N + log N - log(a_i b_j))
    log_ratio = -np.log(row_sums[rows] * col_sums[cols]) + math.log(n) + math.log(n)
    terms = share * (np.log(cells.astype(np.float64)) - math.log(n)) + share * log_ratio
    terms = np.where(np.abs(terms) < np.finfo(np.float64).eps, 0.0, terms)
    mutual_information = float(np.clip(terms.sum(), 0.0, None))
    if mutual_information == 0:
        return 0.0
    h_true, h_pred = _entropy_nats(row_sums), _entropy_nats(col_sums)
    return float(mutual_information / np.sqrt(h_true * h_pred))


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
    labels_true, labels_pred = _check_labels(labels_true, labels_pred, ("labels_true", "labels_pred"))
    _, cols, cells, _, col_sums = _contingency(labels_true, labels_pred)
    majority = np.zeros(col_sums.shape[0], dtype=np.int64)  # largest class count per cluster
    np.maximum.at(majority, cols, cells)
    return float(majority.sum() / labels_true.shape[0])


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
    From the pair counts of :func:`pair_counts` (``n11`` pairs together in
    both, ``n10``/``n01`` together in one only, ``n00`` apart in both),
    Hubert and Arabie's index is

    ``ARI = 2 (n11 n00 - n10 n01) / ((n11 + n10)(n10 + n00) + (n11 + n01)(n01 + n00))``,

    evaluated in exact integer arithmetic up to the one final division, so it
    equals :func:`sklearn.metrics.adjusted_rand_score` to the bit. It is 1
    when no pair is together in one partition only (identical partitions,
    or a single instance).

    References
    ----------
    .. [1] L. Hubert and P. Arabie, "Comparing partitions", Journal of
       Classification 2:193-218, 1985.
    """
    n11, together_true, together_pred, total = pair_counts(labels_true, labels_pred)
    n10 = together_true - n11  # together in labels_true only
    n01 = together_pred - n11
    n00 = total - n11 - n10 - n01
    if n10 == 0 and n01 == 0:
        return 1.0
    # scikit-learn counts ordered pairs (each count doubled); the factor 4 on
    # both sides scales two floats by a power of 2, which leaves the quotient's
    # bits unchanged
    return float(2.0 * (n11 * n00 - n10 * n01)
                 / ((n11 + n10) * (n10 + n00) + (n11 + n01) * (n01 + n00)))


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

    Only the non-empty cells of the table are built and visited, so the cost
    is O(n_samples log n_samples) time (sorting the labels) and O(n_samples)
    memory; no pair of instances is enumerated.

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
    labels_true, labels_pred = _check_labels(labels_true, labels_pred, ("labels_true", "labels_pred"))
    _, _, cells, rows, cols = _contingency(labels_true, labels_pred)

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

# The silhouette takes the inner products X X^T in one matrix product when they
# fit in this many bytes (n <= 2896 rows), in blocks of rows otherwise.
_GRAM_BYTES = 64 * 2**20

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
    # every internal index is a ratio of distances, or ranks them: in a power-of-two unit
    # (exact) data near the float limits gets the index of the same data in an ordinary
    # unit, where in its own its squared distances would overflow (see ensemblekit.units)
    unit = unit_exponent(X)
    if unit:
        X = np.ldexp(X, -unit)
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


def _check_number_of_labels(n_clusters, n_samples):
    """Refuse a partition the silhouette and the variance indices leave undefined.

    The message is scikit-learn's, word for word: it is the one these indices
    have always shown, and callers report it as it is.
    """
    if not 1 < n_clusters < n_samples:
        raise ValueError(f"Number of labels is {n_clusters}. "
                         "Valid values are 2 to n_samples - 1 (inclusive)")


def _squared_norms(X):
    """``||x_i||^2`` of each row (float64, shape (n_rows,))."""
    return np.einsum("ij,ij->i", X, X)


def _distances_from_products(products, row_norms, col_norms):
    """Euclidean distances ``sqrt(||x||^2 - 2 x.y + ||y||^2)`` from inner products.

    ``products`` holds ``x_i . y_j`` for a block of rows; the result is a new
    array of the same shape. Rounding can make the sum slightly negative for
    near-identical rows; it is clipped to 0 before the square root. This is
    the fast formula (one matrix product) scikit-learn uses for its Euclidean
    distances, with its order of operations.
    """
    d2 = -2 * products
    d2 += row_norms[:, None]
    d2 += col_norms[None, :]
    np.maximum(d2, 0, out=d2)
    return np.sqrt(d2, out=d2)


def _exact_distances(A, B):
    """Euclidean distances between the rows of ``A`` and ``B``, summed feature by feature.

    ``sqrt(sum_f (a_f - b_f)**2)`` with the squares added in feature order, as
    :func:`scipy.spatial.distance.cdist` adds them, so the two agree to the
    bit (ties between distances stay ties). Shape (len(A), len(B)).
    """
    total = np.zeros((A.shape[0], B.shape[0]))
    for f in range(A.shape[1]):
        diff = A[:, f, None] - B[None, :, f]
        diff *= diff
        total += diff
    return np.sqrt(total, out=total)


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
        In [-1, 1]; higher is better.

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, or a number of
        clusters outside 2 .. n_samples - 1 (``"Number of labels is 1. Valid
        values are 2 to n_samples - 1 (inclusive)"``, scikit-learn's words).

    Notes
    -----
    Distances are ``sqrt(max(0, ||x||^2 - 2 x.y + ||y||^2))`` from one matrix
    product, and each instance's distance sums per cluster are accumulated in
    instance order: the operations of
    :func:`sklearn.metrics.silhouette_score` (Euclidean), so the values agree
    with it to the bit up to 2896 rows (one product ``X X^T``, as
    scikit-learn's) and to about 1e-15 relative beyond (products by blocks of
    rows, whose last bits the BLAS may round differently). O(n^2 d) time;
    memory in blocks of about 32 MiB of distances (plus the 64 MiB product up
    to 2896 rows): under 150 MB for 20,000 rows.

    References
    ----------
    .. [1] P. J. Rousseeuw, "Silhouettes: a graphical aid to the
       interpretation and validation of cluster analysis", J. Comput. Appl.
       Math. 20:53-65, 1987.
    """
    X, codes, k = _check_internal(X, labels)
    n = X.shape[0]
    _check_number_of_labels(k, n)
    sizes = np.bincount(codes, minlength=k)
    norms = _squared_norms(X)
    # X @ X.T of the array with itself is the symmetric product scikit-learn
    # computes for data of this size; a block of rows goes through another
    # BLAS routine, whose last bits may differ
    gram = X @ X.T if 8 * n * n <= _GRAM_BYTES else None
    within = np.empty(n)   # sum of distances to the own cluster
    nearest = np.empty(n)  # smallest mean distance to another cluster
    step = _block_rows(n)
    for start in range(0, n, step):
        stop = min(start + step, n)
        m = stop - start
        local = np.arange(m)
        products = gram[start:stop] if gram is not None else X[start:stop] @ X.T
        dist = _distances_from_products(products, norms[start:stop], norms)
        dist[local, start + local] = 0.0  # an instance is at distance 0 from itself
        # per row and cluster, the distances summed in instance order
        bins = (local[:, None] * k + codes[None, :]).ravel()
        sums = np.bincount(bins, weights=dist.ravel(), minlength=m * k).reshape(m, k)
        own = codes[start:stop]
        within[start:stop] = sums[local, own]
        sums[local, own] = np.inf
        sums /= sizes
        nearest[start:stop] = sums.min(axis=1)
        del products, dist, bins, sums
    with np.errstate(divide="ignore", invalid="ignore"):
        a = within / (sizes - 1)[codes]  # 0/0 for a singleton cluster
        s = nearest - a
        s /= np.maximum(a, nearest)
    return float(np.mean(np.nan_to_num(s)))  # a singleton's s(i) is 0


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
        >= 0; *lower* is better. 0 when every ``s_i`` is about 0 (within 1e-8)
        or every pair of centroids coincides (within 1e-8); a pair of
        coinciding centroids is otherwise left out of the maximum.

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, or a number of
        clusters outside 2 .. n_samples - 1 (scikit-learn's message).

    Notes
    -----
    The Euclidean distances are ``sqrt(max(0, ||x||^2 - 2 x.y + ||y||^2))``,
    computed with the operations of
    :func:`sklearn.metrics.davies_bouldin_score`, which it equals to the
    bit. O(n d) memory beyond the data.

    References
    ----------
    .. [1] D. L. Davies and D. W. Bouldin, "A cluster separation measure",
       IEEE TPAMI 1(2):224-227, 1979.
    """
    X, codes, k = _check_internal(X, labels)
    _check_number_of_labels(k, X.shape[0])
    spread = np.zeros(k)  # s_i
    centroids = np.zeros((k, X.shape[1]))
    for c in range(k):
        members = X[np.flatnonzero(codes == c)]
        centroid = members.mean(axis=0)
        centroids[c] = centroid
        point = np.stack([centroid])
        spread[c] = _distances_from_products(members @ point.T, _squared_norms(members),
                                             _squared_norms(point)).mean()
    norms = _squared_norms(centroids)
    separation = _distances_from_products(centroids @ centroids.T, norms, norms)
    np.fill_diagonal(separation, 0.0)
    if np.all(np.isclose(spread, 0.0)) or np.all(np.isclose(separation, 0.0)):
        return 0.0
    separation[separation == 0] = np.inf
    ratios = (spread[:, None] + spread) / separation
    return float(np.mean(ratios.max(axis=1)))


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
        >= 0; higher is better. 1.0 when ``W = 0`` (every cluster is a single
        point repeated), as scikit-learn.

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``X``, mismatched lengths, or a number of
        clusters outside 2 .. n_samples - 1 (scikit-learn's message).

    Notes
    -----
    ``B = sum_c n_c ||m_c - m||^2`` and ``W = sum_c sum_{i in c} ||x_i - m_c||^2``
    with ``m_c`` the mean of cluster ``c`` and ``m`` the overall mean,
    accumulated cluster by cluster in label order with the operations of
    :func:`sklearn.metrics.calinski_harabasz_score`, which it equals to the
    bit. O(n d) memory beyond the data.

    References
    ----------
    .. [1] T. Calinski and J. Harabasz, "A dendrite method for cluster
       analysis", Communications in Statistics 3(1):1-27, 1974.
    """
    X, codes, k = _check_internal(X, labels)
    n = X.shape[0]
    _check_number_of_labels(k, n)
    between, within = 0.0, 0.0
    mean = np.mean(X, axis=0)
    for c in range(k):
        members = X[codes == c]
        centre = np.mean(members, axis=0)
        between += members.shape[0] * np.sum((centre - mean) ** 2)
        within += np.sum((members - centre) ** 2)
    if within == 0.0:
        return 1.0
    return float(between * (n - k) / (within * (k - 1.0)))


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
    Exact distances ``sqrt(sum (x - y)**2)``, summed feature by feature as
    :func:`scipy.spatial.distance.cdist` sums them (the same bits), are
    computed block by block (about 32 MiB per block): O(n^2 d) time,
    O(n) memory beyond the data; the n x n matrix is never held.

    References
    ----------
    .. [1] J. C. Dunn, "Well-separated clusters and optimal fuzzy
       partitions", Journal of Cybernetics 4(1):95-104, 1974.
    .. [2] G. Brock, V. Pihur, S. Datta and S. Datta, "clValid: an R package
       for cluster validation", J. Stat. Software 25(4), 2008.
    """
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
        block = _exact_distances(Xo[rows], Xo)
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
    Exact distances, summed feature by feature as
    :func:`scipy.spatial.distance.cdist` sums them (so ties are the same),
    are computed block by block (about 32 MiB per block): O(n^2 d) time,
    O(n) memory beyond the data.

    References
    ----------
    .. [1] J. Handl, J. Knowles and D. B. Kell, "Computational cluster
       validation in post-genomic data analysis", Bioinformatics
       21(15):3201-3212, 2005.
    .. [2] G. Brock, V. Pihur, S. Datta and S. Datta, "clValid: an R package
       for cluster validation", J. Stat. Software 25(4), 2008.
    """
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 1:
        raise InputError(f"n_neighbors must be an integer >= 1, got {n_neighbors!r}")
    X, codes, _ = _check_internal(X, labels)
    n = X.shape[0]
    L = min(int(n_neighbors), n - 1)
    weights = 1.0 / np.arange(1, L + 1)
    total = 0.0
    step = _block_rows(n)
    for start in range(0, n, step):
        block = _exact_distances(X[start:start + step], X)
        # the (L+1)-th smallest distance of each row: every entry at or below
        # it is a candidate for the first L+1 places of the stable order
        kth = np.partition(block, L, axis=1)[:, L]
        for r in range(block.shape[0]):
            row = block[r]
            cand = np.flatnonzero(row <= kth[r])  # ascending instance order
            ranked = cand[np.argsort(row[cand], kind="stable")][1:L + 1]
            total += float(weights[codes[ranked] != codes[start + r]].sum())
    return float(total)
