"""Metric names: what each score judges, its direction, what it needs, and the one scorer.

Each name (``--metric nmi``) maps to a :class:`Metric`: the pure function of
:mod:`ensemblekit.scores` that computes it, the task(s) it judges, whether
greater is better, and what it needs besides the predictions: the classes, the
class probabilities, the training set's class counts or mean (the relative
errors), or the clustered data (the internal indices). :func:`metric_spec` reads
one entry; :data:`DEFAULT_METRICS` and :data:`REPORT_METRICS` say what
``compare`` and ``evaluate`` give when no metric is named.

:func:`score_model` is the one place that turns "these metrics" into the inputs
they need from a fitted model (probabilities, the clustered space) and computes
them; the experiment runner, ``evaluate`` and ``cluster`` all call it.

Three measures judge the run rather than the predictions (Weka's Experimenter
records them beside the scores): ``fit-seconds`` and ``predict-seconds``, the wall
time of fitting the estimator and of predicting the test rows, and ``model-size``,
read from the fitted model's own ``model_size()`` (declared by each model class that
has a natural size, beside its code; :func:`refuse_unmeasured` refuses the others).
A fourth, ``structure-stability``, judges the models of a group of units together: each
unit records its model's structure (:func:`model_structure`, declared by the model class
as ``structure_kind``), and the experiment compares the structures of the models that
the training folds of one repeat built (:mod:`ensemblekit.experiment.stability`).
The times are measured, so they are the one part of a run that its seed does not
fix: they are excluded from the byte-identical guarantees.

scikit-learn is imported inside the functions that use it, so importing this
module stays cheap.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.scores.classification import (
    balanced_accuracy,
    brier_score,
    f_measure,
    from_labels,
    kappa,
    label_accuracy,
    log_loss,
    mcc,
    precision,
    recall,
    relative_absolute_error,
    root_relative_squared_error,
    weighted_prc_area,
    weighted_roc_area,
    weka_mae,
    weka_rmse,
)
from ensemblekit.scores.clustering import (
    adjusted_rand,
    calinski_harabasz,
    connectivity,
    davies_bouldin,
    dunn,
    fowlkes_mallows,
    jaccard,
    nmi,
    purity,
    rand,
    silhouette,
    wallace_01,
    wallace_10,
)
from ensemblekit.scores.regression import (
    correlation,
    mae,
    r2,
    relative_absolute_error_regression,
    rmse,
    root_relative_squared_error_regression,
)

__all__ = [
    "Metric",
    "METRICS",
    "Outcome",
    "DEFAULT_METRICS",
    "REPORT_METRICS",
    "EXTERNAL_INDICES",
    "INTERNAL_INDICES",
    "UnknownMetricError",
    "MEASURES",
    "metric_spec",
    "refuse_unmeasured",
    "model_size",
    "model_structure",
    "default_metrics",
    "Scored",
    "model_predictions",
    "score_model",
    "clustering_indices",
    "best_k",
]

_C, _R, _K = "classification", "regression", "clustering"
_BOTH = (_C, _R)
_ALL = (_C, _R, _K)


class UnknownMetricError(InputError):
    """A metric name that is not in :data:`METRICS`; the message lists the known ones."""


@dataclass(frozen=True)
class Outcome:
    """What the probability-based supervised scores are computed from.

    Attributes
    ----------
    truth : ndarray of shape (n_samples,)
        Class codes in ``0 .. n_classes - 1``, or the true target values.
    predicted : ndarray of shape (n_samples,)
        Predicted class codes (the first arg-max of ``proba``), or values.
    proba : ndarray of shape (n_samples, n_classes) or None
        Class probabilities, one column per declared class; None for a
        regression.
    prior : ndarray of shape (n_classes,), float or None
        What the relative errors are measured against: the training set's
        class counts (classification; Weka smooths them itself, see
        :mod:`ensemblekit.scores.classification`) or the training targets' mean
        (regression). None when unknown (a model file that does not record it).
    """

    truth: np.ndarray
    predicted: np.ndarray
    proba: np.ndarray | None = None
    prior: np.ndarray | float | None = None


@dataclass(frozen=True)
class Metric:
    """A named score with what the experiment code needs to know about it.

    Parameters
    ----------
    name : str
        Registry key, as given on the command line (``--metric nmi``).
    func : callable
        External label scores (``inputs="labels"``): ``func(truth, predicted)
        -> float``; ``truth`` is the class labels (or the numeric targets),
        ``predicted`` the predicted classes, cluster ids (or predicted
        values), both of shape (n_samples,). Scores of class probabilities or
        relative errors (``inputs="outcome"``): ``func(outcome) -> float``
        with an :class:`Outcome`. Internal indices (``internal=True``):
        ``func(X, labels) -> float`` with ``X`` the clustered data, shape
        (n_samples, n_features).
    task : str or tuple of str
        The task(s) whose predictions the score judges: "classification",
        "clustering" or "regression". Weka's error measures (MAE, RMSE, RAE,
        RRSE) serve classification and regression under one name.
    greater_is_better : bool, default=True
        Direction used for ranking algorithms.
    label : str, default=""
        Column heading for reports; the name when empty.
    internal : bool, default=False
        True for an internal clustering index, which needs the data and not
        the classes.
    inputs : {"labels", "outcome", "model", "time", "structure"}, default="labels"
        What ``func`` takes (see ``func``); "structure": the measure compares the
        structures of several units' models (:func:`model_structure`), so no single unit
        computes it, and ``func`` is never called.
    needs_prior : bool, default=False
        True for the relative errors, which need the training set's class
        counts or target mean.
    value_range : tuple of (float, float), default=(-inf, inf)
        The closed interval ``[low, high]`` every score of one fold lies in (an
        end may be infinite). A score read back from outside, such as a resume
        journal, is checked against it (:meth:`value_problem`).
    finite : bool, default=False
        True when every fold's score is a finite number. False when a fold can
        leave the score undefined (NaN: a ROC area of a fold holding one class)
        or infinite (a relative error of a constant target), or when the data's
        extremes can overflow it.
    integer : bool, default=False
        True when every fold's value is a whole number (a count, such as the
        model size).
    requires : str, default=""
        The method a fitted model must declare for the measure to exist
        (``"model_size"``); empty when every model has it. See
        :func:`refuse_unmeasured`.
    """

    name: str
    func: Callable[..., float]
    task: str | tuple[str, ...]
    greater_is_better: bool = True
    label: str = ""
    internal: bool = False
    inputs: str = "labels"
    needs_prior: bool = False
    value_range: tuple[float, float] = (-math.inf, math.inf)
    finite: bool = False
    integer: bool = False
    requires: str = ""

    def applies_to(self, task: str) -> bool:
        """Whether the score judges predictions of ``task``."""
        return task == self.task if isinstance(self.task, str) else task in self.task

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks the score applies to, as a tuple."""
        return (self.task,) if isinstance(self.task, str) else tuple(self.task)

    @property
    def needs_proba(self) -> bool:
        """True when the score needs class probabilities (or, for a regression, the
        training targets' mean) and not only the predicted labels."""
        return self.inputs == "outcome"

    def __call__(self, truth, predicted) -> float:
        """Compute a label score; same as ``self.func(truth, predicted)``.

        Raises
        ------
        TypeError
            For an internal index (use :meth:`score` with ``X``) or a score
            of probabilities (use :meth:`score` with ``proba``).
        """
        if self.internal:
            raise TypeError(f"{self.name} is an internal index: call score(labels, X=...)")
        if self.inputs in _OF_THE_RUN:
            raise TypeError(f"{self.name} measures the run: call score_model")
        if self.inputs != "labels":
            raise TypeError(f"{self.name} needs class probabilities: call score(predicted, "
                            "truth=..., proba=..., prior=...)")
        return self.func(truth, predicted)

    def score(self, predicted, *, truth=None, X=None, proba=None, prior=None) -> float:
        """Compute the score from what it needs: the classes, probabilities or data.

        Parameters
        ----------
        predicted : array-like of shape (n_samples,)
            Predicted classes, values or cluster ids.
        truth : array-like of shape (n_samples,), optional
            Classes or targets; required by every external score.
        X : array-like of shape (n_samples, n_features), optional
            Clustered data; required by internal indices.
        proba : array-like of shape (n_samples, n_classes), optional
            Class probabilities; required by the probability scores of a
            classification (None for a regression).
        prior : array-like of shape (n_classes,) or float, optional
            Training class counts, or the training targets' mean; required by
            the relative errors.

        Raises
        ------
        ValueError
            If the input the score needs is missing, or from the score itself.
        TypeError
            For a measure of the run (``inputs`` "model" or "time"), which
            :func:`score_model` computes.
        """
        if self.inputs in _OF_THE_RUN:
            raise TypeError(f"{self.name} measures the run: call score_model")
        if self.internal:
            if X is None:
                raise InputError(f"{self.name} is an internal index and needs the data X")
            return float(self.func(X, predicted))
        if truth is None:
            raise InputError(f"{self.name} compares with the classes and needs them")
        if self.inputs == "labels":
            return float(self.func(truth, predicted))
        if self.needs_prior and prior is None:
            raise InputError(f"{self.name} is relative to the training set's class counts or "
                             "mean, which are not known here")
        return float(self.func(Outcome(np.asarray(truth), np.asarray(predicted),
                                       None if proba is None else np.asarray(proba, float),
                                       prior)))

    def value_problem(self, value: float) -> str | None:
        """Say why ``value`` cannot be a score of one fold, or ``None`` if it can.

        A finite value must lie in :attr:`value_range`, give or take a rounding
        error (a relative ``1e-9`` of the end, at least ``1e-9``): a correlation
        or an NMI computed in floating point may land an ulp past 1; and be a
        whole number when the score is an :attr:`integer`. NaN and an infinite
        value are accepted only when the score is not :attr:`finite`, an
        infinite one only at an infinite end of the range.

        Parameters
        ----------
        value : float

        Returns
        -------
        str or None
            A phrase such as ``"accuracy is 7.5, outside its range [0, 1]"``,
            or ``None``.
        """
        low, high = self.value_range
        if math.isnan(value) or math.isinf(value):
            if self.finite:
                return f"{self.name} is {value}, but it is always a finite number"
            if math.isnan(value):
                return None
        slack = _ROUNDING * max(1.0, abs(low) if math.isfinite(low) else 0.0,
                                abs(high) if math.isfinite(high) else 0.0)
        if self.integer and math.isfinite(value) and value != math.floor(value):
            return f"{self.name} is {value!r}, not a whole number"
        if low - slack <= value <= high + slack:
            return None
        return f"{self.name} is {value!r}, outside its range {_interval(low, high)}"

    @property
    def display_name(self) -> str:
        """The label, or the name when no label was given."""
        return self.label or self.name


