"""ensemblekit.scores against Weka 3.9.7's own report, on Weka's own predictions.

For each case Weka runs twice on the same train/test files (tests/data/weka_eval, halves
of UCI files): once printing its evaluation report (``-t TRAIN -T TEST``), once printing
its test-set class distributions with 10 decimals. Those distributions and the training
file's class counts (or mean target) go into our functions, and every figure Weka printed
must come out the same to Weka's printed decimals: summary, each per-class row, the
weighted averages and the confusion matrix.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import arff
import numpy as np
import pytest

from ensemblekit.scores import classification as ev
from ensemblekit.scores import regression as reg

from ektesting.weka_report import parse_weka_predictions, parse_weka_report
from ektesting.weka_tools import k2_options, needs_weka, run_weka

DATA = Path(__file__).resolve().parents[1] / "data" / "weka_eval"
CSV_OUT = "weka.classifiers.evaluation.output.prediction.CSV -distribution -decimals 10"
CSV_OUT_NUMERIC = "weka.classifiers.evaluation.output.prediction.CSV -decimals 10"

CLASSIFICATION_CASES = [
    # absent classes (duoden and sm.int, anus, ...) and classes never predicted
    ("weka.classifiers.bayes.NaiveBayes", [], "primary-tumor"),
    ("weka.classifiers.bayes.NaiveBayes", [], "vote"),
    ("weka.classifiers.trees.J48", [], "breast-cancer"),
    ("weka.classifiers.trees.J48", [], "iris"),
    # one constant distribution: every score tied, the minority class never predicted
    ("weka.classifiers.rules.ZeroR", [], "breast-cancer"),
    ("weka.classifiers.bayes.BayesNet", k2_options(2, "loo"), "vote"),
    ("weka.classifiers.bayes.BayesNet", k2_options(2, "loo"), "primary-tumor"),
    # 3 neighbours: iris gets 3 distinct scores per class (many ties in the curves);
    # breast-cancer has 8 test rows whose arg-max is tied
    ("weka.classifiers.lazy.IBk", ["-K", "3"], "iris"),
    ("weka.classifiers.lazy.IBk", ["-K", "3"], "breast-cancer"),
]

REGRESSION_CASES = [
    ("weka.classifiers.functions.SimpleLinearRegression", [], "cpu"),
    ("weka.classifiers.lazy.IBk", ["-K", "3"], "cpu"),
]


def _agrees(ours: float, printed: float, decimals: int) -> bool:
    """``printed`` is ``ours`` rounded to ``decimals`` (Weka's '?' is NaN)."""
    if math.isnan(printed):
        return math.isnan(ours)
    # half a unit of the last printed digit, plus room for the 10-decimal distributions
    return abs(ours - printed) <= 0.5 * 10.0**-decimals + 1e-7


def _train_classes(path: Path):
    with path.open() as handle:
        doc = arff.load(handle)
    name, values = doc["attributes"][-1]
    return name, values, [row[-1] for row in doc["data"]]


def _weka(classifier, options, name, output):
    train, test = str(DATA / f"{name}-train.arff"), str(DATA / f"{name}-test.arff")
    report = run_weka(classifier, "-t", train, "-T", test, "-o", *options)
    listing = run_weka(classifier, "-t", train, "-T", test, "-classifications", output, *options)
    return parse_weka_report(report, "Error on test data"), parse_weka_predictions(listing)


@needs_weka
@pytest.mark.parametrize(("classifier", "options", "name"), CLASSIFICATION_CASES,
                         ids=[f"{c.rsplit('.', 1)[1]}-{n}" for c, _, n in CLASSIFICATION_CASES])
def test_classification_report_matches_weka(classifier, options, name):
    weka, preds = _weka(classifier, options, name, CSV_OUT)
    _, class_names, train_labels = _train_classes(DATA / f"{name}-train.arff")
    counts = np.array([sum(v == c for v in train_labels) for c in class_names])
    assert None not in preds["actual"]  # no test instance with a missing class here
    y = np.array(preds["actual"])
    proba = np.array(preds["distribution"])
    ours = ev.classification_report(y, proba, counts, class_names)

    # our first arg-max is Weka's predicted class, tie or not
    assert ev.predicted_class(proba).tolist() == preds["predicted"]

    s = weka["summary"]
    assert ours.n == s["n"]
    assert ours.correct == s["correct"] and ours.incorrect == s["incorrect"]
    assert _agrees(ours.pct_correct, s["correct_pct"], 4)
    assert _agrees(100 - ours.pct_correct, s["incorrect_pct"], 4)
    for key in ("kappa", "mae", "rmse", "rae", "rrse"):
        assert _agrees(getattr(ours, key), s[key], 4), (key, getattr(ours, key), s[key])

    assert list(ours.class_names) == weka["class_names"] == [r["class"] for r in weka["per_class"]]
    assert ours.confusion.tolist() == weka["confusion"]
    for k, row in enumerate(weka["per_class"]):
        for key in ev._PER_CLASS:
            assert _agrees(ours.per_class[key][k], row[key], 3), (row["class"], key)
    for key in ev._PER_CLASS:
        assert _agrees(ours.weighted[key], weka["weighted"][key], 3), ("weighted", key)


@needs_weka
@pytest.mark.parametrize(("classifier", "options", "name"), REGRESSION_CASES,
                         ids=[f"{c.rsplit('.', 1)[1]}-{n}" for c, _, n in REGRESSION_CASES])
def test_regression_report_matches_weka(classifier, options, name):
    weka, preds = _weka(classifier, options, name, CSV_OUT_NUMERIC)
    _, _, train_targets = _train_classes(DATA / f"{name}-train.arff")
    train_mean = float(np.mean([v for v in train_targets if v is not None]))
    ours = reg.regression_report(preds["actual"], preds["predicted"], train_mean)
    s = weka["summary"]
    assert ours.n == s["n"]
    for key in ("correlation", "mae", "rmse", "rae", "rrse"):
        assert _agrees(getattr(ours, key), s[key], 4), (key, getattr(ours, key), s[key])


# A report as Weka 3.9.7 prints it (NaiveBayes, primary-tumor halves, cut to 3 classes).
_REPORT = """
=== Error on test data ===

Correctly Classified Instances          84               49.7041 %
Incorrectly Classified Instances        85               50.2959 %
Kappa statistic                          0.423
Mean absolute error                      0.0571
Root mean squared error                  0.1747
Relative absolute error                 49.214  %
Root relative squared error             86.8713 %
Total Number of Instances              169


=== Detailed Accuracy By Class ===

                 TP Rate  FP Rate  Precision  Recall   F-Measure  MCC      ROC Area  PRC Area  Class
                 0.773    0.104    0.723      0.773    0.747      0.655    0.901     0.779     lung
                 1.000    0.019    0.800      1.000    0.889      -0.886   0.996     0.934     head and neck
                 ?        0.000    ?          ?        ?          ?        ?         ?         anus
Weighted Avg.    0.497    0.064    ?          0.497    ?          ?        0.849     0.507


=== Confusion Matrix ===

  a  b  c   <-- classified as
 34  2  0 |  a = lung
  0 12  0 |  b = head and neck
  0  0  0 |  c = anus

"""


def test_parse_weka_report_reads_every_figure():
    r = parse_weka_report(_REPORT)
    assert r["summary"] == {
        "correct": 84, "correct_pct": 49.7041, "incorrect": 85, "incorrect_pct": 50.2959,
        "kappa": 0.423, "mae": 0.0571, "rmse": 0.1747, "rae": 49.214, "rrse": 86.8713, "n": 169,
    }  # fmt: skip
    assert [row["class"] for row in r["per_class"]] == ["lung", "head and neck", "anus"]
    assert r["per_class"][1]["mcc"] == -0.886 and r["per_class"][0]["prc_area"] == 0.779
    assert all(math.isnan(v) for k, v in r["per_class"][2].items() if k not in ("class", "fp_rate"))
    assert r["weighted"]["roc_area"] == 0.849 and math.isnan(r["weighted"]["precision"])
    assert r["confusion"] == [[34, 2, 0], [0, 12, 0], [0, 0, 0]]
    assert r["class_names"] == ["lung", "head and neck", "anus"]
    with pytest.raises(ValueError, match="no '=== Error on training data ===' section"):
        parse_weka_report(_REPORT, "Error on training data")


def _unlabelled_copy(name: str, folder: Path, every: int = 10) -> Path:
    """The test file of ``name`` with every ``every``-th row's class made missing."""
    lines = (DATA / f"{name}-test.arff").read_text().splitlines()
    out, in_data, k = [], False, 0
    for line in lines:
        if in_data and line.strip() and not line.startswith("%"):
            k += 1
            if k % every == 0:
                line = line.rsplit(",", 1)[0] + ",?"
        out.append(line)
        in_data = in_data or line.strip().lower().startswith("@data")
    path = folder / f"{name}-test-unlabelled.arff"
    path.write_text("\n".join(out) + "\n")
    return path


def test_ignored_class_unknown_instances_are_counted(tmp_path):
    """Test rows without a class are predicted but not scored; the report says how many,
    as Weka's "Ignored Class Unknown Instances" (issue 33, item 5); none: no line."""
    from ektesting.support import run_cli

    test = _unlabelled_copy("vote", tmp_path)
    args = ["evaluate", "c45", DATA / "vote-train.arff", "--test", test]
    doc = json.loads(run_cli(*args, "--format", "json").stdout)
    assert (doc["instances"], doc["ignored_class_unknown_instances"]) == (196, 21)
    table = run_cli(*args).stdout
    assert "Ignored class unknown instances" in table and "│              21 │" in table
    clean = run_cli("evaluate", "c45", DATA / "vote-train.arff", "--test",
                    DATA / "vote-test.arff").stdout
    assert "Ignored class unknown" not in clean


@needs_weka
def test_ignored_class_unknown_instances_equal_weka_s(tmp_path):
    test = _unlabelled_copy("vote", tmp_path)
    report = run_weka("weka.classifiers.trees.J48", "-t", str(DATA / "vote-train.arff"),
                      "-T", str(test), "-o")
    weka = parse_weka_report(report, "Error on test data")["summary"]
    from ektesting.support import run_cli

    doc = json.loads(run_cli("evaluate", "c45", DATA / "vote-train.arff", "--test",
                                           test, "--format", "json").stdout)
    assert (doc["instances"], doc["ignored_class_unknown_instances"]) == (weka["n"],
                                                                          weka["ignored"])


def test_unlabelled_rows_are_negatives_of_every_class_in_the_curves():
    """Weka 3.9.7's ThresholdCurve ranks a test row without a class as a negative of every
    class (issue 33, item 1); the other figures leave it out. Hand-computed: class 0's one
    positive (0.8) beats the labelled negative (0.3) but not the unlabelled one (0.9)."""
    y, proba = np.array([0, 1]), np.array([[0.8, 0.2], [0.3, 0.7]])
    plain = ev.classification_report(y, proba, None)
    marked = ev.classification_report(y, proba, None, unlabelled=[[0.9, 0.1]], curves=True)
    assert plain.per_class["roc_area"].tolist() == [1.0, 1.0]
    assert marked.per_class["roc_area"].tolist() == [0.5, 1.0]
    assert marked.per_class["prc_area"].tolist() == [0.5, 1.0]
    assert (marked.n, marked.accuracy, marked.kappa) == (plain.n, plain.accuracy, plain.kappa)
    assert (marked.curves[0].tp[0] + marked.curves[0].fn[0], marked.curves[0].fp[0]
            + marked.curves[0].tn[0]) == (1, 2)  # P = 1, N = 2 at the first point


@needs_weka
@pytest.mark.parametrize("name", ["vote", "breast-cancer"])
def test_curves_with_unlabelled_test_rows_equal_weka_s(name, tmp_path):
    test = _unlabelled_copy(name, tmp_path, every=7)
    report = run_weka("weka.classifiers.trees.J48", "-t", str(DATA / f"{name}-train.arff"),
                      "-T", str(test), "-o")
    weka = parse_weka_report(report, "Error on test data")
    from ektesting.support import run_cli

    doc = json.loads(run_cli("evaluate", "c45", DATA / f"{name}-train.arff", "--test", test,
                             "--format", "json").stdout)
    ours = doc["report"]
    for k, row in enumerate(weka["per_class"]):
        for key in ("roc_area", "prc_area"):
            assert _agrees(ours["per_class"][key][k], row[key], 3), (name, row["class"], key)
    for key in ("roc_area", "prc_area"):
        assert _agrees(ours["weighted"][key], weka["weighted"][key], 3), (name, key)
