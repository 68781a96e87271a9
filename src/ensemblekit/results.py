"""Result objects of the commands, and their plain-data form (the JSON documents, the records).

Each result holds what a command computed, as numbers and names, and builds its
own plain data: ``to_dict()`` is the document the command line prints with
``--format json``, and ``to_records()`` (where a result has rows) is a list of
flat dictionaries, ready for a CSV writer, which ``to_frame()`` turns into a pandas
DataFrame (pandas is imported then, and only then). The plain data
of the other outputs is here too: the rows of a prediction
(:func:`prediction_rows`), the long-format scores (:func:`score_records`), the
registry listing (:func:`algorithm_summary`), and the verdict sentences of a
comparison (:func:`verdict_lines`), which its JSON document holds and which
:mod:`ensemblekit.report` prints under its tables.

Turning plain data into text (CSV, JSON, ARFF) is :mod:`ensemblekit.writers`'s
job; rich tables for people are :mod:`ensemblekit.report`'s. Nothing here
imports numpy, so the command line can name these types without loading it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ensemblekit import safejson


class _Records:
    """What a result with ``to_records()`` gains: its records as a data frame."""

    def to_records(self) -> list[dict]:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def to_frame(self):
        """The records of :meth:`to_records` as a pandas DataFrame, one row per record.

        Returns
        -------
        pandas.DataFrame
            The columns are the records' keys, in their order.

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records())


@dataclass
class FittedModel:
    """A fitted pipeline with the metadata a model file stores.

    Attributes
    ----------
    pipeline : sklearn.pipeline.Pipeline or ensemblekit.pipeline.ModelPipeline
        The fitted ``prep -> model`` pipeline of a registered algorithm: a
        :class:`~ensemblekit.pipeline.ModelPipeline` of model classes when read from a
        file, or when :func:`ensemblekit.api.fit` fitted a model class that fits
        itself (C4.5); otherwise the scikit-learn pipeline of the estimator.
    metadata : dict
        Algorithm, task, resolved parameters, seed, training schema and the
        training data's name, size and fingerprint (see
        :func:`ensemblekit.persistence.save_model`).
    """

    pipeline: Any
    metadata: dict

    @property
    def algorithm(self) -> str:
        """Registry name of the fitted algorithm."""
        return self.metadata["algorithm"]

    @property
    def estimator(self):
        """The fitted estimator itself (the pipeline's last step)."""
        return self.pipeline.named_steps["model"]

    def to_dict(self) -> dict:
        """The metadata (what ``show --format json`` prints)."""
        return self.metadata


@dataclass
class Prediction(_Records):
    """Predictions for every row of a data set, in file order.

    Attributes
    ----------
    task : {"classification", "regression", "clustering"}
    predictions : list
        One entry per row: a class value (str), a predicted number (float) or a
        cluster number as text.
    probabilities : ndarray of shape (n_rows, n_classes) or None
        Class probabilities over every class value of the training schema (those
        the model never saw get 0); only when asked for.
    classes : tuple of str
        The class values naming the probability columns (empty without them).
    prediction_values : tuple of str
        The values the prediction column can take (the schema's class values, or
        the cluster numbers); empty for a numeric prediction.
    extras : dict of str to list
        Columns asked for besides those (``predict --columns``, Weka's
        ``-classifications`` columns: ``actual``, ``error``,
        ``distribution_<class>``, attributes of the data), in output order:
        name -> one ``str`` per row, or None where the cell is empty.
    """

    task: str
    predictions: list
    probabilities: Any = None
    classes: tuple = ()
    prediction_values: tuple = ()
    extras: dict = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """Column names of the output: ``row``, ``prediction``, ``p_<class>`` per class, then
        the :attr:`extras`."""
        return ["row", "prediction", *(f"p_{c}" for c in self.classes), *self.extras]

    def to_records(self) -> list[dict]:
        """One dictionary per row: ``row`` (from 1), ``prediction``, the probabilities and
        the :attr:`extras`."""
        rows = prediction_rows(self.predictions, self.probabilities, self.classes)
        if self.extras:
            rows = [[*row, *cells] for row, cells in zip(rows, zip(*self.extras.values()))]
        return [dict(zip(self.columns, row)) for row in rows]

    def to_dict(self) -> dict:
        """The records under ``"predictions"``, with the task and columns."""
        return {"task": self.task, "columns": self.columns, "predictions": self.to_records()}


