"""Cost-sensitive evaluation (Weka's Total Cost / Average Cost) and threshold curves
(Weka's ThresholdCurve): hand-computed values, scikit-learn's curves, Weka's report."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import precision_recall_curve, roc_curve

from ensemblekit.errors import InputError
from ensemblekit.scores import classification as ev
from ensemblekit.scores.costs import check_cost_matrix, cost_figures
from ensemblekit.scores.curves import threshold_curve

from ektesting.weka_report import parse_weka_predictions, parse_weka_report
from ektesting.weka_tools import needs_weka, run_weka

DATA = Path(__file__).resolve().parents[1] / "data" / "weka_eval"

# five instances, three classes; predicted (first arg-max): 0, 1, 1, 2, 2
Y = np.array([0, 0, 1, 1, 2])
P = np.array([[.7, .2, .1], [.2, .5, .3], [.1, .8, .1], [.3, .3, .4], [.2, .2, .6]])
COST = [[0, 1, 2], [5, 0, 1], [3, 4, 0]]


def test_total_and_average_cost_by_hand():
    report = ev.classification_report(Y, P, None, cost_matrix=COST)
    # errors: actual 0 predicted 1 (cost 1), actual 1 predicted 2 (cost 1)
    assert report.cost.total == 2.0
    assert report.cost.average == 2.0 / 5
    doc = report.to_dict()
    assert doc["total_cost"] == 2.0 and doc["average_cost"] == 0.4
    assert doc["cost_matrix"] == [[0.0, 1.0, 2.0], [5.0, 0.0, 1.0], [3.0, 4.0, 0.0]]
    assert "total_cost" not in ev.classification_report(Y, P, None).to_dict()


def test_cost_uses_the_matrix_as_given_negative_entries_and_diagonal_too():
    # Weka neither normalises the diagonal nor refuses negative costs
    cm = np.array([[3, 1], [2, 4]])
    out = cost_figures(cm, [[1, -2], [0.5, 0]])
    assert out.total == 3 * 1 + 1 * -2 + 2 * 0.5 + 4 * 0
    assert out.average == out.total / 10
    # weighted counts (summed instance weights) enter as they are
    assert cost_figures([[0.5, 1.5], [0, 2]], [[0, 2], [1, 0]]).total == 3.0


@pytest.mark.parametrize(("matrix", "n_classes", "fragment"), [
    ([[0, 1], [1, 0]], 3, "2 by 2, but the class has 3 values"),
    ([[0, 1, 2], [1, 0, 2]], None, "square"),
    ([[0, float("nan")], [1, 0]], None, "NaN or infinite"),
    ([["a", "b"], ["c", "d"]], None, "numbers"),
])
def test_bad_cost_matrices_are_refused(matrix, n_classes, fragment):
    with pytest.raises(InputError, match=fragment):
        check_cost_matrix(matrix, n_classes)


def _random_scores(seed: int, n: int = 200, ties: bool = True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(bool)
    score = rng.random(n) + 0.4 * y
    if ties:
        score = np.round(score, 1)  # many tied groups
    return y, score


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [True, False])
def test_curve_points_are_scikit_learns(seed, ties):
    y, score = _random_scores(seed, ties=ties)
    curve = threshold_curve(y, score)
    fpr, tpr, thresholds = roc_curve(y, score, drop_intermediate=False)
    # scikit-learn lists thresholds descending, from "nothing predicted" (inf) down
    np.testing.assert_array_equal(curve.threshold[::-1], thresholds)
    np.testing.assert_allclose(curve.fpr[::-1], fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(curve.tpr[::-1], tpr, rtol=0, atol=1e-15)
    precision, recall, pr_thresholds = precision_recall_curve(y, score, drop_intermediate=False)
    # its thresholds ascend; its last point (precision 1 by convention, recall 0) is our
    # inf point, where the precision is undefined
    np.testing.assert_array_equal(curve.threshold[:-1], pr_thresholds)
    np.testing.assert_allclose(curve.precision[:-1], precision[:-1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(curve.recall, recall, rtol=0, atol=1e-15)
    assert math.isnan(curve.precision[-1]) and curve.recall[-1] == 0
    n_pos, n = y.sum(), y.size
    np.testing.assert_array_equal(curve.tp + curve.fn, np.full(curve.tp.size, n_pos))
    np.testing.assert_array_equal(curve.fp + curve.tn, np.full(curve.tp.size, n - n_pos))
    np.testing.assert_allclose(curve.sample_size, (curve.tp + curve.fp) / n)


@pytest.mark.parametrize("seed", [0, 3])
def test_trapezoid_area_under_the_roc_points_is_the_report_roc_area(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, 150)
    raw = np.round(rng.random((150, 4)) + np.eye(4)[y] * 0.3, 2)
    proba = raw / raw.sum(axis=1, keepdims=True)
    report = ev.classification_report(y, proba, None, curves=True)
    assert len(report.curves) == 4
    for k, curve in enumerate(report.curves):
        area = np.trapezoid(curve.tpr[::-1], curve.fpr[::-1])
        assert area == pytest.approx(report.per_class["roc_area"][k], abs=1e-12)


def test_an_absent_class_has_undefined_rates():
    curve = threshold_curve(np.zeros(4, dtype=bool), np.array([.1, .2, .2, .9]))
    assert np.isnan(curve.tpr).all() and curve.tp.tolist() == [0, 0, 0, 0]
    assert curve.fpr.tolist() == [1.0, 0.75, 0.25, 0.0]


def test_bad_curve_input_is_refused():
    with pytest.raises(InputError, match="one length"):
        threshold_curve([True, False], [0.5])
    with pytest.raises(InputError, match="NaN or infinite"):
        threshold_curve([True, False], [0.5, float("nan")])


@needs_weka
@pytest.mark.parametrize(("classifier", "name", "cost"), [
    ("weka.classifiers.trees.J48", "breast-cancer", [[0, 1], [5, 0]]),
    ("weka.classifiers.bayes.NaiveBayes", "iris", [[0, 1, 2], [5, 0, 1], [3, 4, 0.5]]),
])
def test_total_and_average_cost_match_weka(tmp_path, classifier, name, cost):
    size = len(cost)
    cost_file = tmp_path / "costs.cost"
    cost_file.write_text(f"% Rows Columns\n{size} {size}\n% Matrix elements\n"
                         + "".join(" ".join(map(str, row)) + "\n" for row in cost))
    train, test = str(DATA / f"{name}-train.arff"), str(DATA / f"{name}-test.arff")
    weka = parse_weka_report(run_weka(classifier, "-t", train, "-T", test, "-o",
                                      "-m", str(cost_file)), "Error on test data")["summary"]
    listing = parse_weka_predictions(run_weka(
        classifier, "-t", train, "-T", test, "-classifications",
        "weka.classifiers.evaluation.output.prediction.CSV -distribution -decimals 10"))
    ours = ev.classification_report(np.array(listing["actual"]),
                                    np.array(listing["distribution"]), None, cost_matrix=cost)
    assert ours.cost.total == pytest.approx(weka["total_cost"], abs=5e-5)
    assert ours.cost.average == pytest.approx(weka["average_cost"], abs=5e-5)
    assert weka["total_cost"] > 0


def test_zero_one_costs_count_the_errors():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 60)
    proba = rng.dirichlet(np.ones(3), 60)
    report = ev.classification_report(y, proba, None, cost_matrix=1 - np.eye(3))
    assert report.cost.total == report.incorrect
    assert report.cost.average == pytest.approx(1 - report.accuracy)
