"""Scores for predictions and clusterings, and the registry of metric names.

Every function takes two 1-D label arrays of the same length and returns a
float. Labels are compared as values: class codes, cluster ids or strings all
work, and cluster ids need not match class codes (the clustering indices do
not care how clusters are numbered). scikit-learn is imported inside the
functions that use it, so importing this module stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Metric", "METRICS", "accuracy", "nmi", "purity", "adjusted_rand"]


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


@dataclass(frozen=True)
class Metric:
    """A named score with what the experiment code needs to know about it.

    Parameters
    ----------
    name : str
        Registry key, as given on the command line (``--metric nmi``).
    func : callable
        ``func(truth, predicted) -> float``; ``truth`` is the class labels,
        ``predicted`` the predicted classes or the cluster ids, both of shape
        (n_samples,).
    task : {"classification", "clustering"}
        What ``predicted`` holds.
    greater_is_better : bool, default=True
        Direction used for ranking algorithms.
    label : str, default=""
        Column heading for reports; the name when empty.
    """

    name: str
    func: Callable[..., float]
    task: str
    greater_is_better: bool = True
    label: str = ""

    def __call__(self, truth, predicted) -> float:
        """Compute the score; same as ``self.func(truth, predicted)``."""
        return self.func(truth, predicted)

    @property
    def display_name(self) -> str:
        """The label, or the name when no label was given."""
        return self.label or self.name


METRICS: dict[str, Metric] = {
    "accuracy": Metric("accuracy", accuracy, "classification", True, "Accuracy"),
    "nmi": Metric("nmi", nmi, "clustering", True, "NMI"),
    "purity": Metric("purity", purity, "clustering", True, "Purity"),
    "ari": Metric("ari", adjusted_rand, "clustering", True, "ARI"),
}
"""Metric name -> :class:`Metric`, in the order reports list them."""
