"""Dates read as Weka reads them (issue 32): Java date patterns into milliseconds since 1970.

Expected values are worked out by hand (days since 1970-01-01 times 86,400,000), and, where
Java is installed, compared with java.text.SimpleDateFormat itself (not lenient, the
setting of Weka's DateAttributeInfo) in the same time zone.
"""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from ensemblekit.errors import InputError
from ensemblekit.readers.dates import DEFAULT_DATE_FORMAT, DateFormat, parse_date

DAY = 86_400_000
# 2000-02-29: 30 years after 1970 with 7 leap days (1972 .. 1996), then 31 + 28 days
LEAP_DAY_2000 = (30 * 365 + 7 + 59) * DAY


@pytest.fixture
def zone(monkeypatch):
    """``zone("Europe/Berlin")`` makes that the local time zone for the test."""
    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()
    yield set_zone
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("text, pattern, expected", [
    ("1970-01-01T00:00:00", DEFAULT_DATE_FORMAT, 0),
    ("1969-12-31T23:59:59", DEFAULT_DATE_FORMAT, -1000),
    ("2000-02-29T12:00:00", DEFAULT_DATE_FORMAT, LEAP_DAY_2000 + 12 * 3_600_000),
    ("2000-02-29", "yyyy-MM-dd", LEAP_DAY_2000),
    ("20000229", "yyyyMMdd", LEAP_DAY_2000),          # abutting fields take their width
    ("2000-2-29", "yyyy-MM-dd", LEAP_DAY_2000),       # otherwise any number of digits
    ("29 Feb 2000", "dd MMM yyyy", LEAP_DAY_2000),
    ("Tuesday, 29 february 2000", "EEEE, d MMMM yyyy", LEAP_DAY_2000),
    ("2000-02-29T00:00:00.5", "yyyy-MM-dd'T'HH:mm:ss.S", LEAP_DAY_2000 + 5),  # S counts ms
    ("12:30 AM 2000-02-29", "hh:mm a yyyy-MM-dd", LEAP_DAY_2000 + 30 * 60_000),
    ("12:30 pm 2000-02-29", "hh:mm a yyyy-MM-dd", LEAP_DAY_2000 + 12.5 * 3_600_000),
    ("24:00 2000-02-29", "kk:mm yyyy-MM-dd", LEAP_DAY_2000),
    ("2000-02-29T01:00:00+0100", "yyyy-MM-dd'T'HH:mm:ssZ", LEAP_DAY_2000),
    ("2000-02-29T01:00:00+01:00", "yyyy-MM-dd'T'HH:mm:ssXXX", LEAP_DAY_2000),
    ("2000-02-28T23:00:00Z", "yyyy-MM-dd'T'HH:mm:ssX", LEAP_DAY_2000 - 3_600_000),
    ("2000-02-29 GMT-01:30", "yyyy-MM-dd z", LEAP_DAY_2000 + 90 * 60_000),
    ("it's 2000-02-29", "'it''s' yyyy-MM-dd", LEAP_DAY_2000),
    ("060", "DDD", 59 * DAY),                          # day of the year, 1970
    ("2000-02-29T00:00:00 and more", DEFAULT_DATE_FORMAT, LEAP_DAY_2000),  # as Java: rest ignored
])
def test_dates_read_into_milliseconds(zone, text, pattern, expected):
    zone("UTC")
    assert parse_date(text, pattern) == expected


@pytest.mark.parametrize("text, pattern", [
    ("2001-02-29", "yyyy-MM-dd"),   # no leap day in 2001: not lenient
    ("2000-13-01", "yyyy-MM-dd"),
    ("2000-02-29T24:00:00", DEFAULT_DATE_FORMAT),
    ("2000-02-29T10:60:00", DEFAULT_DATE_FORMAT),
    ("13:00 PM 2000-02-29", "hh:mm a yyyy-MM-dd"),
    ("Monday, 29 February 2000", "EEEE, d MMMM yyyy"),  # 29 February 2000 was a Tuesday
    ("2000-02-29", DEFAULT_DATE_FORMAT),                # the time is missing
    ("29/02/2000", "yyyy-MM-dd"),
    ("", "yyyy-MM-dd"),
])
def test_what_is_not_a_date_is_refused(zone, text, pattern):
    zone("UTC")
    assert DateFormat(pattern).parse(text) is None
    with pytest.raises(InputError, match=f"is not a date in the format {pattern!r}"):
        parse_date(text, pattern)


