"""Dates read as Weka reads them: a Java date pattern, milliseconds since the epoch.

Weka stores a date attribute as a number, the milliseconds since
1970-01-01T00:00:00 UTC, and reads its text with Java's ``SimpleDateFormat``
over the attribute's pattern (default ``yyyy-MM-dd'T'HH:mm:ss``), not lenient,
in the time zone of the Java machine that reads it (``Attribute.parseDate``,
``DateAttributeInfo``). :class:`DateFormat` does the same here, written from the
documented behaviour of that class:

- numeric fields take any number of digits, unless the next pattern item is a
  numeric field too (``yyyyMMdd``), when they take exactly as many digits as
  pattern letters;
- ``y``/``yy`` with exactly two digits reads the year within 80 years before
  and 20 years after today (Java's default century window); more letters, or
  another number of digits, read the year as written;
- ``MMM`` or more reads an English month name or its three-letter form, ``E``
  an English day name (which must be the date's day), ``a`` AM/PM, in any case;
- text after a complete date is ignored, as ``DateFormat.parse`` ignores it;
- a field out of its range (month 13, 30 February, hour 24 with ``HH``) is not a
  date, as a non-lenient ``SimpleDateFormat`` refuses it;
- without a zone in the text (``z``, ``Z`` or ``X``), a date is in the local time
  zone (the ``TZ`` environment variable, else the system's), as in Java; set
  ``TZ=UTC`` to read the same numbers on every machine. A local time that
  happens twice (clocks put back) is the later, standard time; one that never
  happens (clocks put forward) is not a date, as Java reads them.

The ARFF reader and the CSV reader (``--date``) both read dates through this
module.
"""

from __future__ import annotations

import datetime as _dt
import re

import numpy as np

from ensemblekit.errors import InputError

__all__ = ["DEFAULT_DATE_FORMAT", "DateFormat", "parse_date"]

#: Weka's pattern of a date attribute declared without one (ISO 8601, no zone).
DEFAULT_DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMERIC = "yMdDHkKhmsS"  # pattern letters read as numbers (M only when fewer than 3)
_TEXT = "EaMzZX"
_UNSUPPORTED = "GYwWFuL"
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _names(full: tuple[str, ...]) -> str:
    """Regex alternation of full names and their three-letter forms, longest first."""
    return "|".join(sorted({*full, *(n[:3] for n in full)}, key=len, reverse=True))


