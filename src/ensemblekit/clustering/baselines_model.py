"""The clustering baselines' fitted models: PAM, DIANA, Gaussian mixtures, forest clustering (numpy only).

What :mod:`ensemblekit.clustering.baselines` leaves after ``fit``, declared
for a model file, and how each labels new rows, in numpy alone:

* :class:`PAMModel` -- the nearest medoid after scaling
  (:class:`~ensemblekit.clustering.kmeans_model.PrototypeModel`);
* :class:`DIANAModel` -- the training labels and split heights; DIANA is a
  hierarchy of the training rows and labels no new row;
* :class:`GaussianMixtureModel` -- the most probable component, from the
  chosen mixture's weights, means and Cholesky factors of its precision
  matrices, computed in the order scikit-learn's
  :class:`~sklearn.mixture.GaussianMixture` computes them, so labels and
  probabilities are its own to the last bit;
* :class:`RandomForestClusteringModel` -- the medoid sharing most leaves,
  each tree walked over its node arrays as scikit-learn's compiled
  ``Tree.apply`` walks them (input rounded to float32, ``x <= threshold``).

References: L. Kaufman and P. J. Rousseeuw, *Finding Groups in Data*, Wiley
1990; C. Fraley and A. E. Raftery, JASA 97(458):611-631, 2002; L. Breiman,
"Random forests", Machine Learning 45:5-32, 2001; T. Shi and S. Horvath,
J. Comput. Graph. Stat. 15(1):118-138, 2006.
"""

from __future__ import annotations

import math

import numpy as np

from ensemblekit.constraints import MAX_ITERATIONS, MAX_MEMBERS, MAX_TREES, Constraint
from ensemblekit.rows import check_rows
from ensemblekit.state import Array, ArrayList, Scalar
from ensemblekit.trust import all_distinct

from .kmeans_model import (
    PROTOTYPE_CONSTRAINTS,
    PROTOTYPE_STATE,
    SCALING_STATE,
    PrototypeModel,
    apply_scaling,
    check_scaling,
)

__all__ = [
    "COVARIANCE_TYPES",
    "DIANAModel",
    "GaussianMixtureModel",
    "PAMModel",
    "RandomForestClusteringModel",
    "forest_leaves",
    "gaussian_log_prob",
    "log_sum_exp",
]

#: Covariance structures of the Gaussian mixtures (scikit-learn's names).
COVARIANCE_TYPES = ("full", "tied", "diag", "spherical")

# Rows per block when predicting with the forest proximity: leaves are found for
# _LEAF_ROWS rows at a time (one walk of each tree), compared with the medoids'
# for _PREDICT_ROWS rows at a time.
_LEAF_ROWS = 8192
_PREDICT_ROWS = 256


