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

from ..constraints import MAX_ITERATIONS, MAX_MEMBERS, MAX_TREES, Constraint, validate_params
from ..trust import (
    CheckContext,
    checked_array,
    count_attr,
    feature_count,
    fitted_member,
    fitted_only,
    float_array,
    instance_list,
    int_array,
    nested_attr,
)
from .kmeans import (
    PROTOTYPE_CONSTRAINTS,
    _BasePrototypeClustering,
    _check_prototypes,
    _scaling,
    apply_scaling,
    fit_scaling,
    undo_scaling,
)

__all__ = ["COVARIANCE_TYPES", "DIANA", "GaussianMixtureBIC", "PAM", "RandomForestClustering", "diana"]

#: Covariance structures searched by :class:`GaussianMixtureBIC` (scikit-learn's names).
COVARIANCE_TYPES = ("full", "tied", "diag", "spherical")

# Rows per block when predicting with the forest proximity.
_PREDICT_ROWS = 256


def _check_fit_input(estimator, X):
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
def _check_pam(est, ctx: CheckContext) -> None:
    """``PAM``: medoids are training rows; their scaled values are the centres."""
    _, k, labels = _check_prototypes(est, ctx)
    medoids = int_array(ctx, ctx.attr(est, "medoid_indices_"), "medoid_indices_", high=labels.size,
                        shape=(k,))
    if np.unique(medoids).size != k:
        ctx.fail("medoid_indices_ repeats a row")


class PAM(_BasePrototypeClustering):
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

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_pam))

    _parameter_constraints = {
        "n_clusters": PROTOTYPE_CONSTRAINTS["n_clusters"],
        "scale": PROTOTYPE_CONSTRAINTS["scale"],
        "max_iter": Constraint("int", "maximum SWAP passes", low=1, high=MAX_ITERATIONS),
        "random_state": Constraint("any", "passed to kmedoids (BUILD and SWAP are deterministic)"),
    }

    def __init__(self, n_clusters=3, *, scale="none", max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state

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


def _check_diana(est, ctx: CheckContext) -> None:
    """``DIANA``: labels of the training rows and the heights of the ``n_clusters - 1`` splits."""
    feature_count(ctx, est)
    k = count_attr(ctx, est, "n_clusters")
    labels = int_array(ctx, ctx.attr(est, "labels_"), "labels_", high=k, ndim=1)
    if labels.size < k:
        ctx.fail(f"labels_ has fewer rows than n_clusters = {k}")
    float_array(ctx, ctx.attr(est, "split_heights_"), "split_heights_", low=0, shape=(k - 1,))


class DIANA(ClusterMixin, BaseEstimator):
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

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_diana))

    _parameter_constraints = {
        "n_clusters": PROTOTYPE_CONSTRAINTS["n_clusters"],
        "scale": PROTOTYPE_CONSTRAINTS["scale"],
    }

    def __init__(self, n_clusters=3, *, scale="none"):
        self.n_clusters = n_clusters
        self.scale = scale

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
def _check_gaussian_mixture_bic(est, ctx: CheckContext) -> None:
    """``GaussianMixtureBIC``: the chosen mixture has ``n_components_`` means of the input width."""
    from sklearn.mixture import GaussianMixture

    d = feature_count(ctx, est)
    mixture = ctx.instance(ctx.attr(est, "mixture_"), "mixture_", (GaussianMixture,))
    fitted_member(ctx, mixture, "mixture_", d)
    kind = ctx.choice(est, "covariance_type_", COVARIANCE_TYPES)
    inner = nested_attr(ctx, mixture, "covariance_type", "mixture_.covariance_type")
    if type(inner) is not str or inner != kind:
        ctx.fail("covariance_type_ is not the mixture's covariance type")
    k = count_attr(ctx, est, "n_components_")
    if ctx.integer(mixture, "mixture_.n_components", value=nested_attr(ctx, mixture, "n_components")) != k:
        ctx.fail("n_components_ is not the mixture's number of components")
    checked_array(ctx, nested_attr(ctx, mixture, "means_", "mixture_.means_"), "mixture_.means_",
                  kinds="f", shape=(k, d))
    checked_array(ctx, nested_attr(ctx, mixture, "weights_", "mixture_.weights_"),
                  "mixture_.weights_", kinds="f", shape=(k,))
    float_array(ctx, ctx.attr(est, "cluster_centers_"), "cluster_centers_", shape=(k, d))
    _scaling(ctx, est, d)
    int_array(ctx, ctx.attr(est, "labels_"), "labels_", high=k, ndim=1)
    bic = ctx.attr(est, "bic_")
    if type(bic) is not dict or not all(
            type(n) is int and type(fits) is dict
            and all(type(c) is str and type(b) is float for c, b in fits.items())
            for n, fits in bic.items()):
        ctx.fail("bic_ is not {n_components: {covariance_type: BIC}}")


