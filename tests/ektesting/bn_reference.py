"""Slow, literal references for the Bayesian-network tests (shared by test_k2 and test_iebn).

Nothing here is clever: tables are recounted from scratch for every instance, and
K2 is written straight from its description over a scoring function, so the fast
closed-form code can be checked against them.
"""

from __future__ import annotations

import decimal
import math

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


def literal_k2(d, max_parents, score, init="naive-bayes", order=None, tol=1e-12):
    """K2 (Abbasian et al. 2013, Alg. 2) over ``score(parent_sets)``, with no incremental state.

    Nodes 0..d (0 = class), taken in ``order`` (default ``0 .. d``); each node adds the
    predecessor that raises the score most, only on an improvement larger than ``tol``
    (0: strict, as Weka compares its rounded scores), first best in order winning.
    """
    order = list(range(d + 1)) if order is None else list(order)
    parents = [[] for _ in range(d + 1)]
    if init == "naive-bayes":
        for v in range(1, d + 1):
            parents[v].append(0)
    current = score([tuple(ps) for ps in parents])
    for k, v in enumerate(order):
        while k and len(parents[v]) < max_parents:
            best, best_p = current, None
            for p in order[:k]:
                if p in parents[v]:
                    continue
                trial = [tuple(ps) for ps in parents]
                trial[v] = trial[v] + (p,)
                s = score(trial)
                if s > best + tol:
                    best, best_p = s, p
            if best_p is None:
                break
            parents[v].append(best_p)
            current = best
    return [tuple(ps) for ps in parents]


def held_out_rows(n: int, i: int, cv_type: str, n_folds: int = 10) -> np.ndarray:
    """The rows that score row ``i``: all but ``i`` (loo), all outside its fold of ``n_folds``
    contiguous blocks ``floor(f n / k) .. floor((f + 1) n / k) - 1`` (kfold), or rows
    ``0 .. i - 1`` (cumulative)."""
    rows = np.arange(n)
    if cv_type == "loo":
        return rows[rows != i]
    if cv_type == "cumulative":
        return rows[:i]
    f = max(g for g in range(n_folds) if g * n // n_folds <= i)
    return rows[(rows < f * n // n_folds) | (rows >= (f + 1) * n // n_folds)]


def refit_score(X, y, parents, card_attr, C, alpha=0.5, cv_type="loo", n_folds=10,
                accuracy=False) -> float:
    """Mean true-class posterior (or 0/1 hit) of every row under the network recounted on the
    rows that score it (:func:`held_out_rows`)."""
    vals = np.column_stack([y, X])
    card = np.concatenate([[C], card_attr])
    total = 0.0
    for i in range(len(y)):
        post = ref_posterior(vals[held_out_rows(len(y), i, cv_type, n_folds)], card, parents,
                             vals[i], alpha)
        total += float(np.argmax(post) == y[i]) if accuracy else post[y[i]]
    return total / len(y)


def weka_rounded_score(X, y, parents, card_attr, C, alpha=0.5, cv_type="loo", n_folds=10,
                       accuracy=False) -> float:
    """The same score with every floating-point step of Weka's ``calcScore``, one scalar at a
    time: for each class, ``0.0`` plus the log of each node's entry in file order (the
    attributes, then the class as the last attribute), minus the largest total, ``exp``, a
    running sum over the classes and a division; the rows' true-class probabilities (or hits)
    added one after the other and divided by the number of rows. Logarithms are correctly
    rounded (40 digits, ``decimal``), exponentials the C library's."""
    ln = decimal.Context(prec=40).ln
    vals = np.column_stack([y, X])
    card = np.concatenate([[C], card_attr])
    n, d = vals.shape[0], vals.shape[1] - 1
    acc = 0.0
    for i in range(n):
        train = vals[held_out_rows(n, i, cv_type, n_folds)]
        totals = []
        for c in range(C):
            row = vals[i].copy()
            row[0] = c
            log_p = 0.0
            for v in [*range(1, d + 1), 0]:
                match = np.ones(train.shape[0], dtype=bool)
                for p in parents[v]:
                    match &= train[:, p] == row[p]
                n_row = int(match.sum())
                n_cell = int((match & (train[:, v] == row[v])).sum())
                log_p += float(ln(decimal.Decimal((n_cell + alpha) / (n_row + card[v] * alpha))))
            totals.append(0.0 + log_p)
        top = max(totals)
        e = [math.exp(t - top) for t in totals]
        s = 0.0
        for x in e:
            s += x
        probs = [x / s for x in e]
        acc += (1.0 if probs.index(max(probs)) == y[i] else 0.0) if accuracy else probs[y[i]]
    return acc / n
