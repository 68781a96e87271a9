"""ROC and precision-recall curve points of one class against the rest, as Weka's
``ThresholdCurve`` makes them (weka/classifiers/evaluation/ThresholdCurve.java).

An instance counts as predicted positive at threshold ``t`` when its score (the
predicted probability of the class) is ``>= t``. There is one point per distinct
score, ascending, the lowest predicting every instance positive, plus a last point
with nothing predicted positive (threshold ``inf``; Weka writes a value just above
the highest score). Tied scores form one group, compared by exact equality, as in
Weka. These are the points of ``sklearn.metrics.roc_curve(..., drop_intermediate=
False)`` and ``precision_recall_curve``, in the opposite order. Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ensemblekit.errors import InputError

__all__ = ["ThresholdCurve", "CURVE_COLUMNS", "score_groups", "threshold_curve"]

#: The per-point figures of :class:`ThresholdCurve`, in the order they are written.
CURVE_COLUMNS = ("threshold", "tp", "fp", "tn", "fn", "tpr", "fpr", "precision", "recall",
                 "f_measure", "sample_size", "lift")


def score_groups(positive, score):
    """Positives and negatives per distinct score, the scores ascending.

    Parameters
    ----------
    positive : ndarray of bool or 0/1, shape (n,)
    score : ndarray of float, shape (n,)

    Returns
    -------
    values : ndarray of shape (m,)
        The distinct scores, ascending.
    pos, neg : ndarray of float64, shape (m,)
        Positive and negative instances holding each score.
    """
    values, group = np.unique(score, return_inverse=True)
    weight = np.asarray(positive, dtype=float).ravel()
    pos = np.bincount(group.ravel(), weights=weight, minlength=values.size)
    neg = np.bincount(group.ravel(), weights=1.0 - weight, minlength=values.size)
    return values, pos, neg


def _ratio(num, den):
    """``num / den``, NaN where ``den`` is 0 (Weka writes ``?``), without warnings."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1, den))


@dataclass(frozen=True, eq=False)
class ThresholdCurve:
    """The curve points of one class, thresholds ascending.

    Attributes
    ----------
    threshold : ndarray of float64, shape (m + 1,)
        The ``m`` distinct scores, then ``inf``.
    tp, fp, tn, fn : ndarray of float64, shape (m + 1,)
        Counts at each threshold.
    tpr, fpr : ndarray of float64
        ``tp / P`` (also the recall) and ``fp / N``; NaN when the class has no
        positive (negative) instance.
    precision : ndarray of float64
        ``tp / (tp + fp)``; NaN at the last point, where nothing is predicted positive.
    recall : ndarray of float64
        Equal to ``tpr``.
    f_measure : ndarray of float64
        ``2 tp / (2 tp + fp + fn)``, the harmonic mean of precision and recall; NaN
        where the precision is (Weka writes ``?`` there too).
    sample_size : ndarray of float64
        Share of instances predicted positive, ``(tp + fp) / n``.
    lift : ndarray of float64
        ``precision / (P / n)``.
    """

    threshold: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    tn: np.ndarray
    fn: np.ndarray
    tpr: np.ndarray
    fpr: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f_measure: np.ndarray
    sample_size: np.ndarray
    lift: np.ndarray

    def rows(self):
        """The points as tuples in :data:`CURVE_COLUMNS` order (Python floats)."""
        return zip(*(getattr(self, name).tolist() for name in CURVE_COLUMNS), strict=True)


def threshold_curve(positive, score) -> ThresholdCurve:
    """ROC and precision-recall points of a binary problem (Weka's
    ``ThresholdCurve.getCurve`` for one class value).

    Parameters
    ----------
    positive : array-like of bool, shape (n,)
        Whether each instance belongs to the class.
    score : array-like of float, shape (n,)
        The instance's score for the class (its predicted probability), finite.

    Returns
    -------
    ThresholdCurve
        The trapezoid area under ``(fpr, tpr)`` is the ROC area of
        :func:`ensemblekit.scores.classification.roc_area`.

    Raises
    ------
    InputError
        Arrays that are not 1-D of one length, empty, or a score that is not finite.
    """
    positive = np.asarray(positive)
    score = np.asarray(score, dtype=np.float64)
    if positive.ndim != 1 or score.ndim != 1 or positive.shape != score.shape:
        raise InputError(f"positive and score must be 1-D arrays of one length, got shapes "
                         f"{positive.shape} and {score.shape}")
    if score.size == 0:
        raise InputError("positive and score are empty; a curve needs at least one instance")
    if not np.isfinite(score).all():
        raise InputError("score contains NaN or infinite values")
    values, pos, neg = score_groups(positive.astype(bool), score)
    # predicted positive at threshold t: every group at or above t; then none at all
    tp = np.append(np.cumsum(pos[::-1])[::-1], 0.0)
    fp = np.append(np.cumsum(neg[::-1])[::-1], 0.0)
    n_pos, n_neg = pos.sum(), neg.sum()
    n = n_pos + n_neg
    precision = _ratio(tp, tp + fp)
    tpr = _ratio(tp, np.full_like(tp, n_pos))
    return ThresholdCurve(
        threshold=np.append(values, np.inf), tp=tp, fp=fp, tn=n_neg - fp, fn=n_pos - tp,
        tpr=tpr, fpr=_ratio(fp, np.full_like(fp, n_neg)), precision=precision, recall=tpr,
        f_measure=np.where(np.isnan(precision), np.nan, _ratio(2 * tp, tp + fp + n_pos)),
        sample_size=(tp + fp) / n,
        lift=_ratio(precision, np.full_like(tp, n_pos / n)))
