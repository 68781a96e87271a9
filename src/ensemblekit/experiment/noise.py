"""``compare --noise LEVEL``: attribute noise in the training rows, as the Inner Ensembles paper ran it.

Abbasian et al. (2013, Sect. 4) test stability by "adding random noise to the most 50%
significant features" at 20 %, 40 % and 60 %. The paper says no more; here is exactly
what ensemblekit does, so that a run can be repeated:

1. **Which attributes.** The attributes are ranked on the training rows, most
   significant first, and the first ``ceil(m / 2)`` of the ``m`` attributes are noised
   (ties keep the file order):

   * with a class (classifiers, regression is not supported): by the **gain ratio** with
     the class, as Weka's ``GainRatioAttributeEval`` ranks them: a numeric attribute is
     first cut into intervals by Fayyad & Irani's MDL criterion with Weka's better
     encoding (``Discretize -E``, :func:`ensemblekit.discretize.mdl_cut_points`); the
     gain ratio is ``(H(C) - H(C | A)) / H(A)`` in bits, over the rows where the
     attribute is known (Weka spreads those rows over the values instead), and 0 when
     ``H(A)`` is 0;
   * without (clusterers): by **variance**, made comparable across attributes: a
     numeric attribute's variance after min-max scaling of its known training values to
     [0, 1] (0 for a constant one), a nominal attribute's Gini variance ``1 - sum_v
     p_v**2`` (the summed variances of its one-hot indicators).

2. **Which values.** In each noised attribute, ``round(level * n)`` of the ``n``
   training rows are drawn without replacement, and each drawn cell is given a value
   drawn (with replacement) from the attribute's known training values: its empirical
   training distribution. A missing cell may be drawn, and then becomes known. An
   attribute without known values is left as it is.

3. **The seed.** The draws come from ``numpy.random.RandomState(derive_seed(s, 1,
   round(level * 10**6)))``, where ``s`` is the unit's estimator seed (derived from the
   user's seed and the repeat and fold, or the clustering run), attributes taken in
   file order, the rows then the values of each. Every algorithm of a repeat and fold
   therefore trains on the same noisy rows (a paired comparison), and the same seed
   gives the same noise on every machine.

The test rows of a fold are never noised; a clustering run clusters (and is judged on)
the noisy rows, since all its rows are training rows.
"""

from __future__ import annotations

import math

import numpy as np

from ensemblekit.experiment.protocol import ProtocolError, derive_seed

__all__ = ["check_levels", "ranking", "noised_attributes", "add_noise", "noised_rows"]


def check_levels(levels) -> list[float]:
    """The ``--noise`` levels as floats, checked: each in [0, 1), none twice.

    Raises
    ------
    ProtocolError
        A level outside [0, 1) or not a number, or one given twice.
    """
    out = []
    for level in levels:
        value = float(level)
        if not (math.isfinite(value) and 0.0 <= value < 1.0):
            raise ProtocolError(f"--noise {level}: a noise level is a share of the training "
                                "values, at least 0 and below 1")
        if value in out:
            raise ProtocolError(f"--noise {value:g} is given twice")
        out.append(value)
    return out


def _entropy(counts: np.ndarray) -> float:
    """Entropy in bits of the counts along the last axis, summed and weighted by row totals
    (a 1-D array: the entropy of that distribution)."""
    counts = np.atleast_2d(counts).astype(np.float64)
    total = counts.sum()
    if total <= 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / total
        return float(-np.nansum(np.where(p > 0, p * np.log2(p), 0.0)))


def _gain_ratio(codes: np.ndarray, y: np.ndarray, n_values: int, n_classes: int) -> float:
    """Gain ratio of one discrete attribute (codes 0 .. n_values - 1) with the classes."""
    table = np.zeros((n_values, n_classes))
    np.add.at(table, (codes, y), 1.0)
    split = _entropy(table.sum(axis=1))
    if split <= 0:
        return 0.0
    gain = _entropy(table.sum(axis=0)) - (_entropy(table) - split)  # H(C) - H(C | A)
    return max(gain, 0.0) / split


