"""Timing a unit's fit fairly: the fit's wall time, after a warm-up of the algorithm.

Weka's Experimenter records each fold's training and testing time beside its
scores; ``-m fit-seconds`` and ``-m predict-seconds`` do the same (see
:mod:`ensemblekit.metrics`, where the prediction is timed). A process pays some
costs once, on the first fit of an algorithm: imports done inside ``fit``, numba's
compilation of the kernels for the data's types, first-touch allocations. Charged
to whichever unit comes first in a worker, they would make the times depend on
how the units fall on the workers. So when a time is asked for, :func:`warm_up`
fits a throw-away estimator of the same algorithm and parameters once per process
on a tiny slice of the training rows (and predicts a few rows with it) before the
first timed fit; the scores are untouched, since the timed estimator is a new one.

Times are measured, so they are the one part of a run that its seed does not
fix: they are excluded from the byte-identical guarantees.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from ensemblekit.errors import interruption
from ensemblekit.metrics import metric_spec

__all__ = ["WARM_UP_ROWS", "wants_time", "warm_up", "fit_timed"]

#: Training rows the warm-up fit takes: the first row of every class present, then
#: the first rows of the fold up to this many.
WARM_UP_ROWS = 30

#: The (algorithm, parameters) already warmed up in this process.
_warmed: set[Hashable] = set()


def wants_time(metrics: Sequence[str]) -> bool:
    """Whether any of ``metrics`` (keys of :data:`ensemblekit.metrics.METRICS`) is a time."""
    return any(metric_spec(name).inputs == "time" for name in metrics)


def _slice(y: np.ndarray | None, n_rows: int) -> np.ndarray:
    """Row indices of the warm-up slice: the first of each class (``y`` given, class codes
    or values, NaN or -1 for unknown ones ignored) and the first ``WARM_UP_ROWS`` rows."""
    first = np.arange(min(n_rows, WARM_UP_ROWS))
    if y is None or y.dtype.kind == "f":
        return first
    _, each = np.unique(y, return_index=True)
    return np.union1d(first, each)


def warm_up(key: Hashable, make: Callable[[], object], X: np.ndarray,
            y: np.ndarray | None = None) -> bool:
    """Fit a new estimator once per process and ``key`` on a slice of the rows, untimed.

    Parameters
    ----------
    key : hashable
        What identifies the algorithm and its parameters; a key already warmed
        up in this process is not warmed again.
    make : callable
        ``make()`` returns a new unfitted estimator (or pipeline) of the unit's
        algorithm, with the unit's parameters and seed.
    X : ndarray of shape (n_samples, n_features)
        The training rows the unit fits (coded float64, as the runner has them).
    y : ndarray of shape (n_samples,), optional
        Their classes or targets: the estimator is warmed up with ``fit``, then
        ``predict`` of five rows (and ``predict_proba`` when it has it). None
        for a clusterer, warmed up with ``fit_predict``.

    Returns
    -------
    bool
        True if the warm-up ran now, False if ``key`` was already warm. A
        warm-up that fails (a slice too small for the algorithm) counts as done:
        the timed fit that follows reports any real error.
    """
    if key in _warmed:
        return False
    _warmed.add(key)
    rows = _slice(y, X.shape[0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a tiny slice may not converge: nothing to tell
            _fit_slice(make(), X[rows], None if y is None else y[rows])
    except Exception as exc:  # noqa: BLE001 - only a warm-up; the unit's own fit reports errors
        if interruption(exc) is not None:  # Ctrl-C inside compiled code stops the run
            raise
    return True


def _fit_slice(model, X: np.ndarray, y: np.ndarray | None) -> None:
    """Fit ``model`` on the slice and predict a few of its rows (``fit_predict`` for a
    clusterer, ``y`` None)."""
    if y is None:
        model.fit_predict(X)
        return
    (getattr(model, "fit_coded", None) or model.fit)(X, y)
    model.predict(X[:5])
    if hasattr(model, "predict_proba"):
        model.predict_proba(X[:5])


def fit_timed(make: Callable, random_state, X: np.ndarray, y: np.ndarray | None = None, *,
              warm: Hashable | None = None):
    """Build the unit's estimator, fit it, and time the fit (wall clock).

    The runner's rows are already ensemblekit's coded float64 layout: an
    estimator that can fit on them directly (``fit_coded``, C4.5) skips
    scikit-learn's checks of array-likes.

    Parameters
    ----------
    make : callable
        ``make(random_state)`` returns a new unfitted estimator or pipeline
        (:func:`ensemblekit.registry.estimator_factory`).
    random_state : int or None
        The unit's seed.
    X : ndarray of shape (n_samples, n_features)
        Training rows (a clustering run: every row).
    y : ndarray of shape (n_samples,), optional
        Their classes or targets; None for a clusterer, which is fitted with
        ``fit_predict``.
    warm : hashable, optional
        When given (a time is asked for), :func:`warm_up` under this key first.

    Returns
    -------
    model : fitted estimator or pipeline
    labels : ndarray of shape (n_samples,) or None
        A clusterer's labels of ``X``; None for a supervised fit.
    seconds : float
        Wall-clock seconds of the fit (:func:`time.perf_counter`), >= 0; the
        warm-up is not counted.

    Raises
    ------
    Exception
        Whatever the estimator's fit raises.
    """
    if warm is not None:
        warm_up(warm, lambda: make(random_state), X, y)
    model = make(random_state)
    start = time.perf_counter()
    if y is None:
        labels = np.asarray(model.fit_predict(X))
    else:
        labels = None
        (getattr(model, "fit_coded", None) or model.fit)(X, y)
    return model, labels, time.perf_counter() - start
