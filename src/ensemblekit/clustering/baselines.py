"""Clustering baselines of the rule-ensembles paper: PAM, DIANA, a Mclust stand-in, RF clustering.

Akdemir & Jannink (*Ensemble learning with trees and rules*, Intelligent Data
Analysis 18(5), 2014, Sect. 4.5-4.8, Tables 2-3) judge their ISCA clusterings
against partitioning around medoids (PAM), divisive analysis (DIANA),
model-based clustering (R's Mclust) and random-forest clustering. Here:

* :class:`PAM` -- Kaufman & Rousseeuw's BUILD + SWAP, run by the ``kmedoids``
  package (``method="pam"``, ``init="build"``), as R's ``cluster::pam``;
* :class:`DIANA` -- divisive analysis, written from Kaufman & Rousseeuw's
  description (no maintained Python package has it);
* :class:`GaussianMixtureBIC` -- Gaussian mixtures (scikit-learn) over the
  four covariance structures (and optionally over k), chosen by BIC: the
  closest Python stand-in for Mclust, which searches more (14 covariance
  parametrisations) and starts from model-based hierarchical clustering;
* :class:`RandomForestClustering` -- Breiman's unsupervised random forest as
  used by Shi & Horvath: a forest learns to tell the data from a synthetic
  copy whose columns are permuted independently; ``1 - proximity`` is then
  clustered by PAM.

Each estimator fits here; what it predicts with, and what a model file keeps, is
its model class in :mod:`ensemblekit.clustering.baselines_model` (numpy only).
Algorithm code here never reads files or prints; numpy arrays in, arrays out.
All distances are Euclidean on the (optionally scaled) attributes, R's
default (``stand = FALSE``).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ensemblekit.errors import InputError

from ..classifiers.cart_model import check_float32_range
from ..constraints import validate_params
from ..rows import quiet_finite_check
from .baselines_model import (
    COVARIANCE_TYPES,
    DIANAModel,
    GaussianMixtureModel,
    PAMModel,
    RandomForestClusteringModel,
)
from .kmeans import _BasePrototypeClustering, apply_scaling, fit_scaling, undo_scaling

__all__ = ["COVARIANCE_TYPES", "DIANA", "GaussianMixtureBIC", "PAM", "RandomForestClustering", "diana"]


def _check_fit_input(estimator, X):
    with quiet_finite_check():
        X = validate_data(estimator, X, dtype=np.float64, order="C")
    if X.shape[0] < estimator.n_clusters:
        raise InputError(f"n_samples={X.shape[0]} should be >= n_clusters={estimator.n_clusters}.")
    return X


def _pam_on(dissimilarity, n_clusters, max_iter, random_state):
    """Classic PAM (BUILD + SWAP) on a dissimilarity matrix; (labels, medoids, SWAP passes)."""
    import kmedoids

    result = kmedoids.pam(np.ascontiguousarray(dissimilarity, dtype=np.float64), int(n_clusters),
                          max_iter=int(max_iter), init="build", random_state=random_state)
    return (np.asarray(result.labels, dtype=np.intp), np.asarray(result.medoids, dtype=np.intp),
            int(result.n_iter))


# ---------------------------------------------------------------------------
# PAM
# ---------------------------------------------------------------------------
class PAM(PAMModel, _BasePrototypeClustering):
    """Partitioning Around Medoids: BUILD then SWAP (Kaufman & Rousseeuw).

    Chooses ``k`` instances (medoids) minimising the sum of Euclidean
    distances of every instance to its nearest medoid: BUILD picks them
    greedily, SWAP then exchanges a medoid with a non-medoid while that lowers
    the total. Runs the ``kmedoids`` package (``KMedoids(method="pam",
    init="build")``), which reproduces R's ``cluster::pam``.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of medoids ``k`` (>= 1, <= number of instances).
    scale : {"none", "minmax", "zscore"}, default="none"
        Attribute scaling fitted on the training data before the distances
        (``"none"``: R's default).
    max_iter : int, default=300
        Maximum SWAP passes (>= 1).
    random_state : int, RandomState instance or None, default=None
        Passed to ``kmedoids`` (BUILD and SWAP are deterministic; it is kept
        for the common interface).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Medoid (cluster) of every training instance.
    medoid_indices_ : ndarray of shape (n_clusters,)
        Row numbers of the medoids in the training data.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The medoids, in input units.
    scaled_centers_ : ndarray of shape (n_clusters, n_features)
        The medoids in the scaled space (what ``predict`` uses).
    inertia_ : float
        Sum of the distances (not squared) of the instances to their medoid.
    n_iter_ : int
        SWAP passes run.
    scaling_offset_, scaling_factor_ : ndarray of shape (n_features,)
        The scaling map: scaled = (X - scaling_offset_) / scaling_factor_.
    n_features_in_ : int

    Raises
    ------
    ValueError
        From ``fit`` on a bad parameter, NaN/infinite data or fewer rows than
        ``n_clusters``.

    Notes
    -----
    Memory: the dense ``n x n`` float64 distance matrix (8 n^2 bytes, 320 MB
    for 6,300 instances); time O(k (n - k)^2) per SWAP pass.

    References
    ----------
    L. Kaufman and P. J. Rousseeuw, *Finding Groups in Data*, Wiley 1990,
    ch. 2; E. Schubert and P. J. Rousseeuw, "Fast and eager k-medoids
    clustering", Information Systems 101, 2021 (the ``kmedoids`` package).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.clustering.baselines import PAM
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    >>> PAM(n_clusters=2).fit(X).medoid_indices_.tolist()
    [1, 3]
    """

    def fit(self, X, y=None):
        """Find the medoids of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data, no NaN or infinity.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        from scipy.spatial.distance import pdist, squareform

        validate_params(self)
        X = _check_fit_input(self, X)
        offset, factor = fit_scaling(X, self.scale)
        Xs = apply_scaling(X, offset, factor)
        D = squareform(pdist(Xs))
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        labels, medoids, n_iter = _pam_on(D, self.n_clusters, self.max_iter, int(seed))
        self.n_iter_ = n_iter
        self.labels_ = labels
        self.medoid_indices_ = medoids
        self.scaling_offset_ = offset
        self.scaling_factor_ = factor
        self.scaled_centers_ = Xs[medoids].copy()
        self.cluster_centers_ = undo_scaling(self.scaled_centers_, offset, factor)
        self.inertia_ = float(D[np.arange(X.shape[0]), medoids[labels]].sum())
        self._n_features_out = self.n_clusters
        return self


# ---------------------------------------------------------------------------
# DIANA
# ---------------------------------------------------------------------------
def _split(D):
    """Kaufman & Rousseeuw's splinter procedure on one cluster's dissimilarities.

    Returns a boolean mask of the splinter group. The object with the largest
    average dissimilarity to the others starts it; then, repeatedly, the
    object of the remaining group whose average dissimilarity to the rest of
    that group exceeds its average dissimilarity to the splinter group by the
    largest positive margin moves over (first such object on ties), until no
    margin is positive or one object is left.
    """
    m = D.shape[0]
    splinter = np.zeros(m, dtype=bool)
    first = int(np.argmax(D.sum(axis=1)))
    splinter[first] = True
    to_rest = D.sum(axis=1) - D[:, first]  # sum of dissimilarities to the remaining group
    to_splinter = D[:, first].copy()
    n_rest, n_splinter = m - 1, 1
    while n_rest > 1:
        margin = to_rest / (n_rest - 1) - to_splinter / n_splinter
        margin[splinter] = -np.inf
        best = int(np.argmax(margin))
        if not margin[best] > 0:
            break
        splinter[best] = True
        to_rest -= D[:, best]
        to_splinter += D[:, best]
        n_rest -= 1
        n_splinter += 1
    return splinter


def diana(dissimilarity, n_clusters):
    """DIvisive ANAlysis: top-down splits of the widest cluster into ``n_clusters`` clusters.

    Starting from one cluster holding everything, ``n_clusters - 1`` times:
    take the cluster with the largest diameter (largest dissimilarity between
    two of its members; the earliest-formed cluster on ties) and split it by
    the splinter-group procedure (see Notes). The hierarchy DIANA builds has
    the diameters as heights, so this equals cutting the full DIANA tree into
    ``n_clusters`` clusters (R: ``cutree(as.hclust(diana(x)), k)``).

    Parameters
    ----------
    dissimilarity : ndarray of shape (n_samples, n_samples)
        Symmetric, non-negative, zero diagonal.
    n_clusters : int
        1 <= n_clusters <= n_samples.

    Returns
    -------
    labels : ndarray of shape (n_samples,), intp
        Clusters numbered 0, 1, ... in order of first appearance.
    heights : ndarray of shape (n_clusters - 1,)
        Diameter of the cluster split at each step (non-increasing).

    Raises
    ------
    ValueError
        If the matrix is not square or ``n_clusters`` is out of range.

    Notes
    -----
    Splinter procedure (Kaufman & Rousseeuw 1990, ch. 6, Sect. 1): the
    object with the largest average dissimilarity to the other members
    starts the splinter group; an object ``i`` of the remaining group ``A``
    moves to the splinter group ``B`` when
    ``mean_{j in A, j != i} d(i, j) - mean_{h in B} d(i, h)`` is positive and
    the largest; repeat until no such difference is positive. Cost O(m^2)
    per split of a cluster of ``m`` objects.

    References
    ----------
    L. Kaufman and P. J. Rousseeuw, *Finding Groups in Data*, Wiley 1990,
    ch. 6 (program DIANA), after P. Macnaughton-Smith et al., "Dissimilarity
    analysis: a new technique of hierarchical sub-division", Nature 202, 1964.
    """
    D = np.asarray(dissimilarity, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise InputError(f"dissimilarity must be a square matrix, got shape {D.shape}")
    n = D.shape[0]
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral) \
            or not 1 <= n_clusters <= n:
        raise InputError(f"n_clusters must be an integer in 1 .. {n}; got {n_clusters!r}.")
    clusters = [np.arange(n)]
    diameters = [float(D.max()) if n > 1 else 0.0]
    heights = []
    while len(clusters) < n_clusters:
        widest = max(range(len(clusters)), key=lambda c: (diameters[c], -c))
        members = clusters[widest]
        sub = D[np.ix_(members, members)]
        mask = _split(sub)
        heights.append(diameters[widest])
        parts = [members[~mask], members[mask]]
        clusters[widest] = parts[0]
        clusters.append(parts[1])
        for pos, part in ((widest, parts[0]), (len(clusters) - 1, parts[1])):
            d = float(D[np.ix_(part, part)].max()) if part.shape[0] > 1 else 0.0
            if pos == widest:
                diameters[widest] = d
            else:
                diameters.append(d)
    labels = np.empty(n, dtype=np.intp)
    for c, members in enumerate(clusters):
        labels[members] = c
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inverse.ravel()], np.asarray(heights, dtype=np.float64)