@dataclass
class ModelEvaluation(_Records):
    """A model scored on a test set: a saved one (``evaluate MODEL DATA``), or one
    trained and tested in one step (``evaluate ALGO DATA --test FILE`` or
    ``--split-percentage P``).

    Attributes
    ----------
    model : str
        Where the model came from (its file name, or the algorithm), for the report.
    algorithm : str
    dataset : str
        Name of the test data set.
    instances : int
        Rows scored: those with a known class or target.
    scores : dict of str to float
        Metric name to value.
    task : str
    protocol : str
        How the model was trained and tested, in words.
    report : ClassificationEvaluation or RegressionEvaluation or None
        Weka's report of the test (see :mod:`ensemblekit.scores.classification`); None for
        a clusterer.
    class_names : tuple of str
        The class values, in code order (classification).
    resubstitution : bool
        True when the test data is the model's own training data.
    train_instances : int or None
        Training rows, when the model was trained in this call.
    ignored : int
        Test rows left out because their class (or target) is missing: Weka's "Ignored
        Class Unknown Instances".
    """

    model: str
    algorithm: str
    dataset: str
    instances: int
    scores: dict
    task: str = ""
    protocol: str = ""
    report: Any = None
    class_names: tuple = ()
    resubstitution: bool = False
    train_instances: int | None = None
    ignored: int = 0

    def to_dict(self) -> dict:
        """``model``, ``dataset``, ``instances``, ``scores`` and the protocol, with the
        report (per-class figures, confusion matrix) when there is one, as
        ``--format json`` prints them."""
        out = {"model": self.model, "dataset": self.dataset, "instances": self.instances,
               "ignored_class_unknown_instances": self.ignored, "scores": self.scores}
        if self.protocol:
            out.update(protocol=self.protocol, train_instances=self.train_instances,
                       resubstitution=self.resubstitution)
        if self.report is not None:
            out["report"] = self.report.to_dict()
        return out

    def to_records(self) -> list[dict]:
        """One ``{"metric", "value"}`` record per metric."""
        return [{"metric": m, "value": v} for m, v in self.scores.items()]


@dataclass
class Clustering(_Records):
    """One clustering of a data set (``cluster ALGO DATA -k K``).

    Attributes
    ----------
    algorithm : str
    params : dict
        Resolved parameters.
    seed : int
    dataset : str
    labels : ndarray of shape (n_rows,)
        Cluster of each row, from 0.
    sizes : list of int
        Rows per cluster.
    external : dict of str to float
        Agreement with the class (empty when the data has no nominal class).
    internal : dict of str to float
        Internal validity indices on the clustered attributes (empty when they
        cannot be computed; ``notes`` says why).
    prototypes : ndarray of shape (k, n_features) or None
        Cluster centres, for prototype-based clusterers.
    feature_names : list of str
        Names of the prototype columns.
    iterations : int or None
    rules : int or None
        Number of rules (isca, ss-isca).
    members : int or None
        Ensemble size (cluster ensembles).
    partitioner : str or None
        The graph partitioner a consensus function used.
    targets : tuple of str or None
        ss-isca's target attributes.
    class_name : str or None
        Name of the class the external indices compare with.
    model : FittedModel
        The fitted model (``save_model`` writes it).
    """

    algorithm: str
    params: dict
    seed: int
    dataset: str
    labels: Any
    sizes: list
    external: dict
    internal: dict
    prototypes: Any
    feature_names: list
    iterations: int | None
    rules: int | None
    members: int | None
    partitioner: str | None
    targets: tuple | None
    class_name: str | None
    model: FittedModel

    @property
    def similarity(self):
        """The learned instance similarity (isca, ss-isca), shape (n_rows, n_rows)."""
        return self.model.estimator.similarity_

    def to_dict(self) -> dict:
        """The document ``cluster --format json`` prints (labels are not in it)."""
        out = {"algorithm": self.algorithm, "params": self.params, "seed": self.seed,
               "dataset": self.dataset, "sizes": list(self.sizes),
               "iterations": int(self.iterations or 0), "external": self.external,
               "internal": self.internal,
               "prototypes": None if self.prototypes is None else
               [dict(zip(self.feature_names, map(float, row))) for row in self.prototypes]}
        if self.partitioner is not None:
            out["partitioner"] = self.partitioner
        if self.rules is not None:
            out["rules"] = int(self.rules)
        if self.targets is not None:
            out["targets"] = list(self.targets)
        return out

    def to_records(self) -> list[dict]:
        """One ``{"row", "cluster"}`` record per row (rows from 1)."""
        return [{"row": i + 1, "cluster": int(c)} for i, c in enumerate(self.labels)]


