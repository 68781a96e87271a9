"""What people read: rich tables, the verdicts under them, and model descriptions.

Functions here turn result objects (:mod:`ensemblekit.results`) into
:mod:`rich` renderables or lines of text for a terminal; ``show`` describes a
model as plain blocks, which become rich tables on a terminal and plain lines,
without rich, in a pipe or a file. They do not compute scores, and they write
nothing. Names and values from data and model files go through :func:`printable`
(or :func:`safe_text`), so a file cannot drive the terminal. Output for programs
(CSV, JSON, ARFF) is :mod:`ensemblekit.writers`'s.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ensemblekit.results import effect_lines, verdict_lines


def fmt(x: float, digits: int = 4) -> str:
    """Fixed-point text of a score, the same on every platform."""
    return f"{x:.{digits}f}"


# --------------------------------------------------------------------------- text from files
def printable(value: object) -> str:
    """``str(value)`` with every character a terminal would not simply show written as an escape.

    Names and values come from data and model files, which anyone may have
    written: an attribute called ``"\\x1b[2J"`` must not clear the screen of the
    user who runs ``ensemblekit info`` on it, and a ``"\\r"`` or ``"\\n"`` must
    not fake a line of output. So each character that Python does not count as
    printable (:meth:`str.isprintable`: control characters C0, DEL and C1,
    format characters such as the bidirectional overrides, line and paragraph
    separators, spaces other than the ASCII one, lone surrogates, private-use
    and unassigned code points) becomes ``\\xNN``, ``\\uNNNN`` or
    ``\\UNNNNNNNN``, as in a Python literal. Everything else, backslashes
    included, is kept, so the function is idempotent.

    This is the one place that decides what is escaped; the tables use it
    through :func:`safe_text`, and the command line's error and note lines use
    it directly. Machine outputs (CSV, JSON, ARFF) are data and are not passed
    through it.

    Parameters
    ----------
    value : object
        Anything; it is converted with ``str`` first.

    Returns
    -------
    str
        The text on one line (a newline in ``value`` is escaped too).
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else _escape_char(ch) for ch in text)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def safe_text(value: object, style: str = ""):
    """Text from a data or model file as a rich ``Text``: escaped, and never read as markup.

    Every table builder here gives rich its names, values and titles through
    this function. :func:`printable` escapes control characters; wrapping the
    result in :class:`rich.text.Text` (instead of a ``str``) keeps rich from
    reading ``[red]`` or ``[/]`` in a name as console markup.

    Parameters
    ----------
    value : object
        Converted with ``str``.
    style : str, optional
        A rich style (``"bold"``, ``"table.title"``) for the whole text.

    Returns
    -------
    rich.text.Text
    """
    from rich.text import Text

    return Text(printable(value), style=style)