class DIANA(DIANAModel, ClusterMixin, BaseEstimator):
    """DIvisive ANAlysis clustering (Kaufman & Rousseeuw), cut into ``n_clusters`` clusters.

    Euclidean dissimilarities; see :func:`diana` for the algorithm. DIANA is
    deterministic (no ``random_state``) and hierarchical, so it has no
    ``predict`` for new rows.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters (>= 1, <= number of instances).
    scale : {"none", "minmax", "zscore"}, default="none"
        Attribute scaling before the distances (``"none"``: R's default).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every training instance, numbered in order of first appearance.
    split_heights_ : ndarray of shape (n_clusters - 1,)
        Diameter of the cluster divided at each split (non-increasing).
    n_features_in_ : int

    Raises
    ------
    ValueError
        From ``fit`` on a bad parameter, NaN/infinite data or fewer rows than
        ``n_clusters``.

    Notes
    -----
    Memory: the dense ``n x n`` float64 distance matrix (8 n^2 bytes).

    References
    ----------
    L. Kaufman and P. J. Rousseeuw, *Finding Groups in Data*, Wiley 1990, ch. 6.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.clustering.baselines import DIANA
    >>> X = np.array([[0.0], [1.0], [5.0], [6.0], [20.0]])
    >>> DIANA(n_clusters=3).fit(X).labels_.tolist()
    [0, 0, 1, 1, 2]
    """

    def fit(self, X, y=None):
        """Split ``X`` top-down into ``n_clusters`` clusters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data, no NaN or infinity.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        from scipy.spatial.distance import pdist, squareform

        validate_params(self)
        X = _check_fit_input(self, X)
        offset, factor = fit_scaling(X, self.scale)
        D = squareform(pdist(apply_scaling(X, offset, factor)))
        self.labels_, self.split_heights_ = diana(D, self.n_clusters)
        return self


# ---------------------------------------------------------------------------
# Gaussian mixtures chosen by BIC
# ---------------------------------------------------------------------------
class GaussianMixtureBIC(GaussianMixtureModel, ClusterMixin, BaseEstimator):
    """Gaussian mixture clustering with the covariance structure (and k) chosen by BIC.

    Fits scikit-learn's :class:`~sklearn.mixture.GaussianMixture` (EM) for
    every covariance type in :data:`COVARIANCE_TYPES` (or only the one
    given) and, with ``select_k=True``, every number of components from 1 to
    ``n_clusters``; keeps the fit with the lowest Bayesian information
    criterion ``BIC = -2 log L + p log n``. Instances go to their most
    probable component. This is the closest Python stand-in for R's Mclust
    (which the rule-ensembles paper uses); Mclust searches 14 covariance
    parametrisations, starts EM from model-based hierarchical agglomeration
    and reports BIC with the opposite sign (higher is better there).

    Parameters
    ----------
    n_clusters : int, default=3
        Number of components, or the largest one tried when ``select_k``.
    covariance_type : {"auto", "full", "tied", "diag", "spherical"}, default="auto"
        ``"auto"``: choose among the four by BIC.
    select_k : bool, default=False
        Also choose the number of components (1 .. n_clusters) by BIC, as
        Mclust does.
    n_init : int, default=1
        EM restarts per fit (>= 1), best likelihood kept.
    max_iter : int, default=100
        EM iterations per restart (>= 1).
    scale : {"none", "minmax", "zscore"}, default="none"
        Attribute scaling fitted on the training data.
    random_state : int, RandomState instance or None, default=None
        Seed of the k-means initialisations of EM.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Most probable component of every training instance.
    mixture_ : sklearn.mixture.GaussianMixture
        The chosen model (fitted in the scaled space). A record of the fit:
        prediction reads ``weights_``, ``means_`` and ``precision_factors_``,
        and a model file keeps those, not this object.
    weights_ : ndarray of shape (n_components_,)
        The chosen mixture's component weights.
    means_ : ndarray of shape (n_components_, n_features)
        Its component means, in the scaled space.
    precision_factors_ : ndarray of shape (n_factors,)
        Its ``precisions_cholesky_`` (Cholesky factors of the precision
        matrices), flattened in C order: ``n_components_ * n_features**2``
        values for "full", ``n_features**2`` for "tied", ``n_components_ *
        n_features`` for "diag", ``n_components_`` for "spherical".
    covariance_type_ : str
        Its covariance type.
    n_components_ : int
        Its number of components.
    bic_ : dict
        ``{n_components: {covariance_type: BIC}}`` of every fit tried (lower is
        better). A record of the fit that a model file does not keep.
    cluster_centers_ : ndarray of shape (n_components_, n_features)
        Component means, in input units.
    n_iter_ : int
        EM iterations of the chosen fit's best restart.
    n_features_in_ : int

    Raises
    ------
    ValueError
        From ``fit`` on a bad parameter, NaN/infinite data or fewer rows than
        ``n_clusters``.

    References
    ----------
    C. Fraley and A. E. Raftery, "Model-based clustering, discriminant
    analysis, and density estimation", JASA 97(458):611-631, 2002 (Mclust);
    G. Schwarz, "Estimating the dimension of a model", Ann. Stat. 6(2), 1978 (BIC).
    """

    def fit(self, X, y=None):
        """Fit the mixtures and keep the one with the lowest BIC.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data, no NaN or infinity.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        from sklearn.mixture import GaussianMixture

        validate_params(self)
        X = _check_fit_input(self, X)
        offset, factor = fit_scaling(X, self.scale)
        Xs = apply_scaling(X, offset, factor)
        types = COVARIANCE_TYPES if self.covariance_type == "auto" else (self.covariance_type,)
        ks = range(1, self.n_clusters + 1) if self.select_k else (self.n_clusters,)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        best, best_bic, bics = None, np.inf, {}
        for k in ks:
            for cov in types:
                gm = GaussianMixture(n_components=k, covariance_type=cov, n_init=self.n_init,
                                     max_iter=self.max_iter, random_state=int(seed)).fit(Xs)
                bic = float(gm.bic(Xs))
                bics.setdefault(k, {})[cov] = bic
                if bic < best_bic:  # strict: the first (smaller k, listed type) wins ties
                    best, best_bic = gm, bic
        self.mixture_ = best
        self.covariance_type_ = best.covariance_type
        self.n_components_ = int(best.n_components)
        self.bic_ = bics
        self.n_iter_ = int(best.n_iter_)
        self.scaling_offset_ = offset
        self.scaling_factor_ = factor
        # The chosen mixture as the arrays prediction reads (GaussianMixtureModel).
        self.weights_ = np.array(best.weights_, dtype=np.float64)
        self.means_ = np.array(best.means_, dtype=np.float64, order="C")
        self.precision_factors_ = np.array(best.precisions_cholesky_, dtype=np.float64,
                                           order="C").ravel()
        self.cluster_centers_ = undo_scaling(best.means_, offset, factor)
        self.labels_ = np.asarray(best.predict(Xs), dtype=np.intp)
        return self

    def _validated(self, X):
        check_is_fitted(self)
        with quiet_finite_check():
            return validate_data(self, X, dtype=np.float64, order="C", reset=False)

    def predict(self, X):
        """Most probable component of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            ``argmax_k log(w_k) + log N(x | mu_k, Sigma_k)`` in the scaled
            space (first on ties), as the chosen mixture's ``predict``.
        """
        return super().predict(self._validated(X))

    def predict_proba(self, X):
        """Posterior probability of every component for each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_components_)
            Rows sum to 1; the chosen mixture's ``predict_proba``.
        """
        return super().predict_proba(self._validated(X))


