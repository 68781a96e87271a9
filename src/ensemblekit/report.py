"""Everything the user reads: rich tables for people, CSV/TSV/JSON/ARFF for machines.

Functions here turn results into text or :mod:`rich` renderables; they do not
compute scores. Writing files goes through :func:`write_text_atomic`, so a failed
command never leaves a half-written output file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

OUTPUT_FORMATS = ("csv", "tsv", "json", "jsonl", "arff")


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename.

    Raises
    ------
    OSError
        If the directory is not writable; no file is left behind.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual mode
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def fmt(x: float, digits: int = 4) -> str:
    """Fixed-point text of a score, the same on every platform."""
    return f"{x:.{digits}f}"


# --------------------------------------------------------------------------- predictions
def prediction_rows(predictions: Sequence[str], proba=None, classes: Sequence[str] = ()):
    """Rows ``[row, prediction, p_1, ...]`` with 1-based row numbers.

    Parameters
    ----------
    predictions : sequence of str, length n
    proba : array of shape (n, len(classes)) or None
    classes : sequence of str
    """
    rows = []
    for i, label in enumerate(predictions):
        row = [i + 1, label]
        if proba is not None:
            row.extend(float(p) for p in proba[i])
        rows.append(row)
    return rows


def format_predictions(rows, columns: Sequence[str], fmt_name: str, *,
                       prediction_values: Sequence[str] = ()) -> str:
    """Render prediction rows as CSV, TSV, JSON (array), JSON lines or ARFF.

    Parameters
    ----------
    rows : list of list
        From :func:`prediction_rows`.
    columns : sequence of str
        Column names: ``row``, ``prediction`` and one per class probability.
    fmt_name : {"csv", "tsv", "json", "jsonl", "arff"}
    prediction_values : sequence of str
        Declared values of the prediction column (ARFF nominal header).

    Returns
    -------
    str
        The whole output, newline-terminated. Probabilities are printed with 6
        decimals so the output is identical across runs and platforms.
    """
    def cell(v):
        return f"{v:.6f}" if isinstance(v, float) else v

    if fmt_name in ("csv", "tsv"):
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter="," if fmt_name == "csv" else "\t", lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([cell(v) for v in row] for row in rows)
        return buf.getvalue()
    if fmt_name in ("json", "jsonl"):
        records = [
            {c: (round(v, 6) if isinstance(v, float) else v) for c, v in zip(columns, row)}
            for row in rows
        ]
        if fmt_name == "jsonl":
            return "".join(json.dumps(r) + "\n" for r in records)
        return json.dumps(records, indent=1) + "\n"
    if fmt_name == "arff":
        from ensemblekit.data import Attribute, write_arff

        attrs = [Attribute(columns[0], "numeric"), Attribute(columns[1], "nominal", tuple(prediction_values))]
        attrs += [Attribute(c, "numeric") for c in columns[2:]]
        buf = io.StringIO()
        write_arff(buf, "predictions", attrs, ([row[0], row[1], *(round(p, 6) for p in row[2:])]
                                               for row in rows))
        return buf.getvalue()
    raise ValueError(f"unknown output format {fmt_name!r}; expected one of {', '.join(OUTPUT_FORMATS)}")


# --------------------------------------------------------------------------- scores
SCORE_COLUMNS = ("dataset", "algorithm", "params", "repeat", "fold", "metric", "value")


def scores_text(scores, fmt_name: str) -> str:
    """Per-unit scores in long format (one row per data set, algorithm, repeat, fold, metric).

    Parameters
    ----------
    scores : sequence of ensemblekit.experiment.Score
    fmt_name : {"csv", "json"}
    """
    rows = [[getattr(s, c) for c in SCORE_COLUMNS] for s in scores]
    if fmt_name == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        writer.writerows([*r[:-1], repr(float(r[-1]))] for r in rows)
        return buf.getvalue()
    if fmt_name == "json":
        return json.dumps([dict(zip(SCORE_COLUMNS, r)) for r in rows], indent=1) + "\n"
    raise ValueError(f"unknown scores format {fmt_name!r}; expected csv or json")


def comparison_tables(summary, ranks, datasets: Sequence[str], algorithms: Sequence[str],
                      metrics: Sequence[str], protocol_text: str):
    """One rich table per metric: rows data sets, columns algorithms, mean ± sd.

    Parameters
    ----------
    summary : dict
        ``{(dataset, algorithm, metric): (mean, sd, n)}`` from
        :func:`ensemblekit.experiment.summarize`.
    ranks : dict
        ``{metric: ndarray (n_algorithms,)}`` average ranks, or a metric missing
        when ranks cannot be computed.
    datasets, algorithms, metrics : sequences of str
        Row, column and table order.
    protocol_text : str
        Caption, e.g. ``"10x10 stratified CV, seed 1"``.

    Returns
    -------
    list
        For each metric a heading (rich Text) and a table. The best mean of each
        row is bold; the last row holds the average ranks (1 = best).
    """
    from rich.table import Table
    from rich.text import Text

    from ensemblekit.metrics import METRICS

    tables = []
    for metric in metrics:
        info = METRICS[metric]
        tables.append(Text(f"{info.label} (mean ± sd), {protocol_text}", style="bold"))
        table = Table()
        table.add_column("data set")
        for a in algorithms:
            table.add_column(a, justify="right")
        for d in datasets:
            means = [summary[(d, a, metric)][0] for a in algorithms]
            best = max(means) if info.greater_is_better else min(means)
            cells = []
            for a, m in zip(algorithms, means):
                _, sd, _ = summary[(d, a, metric)]
                text = f"{fmt(m)} ± {fmt(sd)}"
                cells.append(f"[bold]{text}[/bold]" if m == best else text)
            table.add_row(d, *cells)
        if metric in ranks:
            table.add_section()
            table.add_row("average rank", *(f"{r:.2f}" for r in ranks[metric]))
        tables.append(table)
    return tables


def comparison_json(summary, ranks, datasets, algorithms, metrics, protocol: dict) -> str:
    """The comparison table as JSON (for ``--format json``)."""
    out = {
        "protocol": protocol,
        "metrics": {},
    }
    for metric in metrics:
        rows = []
        for d in datasets:
            cells = {}
            for a in algorithms:
                mean, sd, n = summary[(d, a, metric)]
                cells[a] = {"mean": mean, "sd": sd, "n": n}
            rows.append({"dataset": d, "scores": cells})
        entry = {"rows": rows}
        if metric in ranks:
            entry["average_rank"] = dict(zip(algorithms, (float(r) for r in ranks[metric])))
        out["metrics"][metric] = entry
    return json.dumps(out, indent=1) + "\n"


# --------------------------------------------------------------------------- data sets
def schema_summary(ds) -> dict:
    """JSON-able description of a data set: attributes, types, missing counts, classes.

    Parameters
    ----------
    ds : ensemblekit.data.Dataset
    """
    import numpy as np

    attrs = []
    feature_pos = 0
    for index, a in enumerate(ds.schema.attributes):
        if index == ds.schema.class_index:
            col = ds.y.astype(float) if ds.y is not None else None
            if col is not None and a.kind == "nominal":
                col = np.where(ds.y < 0, np.nan, col)
            role = "class"
        else:
            col = ds.X[:, feature_pos]
            feature_pos += 1
            role = "feature"
        missing = int(np.isnan(col).sum()) if col is not None else 0
        entry = {"name": a.name, "type": a.kind, "role": role, "missing": missing}
        if a.kind == "numeric":
            present = col[~np.isnan(col)] if col is not None else np.array([])
            if present.size:
                entry.update(min=float(present.min()), max=float(present.max()),
                             mean=float(present.mean()))
        else:
            entry["values"] = len(a.values)
        attrs.append(entry)
    out = {
        "file": ds.source,
        "relation": ds.schema.relation,
        "instances": ds.n_instances,
        "attributes": attrs,
    }
    cls = ds.schema.class_attribute
    if cls is not None and cls.kind == "nominal":
        counts = np.bincount(ds.y[ds.y >= 0], minlength=len(cls.values))
        out["class"] = {"name": cls.name, "counts": dict(zip(cls.values, map(int, counts)))}
    elif cls is not None:
        out["class"] = {"name": cls.name, "type": "numeric"}
    return out


def schema_tables(summary: dict):
    """Rich renderables for :func:`schema_summary` output."""
    from rich.table import Table

    head = Table.grid(padding=(0, 2))
    head.add_row("file", summary["file"])
    head.add_row("relation", summary["relation"])
    head.add_row("instances", str(summary["instances"]))
    attrs = Table(title="attributes", title_justify="left")
    for col in ("#", "name", "type", "role", "missing", "values / range"):
        attrs.add_column(col, justify="right" if col in ("#", "missing") else "left")
    for i, a in enumerate(summary["attributes"], 1):
        if a["type"] == "numeric":
            detail = f"{a['min']:.6g} .. {a['max']:.6g}" if "min" in a else "all missing"
        else:
            detail = f"{a['values']} values"
        attrs.add_row(str(i), a["name"], a["type"], a["role"], str(a["missing"]), detail)
    out = [head, attrs]
    cls = summary.get("class")
    if cls and "counts" in cls:
        ctable = Table(title=f"class '{cls['name']}'", title_justify="left")
        ctable.add_column("value")
        ctable.add_column("count", justify="right")
        for v, c in cls["counts"].items():
            ctable.add_row(v, str(c))
        out.append(ctable)
    return out


# --------------------------------------------------------------------------- algorithms, models
def algorithms_summary(specs: Iterable) -> list[dict]:
    """JSON-able registry listing: name, task, description, parameters, preprocessing."""
    return [
        {
            "name": s.name,
            "task": s.task,
            "description": s.description,
            "parameters": [
                {"name": p.name, "default": p.default, "values": p.describe_range(), "help": p.help}
                for p in s.params
            ],
            "preprocessing": s.preprocessing,
        }
        for s in specs
    ]


def algorithms_table(summary: list[dict]):
    """Rich table for :func:`algorithms_summary`."""
    from rich.table import Table

    table = Table(title="algorithms", title_justify="left", show_lines=True)
    for col in ("name", "task", "parameters (default)", "description"):
        table.add_column(col)
    for s in summary:
        params = "\n".join(f"{p['name']}={_plain(p['default'])}  [{p['values']}]" for p in s["parameters"])
        table.add_row(s["name"], s["task"], params,
                      f"{s['description']}\n[dim]{s['preprocessing']}[/dim]")
    return table


def _plain(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def prototypes_table(centers, feature_names: Sequence[str], sizes: Sequence[int], title: str):
    """Rich table of cluster prototypes: one column per cluster, one row per feature.

    Features go down the rows so that data with many (one-hot) columns stays
    readable in a terminal.

    Parameters
    ----------
    centers : array of shape (n_clusters, n_features)
    feature_names : sequence of str, length n_features
    sizes : sequence of int, length n_clusters
        Number of training instances in each cluster.
    """
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("feature")
    for k in range(len(centers)):
        table.add_column(f"cluster {k}", justify="right")
    table.add_row("[italic]size[/italic]", *(str(int(n)) for n in sizes))
    table.add_section()
    for j, name in enumerate(feature_names):
        table.add_row(name, *(f"{row[j]:.4g}" for row in centers))
    return table


def metrics_table(values: dict[str, float], title: str):
    """A heading and a two-column rich table ``metric | value``."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ensemblekit.metrics import METRICS

    table = Table()
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, v in values.items():
        label = METRICS[name].label if name in METRICS else name
        table.add_row(label, fmt(v))
    return Group(Text(title, style="bold"), table)


