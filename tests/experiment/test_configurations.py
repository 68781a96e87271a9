"""Named configurations in compare (issue 31): ALGO:key=value+key=value."""

from __future__ import annotations

import csv
import json

import pytest

from ensemblekit import registry
from ensemblekit.app.configurations import parse_configuration, parse_configurations
from ensemblekit.errors import UsageError

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
    refused = run("compare", "knn", "--data", str(SAMPLE / "iris.arff"), "--predictions-out",
                  str(out), "--resume", str(tmp_path / "j.jsonl"))
    assert refused.exit_code == 2 and "cannot be combined with --resume" in refused.stderr
    np.testing.assert_equal(len(set(mine)), 150)
