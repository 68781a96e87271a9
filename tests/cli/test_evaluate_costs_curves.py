"""``evaluate --cost-matrix`` and ``--curve-out`` end to end (issue 31): Weka's Total Cost and
Average Cost in the report and JSON, the curve file against scikit-learn, bad cost files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_curve

from ektesting.support import run_cli as run
from ektesting.weka_report import parse_weka_report
from ektesting.weka_tools import needs_weka, run_weka

ROOT = Path(__file__).resolve().parents[2]
IRIS = str(ROOT / "sample_data" / "iris.arff")
WEKA_EVAL = ROOT / "tests" / "data" / "weka_eval"
COSTS = "% Rows Columns\n3 3\n% Matrix elements\n0 1 2\n5 0 1\n3 4 0\n"
COST = np.array([[0, 1, 2], [5, 0, 1], [3, 4, 0]])


@pytest.fixture
def cost_file(tmp_path):
    path = tmp_path / "iris.cost"
    path.write_text(COSTS)
    return path


def _curves(path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            out.setdefault(row["class"], []).append(
                {k: float("nan") if v == "" else float(v) for k, v in row.items() if k != "class"})
    return out


def test_split_report_json_and_curves(tmp_path, cost_file):
    train, test = WEKA_EVAL / "iris-train.arff", WEKA_EVAL / "iris-test.arff"
    curves = tmp_path / "curves.csv"
    result = run("evaluate", "c45", train, "--test", test, "--cost-matrix", cost_file,
                 "--curve-out", curves, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)["report"]
    confusion = np.array(report["confusion"])
    assert report["total_cost"] == float((confusion * COST).sum())
    assert report["average_cost"] == report["total_cost"] / confusion.sum()
    assert report["total_cost"] > 0  # some instances are misclassified
    points = _curves(curves)
    assert list(points) == report["class_names"]
    for k, name in enumerate(report["class_names"]):
        rows = points[name]
        area = np.trapezoid([r["tpr"] for r in rows][::-1], [r["fpr"] for r in rows][::-1])
        assert area == pytest.approx(report["per_class"]["roc_area"][k], abs=1e-12)
        assert rows[0]["tp"] == report["support"][k] and rows[-1]["threshold"] == np.inf


def test_model_curves_are_scikit_learns_on_the_model_scores(tmp_path, cost_file):
    from ensemblekit import api
    from ensemblekit.dataset import Schema
    from ensemblekit.metrics import model_predictions

    model, curves = tmp_path / "m.ekm", tmp_path / "curves.csv"
    assert run("fit", "knn", WEKA_EVAL / "iris-train.arff", "--set", "n_neighbors=5",
               "-o", model).exit_code == 0
    test = WEKA_EVAL / "iris-test.arff"
    result = run("evaluate", model, test, "--curve-out", curves, "--cost-matrix", cost_file)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    kappa = next(i for i, line in enumerate(lines) if "Kappa statistic" in line)
    assert "Total Cost" in lines[kappa + 1] and "Average Cost" in lines[kappa + 2]
    fitted = api.load_model(model)
    ds = api.load_data(test, schema=Schema.from_dict(fitted.metadata["schema"]))
    _, proba = model_predictions(fitted.pipeline, ds.X, task="classification", proba=True,
                                 n_classes=len(ds.class_values))
    points = _curves(curves)
    for k, name in enumerate(ds.class_values):
        fpr, tpr, thresholds = roc_curve(ds.y == k, proba[:, k], drop_intermediate=False)
        rows = points[name][::-1]  # ours ascend, scikit-learn's descend
        np.testing.assert_array_equal([r["threshold"] for r in rows], thresholds)
        np.testing.assert_allclose([r["fpr"] for r in rows], fpr, atol=1e-15)
        np.testing.assert_allclose([r["tpr"] for r in rows], tpr, atol=1e-15)


def test_cross_validation_scores_the_pooled_predictions(tmp_path, cost_file):
    curves = tmp_path / "curves.csv"
    result = run("evaluate", "c45", IRIS, "--cv", "5", "--repeats", "2", "--cost-matrix",
                 cost_file, "--curve-out", curves, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)["pooled"][0]["report"]
    confusion = np.array(report["confusion"])
    assert confusion.sum() == 300  # 150 instances, 2 repeats pooled
    assert report["total_cost"] == float((confusion * COST).sum())
    assert report["average_cost"] == report["total_cost"] / 300
    for k, rows in enumerate(_curves(curves).values()):
        assert rows[0]["tp"] + rows[0]["fp"] == 300
        area = np.trapezoid([r["tpr"] for r in rows][::-1], [r["fpr"] for r in rows][::-1])
        assert area == pytest.approx(report["per_class"]["roc_area"][k], abs=1e-12)
    table = run("evaluate", "c45", IRIS, "--cv", "5", "--repeats", "2", "--cost-matrix",
                "[0 1 2; 5 0 1; 3 4 0]")
    assert table.exit_code == 0, table.stderr
    total = report["total_cost"]
    assert any("Total Cost" in line and line.split()[-2] == f"{total:g}"
               for line in table.stdout.splitlines())


@pytest.mark.parametrize(("text", "fragment"), [
    ("% Rows Columns\n2 2\n0 1\n5 0\n", "the cost matrix is 2 by 2, but the class has 3 values"),
    ("% Rows Columns\n3 3\n0 x 2\n5 0 1\n3 4 0\n", "line 3: cost 'x' is not a number"),
    ("% Rows Columns\n3 3\n0 1 2\n5 0 1\n", "2 rows of costs; the size line says 3"),
])
@pytest.mark.parametrize("protocol", [["--test", IRIS], ["--cv", "3", "--repeats", "1"], "model"])
def test_bad_cost_files_exit_2_with_one_line(tmp_path, text, fragment, protocol):
    bad = tmp_path / "bad.cost"
    bad.write_text(text)
    curves = tmp_path / "curves.csv"
    if protocol == "model":
        model = tmp_path / "m.ekm"
        assert run("fit", "c45", IRIS, "-o", model).exit_code == 0
        args = [model, IRIS]
    else:
        args = ["c45", IRIS, *protocol]
    result = run("evaluate", *args, "--cost-matrix", bad, "--curve-out", curves)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and str(bad) in result.stderr and fragment in result.stderr
    assert not curves.exists()  # nothing written by a failed command


def test_missing_cost_file_and_non_classifiers(tmp_path):
    result = run("evaluate", "c45", IRIS, "--test", IRIS, "--cost-matrix", tmp_path / "no.cost")
    assert result.exit_code == 2 and "no.cost: no such file" in result.stderr
    result = run("evaluate", "kmeans", IRIS, "--runs", "2", "--curve-out", tmp_path / "c.csv")
    assert result.exit_code == 2 and "for classifiers only" in result.stderr


def test_help_documents_both_options():
    text = run("evaluate", "--help").stdout
    assert "--cost-matrix" in text and "--curve-out" in text


@needs_weka
def test_printed_costs_match_j48(tmp_path):
    costs = tmp_path / "bc.cost"
    costs.write_text("% Rows Columns\n2 2\n% Matrix elements\n0 1\n5 0\n")
    train, test = WEKA_EVAL / "breast-cancer-train.arff", WEKA_EVAL / "breast-cancer-test.arff"
    weka = parse_weka_report(run_weka("weka.classifiers.trees.J48", "-t", str(train), "-T",
                                      str(test), "-o", "-m", str(costs)),
                             "Error on test data")["summary"]
    result = run("evaluate", "c45", train, "--test", test, "--cost-matrix", costs)
    assert result.exit_code == 0, result.stderr
    printed = {line.split("│")[1].strip(): line.split("│")[2].strip()
               for line in result.stdout.splitlines() if line.count("│") == 3}
    assert float(printed["Total Cost"]) == weka["total_cost"] > 0
    assert float(printed["Average Cost"]) == weka["average_cost"]