# ---------------------------------------------------------------------------
# PAM
# ---------------------------------------------------------------------------
class PAMModel(PrototypeModel):
    """The fitted part of :class:`~ensemblekit.clustering.baselines.PAM` (see there).

    ``predict`` gives a row its nearest medoid (Euclidean, scaled space,
    lowest index on ties).
    """

    _parameter_constraints = {
        "n_clusters": PROTOTYPE_CONSTRAINTS["n_clusters"],
        "scale": PROTOTYPE_CONSTRAINTS["scale"],
        "max_iter": Constraint("int", "maximum SWAP passes", low=1, high=MAX_ITERATIONS),
        "random_state": Constraint("any", "passed to kmedoids (BUILD and SWAP are deterministic)"),
    }

    _fitted_state = {
        **PROTOTYPE_STATE,
        "medoid_indices_": Array("int64", ("n_clusters",), low=0, below="n_samples"),
    }

    def __init__(self, n_clusters=3, *, scale="none", max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state

    def _check_state(self, ctx) -> None:
        check_scaling(self, ctx)
        if not all_distinct(self.medoid_indices_):
            ctx.fail("medoid_indices_ repeats a row")


# ---------------------------------------------------------------------------
# DIANA
# ---------------------------------------------------------------------------
class DIANAModel:
    """The fitted part of :class:`~ensemblekit.clustering.baselines.DIANA` (see there).

    DIANA splits its training rows; it has no rule for a new row, so the
    model holds what ``show`` and the cluster report read: the labels and
    the heights of the splits.
    """

    _parameter_constraints = {
        "n_clusters": PROTOTYPE_CONSTRAINTS["n_clusters"],
        "scale": PROTOTYPE_CONSTRAINTS["scale"],
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "labels_": Array("int64", ("n_samples",), low=0, below="n_clusters"),
        "split_heights_": Array("float64", ("*",), low=0),
    }

    def __init__(self, n_clusters=3, *, scale="none"):
        self.n_clusters = n_clusters
        self.scale = scale

    def _check_state(self, ctx) -> None:
        if self.labels_.size < self.n_clusters:
            ctx.fail(f"labels_ has fewer rows than n_clusters = {self.n_clusters}")
        heights = self.split_heights_
        if heights.size != self.n_clusters - 1:
            ctx.fail(f"split_heights_ holds {heights.size} heights for n_clusters = "
                     f"{self.n_clusters} (one per split)")
        if heights.size > 1 and np.any(heights[1:] > heights[:-1]):
            ctx.fail("split_heights_ is not non-increasing")


# ---------------------------------------------------------------------------
# Gaussian mixtures
# ---------------------------------------------------------------------------
def _factor_shape(covariance_type: str, k: int, d: int) -> tuple:
    return {"full": (k, d, d), "tied": (d, d), "diag": (k, d), "spherical": (k,)}[covariance_type]


def gaussian_log_prob(X, means, precisions_chol, covariance_type):
    """Log-density of every row under every component, as scikit-learn computes it.

    The operations, their order and the arrays' layouts are those of
    ``sklearn.mixture._gaussian_mixture._estimate_log_gaussian_prob``, so
    the result is bit for bit scikit-learn's.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, C-contiguous
    means : ndarray of shape (n_components, n_features)
    precisions_chol : ndarray
        Cholesky factors of the precision matrices: (n_components,
        n_features, n_features) for "full", (n_features, n_features) for
        "tied", (n_components, n_features) for "diag", (n_components,) for
        "spherical".
    covariance_type : {"full", "tied", "diag", "spherical"}

    Returns
    -------
    ndarray of shape (n_samples, n_components)
        ``log N(x_i | mu_k, Sigma_k)``.
    """
    n_samples, n_features = X.shape
    n_components = means.shape[0]
    if covariance_type == "full":
        flat = precisions_chol.reshape(n_components, -1)
        log_det = np.sum(np.log(flat[:, :: n_features + 1]), axis=1)
        log_prob = np.empty((n_samples, n_components), dtype=X.dtype)
        for k in range(n_components):
            prec_chol = precisions_chol[k, :, :]
            y = (X @ prec_chol) - (means[k, :] @ prec_chol)
            log_prob[:, k] = np.sum(np.square(y), axis=1)
    elif covariance_type == "tied":
        log_det = np.sum(np.log(np.diagonal(precisions_chol)))
        log_prob = np.empty((n_samples, n_components), dtype=X.dtype)
        for k in range(n_components):
            y = (X @ precisions_chol) - (means[k, :] @ precisions_chol)
            log_prob[:, k] = np.sum(np.square(y), axis=1)
    elif covariance_type == "diag":
        log_det = np.sum(np.log(precisions_chol), axis=1)
        precisions = precisions_chol**2
        log_prob = (np.sum((means**2 * precisions), axis=1)
                    - 2.0 * (X @ (means * precisions).T)
                    + (X**2 @ precisions.T))
    else:  # spherical
        log_det = n_features * np.log(precisions_chol)
        precisions = precisions_chol**2
        log_prob = (np.sum(means**2, axis=1) * precisions
                    - 2 * (X @ means.T * precisions)
                    + np.outer(np.einsum("ij,ij->i", X, X), precisions))
    return -0.5 * (n_features * math.log(2 * math.pi) + log_prob) + log_det


def log_sum_exp(a):
    """``log(sum(exp(a), axis=1))`` by scikit-learn's ``_logsumexp`` (rows of a 2-d array).

    The largest entries of a row are taken out and counted, the rest summed
    as ``exp(a - max)``, and ``log1p(sum / count) + log(count) + max``
    returned: scikit-learn's operations in its order, so the same bits.

    Parameters
    ----------
    a : ndarray of shape (n_rows, n_cols), float64

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    a_max = np.max(a, axis=1, keepdims=True)
    at_max = a == a_max
    a = np.array(a, copy=True)
    a[at_max] = -np.inf
    m = np.sum(at_max.astype(a.dtype), axis=1, keepdims=True, dtype=a.dtype)
    shift = np.where(np.isfinite(a_max), a_max, 0)
    s = np.sum(np.exp(a - shift), axis=1, keepdims=True, dtype=a.dtype)
    s = np.where(s == 0, s, s / m)
    return np.squeeze(np.log1p(s) + np.log(m) + a_max, axis=1)


class GaussianMixtureModel:
    """The fitted part of :class:`~ensemblekit.clustering.baselines.GaussianMixtureBIC` (see there).

    Holds the chosen mixture as arrays (in the scaled space): ``weights_``,
    ``means_`` and ``precision_factors_``, scikit-learn's
    ``precisions_cholesky_`` flattened in C order (``n_components_ *
    n_features_in_**2`` values for "full", ``n_features_in_**2`` for "tied",
    ``n_components_ * n_features_in_`` for "diag", ``n_components_`` for
    "spherical").
    """

    _parameter_constraints = {
        "n_clusters": PROTOTYPE_CONSTRAINTS["n_clusters"],
        "covariance_type": Constraint("choice", "covariance structure (auto: lowest BIC of the "
                                      "four)", choices=("auto", *COVARIANCE_TYPES)),
        "select_k": Constraint("bool", "also choose k in 1..n_clusters by BIC"),
        "n_init": Constraint("int", "EM restarts per fit", low=1, high=MAX_MEMBERS),
        "max_iter": Constraint("int", "EM iterations per restart", low=1, high=MAX_ITERATIONS),
        "scale": PROTOTYPE_CONSTRAINTS["scale"],
        "random_state": Constraint("any", "seed of the k-means initialisations of EM"),
    }

    _fitted_state = {
        **SCALING_STATE,
        "covariance_type_": Scalar("str", choices=COVARIANCE_TYPES),
        "n_components_": Scalar("int", low=1, high="n_clusters"),
        "n_iter_": Scalar("int", low=0),
        "weights_": Array("float64", ("n_components_",), low=0, high=1),
        "means_": Array("float64", ("n_components_", "n_features_in_")),
        "precision_factors_": Array("float64", ("*",)),
        "cluster_centers_": Array("float64", ("n_components_", "n_features_in_")),
        "labels_": Array("int64", ("n_samples",), low=0, below="n_components_"),
    }

    def __init__(self, n_clusters=3, *, covariance_type="auto", select_k=False, n_init=1,
                 max_iter=100, scale="none", random_state=None):
        self.n_clusters = n_clusters
        self.covariance_type = covariance_type
        self.select_k = select_k
        self.n_init = n_init
        self.max_iter = max_iter
        self.scale = scale
        self.random_state = random_state

    def _check_state(self, ctx) -> None:
        check_scaling(self, ctx)
        shape = _factor_shape(self.covariance_type_, self.n_components_, self.n_features_in_)
        if self.precision_factors_.size != math.prod(shape):
            ctx.fail(f"precision_factors_ holds {self.precision_factors_.size} values, not the "
                     f"{math.prod(shape)} of {self.covariance_type_} factors of shape {shape}")
        factors = self._factors()
        if self.covariance_type_ in ("full", "tied"):
            d = self.n_features_in_
            diagonal = factors.reshape(-1, d * d)[:, :: d + 1]
        else:
            diagonal = factors
        if not np.all(diagonal > 0):
            ctx.fail("precision_factors_ has a Cholesky factor whose diagonal is not positive")

    def _factors(self):
        shape = _factor_shape(self.covariance_type_, self.n_components_, self.n_features_in_)
        return self.precision_factors_.reshape(shape)

    def _weighted_log_prob(self, X):
        Xs = apply_scaling(check_rows(self, X, allow_nan=False), self.scaling_offset_,
                           self.scaling_factor_)
        log_prob = gaussian_log_prob(Xs, self.means_, self._factors(), self.covariance_type_)
        return log_prob + np.log(self.weights_)

    def predict(self, X):
        """Most probable component of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            ``argmax_k log(w_k) + log N(x | mu_k, Sigma_k)`` (first on ties).
        """
        return np.asarray(self._weighted_log_prob(X).argmax(axis=1), dtype=np.intp)

    def predict_proba(self, X):
        """Posterior probability of every component for each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_components_)
            Rows sum to 1.
        """
        weighted = self._weighted_log_prob(X)
        norm = log_sum_exp(weighted)
        with np.errstate(under="ignore"):
            return np.exp(weighted - norm[:, np.newaxis])


# ---------------------------------------------------------------------------
# random-forest clustering
# ---------------------------------------------------------------------------
def _tree_leaves(X32, left, right, feature, threshold):
    """Leaf (node index) of every row in one tree: ``x[feature] <= threshold`` goes left."""
    node = np.zeros(X32.shape[0], dtype=np.int64)
    active = np.arange(X32.shape[0])
    at = node
    while active.size:
        children = left[at]
        inner = children != -1
        active, at, children = active[inner], at[inner], children[inner]
        goes_left = X32[active, feature[at]] <= threshold[at]
        at = np.where(goes_left, children, right[at])
        node[active] = at
    return node


def forest_leaves(X, lefts, rights, features, thresholds):
    """Leaf of every row in every tree, as scikit-learn's ``RandomForestClassifier.apply``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, finite
    lefts, rights, features, thresholds : list of ndarray of shape (n_nodes_t,)
        Per tree: children (-1 at a leaf), split feature and threshold, as a
        fitted scikit-learn tree holds them (``tree_.children_left``, ...).

    Returns
    -------
    ndarray of shape (n_samples, n_trees), int64
        Node index of each row's leaf in each tree. The rows are rounded to
        float32 first and compared with the float64 thresholds, as
        scikit-learn's trees do, so the leaves are the same.
    """
    X32 = np.asarray(X, dtype=np.float32)
    out = np.empty((X32.shape[0], len(lefts)), dtype=np.int64)
    for t, parts in enumerate(zip(lefts, rights, features, thresholds)):
        out[:, t] = _tree_leaves(X32, *parts)
    return out


def _check_tree(ctx, t, left, right, feature, threshold) -> None:
    """One tree: node 0 is the root, children come after their parent, one parent each."""
    n = left.size
    if right.size != n or feature.size != n or threshold.size != n:
        ctx.fail(f"tree {t}: its node arrays have different lengths")
    inner = left != -1
    if np.any(inner != (right != -1)):
        ctx.fail(f"tree {t}: a node has one child")
    nodes = np.flatnonzero(inner)
    if np.any(left[nodes] <= nodes) or np.any(right[nodes] <= nodes):
        ctx.fail(f"tree {t}: a child does not come after its parent")
    parents = np.bincount(np.concatenate([left[nodes], right[nodes]]), minlength=n)
    if parents[0] != 0 or np.any(parents[1:] != 1):
        ctx.fail(f"tree {t}: a node does not have exactly one parent")
    if np.any(feature[nodes] < 0):
        ctx.fail(f"tree {t}: a split has no feature")


class RandomForestClusteringModel:
    """The fitted part of :class:`~ensemblekit.clustering.baselines.RandomForestClustering`.

    Holds the forest as node arrays (one entry per tree in ``tree_left_``,
    ``tree_right_``, ``tree_feature_``, ``tree_threshold_``), the medoids'
    leaves and the training labels; ``predict`` gives a row the cluster of
    the medoid it shares most leaves with.
    """

    _parameter_constraints = {
        "n_clusters": PROTOTYPE_CONSTRAINTS["n_clusters"],
        "n_estimators": Constraint("int", "trees in the forest", low=1, high=MAX_TREES),
        "max_features": Constraint("choice", "attributes tried per split",
                                   choices=("sqrt", "log2"),
                                   alt=Constraint("float", low=0, high=1, closed="right")),
        "min_samples_leaf": Constraint("int", "minimum instances per leaf", low=1),
        "max_iter": Constraint("int", "maximum PAM swap passes", low=1, high=MAX_ITERATIONS),
        "random_state": Constraint("any", "seed of the permutations and of the forest"),
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "n_iter_": Scalar("int", low=0),
        "labels_": Array("int64", ("n_samples",), low=0, below="n_clusters"),
        "medoid_indices_": Array("int64", ("n_clusters",), low=0, below="n_samples"),
        "medoid_leaves_": Array("int64", ("n_clusters", "n_estimators"), low=0),
        "tree_left_": ArrayList(Array("int64", ("n_nodes",), low=-1, below="n_nodes"),
                                length="n_estimators"),
        "tree_right_": ArrayList(Array("int64", ("n_nodes",), low=-1, below="n_nodes"),
                                 length="n_estimators"),
        "tree_feature_": ArrayList(Array("int64", ("n_nodes",), low=-2, below="n_features_in_"),
                                   length="n_estimators"),
        "tree_threshold_": ArrayList(Array("float64", ("n_nodes",)), length="n_estimators"),
    }

    def __init__(self, n_clusters=3, *, n_estimators=500, max_features="sqrt", min_samples_leaf=1,
                 max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.max_iter = max_iter
        self.random_state = random_state

    def _check_state(self, ctx) -> None:
        if not all_distinct(self.medoid_indices_):
            ctx.fail("medoid_indices_ repeats a row")
        for t, parts in enumerate(zip(self.tree_left_, self.tree_right_, self.tree_feature_,
                                      self.tree_threshold_)):
            _check_tree(ctx, t, *parts)
            left = parts[0]
            leaves = self.medoid_leaves_[:, t]
            if leaves.max() >= left.size or np.any(left[leaves] != -1):
                ctx.fail(f"medoid_leaves_: column {t} names a node that is not a leaf of tree {t}")

    def predict(self, X):
        """Give each row to the medoid it shares most leaves with (lowest dissimilarity).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster of the medoid with the highest proximity (lowest index on ties).
        """
        X = check_rows(self, X, allow_nan=False)
        medoid_labels = self.labels_[self.medoid_indices_]
        out = np.empty(X.shape[0], dtype=np.intp)
        for first in range(0, X.shape[0], _LEAF_ROWS):
            leaves = forest_leaves(X[first:first + _LEAF_ROWS], self.tree_left_, self.tree_right_,
                                   self.tree_feature_, self.tree_threshold_)
            for start in range(0, leaves.shape[0], _PREDICT_ROWS):
                block = leaves[start:start + _PREDICT_ROWS]
                shared = (block[:, None, :] == self.medoid_leaves_[None, :, :]).sum(axis=2)
                out[first + start:first + start + block.shape[0]] = \
                    medoid_labels[shared.argmax(axis=1)]
        return out
