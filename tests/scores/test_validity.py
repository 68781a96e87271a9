"""External and internal clustering validity indices (ensemblekit.metrics, issue 5)."""

import itertools
from math import comb

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn import metrics as skm

from ensemblekit import metrics as M
from ensemblekit.scores import clustering as S

# ---------------------------------------------------------------------------
# external indices: hand-computed pair counts
# ---------------------------------------------------------------------------
# classes  0 0 0 | 1 1 1
# clusters 0 0 0 | 0 0 1
# contingency [[3, 0], [2, 1]]: n11 = C(3,2) + C(2,2) = 4; pairs together in the
# classes 3 + 3 = 6; in the clustering C(5,2) = 10; all pairs C(6,2) = 15;
# apart in both 15 - 6 - 10 + 4 = 3.
TRUE6 = [0, 0, 0, 1, 1, 1]
PRED6 = [0, 0, 0, 0, 0, 1]


def test_pair_counts_by_hand():
    assert S.pair_counts(TRUE6, PRED6) == (4, 6, 10, 15)


def test_external_indices_by_hand():
    assert S.rand(TRUE6, PRED6) == pytest.approx(7 / 15, abs=1e-15)
    assert S.jaccard(TRUE6, PRED6) == pytest.approx(4 / 12, abs=1e-15)
    assert S.fowlkes_mallows(TRUE6, PRED6) == pytest.approx(4 / np.sqrt(60), abs=1e-15)
    # W10 over the pairs the clustering joins, W01 over those the classes join
    assert S.wallace_10(TRUE6, PRED6) == pytest.approx(0.4, abs=1e-15)
    assert S.wallace_01(TRUE6, PRED6) == pytest.approx(4 / 6, abs=1e-15)
    assert S.wallace_10(PRED6, TRUE6) == S.wallace_01(TRUE6, PRED6)


def test_external_indices_when_no_pair_is_together():
    singletons = [0, 1, 2, 3]
    assert S.pair_counts(singletons, [0, 0, 1, 1]) == (0, 0, 2, 6)
    for f in (S.jaccard, S.fowlkes_mallows, S.wallace_10, S.wallace_01):
        assert f(singletons, [0, 0, 1, 1]) == 0.0
    assert S.rand(singletons, [0, 0, 1, 1]) == pytest.approx(4 / 6)
    assert S.rand([7], [3]) == 1.0  # no pair at all


def brute_force_pairs(a, b):
    """O(n^2) reference: n11, together in a, together in b, total."""
    n11 = ta = tb = total = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        sa, sb = a[i] == a[j], b[i] == b[j]
        n11 += sa and sb
        ta += sa
        tb += sb
        total += 1
    return n11, ta, tb, total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_counts_match_a_pair_loop_and_scikit_learn(seed):
    rng = np.random.RandomState(seed)
    a = rng.randint(0, 4, 120)
    b = np.array(["x", "y", "z"])[rng.randint(0, 3, 120)]  # strings work too
    counts = S.pair_counts(a, b)
    assert counts == brute_force_pairs(list(a), list(b))
    n11, ta, tb, _ = counts
    # scikit-learn counts ordered pairs: [[n00, n01], [n10, n11]] x 2 (rows: labels_true)
    C = skm.cluster.pair_confusion_matrix(a, b)
    assert C[1, 1] == 2 * n11 and C[1, 0] == 2 * (ta - n11) and C[0, 1] == 2 * (tb - n11)
    assert S.rand(a, b) == pytest.approx(skm.rand_score(a, b), abs=1e-14)
    assert S.adjusted_rand(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-14)
    assert S.fowlkes_mallows(a, b) == pytest.approx(skm.fowlkes_mallows_score(a, b), abs=1e-14)
    assert S.jaccard(a, b) == pytest.approx(n11 / (ta + tb - n11), abs=1e-15)


def test_external_indices_on_iris_like_labels_agree_with_scikit_learn():
    truth = np.repeat([0, 1, 2], 50)
    pred = truth.copy()
    pred[[3, 60, 61, 120, 140]] = [1, 2, 2, 1, 0]
    assert S.rand(truth, pred) == pytest.approx(skm.rand_score(truth, pred), abs=1e-14)
    assert S.fowlkes_mallows(truth, pred) == pytest.approx(skm.fowlkes_mallows_score(truth, pred),
                                                           abs=1e-14)
    # identical partitions up to renaming score 1
    for f in (S.rand, S.jaccard, S.fowlkes_mallows, S.wallace_10, S.wallace_01):
        assert f(truth, 2 - truth) == 1.0


@pytest.mark.parametrize("f", [S.rand, S.jaccard, S.fowlkes_mallows, S.wallace_10, S.wallace_01,
                               S.pair_counts])
