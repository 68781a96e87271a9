"""Supervised MDL cut points with instance weights (Weka's Discretize weighs instances)."""

from __future__ import annotations

import numpy as np

from ensemblekit.discretize import mdl_cut_points


def test_unit_weights_give_the_unweighted_cuts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = (x + rng.normal(scale=0.5, size=200) > 0).astype(int)
    np.testing.assert_array_equal(mdl_cut_points(x, y, 2, weights=np.ones(200)),
                                  mdl_cut_points(x, y, 2))


def test_the_mdl_test_divides_by_the_weight_and_charges_the_rows():
    """x = 0 1 2 3, classes 0 0 1 1: the cut at 1.5 gains 1 bit. The MDL cost is
    (log2(rows - 1) + log2(3**2 - 2) - 2 * 1) / N = (1.585 + 0.807) / N: accepted for
    N = 4 (0.598 < 1), refused for weights 0.25 (N = 1: 2.392 > 1)."""
    x, y = np.arange(4.0), np.array([0, 0, 1, 1])
    assert mdl_cut_points(x, y, 2).tolist() == [1.5]
    assert mdl_cut_points(x, y, 2, weights=np.full(4, 2.0)).tolist() == [1.5]
    assert mdl_cut_points(x, y, 2, weights=np.full(4, 0.25)).tolist() == []


def test_a_light_row_barely_moves_the_class_counts():
    """x = 0 1 2 3, classes 0 1 1 1: unweighted the cut at 0.5 gains H(1/4) = 0.811 bits
    against a cost of (1.585 + 2.807 - 2 * 0.811) / 4 = 0.69, and is taken. With the first
    row weighing 0.01 the gain is H(0.01 / 3.01) = 0.032 bits: refused."""
    x, y = np.arange(4.0), np.array([0, 1, 1, 1])
    assert mdl_cut_points(x, y, 2).tolist() == [0.5]
    assert mdl_cut_points(x, y, 2, weights=np.array([0.01, 1, 1, 1])).tolist() == []
