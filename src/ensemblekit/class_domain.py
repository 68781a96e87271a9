"""The declared class domain of a classifier: every class value the training schema names.

Weka keeps every class value an ARFF header declares, also one that no training
row holds: a classifier built on such data still has one output per declared
value (a Bayesian network gives the empty class smoothed mass; others give it
0). ensemblekit's classifiers take the number of declared classes as the
parameter ``n_classes`` (set by :func:`ensemblekit.registry.make_estimator` from
the training schema, never by ``--set``): ``y`` then holds class codes ``0 ..
n_classes - 1``, ``classes_`` is ``arange(n_classes)`` and ``predict_proba`` has
one column per declared class. ``n_classes=None`` keeps scikit-learn's rule:
the classes are the distinct labels of ``y``.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError

from .constraints import Constraint

__all__ = ["N_CLASSES", "declared_classes", "widen_proba"]

#: The declaration of the ``n_classes`` parameter every ensemblekit classifier takes.
N_CLASSES = Constraint("int", "number of declared classes: y holds codes 0 .. n_classes - 1 "
                       "(from the training schema; none = the labels found in y)", low=1,
                       none_ok=True)


def declared_classes(y, n_classes: int | None) -> tuple[np.ndarray, np.ndarray]:
    """A classifier's ``classes_`` and the index of every label of ``y`` into it.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels; with ``n_classes``, whole numbers in ``0 .. n_classes - 1``
        (ints, or floats holding whole numbers).
    n_classes : int >= 1 or None
        Number of declared classes, or None for the distinct labels of ``y``.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        ``arange(n_classes)`` when declared, else ``np.unique(y)``.
    codes : ndarray of intp of shape (n_samples,)
        ``classes[codes] == y``.

    Raises
    ------
    ValueError
        With ``n_classes``: a label that is not a whole number in ``0 .. n_classes - 1``.
    """
    y = np.asarray(y)
    if n_classes is None:
        classes, codes = np.unique(y, return_inverse=True)
        return classes, codes.reshape(-1).astype(np.intp)
    n_classes = int(n_classes)
    if y.dtype.kind not in "iuf" or (y.size and (
            not np.all(np.isfinite(y)) or np.any(y != np.floor(y))
            or y.min() < 0 or y.max() >= n_classes)):
        raise InputError(f"with n_classes={n_classes}, y must hold the class codes "
                         f"0..{n_classes - 1}")
    return np.arange(n_classes), y.astype(np.intp)


def widen_proba(proba: np.ndarray, present: np.ndarray, n_classes: int) -> np.ndarray:
    """Probabilities over the classes with training rows, spread to all declared classes.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, len(present))
        Column ``k`` is class code ``present[k]``.
    present : ndarray of int of shape (n_present,)
        Distinct class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of declared classes.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        ``proba`` itself when every class is present; otherwise a copy whose
        columns of the classes without rows are 0.
    """
    present = np.asarray(present, dtype=np.intp)
    if present.size == n_classes:
        return proba
    full = np.zeros((proba.shape[0], n_classes), dtype=proba.dtype)
    full[:, present] = proba
    return full
