"""``predict --columns`` (Weka's ``-classifications`` columns) and ``--unknown`` (values not
seen in training read as missing, as Weka's InputMappedClassifier reads them).

The columns are compared with Weka 3.9.7's own ``-classifications`` CSV on vote, column
for column; a value not seen in training must give exactly the prediction of the same
row with ``?`` in its place; and the added columns must stream, in every format, as the
row-by-row writer writes them.
"""

from __future__ import annotations

import csv
import io
import json

import arff
import numpy as np
import pytest

from ensemblekit import api
from ensemblekit.results import Prediction, prediction_rows
from ensemblekit.writers import OUTPUT_FORMATS, format_prediction_stream, format_predictions

from ektesting.support import data_path
from ektesting.support import run_cli as run
from ektesting.weka_tools import needs_weka, run_weka

VOTE = data_path("vote.arff")
WEKA_CSV = "weka.classifiers.evaluation.output.prediction.CSV -distribution -p 1,4"


@pytest.fixture(scope="module")
def vote_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "vote.ekm"
    fitted = run("fit", "c45", VOTE, "-o", path)
    assert fitted.exit_code == 0, fitted.stderr
    return path


def _vote_file(path, edit):
    """vote.arff as liac-arff reads it, changed by ``edit(raw)``, written to ``path``."""
    with open(VOTE, encoding="utf-8") as fh:
        raw = arff.load(fh)
    edit(raw)
    path.write_text(arff.dumps(raw), encoding="utf-8")
    return path


def _column(raw, name):
    return [n for n, _ in raw["attributes"]].index(name)


@needs_weka
def test_columns_match_weka_classifications_csv_on_vote(tmp_path, vote_model):
    def without_some_classes(raw):
        for i in (0, 6, 100):
            raw["data"][i][-1] = None

    test = _vote_file(tmp_path / "test.arff", without_some_classes)
    out = run_weka("weka.classifiers.trees.J48", "-t", str(VOTE), "-T", str(test),
                   "-classifications", WEKA_CSV)
    rows = list(csv.reader(out.split("=== Predictions on test data ===")[1].strip().splitlines()))
    header, weka = rows[0], rows[1:]
    assert header == ["inst#", "actual", "predicted", "error", "distribution", "",
                      "handicapped-infants", "physician-fee-freeze"]

    result = run("predict", vote_model, test, "--columns",
                 "actual,error,distribution,handicapped-infants,physician-fee-freeze")
    assert result.exit_code == 0, result.stderr
    ours = list(csv.reader(io.StringIO(result.stdout)))
    assert ours[0] == ["row", "prediction", "actual", "error", "distribution_democrat",
                       "distribution_republican", "handicapped-infants", "physician-fee-freeze"]
    ours = ours[1:]
    assert len(ours) == len(weka) == 435

    def value(cell):  # Weka's "2:republican", "1:?" -> our "republican", ""
        text = cell.split(":", 1)[-1]
        return "" if text == "?" else text

    for w, o in zip(weka, ours):
        row, prediction, actual, error, d_dem, d_rep, infants, fee = o
        assert row == w[0]
        assert actual == value(w[1])
        assert prediction == value(w[2])
        assert error == w[3]
        assert [d_dem, d_rep] == w[4:6]  # Weka's text: 3 decimals, "*" on the predicted class
        assert [infants, fee] == [value(v) for v in w[6:8]]
    # the comparison covered a wrong prediction, a missing class and a missing attribute
    assert {"+", ""} == {o[3] for o in ours}
    assert sum(o[2] == "" for o in ours) == 3 and any(o[6] == "" for o in ours)


def _unseen(raw):
    """Three rows with the value 'abstain', which training never saw, in one or two of the
    attributes the tree tests first."""
    for name, rows in (("physician-fee-freeze", (0, 2)), ("el-salvador-aid", (2, 5))):
        k = _column(raw, name)
        raw["attributes"][k] = (name, [*raw["attributes"][k][1], "abstain"])
        for i in rows:
            raw["data"][i][k] = "abstain"


