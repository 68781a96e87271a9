"""The registry of metric names: what each score judges, its direction and what it needs.

The score functions themselves live in :mod:`ensemblekit.scores`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ensemblekit.scores.classification import label_accuracy
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
from ensemblekit.scores.regression import correlation, mae, r2, rmse

__all__ = [
    "Metric",
    "METRICS",
    "Outcome",
    "REPORT_METRICS",
    "EXTERNAL_INDICES",
    "INTERNAL_INDICES",
    "clustering_indices",
]


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
        :mod:`ensemblekit.evaluation`) or the training targets' mean
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
    inputs : {"labels", "outcome"}, default="labels"
        What ``func`` takes (see ``func``).
    needs_prior : bool, default=False
        True for the relative errors, which need the training set's class
        counts or target mean.
    """

    name: str
    func: Callable[..., float]
    task: str | tuple[str, ...]
    greater_is_better: bool = True
    label: str = ""
    internal: bool = False
    inputs: str = "labels"
    needs_prior: bool = False

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
        """
        if self.internal:
            if X is None:
                raise ValueError(f"{self.name} is an internal index and needs the data X")
            return float(self.func(X, predicted))
        if truth is None:
            raise ValueError(f"{self.name} compares with the classes and needs them")
        if self.inputs == "labels":
            return float(self.func(truth, predicted))
        if self.needs_prior and prior is None:
            raise ValueError(f"{self.name} is relative to the training set's class counts or "
                             "mean, which are not known here")
        return float(self.func(Outcome(np.asarray(truth), np.asarray(predicted),
                                       None if proba is None else np.asarray(proba, float),
                                       prior)))

    @property
    def display_name(self) -> str:
        """The label, or the name when no label was given."""
        return self.label or self.name


def _evaluation(name: str) -> Callable[..., float]:
    """``ensemblekit.evaluation.<name>`` as a float score, imported when first called
    (importing this module stays cheap)."""

    def call(*args, **kwargs) -> float:
        from ensemblekit.scores import classification, regression

        module = regression if name.endswith("_regression") else classification
        return float(getattr(module, name)(*args, **kwargs))

    call.__name__ = name
    return call


def _either(classification: str, regression: Callable, relative: bool = False
            ) -> Callable[[Outcome], float]:
    """Weka's error measure under one name: of the class probabilities for a
    classification (``evaluation.<classification>(truth, proba[, prior counts])``), of
    the values for a regression (``regression(truth, predicted[, training mean])``)."""
    of_probabilities = _evaluation(classification)

    def score(outcome: Outcome) -> float:
        prior = (outcome.prior,) if relative else ()
        if outcome.proba is not None:
            return of_probabilities(outcome.truth, outcome.proba, *prior)
        return regression(outcome.truth, outcome.predicted, *prior)

    score.__name__ = f"{classification}_or_{regression.__name__}"
    return score


def _of_probabilities(name: str) -> Callable[[Outcome], float]:
    """A classification score of ``evaluation.<name>(truth, proba)``."""
    func = _evaluation(name)

    def score(outcome: Outcome) -> float:
        if outcome.proba is None:
            raise ValueError(f"{name} needs class probabilities")
        return func(outcome.truth, outcome.proba)

    score.__name__ = name
    return score


def _labels(name: str, average: str | None = None) -> Callable:
    """A score of :mod:`ensemblekit.evaluation` computed from predicted labels alone.

    Those functions read the predicted class as the first arg-max of a distribution;
    a predicted label is the distribution that puts all its mass on it. Classes
    neither true nor predicted do not enter these scores, so the number of columns
    need only cover the codes seen.

    With ``average="weighted"`` the per-class figures are averaged with the classes'
    test counts as weights, an undefined figure (a class never predicted has no
    precision; Weka prints ``?`` and no weighted average) counting as 0, as
    scikit-learn's ``zero_division=0``: a fold's score must be a number to be ranked.
    """

    func = _evaluation(name)

    def score(y_true, y_pred) -> float:
        y_true = np.asarray(y_true, dtype=np.intp)
        y_pred = np.asarray(y_pred, dtype=np.intp)
        if y_true.ndim != 1 or y_pred.shape != y_true.shape or y_true.size == 0:
            raise ValueError(f"y_true and y_pred must be 1-D of one non-zero length, got "
                             f"shapes {y_true.shape} and {y_pred.shape}")
        n_classes = int(max(y_true.max(), y_pred.max())) + 1
        proba = np.zeros((y_pred.size, n_classes))
        proba[np.arange(y_pred.size), y_pred] = 1.0
        if average != "weighted":
            return func(y_true, proba) if average is None else func(y_true, proba, average)
        from ensemblekit.scores import classification

        per_class = np.nan_to_num(getattr(classification, name)(y_true, proba, None), nan=0.0)
        support = np.bincount(y_true, minlength=n_classes)
        return float(per_class @ support / y_true.size)

    score.__name__ = name
    return score


_C, _R = "classification", "regression"
_BOTH = (_C, _R)


METRICS: dict[str, Metric] = {
    "accuracy": Metric("accuracy", label_accuracy, _C, True, "Accuracy"),
    "balanced-accuracy": Metric("balanced-accuracy", _labels("balanced_accuracy"), _C, True,
                                "Balanced accuracy"),
    "kappa": Metric("kappa", _labels("kappa"), _C, True, "Kappa"),
    "mcc": Metric("mcc", _labels("mcc", "weighted"), _C, True, "MCC"),
    "precision-macro": Metric("precision-macro", _labels("precision", "macro"), _C, True,
                              "Precision (macro)"),
    "recall-macro": Metric("recall-macro", _labels("recall", "macro"), _C, True, "Recall (macro)"),
    "f1-macro": Metric("f1-macro", _labels("f_measure", "macro"), _C, True, "F1 (macro)"),
    "precision-weighted": Metric("precision-weighted", _labels("precision", "weighted"), _C, True,
                                 "Precision (weighted)"),
    "recall-weighted": Metric("recall-weighted", _labels("recall", "weighted"), _C, True,
                              "Recall (weighted)"),
    "f1-weighted": Metric("f1-weighted", _labels("f_measure", "weighted"), _C, True, "F1 (weighted)"),
    "auc": Metric("auc", _of_probabilities("weighted_roc_area"), _C, True, "ROC area", inputs="outcome"),
    "prc": Metric("prc", _of_probabilities("weighted_prc_area"), _C, True, "PRC area", inputs="outcome"),
    "log-loss": Metric("log-loss", _of_probabilities("log_loss"), _C, False, "Log-loss", inputs="outcome"),
    "brier": Metric("brier", _of_probabilities("brier_score"), _C, False, "Brier", inputs="outcome"),
    "nmi": Metric("nmi", nmi, "clustering", True, "NMI"),
    "purity": Metric("purity", purity, "clustering", True, "Purity"),
    "ari": Metric("ari", adjusted_rand, "clustering", True, "ARI"),
    "rand": Metric("rand", rand, "clustering", True, "Rand"),
    "jaccard": Metric("jaccard", jaccard, "clustering", True, "Jaccard"),
    "fm": Metric("fm", fowlkes_mallows, "clustering", True, "FM"),
    "w10": Metric("w10", wallace_10, "clustering", True, "W10"),
    "w01": Metric("w01", wallace_01, "clustering", True, "W01"),
    "silhouette": Metric("silhouette", silhouette, "clustering", True, "Silhouette", internal=True),
    "dunn": Metric("dunn", dunn, "clustering", True, "Dunn", internal=True),
    "connectivity": Metric("connectivity", connectivity, "clustering", False, "Connectivity",
                           internal=True),
    "davies-bouldin": Metric("davies-bouldin", davies_bouldin, "clustering", False, "Davies-Bouldin",
                             internal=True),
    "calinski-harabasz": Metric("calinski-harabasz", calinski_harabasz, "clustering", True,
                                "Calinski-Harabasz", internal=True),
    "correlation": Metric("correlation", correlation, _R, True, "Correlation"),
    "mae": Metric("mae", _either("weka_mae", mae), _BOTH, False, "MAE", inputs="outcome"),
    "rmse": Metric("rmse", _either("weka_rmse", rmse), _BOTH, False, "RMSE", inputs="outcome"),
    "rae": Metric("rae", _either("relative_absolute_error",
                                 _evaluation("relative_absolute_error_regression"), True),
                  _BOTH, False, "RAE %", inputs="outcome", needs_prior=True),
    "rrse": Metric("rrse", _either("root_relative_squared_error",
                                   _evaluation("root_relative_squared_error_regression"), True),
                   _BOTH, False, "RRSE %", inputs="outcome", needs_prior=True),
    "r2": Metric("r2", r2, _R, True, "R²"),
}
"""Metric name -> :class:`Metric`, in the order reports list them."""

#: The measures ``evaluate`` reports for a classifier or a regression algorithm, in
#: report order: Weka's summary (accuracy, kappa, the four error measures of
#: :class:`weka.classifiers.Evaluation`) and the other standard ones.
REPORT_METRICS = {
    _C: ("accuracy", "balanced-accuracy", "kappa", "mcc", "precision-weighted", "recall-weighted",
         "f1-weighted", "f1-macro", "auc", "prc", "log-loss", "brier", "mae", "rmse", "rae",
         "rrse"),
    _R: ("correlation", "mae", "rmse", "rae", "rrse"),
}

#: Names of the external clustering indices (they compare with the classes), in report order.
EXTERNAL_INDICES = tuple(m.name for m in METRICS.values() if m.task == "clustering" and not m.internal)

#: Names of the internal clustering indices (they need the data), in report order.
INTERNAL_INDICES = tuple(m.name for m in METRICS.values() if m.internal)


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
    out: dict[str, float] = {}
    for name in EXTERNAL_INDICES + INTERNAL_INDICES:
        if name not in wanted:
            continue
        metric = METRICS[name]
        if metric.internal and X is not None:
            out[name] = metric.score(labels, X=X)
        elif not metric.internal and truth is not None:
            out[name] = metric.score(labels, truth=truth)
    return out


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
    KeyError
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
    sign = 1.0 if METRICS[name].greater_is_better else -1.0
    scored = np.where(finite, sign * values, -np.inf)
    return int(ks[int(np.argmax(scored))])
