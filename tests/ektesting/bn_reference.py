"""Slow, literal references for the Bayesian-network tests (shared by test_k2 and test_iebn).

Nothing here is clever: tables are recounted from scratch for every instance, and
K2 is written straight from its description over a scoring function, so the fast
closed-form code can be checked against them.
"""

from __future__ import annotations

import numpy as np


def ref_log_joint(train: np.ndarray, card: np.ndarray, parents, row: np.ndarray, alpha: float) -> float:
    """log P(row) under the network whose CPTs are counted on ``train`` (class in column 0).

    Every node is included, whether or not its family contains the class.
    """
    total = 0.0
    for v, ps in enumerate(parents):
        match = np.ones(train.shape[0], dtype=bool)
        for p in ps:
            match &= train[:, p] == row[p]
        n_row = match.sum()
        n_cell = (match & (train[:, v] == row[v])).sum()
        total += np.log((n_cell + alpha) / (n_row + card[v] * alpha))
    return total


def ref_posterior(train, card, parents, x_row, alpha):
    """P(c | x_row) for every class c, by normalising the joint over the classes."""
    logs = []
    for c in range(card[0]):
        row = x_row.copy()
        row[0] = c
        logs.append(ref_log_joint(train, card, parents, row, alpha))
    logs = np.array(logs)
    e = np.exp(logs - logs.max())
    return e / e.sum()


def random_data(rng, n=40, card=(2, 3, 2, 4, 3), C=3):
    """Small random discrete data where a few attributes depend on the class and on each other."""
    card = np.array(card)
    X = np.column_stack([rng.integers(0, r, n) for r in card])
    y = rng.integers(0, C, n)
    X[:, 0] = np.where(rng.random(n) < 0.6, y % card[0], X[:, 0])
    X[:, 2] = np.where(rng.random(n) < 0.5, X[:, 0], X[:, 2])
    return X, y, card, C


def literal_k2(d, max_parents, score, init="naive-bayes"):
    """K2 (Abbasian et al. 2013, Alg. 2) over ``score(parent_sets)``, with no incremental state.

    Nodes 0..d (0 = class); each node adds the predecessor that raises the score
    most, only on a strict improvement, first best in order winning.
    """
    parents = [[] for _ in range(d + 1)]
    if init == "naive-bayes":
        for v in range(1, d + 1):
            parents[v].append(0)
    current = score([tuple(ps) for ps in parents])
    for v in range(1, d + 1):
        while len(parents[v]) < max_parents:
            best, best_p = current, None
            for p in range(v):
                if p in parents[v]:
                    continue
                trial = [tuple(ps) for ps in parents]
                trial[v] = trial[v] + (p,)
                s = score(trial)
                if s > best + 1e-12:
                    best, best_p = s, p
            if best_p is None:
                break
            parents[v].append(best_p)
            current = best
    return [tuple(ps) for ps in parents]
