"""Scores for predictions and clusterings, and the registry of metric names.

Three kinds of score live here:

* *external* scores compare two 1-D label arrays of the same length (class
  labels against predictions or cluster ids) and return a float. Labels are
  compared as values: class codes, cluster ids or strings all work, and
  cluster ids need not match class codes (the clustering indices do not care
  how clusters are numbered). The pair-counting indices (Rand, Jaccard,
  Fowlkes-Mallows, Wallace) are computed from the contingency table, in time
  linear in the number of instances;
* *regression* scores compare two 1-D arrays of numbers of the same length
  (the true target values against the predicted ones) and return a float;
* *internal* clustering indices judge a partition by the data alone: they take
  the data matrix ``X`` (n_samples, n_features) and the cluster labels, and
  use Euclidean distances between rows.

scikit-learn is imported inside the functions that use it, so importing this
module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Metric",
    "METRICS",
    "Outcome",
    "REPORT_METRICS",
    "EXTERNAL_INDICES",
    "INTERNAL_INDICES",
    "accuracy",
    "correlation",
    "rmse",
    "mae",
    "r2",
    "nmi",
    "purity",
    "adjusted_rand",
    "rand",
    "jaccard",
    "fowlkes_mallows",
    "wallace_10",
    "wallace_01",
    "pair_counts",
    "silhouette",
    "dunn",
    "connectivity",
    "davies_bouldin",
    "calinski_harabasz",
    "clustering_indices",
]


def _check_labels(a, b, names):
    """Validate a pair of label vectors; return them as 1-D arrays."""
    first, second = names
    a = np.asarray(a)
    b = np.asarray(b)
    for arr, name in ((a, first), (b, second)):
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array of labels, got shape {arr.shape}")
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise ValueError(f"{name} contains missing values (NaN); drop those rows first")
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{first} and {second} have different lengths ({a.shape[0]} and {b.shape[0]})"
        )
    if a.shape[0] == 0:
        raise ValueError(f"{first} and {second} are empty; a score needs at least one label")
    return a, b


def accuracy(y_true, y_pred):
    """Fraction of instances whose predicted class equals the true class.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True class labels (e.g. integer codes of a nominal class).
    y_pred : array-like of shape (n_samples,)
        Predicted class labels, in the same coding as ``y_true``.

    Returns
    -------
    float
        ``(1/n) * sum_i [y_true[i] == y_pred[i]]``, in [0, 1]; 1 is best.
        Same value as :func:`sklearn.metrics.accuracy_score`.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.
    """
    y_true, y_pred = _check_labels(y_true, y_pred, ("y_true", "y_pred"))
    return float(np.mean(y_true == y_pred))


# --------------------------------------------------------------------------- regression
def _check_values(a, b, names):
    """Validate a pair of target vectors; return them as 1-D float64 arrays."""
    first, second = names
    out = []
    for arr, name in ((a, first), (b, second)):
        try:
            arr = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers") from None
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array of numbers, got shape {arr.shape}")
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains missing values (NaN); drop those rows first")
        if np.isinf(arr).any():
            raise ValueError(f"{name} contains an infinite value")
        out.append(arr)
    a, b = out
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{first} and {second} have different lengths ({a.shape[0]} and {b.shape[0]})"
        )
    if a.shape[0] == 0:
        raise ValueError(f"{first} and {second} are empty; a score needs at least one value")
    return a, b


def correlation(y_true, y_pred):
    """Pearson correlation between the true and the predicted target values.

    ``r = sum_i (t_i - mean t)(p_i - mean p) / sqrt(sum_i (t_i - mean t)^2 *
    sum_i (p_i - mean p)^2)``. The rule-ensembles paper (Akdemir & Jannink,
    Sect. 4, Figs. 1 and 8) reports it as the "accuracy" of a regression
    model: the cross-validated correlation of true and predicted responses.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        In [-1, 1]; higher is better; symmetric in its arguments. When either
        vector is constant (all its values equal, which includes a single
        instance) the correlation is undefined and the value is 0.0, without
        a warning: a constant prediction carries no information about the
        order of the targets. Otherwise equals the statistic of
        :func:`scipy.stats.pearsonr`.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.

    References
    ----------
    .. [1] D. Akdemir and J.-L. Jannink, "Ensemble learning with trees and
       rules: supervised, semi-supervised, unsupervised", Intelligent Data
       Analysis 18(5), 2014.
    """
    t, p = _check_values(y_true, y_pred, ("y_true", "y_pred"))
    if np.all(t == t[0]) or np.all(p == p[0]):
        return 0.0
    dt = t - t.mean()
    dp = p - p.mean()
    norm_t = np.linalg.norm(dt)
    norm_p = np.linalg.norm(dp)
    if norm_t == 0.0 or norm_p == 0.0:  # values too close to be told apart after centring
        return 0.0
    r = float(np.dot(dt / norm_t, dp / norm_p))
    return min(1.0, max(-1.0, r))


def rmse(y_true, y_pred):
    """Root mean squared error of the predictions.

    ``RMSE = sqrt((1/n) * sum_i (t_i - p_i)^2)``, in the target's unit.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        >= 0; *lower* is better; 0 for perfect predictions. Same value as
        ``sqrt(sklearn.metrics.mean_squared_error(y_true, y_pred))``.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.
    """
    t, p = _check_values(y_true, y_pred, ("y_true", "y_pred"))
    return float(np.sqrt(np.mean((t - p) ** 2)))


def mae(y_true, y_pred):
    """Mean absolute error of the predictions.

    ``MAE = (1/n) * sum_i |t_i - p_i|``, in the target's unit.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        >= 0; *lower* is better; 0 for perfect predictions. Same value as
        :func:`sklearn.metrics.mean_absolute_error`.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.
    """
    t, p = _check_values(y_true, y_pred, ("y_true", "y_pred"))
    return float(np.mean(np.abs(t - p)))


def r2(y_true, y_pred):
    """Coefficient of determination R² of the predictions.

    ``R² = 1 - sum_i (t_i - p_i)^2 / sum_i (t_i - mean t)^2``: the share of the
    targets' variance around their own mean that the predictions explain.
    Not symmetric: ``y_true`` gives the mean and the total sum of squares.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        At most 1; higher is better; 1 for perfect predictions, 0 for
        predicting the mean of ``y_true``, negative for predictions worse than
        that. Same value as :func:`sklearn.metrics.r2_score`. When ``y_true``
        is constant (all values equal, which includes a single instance) the
        ratio is undefined; the value is then 1.0 for perfect predictions and
        0.0 otherwise, scikit-learn's ``force_finite`` convention. Here
        "constant" means equal values; scikit-learn instead tests the computed
        total sum of squares, so for values such as ``[0.1, 0.1, 0.1]`` (whose
        floating-point mean is not exactly 0.1) it returns a huge negative
        number, and for a single instance NaN with a warning.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.
    """
    t, p = _check_values(y_true, y_pred, ("y_true", "y_pred"))
    residual = float(np.sum((t - p) ** 2))
    if np.all(t == t[0]):
        return 1.0 if residual == 0.0 else 0.0
    total = float(np.sum((t - t.mean()) ** 2))
    return 1.0 - residual / total


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
        raise ValueError(f"X must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be numeric, got dtype {X.dtype}")
    X = X.astype(np.float64, copy=False)
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values; impute or drop them first")
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a 1-D array, got shape {labels.shape}")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("labels contain missing values (NaN)")
    if labels.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but labels has {labels.shape[0]} entries")
    if X.shape[0] < 2:
        raise ValueError(f"an internal index needs at least 2 instances, got {X.shape[0]}")
    _, codes = np.unique(labels, return_inverse=True)
    n_clusters = int(codes.max()) + 1
    if n_clusters < min_clusters:
        raise ValueError(f"the index needs at least {min_clusters} clusters, got {n_clusters}")
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
        raise ValueError(f"n_neighbors must be an integer >= 1, got {n_neighbors!r}")
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


@dataclass(frozen=True)
class Outcome:
    """What the probability-based supervised scores are computed from.

    Attributes
    ----------
    truth : ndarray of shape (n_samples,)
        Class codes in ``0 .. n_classes - 1``, or the true target values.
    predicted : ndarray of shape (n_samples,)
        Predicted class codes (the first arg-max of ``proba``), or values.
    proba : ndarray of shape (n_samples, n_classes) or None
        Class probabilities, one column per declared class; None for a
        regression.
    prior : ndarray of shape (n_classes,), float or None
        What the relative errors are measured against: the training set's
        class counts (classification; Weka smooths them itself, see
        :mod:`ensemblekit.evaluation`) or the training targets' mean
        (regression). None when unknown (a model file that does not record it).
    """

    truth: np.ndarray
    predicted: np.ndarray
    proba: np.ndarray | None = None
    prior: np.ndarray | float | None = None


@dataclass(frozen=True)
class Metric:
    """A named score with what the experiment code needs to know about it.

    Parameters
    ----------
    name : str
        Registry key, as given on the command line (``--metric nmi``).
    func : callable
        External label scores (``inputs="labels"``): ``func(truth, predicted)
        -> float``; ``truth`` is the class labels (or the numeric targets),
        ``predicted`` the predicted classes, cluster ids (or predicted
        values), both of shape (n_samples,). Scores of class probabilities or
        relative errors (``inputs="outcome"``): ``func(outcome) -> float``
        with an :class:`Outcome`. Internal indices (``internal=True``):
        ``func(X, labels) -> float`` with ``X`` the clustered data, shape
        (n_samples, n_features).
    task : str or tuple of str
        The task(s) whose predictions the score judges: "classification",
        "clustering" or "regression". Weka's error measures (MAE, RMSE, RAE,
        RRSE) serve classification and regression under one name.
    greater_is_better : bool, default=True
        Direction used for ranking algorithms.
    label : str, default=""
        Column heading for reports; the name when empty.
    internal : bool, default=False
        True for an internal clustering index, which needs the data and not
        the classes.
    inputs : {"labels", "outcome"}, default="labels"
        What ``func`` takes (see ``func``).
    needs_prior : bool, default=False
        True for the relative errors, which need the training set's class
        counts or target mean.
    """

    name: str
    func: Callable[..., float]
    task: str | tuple[str, ...]
    greater_is_better: bool = True
    label: str = ""
    internal: bool = False
    inputs: str = "labels"
    needs_prior: bool = False

    def applies_to(self, task: str) -> bool:
        """Whether the score judges predictions of ``task``."""
        return task == self.task if isinstance(self.task, str) else task in self.task

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks the score applies to, as a tuple."""
        return (self.task,) if isinstance(self.task, str) else tuple(self.task)

    @property
    def needs_proba(self) -> bool:
        """True when the score needs class probabilities (or, for a regression, the
        training targets' mean) and not only the predicted labels."""
        return self.inputs == "outcome"

    def __call__(self, truth, predicted) -> float:
        """Compute a label score; same as ``self.func(truth, predicted)``.

        Raises
        ------
        TypeError
            For an internal index (use :meth:`score` with ``X``) or a score
            of probabilities (use :meth:`score` with ``proba``).
        """
        if self.internal:
            raise TypeError(f"{self.name} is an internal index: call score(labels, X=...)")
        if self.inputs != "labels":
            raise TypeError(f"{self.name} needs class probabilities: call score(predicted, "
                            "truth=..., proba=..., prior=...)")
        return self.func(truth, predicted)

    def score(self, predicted, *, truth=None, X=None, proba=None, prior=None) -> float:
        """Compute the score from what it needs: the classes, probabilities or data.

        Parameters
        ----------
        predicted : array-like of shape (n_samples,)
            Predicted classes, values or cluster ids.
        truth : array-like of shape (n_samples,), optional
            Classes or targets; required by every external score.
        X : array-like of shape (n_samples, n_features), optional
            Clustered data; required by internal indices.
        proba : array-like of shape (n_samples, n_classes), optional
            Class probabilities; required by the probability scores of a
            classification (None for a regression).
        prior : array-like of shape (n_classes,) or float, optional
            Training class counts, or the training targets' mean; required by
            the relative errors.

        Raises
        ------
        ValueError
            If the input the score needs is missing, or from the score itself.
        """
        if self.internal:
            if X is None:
                raise ValueError(f"{self.name} is an internal index and needs the data X")
            return float(self.func(X, predicted))
        if truth is None:
            raise ValueError(f"{self.name} compares with the classes and needs them")
        if self.inputs == "labels":
            return float(self.func(truth, predicted))
        if self.needs_prior and prior is None:
            raise ValueError(f"{self.name} is relative to the training set's class counts or "
                             "mean, which are not known here")
        return float(self.func(Outcome(np.asarray(truth), np.asarray(predicted),
                                       None if proba is None else np.asarray(proba, float),
                                       prior)))

    @property
    def display_name(self) -> str:
        """The label, or the name when no label was given."""
        return self.label or self.name


