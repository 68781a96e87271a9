"""ISCA and SS-ISCA (rule-ensemble clustering, Akdemir & Jannink 2014, Sect. 3; issue 7)."""

from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit import registry
from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError
from ensemblekit.rules import isca as isca_module
from ensemblekit.rules.isca import ISCA, project_out, rule_similarity, standardize_columns

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"

# Six points on a line, two groups; every tree sees every row (max_samples=1.0).
LINE = np.array([0.0, 1.0, 3.0, 10.0, 11.0, 13.0])[:, None]


def iris():
    ds = load_dataset(SAMPLE / "iris.arff")
    return ds.X, ds.y


def hamming(T, weights=None):
    """Weighted fraction of rules on which two rows differ, by explicit loops."""
    T = np.asarray(T)
    w = np.ones(T.shape[1]) if weights is None else np.asarray(weights, dtype=float)
    n = T.shape[0]
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            D[i, j] = sum(w[k] for k in range(T.shape[1]) if T[i, k] != T[j, k]) / w.sum()
    return D


# ---------------------------------------------------------------------------
# the similarity
# ---------------------------------------------------------------------------
def test_rule_similarity_by_hand():
    T = np.array([[1, 0, 1],
                  [1, 1, 0],
                  [0, 0, 1],
                  [1, 0, 1]])
    # rows 0/1 agree on rule 0 only, 0/2 on rules 1 and 2, 1/2 on none, 0/3 on all
    expected = np.array([[1, 1 / 3, 2 / 3, 1],
                         [1 / 3, 1, 0, 1 / 3],
                         [2 / 3, 0, 1, 2 / 3],
                         [1, 1 / 3, 2 / 3, 1]])
    assert_allclose(rule_similarity(T), expected, rtol=0, atol=1e-15)
    # weights 2, 1, 1: 0/1 agree on weight 2 of 4, 0/2 on 2 of 4
    weighted = rule_similarity(T, np.array([2.0, 1.0, 1.0]))
    assert weighted[0, 1] == pytest.approx(0.5) and weighted[0, 2] == pytest.approx(0.5)
    assert weighted[1, 2] == 0.0
    # (the paper's T T' / r would have the diagonal 2/3, 2/3, 1/3, 2/3 here, not the similarity
    # of a point to itself; `expected` counts agreement on a rule being 0 as well as 1)