def comparison_tables(summary, analyses: dict, datasets: Sequence[str], labels: Sequence[str],
                      protocol_text: str, failed: set = frozenset(), baseline: str | None = None,
                      reference: str | None = None, protocol_kind: str = "cv"):
    """One rich table per metric: rows data sets, columns algorithms, mean ± sd.

    Parameters
    ----------
    summary : dict
        ``{(dataset, label, metric): (mean, sd, n)}`` from
        :func:`ensemblekit.experiment.summarize`.
    analyses : dict
        ``{metric: MetricAnalysis}`` from :func:`ensemblekit.experiment.analyse`.
    datasets, labels : sequences of str
        Row and column order.
    protocol_text : str
        Heading suffix, e.g. ``"10x10-fold stratified CV, seed 1"``.
    failed : set of (dataset, label)
        Cells with at least one failed unit (shown as ``failed``).
    baseline : str, optional
        Column the marks and the Wilcoxon–Holm lines refer to.
    reference : str, optional
        Column the marks refer to when there is no baseline.
    protocol_kind : {"cv", "runs"}
        Names the per-cell test in the legend.

    Returns
    -------
    list
        For each metric a heading (rich Text), a table and the verdict lines.
        The best mean of each row is bold; ▲/▼ marks a cell significantly
        better/worse than the baseline on that data set; the last row holds
        the average ranks (1 = best).
    """
    from rich.table import Table
    from rich.text import Text

    from ensemblekit.metrics import metric_spec

    out = []
    for metric, an in analyses.items():
        info = metric_spec(metric)
        out.append(Text(f"{info.label} (mean ± sd), {protocol_text}", style="bold"))
        table = Table()
        table.add_column("data set")
        for a in labels:
            # a --noise level's column: the algorithm over its level (a group per level)
            head = [safe_text(part) for part in a.split("@noise=")]
            head = Text("\n").join([head[0], Text("noise ") + head[1]] if len(head) == 2 else head)
            table.add_column(head + (" (baseline)" if a == baseline else ""), justify="right")
        for d in datasets:
            present = [summary[(d, a, metric)][0] for a in labels if (d, a, metric) in summary
                       and (d, a) not in failed]
            best = (max(present) if info.greater_is_better else min(present)) if present else None
            cells = []
            for a in labels:
                if (d, a) in failed or (d, a, metric) not in summary:
                    cells.append("[red]failed[/red]")
                    continue
                m, sd, _ = summary[(d, a, metric)]
                text = f"{fmt(m)} ± {fmt(sd)}" + (f" {an.marks[(d, a)]}" if an.marks.get((d, a)) else "")
                cells.append(f"[bold]{text}[/bold]" if m == best else text)
            table.add_row(safe_text(d), *cells)
        if an.ranks is not None:
            table.add_section()
            table.add_row("average rank", *(f"{r:.2f}" for r in an.ranks))
        out.append(table)
        legend = marks_legend(an, baseline or reference, protocol_kind)
        if legend:
            out.append(Text(legend))
        excluded = [d for d in datasets if d not in an.datasets]
        if excluded and an.ranks is not None:
            out.append(safe_text(f"left out of ranks and tests (a failed cell): {', '.join(excluded)}"))
        out.extend(safe_text(line) for line in verdict_lines(an, baseline) + effect_lines(an))
    return out


def protocol_text(protocol, task: str) -> str:
    """The protocol in words for table headings, e.g. ``"10x10-fold stratified CV, seed 1"``."""
    if protocol.kind == "cv":
        kind = "CV" if task == "regression" else "stratified CV"
        return f"{protocol.repeats}x{protocol.folds}-fold {kind}, seed {protocol.seed}"
    k = protocol.n_clusters if protocol.n_clusters is not None else "number of classes"
    return f"{protocol.repeats} clustering runs (k = {k}), seed {protocol.seed}"


def comparison_renderables(result) -> list:
    """Rich renderables of a comparison: one table per metric (or grid table), with verdicts.

    Parameters
    ----------
    result : ensemblekit.results.Comparison
    """
    from ensemblekit.metrics import metric_spec

    heading = protocol_text(result.protocol, result.task)
    if result.grid:
        out = [r for m in result.metrics
               for r in grid_table(result.grid[m], result.baseline, metric_spec(m).label, heading)]
    else:
        out = list(comparison_tables(result.summary, result.analyses, result.datasets,
                                     result.labels, heading, result.failed, result.baseline,
                                     result.reference, result.protocol.kind))
    return out + tuned_lines(result.chosen, result.protocol.kind)


def tuned_lines(chosen: dict, kind: str = "cv") -> list[str]:
    """``--tune``: per data set and algorithm, the value its folds (or clustering runs,
    ``kind="runs"``) chose most often (:func:`ensemblekit.results.most_chosen`), e.g.
    ``tuned knn on iris: n_neighbors=5 in 7 of 10 folds``; empty without tuning."""
    from ensemblekit.results import most_chosen

    units = "runs" if kind == "runs" else "folds"
    return [f"tuned {label} on {ds}: "
            + ",".join(f"{k}={v}" for k, v in point.items()) + f" in {n} of {folds} {units}"
            for ds, label, point, n, folds in most_chosen(chosen)]


