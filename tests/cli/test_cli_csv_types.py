"""--nominal, --numeric, --string and --date on every command that reads data (issue 32).

The cases are the issue's, as a user meets them at the shell: a whole-number class whose
kind the reader guessed, a pandas export with its index, a space-separated table, dates.
"""

from __future__ import annotations

import json

import pytest

from ektesting.support import run_cli as run

COMMANDS = ("info", "fit", "predict", "cluster", "evaluate", "compare")
# bill length, island, year: the year says nothing of the bill, the island says it all
PENGUINS = "bill,island,year\n" + "".join(
    f"{(35, 48)[i % 2] + i % 5 * 0.1},{('Biscoe', 'Dream')[i % 2]},{(2007, 2008)[i % 2]}\n"
    for i in range(20))


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_that_reads_data_takes_the_type_options(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    for option in ("--nominal", "--numeric", "--string", "--date"):
        assert option in result.stdout


def test_a_whole_number_class_clustered_as_a_feature_is_scored_against_on_request(tmp_path):
    path = tmp_path / "pen.csv"
    path.write_text(PENGUINS)
    guessed = run("cluster", "kmeans", path, "-k", "2", "--format", "json")
    assert guessed.exit_code == 0, guessed.stderr
    assert "last attribute 'year' is numeric, so it is clustered as a feature" in guessed.stderr
    assert json.loads(guessed.stdout)["external"] == {}
    asked = run("cluster", "kmeans", path, "-k", "2", "--nominal", "year", "--format", "json")
    assert asked.exit_code == 0, asked.stderr
    assert "clustered as a feature" not in asked.stderr
    assert json.loads(asked.stdout)["external"]["purity"] == 1.0


def test_a_whole_number_class_on_request_gets_no_guessing_note(tmp_path):
    path = tmp_path / "pen.csv"
    path.write_text(PENGUINS)
    fitted = run("fit", "c45", path, "--nominal", "YEAR", "-o", tmp_path / "m.ekm")
    assert fitted.exit_code == 0, fitted.stderr
    assert "last column" not in fitted.stderr
    shown = run("show", tmp_path / "m.ekm", "--format", "json")
    schema = json.loads(shown.stdout)["schema"]
    assert schema["attributes"][2] == {"name": "year", "kind": "nominal",
                                       "values": ["2007", "2008"]}


def test_a_whole_number_class_kept_numeric_on_request_is_refused_by_a_classifier(tmp_path):
    path = tmp_path / "pen.csv"
    path.write_text(PENGUINS)
    result = run("fit", "c45", path, "--numeric", "3", "-o", tmp_path / "m.ekm")
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(
        f"{path}: c45 is a classifier but the data has a numeric class attribute 'year'; name a "
        "nominal class with --target")


def test_evaluate_and_compare_read_the_types_too(tmp_path):
    path = tmp_path / "pen.csv"
    path.write_text(PENGUINS)
    ev = run("evaluate", "c45", path, "--string", "island", "--cv", "2", "--repeats", "1",
             "--format", "json")
    assert ev.exit_code == 0, ev.stderr
    assert "string attributes are left out (free text, which no algorithm here reads): " \
           "'island'" in ev.stderr
    cmp = run("compare", "c45", "--data", path, "--nominal", "first", "--cv", "2", "--repeats",
              "1", "--format", "json")
    assert cmp.exit_code == 0, cmp.stderr
    bad = run("compare", "c45", "--data", path, "--nominal", "iland", "--cv", "2", "--repeats", "1")
    assert bad.exit_code == 2
    assert "--nominal: no column named 'iland' (did you mean 'island'?)" in bad.stderr


def test_predict_reads_dates_on_request_and_refuses_the_other_types(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("when,cls\n" + "".join(
        f"2001-0{1 + i % 9}-1{i % 10},{'ab'[i % 9 > 4]}\n" for i in range(30)))
    model = tmp_path / "m.ekm"
    fitted = run("fit", "c45", path, "--date", "when:yyyy-MM-dd", "-o", model)
    assert fitted.exit_code == 0, fitted.stderr
    predicted = run("predict", model, path, "--date", "1:yyyy-MM-dd")
    assert predicted.exit_code == 0, predicted.stderr
    assert [r.split(",")[1] for r in predicted.stdout.split()[1:]] == [
        "ab"[i % 9 > 4] for i in range(30)]
    # the model file keeps the pattern (schema date_format): predict reads the dates alone
    undated = run("predict", model, path)
    assert undated.exit_code == 0 and undated.stdout == predicted.stdout
    refused = run("predict", model, path, "--nominal", "cls")
    assert refused.exit_code == 2
    assert refused.stderr.strip() == (
        "ensemblekit: error: predict does not take --nominal: it reads each column as the "
        "model's training data declared it (give the option to fit); --date applies, to read "
        "dates into the model's numbers")


def test_info_reads_a_pandas_export_and_a_space_separated_table(tmp_path):
    indexed = tmp_path / "p.csv"
    indexed.write_text(",a,cls\n0,1.5,x\n1,2.5,y\n2,0.5,x\n")
    result = run("info", indexed, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert [a["name"] for a in json.loads(result.stdout)["attributes"]] == ["a", "cls"]
    assert f"note: {indexed}: the first column (unnamed) numbers the rows from 0" in result.stderr
    spaced = tmp_path / "s.txt"
    spaced.write_text("   a cls\n0 1.5   x\n1 2.5   y\n")
    result = run("info", spaced, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert [(a["name"], a["type"]) for a in json.loads(result.stdout)["attributes"]] == [
        ("a", "numeric"), ("cls", "nominal")]
    assert f"note: {spaced}: line 1 holds no comma, semicolon or TAB" in result.stderr


@pytest.mark.parametrize("pattern, says", [("qqqq", "date format 'qqqq': 'q' is not a pattern letter"),
                                           (5, "only a numeric attribute has a date pattern")])
def test_a_model_file_with_a_bad_date_pattern_is_refused(tmp_path, pattern, says):
    """The schema's date_format is read from an untrusted file: checked before use."""
    from ektesting.hostile_models import edit_metadata

    path = tmp_path / "d.csv"
    path.write_text("when,cls\n" + "".join(f"2001-01-1{i},{'ab'[i % 2]}\n" for i in range(8)))
    model = tmp_path / "m.ekm"
    assert run("fit", "c45", path, "--date", "when:yyyy-MM-dd", "-o", model).exit_code == 0
    bad = tmp_path / "bad.ekm"

    def change(metadata):
        metadata["schema"]["attributes"][0]["date_format"] = pattern

    edit_metadata(model, bad, change)
    refused = run("predict", bad, path)
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert says in refused.stderr
