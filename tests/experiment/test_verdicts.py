"""The verdicts under a comparison table: Demšar's procedure; one table never contradicts itself.

Analysis (experiment.analyse), its words (report.verdict_lines / the comparison's JSON document) and the
command line (compare). Statistics themselves are tested in test_stats.py.
"""

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from ensemblekit import experiment, stats
from ensemblekit.experiment import Protocol, Score
from ensemblekit.results import Comparison, format_pvalue, verdict_lines
from ensemblekit.writers import to_json

from ektesting.support import run_cli as run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_stats import DEMSAR_TABLE6  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
DEMSAR_NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]





def analyse(table, labels, baseline=None, metric="accuracy", alpha=0.05):
    """experiment.analyse on a table of one score per data set and algorithm."""
    table = np.asarray(table, dtype=float)
    names = [f"d{i}" for i in range(table.shape[0])]
    scores = [Score(d, a, "{}", 1, 0, metric, float(table[i, j]))
              for i, d in enumerate(names) for j, a in enumerate(labels)]
    datasets = [SimpleNamespace(name=d) for d in names]
    return experiment.analyse(scores, list(labels), datasets, metric, Protocol("runs", repeats=1),
                              baseline=baseline, alpha=alpha)


def as_json(an, baseline=None):
    """The JSON document of a comparison holding one analysis; refuses NaN/Infinity tokens while parsing."""
    summary = {(d, a, an.metric): (float(an.means[i, j]), 0.0, 1)
               for i, d in enumerate(an.datasets) for j, a in enumerate(an.labels)}

    def no_constant(token):
        raise AssertionError(f"JSON holds {token}")

    result = Comparison(task="clustering", protocol=Protocol("runs", repeats=1),
                        metrics=[an.metric], datasets=list(an.datasets), labels=list(an.labels),
                        candidates=[], scores=[], failures=[], summary=summary,
                        analyses={an.metric: an}, baseline=baseline, reference=None)
    text = to_json(result.to_dict())
    return json.loads(text, parse_constant=no_constant)["metrics"][an.metric]


BETTER = re.compile(r"^(\S+) is significantly better than (\S+) \(")
SAME = re.compile(r"^(\S+) vs (\S+): not significantly different \(")
UNREACHABLE = re.compile(r"^with N = \d+ data sets (.*can(not)? reach|no two)")


def pair_verdicts(lines):
    """{frozenset(pair): [verdict, ...]} of every verdict line about a pair."""
    found = {}
    for line in lines:
        for pattern, word in ((BETTER, "better"), (SAME, "same")):
            m = pattern.match(line)
            if m:
                a, b = m.groups()
                found.setdefault(frozenset((a, b)), []).append((word, a, b))
    return found


def no_inf_nan_or_zero_p(lines):
    text = "\n".join(lines)
    assert not re.search(r"\binf\b|\bnan\b", text, re.IGNORECASE), text
    assert not re.search(r"p = 0(?![.\d])|p = 0\.0+(?!\d)", text), text


