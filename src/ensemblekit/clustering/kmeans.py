"""Lloyd's K-means with a seeded, shareable initialisation and optional scaling.

This module holds the pieces that plain K-means (:class:`KMeans`) and the
Inner Ensemble K-means (:class:`ensemblekit.clustering.inner_kmeans.InnerEnsembleKMeans`)
have in common:

* :func:`initial_centers` -- the seeded choice of starting centres (``"random"``:
  ``k`` distinct instances; ``"k-means++"``), and the private ``_seeded_start``,
  the one place where an estimator's ``random_state`` becomes those centres, so
  K-means, IEK-m and the cluster-ensemble members start from the very same
  prototypes, as the Inner Ensembles experiments do;
* the attribute scaling helpers :func:`fit_scaling`, :func:`apply_scaling` and
  :func:`undo_scaling` (``"none"``, ``"minmax"``, ``"zscore"``; the last two
  live in :mod:`ensemblekit.clustering.kmeans_model`);
* a private base class that fits the prototypes and checks the input of
  ``predict``, ``transform`` and ``score`` as scikit-learn does; the
  prediction itself (nearest prototype) is the model class's, in
  :mod:`ensemblekit.clustering.kmeans_model`, which a model file rebuilds
  without scikit-learn.

Source: Algorithm 5 (K-means) of Abbasian, Drummond, Japkowicz and Matwin,
*Inner Ensembles: Using Ensemble Methods Inside the Learning Algorithm*,
ECML PKDD 2013, LNAI 8190, pp. 33-48.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ensemblekit.errors import InputError

from ..constraints import validate_params
from ..rows import quiet_finite_check
from .kmeans_model import (
    INIT_METHODS,
    LARGE_EXPONENT,
    PROTOTYPE_CONSTRAINTS,
    SCALE_METHODS,
    KMeansModel,
    PrototypeModel,
    apply_scaling,
    undo_scaling,
)

__all__ = [
    "INIT_METHODS",
    "PROTOTYPE_CONSTRAINTS",
    "SCALE_METHODS",
    "KMeans",
    "apply_scaling",
    "fit_scaling",
    "initial_centers",
    "undo_scaling",
]

# ---------------------------------------------------------------------------
# Scaling helpers
# ---------------------------------------------------------------------------
def fit_scaling(X, scale="none"):
    """Learn the per-attribute affine map used to scale the data before clustering.

    The scaled data are ``(X - offset) / factor``, column by column.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training data, float64, no NaN.
    scale : {"none", "minmax", "zscore"}, default="none"
        ``"none"``: raw attributes (offset 0, factor 1), as in the Inner
        Ensembles experiments. ``"minmax"``: each attribute mapped onto [0, 1]
        (offset = column minimum, factor = column range), what Weka's
        SimpleKMeans does by default. ``"zscore"``: offset = column mean,
        factor = column standard deviation (population, ddof=0).
        A constant column (range or standard deviation 0) gets factor 1, so it
        maps to 0 instead of dividing by zero.

    Returns
    -------
    offset : ndarray of shape (n_features,)
        Subtracted from every row, in input units.
    factor : ndarray of shape (n_features,)
        Divisor applied after the offset; always > 0.

    Raises
    ------
    ValueError
        If ``scale`` is not one of :data:`SCALE_METHODS`, or if ``"minmax"`` or
        ``"zscore"`` is asked of an attribute whose range or mean overflows
        float64 (values near ±1.8e308).

    Notes
    -----
    Very large values: squared Euclidean distances overflow once values reach
    about 1e154, so ``"none"`` divides *every* attribute by one common power of
    two when the largest absolute value is 2**400 (about 2.6e120) or more, bringing
    it near 2**400. A common power of two changes no distance ratio and rounds
    nothing, so the clusters are the ones the raw data define; prototypes are
    reported in input units. ``"minmax"`` and ``"zscore"`` cannot represent an
    attribute that spans more than the largest float, and refuse it.
    """
    _check_scale(scale)
    X = np.asarray(X, dtype=np.float64)
    n_features = X.shape[1]
    if scale == "none":
        return np.zeros(n_features), np.full(n_features, _common_factor(X))
    with np.errstate(over="ignore", invalid="ignore"):
        if scale == "minmax":
            offset = X.min(axis=0)
            factor = X.max(axis=0) - offset
        else:  # zscore
            offset = X.mean(axis=0)
            factor = X.std(axis=0)
    bad = ~(np.isfinite(offset) & np.isfinite(factor))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"scale={scale!r}: feature {j} holds values too large for it (its "
            f"{'range' if scale == 'minmax' else 'mean or standard deviation'} overflows "
            "float64); rescale the data, or use scale='none'")
    factor = np.where(factor > 0, factor, 1.0)
    return offset, factor




def _common_factor(X) -> float:
    """1.0, or the power of two that brings ``max |X|`` down to about 2**400 (see fit_scaling)."""
    if X.size == 0:
        return 1.0
    exponent = math.frexp(float(np.max(np.abs(X))))[1]
    return math.ldexp(1.0, exponent - LARGE_EXPONENT) if exponent > LARGE_EXPONENT else 1.0


# ---------------------------------------------------------------------------
# Initialisation
# ---------------------------------------------------------------------------
def _initial_center_indices(X, n_clusters, init, random_state):
    """Row indices of the starting centres for ``init`` in {"random", "k-means++"}."""
    n_samples = X.shape[0]
    if n_samples < n_clusters:
        raise InputError(
            f"n_samples={n_samples} should be >= n_clusters={n_clusters}."
        )
    rng = check_random_state(random_state)
    if init == "random":
        # First occurrence of every distinct row, kept in file order so the
        # choice below depends only on the data and the seed.
        _, first = np.unique(X, axis=0, return_index=True)
        first = np.sort(first)
        if first.size < n_clusters:
            raise InputError(
                f"init='random' needs n_clusters={n_clusters} distinct instances, "
                f"but X has only {first.size} distinct rows."
            )
        pick = rng.choice(first.size, size=n_clusters, replace=False)
        return first[pick]
    # k-means++ (Arthur & Vassilvitskii 2007) as implemented by scikit-learn.
    from sklearn.cluster import kmeans_plusplus

    _, indices = kmeans_plusplus(X, n_clusters, random_state=rng)
    return np.asarray(indices, dtype=np.intp)


def initial_centers(X, n_clusters, init="random", random_state=None):
    """Choose the starting prototypes of K-means (line 1 of Algorithms 5 and 6).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data in the space the clustering runs in (scaled, if scaling is used).
        Numeric, no NaN.
    n_clusters : int
        Number of centres ``k``, 1 <= k <= n_samples.
    init : {"random", "k-means++"} or array-like of shape (n_clusters, n_features), default="random"
        ``"random"``: ``k`` distinct instances drawn uniformly without
        replacement among the distinct rows of ``X`` (rows equal in value
        count once). ``"k-means++"``: scikit-learn's
        :func:`sklearn.cluster.kmeans_plusplus` seeding. An array: used as is
        (a copy is returned).
    random_state : int, RandomState instance or None, default=None
        Seed of the draw; the same seed gives the same centres. The estimators
        seed this draw with the first draw of their own ``random_state`` (so
        ``initial_centers(X, k, random_state=0)`` is not ``KMeans(k,
        random_state=0)``'s start).

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
        The starting centres, in the units of ``X``.

    Raises
    ------
    ValueError
        If ``n_clusters`` is not a positive integer, ``init`` is an unknown
        name, an array of the wrong shape, ``X`` has fewer than ``n_clusters``
        rows, or (``"random"``) fewer than ``n_clusters`` distinct rows.

    References
    ----------
    Abbasian, Drummond, Japkowicz, Matwin, *Inner Ensembles*, ECML PKDD 2013,
    Algorithms 5 and 6, line 1; section 3.2 (K-means and IEK-m are run from the
    same initial centres).
    """
    with quiet_finite_check():
        X = check_array(X, dtype=np.float64)
    _check_n_clusters(n_clusters)
    if _is_array_init(init):
        return _check_init_array(init, n_clusters, X.shape[1])
    _check_init_name(init)
    return X[_initial_center_indices(X, n_clusters, init, random_state)].copy()


class _SeededStart(NamedTuple):
    """What :func:`_seeded_start` hands an estimator (see there)."""

    rng: np.random.RandomState
    offset: np.ndarray
    factor: np.ndarray
    Xs: np.ndarray
    init_centers: np.ndarray | None
    init_scaled: np.ndarray | None


def _seeded_start(X, n_clusters, init, scale, random_state, with_centers=True):
    """Scale the data and choose the starting centres from the estimator's seed.

    The one place where K-means, IEK-m and the K-means members of the cluster
    ensembles turn ``random_state`` into starting centres, so that all of them
    start from the very same centres under the same seed.

    The guarantee: the first draw of the random stream of ``random_state``
    (one ``randint`` below 2**31 - 1) seeds the choice of the centres, and
    nothing else does. The stream is returned after that one draw; what a
    caller draws from it afterwards (IEK-m's feature subsets, the members'
    subsets, a consensus function's own draws) cannot change the centres.
    Hence for equal ``X``, ``n_clusters``, ``init``, ``scale`` and an integer
    ``random_state``, :class:`KMeans`,
    :class:`~ensemblekit.clustering.inner_kmeans.InnerEnsembleKMeans` and the
    members of :mod:`ensemblekit.clustering.consensus` get bit-identical
    centres. This is the protocol of the Inner Ensembles experiments, where
    K-means, IEK-m and the cluster-ensemble members of a run share their
    initial centres.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training data in input units (float64, finite, checked by the caller),
        ``n_samples >= n_clusters``.
    n_clusters : int
        Number of centres ``k`` (>= 1, checked by the caller).
    init : {"random", "k-means++"} or array-like of shape (n_clusters, n_features)
        See :func:`initial_centers`; a name is chosen in the scaled space
        (``"random"``: ``k`` distinct instances), an array is given in input
        units and only scaled.
    scale : {"none", "minmax", "zscore"}
        Attribute scaling, see :func:`fit_scaling`.
    random_state : int, RandomState instance or None
        The estimator's seed. A RandomState instance is advanced by one draw
        and returned as ``rng``.
    with_centers : bool, default=True
        False: draw the seed and scale, but choose no centres (a cluster
        ensemble given its members); ``init_centers`` and ``init_scaled`` are
        then None. The stream is advanced all the same.

    Returns
    -------
    start : _SeededStart
        ``rng`` (the stream after its first draw), ``offset`` and ``factor``
        (the scaling map, shape (n_features,)), ``Xs`` (the scaled data, shape
        (n_samples, n_features)), ``init_centers`` (input units) and
        ``init_scaled`` (scaled space), both of shape (n_clusters, n_features).

    Raises
    ------
    ValueError
        If ``init`` is an array of the wrong shape, or (``"random"``) ``X`` has
        fewer than ``n_clusters`` distinct rows.

    References
    ----------
    Abbasian, Drummond, Japkowicz, Matwin, *Inner Ensembles: Using Ensemble
    Methods Inside the Learning Algorithm*, ECML PKDD 2013, LNAI 8190,
    Algorithms 5 and 6, line 1, and section 3.2: K-means and IEK-m start from
    the same initial centres, and the cluster-ensemble members are generated
    "the similar way".
    """
    rng = check_random_state(random_state)
    init_seed = rng.randint(np.iinfo(np.int32).max)
    offset, factor = fit_scaling(X, scale)
    Xs = apply_scaling(X, offset, factor)
    if not with_centers:
        return _SeededStart(rng, offset, factor, Xs, None, None)
    if _is_array_init(init):
        init_centers = _check_init_array(init, n_clusters, X.shape[1])
        init_scaled = apply_scaling(init_centers, offset, factor)
    else:
        idx = _initial_center_indices(Xs, n_clusters, init, init_seed)
        init_centers = X[idx].copy()
        init_scaled = Xs[idx].copy()
    return _SeededStart(rng, offset, factor, Xs, init_centers, init_scaled)


# ---------------------------------------------------------------------------
# Parameter checks of the functions, against the estimators' declarations
# ---------------------------------------------------------------------------
def _check_n_clusters(n_clusters):
    PROTOTYPE_CONSTRAINTS["n_clusters"].check(n_clusters, "n_clusters")


def _check_scale(scale):
    PROTOTYPE_CONSTRAINTS["scale"].check(scale, "scale")


def _is_array_init(init):
    return not isinstance(init, str) and hasattr(init, "__len__")


def _check_init_name(init):
    PROTOTYPE_CONSTRAINTS["init"].check(init, "init")


def _check_init_array(init, n_clusters, n_features):
    centers = check_array(init, dtype=np.float64, copy=True, order="C")
    if centers.shape != (n_clusters, n_features):
        raise InputError(
            f"init array has shape {centers.shape}, expected "
            f"(n_clusters, n_features) = ({n_clusters}, {n_features})."
        )
    return centers


# ---------------------------------------------------------------------------
# Shared estimator base
# ---------------------------------------------------------------------------
class _BasePrototypeClustering(
    PrototypeModel, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin, BaseEstimator
):
    """Fit skeleton, scikit-learn's input checks and ``transform`` of the prototype clusterers.

    An estimator is ``class Name(NameModel, _BasePrototypeClustering)``: its
    model class (a :class:`~ensemblekit.clustering.kmeans_model.PrototypeModel`)
    sets ``n_clusters``, ``init``, ``scale``, ``max_iter`` and ``random_state``
    in ``__init__`` and declares them; the estimator implements
    ``_run(Xs, init_scaled, rng)``, which returns ``(centers_scaled, labels,
    inertia, n_iter)`` in the scaled space. ``PrototypeModel`` comes after
    this class in the estimator's method order, so ``predict`` and ``score``
    here check the input as scikit-learn does (feature names, fitted state)
    and then run the model's.
    """

    def _run(self, Xs, init_scaled, rng):  # pragma: no cover - overridden
        raise NotImplementedError

    def fit(self, X, y=None):
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric training data, no NaN or infinity.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            On a bad parameter value, NaN/infinite/non-numeric data, fewer
            rows than ``n_clusters``, or (``init="random"``) fewer distinct rows
            than ``n_clusters``.
        """
        validate_params(self)
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, order="C")
        n_samples = X.shape[0]
        if n_samples < self.n_clusters:
            raise InputError(
                f"n_samples={n_samples} should be >= n_clusters={self.n_clusters}."
            )

        # The same starting centres as every estimator sharing this seed; the
        # stream's later draws are the subclass's own (feature subsets for IEK-m).
        start = _seeded_start(X, self.n_clusters, self.init, self.scale, self.random_state)
        centers_scaled, labels, inertia, n_iter = self._run(
            start.Xs, start.init_scaled, start.rng
        )
        offset, factor = start.offset, start.factor

        self.scaling_offset_ = offset
        self.scaling_factor_ = factor
        self.init_centers_ = start.init_centers
        self.scaled_centers_ = centers_scaled
        self.cluster_centers_ = undo_scaling(centers_scaled, offset, factor)
        self.labels_ = np.asarray(labels, dtype=np.intp)
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        self._n_features_out = self.n_clusters
        return self

    def _validated(self, X):
        check_is_fitted(self)
        with quiet_finite_check():
            return validate_data(self, X, dtype=np.float64, order="C", reset=False)

    def _scaled_input(self, X):
        return apply_scaling(self._validated(X), self.scaling_offset_, self.scaling_factor_)

    def predict(self, X):
        """Assign each row to its nearest prototype (full feature space).

        Distances are Euclidean in the scaled space the model was fitted in;
        on equal distances the lowest centre index wins.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data in input units.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster index in ``0 .. n_clusters - 1``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            On NaN/infinite data or a wrong number of columns.
        """
        return super().predict(self._validated(X))

    def transform(self, X):
        """Euclidean distance of each row to every prototype, in the scaled space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data in input units.

        Returns
        -------
        distances : ndarray of shape (n_samples, n_clusters)
            Non-negative distances (scaled units).
        """
        from sklearn.metrics.pairwise import euclidean_distances

        return euclidean_distances(self._scaled_input(X), self.scaled_centers_)

    def score(self, X, y=None):
        """Opposite of the sum of squared distances to the nearest prototype.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data in input units.
        y : None
            Ignored.

        Returns
        -------
        score : float
            ``-sum_i min_c ||x_i - mu_c||^2`` in the scaled space (<= 0; higher
            is better).
        """
        return super().score(self._validated(X))


class KMeans(KMeansModel, _BasePrototypeClustering):
    """Lloyd's K-means from an explicit, seeded initialisation.

    The baseline of the Inner Ensembles paper (Algorithm 5): alternately assign
    every instance to its nearest centre (squared Euclidean distance) and move
    every centre to the mean of its instances, until no assignment changes or
    ``max_iter`` steps have run. The iterations are scikit-learn's
    :class:`sklearn.cluster.KMeans` with ``algorithm="lloyd"``, ``n_init=1``,
    ``tol=0`` and ``init`` set to the centres chosen here, so a run is one
    Lloyd descent from known centres. Given the same ``random_state``,
    :class:`~ensemblekit.clustering.inner_kmeans.InnerEnsembleKMeans` starts
    from identical centres (``init_centers_``).

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters ``k`` (>= 1, <= number of instances).
    init : {"random", "k-means++"} or array-like of shape (n_clusters, n_features), default="random"
        Starting centres, see :func:`initial_centers`. ``"random"`` picks
        ``k`` distinct instances. An array is given in input units.
    scale : {"none", "minmax", "zscore"}, default="none"
        Attribute scaling fitted on the training data, see
        :func:`fit_scaling`. ``"none"`` reproduces the paper (raw attributes);
        Weka's SimpleKMeans uses ``"minmax"``. Clustering, ``predict``,
        ``transform`` and ``inertia_`` use the scaled space; centres are
        reported in input units.
    max_iter : int, default=300
        Maximum number of assignment/update steps (>= 1).
    random_state : int, RandomState instance or None, default=None
        Seed. Its first draw seeds the initialisation.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Final centres (prototypes), in input units.
    scaled_centers_ : ndarray of shape (n_clusters, n_features)
        The same centres in the scaled space (what ``predict`` uses).
    labels_ : ndarray of shape (n_samples,)
        Cluster index of every training instance, in ``0 .. n_clusters - 1``.
    n_iter_ : int
        Number of assignment steps run (1 .. max_iter).
    inertia_ : float
        Sum of squared distances of the instances to their centre, in the
        scaled space.
    init_centers_ : ndarray of shape (n_clusters, n_features)
        Starting centres, in input units. A record of the fit: a model file
        does not keep it.
    scaling_offset_, scaling_factor_ : ndarray of shape (n_features,)
        The scaling map: scaled = (X - scaling_offset_) / scaling_factor_.
    n_features_in_ : int
        Number of attributes seen in ``fit``.

    Notes
    -----
    The iteration stops at the first step whose assignment equals the previous
    one (or whose centres did not move at all), as in line 9 of Algorithm 5.
    scikit-learn centres the data on its column means before iterating, for
    accuracy; an empty cluster is moved onto the instance farthest from its
    own centre.

    References
    ----------
    Abbasian, Drummond, Japkowicz, Matwin, *Inner Ensembles: Using Ensemble
    Methods Inside the Learning Algorithm*, ECML PKDD 2013, Algorithm 5.
    Lloyd, *Least squares quantization in PCM*, IEEE Trans. Inf. Theory, 1982.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.clustering.kmeans import KMeans
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> km = KMeans(n_clusters=2, init=[[0.0], [11.0]]).fit(X)
    >>> km.cluster_centers_.ravel().tolist()
    [0.5, 10.5]
    """

    def _run(self, Xs, init_scaled, rng):
        from sklearn.cluster import KMeans as _SkKMeans

        km = _SkKMeans(
            n_clusters=self.n_clusters,
            init=init_scaled,
            n_init=1,
            max_iter=self.max_iter,
            tol=0.0,
            algorithm="lloyd",
        ).fit(Xs)
        return km.cluster_centers_, km.labels_, km.inertia_, km.n_iter_
