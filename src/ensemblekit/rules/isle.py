"""ISLE ensemble generation: trees grown on subsamples, each to the current residuals.

Friedman & Popescu's *importance sampled learning ensembles* (ISLE, 2003), as
restated by Akdemir & Jannink (*Ensemble learning with trees and rules*,
Intelligent Data Analysis 18(5), 2014, Sect. 1.1, Algorithm 1 "ISLE(M, nu,
eta)"): starting from ``F_0 = 0``, tree ``j`` is fitted by least squares on a
subsample ``S_j(eta)`` drawn without replacement to the residuals
``y - F_{j-1}``, and ``F_j = F_{j-1} + nu * T_j``. With memory ``nu = 0`` every
tree fits ``y`` itself (bagging / random-forest-like trees); with ``nu > 0``
later trees fit what earlier ones missed (boosting-like). The squared-error
loss makes the line search of Algorithm 1 trivial: a least-squares tree
already holds the best constant in each leaf, so ``c_j = 1``.

Breiman's random forest is the ISLE ensemble with memory 0, bootstrap samples
(N rows drawn with replacement), deep trees and a random subset of the
features tried at each split (Akdemir & Jannink 2014, Sect. 1.1, after
Friedman & Popescu 2003; Breiman, *Random forests*, Machine Learning 45(1),
2001). ``bootstrap=True`` draws the
samples as scikit-learn's :class:`~sklearn.ensemble.RandomForestRegressor`
does (a seed per tree, the drawn rows passed as counts in ``sample_weight``), so
with the same ``random_state`` the trees are that forest's trees.

The trees are scikit-learn :class:`~sklearn.tree.DecisionTreeRegressor`\\ s;
what is ours is the sampling, the residual updates and RuleFit's randomised
tree sizes. Numpy arrays in, fitted trees out; nothing here reads files or
prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ensemblekit.errors import InputError

from .isle_model import ISLE_CONSTRAINTS, TREE_SIZES

__all__ = ["ISLE_CONSTRAINTS", "TREE_SIZES", "ISLEEnsemble", "default_sample_size",
           "generate_isle", "tree_arrays"]

def default_sample_size(n_samples: int) -> int:
    """Friedman & Popescu's subsample size ``min(N/2, 100 + 6 sqrt(N))``.

    Parameters
    ----------
    n_samples : int
        Number of training instances N (>= 1).

    Returns
    -------
    int
        Subsample size in ``[1, N]`` (at least one instance).

    References
    ----------
    Friedman & Popescu, *Predictive learning via rule ensembles*, Annals of
    Applied Statistics 2(3), 2008, Sect. 3 (the default of RuleFit).
    """
    return int(max(1, min(n_samples // 2, int(100 + 6 * math.sqrt(n_samples)))))


@dataclass
class ISLEEnsemble:
    """The output of :func:`generate_isle`.

    Attributes
    ----------
    trees : list of sklearn.tree.DecisionTreeRegressor
        The M fitted trees ``T_j``, in generation order.
    samples : list of ndarray of int
        Training rows of each tree's subsample ``S_j`` (ascending; with
        ``bootstrap`` the distinct rows drawn).
    prediction : ndarray of shape (n_samples,)
        ``F_M`` on the training rows (0 when ``learning_rate == 0``).
    """

    trees: list
    samples: list
    prediction: np.ndarray

    def outputs(self, X) -> np.ndarray:
        """Every tree's output on ``X``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_trees)
            Column ``j`` is ``T_j(X)``.
        """
        return tree_outputs(self.trees, X)

    def out_of_bag(self, n_samples: int) -> np.ndarray:
        """Which training rows each tree did not see.

        Returns
        -------
        ndarray of bool, shape (n_samples, n_trees)
            True where row ``i`` is outside tree ``j``'s subsample.
        """
        mask = np.ones((n_samples, len(self.samples)), dtype=bool)
        for j, rows in enumerate(self.samples):
            mask[rows, j] = False
        return mask


def tree_outputs(trees, X) -> np.ndarray:
    """Predictions of several fitted regression trees as columns, shape (n_samples, n_trees)."""
    out = np.empty((X.shape[0], len(trees)), dtype=np.float64)
    for j, tree in enumerate(trees):
        out[:, j] = tree.predict(X)
    return out


def tree_arrays(trees) -> dict[str, np.ndarray]:
    """The node arrays of fitted regression trees, tree after tree, as a model stores them.

    Parameters
    ----------
    trees : sequence of sklearn.tree.DecisionTreeRegressor
        Fitted single-output trees.

    Returns
    -------
    dict
        ``node_count`` (int64, one per tree) and, one entry per node,
        ``children_left``, ``children_right`` (numbered within the tree, -1 at
        a leaf), ``feature`` (int64; -2 at a leaf), ``threshold`` and
        ``value`` (float64): what :func:`ensemblekit.rules.isle_model.tree_outputs`
        walks.
    """
    parts = [t.tree_ for t in trees]

    def joined(get, dtype):
        return np.concatenate([np.asarray(get(t), dtype=dtype) for t in parts]) if parts else \
            np.zeros(0, dtype=dtype)

    return {
        "node_count": np.array([t.node_count for t in parts], dtype=np.int64),
        "children_left": joined(lambda t: t.children_left, np.int64),
        "children_right": joined(lambda t: t.children_right, np.int64),
        "feature": joined(lambda t: t.feature, np.int64),
        "threshold": joined(lambda t: t.threshold, np.float64),
        "value": joined(lambda t: t.value[:, 0, 0], np.float64),
    }


def generate_isle(X, y, *, n_estimators: int = 200, max_depth: int | None = 3,
                  max_samples: float | None = None, learning_rate: float = 0.0,
                  max_features: float = 1.0, min_samples_leaf: int = 1,
                  tree_size: str = "fixed", bootstrap: bool = False,
                  random_state=None) -> ISLEEnsemble:
    """Grow an ISLE ensemble of regression trees (Akdemir & Jannink 2014, Algorithm 1).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs, finite floats.
    y : ndarray of shape (n_samples,)
        Training targets, finite floats.
    n_estimators : int, default=200
        Number of trees M (>= 1).
    max_depth : int or None, default=3
        Depth of every tree when ``tree_size="fixed"``; with ``"random"`` the
        mean number of leaves is ``2**max_depth``. None: unlimited (fixed only).
    max_samples : float in (0, 1] or None, default=None
        Subsample size eta as a fraction of the rows, drawn without
        replacement; None uses :func:`default_sample_size`. With
        ``bootstrap``: the number of draws with replacement as a fraction of
        the rows, None meaning N draws.
    learning_rate : float in [0, 1], default=0.0
        Memory nu: 0 fits every tree to ``y``; > 0 fits each tree to the
        residuals of the trees before it.
    max_features : float in (0, 1], default=1.0
        Fraction of the features tried at each split (random-forest style
        when < 1).
    min_samples_leaf : int, default=1
        Minimum subsample rows per leaf.
    tree_size : {"fixed", "random"}, default="fixed"
        ``"random"``: RuleFit's varying sizes -- tree ``j`` gets
        ``2 + floor(g)`` leaves, ``g`` exponential with mean
        ``2**max_depth - 2`` (Friedman & Popescu 2008, Sect. 3.3), grown
        best-first.
    bootstrap : bool, default=False
        Draw each tree's sample with replacement, as bagging and random
        forests do: tree ``j`` gets a seed from ``random_state``, the seed
        draws the rows, and the tree is fitted on all rows with the number of
        times each was drawn as its sample weight (scikit-learn's forests do
        the same, so with ``max_depth=None``, ``learning_rate=0`` and the same
        seed the trees equal :class:`~sklearn.ensemble.RandomForestRegressor`'s).
    random_state : int, RandomState or None
        Seed of the subsamples and of the trees' feature draws.

    Returns
    -------
    ISLEEnsemble

    Raises
    ------
    ValueError
        On an out-of-range parameter or when ``X`` and ``y`` disagree in length.
    """
    from sklearn.tree import DecisionTreeRegressor
    from sklearn.utils import check_random_state

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = X.shape[0]
    if y.shape != (n,):
        raise InputError(f"y must have shape ({n},), got {y.shape}")
    _check_isle_params(n_estimators, max_depth, max_samples, learning_rate, max_features,
                       min_samples_leaf, tree_size, bootstrap)
    if bootstrap:
        size = n if max_samples is None else max(1, int(round(max_samples * n)))
    else:
        size = default_sample_size(n) if max_samples is None else max(1, int(round(max_samples * n)))
    rng = check_random_state(random_state)
    mean_leaves = None if max_depth is None else 2 ** max_depth
    F = np.zeros(n)
    trees, samples = [], []
    for _ in range(n_estimators):
        weight = None
        if bootstrap:
            # the tree's seed also draws its rows, as scikit-learn's forests do
            seed = int(rng.randint(np.iinfo(np.int32).max))
            weight = np.bincount(check_random_state(seed).randint(0, n, size), minlength=n)
            rows = np.flatnonzero(weight)
        else:
            rows = np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)
            seed = int(rng.randint(np.iinfo(np.int32).max))
        if tree_size == "random":
            leaves = 2 + int(np.floor(rng.exponential(mean_leaves - 2))) if mean_leaves > 2 else 2
            tree = DecisionTreeRegressor(max_leaf_nodes=leaves, max_features=max_features,
                                         min_samples_leaf=min_samples_leaf, random_state=seed)
        else:
            tree = DecisionTreeRegressor(max_depth=max_depth, max_features=max_features,
                                         min_samples_leaf=min_samples_leaf, random_state=seed)
        if bootstrap:
            tree.fit(X, y - F, sample_weight=weight.astype(np.float64))
        else:
            tree.fit(X[rows], y[rows] - F[rows])
        if learning_rate > 0:
            F += learning_rate * tree.predict(X)
        trees.append(tree)
        samples.append(rows)
    return ISLEEnsemble(trees, samples, F)


def _check_isle_params(n_estimators, max_depth, max_samples, learning_rate, max_features,
                       min_samples_leaf, tree_size, bootstrap=False) -> None:
    """Raise ValueError naming the first ISLE parameter out of range.

    The ranges are :data:`ISLE_CONSTRAINTS`; ``tree_size="random"`` also needs a ``max_depth``.
    """
    for name, value in (("n_estimators", n_estimators), ("max_depth", max_depth),
                        ("max_samples", max_samples), ("learning_rate", learning_rate),
                        ("max_features", max_features), ("min_samples_leaf", min_samples_leaf),
                        ("tree_size", tree_size), ("bootstrap", bootstrap)):
        ISLE_CONSTRAINTS[name].check(value, name, "generate_isle")
    if tree_size == "random" and max_depth is None:
        raise InputError("tree_size='random' needs max_depth (the mean size is 2**max_depth "
                         "leaves)")
