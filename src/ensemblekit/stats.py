"""Statistics for comparing algorithms over several data sets (Demšar, JMLR 7, 2006)."""

from __future__ import annotations

import numpy as np


def average_ranks(scores, greater_is_better: bool = True) -> np.ndarray:
    """Average rank of each algorithm over data sets (Demšar 2006, Sect. 3.2.2).

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_algorithms)
        One score per data set and algorithm; no NaN.
    greater_is_better : bool, default=True
        Whether the best algorithm on a data set is the one with the largest score.

    Returns
    -------
    ndarray of shape (n_algorithms,)
        Mean over data sets of the rank (1 = best; tied algorithms share the mean
        of the ranks they span), each in ``[1, n_algorithms]``.

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D, is empty, or holds NaN.
    """
    from scipy.stats import rankdata

    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"scores must be a non-empty 2-D array, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError("scores hold NaN; every algorithm needs a score on every data set")
    keyed = -arr if greater_is_better else arr
    return rankdata(keyed, method="average", axis=1).mean(axis=0)