def marks_legend(an, reference: str | None, protocol_kind: str) -> str | None:
    """One line on the per-data-set tests: what ▲/▼ mean, or that no cell differs.

    None when there is no reference algorithm (nothing was tested).
    """
    if reference is None:
        return None
    test = ("corrected resampled t-test over folds (Nadeau & Bengio)" if protocol_kind == "cv"
            else "Wilcoxon signed-rank test over runs")
    how = f"{test}, alpha {getattr(an, 'alpha', 0.05):g}"
    if not any(an.marks.values()):
        return f"per data set, no algorithm differs significantly from {reference} ({how})"
    return (f"▲/▼: significantly better/worse than {reference} on that data set ({how}, "
            "not corrected for the number of cells)")


def grid_table(rows: list[dict], baseline: str, metric_label: str, protocol_text: str):
    """Rich renderables for :func:`ensemblekit.experiment.analysis.grid_summary` (the paper's
    Tables 1–3 layout)."""
    from rich.table import Table

    keys: list[str] = []
    for r in rows:
        for k in (r["ranges"] or {}):
            if k not in keys:
                keys.append(k)
    table = Table()
    table.add_column("data set")
    table.add_column("algorithm")
    table.add_column(safe_text(baseline), justify="right")
    for k in keys:
        table.add_column(safe_text(f"{k} (better)"), justify="right")
    for col in ("% better", "avg better", "best", "best at"):
        table.add_column(col, justify="right")
    for r in rows:
        ranges = r["ranges"] or {}
        cells = [_range_text(ranges[k]) if k in ranges else "-" for k in keys]
        best_at = ", ".join(f"{k}={plain_value(v)}" for k, v in (r["best_point"] or {}).items()) or "-"
        table.add_row(safe_text(r["dataset"]), safe_text(r["algorithm"]), fmt(r["baseline"]),
                      *(safe_text(c) for c in cells), f"{r['percent']:.0f}%",
                      "-" if r["average"] is None else fmt(r["average"]),
                      "-" if r["best"] is None else fmt(r["best"]), safe_text(best_at))
    heading = safe_text(f"{metric_label}: grid points that beat {baseline} (ranges per parameter "
                        f"over those points), {protocol_text}", style="bold")
    return [heading, table]


def _range_text(pair) -> str:
    lo, hi = pair
    return plain_value(lo) if lo == hi else f"{plain_value(lo)}–{plain_value(hi)}"


# --------------------------------------------------------------------------- data sets
#: Attributes (and class values) listed by :func:`schema_tables`; a longer table ends with a note.
#: (rich renders about 3,000 table rows a second, so 100,000 attributes would take half a minute.)
MAX_SCHEMA_ROWS = 500


def schema_tables(summary: dict, max_rows: int = MAX_SCHEMA_ROWS):
    """Rich renderables for :func:`schema_summary` output.

    Parameters
    ----------
    summary : dict
        :func:`schema_summary` output.
    max_rows : int, default MAX_SCHEMA_ROWS
        Attributes listed in the attribute table, in file order, and values in
        the class table; when there are more, the table's caption says how many
        are left out and that ``--format json`` lists them all.

    Returns
    -------
    list of rich renderables
        The file header grid, the attribute table and, when the file has a
        nominal class, the class counts.
    """
    from rich.table import Table

    head = Table.grid(padding=(0, 2))
    head.add_row("file", safe_text(summary["file"]))
    head.add_row("relation", safe_text(summary["relation"]))
    head.add_row("instances", str(summary["instances"]))
    n_attributes = len(summary["attributes"])
    caption = None
    if n_attributes > max_rows:
        caption = (f"the first {max_rows:,} of {n_attributes:,} attributes; "
                   f"{n_attributes - max_rows:,} more not shown (--format json lists them all)")
    attrs = Table(title="attributes", title_justify="left", caption=caption,
                  caption_justify="left")
    for col in ("#", "name", "type", "role", "missing", "values / range"):
        attrs.add_column(col, justify="right" if col in ("#", "missing") else "left")
    for i, a in enumerate(summary["attributes"][:max_rows], 1):
        if a["type"] == "date":  # milliseconds since the epoch, read in this format
            detail = safe_text(f"{a['format']}")
        elif a["type"] == "numeric":
            detail = f"{a['min']:.6g} .. {a['max']:.6g}" if "min" in a else "all missing"
        else:
            detail = f"{a['values']} values"
        attrs.add_row(str(i), safe_text(a["name"]), a["type"], a["role"], str(a["missing"]), detail)
    out = [head, attrs]
    cls = summary.get("class")
    if cls and "counts" in cls:
        counts = cls["counts"]
        caption = None
        if len(counts) > max_rows:
            caption = (f"the first {max_rows:,} of {len(counts):,} class values; "
                       f"{len(counts) - max_rows:,} more not shown (--format json lists them all)")
        ctable = Table(title=safe_text(f"class '{cls['name']}'", style="table.title"),
                       title_justify="left", caption=caption, caption_justify="left")
        ctable.add_column("value")
        ctable.add_column("count", justify="right")
        for v, c in itertools.islice(counts.items(), max_rows):
            ctable.add_row(safe_text(v), str(c))
        out.append(ctable)
    return out