@dataclass
class KSelection(_Records):
    """Internal indices of one algorithm for every k of a range (``cluster -k A:B``).

    Attributes
    ----------
    algorithm : str
    params : dict
        Resolved parameters other than ``n_clusters``.
    seed : int
    dataset : str
    ks : list of int
    values : dict of str to list of float
        Per index, its value at each k (NaN where it could not be computed).
    best : dict of str to int or None
        The best k of each index.
    model : FittedModel
        The last model fitted (for isca, the one tree cut at every k).
    """

    algorithm: str
    params: dict
    seed: int
    dataset: str
    ks: list
    values: dict
    best: dict
    model: FittedModel

    def to_dict(self) -> dict:
        """The document ``cluster -k A:B --format json`` prints (NaN as null)."""
        import math

        return {"algorithm": self.algorithm, "params": self.params, "seed": self.seed,
                "dataset": self.dataset, "k": self.ks,
                "internal": {name: [None if math.isnan(v) else v for v in column]
                             for name, column in self.values.items()},
                "best_k": self.best}

    def to_records(self) -> list[dict]:
        """One record per k: ``k`` and each index's value."""
        return [{"k": k, **{name: column[i] for name, column in self.values.items()}}
                for i, k in enumerate(self.ks)]


@dataclass
class Comparison(_Records):
    """Algorithms compared over data sets under one protocol (``compare``, ``evaluate ALGO``).

    Attributes
    ----------
    task : str
    protocol : ensemblekit.experiment.Protocol
    metrics : list of str
    datasets : list of str
        Data set names, in the order compared.
    labels : list of str
        Algorithm labels (grid points carry their parameters in brackets).
    candidates : list of ensemblekit.experiment.Candidate
    scores : list of ensemblekit.experiment.Score
        Every score, long format.
    failures : list of ensemblekit.experiment.Failure
    summary : dict
        ``(dataset, label, metric) -> (mean, sd, n)``.
    analyses : dict of str to ensemblekit.experiment.MetricAnalysis
        Per metric: ranks, tests over data sets, verdicts and per-cell marks.
    baseline, reference : str or None
        The algorithm cells are tested against (``reference`` is the first
        algorithm when no baseline is given).
    grid : dict of str to list of dict
        Per metric, the grid summary rows (empty without ``--grid``).
    alpha : float
    max_instances : int or None
    units : int
        Units of work in the plan.
    computed : int
        Units computed in this call (the rest came from the resume journal).
    pooled : dict
        ``evaluate ALGO DATA`` by cross-validation: ``(dataset, label) -> report``
        of the out-of-fold predictions of every repeat pooled (see
        :mod:`ensemblekit.scores.classification`); empty for ``compare``.
    predictions : list of tuple
        With ``compare(..., predictions=True)``: one record per test instance of
        every fold, ``(dataset, label, repeat, fold, row, actual, predicted,
        probability)`` in :data:`PREDICTION_COLUMNS` order (see
        :func:`ensemblekit.app.comparing.compare`); empty otherwise.
    chosen : dict
        ``--tune``: ``(dataset, label, repeat, fold) -> {key: value}`` chosen in that fold.
    """

    task: str
    protocol: Any
    metrics: list
    datasets: list
    labels: list
    candidates: list
    scores: list
    failures: list
    summary: dict
    analyses: dict
    baseline: str | None
    reference: str | None
    grid: dict = field(default_factory=dict)
    alpha: float = 0.05
    max_instances: int | None = None
    units: int = 0
    computed: int = 0
    pooled: dict = field(default_factory=dict)
    predictions: list = field(default_factory=list)
    chosen: dict = field(default_factory=dict)

    @property
    def failed(self) -> set:
        """``(dataset, label)`` pairs with a failed unit."""
        return {(f.dataset, f.algorithm) for f in self.failures}

    def table(self, metric: str) -> dict:
        """Mean score per data set and algorithm: ``{dataset: {label: mean or None}}``.

        A cell with a failed unit is None.

        Raises
        ------
        KeyError
            If ``metric`` was not computed.
        """
        if metric not in self.analyses:
            raise KeyError(f"metric {metric!r} was not computed; computed: {', '.join(self.metrics)}")
        failed = self.failed
        return {d: {a: (self.summary[(d, a, metric)][0]
                        if (d, a, metric) in self.summary and (d, a) not in failed else None)
                    for a in self.labels} for d in self.datasets}

    def protocol_dict(self) -> dict:
        """The protocol as ``--format json`` states it."""
        p = self.protocol
        out = {"kind": p.kind, "folds": p.folds if p.kind == "cv" else None,
               "repeats": p.repeats, "seed": p.seed, "alpha": self.alpha,
               "max_instances": self.max_instances}
        if any("@noise=" in c.label for c in self.candidates):  # one column group per level
            out["noise"] = list(dict.fromkeys(float(c.noise) for c in self.candidates))
        return out

    def to_dict(self) -> dict:
        """The comparison as plain data, the document ``compare --format json`` prints.

        Returns
        -------
        dict
            ``protocol``, ``baseline``, ``marks_against``, ``metrics`` (per metric:
            rows of cells with mean, sd, n and mark, average ranks, the tests over
            data sets and the verdict sentences) and ``failures``; a cell with a
            failed unit is None; ``grid`` (per metric, the grid summary rows) when
            the comparison had a grid; ``pooled`` (the report of each algorithm's
            pooled out-of-fold predictions) for ``evaluate``.
        """
        failed = self.failed
        baseline = self.baseline
        out = {"protocol": self.protocol_dict(), "baseline": baseline,
               "marks_against": baseline or self.reference, "metrics": {},
               "failures": [{"dataset": f.dataset, "algorithm": f.algorithm, "repeat": f.repeat,
                             "fold": f.fold, "error": f.error} for f in self.failures]}
        for metric, an in self.analyses.items():
            rows = []
            for d in self.datasets:
                cells = {}
                for a in self.labels:
                    if (d, a, metric) in self.summary and (d, a) not in failed:
                        mean, sd, n = self.summary[(d, a, metric)]
                        cells[a] = {"mean": mean, "sd": sd, "n": n,
                                    "mark": an.marks.get((d, a), "")}
                    else:
                        cells[a] = None
                rows.append({"dataset": d, "scores": cells})
            entry: dict = {"rows": rows}
            if an.ranks is not None:
                entry["average_rank"] = dict(zip(self.labels, (float(r) for r in an.ranks)))
            entry.update(_tests_document(an, baseline))
            entry["verdict"] = verdict_lines(an, baseline)
            out["metrics"][metric] = entry
        if self.grid:
            out["grid"] = self.grid
        if self.pooled:
            out["pooled"] = [{"dataset": d, "algorithm": a, "report": r.to_dict()}
                             for (d, a), r in self.pooled.items()]
        if self.chosen:
            out["chosen"] = [{"dataset": d, "algorithm": a, "repeat": r, "fold": f, "values": v}
                             for (d, a, r, f), v in self.chosen.items()]
        return out

    def to_records(self) -> list[dict]:
        """Every score (and failure) in long format, the rows of ``--output``."""
        return score_records(self.scores, self.failures)


