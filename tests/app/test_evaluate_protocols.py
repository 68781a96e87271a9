"""evaluate's protocols (--test, --split-percentage, cross-validation with a pooled report),
the resubstitution warning, and the measures as compare and evaluate score them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn import metrics as skm

from ensemblekit import api
from ensemblekit.metrics import METRICS, REPORT_METRICS

from ektesting import hostile_models as H
from ektesting.support import SAMPLE_DATA, run_cli

IRIS = SAMPLE_DATA / "iris.arff"
VOTE = SAMPLE_DATA / "vote.arff"
HOUSING = SAMPLE_DATA / "housing.arff"


def halves(path, folder):
    """The odd and even data rows of an ARFF file, as two files."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    rows = [line for line in lines[at + 1:] if line.strip() and not line.startswith("%")]
    out = []
    for part, chosen in (("train", rows[0::2]), ("test", rows[1::2])):
        target = folder / f"{path.stem}-{part}.arff"
        target.write_text("\n".join(lines[:at + 1] + chosen) + "\n")
        out.append(target)
    return out


# ----------------------------------------------------------------------------- split_rows
def test_split_rows_rounds_as_java_and_keeps_file_order():
    # 10 * 66 / 100 = 6.6 -> 7 training rows; 435 * 0.66 = 287.1 -> 287 (Weka: 148 test)
    train, test = api.split_rows(10, 66, preserve_order=True)
    assert train.tolist() == list(range(7)) and test.tolist() == [7, 8, 9]
    train, test = api.split_rows(435, 66, preserve_order=True)
    assert (train.size, test.size) == (287, 148)
    # 4 * 12.5 / 100 = 0.5 rounds half up, as Java's Math.round
    assert api.split_rows(4, 12.5, preserve_order=True)[0].tolist() == [0]


def test_split_rows_shuffles_by_seed():
    train, test = api.split_rows(50, 60, seed=3)
    assert train.size == 30 and np.array_equal(np.sort(np.concatenate([train, test])), np.arange(50))
    again = api.split_rows(50, 60, seed=3)
    assert np.array_equal(again[0], train)
    assert not np.array_equal(api.split_rows(50, 60, seed=4)[0], train)
    assert not np.array_equal(train, np.arange(30))


@pytest.mark.parametrize("percentage, message", [(0, "strictly between 0 and 100"),
                                                 (100, "strictly between 0 and 100"),
                                                 (float("nan"), "strictly between"),
                                                 (10, "leaves no training"),
                                                 (90, "leaves no test")])
def test_split_rows_refuses_empty_sides(percentage, message):
    with pytest.raises(api.UsageError, match=message):
        api.split_rows(3, percentage)


# ----------------------------------------------------------------------------- --test
def test_test_file_equals_fit_then_evaluate_model(tmp_path):
    train, test = halves(VOTE, tmp_path)
    one_step = run_cli("evaluate", "c45", train, "--test", test, "--format", "json", "--seed", "2")
    assert one_step.exit_code == 0, one_step.output
    model = tmp_path / "vote.ekm"
    assert run_cli("fit", "c45", train, "-o", model, "--seed", "2").exit_code == 0
    two_steps = run_cli("evaluate", model, test, "--format", "json")
    assert two_steps.exit_code == 0 and "resubstitution" not in two_steps.stderr
    a, b = json.loads(one_step.stdout), json.loads(two_steps.stdout)
    assert a["scores"] == b["scores"] and a["report"] == b["report"]
    assert a["instances"] == 217 and a["train_instances"] == 218
    report = a["report"]
    assert np.sum(report["confusion"]) == 217 == report["correct"] + report["incorrect"]
    assert set(a["scores"]) == set(REPORT_METRICS["classification"])
    assert a["scores"]["accuracy"] == pytest.approx(report["correct"] / 217)


def test_report_table_has_the_weka_sections(tmp_path):
    train, test = halves(VOTE, tmp_path)
    result = run_cli("evaluate", "knn", train, "--test", test)
    assert result.exit_code == 0, result.output
    for text in ("Correctly classified instances", "Kappa statistic", "Relative absolute error",
                 "Detailed accuracy by class", "Weighted avg.", "a = democrat", "b = republican"):
        assert text in result.stdout


def test_regression_test_file_gives_weka_measures(tmp_path):
    train, test = halves(HOUSING, tmp_path)
    small = ("--set", "n_estimators=20", "--set", "cv=3")  # the measures do not depend on the size
    result = run_cli("evaluate", "rule-pls", train, "--test", test, "--format", "json", *small)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document["scores"]) == {"correlation", "mae", "rmse", "rae", "rrse"}
    assert document["report"]["rae"] == pytest.approx(document["scores"]["rae"])
    table = run_cli("evaluate", "rule-pls", train, "--test", test, *small)
    for text in ("Correlation coefficient", "Root relative squared error", "Total number"):
        assert text in table.stdout


