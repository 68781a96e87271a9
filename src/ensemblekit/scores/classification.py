"""Weka's evaluation figures for a nominal class, computed from predictions.

This module reproduces what Weka 3.9.7 prints for ``-t TRAIN -T TEST`` (class
``weka.classifiers.evaluation.Evaluation``) from the test labels, the predicted
class distributions and the training set's class counts, plus the common
scikit-learn figures Weka does not print (balanced accuracy, log-loss, Brier
score, macro averages). It is pure numpy: no files, no printing. Weka's figures
for a numeric class are in :mod:`ensemblekit.scores.regression`.

Conventions (all functions but the two of predicted labels at the end,
:func:`label_accuracy` and :func:`from_labels`):

* ``y_true`` holds integer class codes ``0 .. C-1`` (shape ``(n,)``), where ``C``
  is the number of *declared* classes; a class may be absent from the test set or
  never predicted.
* ``proba`` is the predicted class distribution, shape ``(n, C)``, each row in
  ``[0, 1]`` and summing to 1 (within ``1e-3``, so distributions printed with a
  few decimals are accepted). Every instance has weight 1.
* The predicted class is the *first* arg-max of the row (``Evaluation.
  updateStatsForClassifier``: a class replaces the current best only when its
  probability is strictly larger). The confusion matrix has the actual class in
  rows and the predicted class in columns (``Evaluation.toMatrixString``).
* Undefined figures are NaN, where Weka prints ``?``.

The relative errors compare the errors of ``proba`` with those of always
predicting the training class priors. Weka builds those priors in
``Evaluation.setPriors``/``updatePriors``: every class count starts at 1 (a
Laplace correction), then each training instance adds 1 to its class, so the
prior of class ``k`` is ``(count_k + 1) / (n_train + C)``. In the ``-t/-T``
path (``Evaluation.evaluateModel(Classifier, String[])``) the test instances
never update the priors. Functions here take the *raw* training counts
(``prior_counts``, shape ``(C,)``) and apply the correction themselves;
``prior_counts`` may also have shape ``(n, C)``, one row per test instance,
for protocols where each instance was predicted by a model trained on a
different set (cross-validation folds: ``Evaluation.crossValidateModel`` calls
``setPriors`` with each fold's training set).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.safejson import plain as _plain  # JSON-ready: NaN and inf as None
from ensemblekit.scores._common import _check_labels
from ensemblekit.scores.costs import CostEvaluation, cost_figures
from ensemblekit.scores.curves import ThresholdCurve, score_groups, threshold_curve

#: An undefined figure (Weka prints ``?``).
_NAN = float("nan")

__all__ = [
    "ClassificationEvaluation",
    "predicted_class",
    "confusion_matrix",
    "class_priors",
    "weka_mae",
    "weka_rmse",
    "relative_absolute_error",
    "root_relative_squared_error",
    "log_loss",
    "brier_score",
    "accuracy",
    "balanced_accuracy",
    "kappa",
    "per_class_scores",
    "weighted_average",
    "precision",
    "recall",
    "f_measure",
    "mcc",
    "roc_area",
    "prc_area",
    "weighted_roc_area",
    "weighted_prc_area",
    "classification_report",
    "label_accuracy",
    "from_labels",
]

_SUM_TOL = 1e-3  # rows of ``proba`` must sum to 1 within this
#: How far a probability may pass 0 or 1: J48's running sums of fractional weights (as
#: ensemblekit's c45 reproduces them) can give 1.0000000000000002, which Weka scores.
_ROUND_OFF = 1e-12


# ----------------------------------------------------------------------------- validation


def _check_classification(y_true, proba):
    """Validate ``(y_true, proba)``; return them as int64 (n,) and float64 (n, C) arrays."""
    y = np.asarray(y_true)
    p = np.asarray(proba, dtype=float)
    if y.ndim != 1:
        raise InputError(f"y_true must be a 1-D array of class codes, got shape {y.shape}")
    if p.ndim != 2:
        raise InputError(f"proba must be a 2-D array of shape (n, C), got shape {p.shape}")
    if p.shape[0] != y.shape[0]:
        raise InputError(
            f"y_true and proba have different numbers of instances ({y.shape[0]} and {p.shape[0]})"
        )
    if y.shape[0] == 0:
        raise InputError("y_true and proba are empty; an evaluation needs at least one instance")
    n_classes = p.shape[1]
    if n_classes == 0:
        raise InputError("proba has no columns; it needs one column per declared class")
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
            raise InputError("y_true must hold integer class codes (no NaN, no fractions)")
    elif y.dtype.kind not in "iub":
        raise InputError(f"y_true must hold integer class codes, got dtype {y.dtype}")
    y = y.astype(np.int64)
    if y.min() < 0 or y.max() >= n_classes:
        raise InputError(
            f"y_true holds class codes outside 0..{n_classes - 1} (proba has {n_classes} columns)"
        )
    if not np.all(np.isfinite(p)):
        raise InputError("proba contains NaN or infinite values")
    if p.min() < -_ROUND_OFF or p.max() > 1 + _ROUND_OFF:
        raise InputError("proba values must lie in [0, 1]")
    sums = p.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > _SUM_TOL)
    if bad.size:
        raise InputError(
            f"each row of proba must sum to 1; row {bad[0]} sums to {sums[bad[0]]:.6g}"
        )
    return y, p


def _divide(num, den):
    """``num / den`` elementwise, NaN where ``den`` is 0 (Java's 0/0), without warnings."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den == 0, np.nan, out)


# ----------------------------------------------------------------------------- basics


def predicted_class(proba) -> np.ndarray:
    """Predicted class codes: the first arg-max of each row of ``proba``.

    Parameters
    ----------
    proba : array-like of shape (n, C)

    Returns
    -------
    ndarray of int64, shape (n,)

    Notes
    -----
    As ``Evaluation.updateStatsForClassifier`` (and ``Utils.maxIndex``): on ties the
    lowest class code wins.
    """
    p = np.asarray(proba, dtype=float)
    if p.ndim != 2 or p.shape[1] == 0:
        raise InputError(f"proba must be a 2-D array of shape (n, C), got shape {p.shape}")
    return np.argmax(p, axis=1).astype(np.int64)  # numpy's argmax returns the first maximum


def confusion_matrix(y_true, y_pred, n_classes: int) -> np.ndarray:
    """Counts of (actual, predicted) class pairs.

    Parameters
    ----------
    y_true, y_pred : array-like of int, shape (n,)
        Class codes in ``0 .. n_classes-1``.
    n_classes : int
        Number of declared classes ``C`` (>= 1).

    Returns
    -------
    ndarray of int64, shape (C, C)
        Row ``i``, column ``j``: instances of actual class ``i`` predicted as ``j``
        (Weka's layout, ``Evaluation.toMatrixString``).

    Raises
    ------
    ValueError
        On different lengths, non-1-D input, or codes outside ``0 .. C-1``.
    """
    a = np.asarray(y_true)
    b = np.asarray(y_pred)
    if int(n_classes) != n_classes or n_classes < 1:
        raise InputError(f"n_classes must be a positive integer, got {n_classes!r}")
    n_classes = int(n_classes)
    for arr, name in ((a, "y_true"), (b, "y_pred")):
        if arr.ndim != 1:
            raise InputError(f"{name} must be a 1-D array of class codes, got shape {arr.shape}")
        if arr.size and (arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= n_classes):
            raise InputError(f"{name} must hold integer class codes in 0..{n_classes - 1}")
    if a.shape[0] != b.shape[0]:
        raise InputError(f"y_true and y_pred have different lengths ({a.shape[0]} and {b.shape[0]})")
    flat = np.bincount(a.astype(np.int64) * n_classes + b.astype(np.int64),
                       minlength=n_classes * n_classes)
    return flat.reshape(n_classes, n_classes).astype(np.int64)


def class_priors(prior_counts, n_classes: int, n_instances: int | None = None) -> np.ndarray:
    """Weka's prior class distribution from raw training class counts.

    Parameters
    ----------
    prior_counts : array-like of shape (C,) or (n, C)
        Training-set class counts (non-negative), or one row of counts per test instance.
    n_classes : int
        ``C``.
    n_instances : int, optional
        ``n``; checked against the rows of a 2-D ``prior_counts``.

    Returns
    -------
    ndarray of shape (C,) or (n, C)
        ``(count_k + 1) / (sum(counts) + C)``, the Laplace-corrected estimate of
        ``Evaluation.setPriors`` (every count starts at 1).

    Raises
    ------
    ValueError
        On a wrong shape or negative / non-finite counts.
    """
    c = np.asarray(prior_counts, dtype=float)
    if c.ndim not in (1, 2) or c.shape[-1] != n_classes:
        raise InputError(
            f"prior_counts must have shape ({n_classes},) or (n, {n_classes}), got {c.shape}"
        )
    if c.ndim == 2 and n_instances is not None and c.shape[0] != n_instances:
        raise InputError(
            f"prior_counts has {c.shape[0]} rows but there are {n_instances} test instances"
        )
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise InputError("prior_counts must be non-negative finite class counts")
    smoothed = c + 1.0
    return smoothed / smoothed.sum(axis=-1, keepdims=True)


# ----------------------------------------------------------------------------- probability errors


def _one_hot(y, n_classes):
    return np.eye(n_classes)[y]


def weka_mae(y_true, proba) -> float:
    """Weka's mean absolute error of the class probabilities.

    ``mean_i (1/C) * sum_k |proba[i, k] - [y_i == k]|`` — per instance the absolute
    error is averaged over the ``C`` classes (``Evaluation.updateNumericScores``,
    ``meanAbsoluteError``).

    Parameters
    ----------
    y_true : array-like of int, shape (n,)
    proba : array-like of shape (n, C)

    Returns
    -------
    float in [0, 2/C]

    Raises
    ------
    ValueError
        On bad shapes, codes or probabilities (see the module notes).
    """
    y, p = _check_classification(y_true, proba)
    return float(np.mean(np.abs(p - _one_hot(y, p.shape[1])).mean(axis=1)))


def weka_rmse(y_true, proba) -> float:
    """Weka's root mean squared error of the class probabilities.

    ``sqrt(mean_i (1/C) * sum_k (proba[i, k] - [y_i == k])**2)``
    (``Evaluation.updateNumericScores``, ``rootMeanSquaredError``).

    Returns
    -------
    float in [0, sqrt(2/C)]
    """
    y, p = _check_classification(y_true, proba)
    return float(math.sqrt(np.mean(((p - _one_hot(y, p.shape[1])) ** 2).mean(axis=1))))


def _prior_errors(y, p, prior_counts):
    """(model abs, prior abs, model sq, prior sq) error sums, each averaged over classes."""
    n, n_classes = p.shape
    target = _one_hot(y, n_classes)
    prior = np.broadcast_to(class_priors(prior_counts, n_classes, n), p.shape)
    return (np.abs(p - target).mean(axis=1).sum(), np.abs(prior - target).mean(axis=1).sum(),
            ((p - target) ** 2).mean(axis=1).sum(), ((prior - target) ** 2).mean(axis=1).sum())


def relative_absolute_error(y_true, proba, prior_counts) -> float:
    """Weka's relative absolute error of the class probabilities, in percent.

    ``100 * sum_i e_i / sum_i e0_i``, where ``e_i`` is the class-averaged absolute
    error of ``proba[i]`` (as in :func:`weka_mae`) and ``e0_i`` that of the prior
    distribution (:func:`class_priors`) (``Evaluation.relativeAbsoluteError``,
    ``meanPriorAbsoluteError``).

    Parameters
    ----------
    y_true : array-like of int, shape (n,)
    proba : array-like of shape (n, C)
    prior_counts : array-like of shape (C,) or (n, C)
        Raw training class counts; the Laplace correction is applied here.

    Returns
    -------
    float (percent, >= 0)

    Raises
    ------
    ValueError
        On bad shapes, codes, probabilities or counts.
    """
    y, p = _check_classification(y_true, proba)
    abs_err, abs_prior, _, _ = _prior_errors(y, p, prior_counts)
    return float(100.0 * abs_err / abs_prior)  # the smoothed prior is never exact: abs_prior > 0


def root_relative_squared_error(y_true, proba, prior_counts) -> float:
    """Weka's root relative squared error of the class probabilities, in percent.

    ``100 * sqrt(sum_i s_i / sum_i s0_i)`` with ``s_i`` the class-averaged squared
    error of ``proba[i]`` and ``s0_i`` that of the prior distribution
    (``Evaluation.rootRelativeSquaredError``, ``rootMeanPriorSquaredError``).
    Parameters as :func:`relative_absolute_error`.

    Returns
    -------
    float (percent, >= 0)
    """
    y, p = _check_classification(y_true, proba)
    _, _, sq_err, sq_prior = _prior_errors(y, p, prior_counts)
    return float(100.0 * math.sqrt(sq_err / sq_prior))


def log_loss(y_true, proba) -> float:
    """Mean negative natural log of the probability given to the true class.

    Each ``proba[i, y_i]`` is first clipped to ``[eps, 1 - eps]``, ``eps`` the float64
    machine epsilon (about 2.2e-16), so a zero probability costs about 36.0 instead of
    infinity. Equals ``sklearn.metrics.log_loss(y_true, proba, labels=range(C))``
    (scikit-learn clips the same way). Weka does not print this figure.

    Returns
    -------
    float >= 0
    """
    y, p = _check_classification(y_true, proba)
    eps = np.finfo(np.float64).eps
    true_p = np.clip(p[np.arange(y.shape[0]), y], eps, 1 - eps)
    return float(-np.mean(np.log(true_p)))


def brier_score(y_true, proba) -> float:
    """Brier score: mean over instances of the squared error summed over the classes.

    ``mean_i sum_k (proba[i, k] - [y_i == k])**2`` — Brier's (1950) original
    definition, range ``[0, 2]``, for any number of classes (so for two classes it is
    twice the common binary form). Equals ``sklearn.metrics.brier_score_loss(y_true,
    proba, labels=range(C), scale_by_half=False)``, and ``C * weka_rmse**2``.

    Returns
    -------
    float in [0, 2]
    """
    y, p = _check_classification(y_true, proba)
    return float(np.mean(((p - _one_hot(y, p.shape[1])) ** 2).sum(axis=1)))


# ----------------------------------------------------------------------------- confusion-matrix figures


def _confusion(y_true, proba):
    y, p = _check_classification(y_true, proba)
    return confusion_matrix(y, predicted_class(p), p.shape[1])


def accuracy(y_true, proba) -> float:
    """Fraction of instances whose first arg-max class is the true class (``pctCorrect / 100``)."""
    cm = _confusion(y_true, proba)
    return float(np.trace(cm) / cm.sum())


def balanced_accuracy(y_true, proba) -> float:
    """Mean recall over the classes that occur in ``y_true``.

    Equals ``sklearn.metrics.balanced_accuracy_score(y_true, y_pred)`` on the first
    arg-max predictions (classes absent from the test set are left out). Weka does not
    print this figure.
    """
    cm = _confusion(y_true, proba)
    support = cm.sum(axis=1)
    present = support > 0
    return float(np.mean(np.diag(cm)[present] / support[present]))


def kappa(y_true, proba) -> float:
    """Cohen's kappa of the confusion matrix (``Evaluation.kappa``).

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the
    chance agreement from the row and column totals; Weka returns 1 when
    ``p_e == 1`` (all instances in one class and all predicted as it). Otherwise it
    equals ``sklearn.metrics.cohen_kappa_score``.

    Returns
    -------
    float in [-1, 1]
    """
    cm = _confusion(y_true, proba).astype(float)
    total = cm.sum()
    observed = np.trace(cm) / total
    chance = float(cm.sum(axis=1) @ cm.sum(axis=0)) / total**2
    if chance < 1:
        return float((observed - chance) / (1 - chance))
    return 1.0


def per_class_scores(confusion) -> dict[str, np.ndarray]:
    """Weka's one-vs-rest figures of every class, from a confusion matrix.

    Parameters
    ----------
    confusion : array-like of shape (C, C)
        Actual class in rows, predicted in columns.

    Returns
    -------
    dict of str to ndarray of shape (C,)
        ``tp_rate`` (= ``recall``) ``TP / (TP + FN)``; ``fp_rate`` ``FP / (FP + TN)``;
        ``precision`` ``TP / (TP + FP)``; ``f_measure`` ``2PR / (P + R)``, 0 when both
        are 0; ``mcc`` ``(TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))``;
        ``support`` the number of actual instances of the class. A zero denominator
        gives NaN (Weka prints ``?``): recall of a class absent from the test set,
        precision of a class never predicted, and their F-measure and MCC
        (``Evaluation.truePositiveRate``, ``falsePositiveRate``, ``precision``,
        ``fMeasure``, ``matthewsCorrelationCoefficient``).
    """
    cm = np.asarray(confusion, dtype=float)
    if cm.ndim != 2 or cm.shape[0] != cm.shape[1] or cm.shape[0] == 0:
        raise InputError(f"confusion must be a square (C, C) matrix, got shape {cm.shape}")
    tp = np.diag(cm)
    actual = cm.sum(axis=1)
    predicted = cm.sum(axis=0)
    fn = actual - tp
    fp = predicted - tp
    tn = cm.sum() - actual - fp
    prec = _divide(tp, tp + fp)
    rec = _divide(tp, actual)
    with np.errstate(invalid="ignore"):
        f = np.where((prec == 0) & (rec == 0), 0.0, _divide(2 * prec * rec, prec + rec))
        f = np.where(np.isnan(prec) | np.isnan(rec), np.nan, f)
        denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return {
        "tp_rate": rec,
        "fp_rate": _divide(fp, fp + tn),
        "precision": prec,
        "recall": rec.copy(),
        "f_measure": f,
        "mcc": _divide(tp * tn - fp * fn, denominator),
        "support": actual,
    }


def weighted_average(values, support) -> float:
    """Weka's "Weighted Avg." of per-class figures.

    ``sum_k support_k * values_k / sum_k support_k`` over the classes with
    ``support_k > 0``; classes absent from the test set are skipped even when their
    value is NaN, but a NaN of a class that does occur makes the average NaN
    (``Evaluation.weightedPrecision`` and its siblings).

    Parameters
    ----------
    values, support : array-like of shape (C,)

    Returns
    -------
    float (NaN as described)
    """
    v = np.asarray(values, dtype=float)
    s = np.asarray(support, dtype=float)
    if v.shape != s.shape or v.ndim != 1:
        raise InputError(f"values and support must be 1-D of equal length, got {v.shape}, {s.shape}")
    present = s > 0
    if not present.any():
        return float("nan")
    return float(np.sum(v[present] * s[present]) / s.sum())


def _macro(cm, which):
    """scikit-learn's macro average (labels seen in y_true or y_pred, 0/0 -> 0)."""
    tp = np.diag(cm).astype(float)
    actual = cm.sum(axis=1)
    predicted = cm.sum(axis=0)
    labels = (actual > 0) | (predicted > 0)
    if which == "precision":
        num, den = tp, predicted
    elif which == "recall":
        num, den = tp, actual
    else:
        num, den = 2 * tp, actual + predicted
    per = np.where(den > 0, _divide(num, den), 0.0)
    return float(np.mean(per[labels]))


def _averaged(name, y_true, proba, average):
    cm = _confusion(y_true, proba)
    if average is None:
        return per_class_scores(cm)[name]
    if average == "weighted":
        scores = per_class_scores(cm)
        return weighted_average(scores[name], scores["support"])
    if average == "macro":
        return _macro(cm, name)
    raise InputError(f"average must be None, 'weighted' or 'macro', got {average!r}")


def precision(y_true, proba, average: str | None = "weighted"):
    """Precision per class or averaged.

    Parameters
    ----------
    y_true : array-like of int, shape (n,)
    proba : array-like of shape (n, C)
    average : {"weighted", "macro", None}
        ``None``: one value per declared class, NaN for a class never predicted (Weka).
        ``"weighted"``: Weka's "Weighted Avg." (:func:`weighted_average`, NaN when a
        class that occurs in the test set is never predicted; otherwise equal to
        scikit-learn's ``average="weighted"``). ``"macro"``: scikit-learn's
        ``precision_recall_fscore_support(y_true, y_pred, average="macro",
        zero_division=0)``: the unweighted mean over the classes that occur in
        ``y_true`` or in the predictions, an undefined value counting as 0 (Weka does
        not print a macro average).

    Returns
    -------
    ndarray of shape (C,) or float
    """
    return _averaged("precision", y_true, proba, average)


def recall(y_true, proba, average: str | None = "weighted"):
    """Recall (TP rate) per class or averaged; ``average`` as in :func:`precision`.

    Per class, NaN for a class absent from the test set. The weighted recall equals the
    accuracy; the macro recall is scikit-learn's (which, unlike
    :func:`balanced_accuracy`, also averages over classes only predicted).
    """
    return _averaged("recall", y_true, proba, average)


def f_measure(y_true, proba, average: str | None = "weighted"):
    """F1 per class or averaged; ``average`` as in :func:`precision`.

    Per class Weka's ``2PR / (P + R)``: 0 when precision and recall are both 0, NaN
    when either is undefined. The macro average is scikit-learn's
    ``2TP / (2TP + FP + FN)`` per class (0 when undefined).
    """
    return _averaged("f_measure", y_true, proba, average)


def mcc(y_true, proba, average: str | None = "weighted"):
    """Matthews correlation: one-vs-rest per class (``average=None``) or Weka's weighted average.

    Weka prints a per-class MCC and its "Weighted Avg." (``Evaluation.
    weightedMatthewsCorrelation``); the single figure used for comparisons is that
    weighted average (NaN when a class that occurs in the test set has an undefined
    MCC, e.g. is never predicted). It is *not* the multi-class MCC of
    ``sklearn.metrics.matthews_corrcoef``.
    """
    if average not in (None, "weighted"):
        raise InputError(f"average must be None or 'weighted', got {average!r}")
    return _averaged("mcc", y_true, proba, average)


# ----------------------------------------------------------------------------- threshold curves


def _roc_of(positive, score) -> float:
    """:func:`roc_area` of one positive mask and its scores."""
    _, pos, neg = score_groups(positive, score)
    below = np.cumsum(neg) - neg
    area = np.sum(pos * (below + 0.5 * neg))
    return float(_divide(area, pos.sum() * neg.sum()))


def _prc_of(positive, score) -> float:
    """:func:`prc_area` of one positive mask and its scores."""
    _, pos, neg = score_groups(positive, score)
    total_pos = pos.sum()
    if total_pos == 0:
        return float("nan")
    tp = np.cumsum(pos[::-1])[::-1]  # predicted positive at each threshold (score >= t)
    fp = np.cumsum(neg[::-1])[::-1]
    rec = tp / total_pos
    prec = tp / (tp + fp)
    rec_next = np.append(rec[1:], 0.0)  # next higher threshold; the last one is the zero point
    area = float(np.sum(prec * (rec - rec_next)))
    return area if area != 0 else float("nan")  # getPRCArea: an area of 0 is "missing"


def roc_area(y_true, proba, k: int) -> float:
    """Area under the ROC curve of class ``k`` against the rest, as Weka computes it.

    The instances are ranked by ``proba[:, k]``; ``ThresholdCurve.getCurve`` makes one
    curve point per distinct score (tied scores form one group) and
    ``ThresholdCurve.getROCArea`` sums, over the groups, ``positives_in_group *
    (negatives_below + negatives_in_group / 2)``, divided by ``P * N``: the
    Mann-Whitney statistic with half credit for every tied positive-negative pair.
    Equals ``sklearn.metrics.roc_auc_score(y_true == k, proba[:, k])``.

    Returns
    -------
    float in [0, 1]; NaN when class ``k`` is absent from ``y_true`` or is the only
    class present (Weka prints ``?``).
    """
    y, p = _check_classification(y_true, proba)
    k = _check_class_index(k, p.shape[1])
    return _roc_of(y == k, p[:, k])


def prc_area(y_true, proba, k: int) -> float:
    """Area under the precision-recall curve of class ``k``, as Weka computes it.

    ``ThresholdCurve.getCurve`` gives one point per distinct score ``t`` of
    ``proba[:, k]`` (predict ``k`` when the score is ``>= t``), plus a final point with
    nothing predicted (recall 0). ``ThresholdCurve.getPRCArea`` walks from that point
    towards lower thresholds and adds ``precision(t) * (recall(t) - recall(previous))``:
    a step function, no interpolation, starting at recall 0. This equals
    ``sklearn.metrics.average_precision_score(y_true == k, proba[:, k])``.

    Returns
    -------
    float in (0, 1]; NaN when class ``k`` is absent from ``y_true`` (recall undefined;
    Weka prints ``?``).
    """
    y, p = _check_classification(y_true, proba)
    k = _check_class_index(k, p.shape[1])
    return _prc_of(y == k, p[:, k])


def _check_class_index(k, n_classes):
    if isinstance(k, bool) or int(k) != k or not 0 <= k < n_classes:
        raise InputError(f"class index k must be an integer in 0..{n_classes - 1}, got {k!r}")
    return int(k)


def _support(y, n_classes):
    return np.bincount(y, minlength=n_classes).astype(float)


def weighted_roc_area(y_true, proba) -> float:
    """Weka's weighted ROC area: :func:`roc_area` of each class, weighted as in :func:`weighted_average`.

    ``Evaluation.weightedAreaUnderROC``. NaN when only one class occurs in the test set.
    """
    y, p = _check_classification(y_true, proba)
    areas = [roc_area(y, p, k) for k in range(p.shape[1])]
    return weighted_average(areas, _support(y, p.shape[1]))


def weighted_prc_area(y_true, proba) -> float:
    """Weka's weighted PRC area (``Evaluation.weightedAreaUnderPRC``), as :func:`weighted_roc_area`."""
    y, p = _check_classification(y_true, proba)
    areas = [prc_area(y, p, k) for k in range(p.shape[1])]
    return weighted_average(areas, _support(y, p.shape[1]))


# ----------------------------------------------------------------------------- report


_PER_CLASS = ("tp_rate", "fp_rate", "precision", "recall", "f_measure", "mcc", "roc_area",
              "prc_area")


@dataclass(frozen=True, eq=False)
class ClassificationEvaluation:
    """Every figure of Weka's test-set report for a nominal class, plus a few more.

    Attributes
    ----------
    n, correct, incorrect : int
        Test instances; correctly and incorrectly classified.
    accuracy : float
        ``correct / n`` (a fraction; Weka prints it in percent, see ``pct_correct``).
    kappa, mae, rmse : float
        As :func:`kappa`, :func:`weka_mae`, :func:`weka_rmse`.
    rae, rrse : float
        Percent, as :func:`relative_absolute_error`, :func:`root_relative_squared_error`.
    log_loss, brier, balanced_accuracy : float
        Not printed by Weka; see :func:`log_loss`, :func:`brier_score`,
        :func:`balanced_accuracy`.
    confusion : ndarray of int64, shape (C, C)
        Actual class in rows, predicted in columns.
    class_names : tuple of str
        The ``C`` declared class names.
    support : ndarray of shape (C,)
        Actual test instances per class.
    per_class : dict of str to ndarray of shape (C,)
        ``tp_rate, fp_rate, precision, recall, f_measure, mcc, roc_area, prc_area``;
        NaN where Weka prints ``?``.
    weighted : dict of str to float
        Weka's "Weighted Avg." row, same keys.
    macro : dict of str to float
        scikit-learn's macro ``precision, recall, f_measure`` (see :func:`precision`).
    cost : CostEvaluation or None
        Weka's Total Cost and Average Cost under a cost matrix, when one was given
        (see :mod:`ensemblekit.scores.costs`).
    curves : tuple of ThresholdCurve
        Per class, the ROC and precision-recall points (:mod:`ensemblekit.scores.curves`),
        when they were asked for; empty otherwise. Not part of :meth:`to_dict`.
    """

    n: int
    correct: int
    incorrect: int
    accuracy: float
    kappa: float
    mae: float
    rmse: float
    rae: float
    rrse: float
    log_loss: float
    brier: float
    balanced_accuracy: float
    confusion: np.ndarray
    class_names: tuple[str, ...]
    support: np.ndarray
    per_class: dict[str, np.ndarray] = field(default_factory=dict)
    weighted: dict[str, float] = field(default_factory=dict)
    macro: dict[str, float] = field(default_factory=dict)
    cost: CostEvaluation | None = None
    curves: tuple[ThresholdCurve, ...] = ()

    @property
    def pct_correct(self) -> float:
        """Percent correctly classified, as Weka prints it."""
        return 100.0 * self.accuracy

    @property
    def mcc(self) -> float:
        """Weka's weighted-average MCC (the single MCC figure; see :func:`mcc`)."""
        return self.weighted["mcc"]

    def to_dict(self) -> dict:
        """Plain Python types for JSON: lists for arrays, ``None`` for NaN."""
        return {
            "n": self.n, "correct": self.correct, "incorrect": self.incorrect,
            "accuracy": _plain(self.accuracy), "kappa": _plain(self.kappa),
            "mae": _plain(self.mae), "rmse": _plain(self.rmse), "rae": _plain(self.rae),
            "rrse": _plain(self.rrse), "log_loss": _plain(self.log_loss),
            "brier": _plain(self.brier), "balanced_accuracy": _plain(self.balanced_accuracy),
            "class_names": list(self.class_names),
            "confusion": _plain(self.confusion),
            "support": _plain(self.support),
            "per_class": _plain(dict(self.per_class)),
            "weighted": _plain(dict(self.weighted)),
            "macro": _plain(dict(self.macro)),
            **({} if self.cost is None else self.cost.to_dict()),
        }  # fmt: skip


def classification_report(y_true, proba, prior_counts, class_names=None, *, cost_matrix=None,
                          curves: bool = False, unlabelled=None) -> ClassificationEvaluation:
    """All of Weka's test-set figures for a nominal class, in one object.

    Parameters
    ----------
    y_true : array-like of int, shape (n,)
        Class codes ``0 .. C-1``.
    proba : array-like of shape (n, C)
        Predicted class distributions.
    prior_counts : array-like of shape (C,) or (n, C), or None
        Raw class counts of the training set (see :func:`class_priors`); None when
        unknown (RAE and RRSE are then NaN).
    class_names : sequence of str, optional
        ``C`` names; default ``"0" .. "C-1"``.
    cost_matrix : array-like of shape (C, C), optional
        Costs of (actual, predicted) pairs: the report then has Weka's Total Cost and
        Average Cost (:func:`ensemblekit.scores.costs.cost_figures`).
    curves : bool, default=False
        Also keep each class's ROC and precision-recall points
        (:func:`ensemblekit.scores.curves.threshold_curve`).
    unlabelled : array-like of shape (m, C), optional
        Predicted distributions of test rows whose class is missing. Every figure but the
        ROC and precision-recall curves leaves them out; the curves (and their areas)
        count them as negatives of every class, as Weka 3.9.7's ``ThresholdCurve`` does:
        it compares the missing class (NaN) with ``==``, which is never true, so such a
        row neither is skipped nor matches any class.

    Returns
    -------
    ClassificationEvaluation

    Raises
    ------
    ValueError
        On bad shapes, codes, probabilities, counts or a wrong number of names, or a
        cost matrix that is not C by C finite numbers.
    """
    y, p = _check_classification(y_true, proba)
    n, n_classes = p.shape
    if class_names is None:
        names = tuple(str(k) for k in range(n_classes))
    else:
        names = tuple(str(c) for c in class_names)
        if len(names) != n_classes:
            raise InputError(f"class_names has {len(names)} names but proba has {n_classes} columns")
    cm = confusion_matrix(y, predicted_class(p), n_classes)
    scores = per_class_scores(cm)
    support = scores.pop("support")
    y_all, p_all = y, p  # the rows the threshold curves rank
    if unlabelled is not None and len(unlabelled):
        extra = np.asarray(unlabelled, dtype=np.float64).reshape(-1, n_classes)
        y_all, p_all = np.concatenate([y, np.full(extra.shape[0], -1)]), np.vstack([p, extra])
    scores["roc_area"] = np.array([_roc_of(y_all == k, p_all[:, k]) for k in range(n_classes)])
    scores["prc_area"] = np.array([_prc_of(y_all == k, p_all[:, k]) for k in range(n_classes)])
    per_class = {name: scores[name] for name in _PER_CLASS}
    for arr in per_class.values():
        arr.flags.writeable = False
    cm.flags.writeable = False
    support.flags.writeable = False
    correct = int(np.trace(cm))
    return ClassificationEvaluation(
        n=n, correct=correct, incorrect=n - correct, accuracy=correct / n,
        kappa=kappa(y, p), mae=weka_mae(y, p), rmse=weka_rmse(y, p),
        rae=_NAN if prior_counts is None else relative_absolute_error(y, p, prior_counts),
        rrse=_NAN if prior_counts is None else root_relative_squared_error(y, p, prior_counts),
        log_loss=log_loss(y, p), brier=brier_score(y, p),
        balanced_accuracy=balanced_accuracy(y, p),
        confusion=cm, class_names=names, support=support,
        per_class=per_class,
        weighted={name: weighted_average(per_class[name], support) for name in _PER_CLASS},
        macro={name: _macro(cm, name) for name in ("precision", "recall", "f_measure")},
        cost=None if cost_matrix is None else cost_figures(cm, cost_matrix),
        curves=(tuple(threshold_curve(y_all == k, p_all[:, k]) for k in range(n_classes))
                if curves else ()),
    )  # fmt: skip


# ----------------------------------------------------------------------------- labels


def label_accuracy(y_true, y_pred):
    """Fraction of instances whose predicted class equals the true class.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True class labels (e.g. integer codes of a nominal class).
    y_pred : array-like of shape (n_samples,)
        Predicted class labels, in the same coding as ``y_true``.

    Returns
    -------
    float
        ``(1/n) * sum_i [y_true[i] == y_pred[i]]``, in [0, 1]; 1 is best.
        Same value as :func:`sklearn.metrics.accuracy_score`.

    Raises
    ------
    ValueError
        If an input is not 1-D, the lengths differ, the inputs are empty, or
        a float input contains NaN.
    """
    y_true, y_pred = _check_labels(y_true, y_pred, ("y_true", "y_pred"))
    return float(np.mean(y_true == y_pred))


def from_labels(figure, y_true, y_pred, average: str | None = None) -> float:
    """A figure of this module computed from predicted class codes alone.

    The figures here read the predicted class as the first arg-max of a
    distribution; a predicted code stands for the distribution that puts all its
    mass on it. Classes neither true nor predicted do not enter these figures, so
    the distributions need only cover the codes seen.

    Parameters
    ----------
    figure : callable
        A figure of ``(y_true, proba)``, or of ``(y_true, proba, average)`` when
        ``average`` is given: :func:`balanced_accuracy`, :func:`kappa`,
        :func:`precision`, :func:`recall`, :func:`f_measure` or :func:`mcc`.
    y_true, y_pred : array-like of int, shape (n,)
        True and predicted class codes (non-negative integers), ``n >= 1``.
    average : {None, "macro", "weighted"}, default=None
        None: ``figure(y_true, proba)``. ``"macro"``: ``figure(y_true, proba,
        "macro")``. ``"weighted"``: the per-class figures (``figure(y_true, proba,
        None)``) averaged with the classes' test counts as weights, an undefined
        figure (a class never predicted has no precision; Weka prints ``?`` and
        no weighted average) counting as 0, as scikit-learn's
        ``zero_division=0``: a fold's score must be a number to be ranked.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the inputs are not 1-D of one non-zero length, or from ``figure``.
    """
    y_true = np.asarray(y_true, dtype=np.intp)
    y_pred = np.asarray(y_pred, dtype=np.intp)
    if y_true.ndim != 1 or y_pred.shape != y_true.shape or y_true.size == 0:
        raise InputError(f"y_true and y_pred must be 1-D of one non-zero length, got "
                         f"shapes {y_true.shape} and {y_pred.shape}")
    n_classes = int(max(y_true.max(), y_pred.max())) + 1
    proba = np.zeros((y_pred.size, n_classes))
    proba[np.arange(y_pred.size), y_pred] = 1.0
    if average != "weighted":
        return float(figure(y_true, proba) if average is None else figure(y_true, proba, average))
    per_class = np.nan_to_num(figure(y_true, proba, None), nan=0.0)
    support = np.bincount(y_true, minlength=n_classes)
    return float(per_class @ support / y_true.size)
