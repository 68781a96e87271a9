"""IEK-m's fitted model: its parameters, its declared state, nearest-prototype labels (numpy only).

IEK-m (:class:`ensemblekit.clustering.inner_kmeans.InnerEnsembleKMeans`)
votes only while it fits: its centres are ordinary means, so a new row goes
to the nearest centre in the full feature space, as with K-means
(:class:`~ensemblekit.clustering.kmeans_model.PrototypeModel`). This module
holds the parameters IEK-m adds (shared with the cluster ensembles) and
:class:`InnerEnsembleKMeansModel`, the part a model file rebuilds.

Source: Algorithm 6 of Abbasian, Drummond, Japkowicz and Matwin, *Inner
Ensembles: Using Ensemble Methods Inside the Learning Algorithm*, ECML PKDD
2013, LNAI 8190, pp. 33-48.
"""

from __future__ import annotations

from ensemblekit.constraints import MAX_MEMBERS, Constraint
from ensemblekit.state import Scalar

from .kmeans_model import PROTOTYPE_CONSTRAINTS, PROTOTYPE_STATE, PrototypeModel

__all__ = ["RESAMPLE_MODES", "SUBSET_CONSTRAINTS", "InnerEnsembleKMeansModel"]

#: Values of the ``resample`` parameter.
RESAMPLE_MODES = ("each-iteration", "once")

#: The feature-subset parameters shared by IEK-m and the cluster ensembles.
SUBSET_CONSTRAINTS = {
    "n_estimators": Constraint("int", "ensemble size E: votes per instance and step", low=1,
                               high=MAX_MEMBERS),
    "max_features": Constraint("float", "fraction of the features in each subset", low=0.1,
                               high=1.0),
    "bootstrap_features": Constraint("bool", "draw subset features with replacement"),
}


class InnerEnsembleKMeansModel(PrototypeModel):
    """The fitted part of :class:`~ensemblekit.clustering.inner_kmeans.InnerEnsembleKMeans`.

    Holds the parameters (see the estimator), the declaration of the state a
    fit leaves (K-means' and the subset size) and the prediction: the
    nearest centre after scaling, in the full feature space.
    """

    _parameter_constraints = {
        **PROTOTYPE_CONSTRAINTS,
        **SUBSET_CONSTRAINTS,
        "resample": Constraint("choice", "redraw the E subsets at every step or once per fit",
                               choices=RESAMPLE_MODES),
        "chunk_size": Constraint("int", "rows per block of the assignment step (none: 256)",
                                 low=1, none_ok=True),
    }

    _fitted_state = {
        **PROTOTYPE_STATE,
        "n_subset_features_": Scalar("int", low=1, high="n_features_in_"),
    }

    def __init__(self, n_clusters=3, *, n_estimators=10, max_features=0.5,
                 bootstrap_features=False, resample="each-iteration", init="random",
                 scale="none", max_iter=300, random_state=None, chunk_size=None):
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.bootstrap_features = bootstrap_features
        self.resample = resample
        self.init = init
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state
        self.chunk_size = chunk_size
