"""CSV types on request, pandas' index column, space-separated files (issue 32, "CSV").

Each case of the issue's "What was found" under CSV is read here as the user met it:
a whole-number class whose kind was guessed, pandas' ``to_csv()`` with its index,
``DataFrame.to_string()`` and R's ``write.table(sep=" ")`` output, and ``nan``.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError
from ensemblekit.errors import InputError
from ensemblekit.readers.columns import resolve_types, type_requests
from ensemblekit.streaming import iter_chunks

NAMES = ["id", "Sepal", "petal", "colour", "year"]


def _read(tmp_path, text, name="t.csv", **kw):
    path = tmp_path / name
    path.write_text(text)
    notes: list[str] = []
    ds = load_dataset(path, notify=notes.append, **kw)
    return ds, [n.replace(f"{path}: ", "") for n in notes]


def _kinds(ds):
    return [(a.name, a.kind, a.values) for a in ds.schema.attributes]


# --------------------------------------------------------------------------- column lists
@pytest.mark.parametrize("given, expected", [
    ({"nominal": "1,3-4"}, {0: "nominal", 2: "nominal", 3: "nominal"}),
    ({"nominal": ["first", "last"]}, {0: "nominal", 4: "nominal"}),
    ({"numeric": "4-last"}, {3: "numeric", 4: "numeric"}),
    ({"string": "sepal", "nominal": "YEAR"}, {1: "string", 4: "nominal"}),  # any case
    ({"date": "colour:yyyy"}, {3: "date"}),
    ({"nominal": "first-last", "numeric": ()}, dict.fromkeys(range(5), "nominal")),
])
def test_column_lists_as_weka_ranges_or_names(given, expected):
    found = resolve_types(type_requests(**given), NAMES, "t.csv")
    assert {k: t.kind for k, t in enumerate(found) if t is not None} == expected


def test_a_date_list_keeps_its_format_with_colons():
    found = resolve_types(type_requests(date=["2,colour:dd.MM.yyyy HH:mm", "year"]), NAMES, "t.csv")
    assert [None if t is None else t.date_format for t in found] == [
        None, "dd.MM.yyyy HH:mm", None, "dd.MM.yyyy HH:mm", "yyyy-MM-dd'T'HH:mm:ss"]


@pytest.mark.parametrize("given, message", [
    ({"nominal": "6"}, "t.csv: --nominal 6: there are 5 columns, so no column 6"),
    ({"numeric": "2-9"}, "t.csv: --numeric 2-9: there are 5 columns, so no column 9"),
    ({"nominal": "yaer"}, "t.csv: --nominal: no column named 'yaer' (did you mean 'year'?); "
                          "columns are: 'id', 'Sepal', 'petal', 'colour', 'year'"),
    ({"nominal": "year", "numeric": "5"},
     "t.csv: column 'year' is given both --nominal and --numeric; give it one"),
    ({"date": ["1:yyyy", "id:yy"]}, "t.csv: column 'id' is given two date formats; give it one"),
])
def test_unknown_or_contradicting_columns_are_refused_by_name(given, message):
    with pytest.raises(DataError) as caught:
        resolve_types(type_requests(**given), NAMES, "t.csv")
    assert str(caught.value) == message


@pytest.mark.parametrize("given, message", [
    ({"nominal": "1,,3"}, "--nominal 1,,3: an empty column in the list"),
    ({"nominal": "0-2"}, "--nominal 0-2: positions start at 1 (as Weka's), not 0"),
    ({"numeric": "5-3"}, "--numeric 5-3: the range '5-3' runs backwards; write it low-high"),
    ({"numeric": "last-2"}, "--numeric last-2: the range 'last-2' runs backwards; write it low-high"),
    ({"date": "1:yyyy-MM-ddTHH"}, "'T' is not a pattern letter"),
])
def test_lists_that_cannot_be_read_are_refused_before_any_file(given, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        type_requests(**given)


# --------------------------------------------------------------------------- a whole-number class
PENGUINS = "bill,island,year\n" + "".join(
    f"{30 + i},{('Biscoe', 'Dream')[i % 2]},{(2009, 2007, 2008, 10)[i % 4]}\n" for i in range(8))


def test_a_whole_number_class_is_nominal_on_request(tmp_path):
    guessed, _ = _read(tmp_path, PENGUINS)
    assert guessed.schema.class_attribute.kind == "numeric"     # the guess
    ds, notes = _read(tmp_path, PENGUINS, nominal="year")
    assert notes == []
    assert _kinds(ds)[2] == ("year", "nominal", ("10", "2007", "2008", "2009"))  # as numbers
    assert ds.y.tolist() == [3, 1, 2, 0, 3, 1, 2, 0]
    assert ds.typed == frozenset({"year"})


def test_a_whole_number_class_stays_numeric_on_request(tmp_path):
    guessed, _ = _read(tmp_path, PENGUINS)
    assert guessed.with_nominal_class().schema.class_attribute.kind == "nominal"  # classifiers' guess
    ds, _ = _read(tmp_path, PENGUINS, numeric="last")
    kept = ds.with_nominal_class()
    assert kept is ds and kept.schema.class_attribute.kind == "numeric"
    assert ds.y.tolist() == [2009.0, 2007.0, 2008.0, 10.0] * 2


def test_a_text_column_on_request_numeric_names_its_first_non_number(tmp_path):
    with pytest.raises(DataError) as caught:
        _read(tmp_path, PENGUINS, numeric="island")
    assert str(caught.value).endswith("t.csv, line 2: value 'Biscoe' is not numeric for "
                                      "attribute 'island'")


def test_string_columns_are_left_out_with_the_note_or_made_nominal(tmp_path):
    text = "name,x,cls\n" + "".join(f"n{i},{i},{'ab'[i % 2]}\n" for i in range(4))
    ds, notes = _read(tmp_path, text, string="name")
    assert [a.name for a in ds.schema.attributes] == ["x", "cls"]
    assert notes == ["note: string attributes are left out (free text, which no algorithm here "
                     "reads): 'name'; --string-to-nominal reads them as nominal"]
    ds, _ = _read(tmp_path, text, string="name", string_to_nominal=True)
    assert _kinds(ds)[0] == ("name", "nominal", ("n0", "n1", "n2", "n3"))
    ds, _ = _read(tmp_path, text, string="1", allow_string=True)
    assert _kinds(ds)[0] == ("name", "string", ("n0", "n1", "n2", "n3"))


def test_a_date_column_reads_milliseconds_and_names_a_bad_value(tmp_path, monkeypatch):
    import time
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        text = "when,cls\n1970-01-02,a\n1969-12-31,b\n?,a\n2000-02-29,b\n"
        ds, _ = _read(tmp_path, text, date="when:yyyy-MM-dd")
        assert _kinds(ds)[0] == ("when", "numeric", ())
        assert ds.X[:, 0].tolist()[:2] == [86_400_000.0, -86_400_000.0]
        assert np.isnan(ds.X[2, 0]) and ds.X[3, 0] == 951_782_400_000.0
        with pytest.raises(DataError) as caught:
            _read(tmp_path, text.replace("2000-02-29", "2000-02-30"), date="when:yyyy-MM-dd")
        assert str(caught.value).endswith("t.csv, line 5: value '2000-02-30' of attribute 'when' "
                                          "is not a date in the format 'yyyy-MM-dd'")
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_date_column_is_read_against_a_schema(tmp_path):
    text = "when,x,cls\n" + "".join(f"2000-01-0{i + 1},{i},{'ab'[i % 2]}\n" for i in range(6))
    ds, _ = _read(tmp_path, text, date="when:yyyy-MM-dd")
    chunks = list(iter_chunks(tmp_path / "t.csv", ds.schema, chunk_rows=4, date="when:yyyy-MM-dd"))
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), ds.X)
    assert ds.schema.features[0].date_format == "yyyy-MM-dd"  # the schema keeps the pattern
    alone = list(iter_chunks(tmp_path / "t.csv", ds.schema, chunk_rows=4))
    np.testing.assert_array_equal(np.vstack([c.X for c in alone]), ds.X)


def test_arff_files_keep_their_declared_types(tmp_path):
    text = "@relation r\n@attribute year numeric\n@attribute c {a,b}\n@data\n2007,a\n2008,b\n"
    ds, _ = _read(tmp_path, text, name="t.arff", nominal="year")
    assert _kinds(ds)[0] == ("year", "numeric", ())


# --------------------------------------------------------------------------- pandas' index
INDEXED = ",a,b,cls\n" + "".join(f"{i},{i * 0.5},{'xy'[i % 2]},{'pq'[i // 3]}\n" for i in range(6))
INDEX_NOTE = ("note: the first column (unnamed) numbers the rows from 0: a row index, as pandas' "
              "to_csv() and R's write.table() write one, so it is left out")


def test_pandas_to_csv_with_its_index_loads(tmp_path):
    ds, notes = _read(tmp_path, INDEXED)
    assert notes == [INDEX_NOTE]
    assert _kinds(ds) == [("a", "numeric", ()), ("b", "nominal", ("x", "y")),
                          ("cls", "nominal", ("p", "q"))]
    assert ds.X[:, 0].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert ds.lines.tolist() == [2, 3, 4, 5, 6, 7]


def test_an_index_read_back_as_unnamed_0_is_left_out_too(tmp_path):
    ds, notes = _read(tmp_path, INDEXED.replace(",a", "Unnamed: 0,a", 1))
    assert notes == [INDEX_NOTE.replace("(unnamed)", "('Unnamed: 0')")]
    assert [a.name for a in ds.schema.attributes] == ["a", "b", "cls"]


def test_positions_count_the_columns_read_after_the_index(tmp_path):
    ds, _ = _read(tmp_path, INDEXED, nominal="1")
    assert _kinds(ds)[0] == ("a", "nominal", ("0.0", "0.5", "1.0", "1.5", "2.0", "2.5"))


def test_an_unnamed_column_that_is_not_an_index_is_still_refused(tmp_path):
    text = INDEXED.replace("\n3,", "\n7,")
    with pytest.raises(DataError, match=r"t.csv, line 1: column 1 of the header has no name"):
        _read(tmp_path, text)


def test_the_index_is_left_out_of_predicted_chunks_by_both_engines(tmp_path, fast_engine):
    rows = "".join(f"{i},{i % 7}.25,{'xy'[i % 2]},{'pq'[i % 3 == 0]}\n" for i in range(30000))
    (tmp_path / "big.csv").write_text(",a,b,cls\n" + rows)
    schema = _read(tmp_path, INDEXED)[0].schema
    slow = list(iter_chunks(tmp_path / "big.csv", schema, read_class=False))
    spy, force = fast_engine
    made = spy("fast_csv_table")
    force()
    quick = list(iter_chunks(tmp_path / "big.csv", schema, read_class=False))
    assert any(made)
    X = np.vstack([c.X for c in slow])
    np.testing.assert_array_equal(np.vstack([c.X for c in quick]), X)
    assert X.shape == (30000, 2) and X[:8, 0].tolist() == [0.25, 1.25, 2.25, 3.25, 4.25, 5.25, 6.25, 0.25]


# --------------------------------------------------------------------------- spaces
TO_STRING = ("     a     b    cls\n"
             "0  1.5  red     p\n"
             "1  2.5  NaN     q\n"
             "2  3.5  blue    p\n")
SPACE_NOTE = ("note: line 1 holds no comma, semicolon or TAB, so the columns are read as separated "
              "by runs of spaces")


def test_dataframe_to_string_output_is_read_as_columns(tmp_path):
    ds, notes = _read(tmp_path, TO_STRING, name="t.txt")
    assert notes == [SPACE_NOTE, INDEX_NOTE]
    assert _kinds(ds) == [("a", "numeric", ()), ("b", "nominal", ("blue", "red")),
                          ("cls", "nominal", ("p", "q"))]
    assert ds.X[:, 0].tolist() == [1.5, 2.5, 3.5] and np.isnan(ds.X[1, 1])


def test_r_write_table_with_spaces_and_row_names_is_read_as_columns(tmp_path):
    text = ('"len" "kind" "cls"\n"1" 4.2 "big one" "p"\n"2" 11.5 "small" "q"\n'
            '"3" 7 "big one" "p"\n')
    ds, notes = _read(tmp_path, text, name="t.txt")
    assert notes == [SPACE_NOTE, INDEX_NOTE.replace("from 0", "from 1")]
    assert _kinds(ds) == [("len", "numeric", ()), ("kind", "nominal", ("big one", "small")),
                          ("cls", "nominal", ("p", "q"))]
    assert ds.X[:, 0].tolist() == [4.2, 11.5, 7.0]


def test_space_separated_chunks_read_as_the_whole_file(tmp_path):
    ds, _ = _read(tmp_path, TO_STRING, name="t.txt")
    chunks = list(iter_chunks(tmp_path / "t.txt", ds.schema, chunk_rows=2))
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), ds.X)


def test_one_column_without_spaces_stays_one_column(tmp_path):
    ds, notes = _read(tmp_path, "cls\np\nq\np\n")
    assert notes == [] and _kinds(ds) == [("cls", "nominal", ("p", "q"))]


# --------------------------------------------------------------------------- nan
def test_lower_case_nan_is_missing_in_a_numeric_column(tmp_path):
    ds, notes = _read(tmp_path, "x,cls\n1.5,a\nnan,b\n2.5,a\n")
    assert notes == [] and _kinds(ds)[0] == ("x", "numeric", ())
    assert np.isnan(ds.X[1, 0]) and ds.X[[0, 2], 0].tolist() == [1.5, 2.5]