# --------------------------------------------------------------------------- two algorithms
def test_demsar_table6_c45m_is_significantly_better_than_c45_through_the_report():
    # Demšar (2006) Sect. 3.1.3: C4.5+m vs C4.5 over 14 data sets, T = 12 (R+ = 93, R- = 12) below
    # the critical 21, p < 0.05. Through analyse and the report lines for k = 2.
    an = analyse(DEMSAR_TABLE6[:, :2], DEMSAR_NAMES[:2])
    assert an.friedman is None and an.cd is None and an.pairwise == []
    assert an.pair == ("C4.5+m", "C4.5")
    assert (an.wilcoxon.statistic, an.wilcoxon.r_plus, an.wilcoxon.r_minus) == (12.0, 93.0, 12.0)
    lines = verdict_lines(an)
    assert len(lines) == 2
    assert lines[0].startswith("C4.5+m vs C4.5 over N = 14 data sets: Wilcoxon signed-rank T = 12 "
                               "(R+ = 93 for C4.5+m, R- = 12; normal approximation)")
    assert "sign test: C4.5+m better on 10, worse on 2, tied on 2" in lines[0]
    assert lines[1] == (f"C4.5+m is significantly better than C4.5 (Wilcoxon p = "
                        f"{format_pvalue(an.wilcoxon.pvalue)} < 0.05)")
    assert an.wilcoxon.pvalue < 0.05
    assert not any(word in "\n".join(lines) for word in ("Friedman", "Nemenyi", "CD", "Iman"))
    entry = as_json(an)
    assert entry["wilcoxon"]["statistic"] == 12.0 and entry["wilcoxon"]["significant"]
    assert entry["verdicts"] == [{"better": "C4.5+m", "worse": "C4.5", "significant": True,
                                  "test": "wilcoxon", "pvalue": an.wilcoxon.pvalue,
                                  "rank_difference": None}]
    assert "friedman" not in entry and "pairs" not in entry and "nemenyi_cd" not in entry


def test_two_algorithms_with_a_baseline_read_the_other_way():
    # the baseline is the one compared against; lower-is-better metrics flip who wins
    an = analyse(DEMSAR_TABLE6[:, :2], DEMSAR_NAMES[:2], baseline="C4.5+m")
    assert an.pair == ("C4.5", "C4.5+m") and an.wilcoxon.direction == -1
    assert verdict_lines(an, "C4.5+m")[-1].startswith("C4.5+m is significantly better than C4.5 (")
    errors = analyse(1 - DEMSAR_TABLE6[:, :2], DEMSAR_NAMES[:2], metric="rmse")
    assert verdict_lines(errors)[-1].startswith("C4.5+m is significantly better than C4.5 (")


def test_five_data_sets_cannot_decide_two_algorithms():
    # README's case: one algorithm better on all 5 data sets; exact Wilcoxon and sign test both
    # give 2/2^5 = 0.0625, so the one line says no test can reach 0.05 -- and no verdict at all
    table = np.array([[0.03, 0.04], [0.35, 0.40], [0.67, 0.70], [0.487, 0.488], [0.4278, 0.4290]])
    an = analyse(table, ["kmeans", "iekm"], baseline="kmeans")
    lines = verdict_lines(an, "kmeans")
    assert lines == [
        "iekm vs kmeans over N = 5 data sets: Wilcoxon signed-rank T = 0 (R+ = 15 for iekm, "
        "R- = 0; exact), p = 0.0625; sign test: iekm better on 5, worse on 0, tied on 0, "
        "p = 0.0625",
        "with N = 5 data sets no test of 2 algorithms can reach p < 0.05 (smallest possible p = "
        "0.0625)"]
    assert an.verdicts == [] and an.unreachable == "wilcoxon"
    entry = as_json(an, "kmeans")
    assert entry["can_reach_alpha"] is False and entry["smallest_possible_pvalue"] == 0.0625
    # at alpha 0.1 the same table is decided
    loose = analyse(table, ["kmeans", "iekm"], baseline="kmeans", alpha=0.1)
    assert verdict_lines(loose, "kmeans")[-1] == ("iekm is significantly better than kmeans "
                                                  "(Wilcoxon p = 0.0625 < 0.1)")