@pytest.mark.parametrize("args, message", [
    (("--test", "X", "--cv", "5"), "--cv cannot be used with one train/test split"),
    (("--split-percentage", "66", "--output", "s.csv"), "--output cannot be used"),
    (("--preserve-order",), "--preserve-order applies to --split-percentage"),
    (("--test", "X", "--split-percentage", "50"), "either a test file"),
    (("--split-percentage", "100"), "strictly between 0 and 100"),
])
def test_split_options_usage_errors(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli("evaluate", "knn", IRIS, *[IRIS if a == "X" else a for a in args])
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert result.stdout == ""


def test_clusterer_refuses_a_test_file():
    result = run_cli("evaluate", "kmeans", IRIS, "--test", IRIS)
    assert result.exit_code == 2 and "kmeans is a clusterer" in result.stderr


def test_a_test_file_of_another_schema_is_refused(tmp_path):
    result = run_cli("evaluate", "knn", IRIS, "--test", VOTE)
    assert result.exit_code == 2 and result.stdout == ""


# ----------------------------------------------------------------------------- resubstitution
def test_resubstitution_is_said_on_stderr(tmp_path):
    model = tmp_path / "iris.ekm"
    assert run_cli("fit", "knn", IRIS, "-o", model).exit_code == 0
    same = run_cli("evaluate", model, IRIS, "--format", "json")
    assert same.exit_code == 0 and "resubstitution estimates" in same.stderr
    assert json.loads(same.stdout)["resubstitution"] is True
    train, test = halves(IRIS, tmp_path)
    other = run_cli("evaluate", model, test, "--format", "json")
    assert "resubstitution" not in other.stderr
    assert json.loads(other.stdout)["resubstitution"] is False


def test_model_file_without_training_counts_is_reported_without_relative_errors(tmp_path):
    model = tmp_path / "vote.ekm"
    assert run_cli("fit", "knn", VOTE, "-o", model).exit_code == 0
    metadata, members = H.unpack(model)
    del metadata["training_data"]["class_counts"]  # as files written before they were recorded
    old = H.pack(tmp_path / "old.ekm", metadata, members)
    result = run_cli("evaluate", old, VOTE, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert "rae" not in document["scores"] and document["report"]["rae"] is None
    assert "kappa" in document["scores"]


@pytest.mark.parametrize("counts", [[1, 2, 3], [-1, 5], [1.5, 2], "many"])
def test_damaged_training_counts_are_refused(counts, tmp_path):
    model = tmp_path / "vote.ekm"
    assert run_cli("fit", "knn", VOTE, "-o", model).exit_code == 0
    metadata, members = H.unpack(model)
    metadata["training_data"]["class_counts"] = counts
    bad = H.pack(tmp_path / "bad.ekm", metadata, members)
    result = run_cli("evaluate", bad, VOTE)
    assert result.exit_code == 2 and "class_counts" in result.stderr


# ----------------------------------------------------------------------------- cross-validation
def test_pooled_report_counts_every_repeat():
    result = api.evaluate("knn", IRIS, cv=5, repeats=2, seed=3)
    report = result.pooled[("iris", "knn")]
    # every instance is predicted once per repeat
    assert report.n == 300 and int(np.sum(report.confusion)) == 300
    assert report.confusion.sum(axis=1).tolist() == [100, 100, 100]
    # stratified folds of 30 on iris: the pooled accuracy is the mean fold accuracy
    assert report.accuracy == pytest.approx(result.table("accuracy")["iris"]["knn"], abs=1e-12)
    assert set(result.metrics) == set(REPORT_METRICS["classification"])


def test_cross_validation_json_holds_the_pooled_report():
    result = run_cli("evaluate", "knn", IRIS, "--cv", "3", "--repeats", "1", "--format", "json")
    document = json.loads(result.stdout)
    (pooled,) = document["pooled"]
    assert pooled["dataset"] == "iris" and pooled["report"]["n"] == 150
    table = run_cli("evaluate", "knn", IRIS, "--cv", "3", "--repeats", "1")
    assert "out-of-fold predictions pooled" in table.stdout and "c = Iris-virginica" in table.stdout


def test_compare_scores_probability_measures_per_fold(tmp_path):
    scores = tmp_path / "s.csv"
    result = run_cli("compare", "knn", "c45", "--data", IRIS, "--cv", "3", "--repeats", "1",
                     "-m", "auc", "-m", "log-loss", "-m", "rrse", "-m", "kappa", "--output", scores)
    assert result.exit_code == 0, result.output
    for label in ("ROC area", "Log-loss", "RRSE %", "Kappa"):
        assert f"{label} (mean ± sd)" in result.stdout
    assert scores.read_text().count("\n") == 1 + 2 * 3 * 4


# ----------------------------------------------------------------------------- the measures
TRUTH = np.array([0, 0, 0, 1, 1, 2, 2, 2])
PRED = np.array([0, 0, 1, 1, 1, 1, 1, 2])  # class 2 is predicted once, class 0 never wrongly


@pytest.mark.parametrize("name, reference", [
    ("kappa", skm.cohen_kappa_score(TRUTH, PRED)),
    ("balanced-accuracy", skm.balanced_accuracy_score(TRUTH, PRED)),
    ("f1-macro", skm.f1_score(TRUTH, PRED, average="macro")),
    ("precision-macro", skm.precision_score(TRUTH, PRED, average="macro")),
    ("recall-weighted", skm.recall_score(TRUTH, PRED, average="weighted")),
    ("f1-weighted", skm.f1_score(TRUTH, PRED, average="weighted")),
    ("precision-weighted", skm.precision_score(TRUTH, PRED, average="weighted")),
])
def test_label_measures_agree_with_scikit_learn(name, reference):
    assert METRICS[name](TRUTH, PRED) == pytest.approx(reference, abs=1e-12)


def test_weighted_measures_count_an_undefined_class_as_zero():
    # class 1 is never predicted: Weka prints '?' for its precision; a fold score must be a
    # number, so it counts 0 as scikit-learn's zero_division=0
    truth, pred = np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0])
    assert METRICS["precision-weighted"](truth, pred) == pytest.approx(
        skm.precision_score(truth, pred, average="weighted", zero_division=0))  # 0.5 * 0.5
    assert METRICS["mcc"](truth, pred) == 0.0


