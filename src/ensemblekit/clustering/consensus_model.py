"""The cluster ensembles' fitted models: consensus centroids, nearest-centroid labels (numpy only).

A cluster ensemble (:mod:`ensemblekit.clustering.consensus`: CSPA, HGPA, MCLA,
co-association HAC) finds one consensus partition of its training rows; what
it keeps for new rows is the mean of each consensus cluster (in the scaled
space), and a new row goes to the nearest of these centroids
(:class:`~ensemblekit.clustering.kmeans_model.PrototypeModel`). This module
holds the parameters of the four estimators, the state their fit leaves,
and one model class per estimator, the part a model file rebuilds; it
imports numpy and nothing of scikit-learn, scipy or the partitioners.

Source: A. Strehl and J. Ghosh, *Cluster Ensembles -- A Knowledge Reuse
Framework for Combining Multiple Partitions*, JMLR 3:583-617, 2002; A. Fred
and A. K. Jain, *Combining Multiple Clusterings Using Evidence
Accumulation*, IEEE TPAMI 27(6):835-850, 2005.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ensemblekit.constraints import Constraint
from ensemblekit.state import Array, Scalar

from .inner_kmeans_model import SUBSET_CONSTRAINTS
from .kmeans_model import PROTOTYPE_CONSTRAINTS, SCALING_STATE, PrototypeModel, check_scaling

__all__ = [
    "CONSENSUS_CONSTRAINTS",
    "CONSENSUS_STATE",
    "HGPA_OBJECTIVES",
    "LINKAGES",
    "PARTITIONERS",
    "CSPAModel",
    "CoAssociationHACModel",
    "ConsensusModel",
    "HGPAModel",
    "MCLAModel",
]

#: Values of the ``partitioner`` parameter of CSPA and MCLA.
PARTITIONERS = ("auto", "metis", "spectral")

#: Values of the ``linkage`` parameter of co-association HAC.
LINKAGES = ("single", "average", "complete")

#: Values of HGPA's ``objective`` parameter.
HGPA_OBJECTIVES = ("cut", "km1")

_IMBALANCE = Constraint("float", "allowed part-size excess", low=0.001, high=1.0)
_PARTITIONER = Constraint("choice", "graph partitioner (auto: METIS when pymetis is installed)",
                          choices=PARTITIONERS)
_OBJECTIVE = Constraint("choice", "hyperedges cut (the paper) or connectivity - 1",
                        choices=HGPA_OBJECTIVES)

#: The parameters every cluster ensemble has (members built as IEK-m draws its subsets).
CONSENSUS_CONSTRAINTS = {
    **PROTOTYPE_CONSTRAINTS,
    **SUBSET_CONSTRAINTS,
    "n_estimators": replace(SUBSET_CONSTRAINTS["n_estimators"],
                            help="ensemble size E: number of K-means members"),
    "max_features": replace(SUBSET_CONSTRAINTS["max_features"],
                            help="fraction of the features in each member's subset (as iekm)"),
    "memory": Constraint("any", "cache of the K-means members (joblib.Memory or a folder)"),
}

#: What every cluster ensemble's fit leaves: ``n_found <= n_clusters`` consensus centroids.
CONSENSUS_STATE = {
    **SCALING_STATE,
    "scaled_centers_": Array("float64", ("n_found", "n_features_in_")),
    "cluster_centers_": Array("float64", ("n_found", "n_features_in_")),
    "labels_": Array("int64", ("n_samples",), low=0, below="n_found"),
    "inertia_": Scalar("float", low=0),
    "n_iter_": Scalar("int", low=0),
}


class ConsensusModel(PrototypeModel):
    """The fitted part shared by the cluster ensembles: centroids of the consensus clusters.

    ``predict`` gives a row the nearest centroid (Euclidean, in the scaled
    space; lowest index on ties). A consensus cluster need not be convex, so
    the training rows' predictions may differ from ``labels_``.
    """

    _fitted_state = CONSENSUS_STATE

    def _check_state(self, ctx) -> None:
        check_scaling(self, ctx)
        n_found = self.scaled_centers_.shape[0]
        if not 1 <= n_found <= self.n_clusters:
            ctx.fail(f"scaled_centers_ holds {n_found} centroids for n_clusters = "
                     f"{self.n_clusters}")
        if np.bincount(self.labels_, minlength=n_found).min() == 0:
            ctx.fail("labels_ leaves a consensus cluster without a training row")


class _GraphConsensusModel(ConsensusModel):
    """Parameters of the consensus functions that cut a graph (CSPA, MCLA)."""

    _parameter_constraints = {
        **CONSENSUS_CONSTRAINTS,
        "partitioner": _PARTITIONER,
        "imbalance": _IMBALANCE,
    }

    _fitted_state = {
        **CONSENSUS_STATE,
        "partitioner_": Scalar("str", choices=("metis", "spectral")),
    }

    def __init__(self, n_clusters=3, *, n_estimators=10, max_features=0.5, bootstrap_features=False,
                 init="random", scale="none", max_iter=300, random_state=None, partitioner="auto",
                 imbalance=0.05, memory=None):
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.bootstrap_features = bootstrap_features
        self.init = init
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state
        self.partitioner = partitioner
        self.imbalance = imbalance
        self.memory = memory


class CSPAModel(_GraphConsensusModel):
    """The fitted part of :class:`~ensemblekit.clustering.consensus.CSPA` (see there)."""


class MCLAModel(_GraphConsensusModel):
    """The fitted part of :class:`~ensemblekit.clustering.consensus.MCLA` (see there)."""

    _parameter_constraints = {
        **_GraphConsensusModel._parameter_constraints,
        "partitioner": replace(_PARTITIONER, help="meta-graph partitioner (auto: METIS when "
                               "pymetis is installed)"),
        "imbalance": replace(_IMBALANCE, help="allowed meta-cluster weight excess"),
    }


class HGPAModel(ConsensusModel):
    """The fitted part of :class:`~ensemblekit.clustering.consensus.HGPA` (see there)."""

    _parameter_constraints = {
        **CONSENSUS_CONSTRAINTS,
        "imbalance": _IMBALANCE,
        "objective": _OBJECTIVE,
    }

    _fitted_state = {
        **CONSENSUS_STATE,
        "partitioner_": Scalar("str", choices=("kahypar",)),
    }

    def __init__(self, n_clusters=3, *, n_estimators=10, max_features=0.5, bootstrap_features=False,
                 init="random", scale="none", max_iter=300, random_state=None, imbalance=0.05,
                 objective="cut", memory=None):
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.bootstrap_features = bootstrap_features
        self.init = init
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state
        self.imbalance = imbalance
        self.objective = objective
        self.memory = memory


class CoAssociationHACModel(ConsensusModel):
    """The fitted part of :class:`~ensemblekit.clustering.consensus.CoAssociationHAC` (see there)."""

    _parameter_constraints = {
        **CONSENSUS_CONSTRAINTS,
        "linkage": Constraint("choice", "linkage criterion on 1 - co-association",
                              choices=LINKAGES),
    }

    def __init__(self, n_clusters=3, *, n_estimators=10, max_features=0.5, bootstrap_features=False,
                 init="random", scale="none", max_iter=300, random_state=None, linkage="average",
                 memory=None):
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.bootstrap_features = bootstrap_features
        self.init = init
        self.scale = scale
        self.max_iter = max_iter
        self.random_state = random_state
        self.linkage = linkage
        self.memory = memory
