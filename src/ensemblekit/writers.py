"""Machine formats: prediction rows, score CSV, similarity CSV and JSON documents as text.

Each function here turns plain data (the rows and records of
:mod:`ensemblekit.results`) into the exact text a program reads back: CSV, TSV,
JSON, JSON lines or ARFF. The text is the same on every run and platform for the
same input, byte for byte; numbers are written so that they read back as the
same float64 (``repr``), or with a fixed number of decimals where the format
says so. Nothing here writes a file or a stream; the command line sends the
text where it goes (:mod:`ensemblekit.cli_io`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from ensemblekit import safejson
from ensemblekit.errors import InputError
from ensemblekit.results import SCORE_COLUMNS, prediction_rows, score_records

#: The formats ``predict --format`` writes.
OUTPUT_FORMATS = ("csv", "tsv", "json", "jsonl", "arff")


def to_json(document: Any, *, sort_keys: bool = False) -> str:
    """``document`` as the command line prints it: indented JSON, then a newline.

    Every ``--format json`` document goes through here. NaN and infinities are
    written as ``null`` (bare ``NaN`` is not JSON), numpy scalars and arrays as
    Python numbers and lists (:func:`ensemblekit.safejson.plain`).

    Parameters
    ----------
    document : object
        Plain data (dicts, lists, numbers, strings), as ``to_dict()`` gives.
    sort_keys : bool, default False
        Write each object's keys in sorted order.

    Raises
    ------
    TypeError
        If the document holds an object JSON cannot represent.
    """
    return safejson.dumps(document, indent=1, sort_keys=sort_keys) + "\n"


def format_prediction_stream(chunks, fmt_name: str):
    """Render chunks of predictions piece by piece, as :func:`format_predictions` renders them whole.

    Parameters
    ----------
    chunks : iterable of ensemblekit.results.Prediction
        Consecutive chunks of one prediction (see
        :func:`ensemblekit.api.predict_chunks`), each with at least one row.
    fmt_name : {"csv", "tsv", "json", "jsonl", "arff"}

    Yields
    ------
    str
        One piece per chunk (the first with the header, or the opening ``[``
        of JSON), then, for JSON, the closing ``]``. Joined, the pieces are
        byte for byte the text :func:`format_predictions` gives for all the
        rows at once; rows are numbered across chunks.
    """
    start = 1
    head = None
    for p in chunks:
        if fmt_name in ("csv", "tsv"):
            if head is None:
                head = _delimited([p.columns], fmt_name)
                yield head
            text = _delimited_rows(p, start, "," if fmt_name == "csv" else "\t")
            start += len(p.predictions)
            yield text
            continue
        rows = prediction_rows(p.predictions, p.probabilities, p.classes, start=start)
        if p.extras:
            rows = [[*row, *cells] for row, cells in zip(rows, zip(*p.extras.values()))]
        start += len(rows)
        options = {"prediction_values": p.prediction_values,
                   "numeric_prediction": p.task == "regression", "text_columns": len(p.extras)}
        text = format_predictions(rows, p.columns, fmt_name, **options)
        if fmt_name == "json":  # "[\n" + items + "\n]\n": the items go out, joined by ",\n"
            yield ("[\n" if head is None else ",\n") + text[2:-3]
            head = ""
        elif head is None:
            head = format_predictions([], p.columns, fmt_name, **options)
            yield text
        else:
            yield text[len(head):]
    if fmt_name == "json" and head is not None:
        yield "\n]\n"


def _delimited(rows, fmt_name: str) -> str:
    """Rows of text fields as the csv module writes them (quoted where a field needs it)."""
    buf = io.StringIO()
    csv.writer(buf, delimiter="," if fmt_name == "csv" else "\t", lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _delimited_rows(p, start: int, delimiter: str) -> str:
    """The CSV or TSV lines of a chunk of predictions, numbered from ``start``, as
    :func:`format_predictions` writes them, a column at a time: each distinct
    prediction is quoted once, and the numbers are formatted by ``map`` without a
    Python loop per row."""
    import numpy as np

    n = len(p.predictions)
    if not n:
        return ""
    fmt = "csv" if delimiter == "," else "tsv"
    columns = [map(str, range(start, start + n))]
    if p.task == "regression":
        values = np.asarray(p.predictions, dtype=np.float64)
        text = np.array(list(map(repr, values.tolist())), dtype=object)
        text[~np.isfinite(values)] = ""
        columns.append(text.tolist())
    else:
        # a second field, so that an empty value is written as in a row of several
        field = {v: _delimited([[v, "x"]], fmt)[:-3] for v in set(p.predictions)}
        columns.append(map(field.__getitem__, p.predictions))
    if p.probabilities is not None:
        proba = np.asarray(p.probabilities, dtype=np.float64)
        columns += [map("{:.6f}".format, proba[:, k].tolist()) for k in range(proba.shape[1])]
    for cells in p.extras.values():  # text, None where empty
        field = {v: "" if v is None else _delimited([[v, "x"]], fmt)[:-3] for v in set(cells)}
        columns.append(map(field.__getitem__, cells))
    return "\n".join(map(delimiter.join, zip(*columns))) + "\n"


def format_predictions(rows, columns: Sequence[str], fmt_name: str, *,
                       prediction_values: Sequence[str] = (), numeric_prediction: bool = False,
                       text_columns: int = 0) -> str:
    """Render prediction rows as CSV, TSV, JSON (array), JSON lines or ARFF.

    Parameters
    ----------
    rows : list of list
        From :func:`ensemblekit.results.prediction_rows`.
    columns : sequence of str
        Column names: ``row``, ``prediction`` and one per class probability.
    fmt_name : {"csv", "tsv", "json", "jsonl", "arff"}
    prediction_values : sequence of str
        Declared values of the prediction column (ARFF nominal header).
    numeric_prediction : bool, default=False
        The prediction column holds numbers (a regression model's predicted
        values): each is written in Python's shortest round-trip form
        (``repr(float(v))``, also what JSON gets), so the output is the same
        on every run and reads back as the same float64, and the ARFF header
        declares the column ``numeric``. A non-finite value is written as
        missing (an empty field, JSON ``null``, ARFF ``?``).
    text_columns : int, default=0
        The last ``text_columns`` columns hold text, a ``str`` or None per row
        (:attr:`ensemblekit.results.Prediction.extras`): written as they are,
        None as an empty field, JSON ``null`` or ARFF ``?``; ARFF declares them
        ``string``.

    Returns
    -------
    str
        The whole output, newline-terminated. Probabilities are printed with 6
        decimals so the output is identical across runs and platforms.

    Raises
    ------
    ValueError
        If ``fmt_name`` is not one of :data:`OUTPUT_FORMATS`.
    """
    import math

    def cell(v):
        return f"{v:.6f}" if isinstance(v, float) else v

    def value(v):  # a numeric prediction as a float, or None when missing
        v = float(v)
        return v if math.isfinite(v) else None

    if fmt_name in ("csv", "tsv"):
        def text_row(row):
            if not numeric_prediction:
                return [cell(v) for v in row]
            v = value(row[1])
            return [row[0], "" if v is None else repr(v), *(cell(p) for p in row[2:])]

        buf = io.StringIO()
        writer = csv.writer(buf, delimiter="," if fmt_name == "csv" else "\t", lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(text_row(row) for row in rows)
        return buf.getvalue()
    if fmt_name in ("json", "jsonl"):
        records = [
            {c: (round(v, 6) if isinstance(v, float) else v) for c, v in zip(columns, row)}
            for row in rows
        ]
        if numeric_prediction:
            for record, row in zip(records, rows):
                record[columns[1]] = value(row[1])  # json writes floats with repr
        if fmt_name == "jsonl":
            return "".join(safejson.dumps(r) + "\n" for r in records)
        return safejson.dumps(records, indent=1) + "\n"
    if fmt_name == "arff":
        from ensemblekit.dataset import Attribute
        from ensemblekit.readers.arff import write_arff

        if numeric_prediction:
            predicted = Attribute(columns[1], "numeric")
        else:
            predicted = Attribute(columns[1], "nominal", tuple(prediction_values))
        end = len(columns) - text_columns  # the probabilities are columns[2:end]
        attrs = [Attribute(columns[0], "numeric"), predicted]
        attrs += [Attribute(c, "numeric") for c in columns[2:end]]
        attrs += [Attribute(c, "string") for c in columns[end:]]
        buf = io.StringIO()
        write_arff(buf, "predictions", attrs,
                   ([row[0], value(row[1]) if numeric_prediction else row[1],
                     *(round(p, 6) for p in row[2:end]), *row[end:]] for row in rows))
        return buf.getvalue()
    raise InputError(f"unknown output format {fmt_name!r}; expected one of {', '.join(OUTPUT_FORMATS)}")


def predictions_csv(records) -> str:
    """Out-of-fold predictions as CSV (``compare --predictions-out``).

    Parameters
    ----------
    records : iterable of tuple
        In :data:`ensemblekit.results.PREDICTION_COLUMNS` order
        (:attr:`ensemblekit.results.Comparison.predictions`); None is written empty,
        floats with ``repr`` (exact round trip).

    Returns
    -------
    str
        A header line, then one line per record.
    """
    from ensemblekit.results import PREDICTION_COLUMNS

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(PREDICTION_COLUMNS)
    for record in records:
        writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v
                         for v in record])
    return buf.getvalue()


def scores_text(scores, failures, fmt_name: str, chosen: dict | None = None) -> str:
    """Per-unit scores in long format (one row per data set, algorithm, repeat, fold, metric).

    Parameters
    ----------
    scores : sequence of ensemblekit.experiment.Score
    failures : sequence of ensemblekit.experiment.Failure
        Written as rows with metric ``-``, no value, and the error text.
    fmt_name : {"csv", "json"}
    chosen : dict, optional
        ``--tune``: ``(dataset, algorithm, repeat, fold) -> {key: value}``; when not
        empty, a last column ``chosen`` holds that fold's values as ``key=value``
        (joined by ``,``; empty for an untuned algorithm or a failure).

    Returns
    -------
    str
        Values are printed with ``repr`` (exact round trip); ``seconds`` is the
        only column that differs between two runs with the same seed. The
        columns are :data:`ensemblekit.results.SCORE_COLUMNS`.

    Raises
    ------
    ValueError
        If ``fmt_name`` is neither ``"csv"`` nor ``"json"``.
    """
    records = score_records(scores, failures)
    if chosen:
        for r in records:
            point = chosen.get((r["dataset"], r["algorithm"], r["repeat"], r["fold"]), {})
            r["chosen"] = "" if r["error"] else ",".join(f"{k}={v}" for k, v in point.items())
    if fmt_name == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS + (("chosen",) if chosen else ()))
        for r in records:
            writer.writerow([*(r[c] for c in SCORE_COLUMNS[:6]),
                             "" if r["value"] is None else repr(float(r["value"])),
                             "" if r["seconds"] is None else r["seconds"], r["error"],
                             *((r["chosen"],) if chosen else ())])
        return buf.getvalue()
    if fmt_name == "json":
        return safejson.dumps(records, indent=1) + "\n"
    raise InputError(f"unknown scores format {fmt_name!r}; expected csv or json")


def similarity_csv(S) -> str:
    """A similarity matrix as CSV: header ``row,1..n``, then ``i,S_i1,...,S_in`` (repr floats).

    Parameters
    ----------
    S : ndarray of shape (n, n)
        Similarities between the rows, in row order.

    Returns
    -------
    str
        ``n + 1`` newline-terminated lines; rows and columns are numbered from 1.
    """
    return "".join(similarity_csv_parts([(0, S)]))


def similarity_csv_parts(blocks):
    """:func:`similarity_csv` piece by piece, from blocks of rows: the same text, joined.

    Parameters
    ----------
    blocks : iterable of (int, ndarray of shape (rows, n))
        ``(start, S[start:start + rows])`` in row order, as
        :meth:`ensemblekit.rules.isca.ISCA.similarity_blocks` yields them.

    Yields
    ------
    str
        The header line, then the lines of one block at a time.
    """
    header = False
    for start, block in blocks:
        if not header:
            yield "row," + ",".join(str(j) for j in range(1, block.shape[1] + 1)) + "\n"
            header = True
        yield "".join(f"{start + i + 1}," + ",".join(map(repr, row)) + "\n"
                      for i, row in enumerate(block.tolist()))


def curves_csv(report) -> str:
    """Each class's ROC and precision-recall points as CSV (``evaluate --curve-out``).

    The columns are ``class`` and :data:`ensemblekit.scores.curves.CURVE_COLUMNS`
    (Weka's ``ThresholdCurve`` figures under snake-case names): one row per point,
    class by class in code order, thresholds ascending, the last point of a class at
    threshold ``inf`` (nothing predicted positive). Counts are whole numbers, other
    figures ``repr`` floats (exact round trip), an undefined figure (Weka's ``?``)
    an empty field.

    Parameters
    ----------
    report : ensemblekit.scores.classification.ClassificationEvaluation
        Made with ``curves=True``.

    Returns
    -------
    str
    """
    from ensemblekit.scores.curves import CURVE_COLUMNS

    def cell(v: float) -> str:
        if v != v:
            return ""
        return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("class", *CURVE_COLUMNS))
    for name, curve in zip(report.class_names, report.curves, strict=True):
        writer.writerows((name, *(cell(float(v)) for v in row)) for row in curve.rows())
    return buf.getvalue()