def _tokens(pattern: str) -> list[tuple[str, int] | str]:
    """The pattern as (letter, count) fields and literal strings; raises on a bad pattern."""
    out: list[tuple[str, int] | str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            end = pattern.find("'", i + 1)
            if end == i + 1:  # '' is one quote
                out.append("'")
                i += 2
                continue
            text = []
            j = i + 1
            while True:
                end = pattern.find("'", j)
                if end < 0:
                    raise InputError(f"date format {pattern!r}: a quote is not closed")
                text.append(pattern[j:end])
                if pattern[end + 1:end + 2] == "'":  # '' inside quotes
                    text.append("'")
                    j = end + 2
                    continue
                break
            out.append("".join(text))
            i = end + 1
        elif ch.isascii() and ch.isalpha():
            j = i
            while j < n and pattern[j] == ch:
                j += 1
            if ch in _UNSUPPORTED:
                raise InputError(f"date format {pattern!r}: pattern letter {ch!r} is not read here "
                                 "(supported: y M d D E a H k K h m s S z Z X)")
            if ch not in _NUMERIC + _TEXT:
                raise InputError(f"date format {pattern!r}: {ch!r} is not a pattern letter of "
                                 "Java's SimpleDateFormat; quote literal text ('T')")
            out.append((ch, j - i))
            i = j
        else:
            out.append(ch)
            i += 1
    return out


def _is_numeric(token) -> bool:
    return isinstance(token, tuple) and token[0] in _NUMERIC and not (token[0] == "M"
                                                                       and token[1] >= 3)


class DateFormat:
    """A Java ``SimpleDateFormat`` pattern, compiled once, that reads text into milliseconds.

    Parameters
    ----------
    pattern : str, default=DEFAULT_DATE_FORMAT
        Letters as in Java: ``y`` year, ``M`` month (``MMM`` a name), ``d`` day
        of the month, ``D`` day of the year, ``E`` day name, ``a`` AM/PM, ``H``
        hour 0-23, ``k`` 1-24, ``K`` 0-11, ``h`` 1-12, ``m`` minute, ``s``
        second, ``S`` millisecond, ``z``/``Z``/``X`` zone (``GMT``, ``UTC``,
        ``+0100``, ``+01:00``, ``+01``, ``Z``); ``'...'`` quotes literal text.

    Raises
    ------
    InputError
        The pattern has an unclosed quote, a letter Java does not know, or one
        read here (``G``, ``Y``, ``w``, ``W``, ``F``, ``u``, ``L``).

    Examples
    --------
    >>> DateFormat("yyyy-MM-dd HH:mm:ssX").parse("1970-01-02 00:00:01Z")
    86401000.0
    """

    def __init__(self, pattern: str = DEFAULT_DATE_FORMAT):
        self.pattern = pattern
        tokens = _tokens(pattern)
        parts, self._fields = [], []
        for k, token in enumerate(tokens):
            if isinstance(token, str):
                parts.append(re.escape(token))
                continue
            letter, count = token
            group = f"g{k}"
            self._fields.append((group, letter, count))
            if _is_numeric(token):
                abutting = k + 1 < len(tokens) and _is_numeric(tokens[k + 1])
                digits = f"\\d{{{count}}}" if abutting else "\\d+"
                parts.append(f"(?P<{group}>{digits})")
            elif letter == "M":
                parts.append(f"(?P<{group}>{_names(_MONTHS)})")
            elif letter == "E":
                parts.append(f"(?P<{group}>{_names(_DAYS)})")
            elif letter == "a":
                parts.append(f"(?P<{group}>am|pm)")
            else:  # a zone
                parts.append(f"(?P<{group}>z|(?:gmt|utc)?[+-]\\d{{1,2}}(?::?\\d{{2}})?|gmt|utc)")
        self._regex = re.compile("".join(parts), re.IGNORECASE | re.ASCII)
        today = _dt.date.today()
        self._century_start = today.year - 80  # Java's default two-digit year window

    def parse(self, text: str) -> float | None:
        """Milliseconds since 1970-01-01T00:00:00 UTC of ``text``; None when it is not a date.

        Parameters
        ----------
        text : str
            The value as written; text after a complete date is ignored.

        Returns
        -------
        float or None
            A whole number of milliseconds (negative before 1970).
        """
        match = self._regex.match(text)
        if match is None:
            return None
        got: dict[str, int] = {}
        zone = None
        weekday = None
        pm = None
        for group, letter, count in self._fields:
            value = match.group(group)
            if letter == "M" and count >= 3:
                got["M"] = _MONTHS.index(_full(value.lower(), _MONTHS)) + 1
            elif letter == "E":
                weekday = _DAYS.index(_full(value.lower(), _DAYS))
            elif letter == "a":
                pm = value.lower() == "pm"
            elif letter in "zZX":
                zone = _offset(value)
                if zone is None:
                    return None
            elif letter == "y":
                year = int(value)
                if count <= 2 and len(value) == 2:
                    year += self._century_start // 100 * 100
                    if year < self._century_start:
                        year += 100
                got["y"] = year
            else:
                got[letter] = int(value)
        return self._millis(got, weekday, pm, zone)

    def _millis(self, got: dict[str, int], weekday, pm, zone) -> float | None:
        hour = 0
        if "H" in got:
            hour = got["H"]
            if hour > 23:
                return None
        elif "k" in got:
            if not 1 <= got["k"] <= 24:
                return None
            hour = got["k"] % 24
        elif "K" in got or "h" in got:
            if "K" in got:
                hour = got["K"]
                if hour > 11:
                    return None
            else:
                if not 1 <= got["h"] <= 12:
                    return None
                hour = got["h"] % 12
            hour += 12 if pm else 0
        minute, second, milli = got.get("m", 0), got.get("s", 0), got.get("S", 0)
        if minute > 59 or second > 59 or milli > 999:
            return None
        year = got.get("y", 1970)
        try:
            if "D" in got and "M" not in got and "d" not in got:
                day = _dt.date(year, 1, 1) + _dt.timedelta(days=got["D"] - 1)
                if day.year != year or got["D"] < 1:
                    return None
            else:
                day = _dt.date(year, got.get("M", 1), got.get("d", 1))
            when = _dt.datetime(day.year, day.month, day.day, hour, minute, second)
        except (ValueError, OverflowError):
            return None
        if weekday is not None and when.weekday() != weekday:
            return None
        if zone is None:  # local time, as in Java's default zone
            try:
                # a time that happens twice (clocks put back) is read as standard time, the
                # later one; a time that never happens (clocks put forward) is not a date
                seconds = when.replace(fold=1).timestamp()
                if _dt.datetime.fromtimestamp(seconds) != when:
                    return None
            except (OverflowError, OSError, ValueError):
                return None
        else:
            seconds = (when.replace(tzinfo=_dt.timezone.utc) - _EPOCH).total_seconds() - zone
        return float(round(seconds) * 1000 + milli)

    def parse_many(self, values) -> tuple[np.ndarray, int]:
        """Milliseconds of each value (None for missing gives NaN), each distinct text read once.

        Returns
        -------
        millis : ndarray of float64, shape (n,)
            NaN for a missing value and for a value that is not a date.
        bad : int
            Position of the first value that is not a date, or -1.
        """
        seen: dict[str, float | None] = {}
        out = np.empty(len(values), dtype=np.float64)
        bad = -1
        for i, v in enumerate(values):
            if v is None:
                out[i] = np.nan
                continue
            ms = seen.get(v, False)
            if ms is False:
                ms = seen[v] = self.parse(v)
            if ms is None:
                out[i] = np.nan
                if bad < 0:
                    bad = i
            else:
                out[i] = ms
        return out, bad


def _full(value: str, names: tuple[str, ...]) -> str:
    return next(n for n in names if n == value or n[:3] == value)


def _offset(text: str) -> int | None:
    """Seconds east of UTC of a zone as written (``Z``, ``GMT``, ``+0100``, ``-08:00``)."""
    t = text.lower()
    for prefix in ("gmt", "utc"):
        if t.startswith(prefix):
            t = t[3:]
    if t in ("", "z"):
        return 0
    sign = -1 if t[0] == "-" else 1
    digits = t[1:].replace(":", "")
    hours, minutes = (digits[:-2], digits[-2:]) if len(digits) > 2 else (digits, "0")
    if int(hours) > 23 or int(minutes) > 59:
        return None
    return sign * (int(hours) * 3600 + int(minutes) * 60)


def parse_date(text: str, pattern: str = DEFAULT_DATE_FORMAT) -> float:
    """Read one date as Weka's ``Attribute.parseDate`` does: milliseconds since the epoch.

    Parameters
    ----------
    text : str
        The date as written.
    pattern : str, default=DEFAULT_DATE_FORMAT
        Java ``SimpleDateFormat`` pattern (see :class:`DateFormat`).

    Returns
    -------
    float
        Milliseconds since 1970-01-01T00:00:00 UTC, a whole number.

    Raises
    ------
    InputError
        ``text`` is not a date in ``pattern``, or the pattern is not one read here.

    Examples
    --------
    >>> parse_date("1970-01-01T00:00:01+0000", "yyyy-MM-dd'T'HH:mm:ssZ")
    1000.0
    """
    ms = DateFormat(pattern).parse(text)
    if ms is None:
        raise InputError(f"{text!r} is not a date in the format {pattern!r}")
    return ms
