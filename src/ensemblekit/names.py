"""Matching a name a user typed against the names that exist: case, punctuation, typos.

Users type ``J48`` for ``j48``, ``c4.5`` for ``c45`` or ``Species`` for ``species``.
:func:`resolve` accepts a name that differs from exactly one known name only in
case; :func:`suggest` names the closest known name for an error message, as git
and pip do ("did you mean ...?"). Closeness is difflib's ratio (Ratcliff and
Obershelp's gestalt pattern matching, in the standard library) on the names folded
to lower case without punctuation, so that ``c4.5`` meets ``c45`` exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Least difflib ratio (in [0, 1]) for a known name to be suggested; difflib's default.
CUTOFF = 0.6


def _folded(name: str) -> str:
    """``name`` in lower case, without the characters that are not letters or digits."""
    return re.sub(r"[\W_]+", "", name.casefold())


def resolve(name: str, known: Iterable[str]) -> str | None:
    """The known name that ``name`` stands for: itself, or its only case-insensitive match.

    Parameters
    ----------
    name : str
        What the user typed.
    known : iterable of str
        The names that exist.

    Returns
    -------
    str or None
        ``name`` when it is known; else the one known name equal to it but for case
        (``J48`` -> ``j48``); None when there is none, or when several known names
        differ from it only by case (it is then ambiguous).
    """
    names = list(known)
    if name in names:
        return name
    same = [k for k in names if k.casefold() == name.casefold()]
    return same[0] if len(same) == 1 else None


def suggest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name``, for a "did you mean" hint, or None.

    Parameters
    ----------
    name : str
        A name that is not known.
    known : iterable of str
        The names that exist.

    Returns
    -------
    str or None
        The first known name whose folded form (lower case, letters and digits only)
        equals that of ``name``; else the known name with the highest difflib ratio
        of folded forms, at least :data:`CUTOFF` (the first in ``known`` on a tie);
        None when no name comes that close.

    Examples
    --------
    >>> suggest("c4.5", ["c45", "knn", "k2"])
    'c45'
    >>> suggest("specie", ["island", "species"])
    'species'
    >>> suggest("zzz", ["c45", "knn"]) is None
    True
    """
    import difflib  # only for an error message: not on the start-up path of predict

    names = list(known)
    folded = _folded(name)
    for k in names:
        if _folded(k) == folded:
            return k
    best, best_ratio = None, CUTOFF
    for k in names:
        ratio = difflib.SequenceMatcher(None, folded, _folded(k)).ratio()
        if ratio > best_ratio or (ratio == best_ratio and best is None):
            best, best_ratio = k, ratio
    return best


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'X'?)"`` for the closest known name X, or ``""`` when none is close."""
    hint = suggest(name, known)
    return "" if hint is None else f" (did you mean {hint!r}?)"