def test_a_date_without_a_zone_is_local_time_as_in_java(zone):
    zone("Europe/Berlin")
    assert parse_date("1970-01-01T01:00:00") == 0                       # CET, +1
    assert parse_date("2000-07-01T02:00:00") == (30 * 365 + 7 + 182) * DAY  # CEST, +2
    assert parse_date("2000-07-01T00:00:00Z", "yyyy-MM-dd'T'HH:mm:ssX") == (30 * 365 + 7 + 182) * DAY


def test_a_two_digit_year_falls_in_javas_century_window(zone):
    zone("UTC")
    start = time.gmtime().tm_year - 80  # Java: from 80 years ago to 20 years ahead
    low, high = start % 100, (start - 1) % 100
    assert time.gmtime(parse_date(f"{low:02d}-01-01", "yy-MM-dd") / 1000).tm_year == start
    assert time.gmtime(parse_date(f"{high:02d}-01-01", "yy-MM-dd") / 1000).tm_year == start + 99
    assert parse_date("0070-01-01", "yy-MM-dd") == parse_date("0070-01-01", "yyyy-MM-dd")


@pytest.mark.parametrize("pattern, message", [
    ("yyyy-MM-ddTHH", "'T' is not a pattern letter of Java's SimpleDateFormat; quote literal"),
    ("yyyy-ww", "pattern letter 'w' is not read here"),
    ("yyyy-MM-dd'T", "a quote is not closed"),
])
def test_bad_patterns_are_refused_when_compiled(pattern, message):
    with pytest.raises(InputError, match=message):
        DateFormat(pattern)


JAVA_CASES = [
    ("2000-02-29T12:34:56", DEFAULT_DATE_FORMAT),
    ("1969-07-20T20:17:40", DEFAULT_DATE_FORMAT),
    ("2021-03-28T02:30:00", DEFAULT_DATE_FORMAT),
    ("2021-03-28T03:30:00", DEFAULT_DATE_FORMAT),
    ("2021-10-31T01:30:00", DEFAULT_DATE_FORMAT),
    ("2021-10-31T02:30:00", DEFAULT_DATE_FORMAT),
    ("20000229", "yyyyMMdd"),
    ("29 Feb 2000 13:05", "dd MMM yyyy HH:mm"),
    ("2000-02-29T00:00:00.123", "yyyy-MM-dd'T'HH:mm:ss.SSS"),
    ("2000-02-29 11:00 PM", "yyyy-MM-dd hh:mm a"),
    ("2000-02-29T01:00:00-0330", "yyyy-MM-dd'T'HH:mm:ssZ"),
    ("2001-02-29", "yyyy-MM-dd"),
    ("2000-02-29T00:00:00 tail", DEFAULT_DATE_FORMAT),
]

JAVA_SOURCE = """
import java.text.*; import java.util.*;
public class Dates { public static void main(String[] a) throws Exception {
  Scanner in = new Scanner(System.in, "UTF-8");
  while (in.hasNextLine()) { String[] p = in.nextLine().split("\\t");
    SimpleDateFormat f = new SimpleDateFormat(p[1], Locale.US); f.setLenient(false);
    try { System.out.println(f.parse(p[0]).getTime()); }
    catch (ParseException e) { System.out.println("none"); } } } }
"""


@pytest.mark.weka
@pytest.mark.skipif(shutil.which("java") is None, reason="needs Java")
@pytest.mark.parametrize("tz", ["UTC", "Europe/Berlin"])
def test_agrees_with_javas_simple_date_format(tmp_path, zone, tz):
    (tmp_path / "Dates.java").write_text(JAVA_SOURCE)
    feed = "".join(f"{text}\t{pattern}\n" for text, pattern in JAVA_CASES)
    done = subprocess.run(["java", f"-Duser.timezone={tz}", str(tmp_path / "Dates.java")],
                          input=feed, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    zone(tz)
    ours = [DateFormat(pattern).parse(text) for text, pattern in JAVA_CASES]
    assert [None if v == "none" else float(v) for v in done.stdout.split()] == ours
