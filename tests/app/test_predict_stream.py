"""Streaming ``predict`` (issue 19, acceptance 6 and 8).

The file is read in chunks; these tests make the chunks tiny (7 rows, 3 rows per
model call) so that sample files take many chunks, and check the output against
the whole-file reader: the file read at once by ``load_data(..., schema=...)``,
predicted as one Dataset and rendered by ``format_predictions``.
"""

from __future__ import annotations

import json

import pytest

from ensemblekit import api, streaming
from ensemblekit.app import predicting
from ensemblekit.dataset import DataError, Schema
from ensemblekit.readers import text as readers_text
from ensemblekit.results import prediction_rows
from ensemblekit.writers import OUTPUT_FORMATS, format_predictions

from ektesting.support import data_path, run_cli

FORMATS = OUTPUT_FORMATS


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(streaming, "CHUNK_ROWS", 7)
    monkeypatch.setattr(predicting, "PREDICT_CHUNK", 3)


def _iris_csv(path, *, class_values=None, drop_class=False, bad_line=None):
    """iris as CSV (header on line 1, row i on line i + 1), built from the ARFF file."""
    ds = api.load_data(data_path("iris.arff"))
    names = [a.name for a in ds.schema.attributes]
    classes = ds.schema.class_attribute.values
    lines = [",".join(names[:-1] if drop_class else names)]
    for i, (x, y) in enumerate(zip(ds.X, ds.y)):
        cells = [repr(float(v)) for v in x]
        if bad_line is not None and i + 2 == bad_line:
            cells[1] = "oops"
        if not drop_class:
            cells.append(classes[y] if class_values is None else class_values(i))
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    out = {}
    for algo, extra in (("c45", ()), ("kmeans", ("-k", "3"))):
        path = folder / f"{algo}.ekm"
        result = run_cli("fit", algo, data_path("iris.arff"), "-o", path, *extra)
        assert result.exit_code == 0, result.output
        out[algo] = path
    return out


def _whole_file_text(model, data, fmt, proba):
    """Output of the whole-file route: read at once, predict one Dataset, render all rows."""
    schema = Schema.from_dict(api.read_model_metadata(model)["schema"])
    ds = api.load_data(data, schema=schema)
    p = api.predict(model, ds, proba=proba)
    rows = prediction_rows(p.predictions, p.probabilities, p.classes)
    return format_predictions(rows, p.columns, fmt, prediction_values=p.prediction_values,
                              numeric_prediction=p.task == "regression")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("proba", [False, True])
@pytest.mark.parametrize("kind", ["arff", "csv"])
@pytest.mark.parametrize("stdin", [False, True])
def test_chunked_output_equals_whole_file_output(small_chunks, models, tmp_path, fmt, proba, kind,
                                                 stdin):
    data = data_path("iris.arff") if kind == "arff" else _iris_csv(tmp_path / "iris.csv")
    expected = _whole_file_text(models["c45"], data, fmt, proba)
    args = ["predict", models["c45"], "-" if stdin else data, "--format", fmt]
    if proba:
        args.append("--proba")
    result = run_cli(*args, input=data.read_bytes() if stdin else None)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected
    assert expected.count("\n") >= 150  # every row is there: 150 rows in 22 chunks
    if fmt == "json":
        assert len(json.loads(result.stdout)) == 150


# each format's writer is shared with the classifier test above; csv and json in the fast subset
@pytest.mark.parametrize("fmt", [f if f in ("csv", "json") else pytest.param(f, marks=pytest.mark.slow)
                                 for f in FORMATS])
def test_chunked_clustering_output_equals_whole_file_output(small_chunks, models, fmt):
    data = data_path("iris.arff")
    result = run_cli("predict", models["kmeans"], data, "--format", fmt)
    assert result.exit_code == 0, result.output
    assert result.stdout == _whole_file_text(models["kmeans"], data, fmt, False)


def test_format_prediction_stream_joins_to_format_predictions():
    """Pieces of any chunking join to the whole text, for every format (also one-row chunks)."""
    import numpy as np

    from ensemblekit.results import Prediction
    from ensemblekit.writers import format_prediction_stream

    classes = ("a", "b, c")  # a value the CSV writer quotes
    labels = ["a", "b, c", "a", "a", "b, c"]
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [1.0, 0.0], [1 / 3, 2 / 3]])
    whole = Prediction("classification", labels, proba, classes, classes)
    for fmt in FORMATS:
        expected = format_predictions(prediction_rows(labels, proba, classes), whole.columns, fmt,
                                      prediction_values=classes)
        for cuts in ([0, 5], [0, 1, 2, 3, 4, 5], [0, 2, 5]):
            parts = [Prediction("classification", labels[a:b], proba[a:b], classes, classes)
                     for a, b in zip(cuts, cuts[1:])]
            assert "".join(format_prediction_stream(parts, fmt)) == expected, (fmt, cuts)


