"""Input checks shared by the score modules: one place says what a valid pair of vectors is."""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError


def _check_labels(a, b, names):
    """Validate a pair of label vectors; return them as 1-D arrays."""
    first, second = names
    a = np.asarray(a)
    b = np.asarray(b)
    for arr, name in ((a, first), (b, second)):
        if arr.ndim != 1:
            raise InputError(f"{name} must be a 1-D array of labels, got shape {arr.shape}")
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise InputError(f"{name} contains missing values (NaN); drop those rows first")
    if a.shape[0] != b.shape[0]:
        raise InputError(
            f"{first} and {second} have different lengths ({a.shape[0]} and {b.shape[0]})"
        )
    if a.shape[0] == 0:
        raise InputError(f"{first} and {second} are empty; a score needs at least one label")
    return a, b


def _check_values(a, b, names):
    """Validate a pair of target vectors; return them as 1-D float64 arrays."""
    first, second = names
    out = []
    for arr, name in ((a, first), (b, second)):
        try:
            arr = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"{name} must hold numbers") from None
        if arr.ndim != 1:
            raise InputError(f"{name} must be a 1-D array of numbers, got shape {arr.shape}")
        if np.isnan(arr).any():
            raise InputError(f"{name} contains missing values (NaN); drop those rows first")
        if np.isinf(arr).any():
            raise InputError(f"{name} contains an infinite value")
        out.append(arr)
    a, b = out
    if a.shape[0] != b.shape[0]:
        raise InputError(
            f"{first} and {second} have different lengths ({a.shape[0]} and {b.shape[0]})"
        )
    if a.shape[0] == 0:
        raise InputError(f"{first} and {second} are empty; a score needs at least one value")
    return a, b
