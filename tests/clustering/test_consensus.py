"""Cluster ensembles: members, CSPA, HGPA, MCLA and co-association HAC (issue 5)."""

import sys
from pathlib import Path

import arff
import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.cluster.hierarchy import fcluster, linkage, to_tree
from scipy.spatial.distance import pdist, squareform
from sklearn.cluster import KMeans as SkKMeans
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit.clustering import consensus as C
from ensemblekit.clustering.consensus import (
    CSPA,
    HGPA,
    MCLA,
    CoAssociationHAC,
    MissingDependencyError,
    consensus_cspa,
    consensus_hac,
    consensus_hgpa,
    consensus_mcla,
    kmeans_members,
)
from ensemblekit.clustering.inner_kmeans import (
    InnerEnsembleKMeans,
    _draw_feature_weights,
    _n_subset_features,
)
from ensemblekit.clustering.kmeans import KMeans
from ensemblekit.scores.clustering import nmi

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def iris():
    with open(SAMPLE / "iris.arff") as fh:
        data = arff.load(fh)
    X = np.array([row[:-1] for row in data["data"]], dtype=np.float64)
    y = np.array([row[-1] for row in data["data"]])
    return X, y


# two obvious groups {0, 1, 2} and {3, 4, 5}; member 3 disagrees about object 2
MEMBERS = np.array([
    [0, 5, "a", 1],
    [0, 5, "a", 1],
    [0, 5, "a", 0],
    [1, 7, "b", 0],
    [1, 7, "b", 0],
    [1, 7, "b", 0],
], dtype=object)


def partition(labels):
    """A partition as a set of frozensets, independent of label names."""
    labels = np.asarray(labels)
    return {frozenset(np.flatnonzero(labels == v).tolist()) for v in np.unique(labels)}


# ---------------------------------------------------------------------------
# representation
# ---------------------------------------------------------------------------
def test_members_are_encoded_per_column_and_become_hyperedges():
    codes, n_labels = C._encode_members(MEMBERS)
    assert_array_equal(n_labels, [2, 2, 2, 2])
    assert_array_equal(codes[:, 1], [0, 0, 0, 1, 1, 1])  # 5 -> 0, 7 -> 1
    H = C._incidence(codes, n_labels).toarray()
    # columns: member 0 clusters 0, 1; member 1 clusters 0, 1; ...
    assert_array_equal(H[2], [1, 0, 1, 0, 1, 0, 1, 0])
    assert_array_equal(H[3], [0, 1, 0, 1, 0, 1, 1, 0])
    assert_array_equal(H.sum(axis=1), 4)


@pytest.mark.parametrize("bad, message", [
    (np.array([0, 1, 1]), "2-D"),
    (np.array([[0.0, 1.0], [np.nan, 1.0]]), "missing or infinite label \\(row 2, member 1\\)"),
    (np.array([[0, None], [1, 2]], dtype=object), "missing label \\(row 1, member 2\\)"),
    (np.zeros((3, 0)), "empty"),
])
def test_bad_members_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        consensus_mcla(bad, 1)


def test_first_occurrence_order():
    assert_array_equal(C.first_occurrence_order([7, 7, 2, 9, 2]), [0, 0, 1, 2, 1])


# ---------------------------------------------------------------------------
# HAC: pdist(hamming) is 1 - co-association; same tree as scipy on the explicit matrix
# ---------------------------------------------------------------------------
def explicit_coassociation(codes):
    n, E = codes.shape
    S = np.zeros((n, n))
    for e in range(E):
        S += codes[:, e][:, None] == codes[:, e][None, :]
    return S / E


def split_latest_merges(Z, k):
    """Reference cut: start from the root and split the latest-formed cluster until k remain.

    (scipy's cut_tree is not used: it can return other partitions when merge
    heights tie.)"""
    nodes = [to_tree(Z)]
    while len(nodes) < k:
        latest = max(nodes, key=lambda node: node.id)
        # (ClusterNode compares by height, so remove by identity)
        nodes = [node for node in nodes if node is not latest] + [latest.left, latest.right]
    labels = np.empty(Z.shape[0] + 1, dtype=int)
    for c, node in enumerate(nodes):
        labels[node.pre_order()] = c
    return labels