def test_rule_similarity_is_the_indicator_encoding_and_one_minus_hamming():
    rng = np.random.RandomState(3)
    T = (rng.rand(12, 9) < 0.35).astype(float)
    a = rng.rand(9)
    E = np.hstack([T, 1 - T])                      # each rule and its complement
    for weights in (None, a):
        w = np.ones(9) if weights is None else weights
        S = rule_similarity(T, weights)
        assert_allclose(S, E @ np.diag(np.r_[w, w]) @ E.T / w.sum(), atol=1e-12)
        assert_allclose(1 - S, hamming(T, weights), atol=1e-12)
        assert_array_equal(np.diag(S), 1.0)
        assert_array_equal(S, S.T)
        assert S.min() >= 0 and S.max() <= 1
    # sparse input gives the same matrix; zero weights count as equal weights
    import scipy.sparse as sp
    assert_array_equal(rule_similarity(sp.csc_matrix(T)), rule_similarity(T))
    assert_array_equal(rule_similarity(T, np.zeros(9)), rule_similarity(T))
    assert_array_equal(rule_similarity(np.zeros((3, 0))), np.ones((3, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        rule_similarity(T, -a)
    with pytest.raises(ValueError, match="9 finite"):
        rule_similarity(T, a[:4])


# ---------------------------------------------------------------------------
# the memory step
# ---------------------------------------------------------------------------
def test_project_out_is_the_orthogonal_projection():
    rng = np.random.RandomState(0)
    T = (rng.rand(7, 3) < 0.5).astype(float)
    T[:, 0] = [1, 1, 0, 0, 1, 0, 1]  # full column rank for sure
    T[:, 1] = [0, 1, 1, 0, 0, 1, 0]
    T[:, 2] = [0, 0, 0, 1, 1, 1, 1]
    R = rng.randn(7)
    P = T @ np.linalg.inv(T.T @ T) @ T.T            # the paper's formula, in the test only
    for nu in (1.0, 0.5, 0.25):
        assert_allclose(project_out(R, T, nu), R - nu * P @ R, atol=1e-12)
    assert_allclose(T.T @ project_out(R, T, 1.0), 0.0, atol=1e-12)
    assert_array_equal(project_out(R, T, 0.0), R)
    # a repeated column leaves the span, and so the projection, unchanged
    assert_allclose(project_out(R, np.hstack([T, T[:, :1]]), 1.0), R - P @ R, atol=1e-12)
    assert_array_equal(project_out(R, np.zeros((7, 0)), 1.0), R)


def test_standardize_columns():
    A = np.array([[1.0, 5.0], [3.0, 5.0], [5.0, 5.0]])
    Z = standardize_columns(A)
    assert_allclose(Z[:, 0], np.array([-2.0, 0.0, 2.0]) / np.sqrt(8 / 3))
    assert_array_equal(Z[:, 1], 0.0)  # a constant column carries no direction


def test_with_memory_each_target_is_orthogonal_to_the_earlier_rules(monkeypatch):
    targets = []
    real = isca_module.generate_isle

    def spy(X, y, **kwargs):
        if not targets or targets[-1] is not y:
            targets.append(y)
        return real(X, y, **kwargs)

    monkeypatch.setattr(isca_module, "generate_isle", spy)
    rng = np.random.RandomState(1)
    X = rng.rand(80, 3)
    model = ISCA(n_clusters=2, n_stages=4, n_rules=8, learning_rate=1.0, random_state=0).fit(X)
    assert len(targets) == 4
    T = model.rules_.transform(X).toarray()
    for stage in range(1, 4):
        earlier = T[:, model.rule_stages_ < stage]
        R = targets[stage]
        assert earlier.shape[1] > 0
        assert np.abs(earlier.T @ R).max() <= 1e-9 * np.linalg.norm(R) * np.sqrt(80)
    # without memory the targets are plain random projections, not orthogonal
    targets.clear()
    ISCA(n_clusters=2, n_stages=4, n_rules=8, random_state=0).fit(X)
    early = T[:, model.rule_stages_ == 0]
    assert np.abs(early.T @ targets[1]).max() > 1e-3


# ---------------------------------------------------------------------------
# fitting: a case computed by hand
# ---------------------------------------------------------------------------
def test_rules_similarity_and_clusters_by_hand():
    # Every tree sees all six rows and x is the only feature, so the target is
    # +-standardised x and every depth-2 tree is the same: x <= 6.5 (node 1;
    # its sibling x > 6.5 is its complement), then x <= 2 on the left (SSE 0.5
    # against 2 for x <= 0.5) and x <= 12 on the right. Later trees repeat
    # these partitions and add nothing.
    model = ISCA(n_clusters=2, n_stages=4, n_rules=10, max_depth=2, max_samples=1.0,
                 random_state=0).fit(LINE)
    assert model.describe_rules() == ["x0 <= 6.5", "x0 <= 2", "2 < x0 <= 6.5",
                                      "6.5 < x0 <= 12", "x0 > 12"]
    assert model.describe_rules(top=2) == ["x0 <= 6.5", "x0 <= 2"]
    assert model.n_rules_ == 5
    assert_allclose(model.rules_.support, [3 / 6, 2 / 6, 1 / 6, 2 / 6, 1 / 6])
    assert_array_equal(model.rule_stages_, 0)
    # rows 0 and 2 agree on {0,1,2}, {3,4}, {5} (3 of 5); 0 and 3 on {2}, {5}; ...
    expected = np.array([[1, 1, .6, .4, .4, .4],
                         [1, 1, .6, .4, .4, .4],
                         [.6, .6, 1, .4, .4, .4],
                         [.4, .4, .4, 1, 1, .6],
                         [.4, .4, .4, 1, 1, .6],
                         [.4, .4, .4, .6, .6, 1]])
    assert_allclose(model.similarity_, expected, atol=1e-15)
    assert_array_equal(model.labels_, [0, 0, 0, 1, 1, 1])
    # average linkage: {0,1} and {3,4} at distance 0 first, then 2 and 5 at 0.4
    assert_array_equal(model.labels_for(4), [0, 0, 1, 2, 2, 3])
    assert_array_equal(model.labels_for(6), np.arange(6))
    assert_array_equal(model.labels_for(1), np.zeros(6))
    # one split per tree: a single rule, found again by every stage and kept once
    stump = ISCA(n_clusters=2, n_stages=3, n_rules=4, max_depth=1, max_samples=1.0,
                 random_state=0).fit(LINE)
    assert stump.describe_rules() == ["x0 <= 6.5"]
    assert_array_equal(stump.similarity_, np.kron(np.eye(2), np.ones((3, 3))))


def test_linkage_matches_scipy_on_the_similarity():
    X, _ = iris()
    for method in ("average", "single", "complete"):
        model = ISCA(n_clusters=3, n_stages=5, linkage=method, random_state=2).fit(X)
        expected = linkage(squareform(1 - model.similarity_, checks=False), method=method)
        assert_array_equal(model.linkage_matrix_, expected)


# ---------------------------------------------------------------------------
# invariants on real data
# ---------------------------------------------------------------------------
def test_iris_invariants():
    X, _ = iris()
    model = ISCA(n_clusters=3, n_stages=10, n_rules=15, random_state=4).fit(X)
    S = model.similarity_
    assert S.shape == (150, 150) and S.dtype == np.float64
    assert_array_equal(np.diag(S), 1.0)
    assert_array_equal(S, S.T)
    assert S.min() >= 0 and S.max() <= 1
    T = model.rules_.transform(X).toarray()
    assert T.shape == (150, model.n_rules_) and model.n_rules_ == 150  # 10 stages x 15 rules
    assert_allclose(1 - S, squareform(pdist(T, "hamming")), atol=1e-15)
    # 15 rules per stage, stages in order, no rule repeated nor complemented
    assert_array_equal(np.bincount(model.rule_stages_), np.full(10, 15))
    keys = {tuple(c) if c[0] == 0 else tuple(1 - c) for c in T.T.astype(int)}
    assert len(keys) == model.n_rules_
    assert_allclose(model.rules_.support, T.mean(axis=0))
    assert set(np.unique(T)) == {0.0, 1.0}
    # labels 0..k-1 numbered by first appearance
    labels = model.labels_
    assert labels.dtype.kind == "i" and set(labels) == {0, 1, 2}
    firsts = [np.flatnonzero(labels == c)[0] for c in range(3)]
    assert firsts == sorted(firsts)


def test_same_seed_same_bytes_and_labels_for_equals_a_refit():
    X, _ = iris()
    for nu in (0.0, 0.5):
        a = ISCA(n_clusters=3, n_stages=8, learning_rate=nu, random_state=11).fit(X)
        b = ISCA(n_clusters=3, n_stages=8, learning_rate=nu, random_state=11).fit(X)
        assert a.similarity_.tobytes() == b.similarity_.tobytes()
        assert a.labels_.tobytes() == b.labels_.tobytes()
        assert a.describe_rules() == b.describe_rules()
        for k in (2, 4, 7):
            refit = ISCA(n_clusters=k, n_stages=8, learning_rate=nu, random_state=11).fit(X)
            assert_array_equal(a.labels_for(k), refit.labels_)
    other = ISCA(n_clusters=3, n_stages=8, random_state=12).fit(X)
    assert not np.array_equal(other.similarity_, a.similarity_)
    # the memory layout of X does not matter (it would change the projections' last bits)
    fortran = ISCA(n_clusters=3, n_stages=8, learning_rate=0.5, random_state=11).fit(
        np.asfortranarray(X))
    assert fortran.similarity_.tobytes() == a.similarity_.tobytes()


# ---------------------------------------------------------------------------
# SS-ISCA
# ---------------------------------------------------------------------------
def two_views(seed=0):
    """x0 splits the rows in two by a small gap; x1 by a much larger one, the other way."""
    rng = np.random.RandomState(seed)
    n = 40
    by_x0 = np.arange(n) % 2 == 1
    by_x1 = np.arange(n) < n // 2
    x0 = np.where(by_x0, rng.uniform(0.6, 1.0, n), rng.uniform(0.0, 0.4, n))
    x1 = np.where(by_x1, rng.uniform(0.0, 1.0, n), rng.uniform(50.0, 51.0, n))
    return np.c_[x0, x1], by_x0.astype(int), by_x1.astype(int)


def test_ss_isca_follows_the_targets():
    X, by_x0, by_x1 = two_views()
    y = by_x0 * 3.0 - 1.0
    model = ISCA(n_clusters=2, n_stages=10, supervised=True, random_state=0).fit(X, y)
    # the target is a step in x0: the first split of every tree is in x0's gap
    first = model.rules_.rules[0].conditions
    assert len(first) == 1 and first[0].feature == 0 and 0.4 < first[0].threshold < 0.6
    assert_array_equal(model.labels_, by_x0)
    # a 2-column target matrix whose projections all separate the x1 groups
    Y = np.c_[by_x1, 2.0 * by_x1]
    assert_array_equal(ISCA(n_clusters=2, n_stages=10, supervised=True, random_state=0)
                       .fit(X, Y).labels_, 1 - by_x1)
    # unsupervised ISCA ignores y
    a = ISCA(n_clusters=2, n_stages=5, random_state=0).fit(X, y)
    b = ISCA(n_clusters=2, n_stages=5, random_state=0).fit(X)
    assert a.similarity_.tobytes() == b.similarity_.tobytes()
    # fit_predict passes y on (ClusterMixin's does not)
    assert_array_equal(ISCA(n_clusters=2, n_stages=10, supervised=True, random_state=0)
                       .fit_predict(X, y), by_x0)


@pytest.mark.parametrize("postprocess", ["pls", "lasso"])
def test_importance_weights(postprocess):
    X, _ = iris()
    y = X[:, 3]
    model = ISCA(n_clusters=3, n_stages=6, similarity="importance", postprocess=postprocess,
                 supervised=True, random_state=0).fit(X[:, :3], y)
    s = model.rules_.support
    assert model.coef_.shape == (model.n_rules_,)
    # the paper's weights for SS-ISCA with one target: diag(|w| / sqrt(s(1 - s))), s the supports
    # (Akdemir & Jannink, Sect. 3); not the rule importance |w| sqrt(s(1 - s)) of Sect. 2
    assert_allclose(model.rule_weights_, np.abs(model.coef_) / np.sqrt(s * (1 - s)))
    assert model.rule_weights_.sum() > 0
    T = model.rules_.transform(X[:, :3]).toarray()
    assert_allclose(1 - model.similarity_, hamming(T, model.rule_weights_), atol=1e-12)
    assert_array_equal(np.diag(model.similarity_), 1.0)
    if postprocess == "lasso":
        used = model.coef_ != 0
        assert 0 < used.sum() < model.n_rules_  # the lasso drops rules; they weigh nothing
        assert_allclose(model.similarity_, rule_similarity(T[:, used], model.rule_weights_[used]),
                        atol=1e-12)
    else:
        # PLS: coefficients of y on the rules; its fitted values correlate with y
        fitted = T @ model.coef_
        assert np.corrcoef(fitted, y)[0, 1] > 0.9


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    ({"n_stages": 0}, "'n_stages' parameter of ISCA must be int >= 1 and <= 100000;"),
    ({"n_rules": 2.5}, "'n_rules' parameter of ISCA must be int >= 1 and <= 100000;"),
    ({"learning_rate": 1.5}, "'learning_rate' parameter of ISCA must be float >= 0 and <= 1;"),
    ({"max_depth": 0}, "'max_depth' parameter of ISCA must be int >= 1, or none;"),
    ({"max_samples": 0.0}, "'max_samples' parameter of ISCA must be float > 0 and <= 1, or none;"),
    ({"linkage": "ward"}, r"'linkage' parameter of ISCA must be average\|single\|complete;"),
    ({"similarity": "cosine"}, r"'similarity' parameter of ISCA must be agreement\|importance;"),
    ({"postprocess": "ridge"}, r"'postprocess' parameter of ISCA must be pls\|lasso;"),
    ({"n_clusters": 0}, "'n_clusters' parameter of ISCA must be int >= 1;"),
    ({"n_clusters": 7}, "n_samples=6 should be >= n_clusters=7"),
    ({"similarity": "importance"}, "needs supervised=True"),
])
def test_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        ISCA(**params).fit(LINE)


def test_bad_targets():
    with pytest.raises(ValueError, match=r"ss-isca needs target columns \(--targets NAME,...\)"):
        ISCA(supervised=True).fit(LINE)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ISCA(supervised=True).fit(LINE, np.arange(5.0))
    with pytest.raises(ValueError, match="NaN"):
        ISCA(supervised=True).fit(LINE, np.array([1.0, np.nan, 2, 3, 4, 5]))
    with pytest.raises(ValueError, match="exactly one target column, got 2"):
        ISCA(similarity="importance", supervised=True).fit(LINE, np.ones((6, 2)))
    with pytest.raises(ValueError, match="NaN"):
        ISCA().fit(np.array([[0.0], [np.nan], [1.0]]))


@parametrize_with_checks([ISCA(n_stages=3, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------
# registry and data
# ---------------------------------------------------------------------------
def test_registry_entries():
    ds = load_dataset(SAMPLE / "iris.arff")
    isca = registry.make_estimator("isca", ds.schema, {"n_stages": 4}, random_state=3)
    assert isca.named_steps["model"].supervised is False
    ss = registry.make_estimator("ss-isca", ds.schema, {"n_stages": 4}, random_state=3)
    assert ss.named_steps["model"].supervised is True
    assert "similarity" in registry.get("ss-isca").param_names
    assert "similarity" not in registry.get("isca").param_names
    assert registry.get("isca").task == registry.get("ss-isca").task == registry.CLUSTERING
    # the pipeline hands y to the estimator, the same labels as the bare estimator
    y = ds.X[:, 3]
    labels = ss.fit_predict(ds.X, y)
    bare = ISCA(n_stages=4, supervised=True, random_state=3).fit(ds.X, y)
    assert_array_equal(labels, bare.labels_)
    assert_array_equal(isca.fit_predict(ds.X), ISCA(n_stages=4, random_state=3).fit(ds.X).labels_)


def test_split_targets(tmp_path):
    path = tmp_path / "t.arff"
    path.write_text("@relation t\n@attribute a numeric\n@attribute c {u,v,w}\n"
                    "@attribute b numeric\n@attribute class {p,q}\n@data\n"
                    "1,u,10,p\n?,v,20,q\n4,?,30,p\n7,v,?,q\n")
    ds = load_dataset(path)
    reduced, Y, columns = ds.split_targets(["c", "a"])
    assert columns == ("c=u", "c=v", "c=w", "a")
    # missing: the column mean of the known values (c: shares of u, v, w among 3 rows)
    assert_allclose(Y, [[1, 0, 0, 1],
                        [0, 1, 0, 4],
                        [1 / 3, 2 / 3, 0, 4],
                        [0, 1, 0, 7]])
    assert [a.name for a in reduced.schema.features] == ["b"]
    assert reduced.schema.class_attribute.name == "class"
    assert_array_equal(reduced.y, ds.y)
    assert_array_equal(reduced.X, ds.X[:, [2]])
    with pytest.raises(DataError, match="no attribute 'z' to use as a target; attributes: 'a', "
                       "'c', 'b'"):
        ds.split_targets(["z"])
    with pytest.raises(DataError, match="'class' is the class attribute"):
        ds.split_targets(["class"])
    with pytest.raises(DataError, match="'a' is named twice"):
        ds.split_targets(["a", "a"])
    with pytest.raises(DataError, match="no target attributes"):
        ds.split_targets([])


def test_project_out_is_exact_for_a_rank_deficient_rule_matrix():
    # a parent rule is the sum of its two children: real rule matrices lose rank this way
    rng = np.random.RandomState(0)
    children = (rng.rand(150, 60) < 0.3).astype(np.float64)
    T = np.hstack([children, children[:, :30] + children[:, 30:]])  # 90 columns, rank <= 60
    R = rng.randn(150)
    out = project_out(R, T, 1.0)
    U, s, _ = np.linalg.svd(T, full_matrices=False)
    basis = U[:, s > s[0] * max(T.shape) * np.finfo(float).eps]
    np.testing.assert_allclose(out, R - basis @ (basis.T @ R), atol=1e-10)
    assert np.abs(T.T @ out).max() < 1e-9
