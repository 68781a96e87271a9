"""C4.5's growth shortcuts give the very bits of the plain computation (issue 30).

The growth kernel looks the entropy terms of whole-number weights up in a table, sorts
large columns by radix, and forms each column's distinct values from its sorted rows;
each must give what a logarithm per term, a stable comparison sort and ``numpy.unique``
give, or trees would drift from Weka's.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.classifiers import _c45_kernels as kernels
from ensemblekit.classifiers.c45 import C45Tree


def test_the_table_of_x_ln_x_holds_the_bits_of_the_function():
    table = kernels._xlnx_table(5000)
    direct = np.array([kernels._xlnx(float(k)) for k in range(5001)])
    assert table.shape == (5001,)
    assert table.view(np.uint64).tolist() == direct.view(np.uint64).tolist()


def _columns(n, rng):
    yield rng.normal(size=n)
    yield rng.integers(-3, 3, n).astype(float)  # many ties: stability decides
    yield rng.choice([-0.0, 0.0, 1.0, -np.inf, np.inf, np.nan, -1e300, 5e-324, -5e-324], n)
    col = np.round(rng.normal(size=n), 2)
    col[rng.random(n) < 0.1] = np.nan
    yield col
    yield np.full(n, 2.5)
    yield np.full(n, np.nan)


@pytest.mark.parametrize("n", [1, 7, kernels._RADIX_ROWS - 1, kernels._RADIX_ROWS, 20000])
def test_columns_are_sorted_as_a_stable_sort_sorts_them(n):
    rng = np.random.default_rng(n)
    for col in _columns(n, rng):
        rows, vals = kernels._sorted_known(col)
        order = np.argsort(col, kind="stable")
        order = order[~np.isnan(col[order])]
        assert rows.tolist() == order.tolist()
        assert vals.view(np.uint64).tolist() == col[order].view(np.uint64).tolist()


@pytest.mark.parametrize("first", [-0.0, 0.0])
@pytest.mark.parametrize("n", [8, 5000])
def test_a_cut_moves_to_the_zero_numpy_unique_keeps(n, first):
    # zeros of both signs below the cut: the threshold is the zero numpy.unique lists
    # (with 5000 rows and -0 first, numpy keeps +0: not the first zero in row order)
    rng = np.random.default_rng(3)
    col = np.where(np.arange(n) < n // 2, 0.0, 1.0)
    col[: n // 2] *= np.where(rng.random(n // 2) < 0.5, -1.0, 1.0)
    col[0], col[1] = first, -first
    y = (col > 0.5).astype(int)
    tree = C45Tree(unpruned=True).fit(col[:, None], y)
    assert tree.feature_[0] == 0
    assert tree.threshold_[0] == 0.0
    kept = np.unique(col)[0]
    assert np.signbit(tree.threshold_[0]) == np.signbit(kept)


def test_writable_and_read_only_rows_and_reduced_error_pruning_share_one_compilation():
    # numba compiles a kernel per type of its arguments (20-30 s for the growth): a plain
    # fit, a fit on read-only rows and one with reduced-error pruning (which grows on part
    # of the rows) must all use one compiled growth and one pruning, and give one tree
    from numba import types

    from ensemblekit.classifiers import _c45_pruning as pruning

    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 3, 60), rng.normal(size=60)]).astype(float)
    y = (X[:, 1] > 0).astype(int)
    frozen = X.copy()
    frozen.flags.writeable = False
    trees = [C45Tree(nominal_features=[0], n_categories=[3], **options).fit(rows, y)
             for rows in (X, frozen) for options in ({}, {"reduced_error_pruning": True})]
    assert trees[0].feature_.tolist() == trees[2].feature_.tolist()
    int8_codes = types.Array(types.int8, 1, "C")
    grown = [s for s in kernels._grow_unpruned.signatures
             if s[1] == int8_codes and s[-1] == types.none]
    pruned = [s for s in pruning._prune_tree.signatures if s[1] == int8_codes]
    assert len(grown) == 1 and len(pruned) == 1
    assert grown[0][0] == pruned[0][0] == types.Array(types.float64, 2, "C", readonly=True)