#: The ``inputs`` of the measures of the run rather than of a unit's predictions.
_OF_THE_RUN = ("model", "time", "structure")

#: How far past an end of its range a score may land by rounding (relative to the end).
_ROUNDING = 1e-9


def _interval(low: float, high: float) -> str:
    """``[0, 1]``, ``[0, inf)``, ``(-inf, 1]``: a range as the messages show it."""
    def end(x: float) -> str:
        return f"{x:g}" if math.isfinite(x) else ("-inf" if x < 0 else "inf")

    return (("(" if math.isinf(low) else "[") + f"{end(low)}, {end(high)}"
            + (")" if math.isinf(high) else "]"))


#: Ranges shared by several scores.
_UNIT = (0.0, 1.0)
_SIGNED = (-1.0, 1.0)
_NON_NEGATIVE = (0.0, math.inf)


def _either(classification: Callable, regression: Callable, relative: bool = False
            ) -> Callable[[Outcome], float]:
    """Weka's error measure under one name: of the class probabilities for a
    classification (``classification(truth, proba[, prior counts])``), of the values
    for a regression (``regression(truth, predicted[, training mean])``)."""

    def score(outcome: Outcome) -> float:
        prior = (outcome.prior,) if relative else ()
        if outcome.proba is not None:
            return float(classification(outcome.truth, outcome.proba, *prior))
        return float(regression(outcome.truth, outcome.predicted, *prior))

    score.__name__ = f"{classification.__name__}_or_{regression.__name__}"
    return score


