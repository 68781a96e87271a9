"""Analysis of a comparison's scores: summaries, ranks, tests over data sets and verdicts.

Given the long-format scores of a run (:class:`~ensemblekit.experiment.runner.Score`),
:func:`summarize` gives each cell's mean, standard deviation and count;
:func:`analyse` gives, per metric, the average ranks, the tests over data sets
and the verdicts they allow (Demšar 2006), and per-cell marks against a
baseline; :func:`grid_summary` gives the sensitivity analysis of a parameter
grid in the layout of the Inner Ensembles paper's Tables 1-3. The statistics
themselves live in :mod:`ensemblekit.stats`; rendering lives in
:mod:`ensemblekit.report`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ensemblekit.dataset import known_class

if TYPE_CHECKING:
    from ensemblekit.experiment.protocol import Protocol
    from ensemblekit.experiment.runner import Score


def import_tests_in_background() -> threading.Thread:
    """Import what the tests over data sets need (scipy.stats), in a daemon thread.

    For a run whose units go to other processes: this process waits for them,
    and importing scipy.stats meanwhile takes about a third of a second off the
    end of the run (issue 30). Join the thread before :func:`analyse` (or not:
    an import in another thread is waited for by Python's import lock).

    Returns
    -------
    threading.Thread
        Started.
    """
    def work():
        try:
            import scipy.stats  # noqa: F401
        except Exception:  # noqa: BLE001 - the analysis reports it when it imports scipy
            pass

    thread = threading.Thread(target=work, name="ensemblekit-import-tests", daemon=True)
    thread.start()
    return thread


def summarize(scores: Sequence[Score]) -> dict[tuple[str, str, str], tuple[float, float, int]]:
    """Mean, standard deviation (ddof=1; 0 for one value) and count per cell.

    Parameters
    ----------
    scores : sequence of Score

    Returns
    -------
    dict
        ``{(dataset, algorithm label, metric): (mean, sd, n)}``; for CV the
        values are the r*k per-fold scores, for clustering the r per-run scores.
    """
    cells: dict[tuple[str, str, str], list[float]] = {}
    for s in scores:
        cells.setdefault((s.dataset, s.algorithm, s.metric), []).append(s.value)
    out = {}
    for key, values in cells.items():
        arr = np.asarray(values, dtype=float)
        sd = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
        out[key] = (float(arr.mean()), sd, int(arr.size))
    return out


@dataclass(frozen=True)
class PairVerdict:
    """The decision about one pair of algorithms over the data sets.

    Attributes
    ----------
    better, worse : str
        The two labels, the one the test leans towards first (the better average
        rank for Nemenyi, the larger signed-rank sum for Wilcoxon). When the test
        leans neither way the order carries no meaning (the compared algorithm
        first for two algorithms, the baseline first against a baseline).
    significant : bool
        Whether the difference is significant at alpha.
    test : {"wilcoxon", "wilcoxon-holm", "nemenyi"}
        The procedure that decided.
    pvalue : float or None
        The p-value compared with alpha (Holm-adjusted for ``"wilcoxon-holm"``);
        None for Nemenyi, which compares rank differences with the CD.
    raw_pvalue : float or None
        The unadjusted p-value (``"wilcoxon-holm"`` only).
    rank_difference : float or None
        Difference of average ranks (``"nemenyi"`` only), ``>= 0``.
    """

    better: str
    worse: str
    significant: bool
    test: str
    pvalue: float | None = None
    raw_pvalue: float | None = None
    rank_difference: float | None = None


@dataclass
class MetricAnalysis:
    """Statistics of one metric over data sets, and the verdicts drawn from them (Demšar 2006).

    Attributes
    ----------
    metric : str
    labels : list of str
        Candidate labels (table columns).
    datasets : list of str
        Data sets with a score for every candidate (the others are left out
        of ranks and tests).
    means : ndarray of shape (n_datasets, n_candidates)
    ranks : ndarray of shape (n_candidates,) or None
        Average ranks (1 = best); None with fewer than 2 candidates.
    friedman : stats.FriedmanResult or None
        With 3 or more candidates and at least 2 data sets; None otherwise (two
        algorithms are compared by :attr:`wilcoxon`, not by Friedman's test).
    cd : float or None
        Nemenyi critical difference at ``alpha`` (3 or more candidates); also what
        the CD diagram draws.
    marks : dict
        ``{(dataset, label): "▲" | "▼" | ""}``: significantly better / worse
        than the baseline on that data set (paired test over folds or runs).
    pairwise : list of tuple
        ``(label_a, label_b, rank_difference, exceeds_cd)`` for every pair, a the
        better-ranked (3 or more candidates). A description of the ranks; the
        decisions are in :attr:`verdicts`.
    versus_baseline : list
        ``stats.PairedResult`` of each candidate against the baseline over data
        sets (Wilcoxon signed-rank, Holm-adjusted); only when that post-hoc test
        is made (3 or more candidates, a baseline, and Friedman rejects).
    alpha : float
    pair : tuple of str or None
        With exactly 2 candidates, ``(a, b)``: a is compared with b (b is the
        baseline, else the first column). :attr:`wilcoxon` and :attr:`sign` are
        oriented so that "wins" are a's.
    wilcoxon : stats.SignedRankResult or None
        Two candidates: Wilcoxon signed-rank test over the data sets.
    sign : stats.SignTestResult or None
        Two candidates: sign test over the data sets (reported beside Wilcoxon).
    min_pvalue : float or None
        Smallest p-value the deciding test (Wilcoxon for 2 candidates, Friedman
        for more) can give with this many data sets.
    omnibus_rejects : bool or None
        3 or more candidates: whether Friedman's test rejects at ``alpha``.
    posthoc : {"nemenyi", "wilcoxon-holm"} or None
        The post-hoc procedure that follows when Friedman rejects: Wilcoxon-Holm
        against the baseline when there is one, else Nemenyi; None when
        Friedman does not reject or cannot.
    unreachable : str or None
        The test that cannot reach ``alpha`` with this many data sets, whatever
        the scores: ``"wilcoxon"`` (2 candidates), ``"friedman"``,
        ``"wilcoxon-holm"`` or ``"nemenyi"``; no verdict about any pair is then
        given.
    posthoc_limit : float or None
        For ``unreachable == "wilcoxon-holm"`` the smallest possible
        Holm-adjusted p-value; for ``"nemenyi"`` the largest possible rank
        difference, k - 1.
    verdicts : list of PairVerdict
        At most one per pair of candidates.
    bayesian : list of tuple
        ``(label_a, label_b, stats.BayesianSignedRankResult)``: a against b by
        the Bayesian signed-rank test (``compare --rope``): the pair of two
        candidates, or each candidate against the baseline; empty without a rope.
    effects : list of tuple
        ``(label_a, label_b, stats.PairEffect)`` for every pair of candidates (the
        pair of two as :attr:`pair` orients it; else in column order): a's mean
        difference from b with a bootstrap interval, and a's wins, ties and losses.
    """

    metric: str
    labels: list
    datasets: list
    means: np.ndarray
    ranks: np.ndarray | None = None
    friedman: object = None
    cd: float | None = None
    marks: dict = field(default_factory=dict)
    pairwise: list = field(default_factory=list)
    versus_baseline: list = field(default_factory=list)
    alpha: float = 0.05
    pair: tuple | None = None
    wilcoxon: object = None
    sign: object = None
    min_pvalue: float | None = None
    omnibus_rejects: bool | None = None
    posthoc: str | None = None
    unreachable: str | None = None
    posthoc_limit: float | None = None
    verdicts: list = field(default_factory=list)
    bayesian: list = field(default_factory=list)
    effects: list = field(default_factory=list)


def analyse(scores: Sequence[Score], labels: Sequence[str], datasets: Sequence, metric: str,
            protocol: Protocol, *, baseline: str | None = None, reference: str | None = None,
            alpha: float = 0.05, rope: float | None = None, seed: int = 1,
            labelled: dict | None = None) -> MetricAnalysis:
    """Average ranks, the tests over data sets, their verdicts, and per-cell marks, for one metric.

    Parameters
    ----------
    scores : sequence of Score
        From :meth:`ensemblekit.experiment.runner.Runner.run`; cells with a failed unit must be
        left out.
    labels : sequence of str
        Candidate labels in column order.
    datasets : sequence of ensemblekit.data.Dataset or str
        The data sets compared, or their names.
    metric : str
    protocol : Protocol
    baseline : str, optional
        Label of the baseline: the per-cell marks and the comparisons over data
        sets are made against it.
    reference : str, optional
        Label the per-cell marks are made against when there is no baseline
        (e.g. the first algorithm); it does not change the tests over data sets.
    alpha : float, default=0.05
        Significance level of every test.
    rope : float, optional
        Also compare by the Bayesian signed-rank test with this region of
        practical equivalence (:func:`stats.bayesian_signed_rank`): the two
        candidates, or each against the baseline (at least 2 data sets).
    seed : int, default=1
        Seed of that test's Monte Carlo sample.
    labelled : dict, optional
        Rows with a known class per data set name: a fold's test share of them gives the
        corrected t-test's train/test ratio. Default: counted in ``datasets``; when
        ``datasets`` are names only, the ratio of k-fold CV, 1 / (k - 1).

    Returns
    -------
    MetricAnalysis

    Notes
    -----
    The procedure follows Demšar (2006), so that one table never states two
    verdicts about the same pair:

    * **Two candidates** (Sect. 3.1): the Wilcoxon signed-rank test over the data
      sets decides, as Demšar recommends; the sign test is reported beside it.
      No Friedman, Nemenyi or critical-difference test is made: with k = 2 they
      only restate a weaker test of the same pair.
    * **Three or more** (Sect. 3.2): the Friedman test (Iman-Davenport F, or the
      exact p-value where F is undefined, see :class:`stats.FriedmanResult`)
      comes first. Post-hoc tests are made only when it rejects. Without a
      baseline, the Nemenyi test judges every pair (rank difference at least the
      CD). With a baseline, the question is how each algorithm compares with
      that control, and Demšar (Sect. 3.2.2) replaces Nemenyi's all-pairs test
      by a procedure for k - 1 comparisons with a control that controls the
      family-wise error; here each algorithm is compared with the baseline by
      the Wilcoxon signed-rank test (Sect. 3.1.3) with Holm's step-down
      adjustment, and no Nemenyi verdict is given, so the two procedures never
      speak about the same pair.
    * **Too few data sets**: when the deciding test cannot reach ``alpha`` for
      any scores -- Wilcoxon's smallest two-sided p is 2/2^N, Friedman's is
      :func:`stats.friedman_min_pvalue`, the smallest Holm-adjusted p against a
      baseline (k - 1) 2/2^N, and Nemenyi needs a rank difference k - 1 to reach
      the CD -- ``unreachable`` names it and no verdict is given.

    Per-cell marks come from the corrected resampled t-test over the r*k folds
    (Nadeau & Bengio 2003) for CV, and from the Wilcoxon signed-rank test over
    the paired runs for clustering; they answer a different question (this data
    set, these folds or runs), are not corrected for the number of cells, and
    are labelled as such in the report.
    """
    from ensemblekit import stats
    from ensemblekit.metrics import metric_spec

    better_high = metric_spec(metric).greater_is_better
    per_cell: dict[tuple[str, str], list[tuple[int, int, float]]] = {}
    for s in scores:
        if s.metric == metric:
            per_cell.setdefault((s.dataset, s.algorithm), []).append((s.repeat, s.fold, s.value))
    names = [d if isinstance(d, str) else d.name for d in datasets]
    if labelled is None and not all(isinstance(d, str) for d in datasets):
        labelled = {d.name: n_labelled(d) for d in datasets if hasattr(d, "schema")}
    complete = [d for d in names if all((d, a) in per_cell for a in labels)]
    means = np.array([[np.mean([v for _, _, v in per_cell[(d, a)]]) for a in labels]
                      for d in complete])
    result = MetricAnalysis(metric, list(labels), complete,
                            means.reshape(len(complete), len(labels)),
                            alpha=alpha)
    ref = baseline if baseline is not None else reference
    if ref is not None:
        for d in complete:
            base = sorted(per_cell[(d, ref)])
            for a in labels:
                other = sorted(per_cell[(d, a)])
                result.marks[(d, a)] = ""
                if a == ref or [k[:2] for k in other] != [k[:2] for k in base] or len(other) < 2:
                    continue
                x = np.array([v for _, _, v in other])
                b = np.array([v for _, _, v in base])
                if protocol.kind == "cv":
                    # a fold's test and training sizes; without the data set's, their ratio
                    size = (labelled or {}).get(d, protocol.folds)
                    n_test = max(1, round(size / protocol.folds))
                    t, p = stats.corrected_resampled_ttest(x, b, size - n_test, n_test)
                    better = t > 0 if better_high else t < 0
                else:
                    test = stats.wilcoxon_signed_rank(x, b, better_high)
                    p, better = test.pvalue, test.direction > 0
                if p < alpha:
                    result.marks[(d, a)] = "▲" if better else "▼"
    labels = list(labels)
    k, n = len(labels), len(complete)
    if k >= 2 and n >= 1:
        result.ranks = stats.average_ranks(result.means, better_high)
    if k < 2 or n < 2:
        return result
    if k == 2:
        _two_algorithms(result, baseline, better_high)
    else:
        _several_algorithms(result, baseline, better_high)
    if rope is not None:
        _bayesian(result, baseline, better_high, rope, seed)
    pairs = ([result.pair] if k == 2 else
             [(labels[i], labels[j]) for i in range(k) for j in range(i + 1, k)])
    for a, b in pairs:
        x, y = result.means[:, labels.index(a)], result.means[:, labels.index(b)]
        result.effects.append((a, b, stats.pair_effect(x, y, better_high, seed=seed)))
    return result


def _bayesian(result: MetricAnalysis, baseline: str | None, better_high: bool, rope: float,
              seed: int) -> None:
    """The Bayesian signed-rank test of the pair (two candidates) or of each candidate against
    the baseline (Benavoli et al. 2017): probabilities, not verdicts."""
    from ensemblekit import stats

    labels = result.labels
    if len(labels) == 2:
        pairs = [result.pair]
    elif baseline is not None:
        pairs = [(a, baseline) for a in labels if a != baseline]
    else:
        return  # refused before any work (see ensemblekit.app.comparing)
    for a, b in pairs:
        x, y = result.means[:, labels.index(a)], result.means[:, labels.index(b)]
        result.bayesian.append((a, b, stats.bayesian_signed_rank(x, y, rope, better_high,
                                                                 seed=seed)))


def _two_algorithms(result: MetricAnalysis, baseline: str | None, better_high: bool) -> None:
    """Wilcoxon decides, the sign test is shown beside it (Demšar 2006, Sect. 3.1)."""
    from ensemblekit import stats

    labels, alpha = result.labels, result.alpha
    against = labels.index(baseline) if baseline is not None else 0
    compared = 1 - against
    a, b = labels[compared], labels[against]
    result.pair = (a, b)
    x, y = result.means[:, compared], result.means[:, against]
    result.wilcoxon = stats.wilcoxon_signed_rank(x, y, better_high)
    result.sign = stats.sign_test(x, y, better_high)
    result.min_pvalue = stats.paired_min_pvalue(len(result.datasets))
    if not result.min_pvalue < alpha:
        result.unreachable = "wilcoxon"
        return
    w = result.wilcoxon
    first, second = (b, a) if w.direction < 0 else (a, b)
    result.verdicts.append(PairVerdict(first, second, bool(w.pvalue < alpha), "wilcoxon",
                                       pvalue=w.pvalue))


def _several_algorithms(result: MetricAnalysis, baseline: str | None, better_high: bool) -> None:
    """Friedman first; Nemenyi or Wilcoxon-Holm against the baseline only after it rejects."""
    from ensemblekit import stats

    labels, alpha = result.labels, result.alpha
    k, n = len(labels), len(result.datasets)
    result.friedman = f = stats.friedman_test(result.means, better_high)
    result.cd = stats.critical_difference(k, n, alpha)
    order = np.argsort(result.ranks, kind="stable")
    for i_pos, i in enumerate(order):
        for j in order[i_pos + 1:]:
            gap = float(result.ranks[j] - result.ranks[i])
            result.pairwise.append((labels[i], labels[j], gap, gap >= result.cd))
    result.min_pvalue = f.min_pvalue
    if not f.min_pvalue < alpha:
        result.unreachable = "friedman"
        return
    result.omnibus_rejects = bool(f.pvalue < alpha)
    if not result.omnibus_rejects:
        return
    if baseline is not None:
        holm_floor = min(1.0, (k - 1) * stats.paired_min_pvalue(n))
        result.posthoc = "wilcoxon-holm"
        if not holm_floor < alpha:
            result.unreachable, result.posthoc_limit = "wilcoxon-holm", holm_floor
            return
        result.versus_baseline = stats.wilcoxon_holm(result.means, labels.index(baseline),
                                                     better_high, alpha)
        for r in result.versus_baseline:
            other = labels[r.index]
            first, second = (other, baseline) if r.better else (baseline, other)
            result.verdicts.append(PairVerdict(first, second, r.significant, "wilcoxon-holm",
                                               pvalue=r.adjusted_pvalue, raw_pvalue=r.pvalue))
        return
    result.posthoc = "nemenyi"
    if not k - 1 >= result.cd:
        result.unreachable, result.posthoc_limit = "nemenyi", float(k - 1)
        return
    for a, b, gap, exceeds in result.pairwise:
        result.verdicts.append(PairVerdict(a, b, bool(exceeds), "nemenyi", rank_difference=gap))


def n_labelled(ds) -> int:
    """Rows with a known class: code >= 0 (nominal) or not NaN (numeric)."""
    ca = ds.schema.class_attribute
    numeric = ca is not None and ca.kind == "numeric"
    return int(known_class(np.asarray(ds.y, dtype=np.float64 if numeric else np.int64)).sum())


def beats(value: float, baseline: float, greater_is_better: bool = True) -> bool:
    """Whether a mean score beats the baseline's by more than rounding.

    Two means of the same fold scores summed in a different order can differ
    in the last bits; a margin of 1e-12 (relative to the baseline, at least
    absolute) keeps such ties from counting as wins in the grid layout of the
    Inner Ensembles paper's Tables 1-3.

    Parameters
    ----------
    value, baseline : float
        Mean scores of a grid point and of the baseline (any units).
    greater_is_better : bool, default True
        False for losses, where the lower mean wins.

    Returns
    -------
    bool
    """
    margin = 1e-12 * max(1.0, abs(baseline))
    return value > baseline + margin if greater_is_better else value < baseline - margin


def grid_summary(summary, candidates, baseline: str, datasets: Sequence[str], metric: str,
                 greater_is_better: bool = True, failed=frozenset()) -> list[dict]:
    """Sensitivity analysis in the layout of the Inner Ensembles paper's Tables 1–3.

    For each data set and gridded algorithm: the baseline's score, the range of
    each grid parameter over the points that beat the baseline, the percentage
    of points that beat it, and the average and best score over those points.

    Parameters
    ----------
    summary : dict
        From :func:`summarize`.
    candidates : sequence of ensemblekit.experiment.protocol.Candidate
        The grid points (those with a non-empty ``grid``) and the baseline.
    baseline : str
        Label of the baseline candidate.
    datasets : sequence of str
    metric : str
    greater_is_better : bool
    failed : set of (dataset, label)
        Cells with a failed unit: left out.

    Returns
    -------
    list of dict
        One per (data set, gridded algorithm): ``dataset``, ``algorithm`` (the
        configuration's label, or the registry name: ``Candidate.column``), ``baseline``,
        ``ranges`` ({param: [min, max]} of each parameter over the winning
        points, taken one parameter at a time, or None), ``percent``,
        ``average``, ``best``, ``best_point``, ``points``. A point wins when
        its mean beats the baseline's by more than 1e-12 (relative), so ties up
        to rounding do not count.
    """
    rows = []
    # grouped by configuration: c45 and c45:unpruned=true gridded are two rows
    algorithms = sorted({c.column for c in candidates if c.grid}, key=lambda a: [
        c.column for c in candidates].index(a))
    for d in datasets:
        if (d, baseline, metric) not in summary or (d, baseline) in failed:
            continue
        base = summary[(d, baseline, metric)][0]
        for alg in algorithms:
            points = [c for c in candidates if c.column == alg and c.grid
                      and (d, c.label, metric) in summary and (d, c.label) not in failed]
            scores = [summary[(d, c.label, metric)][0] for c in points]
            wins = [(c, v) for c, v in zip(points, scores) if beats(v, base, greater_is_better)]
            row = {"dataset": d, "algorithm": alg, "baseline": base, "points": len(points),
                   "percent": 100.0 * len(wins) / len(points) if points else 0.0,
                   "ranges": None, "average": None, "best": None, "best_point": None}
            if wins:
                keys = list(wins[0][0].grid)
                row["ranges"] = {k: [min(c.grid[k] for c, _ in wins),
                                     max(c.grid[k] for c, _ in wins)]
                                 for k in keys}
                values = [v for _, v in wins]
                row["average"] = sum(values) / len(values)
                best_c, best_v = (max if greater_is_better else min)(wins, key=lambda cv: cv[1])
                row["best"], row["best_point"] = best_v, dict(best_c.grid)
            rows.append(row)
    return rows
