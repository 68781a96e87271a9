"""Helpers of C4.5's flat node arrays, shared by growing a tree and applying it.

:mod:`ensemblekit.classifiers._c45_growth` grows and prunes a tree;
:mod:`ensemblekit.classifiers.c45_model` applies and prints it. Both read these, which
import numpy alone.
"""

from __future__ import annotations

import numpy as np

_SMALL = 1e-6  # Weka's Utils.SMALL


def _first_max(values) -> int:
    """Index of Weka's ``maxClass``: the first value exceeding all earlier ones by 1e-6."""
    best, index = 0.0, 0
    for i, v in enumerate(values.tolist() if isinstance(values, np.ndarray) else values):
        if v - best > _SMALL:
            best, index = v, i
    return index


def _depth(child_start, n_children) -> int:
    """Depth of a tree given as node arrays (children after their parent)."""
    depth = np.zeros(child_start.size, dtype=np.int64)
    for i in np.flatnonzero(n_children > 0).tolist():
        s = child_start[i]
        depth[s:s + n_children[i]] = depth[i] + 1
    return int(depth.max())
