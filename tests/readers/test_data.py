"""Tests for ensemblekit.data: ARFF/CSV reading, schema conformance, ARFF writing.

Every input is built inline (or read from the repository's sample_data/); the
expected arrays below are worked out by hand from those inputs.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from ensemblekit.data import load_dataset
from ensemblekit.dataset import Attribute, DataError, Dataset, Schema
from ensemblekit.readers.arff import write_arff

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
nan = np.nan


def put(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def load(tmp_path: Path, text: str | bytes, name: str = "t.arff", **kw) -> Dataset:
    return load_dataset(put(tmp_path, name, text), **kw)


def error(tmp_path: Path, text: str | bytes, name: str = "t.arff", **kw) -> str:
    path = put(tmp_path, name, text)
    with pytest.raises(DataError) as info:
        load_dataset(path, **kw)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    return message


def assert_array(actual, expected):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


# --------------------------------------------------------------------------
# ARFF
# --------------------------------------------------------------------------
TOY = """% a comment before the header
@relation toy

@attribute a numeric
@attribute b REAL
@attribute c integer
@attribute colour {red,green,blue}
@attribute cls {x,y}

@data
1.5,2,3,green,x
% a comment between rows
-0.25,1e2,7,blue,y

4,.5,0,red,y
"""


def test_arff_numeric_and_nominal(tmp_path):
    d = load(tmp_path, TOY)
    assert d.name == "t"
    assert d.source == str(tmp_path / "t.arff")
    assert d.schema.relation == "toy"
    assert [(a.name, a.kind, a.values) for a in d.schema.attributes] == [
        ("a", "numeric", ()),
        ("b", "numeric", ()),
        ("c", "numeric", ()),
        ("colour", "nominal", ("red", "green", "blue")),
        ("cls", "nominal", ("x", "y")),
    ]
    assert d.schema.class_index == 4
    assert d.schema.class_attribute.name == "cls"
    assert [a.name for a in d.schema.features] == ["a", "b", "c", "colour"]
    # nominal codes follow the declared order (green=1, blue=2, red=0)
    assert_array(d.X, np.array([[1.5, 2.0, 3.0, 1.0], [-0.25, 100.0, 7.0, 2.0], [4.0, 0.5, 0.0, 0.0]]))
    assert_array(d.y, np.array([0, 1, 1], dtype=np.int64))
    assert_array(d.lines, np.array([11, 13, 15], dtype=np.int64))
    assert d.n_instances == 3
    assert d.class_values == ("x", "y")


def test_arff_missing_values(tmp_path):
    text = ("@relation m\n@attribute a numeric\n@attribute b {p,q}\n@attribute cls {u,v}\n"
            "@data\n?,q,u\n2,?,?\n")
    d = load(tmp_path, text)
    assert_array(d.X, np.array([[nan, 1.0], [2.0, nan]]))
    assert_array(d.y, np.array([0, -1], dtype=np.int64))


def test_arff_quoted_names_and_values(tmp_path):
    text = (
        "@relation 'my data'\n"
        "@attribute 'sepal length' numeric\n"
        "@attribute \"kind, of\" {'a b','c,d',\"e'f\"}\n"
        "@data\n"
        "1,'a b'\n"
        "2,'c,d'\n"
        "3,\"e'f\"\n"
        "'4',?\n"
    )
    d = load(tmp_path, text)
    assert d.schema.relation == "my data"
    assert [a.name for a in d.schema.attributes] == ["sepal length", "kind, of"]
    assert d.class_values == ("a b", "c,d", "e'f")
    assert_array(d.X, np.array([[1.0], [2.0], [3.0], [4.0]]))
    assert_array(d.y, np.array([0, 1, 2, -1], dtype=np.int64))


def test_arff_crlf_keeps_line_numbers(tmp_path):
    good = "@relation c\r\n@attribute a numeric\r\n@attribute cls {x,y}\r\n@data\r\n1,x\r\n\r\n2,y\r\n"
    d = load(tmp_path, good)
    assert_array(d.X, np.array([[1.0], [2.0]]))
    assert_array(d.y, np.array([0, 1], dtype=np.int64))
    assert_array(d.lines, np.array([5, 7], dtype=np.int64))
    bad = good.replace("2,y", "oops,y")
    message = error(tmp_path, bad)
    assert "line 7" in message
    assert "'oops'" in message and "'a'" in message


def test_arff_utf8_bom_and_non_ascii(tmp_path):
    text = "@relation b\n@attribute größe numeric\n@attribute farbe {grün,blau}\n@data\n1.5,grün\n"
    d = load(tmp_path, b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert [a.name for a in d.schema.attributes] == ["größe", "farbe"]
    assert d.class_values == ("grün", "blau")
    assert_array(d.X, np.array([[1.5]]))
    assert_array(d.y, np.array([0], dtype=np.int64))


def test_arff_latin1_file_is_read(tmp_path):
    text = "@relation l\n@attribute a numeric\n@attribute c {é,ü}\n@data\n1,ü\n"
    d = load(tmp_path, text.encode("latin-1"))
    assert d.class_values == ("é", "ü")
    assert_array(d.y, np.array([1], dtype=np.int64))


def test_arff_sparse_rows(tmp_path):
    # Left-out attributes are 0: the number 0, or a nominal attribute's FIRST
    # declared value. 'flag' declares '1' first, so an explicit 0 is code 1
    # while a left-out flag is code 0.
    text = (
        "@relation s\n"
        "@attribute a numeric\n"
        "@attribute b numeric\n"
        "@attribute flag {'1','0'}\n"
        "@attribute cls {p,q}\n"
        "@data\n"
        "{0 1.5, 2 0, 3 q}\n"
        "{1 2}\n"
        "{}\n"
        "3,4,'1',q\n"
        "{1 ?, 3 p}\n"
    )
    d = load(tmp_path, text)
    assert_array(
        d.X,
        np.array([[1.5, 0.0, 1.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [0.0, nan, 0.0]]),
    )
    assert_array(d.y, np.array([1, 0, 0, 1, 0], dtype=np.int64))
    assert_array(d.lines, np.array([7, 8, 9, 10, 11], dtype=np.int64))


def test_arff_sparse_index_out_of_range(tmp_path):
    text = "@relation s\n@attribute a numeric\n@attribute cls {p,q}\n@data\n{0 1}\n{5 1}\n"
    message = error(tmp_path, text)
    assert message.endswith(", line 6: sparse index 5 is out of range: the file declares 2 "
                            "attributes (indices 0 to 1)")


def test_arff_weka_header_forms(tmp_path):
    # range suffixes (old Weka) and a nominal list glued to the name
    text = (
        "@relation r\n"
        "@attribute a integer [1,10]\n"
        "@attribute b real [0.0,1.0]\n"
        "@attribute c NUMERIC (0,5]\n"
        "@attribute cls{1,2}\n"
        "@data\n"
        "3,0.5,4.5,2\n"
        "10,1,0.25,1\n"
    )
    d = load(tmp_path, text)
    assert [(a.name, a.kind) for a in d.schema.attributes] == [
        ("a", "numeric"),
        ("b", "numeric"),
        ("c", "numeric"),
        ("cls", "nominal"),
    ]
    assert d.class_values == ("1", "2")
    assert_array(d.X, np.array([[3.0, 0.5, 4.5], [10.0, 1.0, 0.25]]))
    assert_array(d.y, np.array([1, 0], dtype=np.int64))


STRING_ARFF = (
    "@relation s\n"
    "@attribute id numeric\n"
    "@attribute txt string\n"
    "@attribute cls {a,b}\n"
    "@data\n"
    "1,'zeta',a\n"
    "2,alpha,b\n"
    "3,'zeta',a\n"
)


def test_arff_string_features_are_left_out_with_one_note(tmp_path):
    two = STRING_ARFF.replace("@attribute cls", "@attribute memo string\n@attribute cls").replace(
        ",a\n", ",'m',a\n").replace(",b\n", ",'n',b\n")
    notes: list[str] = []
    path = tmp_path / "two.arff"
    path.write_text(two)
    d = load_dataset(path, notify=notes.append)
    assert [a.name for a in d.schema.attributes] == ["id", "cls"]
    assert_array(d.X, np.array([[1.0], [2.0], [3.0]]))
    assert len(notes) == 1  # every string attribute named in one note
    assert "string attributes are left out" in notes[0] and "'txt', 'memo'" in notes[0]
    assert "--string-to-nominal" in notes[0]


def test_a_string_class_is_an_error_naming_the_option(tmp_path):
    message = error(tmp_path, STRING_ARFF, target="txt")
    assert "attribute 'txt' (line 3) is a string attribute" in message
    assert "--string-to-nominal" in message and "--ignore 'txt'" in message


def test_string_to_nominal_reads_strings_as_nominal(tmp_path):
    d = load(tmp_path, STRING_ARFF, string_to_nominal=True)
    txt = d.schema.attributes[1]
    assert (txt.kind, txt.values) == ("nominal", ("alpha", "zeta"))
    assert_array(d.X, np.array([[1.0, 1.0], [2.0, 0.0], [3.0, 1.0]]))
    d = load(tmp_path, STRING_ARFF, string_to_nominal=True, target="txt")
    assert d.schema.class_attribute.values == ("alpha", "zeta")
    np.testing.assert_array_equal(d.y, [1, 0, 1])


def test_arff_string_attribute_allowed_or_ignored(tmp_path):
    d = load(tmp_path, STRING_ARFF, allow_string=True)
    txt = d.schema.attributes[1]
    assert (txt.kind, txt.values) == ("string", ("alpha", "zeta"))
    assert_array(d.X, np.array([[1.0, 1.0], [2.0, 0.0], [3.0, 1.0]]))
    d = load(tmp_path, STRING_ARFF, ignore=["txt"])
    assert [a.name for a in d.schema.attributes] == ["id", "cls"]
    assert_array(d.X, np.array([[1.0], [2.0], [3.0]]))


DATE_ARFF = (
    "@relation d\n"
    "% comment\n"
    "@attribute when date 'yyyy-MM-dd'\n"
    "@attribute n numeric\n"
    "@data\n"
    "'2001-01-01',5\n"
    "'2001-02-01',6\n"
)


def test_arff_date_attribute_is_read_as_milliseconds(tmp_path, monkeypatch):
    # dates were refused; they are now numbers as Weka reads them (local time: UTC here)
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        d = load(tmp_path, DATE_ARFF, no_class=True)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert_array(d.X, np.array([[978_307_200_000.0, 5.0], [980_985_600_000.0, 6.0]]))


def test_arff_date_attribute_can_be_ignored(tmp_path):
    d = load(tmp_path, DATE_ARFF, ignore=["when"], no_class=True)
    assert_array(d.X, np.array([[5.0], [6.0]]))
    assert d.y is None


def test_arff_malformed_row_names_line(tmp_path):
    text = ("@relation w\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n"
            "@data\n1,2,x\n3  4  y\n")
    message = error(tmp_path, text)
    assert ", line 7:" in message
    assert "malformed data row '3  4  y'" in message


def test_arff_wrong_number_of_values(tmp_path):
    text = "@relation w\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n1,2,x\n3,y\n"
    message = error(tmp_path, text)
    assert ", line 7:" in message and "expected 3 values" in message and "found 2" in message


def test_arff_undeclared_nominal_value(tmp_path):
    text = "@relation u\n@attribute a numeric\n@attribute cls {yes,no}\n@data\n1,yes\n2,maybe\n"
    message = error(tmp_path, text)
    assert ", line 6:" in message
    assert "'maybe'" in message and "'cls'" in message


def test_arff_infinite_value_rejected(tmp_path):
    text = "@relation u\n@attribute a numeric\n@attribute cls {y,n}\n@data\n1,y\ninf,n\n"
    assert error(tmp_path, text).endswith(", line 6: value 'inf' of attribute 'a' is not a finite number")


@pytest.mark.parametrize(
    "text, needle",
    [
        ("@attribute a numeric\n@data\n1\n", "line 1: expected '@relation'"),
        ("@relation r\n@attribute a numeric\n", "no '@data' line"),
        ("@relation r\n@data\n1\n", "line 2: no @attribute declarations"),
        (
            "@relation r\n@attribute a numeric\n@attribute a real\n@data\n1,2\n",
            "line 3: attribute 'a' is declared twice",
        ),
        ("@relation r\n@attribute a blob\n@data\n1\n", "line 2: attribute 'a' has unknown type"),
        ("@relation r\n@attribute a {x,y\n@data\nx\n", "line 2:"),
        ("@relation r\n% c\n@attribute a {'x, y}\n@data\nx\n", "line 3: cannot read the nominal values"),
        ("@relation r\n@attribute a {x,x}\n@data\nx\n", "line 2: attribute 'a' declares the value 'x' twice"),
        ("@relation r\n@attribute a numeric\nnonsense\n@data\n1\n", "line 3: unexpected text"),
    ],
)
def test_arff_bad_headers(tmp_path, text, needle):
    assert needle in error(tmp_path, text)


def test_arff_no_data_rows(tmp_path):
    message = error(tmp_path, "@relation r\n@attribute a numeric\n@data\n% nothing\n\n")
    assert "line 3: no data rows" in message


# --------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sep, name", [(",", "t.csv"), (";", "t.csv"), ("\t", "t.csv"), ("\t", "t.tsv"), (";", "t.txt")]
)
def test_csv_delimiters(tmp_path, sep, name):
    text = "".join(sep.join(row) + "\n"
                   for row in (["a", "b", "cls"], ["1", "2.5", "yes"], ["3", "-1", "no"]))
    d = load(tmp_path, text, name=name)
    assert d.name == "t"
    assert d.schema.relation == "t"
    assert [(a.name, a.kind) for a in d.schema.attributes] == [
        ("a", "numeric"), ("b", "numeric"), ("cls", "nominal")]
    assert d.class_values == ("no", "yes")  # sorted distinct values
    assert_array(d.X, np.array([[1.0, 2.5], [3.0, -1.0]]))
    assert_array(d.y, np.array([1, 0], dtype=np.int64))
    assert_array(d.lines, np.array([2, 3], dtype=np.int64))


def test_csv_numeric_and_nominal_inference_and_missing(tmp_path):
    text = (
        "num,mixed,\"quoted, name\",cls\n"
        "1,1,b,z\n"
        "?,x,,a\n"
        "NA,?,NaN,z\n"
        "na,NA,nan,?\n"
        ",1,\"a, b\",a\n"
        "2.5e1,x,b,NAN\n"
    )
    d = load(tmp_path, text, name="t.csv")
    num, mixed, quoted, cls = d.schema.attributes
    assert (num.kind, num.values) == ("numeric", ())
    assert (mixed.kind, mixed.values) == ("nominal", ("1", "x"))
    assert (quoted.name, quoted.kind, quoted.values) == ("quoted, name", "nominal", ("a, b", "b"))
    assert (cls.kind, cls.values) == ("nominal", ("a", "z"))
    assert_array(
        d.X,
        np.array(
            [
                [1.0, 0.0, 1.0],
                [nan, 1.0, nan],
                [nan, nan, nan],
                [nan, nan, nan],
                [nan, 0.0, 0.0],
                [25.0, 1.0, 1.0],
            ]
        ),
    )
    assert_array(d.y, np.array([1, 0, 1, -1, 0, -1], dtype=np.int64))


def test_csv_numeric_class_and_line_numbers(tmp_path):
    text = 'a,b,target\n\n1,"x\ny",0.5\n  \n3,z,2\n'
    d = load(tmp_path, text, name="t.csv")
    assert d.schema.class_attribute.kind == "numeric"
    assert d.class_values == ()
    assert_array(d.y, np.array([0.5, 2.0]))
    assert d.schema.attributes[1].values == ("x\ny", "z")
    assert_array(d.lines, np.array([3, 6], dtype=np.int64))


def test_csv_errors(tmp_path):
    # a first row of numbers that does not fit the rows below is no header and no data
    assert "line 1: no header row" in error(tmp_path, "1,2,3\na,b,c\n", name="t.csv")
    message = error(tmp_path, "a,b\n1,2\n\n3,4,5\n", name="t.csv")
    assert "line 4: expected 2 fields" in message and "found 3" in message
    assert "no data rows" in error(tmp_path, "a,b\n\n", name="t.csv")
    assert error(tmp_path, "\n  \n", name="t.csv").endswith("t.csv: the input is empty")
    assert "line 1: column name 'a' appears twice" in error(tmp_path, "a,b,a\n1,2,3\n", name="t.csv")
    assert "line 1: column 2 of the header has no name" in error(tmp_path, "a,,c\n1,2,3\n", name="t.csv")


def test_empty_arff_file(tmp_path):
    # (the message starts with the path, which holds the test's name: check its end)
    assert error(tmp_path, b"").endswith(".arff: the input is empty")


# --------------------------------------------------------------------------
# stdin and format detection
# --------------------------------------------------------------------------
def test_stdin_arff_sniffed():
    text = (b"% leading comment\n\n@RELATION piped\n@attribute a numeric\n@attribute c {u,v}\n"
            b"@data\n1,v\n2,u\n")
    d = load_dataset("-", stdin=io.BytesIO(text))
    assert d.source == "<stdin>"
    assert d.name == "piped"
    assert_array(d.X, np.array([[1.0], [2.0]]))
    assert_array(d.y, np.array([1, 0], dtype=np.int64))
    assert_array(d.lines, np.array([7, 8], dtype=np.int64))


def test_stdin_csv_sniffed():
    d = load_dataset("-", stdin=io.BytesIO(b"x;label\n0.5;b\n1.5;a\n"))
    assert d.source == "<stdin>"
    assert d.name == "stdin"
    assert d.class_values == ("a", "b")
    assert_array(d.X, np.array([[0.5], [1.5]]))
    assert_array(d.y, np.array([1, 0], dtype=np.int64))


def test_stdin_errors_name_stdin():
    with pytest.raises(DataError, match=r"^<stdin>, line 3: "):
        load_dataset("-", stdin=io.BytesIO(b"a,b\n1,2\n3\n"))


def test_format_from_sniffing_and_override(tmp_path):
    path = put(tmp_path, "t.data", "@relation r\n@attribute a numeric\n@attribute c {u,v}\n@data\n1,u\n")
    assert load_dataset(path).class_values == ("u", "v")
    path = put(tmp_path, "arff.txt", "@relation r\n@attribute a numeric\n@attribute c {u,v}\n@data\n1,u\n")
    assert load_dataset(path, fmt="arff").class_values == ("u", "v")
    with pytest.raises(ValueError, match="fmt"):
        load_dataset(path, fmt="xlsx")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.arff"
    with pytest.raises(DataError, match="no such file"):
        load_dataset(path)


# --------------------------------------------------------------------------
# target, ignore, no_class
# --------------------------------------------------------------------------
def test_target_selection(tmp_path):
    d = load(tmp_path, TOY, target="a")
    assert d.schema.class_index == 0
    assert [a.name for a in d.schema.features] == ["b", "c", "colour", "cls"]
    assert_array(d.y, np.array([1.5, -0.25, 4.0]))
    assert_array(d.X[:, 3], np.array([0.0, 1.0, 1.0]))
    d = load(tmp_path, TOY, target="colour")
    assert d.class_values == ("red", "green", "blue")
    assert_array(d.y, np.array([1, 2, 0], dtype=np.int64))


def test_unknown_target_lists_names(tmp_path):
    message = error(tmp_path, TOY, target="klass")
    assert "'klass'" in message and "'a', 'b', 'c', 'colour', 'cls'" in message


def test_ignore_and_no_class(tmp_path):
    d = load(tmp_path, TOY, ignore=["b", "colour"])
    assert [a.name for a in d.schema.attributes] == ["a", "c", "cls"]
    assert_array(d.X, np.array([[1.5, 3.0], [-0.25, 7.0], [4.0, 0.0]]))
    d = load(tmp_path, TOY, no_class=True)
    assert d.y is None and d.schema.class_index is None and d.class_values == ()
    assert d.X.shape == (3, 5)
    assert_array(d.X[:, 4], np.array([0.0, 1.0, 1.0]))
    assert "cannot ignore 'zz'" in error(tmp_path, TOY, ignore=["zz"])
    with pytest.raises(ValueError, match="either target or no_class=True, not both"):
        load_dataset(tmp_path / "t.arff", target="a", no_class=True)


def test_ignored_columns_are_not_checked(tmp_path):
    # the bad value sits in a column that is dropped first
    text = "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n1,bad,x\n"
    d = load(tmp_path, text, ignore=["b"])
    assert_array(d.X, np.array([[1.0]]))


# --------------------------------------------------------------------------
# conforming to a training schema
# --------------------------------------------------------------------------
TRAIN_SCHEMA = Schema(
    "train",
    (
        Attribute("x", "numeric"),
        Attribute("colour", "nominal", ("red", "green", "blue")),
        Attribute("cls", "nominal", ("no", "yes")),
    ),
    2,
)


def test_schema_conform_reorders_and_remaps(tmp_path):
    text = (
        "@relation test\n"
        "@attribute extra numeric\n"
        "@attribute cls {yes,no}\n"
        "@attribute colour {blue,green,red}\n"
        "@attribute x numeric\n"
        "@data\n"
        "9,yes,blue,1.5\n"
        "9,no,red,?\n"
        "9,?,?,3\n"
    )
    d = load(tmp_path, text, schema=TRAIN_SCHEMA)
    assert d.schema == TRAIN_SCHEMA
    assert_array(d.X, np.array([[1.5, 2.0], [nan, 0.0], [3.0, nan]]))
    assert_array(d.y, np.array([1, 0, -1], dtype=np.int64))


def test_schema_conform_class_absent(tmp_path):
    text = "@relation test\n@attribute colour {green}\n@attribute x numeric\n@data\ngreen,2\n"
    d = load(tmp_path, text, schema=TRAIN_SCHEMA)
    assert d.y is None
    assert_array(d.X, np.array([[2.0, 1.0]]))


def test_schema_conform_errors(tmp_path):
    missing = "@relation t\n@attribute x numeric\n@attribute cls {no,yes}\n@data\n1,no\n"
    assert "attribute 'colour' of the training data is missing" in error(tmp_path, missing,
                                                                         schema=TRAIN_SCHEMA)

    retyped = "@relation t\n@attribute x numeric\n@attribute colour numeric\n@data\n1,2\n"
    message = error(tmp_path, retyped, schema=TRAIN_SCHEMA)
    assert "'colour'" in message and "numeric here but nominal in the training data" in message

    unseen = "@relation t\n@attribute x numeric\n@attribute colour {red,purple}\n@data\n1,red\n2,purple\n"
    message = error(tmp_path, unseen, schema=TRAIN_SCHEMA)
    assert ", line 6:" in message and "'purple'" in message and "'colour'" in message
    assert "not seen in the training data" in message

    unseen_class = (
        "@relation t\n@attribute x numeric\n@attribute colour {red}\n@attribute cls {maybe}\n"
        "@data\n1,red,maybe\n"
    )
    message = error(tmp_path, unseen_class, schema=TRAIN_SCHEMA)
    assert ", line 6:" in message and "'maybe'" in message and "'cls'" in message


def test_schema_with_contradicting_target(tmp_path):
    path = put(tmp_path, "t.arff", TOY)
    with pytest.raises(ValueError, match="contradicts"):
        load_dataset(path, schema=TRAIN_SCHEMA, target="x")


def test_schema_conform_csv_takes_schema_kinds(tmp_path):
    schema = Schema("w", (Attribute("v", "numeric"), Attribute("grade", "nominal", ("3", "1", "2"))), 1)
    d = load(tmp_path, "grade,v\n1,0.5\n3,NA\n", name="t.csv", schema=schema)
    assert_array(d.X, np.array([[0.5], [nan]]))
    assert_array(d.y, np.array([1, 0], dtype=np.int64))
    message = error(tmp_path, "grade,v\n1,0.5\n3,lots\n", name="t.csv", schema=schema)
    assert ", line 3:" in message and "'v'" in message and "'lots'" in message


# --------------------------------------------------------------------------
# Schema and Attribute objects
# --------------------------------------------------------------------------
def test_schema_dict_round_trip():
    d = TRAIN_SCHEMA.to_dict()
    assert list(d) == ["relation", "attributes", "class_index"]
    assert d["attributes"][1] == {"name": "colour", "kind": "nominal", "values": ["red", "green", "blue"]}
    again = Schema.from_dict(json.loads(json.dumps(d)))
    assert again == TRAIN_SCHEMA
    assert json.dumps(again.to_dict()) == json.dumps(d)
    none = Schema("r", (Attribute("a", "numeric"),), None)
    assert Schema.from_dict(none.to_dict()) == none
    with pytest.raises(ValueError, match="not a schema dict"):
        Schema.from_dict({"relation": "r"})


def test_schema_and_attribute_validation():
    with pytest.raises(ValueError, match="kind must be one of .*not 'date'"):
        Attribute("a", "date")
    with pytest.raises(ValueError, match="a numeric attribute has no values"):
        Attribute("a", "numeric", ("x",))
    with pytest.raises(ValueError, match="value 'x' is listed twice"):
        Attribute("a", "nominal", ("x", "x"))
    with pytest.raises(ValueError, match="attribute name 'a' appears twice"):
        Schema("r", (Attribute("a", "numeric"), Attribute("a", "numeric")), None)
    with pytest.raises(ValueError, match="class_index 1 is not an index into 1 attributes"):
        Schema("r", (Attribute("a", "numeric"),), 1)
    assert Attribute("a", "nominal", ["x", "y"]).values == ("x", "y")


# --------------------------------------------------------------------------
# write_arff
# --------------------------------------------------------------------------
def test_write_arff_round_trip(tmp_path):
    tricky = ("a b", "c,d", "it's", "?", "{x}", "back\\slash", "50%", 'say "hi"', "")
    attributes = [
        Attribute("num val", "numeric"),
        Attribute("n", "numeric"),
        Attribute("txt", "string"),
        Attribute("cls", "nominal", tricky),
    ]
    rows = [
        (0.1, 3, "free text, with comma", "a b"),
        (1e-300, np.int64(-7), None, "c,d"),
        (123456789.123, None, "", "it's"),
        (None, 2, "x", "?"),
        (float("nan"), 0, "'quoted'", "{x}"),
        (np.float64(-2.5), 1, "y", "back\\slash"),
        (7, 1, "y", "50%"),
        (0.0, 1, "y", 'say "hi"'),
        (1.0, 1, "y", ""),
        (2.0, 1, "y", None),
    ]
    buf = io.StringIO()
    write_arff(buf, "out put", attributes, rows)
    path = put(tmp_path, "w.arff", buf.getvalue())
    d = load_dataset(path, allow_string=True)
    assert d.schema.relation == "out put"
    assert d.schema.attributes[0] == attributes[0] and d.schema.attributes[3] == attributes[3]
    assert d.class_values == tricky
    assert_array(d.y, np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, -1], dtype=np.int64))
    assert_array(d.X[:, 0], np.array([0.1, 1e-300, 123456789.123, nan, nan, -2.5, 7.0, 0.0, 1.0, 2.0]))
    assert_array(d.X[:, 1], np.array([3.0, -7.0, nan, 2.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]))
    txt = d.schema.attributes[2]
    assert txt.values == ("", "'quoted'", "free text, with comma", "x", "y")
    assert_array(d.X[:, 2], np.array([2.0, nan, 0.0, 3.0, 1.0, 4.0, 4.0, 4.0, 4.0, 4.0]))


def test_write_arff_rejects_bad_rows():
    attributes = [Attribute("a", "numeric"), Attribute("c", "nominal", ("u", "v"))]
    with pytest.raises(ValueError, match="'w' is not a declared value of attribute 'c'"):
        write_arff(io.StringIO(), "r", attributes, [(1.0, "w")])
    with pytest.raises(ValueError, match="'1.0' is not a number for numeric attribute 'a'"):
        write_arff(io.StringIO(), "r", attributes, [("1.0", "u")])
    with pytest.raises(ValueError, match="1 values for 2 attributes"):
        write_arff(io.StringIO(), "r", attributes, [(1.0,)])


def test_write_arff_is_deterministic():
    attributes = [Attribute("a", "numeric"), Attribute("c", "nominal", ("u", "v"))]
    rows = [(0.5, "u"), (None, "v")]
    first, second = io.StringIO(), io.StringIO()
    write_arff(first, "r", attributes, rows)
    write_arff(second, "r", attributes, rows)
    assert first.getvalue() == second.getvalue()
    assert first.getvalue() == (
        "@relation r\n\n@attribute a numeric\n@attribute c {u,v}\n\n@data\n0.5,u\n?,v\n")


# --------------------------------------------------------------------------
# the repository's sample data
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "file, shape, counts",
    [
        ("iris.arff", (150, 4), [50, 50, 50]),
        # UCI glass: 70/76/17/0/13/9/29 over the 7 declared types (no 'vehic wind non-float')
        ("glass.arff", (214, 9), [70, 76, 17, 0, 13, 9, 29]),
        ("vote.arff", (435, 16), [267, 168]),
        ("breast-cancer.arff", (286, 9), [201, 85]),
        ("wine.arff", (178, 13), [59, 71, 48]),
    ],
)
def test_sample_data(file, shape, counts):
    d = load_dataset(SAMPLE / file)
    assert d.X.shape == shape
    assert len(d.class_values) == len(counts)
    assert d.y.min() >= 0
    assert np.bincount(d.y, minlength=len(counts)).tolist() == counts
    assert d.lines.shape == (shape[0],)
    assert np.all(np.diff(d.lines) > 0)


def test_module_imports_no_heavy_libraries():
    import subprocess
    import sys

    code = (
        "import sys, ensemblekit.data; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy', 'pandas', 'skops'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_with_nominal_class_turns_numeric_labels_into_classes(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("a,b,label\n1.5,x,2\n2.5,y,0\n3.5,x,?\n4.5,y,2\n")
    ds = load_dataset(path)
    assert ds.schema.class_attribute.kind == "numeric"
    nominal = ds.with_nominal_class()
    assert nominal.schema.class_attribute.values == ("0", "2")
    assert nominal.y.tolist() == [1, 0, -1, 1]
    np.testing.assert_array_equal(nominal.X, ds.X)
    # already nominal: unchanged object
    assert nominal.with_nominal_class() is nominal


def test_with_nominal_class_leaves_regression_targets_alone(tmp_path):
    fractions = tmp_path / "labels.csv"
    fractions.write_text("a,label\n1,0.5\n2,1.25\n")
    ds = load_dataset(fractions)
    assert ds.with_nominal_class() is ds
    many = tmp_path / "many.csv"
    many.write_text("a,label\n" + "".join(f"{i},{i}\n" for i in range(5)))
    ds = load_dataset(many)
    assert ds.with_nominal_class(max_classes=4) is ds
    assert ds.with_nominal_class(max_classes=5).schema.class_attribute.kind == "nominal"
    declared = tmp_path / "declared.arff"
    declared.write_text("@relation r\n@attribute a numeric\n@attribute t numeric\n@data\n1,0\n2,1\n")
    ds = load_dataset(declared)
    assert ds.format == "arff" and ds.with_nominal_class() is ds


@pytest.mark.parametrize("text,target", [
    ("a,b,c\n1,x,2.5\n3,?,4\n5,y,NA\n", None),  # numeric class last, one missing
    ("a,b,c\n1,x,2.5\n3,?,4\n5,y,NA\n", "b"),  # nominal class in the middle, one missing
])
def test_class_as_feature_equals_reading_without_a_class(tmp_path, text, target):
    path = tmp_path / "d.csv"
    path.write_text(text)
    moved = load_dataset(path, target=target).class_as_feature()
    direct = load_dataset(path, no_class=True)
    assert moved.schema == direct.schema and moved.y is None
    np.testing.assert_array_equal(moved.X, direct.X)  # NaN in the same places
    assert direct.class_as_feature() is direct


def test_old_import_paths_name_the_same_objects():
    """data.py still exports the names that moved to dataset.py and readers/ (issue 27)."""
    import ensemblekit.data as old
    from ensemblekit import dataset
    from ensemblekit.readers import arff

    for name in ("Attribute", "DataError", "Dataset", "Schema", "known_class"):
        assert getattr(old, name) is getattr(dataset, name)
    assert old.write_arff is arff.write_arff
    assert set(old.__all__) <= set(dir(old))


def test_quote_helpers_keep_messages_on_one_line():
    from ensemblekit.dataset import quote_input, quote_names

    assert quote_input("a\nb") == "'a\\nb'"
    assert quote_input("x" * 100) == repr("x" * 57 + "...")
    assert quote_names(["a", "b", "c"], limit=2) == "'a', 'b', ... (1 more)"


def test_a_declared_question_mark_is_a_value_named_question_mark(tmp_path):
    """Weka keeps ``?`` in a value list as a value of that name (scikit-learn's OpenML
    penguins file declares ``sex {MALE,FEMALE,?}``); a ``?`` in the data stays missing."""
    text = ("@relation t\n@attribute sex {MALE,FEMALE,?}\n@attribute class {a,b}\n@data\n"
            "MALE,a\n?,b\nFEMALE,a\n")
    path = tmp_path / "q.arff"
    path.write_text(text)
    ds = load_dataset(path)
    assert ds.schema.attributes[0].values == ("MALE", "FEMALE", "?")
    np.testing.assert_array_equal(ds.X[:, 0], [0.0, np.nan, 1.0])
    out = io.StringIO()  # written back, the value is quoted so that it reads back the same
    write_arff(out, "t", ds.schema.attributes, [["?", "a"]])
    assert "{MALE,FEMALE,'?'}" in out.getvalue()
    again = tmp_path / "again.arff"
    again.write_text(out.getvalue())
    back = load_dataset(again)
    assert back.schema.attributes[0].values == ("MALE", "FEMALE", "?")
    assert back.X[0, 0] == 2.0  # the quoted value, not a missing one