def _evaluation(name: str) -> Callable[..., float]:
    """``ensemblekit.evaluation.<name>`` as a float score, imported when first called
    (importing this module stays cheap)."""

    def call(*args, **kwargs) -> float:
        from ensemblekit import evaluation

        return float(getattr(evaluation, name)(*args, **kwargs))

    call.__name__ = name
    return call


def _either(classification: str, regression: Callable, relative: bool = False
            ) -> Callable[[Outcome], float]:
    """Weka's error measure under one name: of the class probabilities for a
    classification (``evaluation.<classification>(truth, proba[, prior counts])``), of
    the values for a regression (``regression(truth, predicted[, training mean])``)."""
    of_probabilities = _evaluation(classification)

    def score(outcome: Outcome) -> float:
        prior = (outcome.prior,) if relative else ()
        if outcome.proba is not None:
            return of_probabilities(outcome.truth, outcome.proba, *prior)
        return regression(outcome.truth, outcome.predicted, *prior)

    score.__name__ = f"{classification}_or_{regression.__name__}"
    return score


def _of_probabilities(name: str) -> Callable[[Outcome], float]:
    """A classification score of ``evaluation.<name>(truth, proba)``."""
    func = _evaluation(name)

    def score(outcome: Outcome) -> float:
        if outcome.proba is None:
            raise ValueError(f"{name} needs class probabilities")
        return func(outcome.truth, outcome.proba)

    score.__name__ = name
    return score


