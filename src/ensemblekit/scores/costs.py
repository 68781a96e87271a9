"""Cost-sensitive evaluation of a classifier: total and average cost, as Weka reports them.

Weka's ``Evaluation`` (weka/classifiers/evaluation/Evaluation.java), given a
``CostMatrix`` (``-m FILE``), adds to its summary the *Total Cost*, the sum over
the test instances with a known class of ``weight * cost[actual, predicted]``,
and the *Average Cost*, that total divided by the summed weight of those
instances. The matrix has the actual class in rows and the predicted class in
columns, as the confusion matrix; its entries may be any finite numbers (Weka
accepts negative entries and a non-zero diagonal, and uses them as they are).
Both figures are therefore the element-wise product of the confusion matrix
(weighted counts) with the cost matrix, summed. Pure numpy: reading a cost
file is :mod:`ensemblekit.readers.cost_matrix`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.safejson import plain as _plain

__all__ = ["CostEvaluation", "check_cost_matrix", "cost_figures"]


@dataclass(frozen=True, eq=False)
class CostEvaluation:
    """The cost figures of one evaluation.

    Attributes
    ----------
    total : float
        Sum of ``cost[actual, predicted]`` over the scored instances (weighted).
    average : float
        ``total`` divided by the number (summed weight) of scored instances.
    matrix : ndarray of float64, shape (C, C)
        The cost matrix used: actual class in rows, predicted in columns.
    """

    total: float
    average: float
    matrix: np.ndarray

    def to_dict(self) -> dict:
        """``total_cost``, ``average_cost`` and ``cost_matrix`` (lists), for JSON."""
        return {"total_cost": _plain(self.total), "average_cost": _plain(self.average),
                "cost_matrix": _plain(self.matrix)}


def check_cost_matrix(cost_matrix, n_classes: int | None = None) -> np.ndarray:
    """Validate a cost matrix; return it as a read-only float64 array.

    Parameters
    ----------
    cost_matrix : array-like of shape (C, C)
        Finite numbers; rows are actual classes, columns predicted ones.
    n_classes : int, optional
        The number of declared classes the matrix must fit.

    Returns
    -------
    ndarray of float64, shape (C, C)

    Raises
    ------
    InputError
        Not a square 2-D matrix of finite numbers, or not ``n_classes`` by
        ``n_classes`` (Weka's "Cost matrix not compatible with data").
    """
    try:
        matrix = np.array(cost_matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("the cost matrix must hold numbers") from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise InputError(f"the cost matrix must be square (C by C), got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise InputError("the cost matrix holds a NaN or infinite entry")
    if n_classes is not None and matrix.shape[0] != n_classes:
        size = matrix.shape[0]
        raise InputError(f"the cost matrix is {size} by {size}, but the class has {n_classes} "
                         f"values; it needs one row and one column per class")
    matrix.flags.writeable = False
    return matrix


def cost_figures(confusion, cost_matrix) -> CostEvaluation:
    """Total and average cost of a confusion matrix under a cost matrix (Weka's
    ``Evaluation.totalCost`` and ``avgCost``).

    Parameters
    ----------
    confusion : array-like of shape (C, C)
        Counts (or summed instance weights) of (actual, predicted) class pairs, the
        actual class in rows, as :func:`ensemblekit.scores.classification.confusion_matrix`.
    cost_matrix : array-like of shape (C, C)
        Cost of predicting column ``j`` for an instance of class ``i``.

    Returns
    -------
    CostEvaluation
        ``average`` is NaN when the confusion matrix holds no instance.

    Raises
    ------
    InputError
        A bad cost matrix (see :func:`check_cost_matrix`) or confusion matrix, or
        two matrices of different sizes.
    """
    cm = np.asarray(confusion, dtype=np.float64)
    if cm.ndim != 2 or cm.shape[0] != cm.shape[1]:
        raise InputError(f"the confusion matrix must be square, got shape {cm.shape}")
    if not np.isfinite(cm).all() or (cm < 0).any():
        raise InputError("the confusion matrix must hold finite counts >= 0")
    matrix = check_cost_matrix(cost_matrix, cm.shape[0])
    total = float(np.sum(cm * matrix))
    n = float(cm.sum())
    return CostEvaluation(total=total, average=total / n if n > 0 else float("nan"),
                          matrix=matrix)
