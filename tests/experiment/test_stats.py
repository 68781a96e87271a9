import csv
import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from ensemblekit.stats import (
    FriedmanResult,
    PairedResult,
    average_ranks,
    corrected_resampled_ttest,
    critical_difference,
    friedman_from_ranks,
    friedman_min_pvalue,
    friedman_test,
    holm,
    nemenyi_q,
    paired_min_pvalue,
    sign_test,
    wilcoxon_holm,
    wilcoxon_signed_rank,
)


def test_average_ranks_hand_computed_with_ties():
    # data set 1: 0.9 > 0.8 = 0.8 -> ranks 1, 2.5, 2.5
    # data set 2: 0.9 > 0.7 > 0.6 -> ranks 2, 1, 3
    scores = [[0.9, 0.8, 0.8], [0.7, 0.9, 0.6]]
    np.testing.assert_allclose(average_ranks(scores), [1.5, 1.75, 2.75])


def test_average_ranks_lower_is_better_reverses():
    scores = [[1.0, 2.0, 3.0]]
    np.testing.assert_allclose(average_ranks(scores, greater_is_better=False), [1, 2, 3])
    np.testing.assert_allclose(average_ranks(scores, greater_is_better=True), [3, 2, 1])


def test_ranks_sum_to_k_k_plus_one_over_two():
    rng = np.random.default_rng(0)
    scores = rng.random((7, 5))
    assert average_ranks(scores).sum() == pytest.approx(5 * 6 / 2)


@pytest.mark.parametrize("bad", [[], [1.0, 2.0], [[np.nan, 1.0]]])
def test_average_ranks_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        average_ranks(bad)


# ---------------------------------------------------------------------------
# Published reference values
# ---------------------------------------------------------------------------

# Demšar (2006), Table 5: critical values q_alpha of the two-tailed Nemenyi test,
# k = 2..10.
Q_005 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
Q_010 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]

# Demšar (2006), Table 6: AUC of C4.5, C4.5+m, C4.5+cf and C4.5+m+cf on 14 data
# sets (columns 1-2 are his Table 2). Values cross-checked in public code that
# embeds the table: scipy's TestFriedmanChiSquare (scipy/scipy,
# scipy/stats/tests/test_stats.py; also in the installed scipy 1.17), and two Java
# test drivers (a Wilcoxon and a Friedman tester citing the sci2s statistical-
# analysis course) with the full 14 x 4 table; columns 1-2 also appear in the
# Wilcoxon tests of NRough and ddmtolab. All agree on every entry but one: on
# "voting" the Java files print 0.975 for both C4.5+cf and C4.5+m+cf (as the
# rounded table does), while scipy writes 0.9751 for C4.5+cf. Demšar's published
# average ranks (2.893 and 1.964) follow only if C4.5+cf ranks ahead of C4.5+m+cf
# on voting, so the unrounded AUCs must differ there; we use scipy's 0.9751. With
# 0.975 the two ranks would come out 2.929 and 1.929 instead.
DEMSAR_TABLE6 = np.array([
    # C4.5   C4.5+m  C4.5+cf C4.5+m+cf
    [0.763, 0.768, 0.771, 0.798],   # adult (sample)
    [0.599, 0.591, 0.590, 0.569],   # breast cancer
    [0.954, 0.971, 0.968, 0.967],   # breast cancer wisconsin
    [0.628, 0.661, 0.654, 0.657],   # cmc
    [0.882, 0.888, 0.886, 0.898],   # ionosphere
    [0.936, 0.931, 0.916, 0.931],   # iris
    [0.661, 0.668, 0.609, 0.685],   # liver disorders
    [0.583, 0.583, 0.563, 0.625],   # lung cancer
    [0.775, 0.838, 0.866, 0.875],   # lymphography
    [1.000, 1.000, 1.000, 1.000],   # mushroom
    [0.940, 0.962, 0.965, 0.962],   # primary tumor
    [0.619, 0.666, 0.614, 0.669],   # rheum
    [0.972, 0.981, 0.9751, 0.975],  # voting (see above)
    [0.957, 0.978, 0.946, 0.970],   # wine
])
DEMSAR_RANKS = [3.143, 2.000, 2.893, 1.964]  # Sect. 3.2.4
DEMSAR_CHI2 = 9.28
DEMSAR_FF = 3.69
DEMSAR_CD_005 = 1.25
DEMSAR_CD_010 = 1.12


@pytest.mark.parametrize("k, q", list(zip(range(2, 11), Q_005)))
def test_nemenyi_q_matches_demsar_table5_alpha_005(k, q):
    assert nemenyi_q(k, 0.05) == pytest.approx(q, abs=1e-3)


@pytest.mark.parametrize("k, q", list(zip(range(2, 11), Q_010)))
def test_nemenyi_q_matches_demsar_table5_alpha_010(k, q):
    assert nemenyi_q(k, 0.10) == pytest.approx(q, abs=1e-3)


def test_nemenyi_q_for_two_algorithms_is_the_normal_quantile():
    # With k = 2 the studentized range over sqrt(2) is |Z|: q = z_{1 - alpha/2}.
    assert nemenyi_q(2, 0.05) == pytest.approx(sps.norm.ppf(0.975), abs=1e-6)