@pytest.mark.parametrize("method", ["single", "average", "complete"])
def test_hac_equals_scipy_linkage_on_the_explicit_coassociation(method):
    rng = np.random.RandomState(0)
    base = np.repeat(np.arange(4), 15)
    # E = 8 members: every distance is a multiple of 1/8, exact in floating point
    members = np.column_stack([np.where(rng.rand(60) < 0.75, base, rng.randint(0, 4, 60))
                               for _ in range(8)])
    D = 1.0 - explicit_coassociation(members)
    condensed = squareform(D, checks=False)
    assert_array_equal(pdist(members, "hamming"), condensed)
    Z = linkage(condensed, method=method)
    for k in (2, 3, 4, 7):
        expected = split_latest_merges(Z, k)
        got = consensus_hac(members, k, linkage=method)
        assert partition(got) == partition(expected)
        assert_array_equal(got, C.first_occurrence_order(expected))
        low, high = Z[60 - k - 1, 2], Z[60 - k, 2]
        if low < high:  # no tie at the cut: a cut at a height between gives the same
            assert partition(got) == partition(fcluster(Z, (low + high) / 2, "distance"))


def test_hac_by_hand_and_extreme_k():
    assert partition(consensus_hac(MEMBERS, 2, linkage="single")) == {frozenset({0, 1, 2}),
                                                                      frozenset({3, 4, 5})}
    # objects 0 and 1 agree everywhere (distance 0) and merge first
    assert partition(consensus_hac(MEMBERS, 5, linkage="average")) >= {frozenset({0, 1})}
    assert_array_equal(consensus_hac(MEMBERS, 6), np.arange(6))
    assert_array_equal(consensus_hac(MEMBERS, 1), np.zeros(6))
    with pytest.raises(ValueError, match="linkage"):
        consensus_hac(MEMBERS, 2, linkage="ward")
    with pytest.raises(ValueError, match="n_clusters=7"):
        consensus_hac(MEMBERS, 7)


# ---------------------------------------------------------------------------
# CSPA
# ---------------------------------------------------------------------------
def test_cspa_gives_metis_the_coassociation_counts(monkeypatch):
    seen = {}

    def fake_metis(adjacency, n_parts, seed, imbalance, vertex_weights=None):
        seen["graph"] = adjacency.toarray()
        seen["args"] = (n_parts, imbalance, vertex_weights)
        return np.array([1, 1, 1, 0, 0, 0])

    monkeypatch.setattr(C, "_metis_parts", fake_metis)
    labels = consensus_cspa(MEMBERS, 2, random_state=0, partitioner="metis")
    assert_array_equal(labels, [0, 0, 0, 1, 1, 1])  # renumbered by first appearance
    # agreeing members per pair (diagonal removed): objects 0-1 agree in all 4,
    # 0-2 in 3, 2-3 in 1 (member 3), 0-3 in none
    expected = np.array([
        [0, 4, 3, 0, 0, 0],
        [4, 0, 3, 0, 0, 0],
        [3, 3, 0, 1, 1, 1],
        [0, 0, 1, 0, 4, 4],
        [0, 0, 1, 4, 0, 4],
        [0, 0, 1, 4, 4, 0],
    ])
    assert_array_equal(seen["graph"], expected)
    assert seen["args"] == (2, 0.05, None)


@pytest.mark.parametrize("partitioner", ["metis", "spectral"])
def test_cspa_finds_the_obvious_groups(partitioner):
    labels = consensus_cspa(MEMBERS, 2, random_state=0, partitioner=partitioner)
    assert partition(labels) == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}


def test_cspa_falls_back_to_spectral_without_pymetis(monkeypatch):
    X, _ = iris()
    monkeypatch.setitem(sys.modules, "pymetis", None)  # "import pymetis" now fails
    assert C.resolve_partitioner("auto") == "spectral"
    with pytest.raises(MissingDependencyError, match="pymetis"):
        C.resolve_partitioner("metis")
    model = CSPA(n_clusters=3, n_estimators=5, random_state=0).fit(X)
    assert model.partitioner_ == "spectral"
    explicit = CSPA(n_clusters=3, n_estimators=5, random_state=0, partitioner="spectral").fit(X)
    assert_array_equal(model.labels_, explicit.labels_)