# --------------------------------------------------------------------------- three or more
def test_all_alike_rankings_say_f_is_undefined_and_give_friedmans_p():
    # every data set ranks a > b > c: chi2 = N(k-1) = 10, Iman-Davenport F divides by zero.
    # Friedman's exact p = 3!/3!^5 = 1/1296; the chi2 p = exp(-5).
    table = np.array([[3, 2, 1], [0.9, 0.8, 0.7], [30, 20, 10], [5, 4, 3], [0.3, 0.2, 0.1]])
    an = analyse(table, ["a", "b", "c"])
    lines = verdict_lines(an)
    assert lines[0] == ("Friedman chi2 = 10.000 (p = 0.006738 from chi2, exact p = 0.0007716); "
                        "Iman-Davenport F undefined: every data set ranks the algorithms alike "
                        "(chi2 = N(k-1) = 10, F divides by zero); N = 5 data sets, k = 3")
    assert an.friedman.pvalue == pytest.approx(1 / 1296)
    assert an.friedman.chi2_pvalue == pytest.approx(np.exp(-5))
    assert lines[1] == ("the algorithms differ (exact Friedman p = 0.0007716 < 0.05); post-hoc: "
                        "Nemenyi, CD = 1.482")
    # Nemenyi: a and c are 2 ranks apart (>= CD 1.48), neighbours 1 apart
    assert lines[2:] == [
        "a vs b: not significantly different (Nemenyi: rank difference 1.00 < CD 1.48)",
        "a is significantly better than c (Nemenyi: rank difference 2.00 >= CD 1.48)",
        "b vs c: not significantly different (Nemenyi: rank difference 1.00 < CD 1.48)"]
    no_inf_nan_or_zero_p(lines)
    f = as_json(an)["friedman"]
    assert f["iman_davenport"] is None and f["f_pvalue"] is None
    assert f["iman_davenport_undefined"].startswith("every data set ranks the algorithms alike")
    assert f["pvalue"] == pytest.approx(1 / 1296) and f["pvalue_from"] == "exact"


def test_friedman_that_cannot_reject_says_so_once():
    # 2 data sets, 3 algorithms: the smallest possible p is 1/14 (one tied row, corrected for
    # its tie; see test_friedman_min_pvalue_hand_values), so no verdict at all
    an = analyse([[3, 2, 1], [3, 2, 1]], ["a", "b", "c"])
    lines = verdict_lines(an)
    assert lines[1] == ("with N = 2 data sets the Friedman test of 3 algorithms cannot reach "
                        "p < 0.05 (smallest possible p = 0.07143); no post-hoc test is made")
    assert len(lines) == 2 and an.verdicts == []


def test_no_post_hoc_test_when_friedman_does_not_reject():
    rng = np.random.default_rng(3)
    table = rng.random((12, 4))
    an = analyse(table, list("abcd"))
    assert an.friedman.pvalue >= 0.05  # this seed: no difference
    lines = verdict_lines(an)
    assert lines[1] == (f"no significant differences among the algorithms (Iman-Davenport p = "
                        f"{format_pvalue(an.friedman.pvalue)} >= 0.05); no post-hoc test is made")
    assert len(lines) == 2 and an.verdicts == [] and an.posthoc is None
    entry = as_json(an)
    assert not any(p["significant"] for p in entry["pairs"])


def test_with_a_baseline_only_wilcoxon_holm_speaks_about_pairs():
    # Demšar's Table 6 with C4.5 as control: Friedman rejects (F = 3.69); each variant against
    # C4.5 by Wilcoxon, Holm-adjusted over the 3 comparisons; no Nemenyi verdict for any pair
    an = analyse(DEMSAR_TABLE6, DEMSAR_NAMES, baseline="C4.5")
    lines = verdict_lines(an, "C4.5")
    assert an.posthoc == "wilcoxon-holm"
    assert lines[1].endswith("post-hoc: each against C4.5 by the Wilcoxon signed-rank test, "
                             "Holm-adjusted")
    assert not any("Nemenyi" in line for line in lines)
    expected = stats.wilcoxon_holm(DEMSAR_TABLE6, 0)
    assert [(v.pvalue, v.significant) for v in an.verdicts] == [
        (r.adjusted_pvalue, r.significant) for r in expected]
    found = pair_verdicts(lines)
    assert set(found) == {frozenset(("C4.5", other)) for other in DEMSAR_NAMES[1:]}
    assert found[frozenset(("C4.5", "C4.5+m"))] == [("better", "C4.5+m", "C4.5")]
    # without a baseline the same table is judged by Nemenyi (no pair reaches CD 1.25)
    plain = analyse(DEMSAR_TABLE6, DEMSAR_NAMES)
    assert plain.posthoc == "nemenyi" and not any(v.significant for v in plain.verdicts)
    assert len(plain.verdicts) == 6