def test_friedman_reproduces_demsar_worked_example():
    res = friedman_test(DEMSAR_TABLE6)
    assert isinstance(res, FriedmanResult)
    np.testing.assert_allclose(res.ranks, DEMSAR_RANKS, atol=5e-4)
    # Demšar's worked example leaves the ties of Table 6 uncorrected: 9.28 and 3.69; the
    # corrected statistic, which decides, is scipy's
    assert res.chi2_uncorrected == pytest.approx(DEMSAR_CHI2, abs=5e-3)
    assert res.tie_correction < 1
    assert res.chi2 == pytest.approx(sps.friedmanchisquare(*DEMSAR_TABLE6.T).statistic)
    n, k = DEMSAR_TABLE6.shape
    assert res.iman_davenport == pytest.approx((n - 1) * res.chi2 / (n * (k - 1) - res.chi2))
    assert res.iman_davenport > DEMSAR_FF
    assert (res.n_datasets, res.n_algorithms) == (14, 4)
    # Demšar: F_F = 3.69 exceeds the critical F(3, 39) = 2.85 at alpha = 0.05.
    assert sps.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=5e-3)
    assert res.f_pvalue < 0.05
    assert res.chi2_pvalue < 0.05


def test_friedman_from_published_ranks():
    # The whole chain from the ranks Demšar prints, without the score table.
    res = friedman_from_ranks(DEMSAR_RANKS, 14)
    assert res.chi2 == pytest.approx(DEMSAR_CHI2, abs=5e-3)
    assert res.iman_davenport == pytest.approx(DEMSAR_FF, abs=5e-3)
    assert res.chi2_pvalue == pytest.approx(sps.chi2.sf(res.chi2, 3))
    assert res.f_pvalue == pytest.approx(sps.f.sf(res.iman_davenport, 3, 39))


def test_critical_difference_matches_demsar_example():
    assert critical_difference(4, 14, 0.05) == pytest.approx(DEMSAR_CD_005, abs=5e-3)
    assert critical_difference(4, 14, 0.10) == pytest.approx(DEMSAR_CD_010, abs=5e-3)


def test_critical_difference_formula():
    # CD = q_alpha sqrt(k(k+1)/(6N)): with k = 3, N = 6, sqrt(12/36) = 1/sqrt(3).
    assert critical_difference(3, 6) == pytest.approx(nemenyi_q(3) / np.sqrt(3))


def test_wilcoxon_reproduces_demsar_c45_vs_c45m():
    # Demšar Sect. 3.1.3 (Table 2): R+ = 93, R- = 12, T = min = 12, which is below
    # the critical value 21 for N = 14 at alpha = 0.05.
    (res,) = wilcoxon_holm(DEMSAR_TABLE6[:, :2], baseline=0)
    assert isinstance(res, PairedResult)
    assert res.index == 1
    # the signed ranks of the transcribed table give Demšar's sums (zero differences split
    # evenly between the two, as he does), and the statistic is the smaller one
    d = np.round(DEMSAR_TABLE6[:, 1] - DEMSAR_TABLE6[:, 0], 3)
    ranks = sps.rankdata(np.abs(d))
    r_plus = ranks[d > 0].sum() + ranks[d == 0].sum() / 2
    r_minus = ranks[d < 0].sum() + ranks[d == 0].sum() / 2
    assert (r_plus, r_minus) == (93.0, 12.0)
    assert res.statistic == pytest.approx(12.0)
    assert res.pvalue < 0.05
    assert res.adjusted_pvalue == pytest.approx(res.pvalue)  # one comparison
    assert res.significant and res.better


def test_wilcoxon_holm_adjusts_over_all_comparisons():
    results = wilcoxon_holm(DEMSAR_TABLE6, baseline=0)
    assert [r.index for r in results] == [1, 2, 3]
    adjusted = [r.adjusted_pvalue for r in results]
    np.testing.assert_allclose(adjusted, holm([r.pvalue for r in results]))
    for r in results:
        assert r.significant == (r.adjusted_pvalue < 0.05)


def test_wilcoxon_holm_better_follows_direction():
    scores = np.array([[0.1, 0.2], [0.3, 0.5], [0.2, 0.4], [0.6, 0.7], [0.4, 0.45]])
    (hi,) = wilcoxon_holm(scores, baseline=0, greater_is_better=True)
    (lo,) = wilcoxon_holm(scores, baseline=0, greater_is_better=False)
    assert hi.better and not lo.better
    assert hi.pvalue == lo.pvalue


def test_wilcoxon_all_zero_differences_give_p_one_without_warning():
    scores = np.tile([[0.8, 0.8, 0.7]], (6, 1)) + np.arange(6)[:, None] * 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = wilcoxon_holm(scores, baseline=0)
    same = results[0]
    assert same.index == 1
    assert same.pvalue == 1.0 and same.adjusted_pvalue == 1.0
    assert same.statistic == pytest.approx(6 * 7 / 4)
    assert not same.significant and not same.better


# ---------------------------------------------------------------------------
# Friedman edge cases
# ---------------------------------------------------------------------------