def test_cspa_refuses_large_data_before_any_work(monkeypatch):
    def no_members(*args, **kwargs):
        raise AssertionError("members were built")

    monkeypatch.setattr(C, "kmeans_members", no_members)
    monkeypatch.setattr(C, "CSPA_MAX_SAMPLES", 20)
    X = np.random.RandomState(0).normal(size=(21, 2))
    with pytest.raises(ValueError, match="limited to 20 instances.*has 21"):
        CSPA(n_clusters=2).fit(X)
    with pytest.raises(ValueError, match="limited to 20"):
        consensus_cspa(np.zeros((21, 1)), 2)
    monkeypatch.setattr(C, "kmeans_members", kmeans_members)
    assert CSPA(n_clusters=2, n_estimators=3, random_state=0).fit(X[:20]).labels_.shape == (20,)


# ---------------------------------------------------------------------------
# MCLA
# ---------------------------------------------------------------------------
def test_mcla_meta_graph_is_the_jaccard_matrix_weighted_by_cluster_size(monkeypatch):
    seen = {}

    def fake_metis(adjacency, n_parts, seed, imbalance, vertex_weights=None):
        seen["graph"] = adjacency.toarray()
        seen["vweights"] = vertex_weights
        # meta-cluster 0: the first cluster of each member; 1: the second
        return np.array([0, 1, 0, 1, 0, 1, 1, 0])

    monkeypatch.setattr(C, "_metis_parts", fake_metis)
    labels = consensus_mcla(MEMBERS, 2, random_state=0, partitioner="metis")
    # clusters (hyperedges) in order: m0c0 {0,1,2} m0c1 {3,4,5} m1c0 {0,1,2} m1c1 {3,4,5}
    # m2c0 {0,1,2} m2c1 {3,4,5} m3c0 {2,3,4,5} m3c1 {0,1}
    J = np.zeros((8, 8))
    sets = [{0, 1, 2}, {3, 4, 5}] * 3 + [{2, 3, 4, 5}, {0, 1}]
    for a in range(8):
        for b in range(8):
            if a != b:
                J[a, b] = len(sets[a] & sets[b]) / len(sets[a] | sets[b])
    expected = np.where(J > 0, np.maximum(1, np.rint(J * 10**6)), 0)
    assert_array_equal(seen["graph"], expected)
    assert_array_equal(seen["vweights"], [3, 3, 3, 3, 3, 3, 4, 2])
    # association of object 2 with meta-cluster 0 ({0,1,2} x3 and {0,1}): 3/4;
    # with meta-cluster 1 ({3,4,5} x3 and {2,3,4,5}): 1/4 -> group {0, 1, 2}
    assert partition(labels) == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}


def test_mcla_breaks_association_ties_with_the_seed():
    # one member: {0, 1} | {2, 3}; another: {0, 2} | {1, 3}. Cutting the
    # meta-graph into 2 meta-clusters joins one cluster of each member; every
    # object is then associated 1/2 or 0 or 1 with them; object ties are
    # broken at random, and different seeds break them differently.
    members = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    outcomes = {tuple(consensus_mcla(members, 2, random_state=s)) for s in range(30)}
    assert len(outcomes) > 1
    for s in range(5):  # same seed, same answer
        assert_array_equal(consensus_mcla(members, 2, random_state=s),
                           consensus_mcla(members, 2, random_state=s))


@pytest.mark.parametrize("partitioner", ["metis", "spectral"])
def test_mcla_finds_the_obvious_groups(partitioner):
    labels = consensus_mcla(MEMBERS, 2, random_state=1, partitioner=partitioner)
    assert partition(labels) == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}


def test_mcla_with_fewer_member_clusters_than_k():
    members = np.array([[0], [0], [1], [1]])
    assert partition(consensus_mcla(members, 3, random_state=0)) == {frozenset({0, 1}),
                                                                     frozenset({2, 3})}


# ---------------------------------------------------------------------------
# HGPA
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("objective", ["cut", "km1"])
def test_hgpa_cuts_the_hypergraph_into_balanced_parts(objective):
    pytest.importorskip("kahypar")
    labels = consensus_hgpa(MEMBERS, 2, random_state=0, objective=objective)
    assert partition(labels) == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}
    # members that each misplace two objects: most clusters stay pure, so the
    # true partition cuts few hyperedges (with noise in every cluster, every
    # partition cuts them all and HGPA has nothing to go by, as the paper warns)
    rng = np.random.RandomState(0)
    base = np.repeat(np.arange(3), 40)
    members = np.column_stack([base] * 6)
    for e in range(6):
        moved = rng.choice(120, size=2, replace=False)
        members[moved, e] = (members[moved, e] + 1) % 3
    labels = consensus_hgpa(members, 3, random_state=0, objective=objective)
    assert np.bincount(labels).max() <= 1.05 * 40  # the paper's balance constraint
    assert nmi(base, labels) > 0.8
    assert_array_equal(labels, consensus_hgpa(members, 3, random_state=0, objective=objective))