def test_post_hoc_tests_that_cannot_reach_alpha_say_so_once():
    # all alike over 5 data sets: Friedman rejects (p = 1/1296), but Holm over 2 comparisons
    # cannot go below 2 * 2/2^5 = 0.125
    table = np.array([[3, 2, 1.0]] * 5) + np.arange(5)[:, None]
    an = analyse(table, ["a", "b", "c"], baseline="c")
    assert verdict_lines(an, "c")[2:] == [
        "with N = 5 data sets no Wilcoxon-Holm comparison with c can reach p < 0.05 (smallest "
        "possible Holm-adjusted p = 0.125)"]
    # 5 algorithms over 2 data sets: Friedman can reject (1/120), Nemenyi's CD 4.31 > 4 cannot
    two = analyse([[5, 4, 3, 2, 1], [50, 40, 30, 20, 10]], list("abcde"))
    assert two.omnibus_rejects and two.unreachable == "nemenyi"
    assert verdict_lines(two)[2:] == [
        "with N = 2 data sets no two of 5 algorithms can differ by the Nemenyi CD 4.31 (largest "
        "possible rank difference 4.00)"]


def test_format_pvalue_never_prints_zero():
    assert format_pvalue(0.0) == "< 1e-16" and format_pvalue(1e-300) == "< 1e-16"
    assert format_pvalue(0.0625) == "0.0625" and format_pvalue(3.21e-7) == "3.21e-07"
    assert format_pvalue(1.0) == "1"


# --------------------------------------------------------------------------- property
def _random_table(rng, n, k):
    kind = rng.integers(3)
    if kind == 0:  # continuous scores
        return rng.random((n, k))
    if kind == 1:  # few distinct values: ties within and across data sets
        return rng.integers(0, 3, (n, k)) / 2.0
    shift = rng.normal(0, 1, k)  # a real difference between algorithms, with some ties
    return np.round(rng.normal(shift, 0.7, (n, k)), 1)


@pytest.mark.slow  # 300 random tables analysed and worded
def test_verdicts_never_contradict_on_random_tables():
    rng = np.random.default_rng(2024)
    seen = {"better": 0, "same": 0, "unreachable": 0}
    for case in range(300):
        k = int(rng.integers(2, 6))
        n = int(rng.integers(2, 21))
        labels = [f"a{j}" for j in range(k)]
        baseline = labels[int(rng.integers(k))] if rng.random() < 0.5 else None
        alpha = float(rng.choice([0.05, 0.1, 0.01]))
        metric = "accuracy" if rng.random() < 0.7 else "rmse"
        table = _random_table(rng, n, k)
        an = analyse(table, labels, baseline, metric, alpha)
        lines = verdict_lines(an, baseline)
        where = f"case {case}: k={k} N={n} baseline={baseline} alpha={alpha}\n" + "\n".join(lines)
        found = pair_verdicts(lines)
        # at most one verdict about any pair, and the lines are exactly the analysis' verdicts
        assert all(len(v) == 1 for v in found.values()), where
        assert sum(len(v) for v in found.values()) == len(an.verdicts) or (
            an.posthoc == "nemenyi" and len(an.verdicts) > 45), where
        # Nemenyi and Wilcoxon never both judge pairs in one table
        assert len({v.test for v in an.verdicts}) <= 1, where
        if baseline is not None:
            assert all(baseline in pair for pair in found), where
        # too few data sets: no "significantly better", and one line saying so
        floor = stats.paired_min_pvalue(n) if k == 2 else stats.friedman_min_pvalue(k, n)
        unreachable = [line for line in lines if UNREACHABLE.match(line)]
        if floor >= alpha:
            assert not any(BETTER.match(line) for line in lines), where
            assert len(unreachable) == 1 and found == {}, where
        # a significant verdict rests on a test that rejected
        for v in an.verdicts:
            if v.significant and v.test != "nemenyi":
                assert v.pvalue < alpha, where
        if k >= 3 and an.verdicts:
            assert an.friedman.pvalue < alpha, where
        if k == 2:
            assert not any("Friedman" in line or "Nemenyi" in line or "CD" in line
                           for line in lines), where
        no_inf_nan_or_zero_p(lines)
        entry = as_json(an, baseline)
        assert entry["verdict"] == lines
        assert [(v["better"], v["worse"], v["significant"]) for v in entry["verdicts"]] == [
            (v.better, v.worse, v.significant) for v in an.verdicts]
        seen["better"] += sum(1 for v in found.values() if v[0][0] == "better")
        seen["same"] += sum(1 for v in found.values() if v[0][0] == "same")
        seen["unreachable"] += len(unreachable)
    # the random tables exercised every kind of outcome
    assert min(seen.values()) >= 20, seen