def test_friedman_all_rows_tied_gives_chi2_zero_p_one():
    scores = np.array([[0.5, 0.5, 0.5], [0.7, 0.7, 0.7], [0.1, 0.1, 0.1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = friedman_test(scores)
    assert res.chi2 == 0.0 and res.iman_davenport == 0.0
    assert res.chi2_pvalue == 1.0 and res.f_pvalue == 1.0


def test_friedman_identical_ordering_leaves_f_undefined_and_gives_the_exact_p():
    # Every data set orders the algorithms 1, 2, 3: chi2 reaches its maximum N(k-1), where
    # F = (N-1) chi2 / (N(k-1) - chi2) divides by zero. It is undefined (not inf, not p = 0);
    # the decision uses the exact p of that outcome: all 4 of 3! orders alike, 3!/3!^4 = 1/216.
    scores = np.array([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.99, 0.98, 0.1], [3.0, 2.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = friedman_test(scores)
    assert res.chi2 == pytest.approx(4 * 2)
    assert not res.f_defined
    assert np.isnan(res.iman_davenport) and np.isnan(res.f_pvalue)
    assert res.chi2_pvalue == pytest.approx(sps.chi2.sf(8.0, 2))
    assert res.pvalue_source == "exact" and res.pvalue == 1 / 216


def test_friedman_exact_p_at_the_maximum_agrees_with_enumeration():
    # N = 3 data sets, k = 3: of the 6^3 equally likely ranking triples, chi2 reaches its
    # maximum in exactly 6 (all three alike)
    import itertools

    perms = list(itertools.permutations([1.0, 2.0, 3.0]))
    at_max = sum(friedman_test(-np.array(rows)).chi2 == 6.0
                 for rows in itertools.product(perms, repeat=3))
    assert at_max == 6
    res = friedman_test([[3, 2, 1], [30, 20, 10], [0.3, 0.2, 0.1]])
    assert res.pvalue == pytest.approx(at_max / 6**3)


def test_friedman_lower_is_better_mirrors():
    rng = np.random.default_rng(1)
    scores = rng.random((8, 4))
    a = friedman_test(scores, greater_is_better=True)
    b = friedman_test(-scores, greater_is_better=False)
    np.testing.assert_allclose(a.ranks, b.ranks)
    assert a.chi2 == pytest.approx(b.chi2)


def test_friedman_agrees_with_scipy_without_ties():
    # Without ties scipy's tie correction is 1, so the statistics must coincide.
    rng = np.random.default_rng(2)
    scores = rng.random((10, 5))
    res = friedman_test(scores)
    ref = sps.friedmanchisquare(*scores.T)
    assert res.chi2 == pytest.approx(ref.statistic)
    assert res.chi2_pvalue == pytest.approx(ref.pvalue)


# ---------------------------------------------------------------------------
# Holm
# ---------------------------------------------------------------------------


def test_holm_hand_computed():
    # sorted: 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> max with 0.06)
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])


def test_holm_caps_at_one_and_keeps_order():
    np.testing.assert_allclose(holm([0.5, 0.2, 0.9, 0.001]), [1.0, 0.6, 1.0, 0.004])


def test_holm_is_monotone_and_not_below_raw():
    rng = np.random.default_rng(3)
    p = rng.random(20) ** 3
    adj = holm(p)
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0)
    assert np.all(adj >= p) and np.all(adj <= 1)


def test_holm_single_and_empty():
    np.testing.assert_allclose(holm([0.2]), [0.2])
    assert holm([]).shape == (0,)


# ---------------------------------------------------------------------------
# Corrected resampled t-test
# ---------------------------------------------------------------------------


def test_corrected_ttest_hand_computed():
    # d = a - b = [1, 2, 3, 4]: mean 2.5, var(ddof=1) = 5/3, J = 4 folds,
    # n_test/n_train = 10/90 = 1/9: (1/4 + 1/9) * 5/3 = 13/36 * 5/3 = 65/108,
    # t = 2.5 / sqrt(65/108) = 3.2225..., df = 3.
    a = [2.0, 4.0, 6.0, 8.0]
    b = [1.0, 2.0, 3.0, 4.0]
    t, p = corrected_resampled_ttest(a, b, n_train=90, n_test=10)
    assert t == pytest.approx(2.5 / np.sqrt(65 / 108))
    assert t == pytest.approx(3.2225, abs=1e-4)
    assert p == pytest.approx(2 * sps.t.sf(2.5 / np.sqrt(65 / 108), 3))
    t2, p2 = corrected_resampled_ttest(b, a, n_train=90, n_test=10)
    assert t2 == pytest.approx(-t) and p2 == pytest.approx(p)


def test_corrected_ttest_without_correction_is_ttest_rel():
    rng = np.random.default_rng(4)
    a = rng.normal(0.8, 0.05, 50)
    b = a - rng.normal(0.01, 0.02, 50)
    t, p = corrected_resampled_ttest(a, b, n_train=100, n_test=0)
    ref = sps.ttest_rel(a, b)
    assert t == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue)


def test_corrected_ttest_is_more_conservative():
    rng = np.random.default_rng(5)
    a = rng.normal(0.8, 0.05, 100)
    b = a - rng.normal(0.01, 0.02, 100)
    t0, p0 = corrected_resampled_ttest(a, b, n_train=900, n_test=0)
    t1, p1 = corrected_resampled_ttest(a, b, n_train=900, n_test=100)
    assert abs(t1) < abs(t0) and p1 > p0


def test_corrected_ttest_zero_variance():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert corrected_resampled_ttest([0.5, 0.6], [0.5, 0.6], 9, 1) == (0.0, 1.0)
        assert corrected_resampled_ttest([0.6, 0.7], [0.5, 0.6], 9, 1) == (np.inf, 0.0)
        assert corrected_resampled_ttest([0.5, 0.5], [0.6, 0.6], 9, 1) == (-np.inf, 0.0)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scores",
    [
        [1.0, 2.0, 3.0],                 # 1-D
        [[0.1, 0.2, 0.3]],               # N = 1
        [[0.1], [0.2], [0.3]],           # k = 1
        [[0.1, np.nan], [0.2, 0.3]],     # NaN
        np.zeros((2, 2, 2)),             # 3-D
    ],
)
def test_friedman_rejects_bad_scores(scores):
    with pytest.raises(ValueError):
        friedman_test(scores)