def _of_probabilities(func: Callable) -> Callable[[Outcome], float]:
    """A classification score of ``func(truth, proba)``."""

    def score(outcome: Outcome) -> float:
        if outcome.proba is None:
            raise InputError(f"{func.__name__} needs class probabilities")
        return float(func(outcome.truth, outcome.proba))

    score.__name__ = func.__name__
    return score


def model_size(model) -> int:
    """The size of a fitted model, as its class declares it.

    The size is what Weka's Experimenter records as the model's measure of
    complexity: a tree's node count (J48's "Size of the tree"), a Bayesian
    network's arcs, the rules a rule ensemble uses, a clusterer's prototypes, the
    instances a lazy learner stores. Each model class that has one says which,
    in its own ``model_size()`` method.

    Parameters
    ----------
    model : fitted estimator or pipeline
        A pipeline's last step is the estimator asked.

    Returns
    -------
    int
        At least 0.

    Raises
    ------
    InputError
        If the estimator declares no ``model_size()``.
    """
    steps = getattr(model, "steps", None)
    estimator = steps[-1][1] if steps else model
    size = getattr(estimator, "model_size", None)
    if size is None:
        raise InputError(f"model-size: a {type(estimator).__name__} model has no natural size "
                         "(it declares no model_size())")
    return int(size())


