"""Parsing JSON from untrusted files with a bound on nesting.

:func:`json.loads` recurses once per level of nesting, so a document of a few
hundred kilobytes of ``[`` ends in :class:`RecursionError` (or, in code that
walks the result recursively, later and elsewhere). Model files and resume
journals are parsed through :func:`loads`, which measures the nesting first
and refuses a document deeper than the caller allows.
"""

from __future__ import annotations

import json
import re

__all__ = ["nesting_depth", "loads"]

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