def _question_marks(raw):
    """The same cells as :func:`_unseen`, missing instead."""
    for name, rows in (("physician-fee-freeze", (0, 2)), ("el-salvador-aid", (2, 5))):
        for i in rows:
            raw["data"][i][_column(raw, name)] = None


def test_unseen_value_is_predicted_as_if_it_were_missing(tmp_path, vote_model):
    unseen = _vote_file(tmp_path / "unseen.arff", _unseen)
    missing = _vote_file(tmp_path / "missing.arff", _question_marks)
    args = ("--proba", "--columns", "actual,error,distribution,physician-fee-freeze")
    a = run("predict", vote_model, unseen, *args)
    b = run("predict", vote_model, missing, *args)
    original = run("predict", vote_model, VOTE, "--proba")
    assert a.exit_code == b.exit_code == original.exit_code == 0, a.stderr
    # every column but the copied attribute is the same, byte for byte
    lines_a, lines_b = a.stdout.splitlines(), b.stdout.splitlines()
    assert [line.rsplit(",", 1)[0] for line in lines_a] == [line.rsplit(",", 1)[0] for line in lines_b]
    assert [line.rsplit(",", 1)[1] for line in lines_a[1:4]] == ["abstain", "y", "abstain"]
    assert [line.rsplit(",", 1)[1] for line in lines_b[1:4]] == ["", "y", ""]
    # and missing is not what the row said before: the root's value matters
    assert lines_a[1].split(",")[2:4] != original.stdout.splitlines()[1].split(",")[2:4]
    # one note: three rows (row 3 has two such values), both attributes named
    assert b.stderr == ""
    notes = a.stderr.strip().splitlines()
    assert len(notes) == 1
    assert (f"{unseen}: 3 rows hold a nominal value not seen in training, read as missing "
            "(attributes 'physician-fee-freeze', 'el-salvador-aid')") in notes[0]


def test_unknown_error_refuses_an_unseen_value_in_one_line(tmp_path, vote_model):
    unseen = _vote_file(tmp_path / "unseen.arff", _unseen)
    result = run("predict", vote_model, unseen, "--unknown", "error")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "'abstain'" in result.stderr and "'physician-fee-freeze'" in result.stderr


def test_an_unseen_class_value_is_an_empty_actual(tmp_path, vote_model):
    def new_class(raw):
        k = len(raw["attributes"]) - 1
        raw["attributes"][k] = ("Class", [*raw["attributes"][k][1], "independent"])
        raw["data"][1][k] = "independent"

    changed = _vote_file(tmp_path / "class.arff", new_class)
    result = run("predict", vote_model, changed, "--columns", "actual,error")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1:3] == ["1,republican,republican,", "2,republican,,"]
    assert "1 row holds a nominal value" in result.stderr and "(attribute 'Class')" in result.stderr
    refused = run("predict", vote_model, changed, "--columns", "actual", "--unknown", "error")
    assert refused.exit_code == 2 and "'independent'" in refused.stderr
    # without actual or error, the class column is not read at all
    plain = run("predict", vote_model, changed, "--unknown", "error")
    assert plain.exit_code == 0 and plain.stderr == ""


def test_chunks_give_the_columns_and_the_note_of_one_call(tmp_path, vote_model):
    unseen = _vote_file(tmp_path / "unseen.arff", _unseen)
    columns = ("actual", "error", "distribution", "el-salvador-aid")
    results = []
    for chunk_rows in (None, 2, 7):
        notes = []
        with api.reading(notify=notes.append):
            results.append((api.predict(vote_model, unseen, columns=columns,
                                        chunk_rows=chunk_rows), notes))
    (whole, whole_notes), *parts = results
    assert len(whole_notes) == 1 and "3 rows" in whole_notes[0]
    assert list(whole.extras) == ["actual", "error", "distribution_democrat",
                                  "distribution_republican", "el-salvador-aid"]
    assert whole.extras["el-salvador-aid"][:6] == ["y", "y", "abstain", None, "y", "abstain"]
    for p, notes in parts:
        assert notes == whole_notes
        assert p.extras == whole.extras and p.predictions == whole.predictions