def _labels(name: str, average: str | None = None) -> Callable:
    """A score of :mod:`ensemblekit.evaluation` computed from predicted labels alone.

    Those functions read the predicted class as the first arg-max of a distribution;
    a predicted label is the distribution that puts all its mass on it. Classes
    neither true nor predicted do not enter these scores, so the number of columns
    need only cover the codes seen.

    With ``average="weighted"`` the per-class figures are averaged with the classes'
    test counts as weights, an undefined figure (a class never predicted has no
    precision; Weka prints ``?`` and no weighted average) counting as 0, as
    scikit-learn's ``zero_division=0``: a fold's score must be a number to be ranked.
    """

    func = _evaluation(name)

    def score(y_true, y_pred) -> float:
        y_true = np.asarray(y_true, dtype=np.intp)
        y_pred = np.asarray(y_pred, dtype=np.intp)
        if y_true.ndim != 1 or y_pred.shape != y_true.shape or y_true.size == 0:
            raise ValueError(f"y_true and y_pred must be 1-D of one non-zero length, got "
                             f"shapes {y_true.shape} and {y_pred.shape}")
        n_classes = int(max(y_true.max(), y_pred.max())) + 1
        proba = np.zeros((y_pred.size, n_classes))
        proba[np.arange(y_pred.size), y_pred] = 1.0
        if average != "weighted":
            return func(y_true, proba) if average is None else func(y_true, proba, average)
        from ensemblekit import evaluation

        per_class = np.nan_to_num(getattr(evaluation, name)(y_true, proba, None), nan=0.0)
        support = np.bincount(y_true, minlength=n_classes)
        return float(per_class @ support / y_true.size)

    score.__name__ = name
    return score


