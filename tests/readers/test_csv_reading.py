"""CSV reading that says what it decided, encodings and gzip (issue 19, acceptance 1-5).

Every file is made in tmp_path from sample_data/iris.arff (or written out by hand), and
read back both through :func:`ensemblekit.data.load_dataset` and the command line.
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import arff
import numpy as np
import pytest

from ensemblekit.api import UsageError, data_files
from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError

from ektesting import support

IRIS = support.data_path("iris.arff")


def _iris_rows():
    doc = arff.load(IRIS.open())
    return [a[0] for a in doc["attributes"]], doc["data"]


def _cell(value, comma: bool) -> str:
    text = repr(value) if isinstance(value, float) else str(value)
    return text.replace(".", ",") if comma and isinstance(value, float) else text


def _iris_csv(delimiter: str = ",", comma: bool = False, header: bool = True) -> str:
    names, rows = _iris_rows()
    lines = [delimiter.join(names)] if header else []
    lines += [delimiter.join(_cell(v, comma) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def _read(path, **options):
    """load_dataset with the notes collected: (dataset, notes)."""
    notes: list[str] = []
    return load_dataset(path, notify=notes.append, **options), notes


def _accuracy(result) -> float:
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)["metrics"]["accuracy"]["rows"][0]
    return row["scores"]["knn"]["mean"]


@pytest.fixture(scope="module")
def iris_arff():
    return load_dataset(IRIS)


# --------------------------------------------------------------------------
# 1. decimal commas
# --------------------------------------------------------------------------
def test_decimal_commas_by_hand(tmp_path):
    path = _write(tmp_path / "e.csv", "x;y;c\n1,5;2;a\n-0,25;3,0;b\n1e3;?;a\n")
    ds, notes = _read(path)
    assert [a.kind for a in ds.schema.attributes] == ["numeric", "numeric", "nominal"]
    np.testing.assert_array_equal(ds.X, [[1.5, 2.0], [-0.25, 3.0], [1000.0, np.nan]])
    assert len(notes) == 1
    assert notes[0].startswith(f"note: {path}: read ',' as the decimal mark in 'x', 'y'")
    assert "'1,5' on line 2" in notes[0] and "--decimal ." in notes[0]


def test_decimal_point_forced_keeps_commas_as_text(tmp_path):
    path = _write(tmp_path / "e.csv", "x;c\n1,5;a\n2,5;b\n")
    ds, notes = _read(path, decimal=".")
    assert ds.schema.attributes[0].values == ("1,5", "2,5")
    assert not any("decimal" in n for n in notes)


def test_decimal_comma_forced_for_a_tab_file(tmp_path):
    path = _write(tmp_path / "e.tsv", "x\tc\n1,5\ta\n2\tb\n")
    assert load_dataset(path).schema.attributes[0].kind == "nominal"  # auto: ';' files only
    ds, notes = _read(path, decimal=",")
    np.testing.assert_array_equal(ds.X[:, 0], [1.5, 2.0])
    assert notes == []  # asked for, so not a decision to report


def test_euro_iris_is_numeric_and_equals_the_arff(tmp_path, iris_arff):
    path = _write(tmp_path / "euro.csv", _iris_csv(";", comma=True))
    ds, notes = _read(path)
    assert [a.kind for a in ds.schema.attributes] == ["numeric"] * 4 + ["nominal"]
    np.testing.assert_array_equal(ds.X, iris_arff.X)
    assert ds.class_values == iris_arff.class_values
    np.testing.assert_array_equal(ds.y, iris_arff.y)
    assert len(notes) == 1 and "decimal mark" in notes[0]


def test_euro_iris_evaluate_knn_as_the_arff(tmp_path, cli):
    """Acceptance 1: the same accuracy as on the ARFF file (same folds, same rows)."""
    path = _write(tmp_path / "euro.csv", _iris_csv(";", comma=True))
    protocol = ["--cv", "3", "--repeats", "1", "--format", "json"]
    euro = cli("evaluate", "knn", path, *protocol)
    assert "read ',' as the decimal mark" in euro.stderr
    assert _accuracy(euro) == _accuracy(cli("evaluate", "knn", IRIS, *protocol))
    assert _accuracy(euro) > 0.9
    forced = cli("evaluate", "knn", path, *protocol, "--decimal", ".")
    assert "decimal mark" not in forced.stderr  # read as text, as before the fix
    assert cli("info", path, "--decimal", ";").exit_code == 2


# --------------------------------------------------------------------------
# 2. missing tokens and mostly numeric columns
# --------------------------------------------------------------------------
def _column(values: list[str]) -> str:
    return "x,c\n" + "".join(f"{v},{'ab'[i % 2]}\n" for i, v in enumerate(values))


@pytest.mark.parametrize("token", ["", "?", "NA", "na", "N/A", "n/a", "NaN", "nan", "null", "None",
                                   "-", "NULL", "#N/A", "#N/A N/A", "#NA", "<NA>"])
def test_missing_tokens_are_missing_silently(tmp_path, token):
    values = [str(i) for i in range(10)]
    values[3] = token
    ds, notes = _read(_write(tmp_path / "t.csv", _column(values)))
    assert ds.schema.attributes[0].kind == "numeric"
    expected = np.arange(10.0)
    expected[3] = np.nan
    np.testing.assert_array_equal(ds.X[:, 0], expected)
    assert notes == []


def test_negative_numbers_are_not_the_dash_token(tmp_path):
    ds, _ = _read(_write(tmp_path / "t.csv", _column(["-1", "-", "-2.5"])))
    np.testing.assert_array_equal(ds.X[:, 0], [-1.0, np.nan, -2.5])


def test_one_word_makes_the_column_nominal_with_one_note(tmp_path):
    values = [str(i) for i in range(20)]
    values[4] = "n/a"  # missing, said nothing about
    values[6] = "abc"  # line 8: the header is line 1, values[i] is on line i + 2
    path = _write(tmp_path / "t.csv", _column(values))
    ds, notes = _read(path)
    assert ds.schema.attributes[0].kind == "nominal"
    assert notes == [f"note: {path}: column 'x' is read as nominal, although 18 of its 19 values are "
                     "numbers: line 8 holds 'abc'; if it means missing, add --missing-values abc"]
    again, notes = _read(path, missing_values=["abc"])
    assert again.schema.attributes[0].kind == "numeric" and notes == []
    assert np.isnan(again.X[[4, 6], 0]).all() and again.X[7, 0] == 7.0


def test_thousands_separator_note(tmp_path):
    values = [str(i) for i in range(10)]
    values[2] = '"3,240"'
    ds, notes = _read(_write(tmp_path / "t.csv", _column(values)))
    assert ds.schema.attributes[0].kind == "nominal"
    assert len(notes) == 1
    assert "line 4 holds '3,240'" in notes[0] and "thousands separator" in notes[0]


def test_a_mostly_text_column_gets_no_note(tmp_path):
    _, notes = _read(_write(tmp_path / "t.csv", _column(["1", "2", "x", "y", "z"])))
    assert notes == []


def test_note_of_an_ignored_column_is_not_given(tmp_path):
    values = [str(i) for i in range(20)]
    values[0] = "abc"
    path = _write(tmp_path / "t.csv", "y," + _column(values).replace("\n", "\n1,")[:-2])
    _, notes = _read(path, ignore=["x"])
    assert notes == []


def test_mostly_numeric_note_on_the_command_line(tmp_path, cli):
    values = [str(i) for i in range(20)]
    values[6] = "abc"
    path = _write(tmp_path / "t.csv", _column(values))
    result = cli("info", path, "--format", "json")
    assert result.exit_code == 0
    assert result.stderr.count("note:") == 1 and "line 8 holds 'abc'" in result.stderr
    result = cli("info", path, "--format", "json", "--missing-values", "abc",
                 "--missing-values", "zzz")
    assert result.stderr == ""
    assert json.loads(result.stdout)["attributes"][0]["type"] == "numeric"


# --------------------------------------------------------------------------
# 3. header row
# --------------------------------------------------------------------------
def test_headerless_iris_is_detected(tmp_path, iris_arff):
    path = _write(tmp_path / "h.csv", _iris_csv(header=False))
    ds, notes = _read(path)
    assert [a.name for a in ds.schema.attributes] == ["att1", "att2", "att3", "att4", "att5"]
    assert ds.n_instances == 150
    np.testing.assert_array_equal(ds.X, iris_arff.X)
    assert ds.lines[0] == 1
    assert len(notes) == 1
    assert notes[0].startswith(f"note: {path}: the first row (line 1) holds data")
    assert "att1..att5" in notes[0] and "--header" in notes[0]


def test_all_numeric_headerless_file(tmp_path, cli):
    text = "".join(f"{i},{i * 0.5},{i % 3}\n" for i in range(20))
    path = _write(tmp_path / "n.csv", text)
    ds, notes = _read(path)
    assert ds.n_instances == 20 and len(notes) == 1
    np.testing.assert_array_equal(ds.X[:, 1], np.arange(20) * 0.5)
    forced, notes = _read(path, header=False)
    assert forced.n_instances == 20 and notes == []
    result = cli("info", path, "--no-header", "--format", "json")
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["instances"] == 20


def test_header_forced_reads_number_names(tmp_path):
    path = _write(tmp_path / "n.csv", "1,2,3\n4,5,6\n7,8,9\n")
    ds, notes = _read(path, header=True)
    assert [a.name for a in ds.schema.attributes] == ["1", "2", "3"]
    assert ds.n_instances == 2 and notes == []


def test_a_real_header_is_kept(tmp_path):
    ds, notes = _read(_write(tmp_path / "t.csv", _iris_csv()))
    assert ds.schema.attributes[0].name == "sepallength" and ds.n_instances == 150
    assert notes == []


def test_numbers_that_do_not_fit_below_still_ask_for_a_header(tmp_path):
    with pytest.raises(DataError, match=r"line 1: no header row.*--no-header"):
        load_dataset(_write(tmp_path / "t.csv", "1,2,3\na,b,c\nd,e,f\n"))


def test_no_header_counts_fields_from_the_first_row(tmp_path):
    with pytest.raises(DataError, match=r"line 2: expected 2 fields \(as in the first row on line 1\)"):
        load_dataset(_write(tmp_path / "t.csv", "1,2\n3,4,5\n"), header=False)


# --------------------------------------------------------------------------
# 4. gzip
# --------------------------------------------------------------------------
@pytest.fixture
def gz_files(tmp_path):
    folder = tmp_path / "gz"
    folder.mkdir()
    arff_gz = _write(folder / "iris.arff.gz", gzip.compress(IRIS.read_bytes()))
    csv_gz = _write(folder / "flowers.csv.gz", gzip.compress(_iris_csv().encode()))
    return folder, arff_gz, csv_gz


def test_gzip_files_read_as_their_inner_format(gz_files, iris_arff):
    _, arff_gz, csv_gz = gz_files
    for path, name in ((arff_gz, "iris"), (csv_gz, "flowers")):
        ds = load_dataset(path)
        assert ds.name == name
        np.testing.assert_array_equal(ds.X, iris_arff.X)
        np.testing.assert_array_equal(ds.y, iris_arff.y)
    assert load_dataset(arff_gz).format == "arff" and load_dataset(csv_gz).format == "csv"


def test_gzip_info_fit_predict(gz_files, tmp_path, cli):
    _, arff_gz, csv_gz = gz_files
    for path in (arff_gz, csv_gz):
        info = cli("info", path, "--format", "json")
        assert info.exit_code == 0, info.output
        assert json.loads(info.stdout)["instances"] == 150
    plain_model, gz_model = tmp_path / "plain.ekm", tmp_path / "gz.ekm"
    assert cli("fit", "c45", IRIS, "-o", plain_model).exit_code == 0
    assert cli("fit", "c45", arff_gz, "-o", gz_model).exit_code == 0
    expected = cli("predict", plain_model, IRIS, "--proba").stdout
    assert expected.count("\n") == 151
    for model in (plain_model, gz_model):
        for path in (arff_gz, csv_gz):
            result = cli("predict", model, path, "--proba")
            assert result.exit_code == 0, result.output
            assert result.stdout == expected


def test_gzip_in_a_compared_folder(gz_files, cli):
    folder, _, _ = gz_files
    assert [Path(f).name for f, _ in data_files([folder])] == ["flowers.csv.gz", "iris.arff.gz"]
    result = cli("compare", "knn", "c45", "--data", folder, "--cv", "3", "--repeats", "1",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["metrics"]["accuracy"]["rows"]
    # the CSV and the ARFF hold the same data (the same fingerprint): compared once, with a note
    # (issue 31; before, the same scores were reported twice)
    assert [r["dataset"] for r in rows] == ["flowers"]
    assert "iris.arff.gz holds the same data as" in result.stderr


def test_empty_folder_message_names_gz(tmp_path):
    with pytest.raises(UsageError, match=r"\.gz"):
        data_files([tmp_path])


def test_gzip_on_stdin(gz_files):
    _, arff_gz, csv_gz = gz_files
    ds = load_dataset("-", stdin=io.BytesIO(arff_gz.read_bytes()))
    assert ds.name == "iris" and ds.format == "arff" and ds.n_instances == 150
    ds = load_dataset("-", stdin=io.BytesIO(csv_gz.read_bytes()))
    assert ds.format == "csv" and ds.n_instances == 150


def test_gzip_on_a_real_pipe(gz_files):
    _, arff_gz, _ = gz_files
    exe = Path(sys.executable).parent / "ensemblekit"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "ensemblekit"]
    proc = subprocess.run([*command, "info", "-", "--format", "json"], input=arff_gz.read_bytes(),
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["instances"] == 150


def test_multi_member_gzip(tmp_path):
    text = _iris_csv().encode()
    half = text.index(b"\n", len(text) // 2) + 1
    path = _write(tmp_path / "m.csv.gz", gzip.compress(text[:half]) + gzip.compress(text[half:]))
    assert load_dataset(path).n_instances == 150


def test_gzip_bomb_is_refused(tmp_path, cli, monkeypatch):
    # 64 MiB of one repeated row compresses to about 64 KiB (a ratio of 1000).
    row = b"1,2,3\n"
    bomb = gzip.compress(b"a,b,c\n" + row * ((64 << 20) // len(row)), compresslevel=9)
    assert len(bomb) < 200_000
    path = _write(tmp_path / "bomb.csv.gz", bomb)
    monkeypatch.setenv("ENSEMBLEKIT_MAX_DATA_MB", "16")
    result = cli("info", path)
    assert result.exit_code == 2
    assert f"error: {path}: the gzip data decompresses to more than 16 MiB" in result.stderr
    assert "ENSEMBLEKIT_MAX_DATA_MB" in result.stderr and result.stdout == ""
    monkeypatch.setenv("ENSEMBLEKIT_MAX_DATA_MB", "lots")
    with pytest.raises(DataError, match="ENSEMBLEKIT_MAX_DATA_MB='lots'"):
        load_dataset(path)


def test_damaged_gzip_is_a_data_error(tmp_path, cli):
    data = gzip.compress(_iris_csv().encode())
    path = _write(tmp_path / "cut.csv.gz", data[: len(data) // 2])
    result = cli("info", path)
    assert result.exit_code == 2
    assert f"error: {path}: cannot decompress the gzip data" in result.stderr


# --------------------------------------------------------------------------
# 5. encodings
# --------------------------------------------------------------------------
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-8", "utf-32-le"])
def test_byte_order_marks(tmp_path, codec, iris_arff):
    text = "\ufeff" + _iris_csv().replace("\n", "\r\n")
    ds, notes = _read(_write(tmp_path / "bom.csv", text.encode(codec)))
    assert ds.n_instances == 150 and ds.schema.attributes[0].name == "sepallength"
    np.testing.assert_array_equal(ds.X, iris_arff.X)
    assert list(ds.lines[:2]) == [2, 3] and notes == []


def test_utf16_arff_with_bom(tmp_path, iris_arff):
    ds = load_dataset(_write(tmp_path / "iris.arff", b"\xff\xfe" + IRIS.read_text().encode("utf-16-le")))
    np.testing.assert_array_equal(ds.X, iris_arff.X)


def test_bom_that_lies_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not valid UTF-16"):
        load_dataset(_write(tmp_path / "t.csv", b"\xff\xfea\x00,\x00b\x00\n\x00\x00\xd8"))


def test_latin1_fallback_note(tmp_path, cli):
    path = _write(tmp_path / "l.csv", "name,c\nMüller,a\nGarçon,b\n".encode("latin-1"))
    ds, notes = _read(path)
    assert ds.schema.attributes[0].values == ("Garçon", "Müller")
    assert notes == [f"note: {path}: not UTF-8 (byte 0xfc on line 2), so it is read as Latin-1"]
    result = cli("info", path)
    assert result.exit_code == 0 and result.stderr.startswith("note: ")