@pytest.mark.parametrize("kind", ["arff", "csv"])
def test_bad_value_in_a_later_chunk_has_the_whole_file_message(small_chunks, models, tmp_path, kind):
    bad_line = 130  # row 129: chunk 19 of 7 rows
    if kind == "csv":
        data = _iris_csv(tmp_path / "bad.csv", bad_line=bad_line)
    else:
        lines = data_path("iris.arff").read_text().split("\n")
        first_row = next(i for i, t in enumerate(lines) if t.strip().lower().startswith("@data")) + 1
        bad_line = first_row + 129  # 1-based line of the 130th data row (no blank lines in it)
        cells = lines[bad_line - 1].split(",")
        cells[1] = "oops"
        lines[bad_line - 1] = ",".join(cells)
        data = tmp_path / "bad.arff"
        data.write_text("\n".join(lines))
    schema = Schema.from_dict(api.read_model_metadata(models["c45"])["schema"])
    with pytest.raises(DataError) as whole:
        api.load_data(data, schema=schema)
    assert whole.value.line == bad_line
    result = run_cli("predict", models["c45"], data)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.rstrip().endswith(str(whole.value))
    # the rows of the chunks before the fault were written already
    rows_before = 129 if kind == "arff" else bad_line - 2
    assert result.stdout.count("\n") == 1 + 7 * (rows_before // 7)


def test_error_with_output_file_leaves_nothing(small_chunks, models, tmp_path):
    data = _iris_csv(tmp_path / "bad.csv", bad_line=140)
    out = tmp_path / "pred.csv"
    result = run_cli("predict", models["c45"], data, "-o", out)
    assert result.exit_code == 2
    assert "line 140" in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [data]  # no temporary file either
    out.write_text("old\n")
    result = run_cli("predict", models["c45"], data, "-o", out)
    assert result.exit_code == 2
    assert out.read_text() == "old\n"


def test_output_file_gets_the_whole_output(small_chunks, models, tmp_path):
    out = tmp_path / "pred.json"
    result = run_cli("predict", models["c45"], data_path("iris.arff"), "--proba", "--format", "json",
                     "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_text() == _whole_file_text(models["c45"], data_path("iris.arff"), "json", True)


def test_class_column_values_do_not_matter(small_chunks, models, tmp_path):
    """Unknown class values, '?' and no class column at all give the same output (exit 0)."""
    known = run_cli("predict", models["c45"], _iris_csv(tmp_path / "known.csv"), "--proba")
    assert known.exit_code == 0, known.output
    variants = {
        "unknown": _iris_csv(tmp_path / "unknown.csv", class_values=lambda i: "unknown"),
        "mixed": _iris_csv(tmp_path / "mixed.csv", class_values=lambda i: ("x", "?", "Iris-setosa")[i % 3]),
        "missing": _iris_csv(tmp_path / "missing.csv", class_values=lambda i: "?"),
        "absent": _iris_csv(tmp_path / "absent.csv", drop_class=True),
    }
    for name, path in variants.items():
        result = run_cli("predict", models["c45"], path, "--proba")
        assert result.exit_code == 0, (name, result.output)
        assert result.stdout == known.stdout, name


def test_evaluate_still_refuses_an_unknown_class_value(models, tmp_path):
    data = _iris_csv(tmp_path / "unknown.csv", class_values=lambda i: "unknown" if i == 9 else
                     ("Iris-setosa", "Iris-versicolor", "Iris-virginica")[i // 50])
    result = run_cli("evaluate", models["c45"], data)
    assert result.exit_code == 2
    assert "line 11" in result.stderr and "'unknown'" in result.stderr


def test_quoted_fields_and_blank_lines_across_chunk_edges(tmp_path):
    """A quoted field with a comma or a line end, and blank lines, read as in the whole file."""
    rows = []
    for i in range(40):
        colour = ('"red, dark"', "blue", '"green\nish"')[i % 3]
        rows.append(f"{i % 5}.5,{colour},{'yes' if i % 2 else 'no'}")
        if i % 6 == 0:
            rows.append("")
    text = "x,colour,class\n" + "\n".join(rows) + "\n\n"
    path = tmp_path / "q.csv"
    path.write_text(text)
    whole = api.load_data(path)
    for size in (1, 2, 3, 7, 100):
        chunks = list(streaming.iter_chunks(path, whole.schema, chunk_rows=size))
        assert all(1 <= c.X.shape[0] <= size for c in chunks)
        import numpy as np

        assert np.array_equal(np.concatenate([c.X for c in chunks]), whole.X, equal_nan=True)
        assert np.array_equal(np.concatenate([c.lines for c in chunks]), whole.lines)
        assert np.array_equal(np.concatenate([c.y for c in chunks]), whole.y)


def test_sparse_and_comment_lines_in_arff(tmp_path):
    import numpy as np

    text = ("@relation s\n@attribute a numeric\n@attribute b {x,y}\n@attribute c numeric\n"
            "@attribute class {p,q}\n@data\n% comment\n"
            + "\n".join(("{0 1.5,3 q}" if i % 4 == 0 else f"{i},y,?,p") + ("\n" if i % 5 == 0 else "")
                        for i in range(30)) + "\n")
    path = tmp_path / "s.arff"
    path.write_text(text)
    whole = api.load_data(path)
    for size in (1, 4, 9):
        chunks = list(streaming.iter_chunks(path, whole.schema, chunk_rows=size))
        assert np.array_equal(np.concatenate([c.X for c in chunks]), whole.X, equal_nan=True)
        assert np.array_equal(np.concatenate([c.lines for c in chunks]), whole.lines)


@pytest.mark.slow  # reads 42,000 rows under tracemalloc
def test_memory_does_not_grow_with_rows(tmp_path, monkeypatch):
    """The reader holds one chunk: reading 20x the rows takes no more peak Python memory."""
    import tracemalloc

    monkeypatch.setattr(readers_text, "_BLOCK", 4096)  # bytes read at a time, far below both files

    schema = None
    peaks = []
    for n in (2_000, 40_000):
        path = tmp_path / f"r{n}.csv"
        path.write_text("a,b,class\n" + "".join(f"{i}.25,{i % 7},{'pq'[i % 2]}\n" for i in range(n)))
        if schema is None:
            schema = api.load_data(path).schema
        tracemalloc.start()
        rows = sum(c.X.shape[0] for c in streaming.iter_chunks(path, schema, chunk_rows=500))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert rows == n
    assert peaks[1] < 1.5 * peaks[0]