_C, _R = "classification", "regression"
_BOTH = (_C, _R)


METRICS: dict[str, Metric] = {
    "accuracy": Metric("accuracy", accuracy, _C, True, "Accuracy"),
    "balanced-accuracy": Metric("balanced-accuracy", _labels("balanced_accuracy"), _C, True,
                                "Balanced accuracy"),
    "kappa": Metric("kappa", _labels("kappa"), _C, True, "Kappa"),
    "mcc": Metric("mcc", _labels("mcc", "weighted"), _C, True, "MCC"),
    "precision-macro": Metric("precision-macro", _labels("precision", "macro"), _C, True,
                              "Precision (macro)"),
    "recall-macro": Metric("recall-macro", _labels("recall", "macro"), _C, True, "Recall (macro)"),
    "f1-macro": Metric("f1-macro", _labels("f_measure", "macro"), _C, True, "F1 (macro)"),
    "precision-weighted": Metric("precision-weighted", _labels("precision", "weighted"), _C, True,
                                 "Precision (weighted)"),
    "recall-weighted": Metric("recall-weighted", _labels("recall", "weighted"), _C, True,
                              "Recall (weighted)"),
    "f1-weighted": Metric("f1-weighted", _labels("f_measure", "weighted"), _C, True, "F1 (weighted)"),
    "auc": Metric("auc", _of_probabilities("weighted_roc_area"), _C, True, "ROC area", inputs="outcome"),
    "prc": Metric("prc", _of_probabilities("weighted_prc_area"), _C, True, "PRC area", inputs="outcome"),
    "log-loss": Metric("log-loss", _of_probabilities("log_loss"), _C, False, "Log-loss", inputs="outcome"),
    "brier": Metric("brier", _of_probabilities("brier_score"), _C, False, "Brier", inputs="outcome"),
    "nmi": Metric("nmi", nmi, "clustering", True, "NMI"),
    "purity": Metric("purity", purity, "clustering", True, "Purity"),
    "ari": Metric("ari", adjusted_rand, "clustering", True, "ARI"),
    "rand": Metric("rand", rand, "clustering", True, "Rand"),
    "jaccard": Metric("jaccard", jaccard, "clustering", True, "Jaccard"),
    "fm": Metric("fm", fowlkes_mallows, "clustering", True, "FM"),
    "w10": Metric("w10", wallace_10, "clustering", True, "W10"),
    "w01": Metric("w01", wallace_01, "clustering", True, "W01"),
    "silhouette": Metric("silhouette", silhouette, "clustering", True, "Silhouette", internal=True),
    "dunn": Metric("dunn", dunn, "clustering", True, "Dunn", internal=True),
    "connectivity": Metric("connectivity", connectivity, "clustering", False, "Connectivity",
                           internal=True),
    "davies-bouldin": Metric("davies-bouldin", davies_bouldin, "clustering", False, "Davies-Bouldin",
                             internal=True),
    "calinski-harabasz": Metric("calinski-harabasz", calinski_harabasz, "clustering", True,
                                "Calinski-Harabasz", internal=True),
    "correlation": Metric("correlation", correlation, _R, True, "Correlation"),
    "mae": Metric("mae", _either("weka_mae", mae), _BOTH, False, "MAE", inputs="outcome"),
    "rmse": Metric("rmse", _either("weka_rmse", rmse), _BOTH, False, "RMSE", inputs="outcome"),
    "rae": Metric("rae", _either("relative_absolute_error",
                                 _evaluation("relative_absolute_error_regression"), True),
                  _BOTH, False, "RAE %", inputs="outcome", needs_prior=True),
    "rrse": Metric("rrse", _either("root_relative_squared_error",
                                   _evaluation("root_relative_squared_error_regression"), True),
                   _BOTH, False, "RRSE %", inputs="outcome", needs_prior=True),
    "r2": Metric("r2", r2, _R, True, "R²"),
}
"""Metric name -> :class:`Metric`, in the order reports list them."""