# --------------------------------------------------------------------------- rows and records
def prediction_rows(predictions: Sequence[str], proba=None, classes: Sequence[str] = (), *,
                    start: int = 1) -> list[list]:
    """Rows ``[row, prediction, p_1, ...]`` with row numbers from ``start`` (1-based).

    Parameters
    ----------
    predictions : sequence of str or of float, length n
        Class labels or cluster ids (str), or a regression model's predicted
        values (float, see ``numeric_prediction`` of
        :func:`ensemblekit.writers.format_predictions`).
    proba : array of shape (n, len(classes)) or None
        Class probabilities, one row per prediction.
    classes : sequence of str
        Names of the probability columns (unused here; the caller names them).
    start : int, default=1
        Number of the first row (a later chunk of a file starts after the rows before it).

    Returns
    -------
    list of list
        One row per prediction: its number, the prediction, then its
        probabilities as Python floats (none without ``proba``).
    """
    rows = []
    for i, label in enumerate(predictions, start=start):
        row = [i, label]
        if proba is not None:
            row.extend(float(p) for p in proba[i - start])
        rows.append(row)
    return rows


#: Keys of a long-format score record, in column order (the header of ``--output``).
#: Columns of ``compare --predictions-out``: the data set, the algorithm's label, the repeat
#: and fold, the instance's 1-based row in the data set (Weka's ``inst#``), its actual class
#: or value (empty when missing), the prediction, and for a classifier the probability of
#: the predicted class (Weka's ``prediction`` column of ``-classifications``).
PREDICTION_COLUMNS = ("dataset", "algorithm", "repeat", "fold", "row", "actual", "predicted",
                      "probability")