# --------------------------------------------------------------------------- algorithms, models
#: Under the overview table: where each algorithm's parameter help is.
ALGORITHMS_FOOTER = "ensemblekit algorithms NAME lists an algorithm's parameters: type, default, range, help"


def algorithms_table(summary: list[dict]):
    """Rich table for :func:`ensemblekit.results.algorithms_summary`, with
    :data:`ALGORITHMS_FOOTER` as its caption."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="algorithms", title_justify="left", show_lines=True,
                  caption=ALGORITHMS_FOOTER, caption_justify="left")
    for col in ("name", "task", "parameters (default)", "description"):
        table.add_column(col)
    for s in summary:
        params = "\n".join(printable(f"{p['name']}={plain_value(p['default'])}  [{p['values']}]")
                           for p in s["parameters"])
        description = safe_text(s["description"])
        description.append("\n" + printable(s["preprocessing"]), style="dim")
        name = safe_text(s["name"])
        if s.get("aliases"):
            name.append("\nalias: " + ", ".join(printable(a) for a in s["aliases"]), style="dim")
        table.add_row(name, safe_text(s["task"]), Text(params), description)
    return table


def algorithm_params_table(entry: dict):
    """Rich table of one algorithm's parameters (``ensemblekit algorithms NAME``).

    Parameters
    ----------
    entry : dict
        One entry of :func:`ensemblekit.results.algorithms_summary` (see
        :func:`ensemblekit.results.algorithm_summary`).

    Returns
    -------
    rich.table.Table
        Titled with the algorithm's name, task and description; one row per
        parameter: name, type, default, allowed values, help; the
        preprocessing as its caption.
    """
    from rich.table import Table

    aliases = entry.get("aliases") or ()
    alias = f" (alias: {', '.join(aliases)})" if aliases else ""
    title = safe_text(f"{entry['name']} ({entry['task']}): {entry['description']}{alias}",
                      style="table.title")
    table = Table(title=title, title_justify="left", caption=safe_text(entry["preprocessing"]),
                  caption_justify="left")
    for col in ("parameter", "type", "default", "range", "help"):
        table.add_column(col)
    for p in entry["parameters"]:
        table.add_row(safe_text(p["name"]), safe_text(p["type"]), safe_text(plain_value(p["default"])),
                      safe_text(p["values"]), safe_text(p["help"]))
    return table


def plain_value(v) -> str:
    """A parameter's value as people write it: ``none``, ``true``/``false``, else ``str``."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def metrics_table(values: dict[str, float], title: str):
    """A heading and a two-column rich table ``metric | value``."""
    from rich.console import Group
    from rich.table import Table

    from ensemblekit.metrics import METRICS, metric_spec

    table = Table()
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, v in values.items():
        label = metric_spec(name).label if name in METRICS else name
        table.add_row(safe_text(label), fmt(v))
    return Group(safe_text(title, style="bold"), table)