# --------------------------------------------------------------------------- command line
@pytest.mark.slow  # README's compare, twice, over every sample file
def test_readme_compare_prints_agreeing_verdicts_without_inf_or_nemenyi():
    result = run("compare", "kmeans", "iekm", "--data", SAMPLE, "--runs", "10", "--seed", "1",
                 "--baseline", "kmeans", "-m", "nmi")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for word in ("inf", "Nemenyi", "CD", "Iman-Davenport", "Friedman", "p = 0 "):
        assert word not in out, word
    lines = [line for line in out.splitlines() if line.startswith(("iekm", "kmeans", "with N"))]
    # the effect size follows the verdicts; it is a description, not a verdict
    assert lines.pop().startswith("iekm - kmeans over N = 5 data sets: mean difference +")
    assert lines[0].startswith("iekm vs kmeans over N = 5 data sets: Wilcoxon signed-rank T = 0 "
                               "(R+ = 15 for iekm, R- = 0; exact), p = 0.0625; sign test:")
    assert lines[1] == ("with N = 5 data sets no test of 2 algorithms can reach p < 0.05 "
                        "(smallest possible p = 0.0625)")
    assert "significantly better than" not in out and "not significantly different" not in out
    # the per-data-set marks are still there, and labelled as tests over runs
    assert ("▲/▼: significantly better/worse than kmeans on that data set (Wilcoxon "
            "signed-rank test over runs") in out
    as_data = run("compare", "kmeans", "iekm", "--data", SAMPLE, "--runs", "10", "--seed", "1",
                  "--baseline", "kmeans", "-m", "nmi", "--format", "json")
    assert as_data.exit_code == 0, as_data.stderr
    assert "Infinity" not in as_data.stdout and "NaN" not in as_data.stdout
    entry = json.loads(as_data.stdout)["metrics"]["nmi"]
    assert entry["wilcoxon"]["pvalue"] == 0.0625 and entry["sign_test"]["pvalue"] == 0.0625
    assert entry["unreachable"] == "wilcoxon" and entry["verdicts"] == []
    assert entry["verdict"] == lines


def test_plot_over_one_data_set_is_refused_before_any_work(tmp_path):
    plot, scores = tmp_path / "cd.png", tmp_path / "s.csv"
    # the data file does not exist: the refusal comes before any file is read
    result = run("compare", "kmeans", "iekm", "--data", tmp_path / "missing.arff", "--runs", "2",
                 "--plot", plot, "--output", scores)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "at least 2 data sets" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_two_algorithms_plot_their_scores_per_data_set(tmp_path):
    # Demšar: no critical difference for two algorithms; one scatter plot per metric instead
    result = run("compare", "kmeans", "iekm", "--data", SAMPLE / "iris.arff", "--data",
                 SAMPLE / "wine.arff", "--runs", "2", "-m", "nmi", "-m", "purity",
                 "--plot", tmp_path / "pair.svg")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pair-nmi.svg", "pair-purity.svg"]
    nmi, purity = ((tmp_path / f"pair-{m}.svg").read_text() for m in ("nmi", "purity"))
    assert nmi.lstrip().startswith("<?xml") and purity.lstrip().startswith("<?xml")
    assert nmi != purity  # each metric its own figure


