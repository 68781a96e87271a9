"""ISCA at scale (issue 21): the similarity in row blocks from a bit-packed rule matrix, the
condensed linkage input, the paper's two strategies against the memory's cost (lasso selection
per stage, a sample of the rule columns for the projection; Akdemir & Jannink 2014, Sect. 3)
checked against direct computations, and --similarity-out written in blocks."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.linear_model import LassoLarsIC

from ensemblekit import api, trust, writers
from ensemblekit.data import load_dataset
from ensemblekit.rules import isca as isca_module
from ensemblekit.rules._agreement import RuleAgreement, integer_weights, pack_rules
from ensemblekit.rules.extract import extract_rules
from ensemblekit.rules.isca import ISCA, rule_similarity, standardize_columns
from ensemblekit.rules.isle import generate_isle

from ektesting.state_roundtrip import roundtrip
from ektesting.support import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris.arff"


def iris():
    ds = load_dataset(IRIS)
    return ds.X, ds.y


def rule_matrix(seed, n=23, r=13, density=0.4):
    """A random 0/1 rule matrix with some repeated rows (distance exactly 0 between them)."""
    rng = np.random.RandomState(seed)
    T = (rng.rand(n, r) < density).astype(np.int8)
    T[5] = T[2]
    T[n - 1] = T[0]
    return T


def weighted_hamming(T, w):
    """Weighted fraction of rules on which two rows differ, by explicit loops."""
    n = T.shape[0]
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            D[i, j] = sum(w[k] for k in range(T.shape[1]) if T[i, k] != T[j, k]) / w.sum()
    return D


# ---------------------------------------------------------------------------
# the packed rule matrix and the blocked agreement
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("r", [1, 8, 13, 64])
def test_packing_keeps_every_bit_and_zero_padding(r):
    T = rule_matrix(0, r=r)
    packed = pack_rules(T)
    assert packed.dtype == np.uint8 and packed.shape == (T.shape[0], (r + 7) // 8)
    bits = np.unpackbits(packed, axis=1)
    assert_array_equal(bits[:, :r], T)
    assert not bits[:, r:].any()
    assert_array_equal(pack_rules(sp.csr_matrix(T)), packed)
    assert_array_equal(pack_rules(sp.csc_matrix(T * 3)), packed)  # any nonzero fires
    assert pack_rules(np.zeros((4, 0))).shape == (4, 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_weights_give_the_dense_hamming_route_bit_for_bit(seed):
    # the previous implementation: S = 1 - squareform(pdist(T, "hamming")), and the linkage
    # input clip(squareform(1 - S)); the blocked route must give the same bits
    T = rule_matrix(seed, r=13 + seed * 40)
    S_dense = 1.0 - squareform(pdist(T.astype(float), "hamming"))
    condensed_dense = np.clip(squareform(1.0 - S_dense, checks=False), 0.0, 1.0)
    agreement = RuleAgreement(pack_rules(T), T.shape[1])
    assert agreement.condensed_distance().tobytes() == condensed_dense.tobytes()
    for rows in (1, 2, 5, 7, T.shape[0], 10**6):
        blocks = list(agreement.blocks(rows))
        assert [start for start, _ in blocks] == list(range(0, T.shape[0], rows))
        assert np.vstack([b for _, b in blocks]).tobytes() == S_dense.tobytes()
    assert rule_similarity(T).tobytes() == S_dense.tobytes()
    # repeated rows agree on every rule: distance exactly 0, similarity exactly 1
    assert S_dense[2, 5] == 1.0 and agreement.similarity_matrix()[0, -1] == 1.0


def test_weighted_agreement_is_exact_symmetric_and_blocking_free():
    T = rule_matrix(3, r=11)
    w = np.random.RandomState(4).rand(11) * np.r_[1, 1, 0, np.ones(8)]  # one weight 0
    agreement = RuleAgreement(pack_rules(T), 11, w)
    S = agreement.similarity_matrix()
    assert_allclose(1.0 - S, weighted_hamming(T, w), rtol=0, atol=1e-13)
    assert_array_equal(S, S.T)                       # exactly: whole numbers, any order
    assert_array_equal(np.diag(S), 1.0)
    assert S[2, 5] == 1.0 and S[0, -1] == 1.0       # identical rows: exactly 1
    assert S.min() >= 0.0 and S.max() <= 1.0
    for rows in (1, 4):
        assert np.vstack([b for _, b in agreement.blocks(rows)]).tobytes() == S.tobytes()
    condensed = agreement.condensed_distance()
    assert condensed.tobytes() == np.clip(squareform(1.0 - S, checks=False), 0, 1).tobytes()
    # the rounded weights keep each rule's share of the total to within 2^-52
    q, total = integer_weights(w, 11)
    assert np.all(q == np.floor(q)) and total == q.sum() and total <= 2.0**53
    assert np.max(np.abs(q / total - w / w.sum())) < 2.0**-50
    # equal or zero weights are equal weights
    assert integer_weights(np.full(11, 0.3), 11) == (None, 11.0)
    assert integer_weights(np.zeros(11), 11) == (None, 11.0)


def test_no_rules_and_tiny_inputs():
    agreement = RuleAgreement(pack_rules(np.zeros((4, 0))), 0)
    assert_array_equal(agreement.similarity_matrix(), np.ones((4, 4)))
    assert_array_equal(agreement.condensed_distance(), np.zeros(6))
    one = RuleAgreement(pack_rules(np.ones((1, 3))), 3)
    assert one.condensed_distance().shape == (0,)
    assert_array_equal(one.similarity_matrix(), [[1.0]])


# ---------------------------------------------------------------------------
# the fitted model keeps the packed rule matrix, not the n x n similarity
# ---------------------------------------------------------------------------
def test_fitted_model_holds_the_packed_rules_and_yields_the_similarity_in_blocks():
    X, _ = iris()
    model = ISCA(n_clusters=3, n_stages=10, random_state=4).fit(X)
    n = X.shape[0]
    T = model.rules_.transform(X).toarray()
    assert_array_equal(model.rule_matrix_, np.packbits(T != 0, axis=1))
    # nothing of n x n is stored: the packed rules are the only per-row matrix
    for name, value in vars(model).items():
        if isinstance(value, np.ndarray):
            assert value.size < n * n, name
    assert model.rule_matrix_.nbytes == n * ((model.n_rules_ + 7) // 8)
    S = model.similarity_
    assert S.tobytes() == (1.0 - squareform(pdist(T, "hamming"))).tobytes()
    for rows in (None, 1, 64):
        blocks = list(model.similarity_blocks(rows))
        assert np.vstack([b for _, b in blocks]).tobytes() == S.tobytes()
    # the tree is scipy's on the condensed 1 - S, and labels_for still cuts it at any k
    assert_array_equal(model.linkage_matrix_,
                       linkage(squareform(1.0 - S, checks=False), method="average"))
    assert_array_equal(model.labels_for(3), model.labels_)


@pytest.mark.slow  # fits, saves and loads isca, then refits it
def test_saved_model_is_small_loads_through_the_checks_and_keeps_its_similarity(tmp_path):
    result = api.cluster("isca", IRIS, k=3, params={"n_stages": 5}, seed=3)
    est = result.model.estimator
    path = tmp_path / "isca.ekm"
    api.save_model(result.model, path)
    assert path.stat().st_size < 150 * 150 * 8 / 2  # less than half the dense similarity alone
    loaded = api.load_model(path).estimator
    assert loaded.similarity_.tobytes() == est.similarity_.tobytes()
    assert_array_equal(loaded.labels_for(5), est.labels_for(5))
    # a damaged packed rule matrix is refused, naming it
    for bad in (lambda m: m[:, :-1].copy(), lambda m: m.astype(np.int64), lambda m: m[:2].copy()):
        def tamper(params, scalars, arrays, bad=bad):
            arrays["rule_matrix_"] = bad(arrays["rule_matrix_"])

        with pytest.raises(trust.DamagedModelError, match="rule_matrix_"):
            roundtrip(est, tamper=tamper)


def test_similarity_out_is_written_in_blocks_with_the_same_bytes(tmp_path):
    path = tmp_path / "S.csv"
    result = run("cluster", "isca", str(IRIS), "-k", "3", "-s", "n_stages=5", "--similarity-out",
                 str(path))
    assert result.exit_code == 0, result.output
    est = api.cluster("isca", IRIS, k=3, params={"n_stages": 5}, seed=1).model.estimator
    dense = writers.similarity_csv(est.similarity_)
    assert path.read_text() == dense
    assert "".join(writers.similarity_csv_parts(est.similarity_blocks(7))) == dense
    lines = dense.splitlines()
    assert len(lines) == 151 and lines[0].split(",")[:3] == ["row", "1", "2"]
    assert lines[150].startswith("150,")


# ---------------------------------------------------------------------------
# the paper's two strategies, against direct computations
# ---------------------------------------------------------------------------
def projection_case():
    rng = np.random.RandomState(0)
    T = (rng.rand(40, 12) < 0.4).astype(float)
    T[:, 7] = T[:, 2]                    # rank-deficient, as a rule matrix is
    return T, rng.randn(40)


@pytest.mark.parametrize("nu", [0.5, 1.0])
@pytest.mark.parametrize("sample", [1.0, 0.5, 0.25, 0.01])
def test_memory_step_projects_on_the_sampled_columns(nu, sample):
    T, R = projection_case()
    rng = np.random.RandomState(5)
    target, columns = isca_module._memory_step(R, T, nu, sample, rng)
    size = 12 if sample == 1 else max(1, round(sample * 12))
    assert len(columns) == size and np.all(np.diff(columns) > 0) and columns.max() < 12
    T_S = T[:, columns]
    # (I - nu P_{T_S}) R with P the orthogonal projection, from the pseudo-inverse
    assert_allclose(target, R - nu * T_S @ (np.linalg.pinv(T_S) @ R), atol=1e-10)
    if nu == 1.0:
        assert_allclose(T_S.T @ target, 0.0, atol=1e-9)
    if sample == 1.0:  # all columns: nothing drawn
        assert rng.get_state()[2] == np.random.RandomState(5).get_state()[2]
        assert_array_equal(target, isca_module.project_out(R, T, nu))


def test_memory_step_draws_every_column_alike():
    T, R = projection_case()
    rng = np.random.RandomState(1)
    counts = np.zeros(12)
    for _ in range(600):
        counts[isca_module._memory_step(R, T, 1.0, 0.25, rng)[1]] += 1
    # 3 of 12 columns per draw: each column in a quarter of the draws (sd about 10.6)
    assert np.all(np.abs(counts - 150) < 45)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_lasso_selection_is_the_nonzero_lasso_coefficients():
    T, _ = projection_case()
    rng = np.random.RandomState(2)
    R = T[:, 0] * 2.0 - T[:, 5] + 0.1 * rng.randn(40)
    keep = isca_module._lasso_selection(T, R)
    expected = LassoLarsIC(criterion="bic").fit(T, R).coef_ != 0
    assert_array_equal(keep, expected)
    assert keep[0] and keep[5] and 0 < keep.sum() < 12
    # too few rows to estimate the noise for BIC: every rule stays
    assert isca_module._lasso_selection(T[:12], R[:12]).all()


def reference_gathering(X, M, m, nu, sample, lasso, seed):
    """The stages as a plain loop: the rule columns kept and their stages."""
    rng = np.random.RandomState(seed)
    Z = standardize_columns(X)
    n = X.shape[0]
    kept, stages, seen = [], [], set()
    for stage in range(M):
        R = Z @ rng.standard_normal(Z.shape[1])
        if nu > 0 and kept:
            T = np.column_stack(kept).astype(float)
            r = T.shape[1]
            size = r if sample >= 1 else max(1, round(sample * r))
            T_S = T if size >= r else T[:, np.sort(rng.choice(r, size, replace=False))]
            projected = R - nu * T_S @ (np.linalg.pinv(T_S) @ R)
            if np.linalg.norm(projected) > 1e-9 * np.linalg.norm(R):
                R = projected
        columns = []
        for _ in range(m):
            tree = generate_isle(X, R, n_estimators=1, max_depth=3, learning_rate=0.0,
                                 random_state=int(rng.randint(np.iinfo(np.int32).max))).trees[0]
            fired = extract_rules([tree], X).transform(X).toarray() != 0
            for column in fired.T:
                if len(columns) == m:
                    break
                key = (column if not column[0] else ~column).tobytes()
                if key not in seen:
                    seen.add(key)
                    columns.append(column)
            if len(columns) == m:
                break
        keep = np.ones(len(columns), dtype=bool)
        if lasso and columns and n > len(columns) + 1:
            keep = LassoLarsIC(criterion="bic").fit(np.column_stack(columns).astype(float),
                                                    R).coef_ != 0
        kept += [c for c, k in zip(columns, keep) if k]
        stages += [stage] * int(keep.sum())
    return np.column_stack(kept), np.array(stages)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("nu, sample, lasso", [
    (0.0, 1.0, True), (0.5, 0.3, False), (1.0, 0.5, True), (0.5, 1.0, True)])
def test_both_strategies_match_a_plain_loop(nu, sample, lasso):
    X, _ = iris()
    model = ISCA(n_clusters=3, n_stages=6, n_rules=8, learning_rate=nu, projection_sample=sample,
                 rule_selection="lasso" if lasso else "all", random_state=7).fit(X)
    T, stages = reference_gathering(X, 6, 8, nu, sample, lasso, 7)
    assert_array_equal(model.rules_.transform(X).toarray() != 0, T)
    assert_array_equal(model.rule_stages_, stages)
    if lasso:
        assert model.n_rules_ < 6 * 8


def test_lasso_without_memory_keeps_a_subset_of_each_stage_and_sampling_needs_memory():
    X, _ = iris()
    every = ISCA(n_clusters=3, n_stages=8, random_state=2).fit(X)
    lasso = ISCA(n_clusters=3, n_stages=8, rule_selection="lasso", random_state=2).fit(X)
    # the same stages and trees (a dropped rule stays seen), thinned stage by stage
    all_cols = {(s, c.tobytes()) for s, c in zip(every.rule_stages_,
                                                 every.rules_.transform(X).toarray().T)}
    kept = [(s, c.tobytes()) for s, c in zip(lasso.rule_stages_,
                                             lasso.rules_.transform(X).toarray().T)]
    assert set(kept) <= all_cols and 0 < len(kept) < len(all_cols)
    # without memory there is no projection to sample for
    plain = ISCA(n_clusters=3, n_stages=8, projection_sample=0.2, random_state=2).fit(X)
    assert plain.similarity_.tobytes() == every.similarity_.tobytes()


def test_new_parameters_are_checked():
    X, _ = iris()
    with pytest.raises(ValueError, match="'rule_selection' parameter of ISCA must be all|lasso"):
        ISCA(rule_selection="ridge").fit(X)
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="'projection_sample' parameter of ISCA"):
            ISCA(projection_sample=bad).fit(X)