# --------------------------------------------------------------------------- Weka's report
#: Columns of the per-class table: (key of ``report.per_class``, heading), Weka's order.
PER_CLASS_COLUMNS = (("tp_rate", "TP rate"), ("fp_rate", "FP rate"), ("precision", "Precision"),
                     ("recall", "Recall"), ("f_measure", "F-measure"), ("mcc", "MCC"),
                     ("roc_area", "ROC area"), ("prc_area", "PRC area"))


def _cell(value: float, digits: int = 3) -> str:
    """A figure of the per-class table: Weka's ``?`` where it is undefined (NaN)."""
    return "?" if value != value else fmt(value, digits)


def _letters(n: int) -> list[str]:
    """Weka's confusion-matrix column names: a, b, ..., z, then ba, bb, ... (base 26)."""
    out = []
    for k in range(n):
        text = ""
        while True:
            text = chr(ord("a") + k % 26) + text
            k //= 26
            if k == 0:
                break
        out.append(text)
    return out


def summary_rows(report) -> list[tuple[str, str]]:
    """The summary of Weka's report as ``(measure, value text)`` rows.

    Parameters
    ----------
    report : ensemblekit.scores.classification.ClassificationEvaluation or RegressionEvaluation
    """
    if not hasattr(report, "confusion"):
        return [("Correlation coefficient", fmt(report.correlation)),
                ("Mean absolute error", fmt(report.mae)),
                ("Root mean squared error", fmt(report.rmse)),
                ("Relative absolute error", f"{fmt(report.rae)} %"),
                ("Root relative squared error", f"{fmt(report.rrse)} %"),
                ("Total number of instances", str(report.n))]
    pct = report.pct_correct
    return [("Correctly classified instances", f"{report.correct}   {fmt(pct)} %"),
            ("Incorrectly classified instances", f"{report.incorrect}   {fmt(100 - pct)} %"),
            ("Kappa statistic", fmt(report.kappa)),
            *cost_rows(report),
            ("Mean absolute error", fmt(report.mae)),
            ("Root mean squared error", fmt(report.rmse)),
            ("Relative absolute error", f"{fmt(report.rae)} %"),
            ("Root relative squared error", f"{fmt(report.rrse)} %"),
            ("Balanced accuracy", fmt(report.balanced_accuracy)),
            ("MCC (weighted)", _cell(report.weighted["mcc"], 4)),
            ("F-measure (weighted)", _cell(report.weighted["f_measure"], 4)),
            ("F-measure (macro)", fmt(report.macro["f_measure"])),
            ("ROC area (weighted)", _cell(report.weighted["roc_area"], 4)),
            ("PRC area (weighted)", _cell(report.weighted["prc_area"], 4)),
            ("Log-loss", fmt(report.log_loss)),
            ("Brier score", fmt(report.brier)),
            ("Total number of instances", str(report.n))]


def cost_rows(report) -> list[tuple[str, str]]:
    """Weka's "Total Cost" and "Average Cost" lines, when the report was made with a cost
    matrix (else none); numbers as Weka's ``Utils.doubleToString(x, 4)`` writes them
    (``12``, ``0.08``), as ``Evaluation.toSummaryString`` prints them after the kappa."""
    from ensemblekit.classifiers._java_numbers import weka_number

    cost = getattr(report, "cost", None)
    if cost is None:
        return []
    return [("Total Cost", weka_number(cost.total, 4)),
            ("Average Cost", weka_number(cost.average, 4))]


def _measure_table(rows):
    """A table of ``(measure, value text)`` rows, without a header (a report's summary)."""
    from rich.table import Table

    table = Table(show_header=False)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in rows:
        table.add_row(name, value)
    return table


def report_renderables(report, title: str, ignored: int = 0) -> list:
    """Weka's test report as rich renderables: the summary, then (nominal class) the
    per-class table with its weighted average and the confusion matrix.

    Parameters
    ----------
    report : ensemblekit.scores.classification.ClassificationEvaluation or RegressionEvaluation
    title : str
        Heading of the summary.
    ignored : int, default=0
        Test rows left out for their missing class: Weka's "Ignored Class Unknown
        Instances", printed after the total when there are any.
    """
    rows = summary_rows(report)
    if ignored:
        rows.append(("Ignored class unknown instances", str(ignored)))
    out = [safe_text(title, style="bold"), _measure_table(rows)]
    if hasattr(report, "confusion"):
        out += per_class_renderables(report)
    return out