def model_description(model, metadata: dict, schema) -> list:
    """Rich renderables describing a saved model: its metadata, then what it learned.

    Parameters
    ----------
    model : sklearn.pipeline.Pipeline
        Fitted ``prep -> model`` pipeline from :func:`ensemblekit.persistence.load_model`.
    metadata : dict
        The model file's metadata.
    schema : ensemblekit.data.Schema
        Training schema (gives feature names).

    Returns
    -------
    list
        A metadata grid, then prototypes (clusterers), the tree as text (``c45``),
        or the number of stored instances (``knn``).
    """
    import numpy as np
    from rich.table import Table
    from rich.text import Text

    from ensemblekit.preprocessing import feature_names

    head = Table.grid(padding=(0, 2))
    train = metadata.get("training_data", {})
    params = ", ".join(f"{k}={_plain(v)}" for k, v in sorted(metadata.get("params", {}).items()))
    for key, value in (
        ("algorithm", f"{metadata['algorithm']} ({metadata['task']})"),
        ("parameters", params or "-"),
        ("seed", str(metadata.get("seed"))),
        ("trained on", f"{train.get('name')} ({train.get('instances')} instances)"),
        ("data fingerprint", str(train.get("fingerprint"))),
        ("ensemblekit", str(metadata.get("ensemblekit_version"))),
        ("file format", str(metadata.get("format_version"))),
    ):
        head.add_row(key, value)
    out: list = [head]
    estimator = model.named_steps["model"] if hasattr(model, "named_steps") else model
    names = feature_names(schema)
    if hasattr(estimator, "cluster_centers_"):
        centers = estimator.cluster_centers_
        labels = getattr(estimator, "labels_", None)
        sizes = (np.bincount(labels, minlength=len(centers)) if labels is not None
                 else np.zeros(len(centers), dtype=int))
        out.append(prototypes_table(centers, names, sizes, f"{len(centers)} prototypes (training sizes)"))
    elif hasattr(estimator, "tree_"):
        from sklearn.tree import export_text

        tree = estimator.tree_
        classes = [schema.class_attribute.values[int(c)] for c in estimator.classes_]
        out.append(Text(f"decision tree: {tree.get_n_leaves()} leaves, depth {tree.get_depth()}\n"
                        + export_text(tree, feature_names=names, class_names=classes, decimals=4)))
    elif hasattr(estimator, "n_samples_fit_"):
        out.append(Text(f"stores {estimator.n_samples_fit_} training instances "
                        f"({len(names)} encoded features)"))
    return out