class GaussianMixtureBIC(ClusterMixin, BaseEstimator):
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
        The chosen model (fitted in the scaled space).
    covariance_type_ : str
        Its covariance type.
    n_components_ : int
        Its number of components.
    bic_ : dict
        ``{n_components: {covariance_type: BIC}}`` of every fit tried (lower is
        better; plain keys so that the model can be saved).
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

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_gaussian_mixture_bic))

    def __init__(self, n_clusters=3, *, covariance_type="auto", select_k=False, n_init=1,
                 max_iter=100, scale="none", random_state=None):
        self.n_clusters = n_clusters
        self.covariance_type = covariance_type
        self.select_k = select_k
        self.n_init = n_init
        self.max_iter = max_iter
        self.scale = scale
        self.random_state = random_state

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
        self.cluster_centers_ = undo_scaling(best.means_, offset, factor)
        self.labels_ = np.asarray(best.predict(Xs), dtype=np.intp)
        return self

    def _scaled(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        return apply_scaling(X, self.scaling_offset_, self.scaling_factor_)

    def predict(self, X):
        """Most probable component of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        Xs = self._scaled(X)
        return np.asarray(self.mixture_.predict(Xs), dtype=np.intp)

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
        Xs = self._scaled(X)
        return self.mixture_.predict_proba(Xs)


# ---------------------------------------------------------------------------
# random-forest clustering
# ---------------------------------------------------------------------------
def _check_rf_clustering(est, ctx: CheckContext) -> None:
    """``RandomForestClustering``: medoid rows and their leaf in every tree of the forest."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    d = feature_count(ctx, est)
    k = count_attr(ctx, est, "n_clusters")
    forest = ctx.instance(ctx.attr(est, "forest_"), "forest_", (RandomForestClassifier,))
    fitted_member(ctx, forest, "forest_", d)
    trees = instance_list(ctx, nested_attr(ctx, forest, "estimators_", "forest_.estimators_"),
                          "forest_.estimators_", (DecisionTreeClassifier,), nonempty=True)
    labels = int_array(ctx, ctx.attr(est, "labels_"), "labels_", high=k, ndim=1)
    medoids = int_array(ctx, ctx.attr(est, "medoid_indices_"), "medoid_indices_", high=labels.size,
                        shape=(k,))
    if np.unique(medoids).size != k:
        ctx.fail("medoid_indices_ repeats a row")
    int_array(ctx, ctx.attr(est, "medoid_leaves_"), "medoid_leaves_", shape=(k, len(trees)))


class RandomForestClustering(ClusterMixin, BaseEstimator):
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
        The forest separating real from synthetic rows.
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

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_rf_clustering))

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

    def __init__(self, n_clusters=3, *, n_estimators=500, max_features="sqrt", min_samples_leaf=1,
                 max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.max_iter = max_iter
        self.random_state = random_state

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
        self.medoid_leaves_ = leaves[medoids].copy()
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
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        leaves = self.forest_.apply(X)
        out = np.empty(X.shape[0], dtype=np.intp)
        for start in range(0, X.shape[0], _PREDICT_ROWS):
            block = leaves[start:start + _PREDICT_ROWS]
            shared = (block[:, None, :] == self.medoid_leaves_[None, :, :]).sum(axis=2)
            out[start:start + _PREDICT_ROWS] = self.labels_[self.medoid_indices_][shared.argmax(axis=1)]
        return out