def model_structure(model, labels=None) -> dict:
    """The structure of a fitted model that ``-m structure-stability`` compares.

    The model class declares what its structure is, beside its code, with a class
    attribute ``structure_kind`` (see :mod:`ensemblekit.scores.structure`):
    ``"arcs"`` (a Bayesian network's (parent, child) arcs) and ``"splits"`` (a tree's
    (attribute, depth) pairs) are read from its ``structure()`` method; ``"partition"``
    (a clusterer) is the labels its fit gave the rows.

    Parameters
    ----------
    model : fitted estimator or pipeline
        A pipeline's last step is the estimator asked.
    labels : array-like of int, shape (n_rows,), optional
        A clusterer's fit labels; needed for a partition.

    Returns
    -------
    dict
        ``{"kind": "arcs" | "splits", "items": [[int, int], ...]}`` or ``{"kind":
        "partition", "labels": ndarray of int32}``.

    Raises
    ------
    InputError
        If the estimator declares no ``structure_kind``, or a partition has no labels.
    """
    steps = getattr(model, "steps", None)
    estimator = steps[-1][1] if steps else model
    kind = getattr(type(estimator), "structure_kind", None)
    if kind is None:
        raise InputError(f"structure-stability: a {type(estimator).__name__} model declares no "
                         "structure to compare (no structure_kind)")
    if kind == "partition":
        if labels is None:
            raise InputError("structure-stability: a partition needs the fit's labels")
        return {"kind": kind, "labels": np.asarray(labels, dtype=np.int32)}
    return {"kind": kind, "items": [[int(a), int(b)] for a, b in estimator.structure()]}


def _seconds(stage: str) -> Callable[[dict], float]:
    """A time measured while a run fits (``stage="fit"``) or predicts: read from the
    ``{stage: seconds}`` that :func:`score_model` gathers."""

    def seconds(measured: dict) -> float:
        value = measured.get(stage)
        if value is None:
            raise InputError(f"{stage}-seconds: no {stage} is timed here (compare and evaluate "
                             "time each fold's or run's fit, and its prediction)")
        return float(value)

    seconds.__name__ = f"{stage}_seconds"
    return seconds


def _of_labels(figure: Callable, average: str | None = None) -> Callable[..., float]:
    """``figure`` of predicted class codes (see :func:`ensemblekit.scores.classification.from_labels`)."""
    return partial(from_labels, figure, average=average)