SCORE_COLUMNS = ("dataset", "algorithm", "params", "repeat", "fold", "metric", "value", "seconds",
                 "error")


def score_records(scores, failures) -> list[dict]:
    """Scores and failures as long-format records (the rows of ``--output``).

    Parameters
    ----------
    scores : sequence of ensemblekit.experiment.Score
        One record each: its value and its time in seconds (rounded to 4 decimals).
    failures : sequence of ensemblekit.experiment.Failure
        One record each, after the scores: metric ``-``, no value, no time,
        and the error text.

    Returns
    -------
    list of dict
        Keys :data:`SCORE_COLUMNS`, in that order; ``error`` is ``""`` for a score.
    """
    records = [dict(zip(SCORE_COLUMNS, (s.dataset, s.algorithm, s.params, s.repeat, s.fold,
                                        s.metric, s.value, round(s.seconds, 4), "")))
               for s in scores]
    records += [dict(zip(SCORE_COLUMNS, (f.dataset, f.algorithm, f.params, f.repeat, f.fold,
                                         "-", None, None, f.error)))
                for f in failures]
    return records


# --------------------------------------------------------------------------- verdict sentences
def format_pvalue(p: float) -> str:
    """A p-value as text: 4 significant digits, ``< 1e-16`` below that (never ``0``).

    Parameters
    ----------
    p : float
        In [0, 1]; finite.

    Returns
    -------
    str
        e.g. ``"0.0625"``, ``"3.2e-07"``, ``"< 1e-16"``. p-values that small come
        from approximations far in their tails (or underflow), so more digits
        would claim a precision they do not have.
    """
    if p < 1e-16:
        return "< 1e-16"
    return f"{p:.4g}"