def per_class_renderables(report) -> list:
    """Headings and tables of the per-class figures and the confusion matrix."""
    return [safe_text("Detailed accuracy by class", style="bold"), per_class_table(report),
            safe_text("Confusion matrix (rows: actual class; columns: classified as)",
                      style="bold"), confusion_table(report)]


def per_class_table(report):
    """Weka's "Detailed accuracy by class": one row per class, then the weighted average."""
    from rich.table import Table

    table = Table()
    for _, heading in PER_CLASS_COLUMNS:
        table.add_column(heading, justify="right")
    table.add_column("Class")
    for k, name in enumerate(report.class_names):
        table.add_row(*(_cell(report.per_class[key][k]) for key, _ in PER_CLASS_COLUMNS),
                      safe_text(name))
    table.add_row(*(_cell(report.weighted[key]) for key, _ in PER_CLASS_COLUMNS),
                  "Weighted avg.", style="bold")
    return table


def confusion_table(report):
    """The confusion matrix: actual classes in rows, predicted in columns (headed a, b, ...
    as Weka's), each row named ``a = class``."""
    from rich.table import Table

    letters = _letters(len(report.class_names))
    table = Table()
    for letter in letters:
        table.add_column(letter, justify="right")
    table.add_column("actual class")
    for k, name in enumerate(report.class_names):
        table.add_row(*(str(int(v)) for v in report.confusion[k]),
                      safe_text(f"{letters[k]} = {printable(name)}"))
    return table


def evaluation_renderables(result) -> list:
    """A model scored on a test set (``evaluate`` with a model, ``--test`` or
    ``--split-percentage``): Weka's report, or the scores of a clusterer.

    Parameters
    ----------
    result : ensemblekit.results.ModelEvaluation
    """
    sizes = (f"{result.train_instances} training, " if result.train_instances is not None
             else "") + f"{result.instances} test instances"
    title = f"{result.algorithm}: {result.protocol} ({sizes})"
    if result.report is None:
        return [metrics_table(result.scores, title)]
    return report_renderables(result.report, title, result.ignored)


def cross_validation_renderables(result) -> list:
    """``evaluate ALGO DATA`` by cross-validation: every measure as mean ± sd over the
    folds, then Weka's per-class table and confusion matrix of the out-of-fold
    predictions of every repeat pooled.

    Parameters
    ----------
    result : ensemblekit.results.Comparison
        With ``pooled`` reports.
    """
    from rich.table import Table

    from ensemblekit.metrics import metric_spec

    out = []
    heading = protocol_text(result.protocol, result.task)
    for dataset in result.datasets:
        for label in result.labels:
            out.append(safe_text(f"{label} on {dataset}: {heading}", style="bold"))
            table = Table()
            table.add_column("measure")
            table.add_column("mean", justify="right")
            table.add_column("sd", justify="right")
            for m in result.metrics:
                cell = result.summary.get((dataset, label, m))
                if cell is not None and (dataset, label) not in result.failed:
                    table.add_row(metric_spec(m).display_name, fmt(cell[0]), fmt(cell[1]))
            out.append(table)
            report = result.pooled.get((dataset, label))
            if report is not None and hasattr(report, "confusion"):
                repeats = result.protocol.repeats
                pooled = ("out-of-fold predictions pooled" if repeats == 1 else
                          f"out-of-fold predictions of {repeats} repeats pooled (each instance "
                          f"counted {repeats} times)")
                out.append(safe_text(f"{label} on {dataset}, {pooled}:", style="bold"))
                if report.cost is not None:
                    out.append(_measure_table(cost_rows(report)))
                out.extend(per_class_renderables(report))
    return out + tuned_lines(result.chosen, result.protocol.kind)