METRICS: dict[str, Metric] = {
    "accuracy": Metric("accuracy", label_accuracy, _C, True, "Accuracy",
                       value_range=_UNIT, finite=True),
    "balanced-accuracy": Metric("balanced-accuracy", _of_labels(balanced_accuracy), _C, True,
                                "Balanced accuracy", value_range=_UNIT, finite=True),
    "kappa": Metric("kappa", _of_labels(kappa), _C, True, "Kappa", value_range=_SIGNED,
                    finite=True),
    "mcc": Metric("mcc", _of_labels(mcc, "weighted"), _C, True, "MCC", value_range=_SIGNED,
                  finite=True),
    "precision-macro": Metric("precision-macro", _of_labels(precision, "macro"), _C, True,
                              "Precision (macro)", value_range=_UNIT, finite=True),
    "recall-macro": Metric("recall-macro", _of_labels(recall, "macro"), _C, True, "Recall (macro)",
                           value_range=_UNIT, finite=True),
    "f1-macro": Metric("f1-macro", _of_labels(f_measure, "macro"), _C, True, "F1 (macro)",
                       value_range=_UNIT, finite=True),
    "precision-weighted": Metric("precision-weighted", _of_labels(precision, "weighted"), _C, True,
                                 "Precision (weighted)", value_range=_UNIT, finite=True),
    "recall-weighted": Metric("recall-weighted", _of_labels(recall, "weighted"), _C, True,
                              "Recall (weighted)", value_range=_UNIT, finite=True),
    "f1-weighted": Metric("f1-weighted", _of_labels(f_measure, "weighted"), _C, True, "F1 (weighted)",
                          value_range=_UNIT, finite=True),
    # undefined (NaN) in a fold that holds one class
    "auc": Metric("auc", _of_probabilities(weighted_roc_area), _C, True, "ROC area", inputs="outcome",
                  value_range=_UNIT),
    "prc": Metric("prc", _of_probabilities(weighted_prc_area), _C, True, "PRC area", inputs="outcome",
                  value_range=_UNIT),
    # each probability is clipped away from 0, so the loss stays finite
    "log-loss": Metric("log-loss", _of_probabilities(log_loss), _C, False, "Log-loss",
                       inputs="outcome", value_range=_NON_NEGATIVE, finite=True),
    "brier": Metric("brier", _of_probabilities(brier_score), _C, False, "Brier", inputs="outcome",
                    value_range=(0.0, 2.0), finite=True),
    "nmi": Metric("nmi", nmi, _K, True, "NMI", value_range=_UNIT, finite=True),
    "purity": Metric("purity", purity, _K, True, "Purity", value_range=_UNIT, finite=True),
    "ari": Metric("ari", adjusted_rand, _K, True, "ARI", value_range=_SIGNED, finite=True),
    "rand": Metric("rand", rand, _K, True, "Rand", value_range=_UNIT, finite=True),
    "jaccard": Metric("jaccard", jaccard, _K, True, "Jaccard", value_range=_UNIT, finite=True),
    "fm": Metric("fm", fowlkes_mallows, _K, True, "FM", value_range=_UNIT, finite=True),
    "w10": Metric("w10", wallace_10, _K, True, "W10", value_range=_UNIT, finite=True),
    "w01": Metric("w01", wallace_01, _K, True, "W01", value_range=_UNIT, finite=True),
    # the internal indices measure distances, which the data's extremes can overflow
    "silhouette": Metric("silhouette", silhouette, _K, True, "Silhouette", internal=True,
                         value_range=_SIGNED),
    "dunn": Metric("dunn", dunn, _K, True, "Dunn", internal=True, value_range=_NON_NEGATIVE),
    "connectivity": Metric("connectivity", connectivity, _K, False, "Connectivity", internal=True,
                           value_range=_NON_NEGATIVE),
    "davies-bouldin": Metric("davies-bouldin", davies_bouldin, _K, False, "Davies-Bouldin",
                             internal=True, value_range=_NON_NEGATIVE),
    "calinski-harabasz": Metric("calinski-harabasz", calinski_harabasz, _K, True,
                                "Calinski-Harabasz", internal=True, value_range=_NON_NEGATIVE),
    # a regression's scores can overflow on targets near the float limits, and the relative
    # errors are undefined for a constant target
    "correlation": Metric("correlation", correlation, _R, True, "Correlation",
                          value_range=_SIGNED),
    "mae": Metric("mae", _either(weka_mae, mae), _BOTH, False, "MAE", inputs="outcome",
                  value_range=_NON_NEGATIVE),
    "rmse": Metric("rmse", _either(weka_rmse, rmse), _BOTH, False, "RMSE", inputs="outcome",
                   value_range=_NON_NEGATIVE),
    "rae": Metric("rae", _either(relative_absolute_error, relative_absolute_error_regression, True),
                  _BOTH, False, "RAE %", inputs="outcome", needs_prior=True,
                  value_range=_NON_NEGATIVE),
    "rrse": Metric("rrse", _either(root_relative_squared_error, root_relative_squared_error_regression,
                                   True),
                   _BOTH, False, "RRSE %", inputs="outcome", needs_prior=True,
                   value_range=_NON_NEGATIVE),
    "r2": Metric("r2", r2, _R, True, "R²", value_range=(-math.inf, 1.0)),
    # how alike the models of one repeat's training folds (or of the clustering runs) are:
    # computed over units, not within one (ensemblekit.experiment.stability)
    "structure-stability": Metric("structure-stability", model_structure, (_C, _K), True,
                                  "Structure stability", inputs="structure",
                                  value_range=_SIGNED, requires="structure_kind"),
    # measures of the run (Weka's Experimenter records them): lower is better. The times are
    # wall-clock seconds, the one part of a run its seed does not fix, so they are left out of
    # the byte-identical guarantees; a clustering run fits and labels in one step, timed as
    # its fit.
    "fit-seconds": Metric("fit-seconds", _seconds("fit"), _ALL, False, "Fit seconds",
                          inputs="time", value_range=_NON_NEGATIVE, finite=True),
    "predict-seconds": Metric("predict-seconds", _seconds("predict"), _BOTH, False,
                              "Predict seconds", inputs="time", value_range=_NON_NEGATIVE,
                              finite=True),
    "model-size": Metric("model-size", model_size, _ALL, False, "Model size", inputs="model",
                         value_range=_NON_NEGATIVE, finite=True, integer=True,
                         requires="model_size"),
}
"""Metric name -> :class:`Metric`, in the order reports list them."""

