"""Structure similarities and stability (issue 34): hand-computed small cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ensemblekit.scores.structure import (
    arc_jaccard,
    multiset_jaccard,
    partition_similarity,
    stability,
    stability_shares,
)


def test_arc_jaccard_counts_shared_arcs_over_all_arcs():
    a = [(0, 1), (0, 2), (1, 2)]
    b = [(0, 1), (2, 1), (1, 2), (3, 2)]
    # shared: (0,1), (1,2); union: (0,1), (0,2), (1,2), (2,1), (3,2)
    assert arc_jaccard(a, b) == pytest.approx(2 / 5)
    assert arc_jaccard(b, a) == arc_jaccard(a, b)
    assert arc_jaccard(a, list(reversed(a))) == 1.0  # a set: order does not matter
    assert arc_jaccard([(0, 1)], [(1, 0)]) == 0.0  # an arc has a direction
    assert arc_jaccard([], []) == 1.0


def test_multiset_jaccard_counts_repeated_splits():
    # tree A: root on attribute 2, both children split on attribute 0 at depth 1
    a = [(2, 0), (0, 1), (0, 1)]
    # tree B: root on attribute 2, one child on 0 and one on 1 at depth 1, and 0 again deeper
    b = [(2, 0), (0, 1), (1, 1), (0, 2)]
    # min counts: (2,0):1, (0,1):1 -> 2; max counts: (2,0):1, (0,1):2, (1,1):1, (0,2):1 -> 5
    assert multiset_jaccard(a, b) == pytest.approx(2 / 5)
    assert multiset_jaccard(a, a) == 1.0
    assert multiset_jaccard([(0, 0)], [(0, 1)]) == 0.0  # the same attribute at another depth
    assert multiset_jaccard([], []) == 1.0  # two single leaves
    assert multiset_jaccard([], [(0, 0)]) == 0.0


def test_partition_similarity_is_the_adjusted_rand_index():
    assert partition_similarity([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0  # renumbered
    # contingency [[2, 0], [1, 1]]: sum C(n_ij, 2) = 1, rows 1 + 1 = 2, columns 3 + 0 = 3,
    # C(4, 2) = 6; expected 2 * 3 / 6 = 1; max (2 + 3) / 2 = 2.5; ARI = (1 - 1) / 1.5 = 0
    assert partition_similarity([0, 0, 1, 1], [0, 0, 0, 1]) == pytest.approx(0.0)
    # [[2, 0, 0], [0, 2, 1]]... rows {0,0,1,1,1}, cols {0,0,1,1,2}: sum C = 1 + 1 = 2,
    # rows C(2,2)+C(3,2) = 4, cols 1 + 1 + 0 = 2, C(5, 2) = 10: expected 0.8, max 3
    assert partition_similarity([0, 0, 1, 1, 1], [0, 0, 1, 1, 2]) == pytest.approx(1.2 / 2.2)


def test_stability_is_the_mean_over_pairs_and_the_shares_average_to_it():
    structures = [[(0, 1)], [(0, 1), (1, 2)], [(1, 2)]]
    # pairs: (0,1) -> 1/2, (0,2) -> 0, (1,2) -> 1/2
    shares = stability_shares(structures, arc_jaccard)
    assert shares == pytest.approx([1 / 4, 1 / 2, 1 / 4])
    assert stability(structures, arc_jaccard) == pytest.approx(1 / 3)
    assert np.mean(shares) == pytest.approx(1 / 3)
    assert stability([[(0, 1)]] * 4, arc_jaccard) == 1.0  # identical models
    assert math.isnan(stability([[(0, 1)]], arc_jaccard))  # no pair
    assert stability_shares([], arc_jaccard) == []
