"""Cluster ensembles: one consensus partition from several member clusterings.

Source: A. Strehl and J. Ghosh, *Cluster Ensembles -- A Knowledge Reuse
Framework for Combining Multiple Partitions*, JMLR 3:583-617, 2002 (CSPA, HGPA
and MCLA, Sect. 3); co-association consensus with hierarchical clustering:
A. Fred and A. K. Jain, *Combining Multiple Clusterings Using Evidence
Accumulation*, IEEE TPAMI 27(6):835-850, 2005. These are the cluster-ensemble
baselines of the Inner Ensembles paper (Abbasian, Drummond, Japkowicz, Matwin,
ECML PKDD 2013, Sect. 3.2, Tables 2-3).

Members. By default the ``E`` members are K-means runs, each on a random
subset of the features drawn exactly as :class:`~ensemblekit.clustering.inner_kmeans.InnerEnsembleKMeans`
draws one assignment step's subsets (same ``n_estimators``, ``max_features``,
``bootstrap_features``, same random stream), and each starting from the
initial centres that :class:`~ensemblekit.clustering.kmeans.KMeans` and IEK-m
start from under the same ``random_state`` (restricted to the member's
features). This is the paper's protocol: "as the Inner Ensembles uses
different subsets of features, we generate the members for cluster ensemble
the similar way". Users may instead pass their own member labelings to
``fit(X, members=...)``.

Representation. Member ``q`` with ``k_q`` clusters becomes ``k_q`` binary
indicator columns; the ``n x K`` (``K = sum_q k_q``) sparse matrix ``H`` of
all of them is the hypergraph of the paper (a hyperedge per cluster).

Consensus functions (all return labels renumbered in order of first
occurrence, so the output does not depend on how partitioners name parts):

* **CSPA** -- co-association graph ``H H^T`` (edge weight = number of members
  that put two objects together, i.e. ``E`` times the paper's similarity
  ``S = H H^T / E``) cut into ``k`` balanced parts by METIS (``pymetis``);
  without pymetis, spectral clustering of ``S`` (scikit-learn).
* **HGPA** -- the hypergraph itself cut into ``k`` parts of about equal size,
  minimising the number of hyperedges cut (KaHyPar, optional).
* **MCLA** -- the ``K`` clusters are the vertices of a meta-graph weighted by
  their Jaccard similarity (one sparse product ``H^T H``), cut by METIS into
  ``k`` meta-clusters balanced by cluster size; each object goes to the
  meta-cluster it is on average most associated with.
* **HAC** -- ``1 - co-association`` of two objects equals the normalised
  Hamming distance between their member-label vectors, so the condensed
  distance comes from :func:`scipy.spatial.distance.pdist` with
  ``"hamming"`` on the ``n x E`` label matrix; then scipy's single, average
  or complete linkage and a cut into exactly ``k`` clusters.

A fitted ensemble labels new rows by the nearest consensus centroid; that rule,
the parameters and the state a model file keeps are the model classes' in
:mod:`ensemblekit.clustering.consensus_model` (numpy only). Algorithm code here
never reads data files or prints; estimators follow the scikit-learn API.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from ensemblekit.errors import EnsemblekitError, InputError

from ..constraints import validate_params
from ..rows import quiet_finite_check
from .consensus_model import (
    _IMBALANCE,
    _OBJECTIVE,
    _PARTITIONER,
    HGPA_OBJECTIVES,
    LINKAGES,
    PARTITIONERS,
    CoAssociationHACModel,
    CSPAModel,
    HGPAModel,
    MCLAModel,
)
from .inner_kmeans import _draw_feature_weights, _n_subset_features
from .kmeans import _BasePrototypeClustering, _seeded_start, undo_scaling

__all__ = [
    "CSPA",
    "CSPA_MAX_SAMPLES",
    "CoAssociationHAC",
    "HGPA",
    "HGPA_OBJECTIVES",
    "LINKAGES",
    "MCLA",
    "MissingDependencyError",
    "PARTITIONERS",
    "consensus_cspa",
    "consensus_hac",
    "consensus_hgpa",
    "consensus_mcla",
    "kmeans_members",
    "resolve_partitioner",
]

#: Largest number of instances CSPA accepts. CSPA stores the co-association
#: graph, which has up to n*(n-1) directed edges (about 10**8 at this limit,
#: when the members disagree a lot); with scipy's sparse product and METIS's
#: own copies that is roughly 3 GB at the limit. Above it CSPA refuses at once.
CSPA_MAX_SAMPLES = 10_000

# Jaccard weights of MCLA's meta-graph are given to METIS as integers (METIS
# takes integer edge weights): round(J * _JACCARD_SCALE), at least 1 when J > 0.
_JACCARD_SCALE = 10**6

# KaHyPar settings file of each of HGPA's objectives.
_KAHYPAR_CONFIG = {"cut": "hgpa_kahypar_cut.ini", "km1": "hgpa_kahypar_km1.ini"}


class MissingDependencyError(EnsemblekitError, ImportError):
    """An optional package an algorithm needs is not installed (the message says which)."""


# ---------------------------------------------------------------------------
# members
# ---------------------------------------------------------------------------
def kmeans_members(X, init_centers, feature_weights, max_iter=300, return_n_iter=False):
    """Ensemble members: one K-means run per random feature subset.

    Member ``e`` is Lloyd's K-means (scikit-learn, ``n_init=1``, ``tol=0``)
    under the weighted squared distance ``sum_f W[e, f] (x_f - mu_f)**2``,
    i.e. on the columns with ``W[e, f] > 0`` multiplied by ``sqrt(W[e, f])``
    (a feature drawn twice counts twice, as in IEK-m), starting from
    ``init_centers`` restricted and weighted the same way.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data (float64, finite), in the space the clustering runs in.
    init_centers : ndarray of shape (n_clusters, n_features)
        Starting centres, same space as ``X``.
    feature_weights : ndarray of shape (n_estimators, n_features)
        Feature multiplicities of each member (non-negative, every row with a
        positive entry), e.g. from
        :func:`ensemblekit.clustering.inner_kmeans._draw_feature_weights`.
    max_iter : int, default=300
        Maximum Lloyd iterations per member (>= 1).
    return_n_iter : bool, default=False
        Also return each member's number of iterations.

    Returns
    -------
    labels : ndarray of shape (n_samples, n_estimators), intp
        Cluster (0 .. n_clusters - 1) of each instance in each member. A
        member may use fewer than ``n_clusters`` clusters when initial
        centres coincide on its features.
    n_iter : ndarray of shape (n_estimators,), int
        Lloyd iterations of each member; only with ``return_n_iter``.

    References
    ----------
    Abbasian et al., *Inner Ensembles*, ECML PKDD 2013, Sect. 3.2 (members on
    feature subsets, from the same initial centres as K-means and IEK-m).
    """
    from sklearn.cluster import KMeans as _SkKMeans

    X = np.asarray(X, dtype=np.float64)
    init_centers = np.asarray(init_centers, dtype=np.float64)
    W = np.asarray(feature_weights, dtype=np.float64)
    n_clusters = init_centers.shape[0]
    labels = np.empty((X.shape[0], W.shape[0]), dtype=np.intp)
    n_iter = np.zeros(W.shape[0], dtype=np.int64)
    with warnings.catch_warnings():
        # coinciding starting centres on a subset leave a cluster empty: expected here
        warnings.simplefilter("ignore", ConvergenceWarning)
        for e in range(W.shape[0]):
            cols = np.flatnonzero(W[e] > 0)
            root = np.sqrt(W[e, cols])
            km = _SkKMeans(n_clusters=n_clusters, init=init_centers[:, cols] * root, n_init=1,
                           max_iter=max_iter, tol=0.0, algorithm="lloyd")
            labels[:, e] = km.fit(X[:, cols] * root).labels_
            n_iter[e] = km.n_iter_
    if return_n_iter:
        return labels, n_iter
    return labels


def _build_members(memory, X, init_centers, feature_weights, max_iter):
    """``kmeans_members(..., return_n_iter=True)``, through ``memory`` when one is given.

    Parameters
    ----------
    memory : None, str or object with the joblib.Memory interface
        None: the members are computed. Otherwise (a str is a cache folder, as
        in :func:`sklearn.utils.validation.check_memory`), a call with the same
        data, starting centres, feature weights and ``max_iter`` as an earlier
        one is answered from that cache; joblib hashes the arrays' bytes, so a
        hit returns exactly what would have been computed.
    X, init_centers, feature_weights, max_iter
        As in :func:`kmeans_members`.

    Returns
    -------
    labels : ndarray of shape (n_samples, n_estimators), intp
    n_iter : ndarray of shape (n_estimators,), int

    Raises
    ------
    ValueError
        If ``memory`` is neither None, a str, nor joblib.Memory-like.
    """
    if memory is None:
        return kmeans_members(X, init_centers, feature_weights, max_iter, return_n_iter=True)
    from sklearn.utils.validation import check_memory

    cached = check_memory(memory).cache(kmeans_members)
    return cached(X, init_centers, feature_weights, max_iter, return_n_iter=True)


def _encode_members(members, n_samples=None):
    """Check member labelings; return (codes (n, E) int32 with 0..k_q-1 per column, k_q per column)."""
    M = np.asarray(members)
    if M.ndim != 2:
        raise InputError(f"members must be a 2-D array (n_samples, n_members), got shape {M.shape}")
    if M.shape[0] == 0 or M.shape[1] == 0:
        raise InputError(f"members is empty (shape {M.shape}); give at least one labeling")
    if n_samples is not None and M.shape[0] != n_samples:
        raise InputError(f"members has {M.shape[0]} rows but X has {n_samples}; "
                         "give one label per instance and member")
    if M.dtype.kind == "f" and not np.isfinite(M).all():
        bad = np.argwhere(~np.isfinite(M))[0]
        raise InputError(f"members has a missing or infinite label (row {bad[0] + 1}, member "
                         f"{bad[1] + 1}); every member must label every instance")
    if M.dtype.kind == "O":
        for e in range(M.shape[1]):
            column = M[:, e]
            missing = [i for i, v in enumerate(column) if v is None
                       or (isinstance(v, float) and not np.isfinite(v))]
            if missing:
                raise InputError(f"members has a missing label (row {missing[0] + 1}, member "
                                 f"{e + 1}); every member must label every instance")
    codes = np.empty(M.shape, dtype=np.int32)
    n_labels = np.empty(M.shape[1], dtype=np.int64)
    for e in range(M.shape[1]):
        try:
            values, inverse = np.unique(M[:, e], return_inverse=True)
        except TypeError:
            raise InputError(f"member {e + 1} mixes label types that cannot be compared") from None
        codes[:, e] = inverse.ravel()
        n_labels[e] = values.shape[0]
    return codes, n_labels


def _incidence(codes, n_labels):
    """Sparse n x K indicator matrix H (int32 ones): column offset[q] + c is cluster c of member q."""
    n, n_members = codes.shape
    offsets = np.concatenate([[0], np.cumsum(n_labels)[:-1]]).astype(np.int64)
    indices = (codes.astype(np.int64) + offsets).ravel()  # row-major: ascending within a row
    indptr = np.arange(0, n * n_members + 1, n_members, dtype=np.int64)
    data = np.ones(indices.shape[0], dtype=np.int32)
    return sparse.csr_matrix((data, indices, indptr), shape=(n, int(n_labels.sum())))


def first_occurrence_order(labels):
    """Renumber labels 0, 1, ... in order of first appearance (so part names do not matter).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Any hashable, sortable labels.

    Returns
    -------
    ndarray of shape (n_samples,), dtype intp
        Codes in 0..n_distinct-1; the first row gets 0, the next new label 1, and so on.
    """
    labels = np.asarray(labels)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inverse.ravel()]


def check_n_clusters(n_clusters, n_samples):
    """Refuse a number of clusters that is not an integer in ``1..n_samples``.

    Raises
    ------
    ValueError
        When ``n_clusters`` is not an integer (bools excluded), is below 1, or
        exceeds ``n_samples``.
    """
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral) or n_clusters < 1:
        raise InputError(f"n_clusters must be an integer >= 1; got {n_clusters!r}.")
    if n_clusters > n_samples:
        raise InputError(f"n_samples={n_samples} should be >= n_clusters={n_clusters}.")


def _check_imbalance(imbalance):
    _IMBALANCE.check(imbalance, "imbalance")


def _check_partitioner(partitioner):
    _PARTITIONER.check(partitioner, "partitioner")


def _seed(random_state):
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


# ---------------------------------------------------------------------------
# partitioners
# ---------------------------------------------------------------------------
def resolve_partitioner(partitioner="auto"):
    """Name the graph partitioner that CSPA/MCLA will use.

    Parameters
    ----------
    partitioner : {"auto", "metis", "spectral"}, default="auto"
        ``"auto"``: METIS when the ``pymetis`` package imports, else spectral
        clustering.

    Returns
    -------
    str
        ``"metis"`` or ``"spectral"``.

    Raises
    ------
    ValueError
        On an unknown name.
    MissingDependencyError
        If ``"metis"`` is asked for and pymetis is not installed.
    """
    _check_partitioner(partitioner)
    if partitioner == "spectral":
        return "spectral"
    try:
        import pymetis  # noqa: F401
    except ImportError:
        if partitioner == "metis":
            raise MissingDependencyError(
                "partitioner='metis' needs the pymetis package: pip install 'ensemblekit[graph]' "
                "(or use partitioner='spectral')") from None
        return "spectral"
    return "metis"


def _metis_parts(adjacency, n_parts, seed, imbalance, vertex_weights=None):
    """METIS k-way partition of a symmetric sparse graph with positive integer weights.

    Recursive bisection for up to 8 parts, direct k-way beyond (METIS's advice,
    pymetis's default); ``ufactor`` = imbalance in thousandths (0.05 -> 50: no
    part heavier than 1.05 times the average).
    """
    import pymetis

    adjacency = sparse.csr_matrix(adjacency)
    adjacency.sort_indices()
    n = adjacency.shape[0]
    if n_parts == 1 or n == 0:
        return np.zeros(n, dtype=np.intp)
    options = pymetis.Options(seed=int(seed), ufactor=max(1, round(imbalance * 1000)))
    vweights = None if vertex_weights is None else np.asarray(vertex_weights, dtype=np.int64)
    _, parts = pymetis.part_graph(
        int(n_parts),
        pymetis.CSRAdjacency(adjacency.indptr.astype(np.int64), adjacency.indices.astype(np.int64)),
        eweights=adjacency.data.astype(np.int64) if adjacency.nnz else None,
        vweights=vweights,
        options=options,
        recursive=n_parts <= 8,
    )
    return np.asarray(parts, dtype=np.intp)


def _spectral_parts(affinity, n_parts, seed):
    """Spectral clustering (normalised Laplacian embedding, QR assignment) of an affinity matrix."""
    from sklearn.cluster import spectral_clustering

    n = affinity.shape[0]
    if n_parts == 1:
        return np.zeros(n, dtype=np.intp)
    affinity = sparse.csr_matrix(affinity, dtype=np.float64)
    with warnings.catch_warnings():
        # a co-association graph with several components is normal; the
        # embedding then separates the components first, which is what we want
        warnings.filterwarnings("ignore", message="Graph is not fully connected")
        parts = spectral_clustering(affinity, n_clusters=int(n_parts), random_state=int(seed),
                                    assign_labels="cluster_qr", eigen_solver="arpack")
    return np.asarray(parts, dtype=np.intp)


# ---------------------------------------------------------------------------
# consensus functions
# ---------------------------------------------------------------------------
def consensus_cspa(members, n_clusters, *, random_state=None, partitioner="auto", imbalance=0.05):
    """Cluster-based Similarity Partitioning Algorithm (CSPA).

    The similarity of two objects is the fraction of members that put them
    in one cluster, ``S = H H^T / E``; the graph with these edge weights
    (vertex = object) is cut into ``n_clusters`` parts by METIS, balanced so
    that no part exceeds ``(1 + imbalance)`` times the average size. METIS
    gets the integer weights ``E * S`` (same cut). Without pymetis (or with
    ``partitioner="spectral"``) the partition is spectral clustering of ``S``
    (scikit-learn's :func:`~sklearn.cluster.spectral_clustering`, QR-based
    assignment), which has no balance constraint.

    Parameters
    ----------
    members : array-like of shape (n_samples, n_members)
        Label of every object in every member clustering (any comparable
        values; no missing labels).
    n_clusters : int
        Parts ``k`` of the consensus, 1 <= k <= n_samples.
    random_state : int, RandomState instance or None, default=None
        Seed of the partitioner.
    partitioner : {"auto", "metis", "spectral"}, default="auto"
        See :func:`resolve_partitioner`.
    imbalance : float, default=0.05
        Allowed part-size excess for METIS, in [0.001, 1] (the paper's 5%).

    Returns
    -------
    labels : ndarray of shape (n_samples,), intp
        Consensus clusters numbered 0, 1, ... in order of first appearance;
        at most ``n_clusters`` of them.

    Raises
    ------
    ValueError
        On bad members or parameters, or more than :data:`CSPA_MAX_SAMPLES`
        objects (the co-association graph would not fit in memory).
    MissingDependencyError
        If ``partitioner="metis"`` and pymetis is missing.

    References
    ----------
    Strehl & Ghosh, JMLR 3:583-617, 2002, Sect. 3.2 (CSPA); G. Karypis and
    V. Kumar, "A fast and high quality multilevel scheme for partitioning
    irregular graphs", SIAM J. Sci. Comput. 20(1), 1998 (METIS).
    """
    codes, n_labels = _encode_members(members)
    n = codes.shape[0]
    check_n_clusters(n_clusters, n)
    _check_cspa_size(n)
    _check_imbalance(imbalance)
    used = resolve_partitioner(partitioner)
    seed = _seed(random_state)
    H = _incidence(codes, n_labels)
    counts = (H @ H.T).tocsr()  # agreeing members per pair, 0 .. E
    counts.setdiag(0)
    counts.eliminate_zeros()
    if used == "metis":
        parts = _metis_parts(counts, n_clusters, seed, imbalance)
    else:
        parts = _spectral_parts(counts.astype(np.float64) / codes.shape[1], n_clusters, seed)
    return first_occurrence_order(parts)


def _check_cspa_size(n_samples):
    if n_samples > CSPA_MAX_SAMPLES:
        raise InputError(
            f"cspa stores the n x n co-association graph and is limited to "
            f"{CSPA_MAX_SAMPLES:,} instances (up to about 10^8 edges, ~3 GB); this data has "
            f"{n_samples:,}. Use mcla, hgpa or hac-* (linear or condensed-distance memory), or "
            "subsample (compare --max-instances)")


def consensus_hgpa(members, n_clusters, *, random_state=None, imbalance=0.05, objective="cut"):
    """HyperGraph Partitioning Algorithm (HGPA).

    Every cluster of every member is a hyperedge (all of weight 1) over the
    objects (all of weight 1). The hypergraph is cut into ``n_clusters``
    parts with as few hyperedges cut as possible, no part larger than
    ``(1 + imbalance)`` times ``ceil(n / k)`` -- the paper's balance
    constraint ``k * max_l n_l / n <= 1.05`` for the default 5%. The paper used
    hMETIS; here KaHyPar (the optional ``kahypar`` package) runs multilevel
    recursive bisection (settings in ``hgpa_kahypar_cut.ini`` and
    ``hgpa_kahypar_km1.ini`` next to this module).

    Parameters
    ----------
    members : array-like of shape (n_samples, n_members)
        Label of every object in every member clustering (no missing labels).
    n_clusters : int
        Parts ``k``, 1 <= k <= n_samples.
    random_state : int, RandomState instance or None, default=None
        Seed of KaHyPar.
    imbalance : float, default=0.05
        KaHyPar's epsilon, in [0.001, 1].
    objective : {"cut", "km1"}, default="cut"
        ``"cut"``: number of hyperedges cut, the paper's objective.
        ``"km1"``: connectivity minus one, ``sum_e (parts spanned by e - 1)``,
        which also counts *how* a cluster is split; about twice as slow, and
        on large data with big clusters much closer to the members (letter,
        20,000 rows, 30 members of k = 26: NMI 0.27 against 0.10 with
        ``"cut"``).

    Returns
    -------
    labels : ndarray of shape (n_samples,), intp
        Consensus clusters numbered in order of first appearance.

    Raises
    ------
    ValueError
        On bad members or parameters.
    MissingDependencyError
        If the ``kahypar`` package is not installed.

    Notes
    -----
    As the paper warns, a hyperedge counts as cut however few of its objects
    are split off, and the balance constraint forces parts of equal size, so
    HGPA does poorly when natural clusters differ much in size. With the cut
    objective, recursive bisection drops the hyperedges cut by a bisection
    from the later ones; when clusters are large almost all are cut at the
    first level, so the later bisections are nearly unguided. KaHyPar is
    sequential; with a fixed seed the result is reproducible.

    References
    ----------
    Strehl & Ghosh, JMLR 3:583-617, 2002, Sect. 3.3 (HGPA); S. Schlag et al.,
    "k-way hypergraph partitioning via n-level recursive bisection", ALENEX
    2016 (KaHyPar).
    """
    codes, n_labels = _encode_members(members)
    n = codes.shape[0]
    check_n_clusters(n_clusters, n)
    _check_imbalance(imbalance)
    _check_objective(objective)
    kahypar = _import_kahypar()
    seed = _seed(random_state)
    if n_clusters == 1:
        return np.zeros(n, dtype=np.intp)
    H = _incidence(codes, n_labels).tocsc()
    H.sort_indices()
    n_edges = H.shape[1]
    hypergraph = kahypar.Hypergraph(n, n_edges, H.indptr.tolist(), H.indices.tolist(),
                                    int(n_clusters), [1] * n_edges, [1] * n)
    from importlib.resources import as_file, files

    context = kahypar.Context()
    with as_file(files("ensemblekit.clustering").joinpath(_KAHYPAR_CONFIG[objective])) as config:
        context.loadINIconfiguration(str(config))
    context.setK(int(n_clusters))
    context.setEpsilon(float(imbalance))
    context.setSeed(seed)
    context.suppressOutput(True)
    kahypar.partition(hypergraph, context)
    parts = np.fromiter((hypergraph.blockID(i) for i in range(n)), dtype=np.intp, count=n)
    return first_occurrence_order(parts)


def _check_objective(objective):
    _OBJECTIVE.check(objective, "objective")


def _import_kahypar():
    try:
        import kahypar
    except ImportError:
        raise MissingDependencyError(
            "hgpa needs the optional kahypar package (hypergraph partitioner): "
            "pip install 'ensemblekit[hypergraph]'; the other consensus functions "
            "(cspa, mcla, hac-*) do not need it") from None
    return kahypar


def consensus_mcla(members, n_clusters, *, random_state=None, partitioner="auto", imbalance=0.05):
    """Meta-CLustering Algorithm (MCLA).

    1. Meta-graph: the ``K`` clusters of all members are vertices; the edge
       between clusters ``a`` and ``b`` has the binary Jaccard weight
       ``|a & b| / (|a| + |b| - |a & b|)``, all intersections from one sparse
       product ``H^T H``.
    2. The meta-graph is cut into ``n_clusters`` meta-clusters by METIS, each
       vertex weighted by its cluster's size and no meta-cluster heavier than
       ``(1 + imbalance)`` times the average. METIS gets the integer weights
       ``round(10**6 * Jaccard)`` (at least 1 on every edge).
    3. Each meta-cluster's association with object ``i`` is the mean of its
       clusters' indicators at ``i`` (the share of its clusters holding ``i``).
    4. Each object joins the meta-cluster it is most associated with; ties
       are broken at random (by ``random_state``). A meta-cluster may win no
       object, so there can be fewer than ``n_clusters`` clusters.

    Without pymetis (or with ``partitioner="spectral"``) step 2 is spectral
    clustering of the Jaccard matrix (no vertex weights, no balance).

    Parameters
    ----------
    members : array-like of shape (n_samples, n_members)
        Label of every object in every member clustering (no missing labels).
    n_clusters : int
        Meta-clusters ``k``, 1 <= k <= n_samples.
    random_state : int, RandomState instance or None, default=None
        Seed of the partitioner (first draw) and of the tie-breaking (second).
    partitioner : {"auto", "metis", "spectral"}, default="auto"
        See :func:`resolve_partitioner`.
    imbalance : float, default=0.05
        Allowed meta-cluster weight excess for METIS, in [0.001, 1].

    Returns
    -------
    labels : ndarray of shape (n_samples,), intp
        Consensus clusters numbered in order of first appearance.

    Raises
    ------
    ValueError
        On bad members or parameters.
    MissingDependencyError
        If ``partitioner="metis"`` and pymetis is missing.

    Notes
    -----
    Memory: the ``n x E`` incidence matrix, the dense ``K x K`` meta-graph and
    the ``n x k`` association matrix; nothing of size ``n x n``.

    References
    ----------
    Strehl & Ghosh, JMLR 3:583-617, 2002, Sect. 3.4 (MCLA).
    """
    codes, n_labels = _encode_members(members)
    n = codes.shape[0]
    check_n_clusters(n_clusters, n)
    _check_imbalance(imbalance)
    used = resolve_partitioner(partitioner)
    rng = check_random_state(random_state)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    H = _incidence(codes, n_labels)
    sizes = np.asarray(H.sum(axis=0), dtype=np.int64).ravel()
    n_meta_vertices = sizes.shape[0]
    if n_meta_vertices <= n_clusters:
        meta = np.arange(n_meta_vertices, dtype=np.intp)
    else:
        inter = (H.T @ H).toarray().astype(np.float64)
        union = sizes[:, None] + sizes[None, :] - inter
        jaccard = inter / union
        np.fill_diagonal(jaccard, 0.0)
        if used == "metis":
            weights = np.where(jaccard > 0, np.maximum(1.0, np.rint(jaccard * _JACCARD_SCALE)), 0.0)
            meta = _metis_parts(sparse.csr_matrix(weights.astype(np.int64)), n_clusters, seed,
                                imbalance, vertex_weights=sizes)
        else:
            meta = _spectral_parts(jaccard, n_clusters, seed)
    n_meta = int(n_clusters)
    members_per_meta = np.bincount(meta, minlength=n_meta).astype(np.float64)
    indicator = sparse.csr_matrix((np.ones(n_meta_vertices), (np.arange(n_meta_vertices), meta)),
                                  shape=(n_meta_vertices, n_meta))
    association = np.asarray((H @ indicator).todense(), dtype=np.float64)
    nonempty = members_per_meta > 0
    association[:, nonempty] /= members_per_meta[nonempty]
    keys = rng.random_sample(association.shape)
    best = association.max(axis=1, keepdims=True)
    winner = np.where(association == best, keys, -1.0).argmax(axis=1)
    return first_occurrence_order(winner)


def consensus_hac(members, n_clusters, *, linkage="average"):
    """Co-association consensus by hierarchical agglomerative clustering.

    The distance of two objects is one minus the fraction of members that put
    them together, which is the normalised Hamming distance between their
    label vectors; it is computed in condensed form with
    :func:`scipy.spatial.distance.pdist` (``"hamming"``), never as a dense
    ``n x n`` matrix. scipy's :func:`~scipy.cluster.hierarchy.linkage`
    (``single``, ``average`` or ``complete``) builds the tree, which is cut
    into exactly ``n_clusters`` clusters by undoing its last ``k - 1``
    merges (merges at equal heights keep scipy's order).

    Parameters
    ----------
    members : array-like of shape (n_samples, n_members)
        Label of every object in every member clustering (no missing labels).
    n_clusters : int
        Clusters ``k``, 1 <= k <= n_samples.
    linkage : {"single", "average", "complete"}, default="average"
        Linkage criterion.

    Returns
    -------
    labels : ndarray of shape (n_samples,), intp
        Consensus clusters numbered in order of first appearance.

    Raises
    ------
    ValueError
        On bad members or parameters.

    Notes
    -----
    Memory: the condensed distances take ``4 n (n - 1)`` bytes (1.6 GB for
    20,000 objects); average and complete linkage work on a copy (twice that
    at the peak), single linkage does not. Time O(n^2 E) for the distances
    and O(n^2) for the linkage.

    References
    ----------
    A. Fred and A. K. Jain, "Combining multiple clusterings using evidence
    accumulation", IEEE TPAMI 27(6):835-850, 2005; Strehl & Ghosh, JMLR 2002,
    Sect. 3.2 (the co-association matrix).
    """
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.spatial.distance import pdist

    if not isinstance(linkage, str) or linkage not in LINKAGES:
        raise InputError(f"linkage must be one of {', '.join(map(repr, LINKAGES))}; got {linkage!r}.")
    codes, _ = _encode_members(members)
    n = codes.shape[0]
    check_n_clusters(n_clusters, n)
    if n_clusters == n:
        return np.arange(n, dtype=np.intp)
    if n_clusters == 1:
        return np.zeros(n, dtype=np.intp)
    distances = pdist(codes, metric="hamming")
    tree = scipy_linkage(distances, method=linkage)
    del distances
    return first_occurrence_order(cut_dendrogram(tree, n, n_clusters))


def cut_dendrogram(tree, n, n_clusters):
    """Leaves' clusters after the first ``n - n_clusters`` merges of a scipy linkage matrix.

    Parameters
    ----------
    tree : ndarray of shape (n - 1, 4)
        A linkage matrix in scipy's convention (merge ``i`` creates node ``n + i``).
    n : int
        Number of leaves.
    n_clusters : int
        Clusters wanted, in ``1..n``.

    Returns
    -------
    ndarray of shape (n,), dtype intp
        For each leaf, the id of the root of its cluster (not renumbered; see
        :func:`first_occurrence_order`).
    """
    parent = list(range(2 * n - 1))
    merges = tree[: n - n_clusters, :2].astype(np.int64).tolist()
    for step, (a, b) in enumerate(merges):
        parent[a] = parent[b] = n + step
    root = parent[:]
    for node in range(n + len(merges) - 1, -1, -1):  # a parent always has a larger id
        if parent[node] != node:
            root[node] = root[parent[node]]
    return np.asarray(root[:n], dtype=np.intp)


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------
class _ConsensusClustering(_BasePrototypeClustering):
    """Fit skeleton shared by the cluster-ensemble estimators.

    An estimator is ``class Name(NameModel, _ConsensusClustering)``: its model
    class (:mod:`ensemblekit.clustering.consensus_model`) sets the parameters
    in ``__init__``, declares them and the fitted state, and labels new rows;
    the estimator may check what a declaration cannot say (an installed
    package) in ``_check_consensus_params`` and implements
    ``_consensus(members, rng)``.
    """

    def _check_consensus_params(self):
        pass

    def _check_size(self, n_samples):
        pass

    def _consensus(self, members, rng):  # pragma: no cover - overridden
        raise NotImplementedError

    def fit(self, X, y=None, members=None):
        """Build (or take) the members and compute their consensus.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data, no NaN or infinity. The members are K-means runs on
            it; with ``members`` given, it only serves to compute the
            consensus clusters' centroids (for ``predict``).
        y : None
            Ignored.
        members : array-like of shape (n_samples, n_members), optional
            Member labelings to combine instead of building K-means members
            (one column per member, any comparable labels, none missing).

        Returns
        -------
        self : object

        Raises
        ------
        ValueError
            On a bad parameter, NaN/infinite/non-numeric data, fewer rows (or,
            for ``init="random"``, distinct rows) than ``n_clusters``, bad
            members, or data too large for the method (CSPA).
        MissingDependencyError
            If the partitioner the method needs is not installed (HGPA:
            kahypar; ``partitioner="metis"``: pymetis).

        Notes
        -----
        With ``memory`` set, members identical to ones built before (same
        data, starting centres, subsets and ``max_iter`` -- e.g. ``cspa`` then
        ``mcla`` with one seed) are read from that cache instead of being
        computed again; the result is the same either way.
        """
        validate_params(self)
        self._check_consensus_params()

        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, order="C")
        n_samples, n_features = X.shape
        if n_samples < self.n_clusters:
            raise InputError(f"n_samples={n_samples} should be >= n_clusters={self.n_clusters}.")
        self._check_size(n_samples)
        if members is not None:
            codes, _ = _encode_members(members, n_samples)

        # Same random stream and starting centres as KMeans / InnerEnsembleKMeans;
        # the draws after the centres' seed give the feature subsets.
        start = _seeded_start(X, self.n_clusters, self.init, self.scale, self.random_state,
                              with_centers=members is None)
        rng, offset, factor, Xs = start.rng, start.offset, start.factor, start.Xs
        if members is None:
            n_subset = _n_subset_features(self.max_features, n_features)
            W = _draw_feature_weights(rng, self.n_estimators, n_features, n_subset,
                                      bool(self.bootstrap_features))
            found, member_iter = _build_members(self.memory, Xs, start.init_scaled, W,
                                                self.max_iter)
            codes, _ = _encode_members(found)
            self.n_iter_ = int(member_iter.max())
            self.init_centers_ = start.init_centers
            self.feature_weights_ = W
            self.n_subset_features_ = n_subset
        else:
            self.init_centers_ = None
            self.feature_weights_ = None
            self.n_subset_features_ = None
            self.n_iter_ = 0

        labels = first_occurrence_order(self._consensus(codes, rng))
        n_found = int(labels.max()) + 1
        counts = np.bincount(labels, minlength=n_found).astype(np.float64)
        centers = np.empty((n_found, n_features))
        for f in range(n_features):
            centers[:, f] = np.bincount(labels, weights=Xs[:, f], minlength=n_found) / counts
        if n_found < self.n_clusters:
            warnings.warn(
                f"Number of distinct clusters ({n_found}) found smaller than "
                f"n_clusters ({self.n_clusters}).", ConvergenceWarning, stacklevel=2)

        self.members_ = codes
        self.labels_ = labels
        self.scaling_offset_ = offset
        self.scaling_factor_ = factor
        self.scaled_centers_ = centers
        self.cluster_centers_ = undo_scaling(centers, offset, factor)
        self.inertia_ = float(((Xs - centers[labels]) ** 2).sum())
        self._n_features_out = n_found
        return self

    def fit_predict(self, X, y=None, members=None):
        """Fit and return ``labels_`` (see :meth:`fit`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        members : array-like of shape (n_samples, n_members), optional
            Member labelings to combine (see :meth:`fit`).

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self.fit(X, members=members).labels_

    def predict(self, X):
        """Assign rows to the nearest consensus-cluster centroid.

        The centroids are the means of the training instances of each
        consensus cluster (in the scaled space); a consensus cluster need not
        be convex (single linkage especially), so ``predict`` on the training
        data can differ from ``labels_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data in input units.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Nearest centroid (Euclidean, lowest index on ties).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            On NaN/infinite data or a wrong number of columns.
        """
        return super().predict(X)


_COMMON_PARAMS_DOC = """
    n_clusters : int, default=3
        Number of consensus clusters ``k`` (>= 1, <= number of instances);
        also the ``k`` of every K-means member.
    n_estimators : int, default=10
        Ensemble size ``E``: number of K-means members (>= 1). Ignored when
        ``members`` is given to ``fit``.
    max_features : float, default=0.5
        Fraction of the features in each member's subset, in [0.1, 1.0]
        (``max(1, round(max_features * d))`` features), as IEK-m.
    bootstrap_features : bool, default=False
        Draw each member's features with replacement (a feature drawn twice
        counts twice in that member's distance), as IEK-m.
    init : {"random", "k-means++"} or array-like of shape (n_clusters, n_features), default="random"
        Starting centres of the members, see
        :func:`~ensemblekit.clustering.kmeans.initial_centers`; with the same
        ``random_state``, :class:`~ensemblekit.clustering.kmeans.KMeans` and
        IEK-m start from the same centres.
    scale : {"none", "minmax", "zscore"}, default="none"
        Attribute scaling fitted on the training data (members, centroids and
        ``predict`` use the scaled space).
    max_iter : int, default=300
        Maximum Lloyd iterations of each member (>= 1).
    random_state : int, RandomState instance or None, default=None
        Seed: first draw the initial centres, then the ``E`` feature subsets,
        then the consensus function's own draws. Same seed, same result.
    memory : None, str or joblib.Memory, default=None
        Cache of the K-means members (as ``memory`` of scikit-learn's
        :class:`~sklearn.pipeline.Pipeline`): None caches nothing; a
        :class:`joblib.Memory` (or a folder name for one) lets fits that build
        the same members -- e.g. CSPA, MCLA and HAC with one seed on one data
        set -- compute them once. Results are the same either way. Not
        available on the command line; set it back to None before saving a
        model (a model file holds no cache)."""

_COMMON_ATTRS_DOC = """
    labels_ : ndarray of shape (n_samples,)
        Consensus cluster of every training instance, numbered 0, 1, ... in
        order of first appearance.
    cluster_centers_ : ndarray of shape (n_found, n_features)
        Mean of each consensus cluster, in input units (``n_found`` <=
        ``n_clusters`` is the number of consensus clusters that are not empty).
    scaled_centers_ : ndarray of shape (n_found, n_features)
        The same in the scaled space (what ``predict`` uses).
    members_ : ndarray of shape (n_samples, n_members), int32
        The member labelings that were combined, each renumbered 0 .. k_q - 1.
        With ``feature_weights_``, ``n_subset_features_`` and ``init_centers_``,
        a record of the fit that a model file does not keep.
    feature_weights_ : ndarray of shape (n_estimators, n_features) or None
        Feature multiplicities of the K-means members (None when ``members``
        were given).
    n_subset_features_ : int or None
        Features per member subset.
    init_centers_ : ndarray of shape (n_clusters, n_features) or None
        The members' starting centres, in input units.
    inertia_ : float
        Sum of squared distances of the instances to their consensus
        centroid (scaled space).
    n_iter_ : int
        Largest number of Lloyd iterations of a K-means member (0 when
        ``members`` were given).
    scaling_offset_, scaling_factor_ : ndarray of shape (n_features,)
        The scaling map: scaled = (X - scaling_offset_) / scaling_factor_.
    n_features_in_ : int
        Number of attributes seen in ``fit``."""


class CSPA(CSPAModel, _ConsensusClustering):
    __doc__ = f"""Cluster ensemble with the CSPA consensus (co-association graph partitioning).

    Builds ``E`` K-means members on random feature subsets (or takes given
    member labelings) and cuts their co-association graph into ``k``
    balanced parts with METIS; see :func:`consensus_cspa`.

    Parameters
    ----------{_COMMON_PARAMS_DOC}
    partitioner : {{"auto", "metis", "spectral"}}, default="auto"
        Graph partitioner: METIS (pymetis) when installed, else spectral
        clustering; ``partitioner_`` says which ran.
    imbalance : float, default=0.05
        METIS balance tolerance, in [0.001, 1.0] (the paper's 5%).

    Attributes
    ----------{_COMMON_ATTRS_DOC}
    partitioner_ : str
        ``"metis"`` or ``"spectral"``.

    Raises
    ------
    ValueError
        From ``fit``, also when the data have more than
        :data:`CSPA_MAX_SAMPLES` rows (checked before any work).

    References
    ----------
    Strehl & Ghosh, *Cluster Ensembles*, JMLR 3:583-617, 2002, Sect. 3.2;
    Abbasian et al., *Inner Ensembles*, ECML PKDD 2013, Sect. 3.2 (members).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.clustering.consensus import CSPA
    >>> X = np.array([[0.0, 0.1], [0.2, 0.0], [9.0, 9.1], [9.2, 9.0]])
    >>> CSPA(n_clusters=2, n_estimators=5, random_state=0).fit(X).labels_.tolist()
    [0, 0, 1, 1]
    """

    def _check_size(self, n_samples):
        _check_cspa_size(n_samples)

    def _consensus(self, members, rng):
        self.partitioner_ = resolve_partitioner(self.partitioner)
        return consensus_cspa(members, self.n_clusters, random_state=rng,
                              partitioner=self.partitioner_, imbalance=self.imbalance)


class HGPA(HGPAModel, _ConsensusClustering):
    __doc__ = f"""Cluster ensemble with the HGPA consensus (balanced hypergraph cut, KaHyPar).

    Builds ``E`` K-means members on random feature subsets (or takes given
    member labelings) and cuts the hypergraph of their clusters into ``k``
    parts of about equal size; see :func:`consensus_hgpa`. Needs the optional
    ``kahypar`` package.

    Parameters
    ----------{_COMMON_PARAMS_DOC}
    imbalance : float, default=0.05
        KaHyPar's epsilon, in [0.001, 1.0]: parts hold at most
        ``(1 + imbalance) * ceil(n / k)`` instances (the paper's 5%).
    objective : {{"cut", "km1"}}, default="cut"
        Hyperedges cut (the paper) or connectivity minus one; see
        :func:`consensus_hgpa`.

    Attributes
    ----------{_COMMON_ATTRS_DOC}
    partitioner_ : str
        ``"kahypar"``.

    Raises
    ------
    MissingDependencyError
        From ``fit`` when kahypar is not installed.

    References
    ----------
    Strehl & Ghosh, *Cluster Ensembles*, JMLR 3:583-617, 2002, Sect. 3.3.
    """

    def _check_consensus_params(self):
        _import_kahypar()  # fail before building members

    def _consensus(self, members, rng):
        self.partitioner_ = "kahypar"
        return consensus_hgpa(members, self.n_clusters, random_state=rng, imbalance=self.imbalance,
                              objective=self.objective)


class MCLA(MCLAModel, _ConsensusClustering):
    __doc__ = f"""Cluster ensemble with the MCLA consensus (meta-clustering of the members' clusters).

    Builds ``E`` K-means members on random feature subsets (or takes given
    member labelings), groups their clusters into ``k`` meta-clusters with
    METIS on the Jaccard meta-graph and gives each instance to the
    meta-cluster it is most associated with; see :func:`consensus_mcla`.

    Parameters
    ----------{_COMMON_PARAMS_DOC}
    partitioner : {{"auto", "metis", "spectral"}}, default="auto"
        Meta-graph partitioner: METIS (pymetis) when installed, else spectral
        clustering; ``partitioner_`` says which ran.
    imbalance : float, default=0.05
        METIS balance tolerance on the meta-clusters' total cluster size, in
        [0.001, 1.0].

    Attributes
    ----------{_COMMON_ATTRS_DOC}
    partitioner_ : str
        ``"metis"`` or ``"spectral"``.

    References
    ----------
    Strehl & Ghosh, *Cluster Ensembles*, JMLR 3:583-617, 2002, Sect. 3.4.
    """

    def _consensus(self, members, rng):
        self.partitioner_ = resolve_partitioner(self.partitioner)
        return consensus_mcla(members, self.n_clusters, random_state=rng,
                              partitioner=self.partitioner_, imbalance=self.imbalance)


class CoAssociationHAC(CoAssociationHACModel, _ConsensusClustering):
    __doc__ = f"""Cluster ensemble with co-association consensus and hierarchical clustering.

    Builds ``E`` K-means members on random feature subsets (or takes given
    member labelings) and clusters the instances by single, average or
    complete linkage on ``1 - co-association`` (the normalised Hamming
    distance of their member labels), cut into ``k`` clusters; see
    :func:`consensus_hac`. Registered as ``hac-single``, ``hac-average`` and
    ``hac-complete``.

    Parameters
    ----------{_COMMON_PARAMS_DOC}
    linkage : {{"single", "average", "complete"}}, default="average"
        Linkage criterion.

    Attributes
    ----------{_COMMON_ATTRS_DOC}

    Notes
    -----
    Memory is dominated by the condensed distances, ``4 n (n - 1)`` bytes
    (twice that at the peak for average and complete linkage).

    References
    ----------
    Fred & Jain, IEEE TPAMI 27(6):835-850, 2005; Abbasian et al., *Inner
    Ensembles*, ECML PKDD 2013, Sect. 3.2 ("HAC" consensus).
    """

    def _consensus(self, members, rng):
        return consensus_hac(members, self.n_clusters, linkage=self.linkage)