def test_a_dataset_in_memory_gives_the_file_s_columns(vote_model):
    from ensemblekit.data import load_dataset

    columns = ("actual", "error", "immigration", "Class")
    from_file = api.predict(vote_model, VOTE, columns=columns)
    in_memory = api.predict(vote_model, load_dataset(VOTE), columns=columns)
    assert in_memory.extras == from_file.extras
    assert in_memory.extras["actual"] == in_memory.extras["Class"]
    pd = pytest.importorskip("pandas")
    with open(VOTE, encoding="utf-8") as fh:
        raw = arff.load(fh)
    frame = pd.DataFrame(raw["data"], columns=[n for n, _ in raw["attributes"]])
    assert api.predict(vote_model, frame, columns=columns).extras == from_file.extras


def test_the_note_names_a_stream_as_its_messages_do(tmp_path, vote_model):
    unseen = _vote_file(tmp_path / "unseen.arff", _unseen)
    notes = []
    with api.reading(notify=notes.append), open(unseen, "rb") as stream:
        api.predict(vote_model, stream)
    assert len(notes) == 1 and notes[0].startswith("<stdin>: 3 rows hold a nominal value"), notes


@pytest.mark.parametrize("columns,needle", [
    ("actual,immigratoin", "no attribute named 'immigratoin' to copy to the output "
                           "(did you mean 'immigration'?)"),
    ("actual,actual", "two columns named 'actual'"),
    ("actual,,error", "--columns 'actual,,error': an empty name"),
])
def test_bad_columns_are_refused_in_one_line(vote_model, columns, needle):
    result = run("predict", vote_model, VOTE, "--columns", columns)
    assert result.exit_code == 2 and result.stdout == ""
    assert needle in result.stderr and result.stderr.count("\n") == 1


def test_unknown_takes_missing_or_error_only(vote_model):
    result = run("predict", vote_model, VOTE, "--unknown", "ignore")
    assert result.exit_code == 2 and "must be missing or error" in result.stderr


HOSTILE = ("a", "b, c", 'say "hi"', "", "tab\there", "line\nend", " lead", "é", None)


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_added_columns_stream_as_the_whole_writer_writes_them(fmt):
    rng = np.random.default_rng(3)
    n = 30
    labels = [("x", "y")[i] for i in rng.integers(0, 2, n)]
    extras = {"actual": [("x", "y", None)[i] for i in rng.integers(0, 3, n)],
              "error": [None if i else "+" for i in rng.integers(0, 2, n)],
              "note": [HOSTILE[i] for i in rng.integers(0, len(HOSTILE), n)]}
    P = rng.dirichlet(np.ones(2), n)
    p = Prediction("classification", labels, P, ("x", "y"), ("x", "y"), extras)
    rows = [[*row, *cells] for row, cells in
            zip(prediction_rows(labels, P, p.classes), zip(*extras.values()))]
    whole = format_predictions(rows, p.columns, fmt, prediction_values=("x", "y"), text_columns=3)
    for cuts in ([0, n], [0, 1, 17, n]):
        pieces = [Prediction(p.task, labels[a:b], P[a:b], p.classes, p.prediction_values,
                             {k: v[a:b] for k, v in extras.items()}) for a, b in zip(cuts, cuts[1:])]
        assert "".join(format_prediction_stream(pieces, fmt)) == whole
    if fmt == "csv":
        read = list(csv.reader(io.StringIO(whole)))
        assert read[0] == ["row", "prediction", "p_x", "p_y", "actual", "error", "note"]
        assert [r[6] for r in read[1:]] == ["" if v is None else v for v in extras["note"]]
    elif fmt == "json":
        records = json.loads(whole)
        assert [r["note"] for r in records] == extras["note"]  # None is null
    elif fmt == "arff":
        assert "@attribute note string" in whole and "@attribute p_y numeric" in whole