@pytest.mark.parametrize(
    "ranks, n",
    [
        ([1.0], 5),           # k = 1
        ([1.5, 1.5], 1),      # N = 1
        ([0.5, 2.5], 5),      # rank below 1
        ([1.0, 3.0], 5),      # rank above k
        ([np.nan, 1.5], 5),   # NaN
        ([1.5, 1.5], 2.5),    # non-integer N
    ],
)
def test_friedman_from_ranks_rejects_bad_input(ranks, n):
    with pytest.raises(ValueError):
        friedman_from_ranks(ranks, n)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, np.nan])
def test_alpha_outside_open_unit_interval_rejected(alpha):
    with pytest.raises(ValueError):
        nemenyi_q(3, alpha)
    with pytest.raises(ValueError):
        critical_difference(3, 10, alpha)
    with pytest.raises(ValueError):
        wilcoxon_holm(DEMSAR_TABLE6, baseline=0, alpha=alpha)


@pytest.mark.parametrize("k, n", [(1, 10), (0, 10), (3, 0), (2.5, 10)])
def test_critical_difference_rejects_bad_counts(k, n):
    with pytest.raises(ValueError):
        critical_difference(k, n)


@pytest.mark.parametrize("baseline", [-1, 4, 10, 1.0, True, "0"])
def test_wilcoxon_baseline_out_of_range(baseline):
    with pytest.raises(ValueError):
        wilcoxon_holm(DEMSAR_TABLE6, baseline=baseline)


@pytest.mark.parametrize(
    "scores",
    [
        [[0.1, 0.2, 0.3]],             # N = 1
        [[0.1], [0.2]],                # k = 1
        [[0.1, np.nan], [0.2, 0.3]],   # NaN
        [[0.1, np.inf], [0.2, 0.3]],   # inf
        [0.1, 0.2],                    # 1-D
    ],
)
def test_wilcoxon_rejects_bad_scores(scores):
    with pytest.raises(ValueError):
        wilcoxon_holm(scores, baseline=0)


@pytest.mark.parametrize("bad", [[0.1, np.nan], [-0.1, 0.5], [0.5, 1.2], [[0.1, 0.2]]])
def test_holm_rejects_bad_pvalues(bad):
    with pytest.raises(ValueError):
        holm(bad)


@pytest.mark.parametrize(
    "a, b, n_train, n_test",
    [
        ([0.1, 0.2, 0.3], [0.1, 0.2], 9, 1),       # length mismatch
        ([0.1], [0.2], 9, 1),                      # one fold
        ([0.1, np.nan], [0.2, 0.3], 9, 1),         # NaN
        ([0.1, np.inf], [0.2, 0.3], 9, 1),         # inf
        ([[0.1, 0.2]], [[0.2, 0.3]], 9, 1),        # 2-D
        ([0.1, 0.2], [0.2, 0.4], 0, 1),            # n_train = 0
        ([0.1, 0.2], [0.2, 0.4], 9, -1),           # n_test < 0
        ([0.1, 0.2], [0.2, 0.4], 9.5, 1),          # non-integer
    ],
)
def test_corrected_ttest_rejects_bad_input(a, b, n_train, n_test):
    with pytest.raises(ValueError):
        corrected_resampled_ttest(a, b, n_train, n_test)


def test_wilcoxon_direction_follows_the_signed_ranks_not_the_means():
    # the other algorithm wins on 19 of 20 data sets by 0.01 but loses one by 0.50:
    # its mean is lower, yet R+ = 190 - 20 = 170 > R- = 20, so it is the better one
    base = np.linspace(0.5, 0.9, 20)
    other = base + 0.01
    other[0] -= 0.51
    (result,) = wilcoxon_holm(np.column_stack([base, other]), 0)
    assert other.mean() < base.mean()
    assert result.significant and result.better
    (flipped,) = wilcoxon_holm(np.column_stack([base, other]), 0, greater_is_better=False)
    assert flipped.significant and not flipped.better


# ---------------------------------------------------------------------------
# Two algorithms over data sets (Demšar 2006, Sect. 3.1)
# ---------------------------------------------------------------------------


