"""Named configurations in compare (issue 31): ALGO:key=value+key=value."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import pytest

from ensemblekit import registry
from ensemblekit.app.configurations import parse_configuration, parse_configurations
from ensemblekit.errors import UsageError
from ensemblekit.experiment import expand_grid, grid_summary

from ektesting.support import data_path
from ektesting.support import run_cli as run

SAMPLE = data_path("iris.arff").parent
DATA = ["--data", str(SAMPLE / "iris.arff"), "--data", str(SAMPLE / "vote.arff"), "--data",
        str(SAMPLE / "wine.arff"), "--cv", "3", "--repeats", "2"]


def test_parse_plain_names_and_settings():
    assert parse_configuration("c45").label == "c45"
    j48 = parse_configuration("J48:unpruned=true+min_samples_leaf=5")
    assert (j48.algorithm, j48.label) == ("c45", "c45:unpruned=true+min_samples_leaf=5")
    assert j48.settings == {"unpruned": "true", "min_samples_leaf": "5"}


@pytest.mark.parametrize("text, needle", [
    ("c45:", "no settings after ':'"), ("c45:unpruned", "'unpruned' is not key=value"),
    ("c45:unpruned=", "is not key=value"), ("c45:=true", "is not key=value"),
    ("c45:unpruned=true+unpruned=false", "unpruned is set twice")])
def test_parse_refuses_malformed_settings(text, needle):
    with pytest.raises(UsageError, match=needle):
        parse_configuration(text)


def test_unknown_algorithm_and_labels_named_twice():
    with pytest.raises(registry.UnknownAlgorithmError, match="did you mean 'c45'"):
        parse_configuration("c4.5:unpruned=true")
    with pytest.raises(UsageError, match="named twice"):
        parse_configurations(["knn", "knn"])
    with pytest.raises(UsageError, match=r"j48:unpruned=true and c45:unpruned=true are the same"):
        parse_configurations(["j48:unpruned=true", "c45:unpruned=true"])
    assert [c.label for c in parse_configurations(["knn", "knn:n_neighbors=3"])] == \
        ["knn", "knn:n_neighbors=3"]


def _rows(path, label):
    return [r for r in csv.DictReader(open(path)) if r["algorithm"] == label]


@pytest.mark.slow  # two comparisons of 4 and 2 columns over 3 data sets: about 4 s
def test_four_columns_and_the_plain_column_is_unchanged(tmp_path):
    plain_out, plain_journal = tmp_path / "plain.csv", tmp_path / "plain.jsonl"
    four_out, four_journal = tmp_path / "four.csv", tmp_path / "four.jsonl"
    plain = run("compare", "c45", "knn", *DATA, "--format", "json", "--output", str(plain_out),
                "--resume", str(plain_journal))
    four = run("compare", "c45", "c45:unpruned=true", "knn", "knn:n_neighbors=3", *DATA,
               "--format", "json", "--output", str(four_out), "--resume", str(four_journal))
    assert plain.exit_code == 0 and four.exit_code == 0, four.stderr
    acc = json.loads(four.stdout)["metrics"]["accuracy"]
    rows_four = {r["dataset"]: r["scores"] for r in acc["rows"]}
    rows_plain = {r["dataset"]: r["scores"] for r in
                  json.loads(plain.stdout)["metrics"]["accuracy"]["rows"]}
    for d in rows_plain:
        assert set(rows_four[d]) == {"c45", "c45:unpruned=true", "knn", "knn:n_neighbors=3"}
        assert rows_four[d]["c45"] == rows_plain[d]["c45"]
        assert rows_four[d]["knn"] == rows_plain[d]["knn"]
    # --output: the c45 rows are the same but for the measured seconds
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in _rows(plain_out, "c45")]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"}
                     for r in _rows(four_out, "c45")]
    assert _rows(four_out, "c45:unpruned=true")  # a column of its own
    # the journal: c45's records, but for their measured seconds, are those of the plain run
    def pruned_c45(path):
        records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
        return sorted(json.dumps({k: v for k, v in r.items() if k != "seconds"}, sort_keys=True)
                      for r in records if r["algorithm"] == "c45"
                      and not json.loads(r["params"])["unpruned"])
    assert pruned_c45(plain_journal) == pruned_c45(four_journal) != []


@pytest.mark.slow  # two comparisons over 3 data sets: about 4 s
def test_configuration_settings_win_over_set_and_bad_values_name_the_configuration(tmp_path):
    out = tmp_path / "s.csv"
    both = run("compare", "knn", "knn:n_neighbors=3", *DATA, "--set", "n_neighbors=5",
               "--output", str(out))
    assert both.exit_code == 0, both.stderr
    used = {(r["algorithm"], json.loads(r["params"])["n_neighbors"])
            for r in csv.DictReader(out.open())}
    assert used == {("knn", 5), ("knn:n_neighbors=3", 3)}  # --set for knn, its own for the other
    bad = run("compare", "knn", "knn:n_neighbors=0", *DATA)
    assert bad.exit_code == 2 and "knn:n_neighbors=0:" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    same = run("compare", "knn", "knn:n_neighbors=1", *DATA)
    assert same.exit_code == 2
    assert "knn and knn:n_neighbors=1 have the same parameters" in same.stderr


def test_predictions_out_agrees_with_cross_val_predict(tmp_path):
    """compare --predictions-out of knn on iris, repeat 1, equals scikit-learn's
    cross_val_predict of the IBk estimator over the same folds (those of
    RepeatedStratifiedKFold(random_state=seed))."""
    import numpy as np
    from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_predict

    from ensemblekit.api import load_data
    from ensemblekit.classifiers.ibk import IBk

    out = tmp_path / "p.csv"
    done = run("compare", "knn", "c45", "--data", str(SAMPLE / "iris.arff"), "--cv", "3",
               "--repeats", "2", "--seed", "7", "--predictions-out", str(out))
    assert done.exit_code == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 150 * 2 * 2
    ds = load_data(SAMPLE / "iris.arff")
    splits = list(RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=7).split(ds.X, ds.y))
    expected = cross_val_predict(IBk(), ds.X, ds.y, cv=splits[:3])
    mine = {int(r["row"]): r["predicted"] for r in rows
            if r["algorithm"] == "knn" and r["repeat"] == "1"}
    assert [mine[i + 1] for i in range(150)] == [ds.class_values[c] for c in expected]
    folds = {int(r["row"]) - 1: int(r["fold"]) for r in rows
             if r["algorithm"] == "knn" and r["repeat"] == "1"}
    for k, (_, test) in enumerate(splits[:3]):
        assert {folds[i] for i in test} == {k + 1}
    assert all(r["actual"] == ds.class_values[int(ds.y[int(r["row"]) - 1])] for r in rows)
    assert all(0 < float(r["probability"]) <= 1 for r in rows)
    np.testing.assert_equal(len(set(mine)), 150)


@pytest.mark.parametrize("text, needle", [
    ("knn:colour=3", "knn:colour=3: unknown parameter 'colour' for knn; valid keys: "),
    ("knn:n_neighbors=0", "knn:n_neighbors=0: "), ("knn:n_neighbors=x", "expected int"),
    ("knn:n_neighbors=3,4", "bad value '3,4' for n_neighbors"),
    ("knn:n_neighbors=", "is not key=value"), ("knn:n_neighbors=3;weights=uniform", "expected"),
    ("c4.5:unpruned=true", "unknown algorithm 'c4.5'")])
def test_bad_configurations_exit_2_with_one_line(text, needle):
    bad = run("compare", "knn", text, "--data", SAMPLE / "iris.arff", "--cv", "2", "--repeats", "1")
    assert bad.exit_code == 2, bad.stdout
    assert len(bad.stderr.strip().splitlines()) == 1 and needle in bad.stderr, bad.stderr
    assert bad.stdout == ""


def test_a_label_named_twice_is_refused_but_a_configuration_beside_its_plain_name_is_not():
    twice = run("compare", "knn", "knn", "--data", SAMPLE / "iris.arff")
    assert twice.exit_code == 2 and "named twice" in twice.stderr
    both = run("compare", "knn:n_neighbors=3", "knn:n_neighbors=3", "--data", SAMPLE / "iris.arff")
    assert both.exit_code == 2 and "named twice" in both.stderr
    # two spellings of the same parameters are refused too: they would be one column twice
    order = run("compare", "knn:n_neighbors=3+weights=inverse",
                "knn:weights=inverse+n_neighbors=3", "--data", SAMPLE / "iris.arff")
    assert order.exit_code == 2 and "have the same parameters" in order.stderr


def test_a_configuration_is_the_baseline_by_its_label():
    out = run("compare", "c45", "c45:unpruned=true", "--baseline", "c45:unpruned=true",
              "--data", SAMPLE / "iris.arff", "--data", SAMPLE / "wine.arff", "--cv", "2",
              "--repeats", "1", "--format", "json")
    assert out.exit_code == 0, out.stderr
    assert "c45:unpruned=true (baseline)" not in out.stdout  # json carries the label alone
    assert json.loads(out.stdout)["baseline"] == "c45:unpruned=true"


def test_grid_points_of_two_configurations_are_summarised_apart():
    # hand-made: c45:unpruned=true has 2 points, c45:confidence_factor=0.1 has 2, knn is the
    # baseline at 0.5; grouping by registry name would pool all four points under c45
    cands = [*expand_grid("knn", {"n_neighbors": 1}, {})]
    for label, params in (("c45:unpruned=true", {"unpruned": True}),
                          ("c45:confidence_factor=0.1", {"confidence_factor": 0.1})):
        for c in expand_grid("c45", params, {"min_samples_leaf": [2, 5]}):
            cands.append(replace(c, label=label + c.label[3:], configuration=label))
    means = {"c45:unpruned=true[min_samples_leaf=2]": 0.6,
             "c45:unpruned=true[min_samples_leaf=5]": 0.4,
             "c45:confidence_factor=0.1[min_samples_leaf=2]": 0.7,
             "c45:confidence_factor=0.1[min_samples_leaf=5]": 0.8, "knn": 0.5}
    summary = {("d", c.label, "accuracy"): (means[c.label], 0.0, 3) for c in cands}
    rows = grid_summary(summary, cands, "knn", ["d"], "accuracy")
    assert [(r["algorithm"], r["points"], r["percent"]) for r in rows] == [
        ("c45:unpruned=true", 2, 50.0), ("c45:confidence_factor=0.1", 2, 100.0)]
    assert rows[0]["best_point"] == {"min_samples_leaf": 2} and rows[0]["best"] == 0.6
    assert rows[1]["average"] == pytest.approx(0.75)


def _cells(table: str, column: int) -> list[str]:
    """The text of one column's cells in a compare table's data-set rows."""
    rows = [line.split("│") for line in table.splitlines() if line.startswith("│")]
    return [r[column] for r in rows if not r[1].strip().startswith("average rank")]


def _journal(path, algorithm_params):
    """The journal's records of one candidate, the measured seconds left out, as sorted text."""
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return sorted(json.dumps({k: v for k, v in r.items() if k != "seconds"}, sort_keys=True)
                  for r in records if (r["algorithm"], r["params"]) == algorithm_params)


