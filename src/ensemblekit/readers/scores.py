"""Score files written by ``compare --output``, read back for ``ensemblekit analyse``.

The file is the long format of a comparison: one row per data set, algorithm, repeat,
fold and metric, with its value, the unit's seconds and, for a failed unit, its error
(metric ``-`` and no value). CSV files have a header row naming the columns; JSON files
are a list of objects with the same keys. A ``chosen`` column (``--tune``'s values,
``key=value`` joined by ``,``) is read when present.

Every row is checked before it is used: the columns, a repeat and fold that are whole
numbers >= 0, a value that is a number (``nan``, ``inf`` included) and, for a failure,
an error text. A file larger than :data:`MAX_CHARS` of text is refused, as is JSON
nested deeper than a list of flat objects.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence

from ensemblekit import safejson
from ensemblekit.dataset import DataError
from ensemblekit.readers.text import read_small_text

__all__ = ["read_scores"]

#: A scores file larger than this (in characters) is not read: a million units of work,
#: the bound of a comparison, with a few measures each.
MAX_CHARS = 512 << 20


def read_scores(path, columns: Sequence[str]) -> list[dict]:
    """Read a scores file (CSV or JSON by its name's ending).

    Parameters
    ----------
    path : str or os.PathLike
    columns : sequence of str
        The columns a scores file has, in order
        (:data:`ensemblekit.results.SCORE_COLUMNS`): ``dataset``, ``algorithm``,
        ``params``, ``repeat``, ``fold``, ``metric``, ``value``, ``seconds``, ``error``.

    Returns
    -------
    list of dict
        One per row, in file order: the columns, with ``repeat`` and ``fold`` as int,
        ``value`` as float (None for a failure), ``seconds`` as float or None,
        ``error`` as str or None, and ``chosen`` as a dict (empty when absent).

    Raises
    ------
    ensemblekit.dataset.DataError
        The file cannot be read, is too large, is not a scores file (another header,
        other keys), or a row is damaged; the message names the row.
    """
    text, src = read_small_text(path, MAX_CHARS, "a scores file")
    if str(path).lower().endswith(".json"):
        try:
            records = safejson.loads(text, max_depth=3)
        except ValueError as exc:
            raise DataError(f"not a scores file ({' '.join(str(exc).split())[:120]})",
                            src) from None
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise DataError("not a scores file: expected a list of records", src)
        rows = [(i + 1, {k: ("" if v is None else v) for k, v in r.items()})
                for i, r in enumerate(records)]
    else:
        reader = csv.reader(text.splitlines())
        header = next(reader, [])
        if header[:len(columns)] != list(columns) or header[len(columns):] not in ([], ["chosen"]):
            raise DataError("not a scores file: the header must be "
                            f"{','.join(columns)} (and chosen)", src)
        rows = []
        for number, cells in enumerate(reader, 2):
            if not cells:
                continue  # a blank line
            if len(cells) != len(header):
                raise DataError(f"row {number} has {len(cells)} cells, the header {len(header)}",
                                src)
            rows.append((number, dict(zip(header, cells))))
    if not rows:
        raise DataError("no scores", src)
    return [_row(number, row, columns, src) for number, row in rows]


def _row(number: int, row: dict, columns: Sequence[str], src: str) -> dict:
    """One row checked and typed (see :func:`read_scores`)."""
    where = f"row {number}"
    missing = [c for c in columns if c not in row]
    if missing:
        raise DataError(f"{where} has no {missing[0]}", src)
    out = {c: row[c] for c in columns}
    for c in ("dataset", "algorithm", "params", "metric", "error"):
        if not isinstance(out[c], str):
            raise DataError(f"{where}: {c} is not text", src)
    for c in ("repeat", "fold"):
        value = out[c]
        try:
            number_ = int(value) if isinstance(value, str) else value
        except ValueError:
            number_ = None
        if type(number_) is not int or number_ < 0 or (c == "repeat" and number_ < 1):
            raise DataError(f"{where}: {c} is {str(value)[:40]!r}, not a whole number "
                            f"{'>= 1' if c == 'repeat' else '>= 0'}", src)
        out[c] = number_
    out["error"] = out["error"] or None
    out["value"] = None if out["error"] else _number(out["value"], where, "value", src)
    seconds = out["seconds"]
    out["seconds"] = None if seconds in ("", None) else _number(seconds, where, "seconds", src)
    if not out["error"] and not out["metric"]:
        raise DataError(f"{where}: no metric", src)
    out["chosen"] = _chosen(row.get("chosen", ""), where, src)
    return out


def _number(value, where: str, name: str, src: str) -> float:
    if name == "value" and value == "":
        return math.nan  # a JSON file writes an undefined score as null
    if isinstance(value, bool):
        raise DataError(f"{where}: {name} is {value!r}, not a number", src)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{where}: {name} is {str(value)[:40]!r}, not a number", src) from None
    if name == "seconds" and not (math.isfinite(number) and number >= 0):
        raise DataError(f"{where}: seconds is {value!r}, not a finite number >= 0", src)
    return number


def _chosen(text, where: str, src: str) -> dict:
    """``key=value,key=value`` as a dict; a value that reads as JSON (a number) is one."""
    if not text:
        return {}
    if not isinstance(text, str):
        raise DataError(f"{where}: chosen is not text", src)
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise DataError(f"{where}: chosen holds {part[:40]!r}, not key=value", src)
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out