def test_wilcoxon_pair_reproduces_demsar_table2():
    # Demšar Sect. 3.1.3: C4.5+m against C4.5 over his 14 data sets, R+ = 93, R- = 12, T = 12,
    # below the critical value 21 for N = 14 at alpha 0.05. Two zero differences (even), and
    # ties, so N = 14 > 13 takes the normal approximation with the tie correction:
    # var = [N(N+1)(2N+1) - sum(t^3 - t)/2] / 24 with two tie groups of 2 (the zeros, |d| = .005)
    res = wilcoxon_signed_rank(DEMSAR_TABLE6[:, 1], DEMSAR_TABLE6[:, 0])
    assert (res.r_plus, res.r_minus, res.statistic) == (93.0, 12.0, 12.0)
    assert (res.n_used, res.n_zero, res.direction) == (14, 2, 1)
    assert res.method == "normal approximation"
    z = (12 - 14 * 15 / 4) / np.sqrt((14 * 15 * 29 - (6 + 6) / 2) / 24)
    assert res.pvalue == pytest.approx(2 * sps.norm.cdf(z), rel=1e-12)
    assert res.pvalue < 0.05


def test_wilcoxon_pair_leaves_out_one_of_an_odd_number_of_zeros():
    # differences a - b: three zeros (odd: one left out, Demšar's rule), -.05, .1, .2, .3.
    # Ranks over the 6 kept: zeros 1.5 each, .05 -> 3, .1 -> 4, .2 -> 5, .3 -> 6.
    # R+ = 4 + 5 + 6 + 1.5 = 16.5, R- = 3 + 1.5 = 4.5. Exact over the 2^6 sign changes (the
    # zeros' signs change nothing): R+ - 1.5 >= 15 for 2 of the 16 subsets of {3, 4, 5, 6},
    # so p = 2 * 2/16.
    b = np.array([0.5, 0.6, 0.7, 0.5, 0.5, 0.5, 0.55])
    a = b + np.array([0.0, 0.0, 0.0, 0.1, 0.2, 0.3, -0.05])
    res = wilcoxon_signed_rank(a, b)
    assert (res.r_plus, res.r_minus, res.statistic) == pytest.approx((16.5, 4.5, 4.5))
    assert (res.n_used, res.n_zero) == (6, 3)
    assert res.method == "exact over all sign changes"
    assert res.pvalue == pytest.approx(0.25)
    # scipy's plain zsplit (no zero left out) ranks 7 values and gets another statistic
    assert sps.wilcoxon(a - b, zero_method="zsplit").statistic == pytest.approx(7.0)


def test_wilcoxon_pair_exact_without_ties_and_direction():
    # six data sets, b better on all: T = 0, exact p = 2/2^6; lower-is-better flips the direction
    a = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    b = a + np.array([0.01, 0.02, 0.03, 0.04, 0.05, 0.06])
    res = wilcoxon_signed_rank(a, b)
    assert res.method == "exact" and res.statistic == 0.0
    assert res.pvalue == pytest.approx(2 / 2**6) == paired_min_pvalue(6)
    assert res.direction == -1 and res.r_minus == 21.0
    flipped = wilcoxon_signed_rank(a, b, greater_is_better=False)
    assert flipped.direction == 1 and flipped.pvalue == res.pvalue


def test_wilcoxon_pair_agrees_with_scipy_exact_and_with_enumeration():
    import itertools

    rng = np.random.default_rng(5)
    for n in (4, 7, 10):
        a, b = rng.random(n), rng.random(n)
        res = wilcoxon_signed_rank(a, b)
        assert res.pvalue == pytest.approx(sps.wilcoxon(a, b, method="exact").pvalue)
        # the same p by brute force over the 2^n sign changes of the ranks
        ranks = sps.rankdata(np.abs(a - b))
        sums = np.array([ranks[np.array(s, dtype=bool)].sum()
                         for s in itertools.product([0, 1], repeat=n)])
        tail = min((sums <= res.r_plus).mean(), (sums >= res.r_plus).mean())
        assert res.pvalue == pytest.approx(min(1.0, 2 * tail))


@pytest.mark.slow  # scipy's exact test on 55 random pairs
def test_wilcoxon_pair_agrees_with_scipy_after_demsars_zero_rule():
    # with ties and zeros: leave one of an odd number of zeros out, then scipy's own
    # zsplit test (its permutation route for N <= 13, its normal approximation beyond)
    rng = np.random.default_rng(11)
    for n in [int(v) for v in rng.integers(2, 11, 50)] + [13, 14, 15, 17, 20]:
        a, b = rng.integers(0, 4, n) / 4, rng.integers(0, 4, n) / 4
        d = a - b
        zeros = np.flatnonzero(d == 0)
        if zeros.size % 2:
            d = np.delete(d, zeros[0])
        res = wilcoxon_signed_rank(a, b)
        if not d.any():
            assert res.pvalue == 1.0
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's small-sample notes
            ref = sps.wilcoxon(d, zero_method="zsplit")
        assert res.statistic == pytest.approx(ref.statistic)
        assert res.pvalue == pytest.approx(min(1.0, ref.pvalue), rel=1e-12)


def test_wilcoxon_pair_ignores_rounding_noise():
    # equal up to the last bits: the same differences, the same ties
    a = np.array([0.1 + 0.2, 0.7, 0.4, 0.9])
    b = np.array([0.3, 0.6, 0.5, 0.8])
    res = wilcoxon_signed_rank(a, b)
    assert res.n_zero == 1 and res.n_used == 3  # 0.1 + 0.2 != 0.3 in floating point
    assert res.r_plus == res.r_minus * 2 == 4.0  # |d| = .1 .1 .1 tie: 2 + 2 vs 2


