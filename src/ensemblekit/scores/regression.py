"""Scores of a regression's predicted values, and Weka's report for a numeric class.

Every score compares two 1-D arrays of finite numbers of the same length (the true
target values and the predicted ones) and returns a float. Weka's relative errors
also take the mean target of the training set. Pure numpy: no files, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.safejson import plain as _plain  # JSON-ready: NaN and inf as None
from ensemblekit.scores._common import _check_values
from ensemblekit.units import unit_exponent

#: An undefined figure (Weka prints ``?``).
_NAN = float("nan")


def _in_one_unit(*arrays):
    """The arrays in the power-of-two unit their largest magnitude calls for, and its exponent.

    Targets near the float limits overflow when their errors are squared and
    summed; divided by a power of two (exact; :func:`ensemblekit.units.unit_exponent`)
    they do not, and every score below is homogeneous in the targets: a ratio
    or a correlation is the same, an error is that of the unit times ``2**e``.
    Ordinary targets keep their unit (``e = 0``) and their bits.
    """
    e = unit_exponent(*arrays)
    return (arrays if e == 0 else tuple(np.ldexp(a, -e) for a in arrays)), e


def _times_unit(value, e: int) -> float:
    """``value * 2**e`` (inf when the error itself is beyond a float)."""
    with np.errstate(over="ignore"):
        return float(np.ldexp(value, e))

__all__ = [
    "correlation",
    "rmse",
    "mae",
    "r2",
    "relative_absolute_error_regression",
    "root_relative_squared_error_regression",
    "RegressionEvaluation",
    "regression_report",
]


def correlation(y_true, y_pred):
    """Pearson correlation between the true and the predicted target values.

    ``r = sum_i (t_i - mean t)(p_i - mean p) / sqrt(sum_i (t_i - mean t)^2 *
    sum_i (p_i - mean p)^2)``. The rule-ensembles paper (Akdemir & Jannink,
    Sect. 4, Figs. 1 and 8) reports it as the "accuracy" of a regression
    model: the cross-validated correlation of true and predicted responses.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        In [-1, 1]; higher is better; symmetric in its arguments. When either
        vector is constant (all its values equal, which includes a single
        instance) the correlation is undefined and the value is 0.0, without
        a warning: a constant prediction carries no information about the
        order of the targets. Otherwise equals the statistic of
        :func:`scipy.stats.pearsonr`.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.

    References
    ----------
    .. [1] D. Akdemir and J.-L. Jannink, "Ensemble learning with trees and
       rules: supervised, semi-supervised, unsupervised", Intelligent Data
       Analysis 18(5), 2014.
    """
    (t, p), _ = _in_one_unit(*_check_values(y_true, y_pred, ("y_true", "y_pred")))
    if np.all(t == t[0]) or np.all(p == p[0]):
        return 0.0
    dt = t - t.mean()
    dp = p - p.mean()
    norm_t = np.linalg.norm(dt)
    norm_p = np.linalg.norm(dp)
    if norm_t == 0.0 or norm_p == 0.0:  # values too close to be told apart after centring
        return 0.0
    r = float(np.dot(dt / norm_t, dp / norm_p))
    return min(1.0, max(-1.0, r))


def rmse(y_true, y_pred):
    """Root mean squared error of the predictions.

    ``RMSE = sqrt((1/n) * sum_i (t_i - p_i)^2)``, in the target's unit.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        >= 0; *lower* is better; 0 for perfect predictions. Same value as
        ``sqrt(sklearn.metrics.mean_squared_error(y_true, y_pred))``.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.
    """
    (t, p), e = _in_one_unit(*_check_values(y_true, y_pred, ("y_true", "y_pred")))
    return _times_unit(np.sqrt(np.mean((t - p) ** 2)), e)


def mae(y_true, y_pred):
    """Mean absolute error of the predictions.

    ``MAE = (1/n) * sum_i |t_i - p_i|``, in the target's unit.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        >= 0; *lower* is better; 0 for perfect predictions. Same value as
        :func:`sklearn.metrics.mean_absolute_error`.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.
    """
    (t, p), e = _in_one_unit(*_check_values(y_true, y_pred, ("y_true", "y_pred")))
    return _times_unit(np.mean(np.abs(t - p)), e)


def r2(y_true, y_pred):
    """Coefficient of determination R² of the predictions.

    ``R² = 1 - sum_i (t_i - p_i)^2 / sum_i (t_i - mean t)^2``: the share of the
    targets' variance around their own mean that the predictions explain.
    Not symmetric: ``y_true`` gives the mean and the total sum of squares.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True target values (finite numbers).
    y_pred : array-like of shape (n_samples,)
        Predicted values (finite numbers).

    Returns
    -------
    float
        At most 1; higher is better; 1 for perfect predictions, 0 for
        predicting the mean of ``y_true``, negative for predictions worse than
        that. Same value as :func:`sklearn.metrics.r2_score`. When ``y_true``
        is constant (all values equal, which includes a single instance) the
        ratio is undefined; the value is then 1.0 for perfect predictions and
        0.0 otherwise, scikit-learn's ``force_finite`` convention. Here
        "constant" means equal values; scikit-learn instead tests the computed
        total sum of squares, so for values such as ``[0.1, 0.1, 0.1]`` (whose
        floating-point mean is not exactly 0.1) it returns a huge negative
        number, and for a single instance NaN with a warning.

    Raises
    ------
    ValueError
        If an input is not 1-D or not numeric, the lengths differ, the inputs
        are empty, or an input contains NaN or an infinite value.
    """
    (t, p), _ = _in_one_unit(*_check_values(y_true, y_pred, ("y_true", "y_pred")))
    residual = float(np.sum((t - p) ** 2))
    if np.all(t == t[0]):
        return 1.0 if residual == 0.0 else 0.0
    total = float(np.sum((t - t.mean()) ** 2))
    return 1.0 - residual / total


# ------------------------------------------------------------- Weka's relative errors and report


def _train_mean(train_mean, n):
    m = np.asarray(train_mean, dtype=float)
    if m.ndim == 0:
        m = np.full(n, float(m))
    if m.shape != (n,) or not np.all(np.isfinite(m)):
        raise InputError(f"train_mean must be a finite number or an array of shape ({n},)")
    return m


def relative_absolute_error_regression(y_true, y_pred, train_mean) -> float:
    """Weka's relative absolute error for a numeric class, in percent.

    ``100 * sum |y_pred - y_true| / sum |train_mean - y_true|``: the error relative to
    always predicting the mean target of the training set. In the ``-t/-T`` path Weka's
    prior is the mean of the training file's (non-missing) targets
    (``Evaluation.setPriors``/``updatePriors``: ``m_ClassPriors[0] / m_ClassPriorsSum``);
    test targets are not included.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
    train_mean : float or array-like of shape (n,)
        The training mean, or one per test instance (cross-validation folds).

    Returns
    -------
    float (percent); ``inf`` or NaN when every target equals the training mean.
    """
    y, f = _check_values(y_true, y_pred, ("y_true", "y_pred"))
    (y, f, m), _ = _in_one_unit(y, f, _train_mean(train_mean, y.shape[0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(100.0 * np.sum(np.abs(f - y)) / np.sum(np.abs(m - y)))


def root_relative_squared_error_regression(y_true, y_pred, train_mean) -> float:
    """Weka's root relative squared error for a numeric class, in percent.

    ``100 * sqrt(sum (y_pred - y_true)**2 / sum (train_mean - y_true)**2)``; parameters
    as :func:`relative_absolute_error_regression`.
    """
    y, f = _check_values(y_true, y_pred, ("y_true", "y_pred"))
    (y, f, m), _ = _in_one_unit(y, f, _train_mean(train_mean, y.shape[0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(100.0 * np.sqrt(np.sum((f - y) ** 2) / np.sum((m - y) ** 2)))


@dataclass(frozen=True)
class RegressionEvaluation:
    """Weka's test-set figures for a numeric class.

    Attributes
    ----------
    n : int
    correlation, mae, rmse : float
    rae, rrse : float
        Percent, relative to predicting the training mean.
    """

    n: int
    correlation: float
    mae: float
    rmse: float
    rae: float
    rrse: float

    def to_dict(self) -> dict:
        """Plain Python types for JSON (``None`` for NaN or infinity)."""
        return {"n": self.n, "correlation": _plain(self.correlation), "mae": _plain(self.mae),
                "rmse": _plain(self.rmse), "rae": _plain(self.rae), "rrse": _plain(self.rrse)}


def regression_report(y_true, y_pred, train_mean) -> RegressionEvaluation:
    """Correlation, MAE, RMSE, RAE and RRSE as Weka prints them for a numeric class.

    Parameters and errors as :func:`relative_absolute_error_regression`; a
    ``train_mean`` of None (unknown) makes RAE and RRSE NaN.
    """
    y, f = _check_values(y_true, y_pred, ("y_true", "y_pred"))
    return RegressionEvaluation(
        n=int(y.shape[0]), correlation=correlation(y, f), mae=mae(y, f), rmse=rmse(y, f),
        rae=_NAN if train_mean is None else relative_absolute_error_regression(y, f, train_mean),
        rrse=(_NAN if train_mean is None
              else root_relative_squared_error_regression(y, f, train_mean)),
    )