# --------------------------------------------------------------------------- model descriptions
# ``show`` describes a model as plain blocks (:mod:`ensemblekit.description`): a terminal
# gets them as rich renderables (:func:`block_renderable`), a pipe or a file as plain lines.
@dataclass(frozen=True)
class Fields:
    """Named values, one a line, the names in a column of their own (a model's metadata).

    Attributes
    ----------
    rows : tuple of (str, str)
        ``(name, value)``, both printable text (see :func:`printable`).
    """

    rows: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Lines:
    """Printable text shown as it stands.

    Attributes
    ----------
    text : str
        One or more lines, without a final newline.
    fold : bool
        Whether a terminal may fold a line longer than its width; False for text whose
        lines must stay whole (a tree as J48 prints it). Plain output never folds.
    """

    text: str
    fold: bool = True


@dataclass(frozen=True)
class Columns:
    """A titled table of printable text cells.

    Attributes
    ----------
    title : str
    headers : tuple of str
        One per column.
    right : tuple of bool
        Per column: aligned to the right (numbers) or the left.
    rows : tuple of tuple of str
        Each as long as ``headers``.
    lead : int
        The first ``lead`` rows are set apart from the others (the prototypes' training
        sizes above their coordinates), their first cell in italics on a terminal.
    """

    title: str
    headers: tuple[str, ...]
    right: tuple[bool, ...]
    rows: tuple[tuple[str, ...], ...]
    lead: int = 0


def prototype_columns(centers, feature_names: Sequence[str], sizes: Sequence[int],
                      title: str) -> Columns:
    """Cluster prototypes as a table: one column per cluster, one row per feature.

    Features go down the rows so that data with many (one-hot) columns stays
    readable in a terminal. The first row holds the training sizes.

    Parameters
    ----------
    centers : array of shape (n_clusters, n_features)
    feature_names : sequence of str, length n_features
    sizes : sequence of int, length n_clusters
        Number of training instances in each cluster.
    title : str
    """
    k = len(centers)
    rows = [("size", *(str(int(n)) for n in sizes))]
    rows += [(printable(name), *(f"{row[j]:.4g}" for row in centers))
             for j, name in enumerate(feature_names)]
    return Columns(printable(title), ("feature", *(f"cluster {c}" for c in range(k))),
                   (False,) + (True,) * k, tuple(rows), lead=1)


def prototypes_table(centers, feature_names: Sequence[str], sizes: Sequence[int], title: str):
    """Rich table of cluster prototypes (see :func:`prototype_columns`)."""
    return block_renderable(prototype_columns(centers, feature_names, sizes, title))


def block_renderable(block):
    """A rich renderable of a :class:`Fields`, :class:`Lines` or :class:`Columns` block (any
    other object is one already), as a terminal shows it.

    Parameters
    ----------
    block : Fields, Lines, Columns or a rich renderable

    Returns
    -------
    rich renderable
        Fields: a grid, the names two spaces left of the values; Lines: a ``Text`` (not
        folded when ``fold`` is False); Columns: a table under its title, a rule after the
        lead rows, whose first cells are in italics.
    """
    from rich.table import Table
    from rich.text import Text

    if isinstance(block, Fields):
        grid = Table.grid(padding=(0, 2))
        for key, value in block.rows:
            grid.add_row(key, Text(value))
        return grid
    if isinstance(block, Lines):
        return Text(block.text) if block.fold else Text(block.text, no_wrap=True,
                                                         overflow="ignore")
    if not isinstance(block, Columns):
        return block
    table = Table(title=Text(block.title, style="table.title"), title_justify="left")
    for header, flush_right in zip(block.headers, block.right):
        table.add_column(header, justify="right" if flush_right else "left")
    for k, row in enumerate(block.rows):
        if k == block.lead and k > 0:
            table.add_section()
        first = Text(row[0])
        if k < block.lead:
            first.stylize("italic")  # the text, not the padding of its cell
        table.add_row(first, *(Text(cell) for cell in row[1:]))
    return table


# --------------------------------------------------------------------------- clustering validity
#: How ``cluster`` names the graph partitioner a consensus function used.
PARTITIONER_TEXT = {
    "metis": "METIS (pymetis)",
    "spectral": "spectral clustering (scikit-learn; pymetis not used)",
    "kahypar": "KaHyPar (kahypar)",
}