def test_wilcoxon_pair_all_zero_and_bad_input():
    same = wilcoxon_signed_rank([0.5, 0.6, 0.7], [0.5, 0.6, 0.7])
    assert same.pvalue == 1.0 and same.method == "none" and same.direction == 0
    assert same.n_used == 2 and same.statistic == pytest.approx(2 * 3 / 4)  # one of 3 zeros out
    for a, b in (([0.1], [0.2]), ([0.1, 0.2], [0.1]), ([0.1, np.nan], [0.1, 0.2]),
                 ([[0.1, 0.2]], [[0.1, 0.2]]), ([0.1, np.inf], [0.2, 0.3])):
        with pytest.raises(ValueError):
            wilcoxon_signed_rank(a, b)
        with pytest.raises(ValueError):
            sign_test(a, b)


def test_sign_test_splits_ties_and_leaves_one_out_when_odd():
    # 3 wins, 1 loss, 2 ties: one tie to each side, 4 of 6; two-sided binomial 2 * 22/64
    res = sign_test([0.9, 0.8, 0.7, 0.7, 0.6, 0.5], [0.8, 0.7, 0.7, 0.7, 0.5, 0.6])
    assert (res.wins, res.losses, res.ties, res.n_used, res.direction) == (3, 1, 2, 6, 1)
    assert res.pvalue == pytest.approx(2 * (15 + 6 + 1) / 64)
    # 5 wins and 1 tie: the odd tie is left out, 5 of 5, p = 2/2^5
    odd = sign_test([2, 3, 4, 5, 6, 1.0], [1, 2, 3, 4, 5, 1.0])
    assert (odd.ties, odd.n_used) == (1, 5) and odd.pvalue == pytest.approx(0.0625)
    # Demšar's C4.5+m vs C4.5: 10 wins, 2 losses, 2 ties -> 11 of 14, exact two-sided p
    demsar = sign_test(DEMSAR_TABLE6[:, 1], DEMSAR_TABLE6[:, 0])
    assert (demsar.wins, demsar.losses, demsar.ties, demsar.n_used) == (10, 2, 2, 14)
    assert demsar.pvalue == pytest.approx(sps.binomtest(11, 14).pvalue)
    # lower is better swaps wins and losses
    low = sign_test([0.9, 0.8, 0.7, 0.7, 0.6, 0.5], [0.8, 0.7, 0.7, 0.7, 0.5, 0.6], False)
    assert (low.wins, low.losses, low.direction) == (1, 3, -1)


@pytest.mark.parametrize("n", range(2, 12))
def test_paired_min_pvalue_is_reached_by_both_exact_tests(n):
    a = np.arange(1.0, n + 1)
    b = a - 0.5 * np.arange(1, n + 1) / n  # a better everywhere, distinct differences
    assert paired_min_pvalue(n) == 2.0 ** (1 - n)
    assert wilcoxon_signed_rank(a, b).pvalue == pytest.approx(paired_min_pvalue(n))
    assert sign_test(a, b).pvalue == pytest.approx(paired_min_pvalue(n))


def test_paired_min_pvalue_bounds_the_normal_approximation():
    # N > 50 (or > 13 with ties) uses the normal approximation; it stays above 2/2^N
    for n in (14, 20, 51, 80):
        a = np.ones(n)
        res = wilcoxon_signed_rank(a + 0.1, a)  # all differences tied and positive
        assert res.method == "normal approximation"
        assert res.pvalue > paired_min_pvalue(n)
    assert paired_min_pvalue(5) == 0.0625


# ---------------------------------------------------------------------------
# Friedman: the smallest attainable p-value
# ---------------------------------------------------------------------------


def _weak_orders(k):
    import itertools

    return sorted({tuple(sps.rankdata(v)) for v in itertools.product(range(k), repeat=k)})


@pytest.mark.parametrize("k, n", [(3, 2), (3, 3), (3, 4), (4, 2), (4, 3)])
def test_friedman_min_pvalue_is_the_minimum_over_every_table(k, n):
    # every table of n rows, each a ranking of k algorithms with ties allowed (the order of
    # the rows does not matter); the correction for ties depends on each row's ties, so the
    # tables themselves are enumerated, not only their rank sums. A table's p-value depends
    # on the sum of its squared rank sums, its correction for ties, and, when every row has
    # the same pattern of ties, that pattern (the exact p of identical rows): friedman_test
    # runs on one table of each class alike in those (485 of the 73,150 tables of k = 4, N = 3)
    orders = np.array(_weak_orders(k))
    patterns = [tuple(sorted(np.unique(o, return_counts=True)[1])) for o in orders]
    ties = np.array([sum(t ** 3 - t for t in pattern) for pattern in patterns])
    ids = {pattern: i for i, pattern in enumerate(sorted(set(patterns)))}
    pattern_id = np.array([ids[pattern] for pattern in patterns])
    tables = np.array(list(itertools.combinations_with_replacement(range(len(orders)), n)))
    alike = (pattern_id[tables] == pattern_id[tables[:, :1]]).all(axis=1)
    keys = np.column_stack([(orders[tables].sum(axis=1) ** 2).sum(axis=1),
                            ties[tables].sum(axis=1), np.where(alike, pattern_id[tables[:, 0]], -1)])
    _, first = np.unique(keys, axis=0, return_index=True)
    smallest = min(friedman_test(-orders[tables[i]]).pvalue for i in first)
    assert friedman_min_pvalue(k, n) == pytest.approx(smallest, rel=1e-12)


