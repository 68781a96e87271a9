"""Learnt cut points applied to rows, with numpy alone: numeric values become bin codes.

:class:`~ensemblekit.discretize.MDLDiscretizer` learns the cut points (it needs
scikit-learn for its input checks); the models that discretise at prediction
time (:class:`~ensemblekit.bayesnet.classifier_model.K2Model`) store the cut
points themselves and code their rows with :func:`bin_codes`, the one
implementation of the bin rule both use.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bin_codes"]


def bin_codes(X: np.ndarray, cut_points, nominal_features: np.ndarray) -> np.ndarray:
    """Replace each numeric value by the index of its bin; nominal columns pass through.

    A value ``v`` of column ``f`` gets code ``j`` when ``cut_points[f][j - 1] < v
    <= cut_points[f][j]`` (Weka's ``supervised.attribute.Discretize`` rule:
    ``searchsorted(..., side="left")``), so values beyond the training range fall
    into the first or last bin.

    Parameters
    ----------
    X : ndarray of float64, shape (n_samples, n_features)
        Rows to code; NaN marks a missing value.
    cut_points : sequence of n_features 1-d float arrays
        Ascending cut points of every column (empty for a nominal column and for
        a column kept as one bin).
    nominal_features : ndarray of int
        Columns that already hold codes; they are copied unchanged.

    Returns
    -------
    ndarray of float64, shape (n_samples, n_features)
        A new array: bin codes ``0 .. len(cut_points[f])`` (as floats) for the
        numeric columns, the nominal columns as given, NaN where ``X`` is NaN.
    """
    Xt = X.copy()
    for f, cuts in enumerate(cut_points):
        if f in nominal_features:
            continue
        col = X[:, f]
        # side="left": v <= cuts[j] gives code j, Weka's bin rule.
        codes = np.searchsorted(cuts, col, side="left").astype(np.float64)
        codes[np.isnan(col)] = np.nan
        Xt[:, f] = codes
    return Xt
