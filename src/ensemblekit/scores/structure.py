"""Structure similarity of two fitted models, and the stability of a set of them.

A learner is *stable* when small changes of its training data change its model little
(Turney 1995; Dwyer & Holte 2007, reference [7] of the Inner Ensembles paper, Abbasian et
al. 2013, which claims stability for its inner ensembles without measuring it). These
functions measure it on the models' structure, which is what a reader of the model sees:

* a Bayesian network's **arc set**: the Jaccard similarity ``|A & B| / |A | B|`` of the
  (parent, child) pairs;
* a decision tree's **split multiset**: the (attribute, depth) pair of every internal
  node, compared by the multiset Jaccard similarity ``sum min(a_i, b_i) / sum max(a_i,
  b_i)`` of their counts (two trees that test the same attributes at the same depths, as
  often, are alike; the thresholds and the order of the branches are not compared);
* a clustering's **partition** of the rows both models saw: the adjusted Rand index
  (Hubert & Arabie 1985), which does not care how the clusters are numbered.

:func:`stability` averages a similarity over every pair of models; :func:`stability_shares`
gives each model's mean similarity to the others, whose mean over the models is that
same pairwise mean (every pair is counted once from each end).

Two empty structures (two single-leaf trees, two networks without arcs) are identical:
similarity 1. Everything here is numpy and pure Python.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from ensemblekit.scores.clustering import adjusted_rand

__all__ = ["arc_jaccard", "multiset_jaccard", "partition_similarity", "stability",
           "stability_shares", "SIMILARITIES"]


def arc_jaccard(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> float:
    """Jaccard similarity of two arc sets.

    Parameters
    ----------
    a, b : sequence of (int, int)
        The (parent, child) arcs of two networks over the same nodes; repeats count once.

    Returns
    -------
    float
        ``|a & b| / |a | b|`` in [0, 1]; 1 when both are empty.
    """
    left, right = {tuple(map(int, arc)) for arc in a}, {tuple(map(int, arc)) for arc in b}
    union = left | right
    return 1.0 if not union else len(left & right) / len(union)


def multiset_jaccard(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> float:
    """Multiset Jaccard similarity of two trees' (attribute, depth) splits.

    Parameters
    ----------
    a, b : sequence of (int, int)
        One (attribute index, depth) pair per internal node of each tree, the root at
        depth 0; a pair that occurs twice counts twice.

    Returns
    -------
    float
        ``sum_i min(a_i, b_i) / sum_i max(a_i, b_i)`` over the distinct pairs ``i`` (their
        counts ``a_i``, ``b_i``), in [0, 1]; 1 when both trees are single leaves.
    """
    left, right = Counter(tuple(map(int, s)) for s in a), Counter(tuple(map(int, s)) for s in b)
    top = sum((left | right).values())
    return 1.0 if top == 0 else sum((left & right).values()) / top


def partition_similarity(a, b) -> float:
    """Adjusted Rand index of two partitions of the same rows.

    Parameters
    ----------
    a, b : array-like of int, shape (n_rows,)
        Cluster ids of the rows both models saw, in the same row order.

    Returns
    -------
    float
        At most 1 (the same partition, whatever the numbering); about 0 by chance.

    Raises
    ------
    ValueError
        If the lengths differ or there are no rows.
    """
    return float(adjusted_rand(np.asarray(a), np.asarray(b)))


#: The similarity of each kind of structure a model class may declare (``structure_kind``).
SIMILARITIES: dict[str, Callable[..., float]] = {
    "arcs": arc_jaccard,
    "splits": multiset_jaccard,
    "partition": partition_similarity,
}


def stability_shares(structures: Sequence, similarity: Callable[..., float]) -> list[float]:
    """Each model's mean similarity to the other models of its group.

    Parameters
    ----------
    structures : sequence
        The structures of ``m`` models (as ``similarity`` takes them).
    similarity : callable
        Symmetric ``similarity(a, b) -> float`` (see :data:`SIMILARITIES`).

    Returns
    -------
    list of float
        ``m`` values; their mean is :func:`stability` of the group. NaN for every model
        when ``m < 2`` (there is no pair).
    """
    m = len(structures)
    if m < 2:
        return [float("nan")] * m
    sums = [0.0] * m
    for i in range(m):
        for j in range(i + 1, m):
            s = float(similarity(structures[i], structures[j]))
            sums[i] += s
            sums[j] += s
    return [s / (m - 1) for s in sums]


def stability(structures: Sequence, similarity: Callable[..., float]) -> float:
    """Mean pairwise similarity of a group of models' structures.

    Parameters
    ----------
    structures : sequence
        At least 2 structures.
    similarity : callable
        See :func:`stability_shares`.

    Returns
    -------
    float
        The mean of ``similarity`` over the ``m (m - 1) / 2`` pairs; NaN for fewer than 2.
    """
    shares = stability_shares(structures, similarity)
    return float("nan") if not shares else float(np.mean(shares))