def test_friedman_is_scipys_with_ties():
    rng = np.random.default_rng(5)
    for _ in range(20):
        scores = np.round(rng.random((9, 4)), 1)  # one decimal: many ties
        res = friedman_test(scores)
        ref = sps.friedmanchisquare(*scores.T)
        assert res.chi2 == pytest.approx(ref.statistic, rel=1e-12)
        assert res.chi2_pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_friedman_tie_correction_hand_computed():
    # k = 3, N = 2, one row tied: rank sums (2, 4.5, 5.5) / 2; Demšar's chi2 = 3.25;
    # C = 1 - (2^3 - 2) / (2 * 3 * (9 - 1)) = 0.875, so chi2 = 3.25 / 0.875 = 26/7
    res = friedman_test([[3.0, 3.0, 1.0], [3.0, 2.0, 1.0]])
    assert res.chi2_uncorrected == pytest.approx(3.25)
    assert res.tie_correction == pytest.approx(0.875)
    assert res.chi2 == pytest.approx(26 / 7)
    assert res.iman_davenport == pytest.approx((26 / 7) / (4 - 26 / 7))
    # every row alike with the same tie: the exact p counts the 3 orders of that pattern
    alike = friedman_test([[3.0, 3.0, 1.0], [5.0, 5.0, 2.0], [0.9, 0.9, 0.1]])
    assert alike.chi2 == pytest.approx(6.0) and not alike.f_defined
    assert alike.pvalue_source == "exact" and alike.pvalue == pytest.approx(1 / 9)


def test_friedman_min_pvalue_hand_values():
    # k = 3, N = 2: all alike gives 1/6; the nearest table (one row tied 1.5 1.5 3) has
    # chi2 = 3.25, 26/7 corrected for its tie, F = (26/7) / (4 - 26/7) = 13 on (2, 2) df,
    # p = 1/14: no two data sets reach 0.05
    assert friedman_min_pvalue(3, 2) == pytest.approx(1 / 14)
    assert sps.f.sf(13.0, 2, 2) == pytest.approx(1 / 14)
    assert friedman_min_pvalue(3, 3) < 0.05
    for bad in ((1, 5), (3, 1), (3.5, 4)):
        with pytest.raises(ValueError):
            friedman_min_pvalue(*bad)


# ---------------------------------------------------------------------------
# Bayesian signed-rank test
# ---------------------------------------------------------------------------
def test_bayesian_signed_rank_hand_computed_posterior():
    # differences (0.1, 0.1), rope 0.01: with the prior's pseudo-observation at 0 (weight 0.5),
    # the posterior weights are Dirichlet(0.5, 1, 1); every pair of differences averages above
    # the rope except the prior with itself, so "a better" carries 1 - w0^2 and wins when
    # w0 < 1/sqrt(2), where w0 ~ Beta(0.5, 2): P = I_{1/sqrt 2}(0.5, 2) = 0.964
    from ensemblekit.stats import bayesian_signed_rank

    exact = sps.beta.cdf(2 ** -0.5, 0.5, 2)
    res = bayesian_signed_rank([0.9, 0.8], [0.8, 0.7], rope=0.01, seed=3)
    assert res.p_left == pytest.approx(exact, abs=0.005)
    assert res.p_rope == pytest.approx(1 - exact, abs=0.005) and res.p_right == 0.0
    assert res.p_left + res.p_rope + res.p_right == pytest.approx(1.0)
    # for a loss the same scores mean b is better
    loss = bayesian_signed_rank([0.9, 0.8], [0.8, 0.7], rope=0.01, greater_is_better=False,
                                seed=3)
    assert (loss.p_left, loss.p_rope, loss.p_right) == (res.p_right, res.p_rope, res.p_left)
    # every difference inside a wide rope: equivalent for certain
    wide = bayesian_signed_rank([0.9, 0.8], [0.8, 0.7], rope=0.2)
    assert (wide.p_left, wide.p_rope, wide.p_right) == (0.0, 1.0, 0.0)


def test_bayesian_signed_rank_is_baycomps_and_seeded():
    baycomp = pytest.importorskip("baycomp")
    from ensemblekit.stats import bayesian_signed_rank

    rng = np.random.default_rng(7)
    a = rng.random(12)
    b = a + rng.normal(0.005, 0.02, 12)
    res = bayesian_signed_rank(a, b, rope=0.01, seed=11, nsamples=5000)
    ref = baycomp.SignedRankTest.probs(a, b, rope=0.01, nsamples=5000, random_state=11)
    assert (res.p_left, res.p_rope, res.p_right) == tuple(float(p) for p in ref)
    assert bayesian_signed_rank(a, b, rope=0.01, seed=11, nsamples=5000) == res


# baycomp's documentation (janezd/baycomp, docs/index.rst and docs/functions.rst) compares naive
# Bayes (nbc) with J48 over the 54 data sets of its docs/code/accuracies.txt by the Bayesian
# signed-rank test, rope 1 (accuracies in %), and prints P(nbc better), P(rope), P(j48 better) =
# (0.23124, 0.00666, 0.7621) and (0.23014, 0.00674, 0.76312): two runs of 50,000 samples that
# agree to two decimals. data/baycomp_nbc_j48.csv holds the per-data-set means of that file.
BAYCOMP_NBC_J48 = (0.23, 0.01, 0.76)


