"""Weka's figures in ensemblekit.scores: hand-computed cases, scikit-learn agreement, bad input.

The agreement with Weka itself is in test_evaluation_weka.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn import metrics as skm

from ensemblekit.errors import InputError
from ensemblekit.scores import classification as ev
from ensemblekit.scores import regression as reg

# ---------------------------------------------------------------------------- case A
# 3 classes, 4 instances; first arg-max predictions 0, 1, 2, 0 (the last one wrong).
Y_A = np.array([0, 1, 2, 1])
P_A = np.array([
    [0.5, 0.3, 0.2],
    [0.1, 0.8, 0.1],
    [0.2, 0.2, 0.6],
    [0.6, 0.2, 0.2],
])  # fmt: skip
COUNTS_A = np.array([3, 1, 0])  # training counts -> priors (3+1, 1+1, 0+1) / 7 = [4, 2, 1] / 7


def test_confusion_rows_actual_columns_predicted():
    assert ev.predicted_class(P_A).tolist() == [0, 1, 2, 0]
    assert ev.confusion_matrix(Y_A, [0, 1, 2, 0], 3).tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    assert ev.confusion_matrix(Y_A, [0, 1, 2, 0], 3).dtype == np.int64


def test_first_argmax_wins_ties():
    # [0.4, 0.4, 0.2] -> class 0; [0.2, 0.4, 0.4] -> class 1; thirds -> class 0
    p = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [1 / 3, 1 / 3, 1 / 3]])
    assert ev.predicted_class(p).tolist() == [0, 1, 0]


def test_accuracy_and_kappa_by_hand():
    assert ev.accuracy(Y_A, P_A) == pytest.approx(3 / 4)
    # row sums (actual) 1, 2, 1; column sums (predicted) 2, 1, 1; n = 4
    # p_o = 3/4; p_e = (1*2 + 2*1 + 1*1) / 16 = 5/16; kappa = (12/16 - 5/16) / (11/16) = 7/11
    assert ev.kappa(Y_A, P_A) == pytest.approx(7 / 11)


def test_kappa_is_one_when_chance_agreement_is_one():
    # everything actual 0 and predicted 0: p_e = 1, Weka returns 1 (sklearn would give NaN)
    assert ev.kappa([0, 0], [[0.9, 0.1], [0.8, 0.2]]) == 1.0


def test_mae_rmse_brier_log_loss_by_hand():
    # |p - onehot| summed per row: 1.0, 0.4, 0.8, 1.6 -> divided by C=3, mean over 4
    assert ev.weka_mae(Y_A, P_A) == pytest.approx(3.8 / 12)
    # squared: .38, .06, .24, 1.04 (total 1.72) -> /3 per row, mean over 4
    assert ev.weka_rmse(Y_A, P_A) == pytest.approx(math.sqrt(1.72 / 12))
    assert ev.brier_score(Y_A, P_A) == pytest.approx(1.72 / 4)
    assert ev.brier_score(Y_A, P_A) == pytest.approx(3 * ev.weka_rmse(Y_A, P_A) ** 2)
    assert ev.log_loss(Y_A, P_A) == pytest.approx(-(math.log(0.5) + math.log(0.8) + math.log(0.6)
                                                    + math.log(0.2)) / 4)


def test_priors_are_laplace_corrected_training_counts():
    np.testing.assert_allclose(ev.class_priors(COUNTS_A, 3), np.array([4, 2, 1]) / 7)
    np.testing.assert_allclose(ev.class_priors([[0, 0], [2, 0]], 2), [[0.5, 0.5], [0.75, 0.25]])


def test_relative_errors_by_hand():
    # prior [4, 2, 1]/7; |prior - onehot| summed over classes:
    #   y=0: 3/7 + 2/7 + 1/7 = 6/7; y=1: 4/7 + 5/7 + 1/7 = 10/7; y=2: 4/7 + 2/7 + 6/7 = 12/7
    #   y = 0, 1, 2, 1 -> 38/7 in all; the model's sum is 3.8 (the 1/C factors cancel)
    assert ev.relative_absolute_error(Y_A, P_A, COUNTS_A) == pytest.approx(100 * 3.8 / (38 / 7))
    assert ev.relative_absolute_error(Y_A, P_A, COUNTS_A) == pytest.approx(70.0)
    # squared: y=0: (9+4+1)/49; y=1: (16+25+1)/49; y=2: (16+4+36)/49 -> (14+42+56+42)/49
    expected = 100 * math.sqrt(1.72 / (154 / 49))
    assert ev.root_relative_squared_error(Y_A, P_A, COUNTS_A) == pytest.approx(expected)


def test_per_instance_priors():
    # instance 0 was predicted by a model trained on no data (prior .5/.5), instance 1 by
    # one trained on two class-0 instances (prior .75/.25). Prior errors averaged over
    # classes: (.5 + .5)/2 = .5 and (.75 + .75)/2 = .75; model errors .5 and .5
    y, p = [0, 1], [[0.5, 0.5], [0.5, 0.5]]
    assert ev.relative_absolute_error(y, p, [[0, 0], [2, 0]]) == pytest.approx(100 * 1.0 / 1.25)
    # the same counts on every row equal the (C,) form
    rows = np.tile(COUNTS_A, (4, 1))
    assert ev.root_relative_squared_error(Y_A, P_A, rows) == pytest.approx(
        ev.root_relative_squared_error(Y_A, P_A, COUNTS_A))


def test_per_class_scores_by_hand():
    s = ev.per_class_scores(ev.confusion_matrix(Y_A, ev.predicted_class(P_A), 3))
    # class 0: TP 1 FN 0 FP 1 TN 2; class 1: TP 1 FN 1 FP 0 TN 2; class 2: TP 1, TN 3
    np.testing.assert_allclose(s["tp_rate"], [1, 0.5, 1])
    np.testing.assert_allclose(s["recall"], [1, 0.5, 1])
    np.testing.assert_allclose(s["fp_rate"], [1 / 3, 0, 0])
    np.testing.assert_allclose(s["precision"], [0.5, 1, 1])
    np.testing.assert_allclose(s["f_measure"], [2 / 3, 2 / 3, 1])
    # (TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)): 2/sqrt(2*1*3*2), 2/sqrt(1*2*2*3), 3/3
    np.testing.assert_allclose(s["mcc"], [2 / math.sqrt(12), 2 / math.sqrt(12), 1])
    np.testing.assert_allclose(s["support"], [1, 2, 1])
    # weighted by actual counts 1, 2, 1 over 4
    assert ev.precision(Y_A, P_A) == pytest.approx((0.5 + 2 * 1 + 1) / 4)
    assert ev.recall(Y_A, P_A) == pytest.approx(0.75)
    assert ev.f_measure(Y_A, P_A) == pytest.approx((2 / 3 + 2 * 2 / 3 + 1) / 4)
    assert ev.mcc(Y_A, P_A) == pytest.approx((2 / math.sqrt(12) * 3 + 1) / 4)
    np.testing.assert_allclose(ev.mcc(Y_A, P_A, average=None), s["mcc"])


def test_roc_area_by_hand_with_tied_scores():
    # class 0: positive 0.5 against negatives 0.1, 0.2, 0.6 -> 2 of 3 pairs
    assert ev.roc_area(Y_A, P_A, 0) == pytest.approx(2 / 3)
    # class 1: positives 0.8, 0.2; negatives 0.3, 0.2. Pairs: .8>.3, .8>.2, .2<.3,
    # .2 = .2 (tied across a positive and a negative: half credit) -> 2.5 / 4
    assert ev.roc_area(Y_A, P_A, 1) == pytest.approx(0.625)
    assert ev.roc_area(Y_A, P_A, 2) == pytest.approx(1.0)
    # weighted by actual counts 1, 2, 1
    assert ev.weighted_roc_area(Y_A, P_A) == pytest.approx((2 / 3 + 2 * 0.625 + 1) / 4)


def test_roc_area_all_scores_tied_is_one_half():
    assert ev.roc_area([0, 1, 1], [[0.5, 0.5]] * 3, 1) == pytest.approx(0.5)


def test_prc_area_by_hand():
    # class 1, thresholds from the top: 0.8 -> TP 1 FP 0 (P 1, R .5); 0.3 -> TP 1 FP 1
    # (P .5, R .5); 0.2 -> TP 2 FP 2 (P .5, R 1). Steps from recall 0:
    # 1 * (.5 - 0) + .5 * (.5 - .5) + .5 * (1 - .5) = .75
    assert ev.prc_area(Y_A, P_A, 1) == pytest.approx(0.75)
    # class 0: 0.6 -> TP 0 FP 1 (P 0, R 0); 0.5 -> TP 1 FP 1 (P .5, R 1) -> .5 * 1
    assert ev.prc_area(Y_A, P_A, 0) == pytest.approx(0.5)
    assert ev.weighted_prc_area(Y_A, P_A) == pytest.approx((0.5 + 2 * 0.75 + 1) / 4)


# ---------------------------------------------------------------------------- absent / never predicted
# class 2 is declared but absent from the test set and never predicted
Y_B = np.array([0, 0, 1, 1])
P_B = np.array([[0.7, 0.2, 0.1], [0.4, 0.5, 0.1], [0.3, 0.6, 0.1], [0.6, 0.3, 0.1]])


def test_class_absent_from_test_set_is_nan_and_skipped_in_weighted_avg():
    r = ev.classification_report(Y_B, P_B, [5, 5, 1], ["a", "b", "c"])
    assert r.confusion.tolist() == [[1, 1, 0], [1, 1, 0], [0, 0, 0]]
    for key in ("tp_rate", "precision", "recall", "f_measure", "mcc", "roc_area", "prc_area"):
        assert math.isnan(r.per_class[key][2]), key
    assert r.per_class["fp_rate"][2] == 0.0  # 0 false positives among 4 negatives
    # classes 0, 1: precision .5 each; the absent class does not enter the average
    assert r.weighted["precision"] == pytest.approx(0.5)
    # class 0: positives .7, .4 vs negatives .3, .6 -> 3 of 4; class 1 likewise
    assert r.weighted["roc_area"] == pytest.approx(0.75)
    assert r.balanced_accuracy == pytest.approx(0.5)


def test_class_never_predicted_makes_weighted_precision_nan():
    y = [0, 1, 2]
    p = [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.5, 0.3, 0.2]]  # predicted 0, 1, 0
    r = ev.classification_report(y, p, [1, 1, 1])
    assert math.isnan(r.per_class["precision"][2])  # 0 / 0
    assert r.per_class["recall"][2] == 0.0
    assert math.isnan(r.per_class["f_measure"][2])  # Weka: undefined precision -> '?'
    assert math.isnan(r.per_class["mcc"][2])
    assert math.isnan(r.weighted["precision"]) and math.isnan(r.weighted["mcc"])
    assert math.isnan(r.mcc)
    assert r.weighted["recall"] == pytest.approx(2 / 3)
    # macro (scikit-learn, 0/0 -> 0): precision (1/2 + 1 + 0) / 3
    assert r.macro["precision"] == pytest.approx(0.5)
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["weighted"]["precision"] is None and d["per_class"]["precision"][2] is None
    assert d["confusion"] == [[1, 0, 0], [0, 1, 0], [1, 0, 0]]


def test_f_measure_is_zero_when_precision_and_recall_are_zero():
    # class 1 predicted once, wrongly; its only instance predicted as 0: P = R = 0 -> F = 0
    s = ev.per_class_scores([[1, 1], [1, 0]])
    assert s["precision"][1] == 0 and s["recall"][1] == 0 and s["f_measure"][1] == 0


def test_report_fields_and_to_dict():
    r = ev.classification_report(Y_A, P_A, COUNTS_A, ["x", "y", "z"])
    assert (r.n, r.correct, r.incorrect) == (4, 3, 1)
    assert r.pct_correct == pytest.approx(75.0) and r.accuracy == pytest.approx(0.75)
    assert r.rae == pytest.approx(70.0)
    assert r.class_names == ("x", "y", "z")
    assert set(r.per_class) == {"tp_rate", "fp_rate", "precision", "recall", "f_measure", "mcc",
                                "roc_area", "prc_area"}
    assert r.per_class["roc_area"].tolist() == pytest.approx([2 / 3, 0.625, 1.0])
    assert not r.confusion.flags.writeable
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["kappa"] == pytest.approx(7 / 11) and isinstance(d["correct"], int)
    assert d["per_class"]["mcc"][2] == pytest.approx(1.0)


# ---------------------------------------------------------------------------- scikit-learn agreement


def _random_case(seed, n=300, n_classes=4, tied=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    if tied:  # few distinct distributions: many tied scores and tied arg-maxes
        base = np.array([[0.5, 0.25, 0.25, 0.0], [0.25, 0.25, 0.25, 0.25], [0.4, 0.4, 0.2, 0.0]])
        rows = base[rng.integers(0, len(base), n)]
        proba = np.array([rng.permutation(r) for r in rows])
    else:
        proba = rng.dirichlet(np.ones(n_classes), n)
        proba[np.arange(n), y] += 0.3 * rng.random(n)  # some skill
        proba /= proba.sum(axis=1, keepdims=True)
    return y, proba


@pytest.mark.parametrize("tied", [False, True])
def test_agrees_with_sklearn(tied):
    y, p = _random_case(1, tied=tied)
    pred = ev.predicted_class(p)
    labels = list(range(p.shape[1]))
    assert set(pred) == set(y) == set(labels)  # every class occurs and is predicted
    assert ev.accuracy(y, p) == pytest.approx(skm.accuracy_score(y, pred))
    assert ev.balanced_accuracy(y, p) == pytest.approx(skm.balanced_accuracy_score(y, pred))
    assert ev.kappa(y, p) == pytest.approx(skm.cohen_kappa_score(y, pred))
    assert ev.log_loss(y, p) == pytest.approx(skm.log_loss(y, p, labels=labels))
    assert ev.brier_score(y, p) == pytest.approx(
        skm.brier_score_loss(y, p, labels=labels, scale_by_half=False))
    for average in ("weighted", "macro"):
        sk = skm.precision_recall_fscore_support(y, pred, average=average, zero_division=0)
        ours = (ev.precision(y, p, average), ev.recall(y, p, average), ev.f_measure(y, p, average))
        assert ours == pytest.approx(sk[:3])
    sk = skm.precision_recall_fscore_support(y, pred, labels=labels, zero_division=0)
    for ours, theirs in zip((ev.precision(y, p, None), ev.recall(y, p, None),
                             ev.f_measure(y, p, None)), sk[:3]):
        np.testing.assert_allclose(ours, theirs)
    for k in labels:
        assert ev.roc_area(y, p, k) == pytest.approx(skm.roc_auc_score(y == k, p[:, k]))
        assert ev.prc_area(y, p, k) == pytest.approx(
            skm.average_precision_score(y == k, p[:, k]))
        # one-vs-rest MCC of class k is the binary MCC of "is k" against "predicted k"
        assert ev.mcc(y, p, None)[k] == pytest.approx(skm.matthews_corrcoef(y == k, pred == k))
    assert ev.weighted_roc_area(y, p) == pytest.approx(
        skm.roc_auc_score(y, p, multi_class="ovr", average="weighted"))


def test_macro_agrees_with_sklearn_when_a_class_is_only_predicted_or_only_actual():
    y = [0, 0, 1, 1, 3]  # class 2 only predicted, class 3 never predicted
    p = [[.6, .2, .2, 0], [.2, .2, .6, 0], [.1, .8, .1, 0], [.5, .4, .1, 0], [.7, .1, .1, .1]]
    pred = ev.predicted_class(p)
    sk = skm.precision_recall_fscore_support(y, pred, average="macro", zero_division=0)
    ours = (ev.precision(y, p, "macro"), ev.recall(y, p, "macro"), ev.f_measure(y, p, "macro"))
    assert ours == pytest.approx(sk[:3])


def test_log_loss_clips_zero_probability_like_sklearn():
    y, p = [0, 1], [[1.0, 0.0], [1.0, 0.0]]
    eps = np.finfo(float).eps
    assert ev.log_loss(y, p) == pytest.approx(-math.log(eps) / 2)
    assert ev.log_loss(y, p) == pytest.approx(skm.log_loss(y, p, labels=[0, 1]))


# ---------------------------------------------------------------------------- regression
# y = 1, 2, 3, 4; predictions 1.5, 2, 2.5, 5; training mean 2
Y_R = np.array([1.0, 2.0, 3.0, 4.0])
F_R = np.array([1.5, 2.0, 2.5, 5.0])


def test_regression_by_hand():
    # errors .5, 0, .5, 1 -> MAE 2/4; squared .25, 0, .25, 1 -> RMSE sqrt(1.5/4)
    assert reg.mae(Y_R, F_R) == pytest.approx(0.5)
    assert reg.rmse(Y_R, F_R) == pytest.approx(math.sqrt(0.375))
    # prior errors |2 - y| = 1, 0, 1, 2 (sum 4); squared 1, 0, 1, 4 (sum 6)
    assert reg.relative_absolute_error_regression(Y_R, F_R, 2.0) == pytest.approx(100 * 2 / 4)
    assert reg.root_relative_squared_error_regression(Y_R, F_R, 2.0) == pytest.approx(
        100 * math.sqrt(1.5 / 6))
    # centred: dy = -1.5, -.5, .5, 1.5; df = -1.25, -.75, -.25, 2.25
    # sum dy*df = 5.5, sum dy^2 = 5, sum df^2 = 7.25
    assert reg.correlation(Y_R, F_R) == pytest.approx(5.5 / math.sqrt(5 * 7.25))
    assert reg.correlation(Y_R, F_R) == pytest.approx(np.corrcoef(Y_R, F_R)[0, 1])
    r = reg.regression_report(Y_R, F_R, 2.0)
    assert (r.n, r.rae, r.rrse) == (4, pytest.approx(50.0), pytest.approx(50.0))
    assert json.loads(json.dumps(r.to_dict(), allow_nan=False))["mae"] == pytest.approx(0.5)


def test_regression_per_instance_training_mean():
    # means 1 and 3 for the two halves: prior errors 0, 1, 0, 1 -> RAE 100 * 2 / 2
    assert reg.relative_absolute_error_regression(Y_R, F_R, [1, 1, 3, 3]) == pytest.approx(100.0)


def test_correlation_of_constant_prediction_is_zero_as_weka():
    assert reg.correlation(Y_R, [2.0, 2.0, 2.0, 2.0]) == 0.0


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("y", "p", "message"), [
    ([0, 1], [[1.0, 0.0]], "different numbers of instances"),
    ([0, 1], [1.0, 0.0], r"2-D array of shape \(n, C\)"),
    ([[0, 1]], [[1.0, 0.0]], "1-D array of class codes"),
    ([], np.empty((0, 2)), "empty"),
    ([0, 2], [[1.0, 0.0], [0.0, 1.0]], r"outside 0\.\.1"),
    ([0, 0.5], [[1.0, 0.0], [0.0, 1.0]], "integer class codes"),
    ([0, 1], [[0.7, 0.7], [0.0, 1.0]], "must sum to 1; row 0"),
    ([0, 1], [[1.5, -0.5], [0.0, 1.0]], r"\[0, 1\]"),
    ([0, 1], [[np.nan, 1.0], [0.0, 1.0]], "NaN"),
])  # fmt: skip
def test_bad_classification_input(y, p, message):
    with pytest.raises(ValueError, match=message):
        ev.weka_mae(y, p)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"prior_counts must have shape \(3,\) or \(n, 3\)"):
        ev.relative_absolute_error(Y_A, P_A, [1, 2])
    with pytest.raises(ValueError, match="prior_counts has 2 rows but there are 4"):
        ev.relative_absolute_error(Y_A, P_A, [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        ev.root_relative_squared_error(Y_A, P_A, [1, -2, 3])
    with pytest.raises(ValueError, match=r"class index k must be an integer in 0\.\.2"):
        ev.roc_area(Y_A, P_A, 3)
    with pytest.raises(ValueError, match="class_names has 2 names but proba has 3 columns"):
        ev.classification_report(Y_A, P_A, COUNTS_A, ["a", "b"])
    with pytest.raises(ValueError, match="average must be"):
        ev.precision(Y_A, P_A, "micro")
    with pytest.raises(ValueError, match=r"y_pred must hold integer class codes in 0\.\.2"):
        ev.confusion_matrix([0, 1], [0, 3], 3)
    with pytest.raises(ValueError, match="different lengths"):
        ev.confusion_matrix([0, 1], [0], 3)
    with pytest.raises(ValueError, match="square"):
        ev.per_class_scores([[1, 2, 3]])
    with pytest.raises(ValueError, match="train_mean must be"):
        reg.relative_absolute_error_regression([1.0, 2.0], [1.0, 2.0], [1.0])


@pytest.mark.parametrize(("y", "f", "message"), [
    ([1.0, 2.0], [1.0], "different lengths"),
    ([], [], "empty"),
    ([[1.0]], [[1.0]], "1-D array of numbers"),
    ([1.0, np.nan], [1.0, 2.0], "NaN"),
])  # fmt: skip
def test_bad_regression_input(y, f, message):
    with pytest.raises(ValueError, match=message):
        reg.regression_report(y, f, 1.0)


def test_a_probability_one_ulp_above_one_is_scored_as_weka_scores_it():
    # J48's running sums of fractional weights give 1.0000000000000002 for a pure leaf
    # reached by a missing value (seen on sonar with 10 % missing values); Weka scores
    # the row, so the report must too, while a real excess is still refused
    p = np.array([[np.nextafter(1.0, 2.0), 0.0], [0.25, 0.75]])
    r = ev.classification_report(np.array([0, 1]), p, [1, 1])
    assert r.correct == 2
    with pytest.raises(InputError, match=r"lie in \[0, 1\]"):
        ev.classification_report(np.array([0, 1]), np.array([[1.001, -0.001], [0.25, 0.75]]),
                                 [1, 1])