#: Metrics reported when the user does not name any, per task.
DEFAULT_METRICS = {
    _C: ("accuracy",),
    _K: ("nmi", "purity"),
    _R: ("correlation", "rmse"),
}

#: The measures ``evaluate`` reports for a classifier or a regression algorithm, in
#: report order: Weka's summary (accuracy, kappa, the four error measures of
#: :class:`weka.classifiers.Evaluation`) and the other standard ones.
REPORT_METRICS = {
    _C: ("accuracy", "balanced-accuracy", "kappa", "mcc", "precision-weighted", "recall-weighted",
         "f1-weighted", "f1-macro", "auc", "prc", "log-loss", "brier", "mae", "rmse", "rae",
         "rrse"),
    _R: ("correlation", "mae", "rmse", "rae", "rrse"),
}

#: Names of the measures of the run rather than of its predictions (times, model size).
MEASURES = tuple(m.name for m in METRICS.values() if m.inputs in ("model", "time"))

#: Names of the external clustering indices (they compare with the classes), in report order.
EXTERNAL_INDICES = tuple(m.name for m in METRICS.values() if m.task == _K and not m.internal)

#: Names of the internal clustering indices (they need the data), in report order.
INTERNAL_INDICES = tuple(m.name for m in METRICS.values() if m.internal)

# ``evaluate`` of a clusterer reports what ``cluster`` prints: every external index (they need
# the classes), then every internal one
REPORT_METRICS[_K] = EXTERNAL_INDICES + INTERNAL_INDICES


def metric_spec(name: str) -> Metric:
    """The registry entry of a metric name.

    Parameters
    ----------
    name : str
        A key of :data:`METRICS`, e.g. ``"nmi"``.

    Returns
    -------
    Metric

    Raises
    ------
    UnknownMetricError
        If ``name`` is not a known metric; the message lists the known names.
    """
    try:
        return METRICS[name]
    except (KeyError, TypeError):
        raise UnknownMetricError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}"
                                 ) from None


def refuse_unmeasured(metrics: Sequence[str], algorithms: Sequence) -> None:
    """Refuse a measure that the model of some algorithm does not declare.

    A measure read from the fitted model (``model-size``, ``structure-stability``)
    exists for the algorithms whose model class has the method or attribute it
    :attr:`Metric.requires` (``model_size``, ``structure_kind``); this is learnt from
    the class itself, so an algorithm gains the measure by declaring it beside its code.

    Parameters
    ----------
    metrics : sequence of str
        Keys of :data:`METRICS`.
    algorithms : sequence of ensemblekit.registry.AlgorithmSpec
        Registry entries; their ``model_class()`` is imported.

    Raises
    ------
    UnknownMetricError
        An unknown metric name.
    InputError
        If an algorithm's model lacks what a metric requires; the message names
        the metric and the algorithms.
    """
    for name in metrics:
        spec = metric_spec(name)
        if not spec.requires:
            continue
        lacking = [a.name for a in algorithms if not hasattr(a.model_class(), spec.requires)]
        if lacking:
            one = len(lacking) == 1
            why = (f"{'its model declares' if one else 'their models declare'} no structure "
                   "to compare (no structure_kind)" if spec.inputs == "structure" else
                   f"{'it has' if one else 'they have'} no natural "
                   f"{spec.display_name.lower()} (the model declares no {spec.requires}())")
            raise InputError(f"metric {name!r} is not defined for {', '.join(lacking)}: {why}; "
                             "leave out the metric or the algorithm")


def default_metrics(task: str, *, report: bool = False) -> tuple[str, ...]:
    """The metrics given for ``task`` when the user names none.

    Parameters
    ----------
    task : {"classification", "clustering", "regression"}
    report : bool, default=False
        False: what ``compare`` ranks (:data:`DEFAULT_METRICS`). True: what
        ``evaluate`` reports (:data:`REPORT_METRICS`: for a clusterer every
        external and internal index).

    Returns
    -------
    tuple of str

    Raises
    ------
    InputError
        If the task has no such list.
    """
    table = REPORT_METRICS if report else DEFAULT_METRICS
    if task not in table:
        raise InputError(f"no default {'report ' if report else ''}metrics for the task {task!r}")
    return table[task]