def ranking(X: np.ndarray, nominal: np.ndarray, y: np.ndarray | None = None,
            n_classes: int | None = None) -> np.ndarray:
    """Each attribute's significance on these training rows (see the module notes).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        Training rows, float64; nominal values as codes, NaN missing.
    nominal : ndarray of bool, shape (n_features,)
        Which columns are nominal.
    y : ndarray of int, shape (n_rows,), optional
        Class codes (all known): rank by gain ratio. None: rank by variance.
    n_classes : int, optional
        Number of classes; needed with ``y``.

    Returns
    -------
    ndarray of float64, shape (n_features,)
        Gain ratios in [0, 1], or variances in [0, 1]; greater is more significant.
    """
    from ensemblekit.discretize import mdl_cut_points

    scores = np.zeros(X.shape[1])
    for j in range(X.shape[1]):
        column = X[:, j]
        known = ~np.isnan(column)
        x = column[known]
        if x.size == 0:
            continue
        if y is None:
            if nominal[j]:
                _, counts = np.unique(x, return_counts=True)
                p = counts / x.size
                scores[j] = 1.0 - float(np.sum(p * p))
            else:
                span = float(x.max() - x.min())
                scores[j] = float(np.var((x - x.min()) / span)) if span > 0 else 0.0
            continue
        classes = y[known]
        if nominal[j]:
            codes = x.astype(np.int64)
            n_values = int(codes.max()) + 1
        else:
            cuts = mdl_cut_points(x, classes, n_classes, better_encoding=True)
            codes = np.searchsorted(cuts, x, side="left")
            n_values = cuts.size + 1
        scores[j] = _gain_ratio(codes, classes, n_values, n_classes)
    return scores


def noised_attributes(scores: np.ndarray) -> np.ndarray:
    """The columns to noise: the ``ceil(m / 2)`` most significant, ties in file order,
    returned ascending."""
    m = scores.size
    order = np.argsort(-scores, kind="stable")
    return np.sort(order[: -(-m // 2)])


def add_noise(X: np.ndarray, level: float, seed: int, nominal: np.ndarray,
              y: np.ndarray | None = None, n_classes: int | None = None) -> np.ndarray:
    """A copy of the training rows with attribute noise (see the module notes).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        Training rows, float64; nominal values as codes, NaN missing. Not changed.
    level : float
        Share of each noised attribute's values replaced, in [0, 1); 0 returns ``X``.
    seed : int
        The unit's estimator seed.
    nominal : ndarray of bool, shape (n_features,)
    y : ndarray of int, shape (n_rows,), optional
        Class codes (all known) of a classifier's rows; None for a clusterer.
    n_classes : int, optional
        Number of classes; needed with ``y``.

    Returns
    -------
    ndarray of shape (n_rows, n_features)
    """
    if level == 0 or X.shape[0] == 0 or X.shape[1] == 0:
        return X
    rng = np.random.RandomState(derive_seed(seed, 1, int(round(level * 10**6))))
    noisy = np.array(X, dtype=np.float64, copy=True)
    n = X.shape[0]
    count = int(round(level * n))
    for j in noised_attributes(ranking(X, nominal, y, n_classes)).tolist():
        pool = X[~np.isnan(X[:, j]), j]
        if pool.size == 0 or count == 0:
            continue
        rows = rng.choice(n, size=count, replace=False)
        noisy[rows, j] = pool[rng.randint(0, pool.size, size=count)]
    return noisy


def noised_rows(ds, level: float, seed: int, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """The rows a unit trains on: ``X`` itself at level 0, else :func:`add_noise` of them.

    Parameters
    ----------
    ds : ensemblekit.data.Dataset
        The unit's data set (its schema says which columns are nominal, and how many
        classes there are).
    level : float
        The candidate's noise level.
    seed : int
        The unit's estimator seed.
    X : ndarray of shape (n_rows, n_features)
        The training rows (a clustering run: every row).
    y : ndarray of int, shape (n_rows,), optional
        Their class codes (rank by gain ratio); None ranks by variance.

    Returns
    -------
    ndarray of shape (n_rows, n_features)
    """
    if not level:
        return X
    nominal = np.array([a.kind != "numeric" for a in ds.schema.features], dtype=bool)
    n_classes = None if y is None else len(ds.schema.class_attribute.values)
    return add_noise(X, level, seed, nominal, y, n_classes)