def _p(p: float) -> str:
    """``p = x`` or ``p < 1e-16``."""
    text = format_pvalue(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _pair_detail(v, an) -> str:
    alpha = _alpha_of(an)
    cmp = "<" if v.significant else ">="
    if v.test == "nemenyi":
        return (f"Nemenyi: rank difference {v.rank_difference:.2f} "
                f"{'>=' if v.significant else '<'} CD {an.cd:.2f}")
    if v.test == "wilcoxon-holm":
        return (f"Wilcoxon {_p(v.raw_pvalue)}, Holm-adjusted {_p(v.pvalue)} "
                f"{cmp} {alpha:g}")
    return f"Wilcoxon {_p(v.pvalue)} {cmp} {alpha:g}"


def _pair_verdict_line(v, an) -> str:
    if v.significant:
        return f"{v.better} is significantly better than {v.worse} ({_pair_detail(v, an)})"
    return f"{v.better} vs {v.worse}: not significantly different ({_pair_detail(v, an)})"


def _friedman_line(f) -> str:
    # with ties the corrected statistic decides; Demšar's uncorrected one is shown beside it
    tied = (f" corrected for ties (uncorrected {f.chi2_uncorrected:.3f}, C = "
            f"{f.tie_correction:.4f})" if f.tie_correction < 1 else "")
    head = f"Friedman chi2 = {f.chi2:.3f}{tied} ("
    if f.f_defined:
        return (f"{head}{_p(f.chi2_pvalue)}); Iman-Davenport F = {f.iman_davenport:.3f} "
                f"({_p(f.f_pvalue)}); N = {f.n_datasets} data sets, k = {f.n_algorithms}")
    return (f"{head}{_p(f.chi2_pvalue)} from chi2, exact {_p(f.pvalue)}); Iman-Davenport F "
            f"undefined: every data set ranks the algorithms alike (chi2 = N(k-1) = "
            f"{f.n_datasets * (f.n_algorithms - 1)}, F divides by zero); N = {f.n_datasets} "
            f"data sets, k = {f.n_algorithms}")


def verdict_lines(an, baseline: str | None = None, max_pairs: int = 45) -> list[str]:
    """The tests over data sets and their verdicts in words, one finding per line.

    Parameters
    ----------
    an : ensemblekit.experiment.MetricAnalysis
    baseline : str, optional
        Only named in the lines; the procedure is fixed by ``an``.
    max_pairs : int
        Pairwise Nemenyi verdicts are listed one per line up to this many pairs,
        counted in one line beyond.

    Returns
    -------
    list of str
        Two algorithms: the Wilcoxon signed-rank and sign tests in one line,
        then one verdict line (Wilcoxon decides). Three or more: the Friedman
        line (Iman-Davenport F, or "undefined" with the exact p-value), then
        either that Friedman does not reject (no post-hoc test) or the post-hoc
        verdicts. When the deciding test cannot reach alpha with this many data
        sets, one line says so instead of any verdict. At most one verdict line
        names a given pair (see :func:`ensemblekit.experiment.analyse`).
    """
    return _test_lines(an, baseline, max_pairs)


def effect_lines(an, max_pairs: int = 45) -> list[str]:
    """What the report prints under the verdicts: each pair's effect size, then the Bayesian
    signed-rank comparisons (``compare --rope``); descriptions and probabilities, not verdicts.

    Parameters
    ----------
    an : ensemblekit.experiment.MetricAnalysis
    max_pairs : int
        Pairs listed one per line up to this many; beyond, one line points to the JSON.

    Returns
    -------
    list of str
        Per pair, the mean difference with its bootstrap interval, and with three
        or more algorithms its wins, ties and losses (for two, the sign test's
        line gives them); then one line per Bayesian comparison.
    """
    return _pair_effect_lines(an, max_pairs) + _bayesian_lines(an)


def _pair_effect_lines(an, max_pairs: int) -> list[str]:
    """Each pair's mean difference with its bootstrap interval, and its wins, ties and losses."""
    effects = getattr(an, "effects", ())
    if len(effects) > max_pairs:
        return [f"effect sizes, wins, ties and losses of the {len(effects)} pairs: see --format json"]
    lines = []
    for a, b, e in effects:
        low, mean, high = (round(v, 4) + 0.0 for v in (e.ci_low, e.mean_difference, e.ci_high))
        line = (f"{a} - {b} over N = {len(an.datasets)} data sets: mean difference "
                f"{mean:+.4f} ({e.confidence:.0%} bootstrap CI {low:+.4f} to "
                f"{high:+.4f}; positive: {a} better)")  # + 0.0: no "-0.0000"
        if len(effects) > 1:
            line += f"; {a} better on {e.wins}, tied on {e.ties}, worse on {e.losses}"
        lines.append(line)
    return lines


def _bayesian_lines(an) -> list[str]:
    """One line per Bayesian signed-rank comparison (``compare --rope``)."""
    return [f"{a} vs {b}, Bayesian signed-rank test with rope {r.rope:g} over N = {r.n_datasets} "
            f"data sets: P({a} better) = {r.p_left:.3f}, P(practically equivalent) = "
            f"{r.p_rope:.3f}, P({b} better) = {r.p_right:.3f}"
            for a, b, r in getattr(an, "bayesian", ())]


def _test_lines(an, baseline: str | None, max_pairs: int) -> list[str]:
    """The frequentist part of :func:`verdict_lines`."""
    lines: list[str] = []
    alpha = _alpha_of(an)
    n, k = len(an.datasets), len(an.labels)
    if k < 2:
        return lines
    if n < 2:
        lines.append(f"statistics across data sets need at least 2 complete data sets (have {n})")
        return lines
    if an.wilcoxon is not None:
        a, b = an.pair
        w, sg = an.wilcoxon, an.sign
        used = "" if w.n_used == n else f", one of {w.n_zero} zero differences left out"
        lines.append(f"{a} vs {b} over N = {n} data sets: Wilcoxon signed-rank T = "
                     f"{w.statistic:g} (R+ = {w.r_plus:g} for {a}, R- = {w.r_minus:g}{used}; "
                     f"{w.method}), {_p(w.pvalue)}; sign test: {a} better on {sg.wins}, worse on "
                     f"{sg.losses}, tied on {sg.ties}, {_p(sg.pvalue)}")
        if an.unreachable == "wilcoxon":
            lines.append(f"with N = {n} data sets no test of 2 algorithms can reach p < {alpha:g} "
                         f"(smallest possible p = {format_pvalue(an.min_pvalue)})")
        lines.extend(_pair_verdict_line(v, an) for v in an.verdicts)
        return lines
    f = an.friedman
    if f is None:
        return lines
    lines.append(_friedman_line(f))
    if an.unreachable == "friedman":
        lines.append(f"with N = {n} data sets the Friedman test of {k} algorithms cannot reach "
                     f"p < {alpha:g} (smallest possible p = {format_pvalue(an.min_pvalue)}); no "
                     "post-hoc test is made")
        return lines
    source = "Iman-Davenport" if f.pvalue_source != "exact" else "exact Friedman"
    if not an.omnibus_rejects:
        lines.append(f"no significant differences among the algorithms ({source} "
                     f"{_p(f.pvalue)} >= {alpha:g}); no post-hoc test is made")
        return lines
    lines.append(f"the algorithms differ ({source} {_p(f.pvalue)} < {alpha:g}); post-hoc: "
                 + (f"each against {baseline} by the Wilcoxon signed-rank test, Holm-adjusted"
                    if an.posthoc == "wilcoxon-holm"
                    else f"Nemenyi, CD = {an.cd:.3f}"))
    if an.unreachable == "wilcoxon-holm":
        lines.append(f"with N = {n} data sets no Wilcoxon-Holm comparison with {baseline} can "
                     f"reach p < {alpha:g} (smallest possible Holm-adjusted p = "
                     f"{format_pvalue(an.posthoc_limit)})")
        return lines
    if an.unreachable == "nemenyi":
        lines.append(f"with N = {n} data sets no two of {k} algorithms can differ by the Nemenyi "
                     f"CD {an.cd:.2f} (largest possible rank difference {an.posthoc_limit:.2f})")
        return lines
    if an.posthoc == "nemenyi" and len(an.verdicts) > max_pairs:
        n_sig = sum(1 for v in an.verdicts if v.significant)
        lines.append(f"{n_sig} of {len(an.verdicts)} pairs differ by at least the CD (Nemenyi)")
        return lines
    lines.extend(_pair_verdict_line(v, an) for v in an.verdicts)
    return lines


def _alpha_of(an) -> float:
    """The analysis's significance level (0.05 for a stand-in without one)."""
    return getattr(an, "alpha", 0.05)


def _tests_document(an, baseline) -> dict:
    """The tests over data sets as plain data: the same facts :func:`verdict_lines` states."""
    alpha = _alpha_of(an)
    out: dict = {}
    if len(an.labels) < 2:
        return out
    out["datasets_in_tests"] = list(an.datasets)
    if len(an.datasets) < 2:
        out["tests_skipped"] = "statistics across data sets need at least 2 complete data sets"
        return out
    out["smallest_possible_pvalue"] = an.min_pvalue
    out["can_reach_alpha"] = an.unreachable is None
    out["unreachable"] = an.unreachable
    if an.wilcoxon is not None:
        a, b = an.pair
        w, sg = an.wilcoxon, an.sign
        out["wilcoxon"] = {"algorithm": a, "against": b, "statistic": w.statistic,
                           "r_plus": w.r_plus, "r_minus": w.r_minus, "pvalue": w.pvalue,
                           "method": w.method, "n_datasets_used": w.n_used,
                           "zero_differences": w.n_zero,
                           "significant": bool(an.unreachable is None and w.pvalue < alpha)}
        out["sign_test"] = {"algorithm": a, "against": b, "wins": sg.wins, "losses": sg.losses,
                            "ties": sg.ties, "n_datasets_used": sg.n_used, "pvalue": sg.pvalue}
    elif an.friedman is not None:
        f = an.friedman
        out["friedman"] = {
            "chi2": f.chi2, "chi2_pvalue": f.chi2_pvalue,
            "chi2_uncorrected": f.chi2_uncorrected, "tie_correction": f.tie_correction,
            "iman_davenport": safejson.plain(f.iman_davenport),
            "f_pvalue": safejson.plain(f.f_pvalue),
            "iman_davenport_undefined": None if f.f_defined else
            "every data set ranks the algorithms alike: chi2 = N(k-1), so F divides by zero",
            "pvalue": f.pvalue, "pvalue_from": f.pvalue_source,
            "n_datasets": f.n_datasets, "n_algorithms": f.n_algorithms}
        out["friedman_significant"] = bool(an.omnibus_rejects)
        out["nemenyi_cd"] = an.cd
        out["posthoc"] = an.posthoc if an.omnibus_rejects else None
        if an.unreachable in ("wilcoxon-holm", "nemenyi"):
            out["posthoc_limit"] = an.posthoc_limit
        if baseline is None:
            # a pair counts only when Friedman rejects first (Demšar's procedure)
            decided = {(v.better, v.worse): v.significant for v in an.verdicts}
            out["pairs"] = [{"better": a, "worse": b, "rank_difference": g, "exceeds_cd": s,
                             "significant": bool(decided.get((a, b), False))}
                            for a, b, g, s in an.pairwise]
        if an.versus_baseline:
            out["versus_baseline"] = [
                {"algorithm": an.labels[r.index], "statistic": r.statistic, "pvalue": r.pvalue,
                 "holm_pvalue": r.adjusted_pvalue, "significant": r.significant, "better": r.better}
                for r in an.versus_baseline]
    if getattr(an, "effects", None):
        out["effects"] = [
            {"algorithm": a, "against": b, "mean_difference": e.mean_difference,
             "ci_low": e.ci_low, "ci_high": e.ci_high, "confidence": e.confidence,
             "wins": e.wins, "ties": e.ties, "losses": e.losses} for a, b, e in an.effects]
    if getattr(an, "bayesian", None):
        out["bayesian_signed_rank"] = [
            {"algorithm": a, "against": b, "rope": r.rope, "p_algorithm_better": r.p_left,
             "p_equivalent": r.p_rope, "p_against_better": r.p_right, "n_datasets": r.n_datasets}
            for a, b, r in an.bayesian]
    out["verdicts"] = [{"better": v.better, "worse": v.worse, "significant": v.significant,
                        "test": v.test, "pvalue": v.pvalue, "rank_difference": v.rank_difference}
                       for v in an.verdicts]
    return out


# --------------------------------------------------------------------------- registry listing
def algorithm_summary(spec) -> dict:
    """JSON-able description of one registry entry and its settable parameters.

    Parameters
    ----------
    spec : ensemblekit.registry.AlgorithmSpec
        The entry; reading its parameters imports its estimator class.

    Returns
    -------
    dict
        ``name``, ``aliases`` (other names of the entry), ``task``,
        ``description``, ``preprocessing`` and ``parameters``:
        one dict per ``--set`` parameter, in display order, with ``name``,
        ``type`` (e.g. ``"int or float"``), ``default``, ``values`` (the allowed
        values in words, as ``--set`` error messages give them) and ``help``.
    """
    return {
        "name": spec.name,
        "aliases": list(spec.aliases),
        "task": spec.task,
        "description": spec.description,
        "parameters": [
            {"name": p.name, "type": p.describe_type(), "default": p.default,
             "values": p.describe_range(), "help": p.help}
            for p in spec.params
        ],
        "preprocessing": spec.preprocessing,
    }


def algorithms_summary(specs: Iterable) -> list[dict]:
    """JSON-able registry listing: :func:`algorithm_summary` of each entry, in order."""
    return [algorithm_summary(s) for s in specs]


def most_chosen(chosen: dict) -> list[tuple[str, str, dict, int, int]]:
    """The value chosen most often per data set and algorithm.

    Parameters
    ----------
    chosen : dict
        ``{(data set, label, repeat, fold): {key: value}}`` (see
        :attr:`ensemblekit.experiment.RunResult.chosen`).

    Returns
    -------
    list of (data set, label, point, count, folds)
        In first-seen order; on a tie the point chosen first (lowest repeat and fold).
    """
    from collections import Counter

    groups: dict[tuple, Counter] = {}
    order: dict[tuple, dict] = {}
    for (ds, label, repeat, fold) in sorted(chosen, key=lambda k: (k[2], k[3])):
        point = chosen[(ds, label, repeat, fold)]
        text = repr(sorted(point.items()))
        groups.setdefault((ds, label), Counter())[text] += 1
        order.setdefault((ds, label), {}).setdefault(text, point)
    out = []
    for (ds, label), counts in groups.items():
        text, n = counts.most_common(1)[0]  # ties: first inserted (Counter keeps order)
        out.append((ds, label, order[(ds, label)][text], n, sum(counts.values())))
    return out