def test_weka_errors_serve_both_tasks():
    proba = np.array([[0.8, 0.2], [0.4, 0.6], [0.5, 0.5]])
    truth = np.array([0, 0, 1])
    # per instance the absolute error averaged over the 2 classes: 0.2, 0.6, 0.5
    assert METRICS["mae"].score([0, 1, 0], truth=truth, proba=proba) == pytest.approx(1.3 / 3)
    assert METRICS["mae"].score([1.0, 3.0], truth=[2.0, 2.0]) == pytest.approx(1.0)
    assert METRICS["mae"].tasks == ("classification", "regression")
    # relative to predicting the training mean 2.0: errors 1 + 1 against 0 + 2
    assert METRICS["rae"].score([1.0, 3.0], truth=[2.0, 4.0], prior=2.0) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="training set's class counts or mean"):
        METRICS["rae"].score([1.0], truth=[2.0])
    with pytest.raises(TypeError, match="needs class probabilities"):
        METRICS["auc"](truth, [0, 1, 0])


def test_class_probabilities_align_columns_with_declared_classes():
    from ensemblekit import registry

    class SawTwo:  # trained on classes 0 and 2 of three declared ones
        classes_ = np.array([0, 2])

        def predict_proba(self, X):
            return np.array([[0.25, 0.75]] * len(X))

    class LabelsOnly:  # no predict_proba: all the mass on the predicted class
        def predict(self, X):
            return np.array([2, 0])

    assert registry.class_probabilities(SawTwo(), [[0], [1]], 3).tolist() == [
        [0.25, 0.0, 0.75], [0.25, 0.0, 0.75]]
    assert registry.class_probabilities(LabelsOnly(), [[0], [1]], 3).tolist() == [
        [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]


def test_a_measure_undefined_in_a_fold_leaves_its_cell_out_of_the_tests(monkeypatch):
    import dataclasses

    import ensemblekit.metrics as M
    from ensemblekit.scores.classification import label_accuracy

    calls = {"n": 0}

    def every_seventh_undefined(truth, predicted):  # e.g. a ROC area of a one-class fold
        calls["n"] += 1
        return float("nan") if calls["n"] % 7 == 0 else label_accuracy(truth, predicted)

    monkeypatch.setitem(M.METRICS, "kappa", dataclasses.replace(M.METRICS["kappa"],
                                                                func=every_seventh_undefined))
    notes = []
    result = api.compare(["knn", "c45", "k2"], [IRIS, SAMPLE_DATA / "wine.arff", VOTE], cv=3,
                         repeats=1, metrics=["kappa", "accuracy"], notify=notes.append)
    undefined = [n for n in notes if "kappa is undefined" in n]
    assert len(undefined) == 3  # units 7, 14 and 21 of 27, each in another cell
    table = result.table("kappa")
    assert sum(np.isnan(v) for row in table.values() for v in row.values()) == 3
    # no data set is complete for kappa; accuracy is untouched
    assert result.analyses["kappa"].ranks is None
    assert result.analyses["accuracy"].ranks is not None
    calls["n"] = 6  # the next unit's kappa is undefined: JSON says null, not NaN
    document = json.loads(run_cli("compare", "knn", "--data", IRIS, "--cv", "3", "--repeats", "1",
                                  "-m", "kappa", "--format", "json").stdout)
    assert document["metrics"]["kappa"]["rows"][0]["scores"]["knn"]["mean"] is None