class Scored(NamedTuple):
    """What :func:`score_model` computed.

    Attributes
    ----------
    values : dict of str to float
        ``{metric name: value}``, in the order the metrics were asked for.
    predicted : ndarray of shape (n_samples,)
        The predictions of every row of ``X`` (given or computed).
    proba : ndarray of shape (n_samples, n_classes) or None
        The class probabilities of every row (given or computed), or None.
    """

    values: dict[str, float]
    predicted: np.ndarray
    proba: np.ndarray | None


def model_predictions(model, X, *, task: str, n_classes: int | None = None, proba: bool = False):
    """What a fitted model predicts for the rows ``X``, in the form the scores take.

    Every row is predicted in one call, in order: a model whose predictions depend
    on the rows before (knn's ranges, which each test row widens) sees them all.

    Parameters
    ----------
    model : fitted estimator or pipeline
        With ``predict``; a classifier asked for probabilities also with
        ``predict_proba`` and ``classes_`` (see
        :func:`ensemblekit.registry.class_probabilities`).
    X : array-like of shape (n_samples, n_features)
    task : {"classification", "regression", "clustering"}
    n_classes : int, optional
        Number of declared classes; required for probabilities.
    proba : bool, default=False
        For a classification: predict the probabilities of every declared class,
        and the class as their first arg-max (as Weka's evaluation does).

    Returns
    -------
    predicted : ndarray of shape (n_samples,)
        Class codes (as ``predict`` gives them, or the arg-max of ``proba``),
        float64 values of a regression, or cluster ids.
    proba : ndarray of shape (n_samples, n_classes) or None
        None unless asked for.

    Raises
    ------
    ValueError
        Probabilities asked for without ``n_classes``, or from the model.
    """
    if task == _C and proba:
        if n_classes is None:
            raise ValueError("class probabilities need the number of declared classes")
        from ensemblekit import registry

        probabilities = registry.class_probabilities(model, X, n_classes)
        return np.argmax(probabilities, axis=1), probabilities
    if task == _R:
        return np.asarray(model.predict(X), dtype=np.float64).ravel(), None
    return model.predict(X), None


def score_model(metrics: Sequence[str], model=None, X=None, *, task: str | None = None,
                n_classes: int | None = None, truth=None, known=None, predicted=None, proba=None,
                prior=None, with_proba: bool = False, seconds: dict | None = None) -> Scored:
    """Score a fitted model (or its predictions) on the rows ``X`` for ``metrics``.

    What each metric needs is read from its :class:`Metric` entry, here only:

    * the predictions, made by ``model`` for every row of ``X`` unless given (with
      the class probabilities when a metric needs them or ``with_proba`` asks);
    * the classes or targets (``truth``) of the rows ``known`` selects, for every
      score that compares with them;
    * the class probabilities and the training ``prior`` for the scores of
      probabilities and the relative errors;
    * for an internal clustering index, every row of ``X`` in the space the model
      clustered: ``model[:-1]`` (the pipeline's preprocessing) applied to ``X``, or
      ``X`` itself when no model is given;
    * for the measures of the run: the fitted ``model`` (``model-size``, see
      :func:`model_size`), the wall time of the fit, which the caller measured
      (``seconds``), and that of the prediction, measured here when the
      predictions are made here (the class probabilities too when a metric
      needs them, as the scores do).

    Parameters
    ----------
    metrics : sequence of str
        Keys of :data:`METRICS`.
    model : fitted pipeline, optional
        Preprocessing steps and the estimator last. Needed to predict, and for
        the internal indices' space.
    X : array-like of shape (n_samples, n_features), optional
        The rows judged.
    task : {"classification", "regression", "clustering"}, optional
        What the model predicts; read only when it predicts.
    n_classes : int, optional
        Number of declared classes (a classifier that predicts probabilities).
    truth : array-like of shape (n_known,), optional
        Classes or targets of the rows ``known`` selects.
    known : array-like of bool, shape (n_samples,), optional
        The rows whose truth is known; None for every row. Scores that compare
        with ``truth`` read those rows; internal indices read every row.
    predicted : array-like of shape (n_samples,), optional
        Predictions (or cluster ids) of every row, when already known.
    proba : array-like of shape (n_samples, n_classes), optional
        Class probabilities of every row, when already known.
    prior : ndarray of shape (n_classes,) or (n_known, n_classes), float or array, optional
        The training class counts, or the training targets' mean (see
        :class:`Outcome`); None when unknown.
    with_proba : bool, default=False
        Predict class probabilities even when no metric needs them (the caller
        keeps them).
    seconds : dict, optional
        Times already measured, in seconds: ``{"fit": s}`` (and ``"predict"``
        when the predictions are given), for ``fit-seconds`` and
        ``predict-seconds``.

    Returns
    -------
    Scored
        ``(values, predicted, proba)``. ``values`` leaves out ``structure-stability``,
        which compares several units' models (:mod:`ensemblekit.experiment.stability`).

    Raises
    ------
    UnknownMetricError
        An unknown metric name.
    ValueError
        Neither predictions nor a model and ``X``; an input a metric needs is
        missing (a time that was not measured, the model of ``model-size``); or
        from the scores themselves.
    """
    specs = [metric_spec(name) for name in metrics]
    measured = dict(seconds or {})
    if predicted is None:
        if model is None or X is None:
            raise ValueError("score_model needs the predictions, or a fitted model and the rows X")
        wants_proba = with_proba or any(spec.needs_proba for spec in specs)
        start = time.perf_counter()
        predicted, computed = model_predictions(model, X, task=task, n_classes=n_classes,
                                                proba=wants_proba)
        measured["predict"] = time.perf_counter() - start
        proba = computed if computed is not None else proba
    space = None
    if any(spec.internal for spec in specs):
        if X is None:
            raise ValueError("an internal index needs the rows X")
        # internal indices judge the rows in the space the estimator clustered: the
        # pipeline's preprocessing (one-hot, imputation) applied, the estimator's own
        # scaling not
        space = (np.asarray(model[:-1].transform(X), dtype=np.float64) if model is not None
                 else X)
    scored, scored_proba = predicted, proba
    if known is not None:
        scored = np.asarray(predicted)[known]
        scored_proba = None if proba is None else np.asarray(proba)[known]
    values = {}
    for spec in specs:
        if spec.inputs == "structure":
            continue  # over several units' models: see ensemblekit.experiment.stability
        if spec.inputs == "time":
            values[spec.name] = spec.func(measured)
        elif spec.inputs == "model":
            if model is None:
                raise InputError(f"{spec.name} is read from the fitted model, which is not given")
            values[spec.name] = float(spec.func(model))
        elif spec.internal:
            values[spec.name] = spec.score(predicted, X=space)
        else:
            values[spec.name] = spec.score(scored, truth=truth, proba=scored_proba, prior=prior)
    return Scored(values, predicted, proba)


