"""ARFF ``date`` attributes, read as Weka reads them: milliseconds since the epoch in the
declared Java pattern (Weka's default ``yyyy-MM-dd'T'HH:mm:ss`` when none), numeric from
then on (issue 32, acceptance 4)."""

from __future__ import annotations

import json
import time

import pytest

from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError

from ektesting.support import run_main
from ektesting.weka_tools import needs_weka, run_weka

DATES = """@relation dates
@attribute when date "yyyy-MM-dd HH:mm:ss"
@attribute day date yyyy-MM-dd
@attribute plain date
@attribute x numeric
@attribute c {a,b}
@data
"2001-04-03 12:12:12",2001-04-03,1970-01-01T00:00:01,1,a
"2001-05-03 12:59:55",2001-05-03,1970-01-02T00:00:00,2,a
"2002-05-03 12:59:55",?,?,3,b
"2003-01-01 00:00:00",2003-01-01,1969-12-31T23:59:59,4,b
"2001-06-03 10:00:00",2001-06-03,2000-01-01T00:00:00,5,a
"2003-06-03 10:00:00",2003-06-03,2000-01-01T00:00:00,6,b
"""


@pytest.fixture
def utc(monkeypatch):
    """Weka reads dates in the machine's time zone: the tests fix it to UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_dates_are_milliseconds_since_the_epoch(utc, tmp_path):
    path = tmp_path / "d.arff"
    path.write_text(DATES)
    ds = load_dataset(path)
    assert [a.kind for a in ds.schema.features] == ["numeric"] * 4
    # 2001-04-03 12:12:12 UTC = 986,299,932 s; 1970-01-02 = 86,400 s
    assert ds.X[0, :3].tolist() == [986_299_932_000.0, 986_256_000_000.0, 1000.0]
    assert ds.X[1, 2] == 86_400_000.0 and ds.X[3, 2] == -1000.0
    assert ds.X[2, 1] != ds.X[2, 1]  # ? is missing


@pytest.mark.parametrize("declaration, says", [
    ('@attribute d date "yyyy-MM-dd" extra', "unexpected"),
    ('@attribute d date "qqqq"', "attribute 'd'"),
])
def test_a_date_pattern_that_cannot_be_read_is_refused_on_its_line(tmp_path, declaration, says):
    path = tmp_path / "bad.arff"
    path.write_text(f"@relation r\n{declaration}\n@attribute c {{a,b}}\n@data\n2001-01-01,a\n")
    with pytest.raises(DataError, match=f"line 2: .*{says}"):
        load_dataset(path)


def test_a_value_not_in_the_pattern_is_refused_with_its_line(utc, tmp_path):
    path = tmp_path / "bad.arff"
    path.write_text("@relation r\n@attribute d date yyyy-MM-dd\n@attribute c {a,b}\n@data\n"
                    "2001-01-01,a\n2001-02-30,b\n")
    with pytest.raises(DataError, match="line 6: value '2001-02-30' of attribute 'd' is not a "
                                        "date in the format 'yyyy-MM-dd'"):
        load_dataset(path)


def test_info_fit_and_predict_read_dates(utc, tmp_path, monkeypatch, capsys):
    path = tmp_path / "d.arff"
    path.write_text(DATES)
    code, out, err = run_main(["info", path, "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    when = json.loads(out)["attributes"][0]
    assert (when["type"], when["format"]) == ("date", "yyyy-MM-dd HH:mm:ss")
    assert (when["min"], when["max"]) == (986_299_932_000.0, 1_054_634_400_000.0)
    code, out, _ = run_main(["info", path], monkeypatch, capsys)
    assert "│ when  │ date    │ feature │       0 │ yyyy-MM-dd HH:mm:ss" in out
    model = tmp_path / "m.ekm"
    code, _, err = run_main(["fit", "c45", path, "-o", model, "--set", "min_samples_leaf=1"],
                            monkeypatch, capsys)
    assert code == 0, err
    code, out, err = run_main(["predict", model, path], monkeypatch, capsys)
    assert code == 0, err
    assert [r.split(",")[1] for r in out.splitlines()[1:]] == ["a", "a", "b", "b", "a", "b"]


@needs_weka
def test_j48_on_dates_prints_weka_s_tree(utc, tmp_path, monkeypatch, capsys):
    """Split points on a date are the milliseconds Weka reads (in UTC here: Weka's JVM
    is started with the test's TZ)."""
    path = tmp_path / "d.arff"
    path.write_text(DATES)
    weka = run_weka("weka.classifiers.trees.J48", "-t", str(path), "-no-cv", "-M", "1")
    model = tmp_path / "m.ekm"
    run_main(["fit", "c45", path, "-o", model, "--set", "min_samples_leaf=1"], monkeypatch, capsys)
    code, shown, _ = run_main(["show", model], monkeypatch, capsys)
    cut = "------------------\n"
    assert shown.split(cut, 1)[1].split("\n\nNumber")[0] == weka.split(cut, 1)[1].split(
        "\n\nNumber")[0]
