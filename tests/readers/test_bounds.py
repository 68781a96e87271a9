"""Bounded input (issue 29, item 3): every bound on data input, each with a small limit
set through its environment variable, and whole files read in chunks exactly as at once.
"""

from __future__ import annotations

import gzip
import io
import os
import stat

import numpy as np
import pytest

from ensemblekit import data as data_module
from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError, Schema
from ensemblekit.readers import text as readers_text
from ensemblekit.streaming import iter_chunks

from ektesting import support

IRIS = support.data_path("iris.arff")


def _write(path, content: str | bytes):
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def _bound_text(found: str, bound: str, what: str, variable: str) -> str:
    return f"{found} more than {bound}, the bound on {what} (set {variable} to allow more)"


# --------------------------------------------------------------------------- what is read
@pytest.mark.parametrize("command", ["info", "fit", pytest.param("predict", marks=pytest.mark.slow)])
def test_a_character_device_is_refused_at_once(command, cli, tmp_path):
    args = {"info": ["info", os.devnull],
            "fit": ["fit", "knn", os.devnull, "-o", str(tmp_path / "m.ekm")],
            "predict": ["predict", str(tmp_path / "m.ekm"), os.devnull]}[command]
    if command == "predict":
        assert cli("fit", "knn", str(IRIS), "-o", str(tmp_path / "m.ekm")).exit_code == 0
    result = cli(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() == (f"ensemblekit: error: {os.devnull}: is a character device, "
                                     "not a data file (give a regular file, a FIFO or '-')")
    assert not (tmp_path / "m.ekm").exists() or command == "predict"


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(DataError, match="is a directory, not a data file"):
        load_dataset(tmp_path)


def test_a_fifo_is_read(tmp_path):
    fifo = tmp_path / "data.arff"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    pid = os.fork()
    if pid == 0:  # the writer
        try:
            with open(fifo, "wb") as out:
                out.write(IRIS.read_bytes())
        finally:
            os._exit(0)
    try:
        ds = load_dataset(fifo)
    finally:
        os.waitpid(pid, 0)
    assert ds.n_instances == 150


def test_standard_input_read_whole_is_bounded(monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_DATA_MB", "1")
    big = b"a,b\n" + b"1,2\n" * (300 << 10)  # 1.2 MiB
    with pytest.raises(DataError) as info:
        load_dataset("-", stdin=io.BytesIO(big))
    assert str(info.value) == "<stdin>: " + _bound_text(
        "standard input holds", "1 MiB", "decompressed data", "ENSEMBLEKIT_MAX_DATA_MB")


def test_a_gzip_bomb_stops_at_the_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_DATA_MB", "1")
    path = _write(tmp_path / "b.csv.gz", gzip.compress(b"a,b\n" + b"1,2\n" * (1 << 20)))
    read = []
    real = readers_text._Counted.readinto

    def counting(self, buffer):
        n = real(self, buffer)
        read.append(n)
        return n
    monkeypatch.setattr(readers_text._Counted, "readinto", counting)
    with pytest.raises(DataError) as info:
        load_dataset(path)
    assert str(info.value) == f"{path}: " + _bound_text(
        "the gzip data decompresses to", "1 MiB", "decompressed data", "ENSEMBLEKIT_MAX_DATA_MB")
    assert sum(read) == 1 << 20  # the reads before the one that goes past the bound (by a byte)


def test_a_bound_that_is_not_a_number_is_refused(monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_LINE_MB", "0")
    with pytest.raises(DataError, match=r"^ENSEMBLEKIT_MAX_LINE_MB='0': expected a whole number "
                                        r"of MiB >= 1$"):
        load_dataset(IRIS)


# --------------------------------------------------------------------------- lines and values
@pytest.mark.parametrize("compressed", [False, True])
def test_a_long_line_is_refused_while_it_is_read(tmp_path, monkeypatch, compressed):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_LINE_MB", "1")
    monkeypatch.setattr(readers_text, "_BLOCK", 1 << 16)
    body = b"a,b\n1,2\n" + b"1" * (3 << 20) + b",2\n"
    path = _write(tmp_path / ("l.csv.gz" if compressed else "l.csv"),
                  gzip.compress(body) if compressed else body)
    read = []
    monkeypatch.setattr(readers_text, "_first_line_end",
                        lambda text, real=readers_text._first_line_end: read.append(len(text))
                        or real(text))
    expected = f"{path}, line 3: " + _bound_text("line 3 holds", "1 MiB", "a line",
                                                 "ENSEMBLEKIT_MAX_LINE_MB")
    with pytest.raises(DataError) as info:
        load_dataset(path)
    assert str(info.value) == expected
    assert sum(read) <= (1 << 20) + (2 << 16)  # refused once the line is past the bound
    schema = load_dataset(_write(tmp_path / "ok.csv", "a,b\n1,2\n")).schema
    read.clear()
    with pytest.raises(DataError) as info:  # predict's chunk reader refuses as early
        list(iter_chunks(path, schema))
    assert str(info.value) == expected
    assert sum(read) <= (1 << 20) + (2 << 16)


def test_a_long_utf16_line_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_LINE_MB", "1")
    path = _write(tmp_path / "l.csv", ("a,b\n" + "1" * (2 << 20) + ",2\n").encode("utf-16"))
    with pytest.raises(DataError, match=r", line 2: line 2 holds more than 1 MiB, the bound on "
                                        r"a line \(set ENSEMBLEKIT_MAX_LINE_MB"):
        load_dataset(path)


@pytest.mark.parametrize("content, line", [
    ("a,b\n1,xxxxxxxxxxx\n", 2),
    ("a,b\n1,\"xxx\nxxxxxxx\"\n", 3),
    ("@relation r\n@attribute a numeric\n@attribute b string\n@data\n1,xxxxxxxxxxx\n", 5),
    ("@relation r\n@attribute a numeric\n@attribute b {y,xxxxxxxxxxx}\n@data\n1,y\n", 3),
])
def test_a_long_value_is_refused(tmp_path, monkeypatch, content, line):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_VALUE_CHARS", "10")
    path = _write(tmp_path / ("v.arff" if content.startswith("@") else "v.csv"), content)
    with pytest.raises(DataError) as info:
        load_dataset(path, allow_string=True)
    assert str(info.value) == f"{path}, line {line}: " + _bound_text(
        f"a value on line {line} holds", "10 characters", "a value", "ENSEMBLEKIT_MAX_VALUE_CHARS")
    monkeypatch.setenv("ENSEMBLEKIT_MAX_VALUE_CHARS", "11")
    assert load_dataset(path, allow_string=True).n_instances == 1


def test_a_value_far_past_the_bound_is_refused_before_it_is_tokenised(tmp_path, monkeypatch):
    import arff

    monkeypatch.setenv("ENSEMBLEKIT_MAX_VALUE_CHARS", "10")
    path = _write(tmp_path / "v.arff", "@relation r\n@attribute a numeric\n@attribute b string\n"
                  "@data\n1,'" + "x" * 100 + "'\n")
    monkeypatch.setattr(arff.ArffDecoder, "decode", lambda *a, **k: pytest.fail("tokenised"))
    with pytest.raises(DataError, match="line 5: a value on line 5 holds more than 10"):
        load_dataset(path, allow_string=True)


# --------------------------------------------------------------------------- attributes, values
def test_attributes_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_ATTRIBUTES", "3")
    csv_path = _write(tmp_path / "a.csv", "a,b,c,d\n1,2,3,4\n")
    with pytest.raises(DataError) as info:
        load_dataset(csv_path)
    assert str(info.value) == f"{csv_path}, line 1: " + _bound_text(
        "the first row has 4 fields,", "3 attributes", "attributes", "ENSEMBLEKIT_MAX_ATTRIBUTES")
    arff_path = _write(tmp_path / "a.arff", "@relation r\n" + "".join(
        f"@attribute {n} numeric\n" for n in "abcd") + "@data\n1,2,3,4\n")
    with pytest.raises(DataError) as info:
        load_dataset(arff_path)
    assert str(info.value) == f"{arff_path}, line 5: " + _bound_text(
        "the header declares", "3 attributes", "attributes", "ENSEMBLEKIT_MAX_ATTRIBUTES")
    schema = load_dataset(_write(tmp_path / "ok.csv", "a,b\n1,2\n")).schema
    with pytest.raises(DataError, match="the first row has 4 fields, more than 3 attributes"):
        list(iter_chunks(csv_path, schema))
    monkeypatch.setenv("ENSEMBLEKIT_MAX_ATTRIBUTES", "4")
    assert load_dataset(csv_path).X.shape == (1, 3)


def test_nominal_values_per_attribute_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_NOMINAL_VALUES", "2")
    arff_path = _write(tmp_path / "n.arff", "@relation r\n@attribute a numeric\n"
                       "@attribute c {x,y,z}\n@data\n1,x\n")
    with pytest.raises(DataError) as info:
        load_dataset(arff_path)
    assert str(info.value) == f"{arff_path}, line 3: " + _bound_text(
        "attribute 'c' declares", "2 values", "the values of a nominal attribute",
        "ENSEMBLEKIT_MAX_NOMINAL_VALUES")
    csv_path = _write(tmp_path / "n.csv", "a,c\n1,x\n2,y\n3,z\n")
    with pytest.raises(DataError) as info:
        load_dataset(csv_path)
    assert str(info.value) == f"{csv_path}: " + _bound_text(
        "attribute 'c' holds", "2 values", "the values of a nominal attribute",
        "ENSEMBLEKIT_MAX_NOMINAL_VALUES")
    monkeypatch.setenv("ENSEMBLEKIT_MAX_NOMINAL_VALUES", "3")
    assert load_dataset(csv_path).class_values == ("x", "y", "z")


def test_nominal_values_of_a_file_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_NOMINAL_TOTAL", "3")
    arff_path = _write(tmp_path / "n.arff", "@relation r\n@attribute a {p,q}\n"
                       "@attribute c {x,y}\n@data\np,x\n")
    with pytest.raises(DataError) as info:
        load_dataset(arff_path)
    assert str(info.value) == f"{arff_path}, line 3: " + _bound_text(
        "the header declares", "3 values", "the nominal values of a file",
        "ENSEMBLEKIT_MAX_NOMINAL_TOTAL")
    csv_path = _write(tmp_path / "n.csv", "a,c\np,x\nq,y\n")
    with pytest.raises(DataError) as info:
        load_dataset(csv_path)
    assert str(info.value) == f"{csv_path}: " + _bound_text(
        "the attributes hold", "3 values", "the nominal values of a file",
        "ENSEMBLEKIT_MAX_NOMINAL_TOTAL")


# --------------------------------------------------------------------------- chunks = whole
def _same(a, b):
    assert a.schema.to_dict() == b.schema.to_dict()
    np.testing.assert_array_equal(a.X, b.X)
    if a.y is None:
        assert b.y is None
    else:
        np.testing.assert_array_equal(a.y, b.y)
        assert a.y.dtype == b.y.dtype
    np.testing.assert_array_equal(a.lines, b.lines)
    assert (a.name, a.source, a.format) == (b.name, b.source, b.format)


def _read_in(chunk_rows, monkeypatch, path, **options):
    monkeypatch.setattr(data_module, "_CHUNK_ROWS", chunk_rows)
    notes: list[str] = []
    try:
        ds = load_dataset(path, notify=notes.append, **options)
    except DataError as exc:
        return str(exc), notes
    return ds, notes


CSV_CASES = {
    "numbers late": "a,b,c\n" + "".join(f"{i},{i % 3},x{i % 2}\n" for i in range(9)) + "7,oops,x1\n",
    "comma decimals": "a;b;c\n1,5;2;u\n2,5;3;v\n\n3;4,25;u\n",
    "comma then text": "a;b\n1,5;u\n2,5;u\n3,5;u\nword;v\n",
    "no header": "1,2,x\n3,4,y\n5,6,x\n",
    "header fits late": "1,a\n2,b\n3,c\n4,1\n",
    "missing and spaces": "a , b\n ? , x\n 2 , NA\n 3 ,  y \n",
    "quoted lines": 'a,b\n1,"x\ny"\n2,z\n3,"p,q"\n',
    "mostly numbers": "a,b\n" + "".join(f"{i},c\n" for i in range(20)) + "n/k,d\n",
    "blank lines": "\n\na,b\n\n1,x\n\n\n2,y\n\n",
}


@pytest.mark.parametrize("case", sorted(CSV_CASES))
@pytest.mark.parametrize("options", [{}, {"decimal": ","}, {"header": False}, {"header": True},
                                     {"no_class": True}, {"missing_values": ["oops"]}])
def test_csv_in_chunks_is_read_as_at_once(tmp_path, monkeypatch, case, options):
    path = _write(tmp_path / "c.csv", CSV_CASES[case])
    whole, whole_notes = _read_in(10**6, monkeypatch, path, **options)
    for rows in (1, 2, 3):
        part, notes = _read_in(rows, monkeypatch, path, **options)
        assert notes == whole_notes
        if isinstance(whole, str):
            assert part == whole
        else:
            _same(part, whole)


ARFF_CASES = {
    "sparse": "@relation r\n@attribute a numeric\n@attribute b {u,v}\n@data\n"
              "{0 1}\n2,v\n% note\n{1 v}\n{}\n",
    "errors in two columns": "@relation r\n@attribute a numeric\n@attribute b {u,v}\n@data\n"
                             "1,w\n2,u\n3,u\nx,u\n",
    "infinite then text": "@relation r\n@attribute a numeric\n@attribute b {u,v}\n@data\n"
                          "inf,u\n2,u\n3,u\nx,u\n",
    "strings": "@relation r\n@attribute s string\n@attribute b {u,v}\n@data\n"
               "'z z',u\nb,v\n'z z',u\n?,v\n",
    "date": "@relation r\n@attribute d date\n@attribute b {u,v}\n@data\n1,u\n2,u\n3,u,4\n",
}


@pytest.mark.parametrize("case", sorted(ARFF_CASES))
@pytest.mark.parametrize("options", [{}, {"allow_string": True}, {"ignore": ["d"]},
                                     {"ignore": ["nothing"]}])
def test_arff_in_chunks_is_read_as_at_once(tmp_path, monkeypatch, case, options):
    path = _write(tmp_path / "c.arff", ARFF_CASES[case])
    whole, whole_notes = _read_in(10**6, monkeypatch, path, **options)
    for rows in (1, 2, 3):
        part, notes = _read_in(rows, monkeypatch, path, **options)
        assert notes == whole_notes
        if isinstance(whole, str):
            assert part == whole
        else:
            _same(part, whole)


def test_the_first_error_in_attribute_order_is_the_one_raised(tmp_path, monkeypatch):
    path = _write(tmp_path / "e.arff", ARFF_CASES["errors in two columns"])
    for rows in (1, 10):
        message, _ = _read_in(rows, monkeypatch, path)
        assert message == f"{path}, line 8: value 'x' is not numeric for attribute 'a'"
    path = _write(tmp_path / "i.arff", ARFF_CASES["infinite then text"])
    message, _ = _read_in(1, monkeypatch, path)
    assert message == f"{path}, line 8: value 'x' is not numeric for attribute 'a'"


def test_against_a_schema_in_chunks(tmp_path, monkeypatch):
    schema = load_dataset(IRIS).schema
    text = IRIS.read_text()
    path = _write(tmp_path / "t.arff", text)
    whole, _ = _read_in(10**6, monkeypatch, path, schema=schema)
    part, _ = _read_in(7, monkeypatch, path, schema=schema)
    _same(part, whole)
    bad = _write(tmp_path / "b.csv", "sepallength,sepalwidth,petallength,class\n1,2,3,Iris-setosa\n"
                 "1,2,x,Iris-setosa\n")
    for rows in (1, 10):  # a value of the third attribute comes before the missing fourth
        message, _ = _read_in(rows, monkeypatch, bad, schema=schema)
        assert message == (f"{bad}, line 3: attribute 'petallength' is numeric in the training "
                           "data but here holds the non-number 'x'")
    good = _write(tmp_path / "g.csv",
                  "sepallength,sepalwidth,petallength,class\n1,2,3,Iris-setosa\n")
    message, _ = _read_in(1, monkeypatch, good, schema=schema)
    assert message == (f"{good}: attribute 'petalwidth' of the training data is missing (the file "
                       "has: 'sepallength', 'sepalwidth', 'petallength', 'class')")
    assert isinstance(schema, Schema)


def test_a_file_that_turns_latin1_late_is_read_again_as_latin1(tmp_path, monkeypatch):
    monkeypatch.setattr(readers_text, "_BLOCK", 8)
    raw = "a,b\n1,é\n3,abcdefghijk\n".encode() + b"2,\xe9\n"
    path = _write(tmp_path / "m.csv", raw)
    notes: list[str] = []
    ds = load_dataset(path, notify=notes.append)
    assert notes == [f"note: {path}: not UTF-8 (byte 0xe9 on line 4), so it is read as Latin-1"]
    assert ds.class_values == ("abcdefghijk", "Ã©", "é")
    with pytest.raises(DataError, match="not UTF-8 .* although earlier lines are UTF-8"):
        load_dataset("-", stdin=io.BytesIO(raw))


def test_info_lists_the_first_class_values_and_says_how_many_are_left_out(tmp_path, cli):
    from ensemblekit.report import MAX_SCHEMA_ROWS

    n = MAX_SCHEMA_ROWS + 7
    path = _write(tmp_path / "c.arff", "@relation c\n@attribute a numeric\n@attribute k {"
                  + ",".join(f"v{i}" for i in range(n)) + "}\n@data\n1,v0\n")
    result = cli("info", str(path))
    assert result.exit_code == 0
    shown = " ".join(result.stdout.split())  # the caption wraps in a narrow table
    assert (f"the first {MAX_SCHEMA_ROWS:,} of {n:,} class values; 7 more not shown (--format "
            "json lists them all)") in shown
    assert f"v{MAX_SCHEMA_ROWS - 1} " in result.stdout and f"v{MAX_SCHEMA_ROWS} " not in result.stdout


def test_sparse_rows_that_expand_past_the_bound_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_SPARSE_VALUES", "100")
    header = "@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(50)) + "@data\n"
    path = _write(tmp_path / "s.arff", header + "{}\n" * 3)
    with pytest.raises(DataError) as info:
        load_dataset(path, no_class=True)
    assert str(info.value) == f"{path}: " + _bound_text(
        "3 rows x 50 attributes make 150 values,", "100 values", "the values sparse rows expand to",
        "ENSEMBLEKIT_MAX_SPARSE_VALUES")
    dense = _write(tmp_path / "d.arff", header + (",".join(["0"] * 50) + "\n") * 3)
    assert load_dataset(dense, no_class=True).X.shape == (3, 50)  # one value a character or less
    assert load_dataset(_write(tmp_path / "t.arff", header + "{}\n" * 2), no_class=True).X.shape \
        == (2, 50)


@pytest.mark.slow
def test_standard_input_from_a_regular_file_is_read_as_that_file(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("ENSEMBLEKIT_MAX_DATA_MB", "1")
    path = _write(tmp_path / "big.csv", "a,b\n" + "1,2\n" * (300 << 10))  # 1.2 MiB
    command = [sys.executable, "-c", "from ensemblekit.cli import console_main; console_main()",
               "info", "-", "--format", "json"]
    with open(path, "rb") as stdin:
        proc = subprocess.run(command, stdin=stdin, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(gzip_path := tmp_path / "big.csv.gz", "wb") as out:
        out.write(gzip.compress(path.read_bytes()))
    with open(gzip_path, "rb") as stdin:  # decompressed data is bounded all the same
        proc = subprocess.run(command, stdin=stdin, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "ensemblekit: error: <stdin>: " + _bound_text(
        "the gzip data decompresses to", "1 MiB", "decompressed data", "ENSEMBLEKIT_MAX_DATA_MB")