#: The measures ``evaluate`` reports for a classifier or a regression algorithm, in
#: report order: Weka's summary (accuracy, kappa, the four error measures of
#: :class:`weka.classifiers.Evaluation`) and the other standard ones.
REPORT_METRICS = {
    _C: ("accuracy", "balanced-accuracy", "kappa", "mcc", "precision-weighted", "recall-weighted",
         "f1-weighted", "f1-macro", "auc", "prc", "log-loss", "brier", "mae", "rmse", "rae",
         "rrse"),
    _R: ("correlation", "mae", "rmse", "rae", "rrse"),
}

#: Names of the external clustering indices (they compare with the classes), in report order.
EXTERNAL_INDICES = tuple(m.name for m in METRICS.values() if m.task == "clustering" and not m.internal)

#: Names of the internal clustering indices (they need the data), in report order.
INTERNAL_INDICES = tuple(m.name for m in METRICS.values() if m.internal)


def clustering_indices(labels, *, truth=None, X=None, names=None) -> dict[str, float]:
    """Every clustering index that the given inputs allow, by name.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster of each instance.
    truth : array-like of shape (n_samples,), optional
        Classes: the external indices are computed when given.
    X : array-like of shape (n_samples, n_features), optional
        Clustered data: the internal indices are computed when given.
    names : sequence of str, optional
        Restrict to these indices (keys of :data:`METRICS`); an index whose
        input is missing is skipped.

    Returns
    -------
    dict
        ``{name: value}`` in :data:`METRICS` order: external indices first,
        then internal ones.

    Raises
    ------
    ValueError
        From the indices (see each function), e.g. fewer than 2 clusters for
        an internal index.
    """
    wanted = EXTERNAL_INDICES + INTERNAL_INDICES if names is None else tuple(names)
    out: dict[str, float] = {}
    for name in EXTERNAL_INDICES + INTERNAL_INDICES:
        if name not in wanted:
            continue
        metric = METRICS[name]
        if metric.internal and X is not None:
            out[name] = metric.score(labels, X=X)
        elif not metric.internal and truth is not None:
            out[name] = metric.score(labels, truth=truth)
    return out


def best_k(ks, values, name):
    """The number of clusters with the best value of an index.

    Parameters
    ----------
    ks : sequence of int
        Numbers of clusters tried.
    values : sequence of float
        The index ``name`` at each ``k`` (NaN where it could not be computed).
    name : str
        Key of :data:`METRICS`; its ``greater_is_better`` gives the direction.

    Returns
    -------
    int or None
        The best ``k`` (the smallest on ties), or None when every value is NaN.

    Raises
    ------
    KeyError
        If ``name`` is not a known metric.
    ValueError
        If ``ks`` and ``values`` differ in length.
    """
    values = np.asarray(values, dtype=np.float64)
    if len(ks) != values.shape[0]:
        raise ValueError(f"{len(ks)} values of k but {values.shape[0]} index values")
    finite = ~np.isnan(values)
    if not finite.any():
        return None
    sign = 1.0 if METRICS[name].greater_is_better else -1.0
    scored = np.where(finite, sign * values, -np.inf)
    return int(ks[int(np.argmax(scored))])
