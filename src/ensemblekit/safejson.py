"""JSON that other programs can read, and JSON from untrusted files with a bound on nesting.

Writing: Python's :func:`json.dumps` writes a non-finite float as the bare words
``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON (RFC 8259, section 6)
and which ``jq``, JavaScript's ``JSON.parse`` and strict parsers refuse. Every
document the command line prints or writes goes through :func:`plain` (or
:func:`dumps`), which gives ``null`` for them instead and turns numpy arrays and
scalars into Python lists and numbers.

Reading: :func:`json.loads` recurses once per level of nesting, so a document of a few
hundred kilobytes of ``[`` ends in :class:`RecursionError` (or, in code that
walks the result recursively, later and elsewhere). Model files and resume
journals are parsed through :func:`loads`, which measures the nesting first
and refuses a document deeper than the caller allows.

numpy is not imported here, so the command line can use this module without it.
"""

from __future__ import annotations

import json
import math
import re

__all__ = ["plain", "dumps", "nesting_depth", "loads"]


def plain(value):
    """``value`` as plain JSON data: non-finite floats become None, numpy values Python ones.

    Parameters
    ----------
    value : object
        Nested dicts, lists and tuples of numbers, strings, booleans, None,
        numpy scalars and numpy arrays.

    Returns
    -------
    object
        The same structure with tuples and arrays as lists, numpy scalars as
        Python numbers, and NaN, +inf and -inf as None. Dict keys are kept.
        Anything else is returned unchanged (:func:`json.dumps` then refuses it).
    """
    if isinstance(value, float):  # numpy.float64 included
        if not math.isfinite(value):
            return None
        return value if type(value) is float else float(value)
    if value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):  # arrays and scalars
        return plain(value.tolist())
    return value


def dumps(value, **kwargs) -> str:
    """:func:`json.dumps` of :func:`plain` ``(value)``: valid JSON, never ``NaN`` or ``Infinity``.

    Parameters
    ----------
    value : object
        See :func:`plain`.
    **kwargs
        Passed to :func:`json.dumps` (``indent``, ``sort_keys``, ...).

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``value`` holds an object JSON cannot represent.
    """
    return json.dumps(plain(value), allow_nan=False, **kwargs)

# A JSON string: quote, then any run of non-quote non-backslash characters or
# escape pairs, then a quote. Both alternatives consume at least one
# character and cannot overlap, so the scan is linear.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in a JSON text.

    Brackets inside strings do not count. The text need not be valid JSON:
    unbalanced brackets give the deepest level reached while scanning.

    Parameters
    ----------
    text : str
        A JSON document.

    Returns
    -------
    int
        0 for a scalar, 1 for ``[1, 2]`` or ``{"a": 1}``, 2 for ``[[1]]``, ...
    """
    depth = peak = 0
    for char in re.sub(r"[^\[\]{}]", "", _STRING.sub("", text)):
        depth += _BRACKETS[char]
        if depth > peak:
            peak = depth
    return peak


def loads(text: str, *, max_depth: int):
    """Parse a JSON text whose nesting is at most ``max_depth`` levels.

    Parameters
    ----------
    text : str
        The document.
    max_depth : int
        The deepest nesting accepted (see :func:`nesting_depth`); must stay
        well below the interpreter's recursion limit (1000 by default).

    Returns
    -------
    object
        The parsed value.

    Raises
    ------
    ValueError
        If the text is nested deeper than ``max_depth`` (the message gives
        both depths) or is not valid JSON (:class:`json.JSONDecodeError`, a
        subclass of ValueError, with line and column).
    """
    depth = nesting_depth(text)
    if depth > max_depth:
        raise ValueError(f"JSON nested {depth} levels deep (at most {max_depth} accepted)")
    return json.loads(text)