def _baycomp_means() -> tuple[list, np.ndarray, np.ndarray]:
    """The data sets and the mean accuracies (%) of nbc and j48 of baycomp's example."""
    text = (Path(__file__).parent / "data" / "baycomp_nbc_j48.csv").read_text()
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    return ([r["dataset"] for r in rows], np.array([float(r["nbc"]) for r in rows]),
            np.array([float(r["j48"]) for r in rows]))


@pytest.mark.slow
def test_bayesian_signed_rank_reproduces_baycomps_nbc_vs_j48():
    pytest.importorskip("baycomp")
    from ensemblekit.stats import bayesian_signed_rank

    names, nbc, j48 = _baycomp_means()
    assert len(names) == 54 and names.count("credit") == 2  # as in baycomp's file
    # 500,000 samples: the Monte Carlo standard error of P(nbc better) is 0.0006, of P(rope)
    # 0.00012; with 2,000,000 the three are 0.2331, 0.0070, 0.7599, so the nearest rounding
    # boundary (0.235) lies 3 standard errors away whatever the seed
    res = bayesian_signed_rank(nbc, j48, rope=1.0, seed=1, nsamples=500_000)
    assert (round(res.p_left, 2), round(res.p_rope, 2), round(res.p_right, 2)) == BAYCOMP_NBC_J48
    assert res.n_datasets == 54


@pytest.mark.slow
def test_analyse_reproduces_baycomps_nbc_vs_j48(tmp_path):
    # the same example through the analysis compare draws: a scores file (one run per data set,
    # accuracy as a proportion, so rope 0.01), read back by analyse --rope 0.01
    pytest.importorskip("baycomp")
    from ensemblekit import api
    from ensemblekit.results import SCORE_COLUMNS
    from ensemblekit.stats import BAYES_SAMPLES, bayesian_signed_rank

    names, nbc, j48 = _baycomp_means()
    path = tmp_path / "scores.csv"
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(SCORE_COLUMNS)
        for i, name in enumerate(names):  # credit is listed twice: the names must differ
            for label, mean in (("nbc", nbc[i]), ("j48", j48[i])):
                out.writerow([f"{i:02d}-{name}", label, "{}", 1, 0, "accuracy", mean / 100, 0, ""])
    [(a, b, res)] = api.analyse(path, rope=0.01, seed=1).analyses["accuracy"].bayesian
    assert (a, b) == ("j48", "nbc")  # without a baseline, the second against the first
    probs = (res.p_right, res.p_rope, res.p_left)  # oriented as baycomp's: nbc first
    # exactly the function's figures for the same seed and its default sample size
    ref = bayesian_signed_rank(nbc / 100, j48 / 100, rope=0.01, seed=1)
    assert probs == (ref.p_left, ref.p_rope, ref.p_right) and res.n_datasets == 54
    # two independent 50,000-sample estimates differ with standard error sqrt(2 p (1 - p) / 50,000)
    # (0.0027 for P(nbc better)): both published runs lie within 3 of it
    se = np.sqrt(np.multiply(BAYCOMP_NBC_J48, np.subtract(1, BAYCOMP_NBC_J48)) / BAYES_SAMPLES)
    for published in ((0.23124, 0.00666, 0.7621), (0.23014, 0.00674, 0.76312)):
        assert np.all(np.abs(np.subtract(probs, published)) <= 3 * se * np.sqrt(2))


@pytest.mark.parametrize("bad", [dict(a=[1.0], b=[1.0]), dict(a=[1.0, 2.0], b=[1.0]),
                                 dict(a=[1.0, np.nan], b=[1.0, 2.0]), dict(rope=-0.1)])
def test_bayesian_signed_rank_refuses_bad_input(bad):
    from ensemblekit.stats import bayesian_signed_rank

    args = {"a": [0.9, 0.8], "b": [0.8, 0.7], "rope": 0.01} | bad
    with pytest.raises(ValueError):
        bayesian_signed_rank(**args)


def test_pair_effect_counts_and_interval():
    from ensemblekit.stats import pair_effect

    a = [0.90, 0.80, 0.70, 0.85]
    b = [0.85, 0.81, 0.70, 0.82]  # a - b = 0.05, -0.01, 0, 0.03
    e = pair_effect(a, b, seed=4)
    assert e.mean_difference == pytest.approx(0.0175)
    assert (e.wins, e.ties, e.losses) == (2, 1, 1)
    # the interval is scipy's percentile bootstrap of the mean difference, same generator
    ref = sps.bootstrap((np.subtract(a, b),), np.mean, n_resamples=9999, method="percentile",
                        vectorized=True, rng=np.random.default_rng(4)).confidence_interval
    assert (e.ci_low, e.ci_high) == pytest.approx((ref.low, ref.high))
    assert e.ci_low <= e.mean_difference <= e.ci_high and e.confidence == 0.95
    # for a loss the same numbers mean b is better
    loss = pair_effect(a, b, greater_is_better=False, seed=4)
    assert loss.mean_difference == pytest.approx(-0.0175)
    assert (loss.wins, loss.ties, loss.losses) == (1, 1, 2)
    # constant differences: every resample agrees
    same = pair_effect([0.9, 0.8], [0.8, 0.7])
    assert same.ci_low == same.mean_difference == same.ci_high == pytest.approx(0.1)
    with pytest.raises(ValueError):
        pair_effect([0.9], [0.8])