def test_hgpa_without_kahypar_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "kahypar", None)

    def no_members(*args, **kwargs):
        raise AssertionError("members were built")

    monkeypatch.setattr(C, "kmeans_members", no_members)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ensemblekit\[hypergraph\]'"):
        consensus_hgpa(MEMBERS, 2)
    with pytest.raises(ImportError, match="kahypar"):
        HGPA(n_clusters=2).fit(np.random.RandomState(0).normal(size=(10, 2)))


def test_hgpa_refuses_an_unknown_objective():
    with pytest.raises(ValueError, match="objective"):
        consensus_hgpa(MEMBERS, 2, objective="soed")


# ---------------------------------------------------------------------------
# members built like IEK-m's subsets, from KMeans' initial centres
# ---------------------------------------------------------------------------
def test_kmeans_members_are_kmeans_on_weighted_subsets():
    X, _ = iris()
    centres = X[[0, 50, 100]]
    W = np.array([[2.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    labels = kmeans_members(X, centres, W, max_iter=300)
    for e, cols in ((0, [0, 2]), (1, [1, 3])):
        root = np.sqrt(W[e, cols])
        ref = SkKMeans(3, init=centres[:, cols] * root, n_init=1, tol=0.0, algorithm="lloyd")
        assert_array_equal(labels[:, e], ref.fit(X[:, cols] * root).labels_)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_members_use_iekm_subsets_and_kmeans_initial_centres(bootstrap):
    X, _ = iris()
    seed = 7
    model = MCLA(n_clusters=3, n_estimators=6, max_features=0.5, bootstrap_features=bootstrap,
                 random_state=seed).fit(X)
    # the initial centres of KMeans and IEK-m with the same seed
    assert_array_equal(model.init_centers_, KMeans(3, random_state=seed).fit(X).init_centers_)
    assert_array_equal(model.init_centers_,
                       InnerEnsembleKMeans(3, random_state=seed).fit(X).init_centers_)
    # the subsets IEK-m draws for its first step: same stream, after the init seed
    rng = np.random.RandomState(seed)
    rng.randint(np.iinfo(np.int32).max)
    W = _draw_feature_weights(rng, 6, 4, _n_subset_features(0.5, 4), bootstrap)
    assert_array_equal(model.feature_weights_, W)
    assert model.n_subset_features_ == 2
    expected = kmeans_members(X, model.init_centers_, W)
    assert_array_equal(model.members_, expected)


def test_memory_lets_estimators_with_one_seed_share_their_members(tmp_path, monkeypatch):
    joblib = pytest.importorskip("joblib")
    X, _ = iris()
    memory = joblib.Memory(tmp_path / "members", verbose=0)
    first = CSPA(n_clusters=3, n_estimators=4, random_state=11, memory=memory).fit(X)
    plain = MCLA(n_clusters=3, n_estimators=4, random_state=11).fit(X)
    # a folder name stands for a joblib.Memory there (as Pipeline's memory)
    folder = CoAssociationHAC(n_clusters=3, n_estimators=4, random_state=11,
                              memory=str(tmp_path / "by-name")).fit(X)
    assert_array_equal(folder.members_, first.members_)

    def no_lloyd(self, *args, **kwargs):
        raise AssertionError("a K-means member was fitted")

    monkeypatch.setattr(SkKMeans, "fit", no_lloyd)
    # the same members from the cache: no K-means runs, and the result of a fit without it
    second = MCLA(n_clusters=3, n_estimators=4, random_state=11, memory=memory).fit(X)
    assert_array_equal(second.members_, first.members_)
    assert second.n_iter_ == first.n_iter_
    assert_array_equal(second.labels_, plain.labels_)
    third = CoAssociationHAC(n_clusters=3, n_estimators=4, random_state=11,
                             memory=str(tmp_path / "by-name")).fit(X)
    assert_array_equal(third.members_, first.members_)
    # another seed, other members: built, not looked up
    with pytest.raises(AssertionError, match="member was fitted"):
        MCLA(n_clusters=3, n_estimators=4, random_state=12, memory=memory).fit(X)
    # without memory nothing is shared: every fit runs its own members
    with pytest.raises(AssertionError, match="member was fitted"):
        MCLA(n_clusters=3, n_estimators=4, random_state=11).fit(X)


def test_memory_of_a_wrong_type_is_refused():
    X, _ = iris()
    with pytest.raises(ValueError, match="memory"):
        CSPA(n_clusters=3, n_estimators=2, random_state=0, memory=3).fit(X)


def test_given_members_are_combined_instead():
    X, y = iris()
    rng = np.random.RandomState(0)
    base = np.unique(y, return_inverse=True)[1]
    members = np.column_stack([np.where(rng.rand(150) < 0.7, base, rng.randint(0, 3, 150))
                               for _ in range(9)]).astype(str)
    model = CoAssociationHAC(n_clusters=3, n_estimators=2, linkage="average", random_state=0)
    model.fit(X, members=members)
    assert model.members_.shape == (150, 9) and model.feature_weights_ is None
    assert_array_equal(model.labels_, consensus_hac(members, 3, linkage="average"))
    assert nmi(base, model.labels_) > 0.9
    assert_array_equal(model.fit_predict(X, members=members), model.labels_)
    with pytest.raises(ValueError, match="members has 149 rows but X has 150"):
        model.fit(X, members=members[:-1])


@pytest.mark.parametrize("make", [
    lambda: CSPA(n_clusters=3, n_estimators=5, random_state=3),
    lambda: MCLA(n_clusters=3, n_estimators=5, random_state=3),
    lambda: CoAssociationHAC(n_clusters=3, n_estimators=5, linkage="complete", random_state=3),
    lambda: HGPA(n_clusters=3, n_estimators=5, random_state=3),
])
def test_estimators_are_deterministic_and_centroids_are_cluster_means(make, monkeypatch):
    if "HGPA" in repr(make()):
        pytest.importorskip("kahypar")
    X, y = iris()
    # no state is shared between fits: each builds its members itself (K-means counted)
    built = []

    def counted(*args, **kwargs):
        built.append(1)
        return kmeans_members(*args, **kwargs)

    monkeypatch.setattr(C, "kmeans_members", counted)
    first = make().fit(X)
    second = make().fit(X)
    assert len(built) == 2
    assert first.labels_.tobytes() == second.labels_.tobytes()
    for k in range(first.cluster_centers_.shape[0]):
        np.testing.assert_allclose(first.cluster_centers_[k], X[first.labels_ == k].mean(axis=0),
                                   rtol=1e-12)
    # predict: nearest centroid
    d = ((X[:, None, :] - first.cluster_centers_[None]) ** 2).sum(axis=2)
    assert_array_equal(first.predict(X), d.argmin(axis=1))
    assert nmi(y, first.labels_) > 0.5


def test_consensus_estimators_refuse_bad_parameters():
    X = np.random.RandomState(0).normal(size=(20, 3))
    for model, message in (
        (CSPA(partitioner="hmetis"), "partitioner"),
        (MCLA(imbalance=0.0), "imbalance"),
        (CoAssociationHAC(linkage="ward"), "linkage"),
        (MCLA(max_features=0.05), "max_features"),
        (CSPA(n_estimators=0), "n_estimators"),
        (MCLA(n_clusters=21), "n_samples=20"),
    ):
        with pytest.raises(ValueError, match=message):
            model.fit(X)


# ---------------------------------------------------------------------------
# scikit-learn compatibility
# ---------------------------------------------------------------------------
def _estimators():
    # one instance per code path (graph partitioners, both spectral fallbacks via
    # MCLA, linkage variants share one kernel); 3 members keep the checks quick
    out = [
        CSPA(n_estimators=3, random_state=0),
        MCLA(n_estimators=3, partitioner="spectral", bootstrap_features=True, scale="minmax",
             random_state=0),
        CoAssociationHAC(n_estimators=3, linkage="single", max_features=1.0, random_state=0),
    ]
    try:
        import kahypar  # noqa: F401

        out.append(HGPA(n_estimators=3, random_state=0))
    except ImportError:
        pass
    return out


@parametrize_with_checks(_estimators())
def test_sklearn_compatible(estimator, check):
    check(estimator)