def clustering_renderables(result) -> list:
    """Rich renderables of one clustering: prototypes (or sizes), then the validity indices.

    Parameters
    ----------
    result : ensemblekit.results.Clustering
    """
    heading = f"{result.algorithm} on {result.dataset}: {len(result.sizes)} " + (
        "prototypes" if result.prototypes is not None else "clusters")
    if result.members is not None:
        heading += f", {result.members} members"
    elif result.iterations is not None:
        heading += f" ({result.iterations} iterations)"
    elif result.rules is not None:
        heading += f" ({result.rules} rules" + ("" if result.targets is None else
                                               f"; targets {', '.join(result.targets)}") + ")"
    out: list = [prototypes_table(result.prototypes, result.feature_names, result.sizes, heading)
                 if result.prototypes is not None else cluster_sizes_table(result.sizes, heading)]
    if result.external:
        out.append(validity_table(result.external, "external indices: agreement with class "
                                                   f"'{result.class_name}'"))
    if result.internal:
        out.append(validity_table(result.internal, "internal indices (Euclidean, on the "
                                                   "clustered attributes)"))
    return out


def cluster_sizes_table(sizes: Sequence[int], title: str):
    """Rich table of cluster sizes, for clusterers without prototypes (e.g. DIANA).

    Parameters
    ----------
    sizes : sequence of int
        Number of instances in each cluster, in cluster order.
    title : str
    """
    from rich.console import Group
    from rich.table import Table

    table = Table()
    table.add_column("cluster", justify="right")
    table.add_column("size", justify="right")
    for k, n in enumerate(sizes):
        table.add_row(str(k), str(int(n)))
    return Group(safe_text(title), table)  # a title above, not wrapped to the narrow table


def validity_table(values: dict[str, float], title: str):
    """A heading and a rich table ``index | value | better``, for clustering validity indices.

    Parameters
    ----------
    values : dict
        ``{metric name: value}`` (names from :data:`ensemblekit.metrics.METRICS`).
    title : str

    Returns
    -------
    rich.console.Group
        The ``better`` column says whether higher or lower values are better.
    """
    from rich.console import Group
    from rich.table import Table

    from ensemblekit.metrics import metric_spec

    table = Table()
    table.add_column("index")
    table.add_column("value", justify="right")
    table.add_column("better")
    for name, v in values.items():
        info = metric_spec(name)
        table.add_row(info.display_name, fmt(v), "higher" if info.greater_is_better else "lower")
    return Group(safe_text(title, style="bold"), table)


def k_selection_table(ks: Sequence[int], values: dict[str, Sequence[float]], best: dict[str, int | None],
                      title: str):
    """Internal indices for every number of clusters, the best k of each index marked.

    The layout of the rule-ensembles paper's Example 8 (Akdemir & Jannink
    2014, Table 7): one row per k, one column per index.

    Parameters
    ----------
    ks : sequence of int
        Numbers of clusters, in row order.
    values : dict
        ``{metric name: [value at each k]}`` (NaN: not computable at that k).
    best : dict
        ``{metric name: best k or None}``.
    title : str

    Returns
    -------
    list
        A heading, the table (best value of each column bold and starred) and
        a line naming the best k of each index.
    """
    import math

    from rich.table import Table
    from rich.text import Text

    from ensemblekit.metrics import metric_spec

    table = Table()
    table.add_column("k", justify="right")
    for name in values:
        arrow = "↑" if metric_spec(name).greater_is_better else "↓"
        table.add_column(f"{metric_spec(name).display_name} {arrow}", justify="right")
    for row, k in enumerate(ks):
        cells = []
        for name, column in values.items():
            v = column[row]
            text = "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt(v)
            cells.append(f"[bold]{text} *[/bold]" if best.get(name) == k else text)
        table.add_row(str(k), *cells)
    summary = "; ".join(f"{metric_spec(n).display_name}: k = {best[n] if best[n] is not None else '-'}"
                        for n in values)
    return [safe_text(title, style="bold"), table,
            Text(f"best k per index (* above; ↑ higher is better, ↓ lower): {summary}")]