def test_external_indices_refuse_bad_input(f):
    with pytest.raises(ValueError, match="different lengths"):
        f([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="1-D"):
        f([[0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="NaN"):
        f([0.0, np.nan], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        f([], [])


# ---------------------------------------------------------------------------
# internal indices
# ---------------------------------------------------------------------------
def dunn_reference(X, labels):
    """clValid's definition, pair by pair."""
    ks = sorted(set(labels))
    D = cdist(X, X)
    inter = min(D[i, j] for i in range(len(X)) for j in range(len(X)) if labels[i] != labels[j])
    diam = max(D[i, j] for i in range(len(X)) for j in range(len(X)) if labels[i] == labels[j])
    assert len(ks) >= 2
    return inter / diam


def connectivity_reference(X, labels, L=10):
    """clValid: positions 2..L+1 of each row's stable order, 1/j for a neighbour elsewhere."""
    D = cdist(X, X)
    total = 0.0
    for i in range(len(X)):
        order = sorted(range(len(X)), key=lambda j: (D[i, j], j))[1:L + 1]
        total += sum(1.0 / (rank + 1) for rank, j in enumerate(order) if labels[j] != labels[i])
    return total


def test_dunn_by_hand():
    # clusters {0, 1} and {5, 7}: closest pair 1-5 = 4, widest cluster 7 - 5 = 2
    X = np.array([[0.0], [1.0], [5.0], [7.0]])
    assert S.dunn(X, [0, 0, 1, 1]) == 2.0
    assert S.dunn(X, ["a", "a", "b", "c"]) == pytest.approx(2.0 / 1.0)  # {0,1}, {5}, {7}
    assert S.dunn(X, [0, 1, 2, 3]) == np.inf  # every diameter 0, as clValid


def test_connectivity_by_hand():
    # X = 0, 1, 3, 10 with clusters {0, 1}, {3, 10}; L = 2
    # 0: neighbours 1 (same), 3 (other, 1/2); 1: 0 (same), 3 (1/2)
    # 3: 1 (other, 1), 0 (other, 1/2); 10: 3 (same), 1 (1/2)        -> 3.0
    X = np.array([[0.0], [1.0], [3.0], [10.0]])
    assert S.connectivity(X, [0, 0, 1, 1], n_neighbors=2) == 3.0
    assert S.connectivity(X, [0, 0, 0, 0], n_neighbors=2) == 0.0


def test_connectivity_ties_follow_clvalid():
    # rows 0 and 1 coincide. Row 0's stable order is 0, 1, 2: its neighbour is
    # row 1 (other cluster, 1). Row 1's order is 0, 1, 2: the skipped first
    # entry is row 0, so row 1 is its own neighbour (same cluster, 0). Row 2's
    # neighbour is row 0 (other, 1).
    X = np.array([[0.0], [0.0], [5.0]])
    assert S.connectivity(X, [0, 1, 1], n_neighbors=1) == 2.0
    assert connectivity_reference(X, [0, 1, 1], L=1) == 2.0


@pytest.mark.parametrize("seed", [0, 1])
def test_dunn_and_connectivity_equal_the_pairwise_reference(seed, monkeypatch):
    rng = np.random.RandomState(seed)
    X = np.vstack([rng.normal(size=(40, 3)), rng.normal(size=(30, 3)) + 3])
    X = np.round(X, 1)  # ties among distances
    X[5] = X[7]  # an exact duplicate
    labels = rng.randint(0, 4, X.shape[0])
    expected_dunn = dunn_reference(X, labels)
    expected_conn = connectivity_reference(X, labels)
    assert S.dunn(X, labels) == pytest.approx(expected_dunn, rel=1e-12)
    assert S.connectivity(X, labels) == pytest.approx(expected_conn, rel=1e-12)
    # small blocks of rows give the same numbers
    monkeypatch.setattr(S, "_BLOCK_BYTES", 8 * X.shape[0] * 7)
    assert S.dunn(X, labels) == pytest.approx(expected_dunn, rel=1e-12)
    assert S.connectivity(X, labels) == pytest.approx(expected_conn, rel=1e-12)


def test_connectivity_with_fewer_rows_than_neighbours():
    X = np.array([[0.0], [1.0], [2.0]])
    # L = 10 is cut to n - 1 = 2
    assert S.connectivity(X, [0, 0, 1]) == connectivity_reference(X, [0, 0, 1], L=2)


def test_silhouette_davies_bouldin_calinski_harabasz_agree_with_scikit_learn():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(90, 4)) + np.repeat(np.eye(4)[:3] * 4, 30, axis=0)
    labels = np.repeat(["a", "b", "c"], 30)
    labels[[0, 31]] = ["c", "a"]
    assert S.silhouette(X, labels) == pytest.approx(skm.silhouette_score(X, labels), abs=1e-14)
    assert S.davies_bouldin(X, labels) == pytest.approx(skm.davies_bouldin_score(X, labels),
                                                        abs=1e-14)
    assert S.calinski_harabasz(X, labels) == pytest.approx(
        skm.calinski_harabasz_score(X, labels), rel=1e-14)


@pytest.mark.parametrize("f", [S.silhouette, S.dunn, S.connectivity, S.davies_bouldin,
                               S.calinski_harabasz])
def test_internal_indices_refuse_bad_input(f):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="2-D"):
        f(np.arange(4.0), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="NaN or infinite"):
        f(np.array([[0.0, 1], [np.nan, 2], [3, 4], [5, 6]]), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="rows but labels"):
        f(X, [0, 1, 1])
    with pytest.raises(ValueError, match="numeric"):
        f(np.array([["a", "b"]] * 4), [0, 0, 1, 1])


@pytest.mark.parametrize("f, message", [
    # Dunn's own message; the others keep scikit-learn's words
    (S.silhouette, "Number of labels is 1"), (S.dunn, "needs at least 2 clusters, got 1"),
    (S.davies_bouldin, "Number of labels is 1"), (S.calinski_harabasz, "Number of labels is 1")])
def test_internal_indices_need_two_clusters(f, message):
    with pytest.raises(ValueError, match=message):
        f(np.arange(8.0).reshape(4, 2), [0, 0, 0, 0])


def test_connectivity_refuses_a_bad_neighbour_count():
    with pytest.raises(ValueError, match="n_neighbors"):
        S.connectivity(np.zeros((3, 1)), [0, 0, 1], n_neighbors=0)


# ---------------------------------------------------------------------------
# the metric registry
# ---------------------------------------------------------------------------
def test_registry_keeps_the_old_names_and_adds_the_indices():
    assert [n for n in M.METRICS if n in ("accuracy", "nmi", "purity", "ari")] == [
        "accuracy", "nmi", "purity", "ari"]
    assert M.METRICS["nmi"]([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0  # external: func(truth, predicted)
    assert M.EXTERNAL_INDICES == ("nmi", "purity", "ari", "rand", "jaccard", "fm", "w10", "w01")
    assert M.INTERNAL_INDICES == ("silhouette", "dunn", "connectivity", "davies-bouldin",
                                  "calinski-harabasz")
    assert not M.METRICS["connectivity"].greater_is_better
    assert not M.METRICS["davies-bouldin"].greater_is_better
    assert M.METRICS["dunn"].greater_is_better and M.METRICS["silhouette"].internal
    assert all(M.METRICS[n].task == "clustering" for n in M.EXTERNAL_INDICES + M.INTERNAL_INDICES)


def test_metric_score_dispatches_on_what_the_index_needs():
    X = np.array([[0.0], [1.0], [5.0], [7.0]])
    assert M.METRICS["dunn"].score([0, 0, 1, 1], X=X) == 2.0
    assert M.METRICS["rand"].score(PRED6, truth=TRUE6) == pytest.approx(7 / 15)
    with pytest.raises(ValueError, match="needs the data"):
        M.METRICS["dunn"].score([0, 0, 1, 1], truth=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="classes"):
        M.METRICS["rand"].score([0, 0, 1, 1], X=X)
    with pytest.raises(TypeError, match="internal"):
        M.METRICS["dunn"]([0, 0, 1, 1], [0, 0, 1, 1])


def test_clustering_indices_computes_what_the_inputs_allow():
    X = np.array([[0.0], [1.0], [5.0], [7.0]])
    both = M.clustering_indices([0, 0, 1, 1], truth=[0, 0, 1, 1], X=X)
    assert list(both) == list(M.EXTERNAL_INDICES + M.INTERNAL_INDICES)
    assert both["dunn"] == 2.0 and both["rand"] == 1.0
    assert list(M.clustering_indices([0, 0, 1, 1], X=X)) == list(M.INTERNAL_INDICES)
    assert M.clustering_indices([0, 0, 1, 1], truth=[0, 1, 0, 1], names=["w10"]) == {"w10": 0.0}


def test_best_k_follows_each_index_direction_and_prefers_the_smaller_k():
    ks = [2, 3, 4, 5]
    assert M.best_k(ks, [0.5, 0.7, 0.7, 0.1], "silhouette") == 3
    assert M.best_k(ks, [9.0, 3.0, 4.0, 3.0], "connectivity") == 3
    assert M.best_k(ks, [np.nan, 1.0, np.nan, 2.0], "dunn") == 5
    assert M.best_k(ks, [np.nan] * 4, "dunn") is None
    with pytest.raises(ValueError, match="4 values of k but 1 index values"):
        M.best_k(ks, [1.0], "dunn")


def test_pair_counts_of_large_labelings_use_the_table_only():
    # 200,000 instances: a pair loop would take hours; the table takes milliseconds
    rng = np.random.RandomState(0)
    a = rng.randint(0, 10, 200_000)
    b = (a + (rng.rand(200_000) < 0.1)) % 10
    _, ta, tb, total = S.pair_counts(a, b)
    assert total == comb(200_000, 2)
    assert ta == sum(comb(int(c), 2) for c in np.bincount(a))
    assert tb == sum(comb(int(c), 2) for c in np.bincount(b))
    assert S.fowlkes_mallows(a, b) == pytest.approx(skm.fowlkes_mallows_score(a, b), abs=1e-12)