# ---------------------------------------------------------------------------
# random-forest clustering
# ---------------------------------------------------------------------------
class RandomForestClustering(RandomForestClusteringModel, ClusterMixin, BaseEstimator):
    """Random-forest clustering: PAM on one minus the unsupervised random-forest proximity.

    1. A synthetic copy of the data is made by permuting every column
       independently (same marginals, no dependence between attributes).
    2. A random forest (scikit-learn) is trained to tell the real rows (class
       1) from the synthetic ones (class 0).
    3. The proximity of two real rows is the fraction of trees in which they
       fall into the same leaf (Breiman's definition, over all trees).
    4. PAM (BUILD + SWAP) clusters the dissimilarity ``1 - proximity``.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters (>= 1, <= number of instances).
    n_estimators : int, default=500
        Trees in the forest (R randomForest's default).
    max_features : {"sqrt", "log2"} or float, default="sqrt"
        Attributes tried per split (``"sqrt"``: R's ``mtry = floor(sqrt(d))``
        for classification; scikit-learn rounds the same way).
    min_samples_leaf : int, default=1
        Minimum rows per leaf (R's ``nodesize`` 1 for classification).
    max_iter : int, default=300
        Maximum PAM swap passes.
    random_state : int, RandomState instance or None, default=None
        Seed of the permutations (first draw) and of the forest (second).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every training instance.
    medoid_indices_ : ndarray of shape (n_clusters,)
        Row numbers of the PAM medoids.
    forest_ : sklearn.ensemble.RandomForestClassifier
        The forest separating real from synthetic rows. A record of the fit:
        ``predict`` walks the trees' node arrays below, and a model file
        keeps those, not this object.
    tree_left_, tree_right_ : list of ndarray of shape (n_nodes_t,), int64
        Per tree, the left and right child of every node (-1 at a leaf):
        ``tree_.children_left`` and ``tree_.children_right`` of each member.
    tree_feature_ : list of ndarray of shape (n_nodes_t,), int64
        Per tree, the split feature of every node (-2 at a leaf).
    tree_threshold_ : list of ndarray of shape (n_nodes_t,), float64
        Per tree, the split threshold: a row goes left when its value,
        rounded to float32 as scikit-learn's trees round it, is ``<=`` it.
    medoid_leaves_ : ndarray of shape (n_clusters, n_estimators)
        Leaf of each medoid in each tree (used by ``predict``).
    n_iter_ : int
        PAM SWAP passes run.
    n_features_in_ : int

    Raises
    ------
    ValueError
        From ``fit`` on a bad parameter, NaN/infinite data or fewer rows than
        ``n_clusters``.

    Notes
    -----
    Memory: the dense ``n x n`` proximity matrix (8 n^2 bytes). Proximity
    here uses all trees; R's ``randomForest(proximity = TRUE)`` in
    unsupervised mode may count only out-of-bag pairs. Columns are permuted
    (sampling without replacement from each marginal); Shi & Horvath's
    "Addcl1" samples with replacement, which gives the same distribution.

    References
    ----------
    L. Breiman, "Random forests", Machine Learning 45:5-32, 2001 (proximity;
    unsupervised use in the accompanying manual); T. Shi and S. Horvath,
    "Unsupervised learning with random forest predictors", J. Comput. Graph.
    Stat. 15(1):118-138, 2006.
    """

    def fit(self, X, y=None):
        """Grow the forest on real vs. synthetic rows and cluster 1 - proximity with PAM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data, no NaN or infinity.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        from sklearn.ensemble import RandomForestClassifier

        validate_params(self)
        X = _check_fit_input(self, X)
        check_float32_range(X)  # the forest's trees read float32
        n, d = X.shape
        rng = check_random_state(self.random_state)
        synthetic = np.empty_like(X)
        for f in range(d):
            synthetic[:, f] = X[rng.permutation(n), f]
        forest = RandomForestClassifier(
            n_estimators=self.n_estimators, max_features=self.max_features,
            min_samples_leaf=self.min_samples_leaf, bootstrap=True,
            random_state=int(rng.randint(np.iinfo(np.int32).max)))
        forest.fit(np.vstack([X, synthetic]), np.r_[np.ones(n, dtype=int), np.zeros(n, dtype=int)])
        leaves = forest.apply(X)  # (n, T)
        proximity = self._proximity(leaves)
        dissimilarity = 1.0 - proximity
        np.fill_diagonal(dissimilarity, 0.0)
        labels, medoids, n_iter = _pam_on(dissimilarity, self.n_clusters, self.max_iter,
                                          int(rng.randint(np.iinfo(np.int32).max)))
        self.n_iter_ = n_iter
        self.forest_ = forest
        self.labels_ = labels
        self.medoid_indices_ = medoids
        self.medoid_leaves_ = np.array(leaves[medoids], dtype=np.int64)
        trees = [member.tree_ for member in forest.estimators_]
        self.tree_left_ = [np.array(tree.children_left, dtype=np.int64) for tree in trees]
        self.tree_right_ = [np.array(tree.children_right, dtype=np.int64) for tree in trees]
        self.tree_feature_ = [np.array(tree.feature, dtype=np.int64) for tree in trees]
        self.tree_threshold_ = [np.array(tree.threshold, dtype=np.float64) for tree in trees]
        return self

    @staticmethod
    def _proximity(leaves):
        """Share of trees in which two rows share a leaf: (L L^T) / T with L the leaf indicators."""
        from scipy import sparse

        n, n_trees = leaves.shape
        columns = np.empty_like(leaves, dtype=np.int64)
        offset = 0
        for t in range(n_trees):  # renumber each tree's leaves into its own column range
            _, codes = np.unique(leaves[:, t], return_inverse=True)
            columns[:, t] = codes.ravel() + offset
            offset += int(codes.max()) + 1
        indicator = sparse.csr_matrix(
            (np.ones(n * n_trees, dtype=np.float64), columns.ravel(),
             np.arange(0, n * n_trees + 1, n_trees)), shape=(n, offset))
        return (indicator @ indicator.T).toarray() / n_trees

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
        check_is_fitted(self)
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        return super().predict(X)