@pytest.mark.slow  # issue 31 acceptance item 1: five comparisons on sample_data, about 8 s
def test_acceptance_four_columns_on_sample_data_with_c45_byte_identical(tmp_path):
    sample = data_path("iris.arff").parent
    four_args = ["c45", "c45:unpruned=true", "knn", "knn:n_neighbors=3"]
    protocol = ["--data", sample, "--cv", "5", "--repeats", "2"]

    def compare(algorithms, name, *extra):
        result = run("compare", *algorithms, *protocol, "--output", tmp_path / f"{name}.csv",
                     "--resume", tmp_path / f"{name}.jsonl", *extra)
        assert result.exit_code == 0, result.stderr
        return result

    plain = compare(["c45", "knn"], "plain", "--plot", tmp_path / "plain.png")
    four = compare(four_args, "four", "--plot", tmp_path / "four.png")
    # four columns, an average rank for each and a verdict line
    header = next(line for line in four.stdout.splitlines() if line.startswith("┃ data set"))
    assert [h.strip() for h in header.split("┃")[2:-1]] == four_args
    ranks = next(line for line in four.stdout.splitlines() if "average rank" in line)
    rank_values = [float(v) for v in ranks.split("│")[2:-1]]
    assert len(rank_values) == 4 and sum(rank_values) == pytest.approx(10.0)  # 1+2+3+4
    assert "Friedman chi2" in four.stdout and "c45 - knn:n_neighbors=3 over N = 5" in four.stdout
    # the c45 column of the table is byte-identical to that of `compare c45 knn`
    assert _cells(four.stdout, 2) == _cells(plain.stdout, 2) and len(_cells(plain.stdout, 2)) == 5
    # ... and so are its JSON scores
    as_json = [json.loads(run("compare", *a, *protocol, "--format", "json").stdout)
               for a in (["c45", "knn"], four_args)]
    for metric in ("accuracy",):
        rows = [{r["dataset"]: r["scores"]["c45"] for r in j["metrics"][metric]["rows"]}
                for j in as_json]
        assert rows[0] == rows[1] and len(rows[0]) == 5
    # ... its --output rows, but for the measured seconds
    def c45_rows(name):
        return [{k: v for k, v in r.items() if k != "seconds"}
                for r in _rows(tmp_path / f"{name}.csv", "c45")]
    assert c45_rows("plain") == c45_rows("four") and len(c45_rows("four")) == 5 * 10
    # ... and its journal records (a plain name's records carry no label)
    c45_params = _rows(tmp_path / "four.csv", "c45")[0]["params"]
    assert _journal(tmp_path / "plain.jsonl", ("c45", c45_params)) == \
        _journal(tmp_path / "four.jsonl", ("c45", c45_params)) != []
    records = [json.loads(line) for line in (tmp_path / "four.jsonl").read_text().splitlines()[1:]]
    labels = {(r["algorithm"], json.loads(r["params"])["n_neighbors"] if r["algorithm"] == "knn"
               else json.loads(r["params"])["unpruned"], r.get("label")) for r in records}
    assert labels == {("c45", False, None), ("c45", True, "c45:unpruned=true"), ("knn", 1, None),
                      ("knn", 3, "knn:n_neighbors=3")}
    # resuming from the journal computes nothing and prints the same table
    again = compare(four_args, "four")
    assert "0 of 200 units computed now" in again.stderr and again.stdout == four.stdout
    # a journal without labels (as written before configurations) resumes all the same
    unlabelled = tmp_path / "old.jsonl"
    lines = (tmp_path / "four.jsonl").read_text().splitlines()
    unlabelled.write_text("\n".join([lines[0]] + [json.dumps(
        {k: v for k, v in json.loads(line).items() if k != "label"}, sort_keys=True)
        for line in lines[1:]]) + "\n")
    assert all('"label"' not in line for line in unlabelled.read_text().splitlines()[1:])
    old = compare(four_args, "old")
    assert "0 of 200 units computed now" in old.stderr and old.stdout == four.stdout
    assert (tmp_path / "four-accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote " in four.stderr and "four-accuracy.png" in four.stderr
