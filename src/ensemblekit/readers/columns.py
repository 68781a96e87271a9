"""Column types given on request (``--nominal 1,3-5``): which CSV columns, read as what.

A CSV reader guesses each column's kind from its cells; Weka's ``CSVLoader``
lets the user say it instead (``-N`` nominal, ``-S`` string, ``-D`` date,
``-R`` numeric), naming columns by 1-based position and range. The same lists
are read here, with attribute names allowed too:

- ``3``, ``first``, ``last``: one column by position (1-based);
- ``2-4``, ``first-3``, ``5-last``: a range of positions, both ends included;
- anything else: a column name, matched exactly, else case-insensitively when
  only one name matches (``Year`` finds ``year``), else refused with the closest
  name ("did you mean").

Items are separated by commas, and an option may be given more than once. A
date request is ``COLS`` or ``COLS:FORMAT``, the format a Java
``SimpleDateFormat`` pattern (:mod:`ensemblekit.readers.dates`); the first
``:`` ends the columns, so a format may hold more colons (``HH:mm``). Positions
count the columns as they are read: a pandas index column that the reader
leaves out is not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ensemblekit.dataset import DataError, quote_names
from ensemblekit.errors import InputError
from ensemblekit.names import did_you_mean, resolve
from ensemblekit.readers.dates import DEFAULT_DATE_FORMAT, DateFormat

__all__ = ["KINDS", "ColumnType", "TypeRequest", "resolve_types", "type_requests"]

#: The kinds a column can be given, in the order their options are listed.
KINDS = ("nominal", "numeric", "string", "date")

_POSITION = r"(?:\d+|first|last)"
_RANGE = re.compile(rf"({_POSITION})(?:-({_POSITION}))?", re.IGNORECASE)


@dataclass(frozen=True)
class ColumnType:
    """The kind a column was given, and a date column's pattern.

    Attributes
    ----------
    kind : {"nominal", "numeric", "string", "date"}
    date_format : str or None
        The Java date pattern of a date column; None otherwise.
    option : str
        The option that gave it (``"--nominal"``), for messages.
    """

    kind: str
    date_format: str | None
    option: str


@dataclass(frozen=True)
class TypeRequest:
    """One list of columns given one kind (one ``--nominal``/... value, parsed).

    Attributes
    ----------
    kind : {"nominal", "numeric", "string", "date"}
    items : tuple of str
        The positions, ranges and names as written, stripped.
    date_format : str or None
        For a date request, the pattern (Weka's default when none is given).
    """

    kind: str
    items: tuple[str, ...]
    date_format: str | None = None

    @property
    def option(self) -> str:
        """The command-line option of the request (``--nominal``)."""
        return f"--{self.kind}"

    @property
    def shown(self) -> str:
        """The request as it would be written on the command line."""
        cols = ",".join(self.items)
        if self.kind == "date" and self.date_format != DEFAULT_DATE_FORMAT:
            cols += f":{self.date_format}"
        return f"{self.option} {cols}"


def type_requests(*, nominal: Iterable[str] | str = (), numeric: Iterable[str] | str = (),
                  string: Iterable[str] | str = (), date: Iterable[str] | str = ()
                  ) -> tuple[TypeRequest, ...]:
    """Parse the column lists of ``--nominal``, ``--numeric``, ``--string`` and ``--date``.

    Parameters
    ----------
    nominal, numeric, string : str or iterable of str
        Column lists (``"1,3-5"``, ``"year"``); an int is a 1-based position.
    date : str or iterable of str
        ``COLS`` or ``COLS:FORMAT`` each; the default format is Weka's
        ``yyyy-MM-dd'T'HH:mm:ss``.

    Returns
    -------
    tuple of TypeRequest
        One per value given, in the order of the parameters.

    Raises
    ------
    InputError
        An empty item (``"1,,3"``), a reversed range (``"5-3"``), position 0, or
        a date format that is not a Java pattern read here.
    """
    out = []
    for kind, given in zip(KINDS, (nominal, numeric, string, date)):
        if isinstance(given, (str, int)):
            given = (given,)
        for value in given:
            text = str(value)
            fmt = None
            if kind == "date":
                text, colon, fmt = text.partition(":")
                fmt = fmt if colon and fmt else DEFAULT_DATE_FORMAT
                DateFormat(fmt)  # a bad pattern is refused before any file is read
            items = tuple(item.strip() for item in text.split(","))
            for item in items:
                _check_item(item, kind, value)
            out.append(TypeRequest(kind, items, fmt))
    return tuple(out)


def _check_item(item: str, kind: str, value) -> None:
    if not item:
        raise InputError(f"--{kind} {value}: an empty column in the list")
    match = _RANGE.fullmatch(item)
    if match is None:
        return  # a name, checked against the file's columns
    lo, hi = match.group(1).lower(), (match.group(2) or match.group(1)).lower()
    if any(end.isdigit() and int(end) == 0 for end in (lo, hi)):
        raise InputError(f"--{kind} {value}: positions start at 1 (as Weka's), not 0")
    order = {"first": 0, "last": 2}
    if (lo.isdigit() and hi.isdigit() and int(lo) > int(hi)) or order.get(lo, 1) > order.get(hi, 1):
        raise InputError(f"--{kind} {value}: the range {item!r} runs backwards; write it low-high")


def _positions(item: str, names: Sequence[str]) -> list[int] | None:
    """0-based positions of a position or range item; None when ``item`` is a name."""
    match = _RANGE.fullmatch(item)
    if match is None:
        return None
    m = len(names)

    def at(text: str) -> int:
        text = text.lower()
        return 1 if text == "first" else m if text == "last" else int(text)

    lo, hi = at(match.group(1)), at(match.group(2) or match.group(1))
    if hi > m or lo > m:
        return [-1, max(lo, hi)]  # out of range, reported by the caller
    return list(range(lo - 1, hi))


def resolve_types(requests: Sequence[TypeRequest], names: Sequence[str], src: str
                  ) -> list[ColumnType | None]:
    """The kind each column was given, from the requests and the columns' names.

    Parameters
    ----------
    requests : sequence of TypeRequest
        As :func:`type_requests` returns them.
    names : sequence of str
        The columns' names, in file order.
    src : str
        The input as shown in messages.

    Returns
    -------
    list of ColumnType or None
        One per column: the kind given, or None where the reader guesses.

    Raises
    ------
    DataError
        A position past the last column, a name no column has (with the closest
        one), or a column given two different kinds.
    """
    out: list[ColumnType | None] = [None] * len(names)
    for request in requests:
        for item in request.items:
            positions = _positions(item, names)
            if positions is not None and positions[:1] == [-1]:
                raise DataError(f"{request.option} {item}: there are {len(names)} columns, so no "
                                f"column {positions[1]}", src)
            if positions is None:
                found = resolve(item, names)
                if found is None:
                    raise DataError(f"{request.option}: no column named {item!r}"
                                    f"{did_you_mean(item, names)}; columns are: "
                                    f"{quote_names(names, 50)}", src)
                positions = [list(names).index(found)]
            given = ColumnType(request.kind, request.date_format, request.option)
            for k in positions:
                before = out[k]
                if before is not None and before != given:
                    if before.kind == given.kind:
                        what = "two date formats"
                    else:
                        what = f"both {before.option} and {given.option}"
                    raise DataError(f"column {names[k]!r} is given {what}; give it one", src)
                out[k] = given
    return out