def clustering_indices(labels, *, truth=None, X=None, names=None) -> dict[str, float]:
    """Every clustering index that the given inputs allow, by name.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster of each instance.
    truth : array-like of shape (n_samples,), optional
        Classes: the external indices are computed when given.
    X : array-like of shape (n_samples, n_features), optional
        Clustered data: the internal indices are computed when given.
    names : sequence of str, optional
        Restrict to these indices (keys of :data:`METRICS`); an index whose
        input is missing is skipped.

    Returns
    -------
    dict
        ``{name: value}`` in :data:`METRICS` order: external indices first,
        then internal ones.

    Raises
    ------
    ValueError
        From the indices (see each function), e.g. fewer than 2 clusters for
        an internal index.
    """
    wanted = EXTERNAL_INDICES + INTERNAL_INDICES if names is None else tuple(names)
    given = {True: X is not None, False: truth is not None}  # internal index -> its input given
    chosen = [name for name in EXTERNAL_INDICES + INTERNAL_INDICES
              if name in wanted and given[metric_spec(name).internal]]
    return score_model(chosen, X=X, truth=truth, predicted=labels).values


def best_k(ks, values, name):
    """The number of clusters with the best value of an index.

    Parameters
    ----------
    ks : sequence of int
        Numbers of clusters tried.
    values : sequence of float
        The index ``name`` at each ``k`` (NaN where it could not be computed).
    name : str
        Key of :data:`METRICS`; its ``greater_is_better`` gives the direction.

    Returns
    -------
    int or None
        The best ``k`` (the smallest on ties), or None when every value is NaN.

    Raises
    ------
    UnknownMetricError
        If ``name`` is not a known metric.
    ValueError
        If ``ks`` and ``values`` differ in length.
    """
    values = np.asarray(values, dtype=np.float64)
    if len(ks) != values.shape[0]:
        raise ValueError(f"{len(ks)} values of k but {values.shape[0]} index values")
    finite = ~np.isnan(values)
    if not finite.any():
        return None
    sign = 1.0 if metric_spec(name).greater_is_better else -1.0
    scored = np.where(finite, sign * values, -np.inf)
    return int(ks[int(np.argmax(scored))])
