"""The prototype clusterers' fitted model: scale a row, give it the nearest prototype (numpy only).

K-means (:class:`ensemblekit.clustering.kmeans.KMeans`), IEK-m, PAM and the
cluster ensembles all label a new row the same way: scale it with the map
fitted on the training data, then take the nearest prototype (squared
Euclidean distance, lowest index on ties). This module holds that rule, the
scaling map it reads, the parameters those estimators share, and
:class:`KMeansModel`, the part of :class:`~ensemblekit.clustering.kmeans.KMeans`
that a model file rebuilds. It imports numpy and nothing of scikit-learn, so
``ensemblekit predict`` and ``show`` run without it.

Source: Algorithm 5 (K-means) of Abbasian, Drummond, Japkowicz and Matwin,
*Inner Ensembles: Using Ensemble Methods Inside the Learning Algorithm*,
ECML PKDD 2013, LNAI 8190, pp. 33-48.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.constraints import MAX_ITERATIONS, Constraint
from ensemblekit.rows import check_rows
from ensemblekit.state import Array, Scalar

__all__ = [
    "INIT_METHODS",
    "PROTOTYPE_CONSTRAINTS",
    "PROTOTYPE_STATE",
    "SCALE_METHODS",
    "SCALING_STATE",
    "KMeansModel",
    "PrototypeModel",
    "apply_scaling",
    "nearest_center",
    "undo_scaling",
]

#: Names accepted by the ``scale`` parameter.
SCALE_METHODS = ("none", "minmax", "zscore")

#: Names accepted by the ``init`` parameter (an explicit array is accepted too).
INIT_METHODS = ("random", "k-means++")

#: The parameters of :class:`KMeansModel`, which the other prototype clusterers share.
PROTOTYPE_CONSTRAINTS = {
    "n_clusters": Constraint("int", "number of clusters k (cluster -k sets it)", low=1),
    "init": Constraint("choice", "initial centres: k distinct instances, or k-means++",
                       choices=INIT_METHODS, array_ok=True),
    "scale": Constraint("choice", "attribute scaling fitted on the training data",
                        choices=SCALE_METHODS),
    "max_iter": Constraint("int", "maximum number of assignment/update iterations", low=1,
                          high=MAX_ITERATIONS),
    "random_state": Constraint("any", "seed: its first draw chooses the initial centres"),
}

#: The scaling map a fit leaves: ``scaled = (X - scaling_offset_) / scaling_factor_``.
SCALING_STATE = {
    "n_features_in_": Scalar("int", low=1),
    "scaling_offset_": Array("float64", ("n_features_in_",)),
    "scaling_factor_": Array("float64", ("n_features_in_",)),
}

#: Binary exponent above which ``scale="none"`` divides the data by a common power of two
#: (:func:`ensemblekit.clustering.kmeans.fit_scaling`): every scaled training value, and so
#: every prototype a fit leaves, is smaller than ``2**LARGE_EXPONENT`` in magnitude, and
#: their squared distances stay finite.
LARGE_EXPONENT = 400

#: What a prototype clusterer with exactly ``n_clusters`` prototypes leaves.
PROTOTYPE_STATE = {
    **SCALING_STATE,
    "scaled_centers_": Array("float64", ("n_clusters", "n_features_in_"),
                             low=-2.0 ** LARGE_EXPONENT, high=2.0 ** LARGE_EXPONENT),
    "cluster_centers_": Array("float64", ("n_clusters", "n_features_in_")),
    "labels_": Array("int64", ("n_samples",), low=0, below="n_clusters"),
    "inertia_": Scalar("float", low=0),
    "n_iter_": Scalar("int", low=0),
}

# Rows per block when assigning new rows to their nearest prototype in predict.
_PREDICT_CHUNK = 4096


def apply_scaling(X, offset, factor):
    """Scale rows with a map learnt by :func:`ensemblekit.clustering.kmeans.fit_scaling`.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data in input units.
    offset, factor : ndarray of shape (n_features,)
        The fitted map (``factor > 0``).

    Returns
    -------
    ndarray of shape (n_samples, n_features)
        ``(X - offset) / factor`` as a new C-contiguous float64 array.
    """
    return np.ascontiguousarray((np.asarray(X, dtype=np.float64) - offset) / factor)


def undo_scaling(Xs, offset, factor):
    """Map scaled rows (for example cluster centres) back to input units.

    Parameters
    ----------
    Xs : ndarray of shape (n_rows, n_features)
        Rows in the scaled space.
    offset, factor : ndarray of shape (n_features,)
        The fitted map.

    Returns
    -------
    ndarray of shape (n_rows, n_features)
        ``Xs * factor + offset``.
    """
    return np.asarray(Xs, dtype=np.float64) * factor + offset


def nearest_center(Xs, centers):
    """Index of the nearest centre of each row (squared Euclidean, first index on ties).

    ``||x - c||^2 - ||x||^2 = ||c||^2 - 2 x.c`` is compared, by blocks of rows,
    so the work memory stays ``4096 x n_centres`` values.

    Parameters
    ----------
    Xs : ndarray of shape (n_samples, n_features)
        Rows in the space of the centres.
    centers : ndarray of shape (n_centres, n_features)

    Returns
    -------
    ndarray of shape (n_samples,), intp
    """
    c_sq = np.einsum("ij,ij->i", centers, centers)
    labels = np.empty(Xs.shape[0], dtype=np.intp)
    for start in range(0, Xs.shape[0], _PREDICT_CHUNK):
        block = Xs[start : start + _PREDICT_CHUNK] @ centers.T
        block *= -2.0
        block += c_sq
        labels[start : start + _PREDICT_CHUNK] = block.argmin(axis=1)
    return labels


def check_scaling(model, ctx) -> None:
    """Refuse a scaling map with a factor that is not positive (a fit gives ``factor > 0``).

    Parameters
    ----------
    model : object
        Holds ``scaling_factor_`` (already checked against its declaration).
    ctx : ensemblekit.trust.CheckContext
    """
    if model.scaling_factor_.size and not model.scaling_factor_.min() > 0:
        ctx.fail("scaling_factor_ holds a factor that is not positive")


class PrototypeModel:
    """Nearest-prototype labelling of new rows, shared by the prototype clusterers.

    A subclass declares ``_fitted_state`` holding at least :data:`SCALING_STATE`
    and ``scaled_centers_``; ``predict`` and ``score`` read nothing else.
    """

    def _check_state(self, ctx) -> None:
        check_scaling(self, ctx)

    def model_size(self) -> int:
        """The clustering's size for ``-m model-size``: its number of prototypes (clusters)."""
        return int(self.scaled_centers_.shape[0])

    #: What ``-m structure-stability`` compares: the partition of the rows a fit clustered
    #: (its ``fit_predict`` labels), by the adjusted Rand index (see
    #: :mod:`ensemblekit.scores.structure`).
    structure_kind = "partition"

    def _scaled_rows(self, X):
        X = check_rows(self, X, allow_nan=False)
        return apply_scaling(X, self.scaling_offset_, self.scaling_factor_)

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
            Index of the nearest row of ``scaled_centers_``.

        Raises
        ------
        NotFittedError
            If called before ``fit``.
        ValueError
            On NaN/infinite data or a wrong number of columns.
        """
        return nearest_center(self._scaled_rows(X), self.scaled_centers_)

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
        Xs = self._scaled_rows(X)
        labels = nearest_center(Xs, self.scaled_centers_)
        return -float(((Xs - self.scaled_centers_[labels]) ** 2).sum())


class KMeansModel(PrototypeModel):
    """The fitted part of :class:`~ensemblekit.clustering.kmeans.KMeans` (see there).

    Holds the parameters, the declaration of the state a fit leaves, and the
    prediction (nearest prototype after scaling).

    Parameters
    ----------
    n_clusters : int, default=3
    init : {"random", "k-means++"} or array-like of shape (n_clusters, n_features), default="random"
    scale : {"none", "minmax", "zscore"}, default="none"
    max_iter : int, default=300
    random_state : int, RandomState instance or None, default=None
    """

    _parameter_constraints = PROTOTYPE_CONSTRAINTS

    _fitted_state = PROTOTYPE_STATE

    def __init__(self, n_clusters=3, *, init="random", scale="none", max_iter=300,
                 random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state