def test_pairwise_scatter_refuses_bad_input():
    from ensemblekit import plots

    with pytest.raises(ValueError, match="one equal, non-zero length"):
        plots.render_pairwise_scatter("a", "b", [0.5, 0.6], [0.5], ["x", "y"], "png")
    with pytest.raises(ValueError, match="finite"):
        plots.render_pairwise_scatter("a", "b", [0.5, float("nan")], [0.5, 0.6], ["x", "y"], "png")


def test_compare_three_algorithms_json_keeps_friedman_first():
    result = run("compare", "knn", "c45", "k2", "--data", SAMPLE / "iris.arff", "--data",
                 SAMPLE / "wine.arff", "--cv", "3", "--repeats", "1", "--format", "json")
    assert result.exit_code == 0, result.stderr
    entry = json.loads(result.stdout)["metrics"]["accuracy"]
    # 2 data sets cannot make 3 algorithms differ (smallest possible p = 1/14): no pair is judged
    assert entry["unreachable"] == "friedman"
    assert entry["smallest_possible_pvalue"] == pytest.approx(1 / 14)
    assert entry["verdicts"] == [] and not any(p["significant"] for p in entry["pairs"])
    assert "wilcoxon" not in entry and entry["friedman"]["n_algorithms"] == 3


def test_compare_rope_adds_the_bayesian_signed_rank_test(tmp_path):
    data = ["--data", SAMPLE / "iris.arff", "--data", SAMPLE / "wine.arff", "--data",
            SAMPLE / "vote.arff", "--cv", "2", "--repeats", "1"]
    two = run("compare", "knn", "c45", *data, "--rope", "0.01", "--format", "json")
    assert two.exit_code == 0, two.stderr
    (entry,) = json.loads(two.stdout)["metrics"]["accuracy"]["bayesian_signed_rank"]
    assert (entry["algorithm"], entry["against"], entry["rope"]) == ("c45", "knn", 0.01)
    total = entry["p_algorithm_better"] + entry["p_equivalent"] + entry["p_against_better"]
    assert total == pytest.approx(1.0) and entry["n_datasets"] == 3
    text = run("compare", "knn", "c45", *data, "--rope", "0.01")
    assert ("c45 vs knn, Bayesian signed-rank test with rope 0.01 over N = 3 data sets: "
            f"P(c45 better) = {entry['p_algorithm_better']:.3f}") in text.stdout
    # every pair's effect size and wins, ties and losses, whether or not --rope is given
    effects = json.loads(two.stdout)["metrics"]["accuracy"]["effects"]
    assert [(e["algorithm"], e["against"]) for e in effects] == [("c45", "knn")]
    assert effects[0]["wins"] + effects[0]["ties"] + effects[0]["losses"] == 3
    assert effects[0]["ci_low"] <= effects[0]["mean_difference"] <= effects[0]["ci_high"]
    # three algorithms: each against the baseline, or refused without one
    based = run("compare", "knn", "c45", "k2", *data, "--rope", "0.01", "--baseline", "knn",
                "--format", "json")
    pairs = json.loads(based.stdout)["metrics"]["accuracy"]["bayesian_signed_rank"]
    assert [(p["algorithm"], p["against"]) for p in pairs] == [("c45", "knn"), ("k2", "knn")]
    three = json.loads(based.stdout)["metrics"]["accuracy"]["effects"]
    assert [(e["algorithm"], e["against"]) for e in three] == [("knn", "c45"), ("knn", "k2"),
                                                               ("c45", "k2")]
    for args, needle in (((), "give --baseline"), (("--baseline", "knn", "--rope", "-1"),
                                                    "--rope must be")):
        refused = run("compare", "knn", "c45", "k2", *data, "--rope", "0.01", *args)
        assert refused.exit_code == 2 and needle in refused.stderr
