"""The clustering indices are numpy only, and agree with scikit-learn and scipy (issue 28).

scikit-learn and scipy are the reference implementations here: the tests import
them, the module under test must not. The indices are written with the reference's
operations in the reference's order, so most comparisons are exact (``==``).
"""

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn import metrics as skm

from ensemblekit.scores import clustering as S

SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"


def sk_nmi(a, b):
    return skm.normalized_mutual_info_score(a, b, average_method="geometric")


def sk_purity(a, b):
    return skm.cluster.contingency_matrix(a, b).max(axis=0).sum() / len(a)


def random_labelings(seed, count=25):
    """Pairs of labelings of many shapes: gaps, one cluster, all singletons, near-equal."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(1, 250))
        a = rng.integers(0, int(rng.integers(1, 10)), n)
        b = rng.integers(0, int(rng.integers(1, 10)), n)
        kind = trial % 6
        if kind == 1:
            b = np.arange(n)  # all singletons
        elif kind == 2:
            a = np.zeros(n, dtype=int)  # one cluster
        elif kind == 3:
            a, b = a * 7 - 100, b * 1_000_003 + 5  # gaps, negative and large ids
        elif kind == 4:
            b = np.where(rng.random(n) < 0.8, a, b)  # close partitions
        elif kind == 5:
            b = np.array(["x", "y", "zz", "w"])[b % 4]  # strings against ints
        yield a, b


@pytest.mark.parametrize("seed", range(4))
def test_external_indices_equal_scikit_learn_on_random_labelings(seed):
    for a, b in random_labelings(seed):
        assert S.nmi(a, b) == sk_nmi(a, b)
        assert S.nmi(b, a) == sk_nmi(b, a)
        assert S.adjusted_rand(a, b) == skm.adjusted_rand_score(a, b)
        assert S.purity(a, b) == sk_purity(a, b)
        n11, together_a, together_b, total = S.pair_counts(a, b)
        C = skm.cluster.pair_confusion_matrix(a, b)  # ordered pairs
        assert (C[1, 1], C[1, 0], C[0, 1], C.sum()) == (
            2 * n11, 2 * (together_a - n11), 2 * (together_b - n11), 2 * total)


@pytest.mark.parametrize("a, b", [
    ([3], [9]),                                  # one instance
    ([0, 0, 0, 0], [5, 5, 5, 5]),                # one cluster each
    ([0, 0, 0, 0], [0, 1, 2, 3]),                # one cluster against singletons
    ([0, 1, 2, 3], [0, 0, 0, 0]),
    ([0, 1, 2, 3], [3, 2, 1, 0]),                # singletons, renamed
    ([0, 0, 1, 1], [1, 1, 0, 0]),                # identical up to renaming
    ([0, 0, 1, 1], [0, 1, 0, 1]),                # worse than chance
    ([True, False, True], [2.5, 2.5, -1.0]),     # booleans against floats
])
@pytest.mark.filterwarnings("ignore:Clustering metrics expects discrete values")
def test_external_indices_special_cases_equal_scikit_learn(a, b):
    assert S.nmi(a, b) == sk_nmi(a, b)
    assert S.adjusted_rand(a, b) == skm.adjusted_rand_score(a, b)
    assert S.purity(a, b) == sk_purity(a, b)


def test_nmi_is_the_geometric_mean_normalisation_not_scikit_learns_default():
    a, b = [0, 0, 0, 1, 1, 2], [0, 0, 1, 1, 2, 2]
    assert S.nmi(a, b) == sk_nmi(a, b)
    assert S.nmi(a, b) != pytest.approx(skm.normalized_mutual_info_score(a, b), rel=1e-6)


def random_internal_cases(seed, count=15):
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(3, 200))
        X = rng.normal(size=(n, int(rng.integers(1, 12)))) * 10.0 ** int(rng.integers(-3, 4))
        labels = rng.integers(0, int(rng.integers(2, min(n, 12) + 1)), n)
        if trial % 4 == 1:
            X = np.round(X, 1)  # ties and duplicate rows
            X[0] = X[1]
        if trial % 4 == 2:
            X = np.asfortranarray(X)  # the column layout changes the mean's rounding
        if trial % 4 == 3:
            labels = labels * 13 - 40  # gaps and negative ids
        if trial % 5 == 4 and n > 4:
            labels = np.r_[np.arange(n - 2), 0, 1]  # nearly all singletons
        if 1 < np.unique(labels).shape[0] < n:
            yield X, labels


@pytest.mark.parametrize("seed", range(4))
def test_internal_indices_equal_scikit_learn_and_scipy_on_random_data(seed):
    for X, labels in random_internal_cases(seed):
        assert S.silhouette(X, labels) == skm.silhouette_score(X, labels)
        assert S.davies_bouldin(X, labels) == skm.davies_bouldin_score(X, labels)
        assert S.calinski_harabasz(X, labels) == skm.calinski_harabasz_score(X, labels)
        np.testing.assert_array_equal(S._exact_distances(X, X), cdist(X, X))


def test_internal_indices_special_cases_equal_scikit_learn():
    X = np.array([[0.0, 0], [0, 0], [1, 1], [1, 1], [5, 5]])
    for labels in ([0, 0, 1, 1, 2], [0, 1, 0, 1, 2], [0, 0, 0, 0, 1], [7, 7, 7, -1, 3]):
        assert S.silhouette(X, labels) == skm.silhouette_score(X, labels)
        assert S.davies_bouldin(X, labels) == skm.davies_bouldin_score(X, labels)
        assert S.calinski_harabasz(X, labels) == skm.calinski_harabasz_score(X, labels)
    same = np.ones((4, 2))  # every distance 0: DB is 0, CH is 1 (W = 0)
    assert S.davies_bouldin(same, [0, 0, 1, 1]) == skm.davies_bouldin_score(same, [0, 0, 1, 1]) == 0
    assert S.calinski_harabasz(same, [0, 0, 1, 1]) == 1.0
    assert S.silhouette(same, [0, 0, 1, 1]) == skm.silhouette_score(same, [0, 0, 1, 1]) == 0
    ints = np.arange(12).reshape(6, 2) ** 2  # integer data are scored as float64
    assert S.silhouette(ints, [0, 0, 1, 1, 2, 2]) == skm.silhouette_score(ints, [0, 0, 1, 1, 2, 2])
    assert S.davies_bouldin(ints, [0, 0, 1, 1, 2, 2]) == skm.davies_bouldin_score(
        ints, [0, 0, 1, 1, 2, 2])


@pytest.mark.parametrize("f, sk", [(S.silhouette, skm.silhouette_score),
                                   (S.davies_bouldin, skm.davies_bouldin_score),
                                   (S.calinski_harabasz, skm.calinski_harabasz_score)])
@pytest.mark.parametrize("labels", [[0, 0, 0, 0], [0, 1, 2, 3]])
def test_undefined_partitions_keep_scikit_learns_error(f, sk, labels):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError) as expected:
        sk(X, labels)
    with pytest.raises(ValueError) as got:
        f(X, labels)
    assert str(got.value) == str(expected.value)
    assert type(got.value) is ValueError  # as before: callers see the same exception


def test_blocks_of_rows_give_the_same_numbers(monkeypatch):
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(300, 4)), 1)
    labels = rng.integers(0, 5, 300)
    expected = skm.silhouette_score(X, labels)
    dunn, conn = S.dunn(X, labels), S.connectivity(X, labels)
    monkeypatch.setattr(S, "_BLOCK_BYTES", 8 * 300 * 7)  # blocks of 7 rows
    assert S.silhouette(X, labels) == expected  # one product X X^T, reduced by blocks
    assert S.dunn(X, labels) == dunn and S.connectivity(X, labels) == conn
    monkeypatch.setattr(S, "_GRAM_BYTES", 0)  # products by blocks of rows too
    assert S.silhouette(X, labels) == pytest.approx(expected, rel=1e-12)


def real_data_sets():
    from ensemblekit.data import load_dataset

    for name in ("iris", "wine", "glass", "vote", "breast-cancer"):
        ds = load_dataset(SAMPLE_DATA / f"{name}.arff")
        X = np.asarray(ds.X, dtype=float)
        X = np.where(np.isnan(X), np.nanmean(X, axis=0), X)  # vote has missing values
        yield name, X, np.asarray(ds.y)


@pytest.mark.slow
def test_indices_on_the_sample_data_equal_scikit_learn_and_scipy():
    from sklearn.cluster import KMeans

    for name, X, y in real_data_sets():
        for k in (2, 3, 6):
            labels = KMeans(k, n_init=2, random_state=0).fit_predict(X)
            assert S.nmi(y, labels) == sk_nmi(y, labels), name
            assert S.adjusted_rand(y, labels) == skm.adjusted_rand_score(y, labels), name
            assert S.purity(y, labels) == sk_purity(y, labels), name
            assert S.silhouette(X, labels) == skm.silhouette_score(X, labels), name
            assert S.davies_bouldin(X, labels) == skm.davies_bouldin_score(X, labels), name
            assert S.calinski_harabasz(X, labels) == skm.calinski_harabasz_score(X, labels), name
        D = cdist(X, X)
        np.testing.assert_array_equal(S._exact_distances(X, X), D)
        apart = y[:, None] != y[None, :]
        assert S.dunn(X, y) == D[apart].min() / D[~apart].max(), name


_EVERY_FUNCTION = r"""
import inspect, json, sys
import numpy as np
from ensemblekit.scores import clustering as S
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
truth, labels = rng.integers(0, 3, 40), rng.integers(0, 4, 40)
called = []
for name, f in inspect.getmembers(S, inspect.isfunction):
    if name.startswith("_") or f.__module__ != S.__name__:
        continue
    params = list(inspect.signature(f).parameters)
    f(X, labels) if params[0] == "X" else f(truth, labels)
    called.append(name)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("sklearn", "scipy", "numba"))
print(json.dumps({"called": called, "heavy": heavy}))
"""


@pytest.mark.slow
def test_every_public_function_runs_without_scikit_learn_or_scipy():
    out = subprocess.run([sys.executable, "-c", _EVERY_FUNCTION], capture_output=True,
                         text=True, check=True).stdout
    found = json.loads(out)
    assert found["heavy"] == []
    assert {"nmi", "purity", "adjusted_rand", "pair_counts", "rand", "jaccard",
            "fowlkes_mallows", "wallace_10", "wallace_01", "silhouette", "davies_bouldin",
            "calinski_harabasz", "dunn", "connectivity"} <= set(found["called"])


@pytest.mark.slow
@pytest.mark.parametrize("f", [S.silhouette, S.dunn, S.connectivity])
def test_pairwise_indices_hold_blocks_of_rows_not_the_distance_matrix(f):
    n = 6000  # the full matrix would take 275 MiB
    rng = np.random.default_rng(0)
    X, labels = rng.normal(size=(n, 3)), rng.integers(0, 4, n)
    tracemalloc.start()
    try:
        f(X, labels)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20
    assert peak < 8 * n * n * 0.7
