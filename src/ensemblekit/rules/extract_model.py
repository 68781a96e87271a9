"""Conjunctive rules as flat arrays, evaluated and printed with numpy alone.

A rule taken from a tree node (:mod:`ensemblekit.rules.extract`) is the
conjunction of the split conditions on the path from the root to the node
(Friedman & Popescu, *Predictive learning via rule ensembles*, 2008, Sect. 3).
A fitted model stores its rules as plain arrays, one entry per condition
(feature, side, threshold) and one per rule (its tree, node and number of
conditions), so a model file holds numbers and never objects; this module
turns them back into :class:`Rule` objects for printing and evaluates them on
new rows exactly as scikit-learn's ``decision_path`` routes a row: the row is
cast to float32 and compared with ``<=`` against the float64 threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ensemblekit.classifiers.cart_model import check_float32_range

__all__ = ["Condition", "FittedRules", "Rule", "StoredOr", "as_float32", "flatten_rules", "rule_matrix",
           "unflatten_rules"]

# Rows evaluated at once: bounds the (rows x conditions) boolean temporaries.
_ROWS = 4096


@dataclass(frozen=True)
class Condition:
    """One split condition on a path: ``x[feature] <= threshold`` or ``x[feature] > threshold``.

    Attributes
    ----------
    feature : int
        Column of the estimator's input.
    greater : bool
        True for ``x > threshold`` (the right branch), False for ``<=``.
    threshold : float
        The tree's split value.
    """

    feature: int
    greater: bool
    threshold: float


@dataclass(frozen=True)
class Rule:
    """A conjunctive rule: a tree node and the conditions on the path to it.

    Attributes
    ----------
    tree : int
        Index of the tree in the ensemble.
    node : int
        Node id in that tree (scikit-learn numbering; never 0, the root).
    conditions : tuple of Condition
        From the root down.
    """

    tree: int
    node: int
    conditions: tuple[Condition, ...]

    @property
    def features(self) -> tuple[int, ...]:
        """The distinct features the rule tests, ascending."""
        return tuple(sorted({c.feature for c in self.conditions}))

    @property
    def length(self) -> int:
        """Number of conditions (the node's depth)."""
        return len(self.conditions)

    def describe(self, feature_names=None, binary_features=()) -> str:
        """The rule in words, one clause per feature, joined by ``and``.

        Conditions on the same numeric feature merge into one interval
        (``2.45 < petal length <= 4.95``). A 0/1 feature (e.g. a one-hot column
        ``colour=red``) reads as an equality: ``colour = red`` / ``colour != red``
        for one-hot names, ``name = 1`` / ``name = 0`` otherwise.

        Parameters
        ----------
        feature_names : sequence of str, optional
            Names of the estimator's input columns (default ``x0, x1, ...``).
        binary_features : collection of int
            Columns that hold only 0 and 1 in the training data.

        Returns
        -------
        str
        """
        binary = set(int(b) for b in binary_features)
        clauses = []
        for j in self.features:
            name = feature_names[j] if feature_names is not None else f"x{j}"
            lows = [c.threshold for c in self.conditions if c.feature == j and c.greater]
            highs = [c.threshold for c in self.conditions if c.feature == j and not c.greater]
            low = max(lows) if lows else None
            high = min(highs) if highs else None
            if j in binary and (low is None) != (high is None):
                is_one = low is not None
                attribute, eq, value = name.partition("=")
                if eq:
                    clauses.append(f"{attribute} {'=' if is_one else '!='} {value}")
                else:
                    clauses.append(f"{name} = {1 if is_one else 0}")
            elif low is not None and high is not None:
                clauses.append(f"{_num(low)} < {name} <= {_num(high)}")
            elif low is not None:
                clauses.append(f"{name} > {_num(low)}")
            else:
                clauses.append(f"{name} <= {_num(high)}")
        return " and ".join(clauses)


def _num(value: float) -> str:
    return f"{value:.6g}"


def flatten_rules(rules) -> dict[str, np.ndarray]:
    """Rules as the flat arrays a model stores.

    Parameters
    ----------
    rules : sequence of Rule

    Returns
    -------
    dict
        ``rule_tree``, ``rule_node``, ``rule_length`` (int64, one per rule) and
        ``condition_feature`` (int64), ``condition_greater`` (bool),
        ``condition_threshold`` (float64), one per condition, rule after rule,
        each rule's conditions from the root down.
    """
    conditions = [c for rule in rules for c in rule.conditions]
    return {
        "rule_tree": np.array([r.tree for r in rules], dtype=np.int64),
        "rule_node": np.array([r.node for r in rules], dtype=np.int64),
        "rule_length": np.array([len(r.conditions) for r in rules], dtype=np.int64),
        "condition_feature": np.array([c.feature for c in conditions], dtype=np.int64),
        "condition_greater": np.array([c.greater for c in conditions], dtype=bool),
        "condition_threshold": np.array([c.threshold for c in conditions], dtype=np.float64),
    }


def unflatten_rules(tree, node, length, feature, greater, threshold) -> list[Rule]:
    """The :class:`Rule` objects that :func:`flatten_rules` flattened (equal to the originals)."""
    ends = np.cumsum(length).tolist()
    starts = [0] + ends[:-1]
    conditions = [Condition(int(f), bool(g), float(t))
                  for f, g, t in zip(feature.tolist(), greater.tolist(), threshold.tolist())]
    return [Rule(int(t), int(n), tuple(conditions[a:b]))
            for t, n, a, b in zip(tree.tolist(), node.tolist(), starts, ends)]


def as_float32(X) -> np.ndarray:
    """``X`` cast to float32 as scikit-learn's trees read it; a value beyond float32 is refused.

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
        Finite values.

    Returns
    -------
    ndarray of float32 of shape (n_samples, n_features)

    Raises
    ------
    ensemblekit.errors.ColumnError
        A value overflows float32 (magnitude above about 3.4e38): the first
        column holding one, with that value
        (:func:`ensemblekit.classifiers.cart_model.check_float32_range`).
    """
    check_float32_range(X)
    return np.asarray(X, dtype=np.float32)


def rule_matrix(X32, length, feature, greater, threshold) -> np.ndarray:
    """Which rows each rule fires for: the conjunction of its conditions.

    Parameters
    ----------
    X32 : ndarray of float32, shape (n_samples, n_features)
        Rows cast as :func:`as_float32` does.
    length : ndarray of int64, shape (n_rules,)
        Conditions per rule, each >= 1.
    feature, greater, threshold : ndarray, shape (n_conditions,)
        The rules' conditions, rule after rule (see :func:`flatten_rules`).

    Returns
    -------
    ndarray of bool, shape (n_samples, n_rules)
        True where ``x[feature] <= threshold`` (``>`` when ``greater``) holds
        for every condition of the rule: the node-indicator matrix
        scikit-learn's ``decision_path`` gives for the rules' nodes.
    """
    n = X32.shape[0]
    out = np.empty((n, length.size), dtype=bool)
    if not length.size:
        return out
    starts = np.concatenate(([0], np.cumsum(length)[:-1]))
    for start in range(0, n, _ROWS):
        rows = X32[start:start + _ROWS]
        holds = (rows[:, feature] <= threshold) != greater
        out[start:start + _ROWS] = np.logical_and.reduceat(holds, starts, axis=1)
    return out


class FittedRules:
    """The rules of a fitted model read from its flat arrays: counts, supports and words.

    What a loaded model offers in place of the :class:`ensemblekit.rules.extract.RuleSet`
    a fit leaves (which also holds the scikit-learn trees): ``rules``,
    ``support``, ``n_rules``, ``n_candidates``, and ``transform`` as a dense
    0/1 matrix.

    Parameters
    ----------
    model : object
        A fitted model holding ``rule_tree_``, ``rule_node_``, ``rule_length_``,
        ``condition_feature_``, ``condition_greater_``, ``condition_threshold_``,
        ``rule_support_`` and ``n_candidates_``.
    """

    def __init__(self, model):
        self._model = model
        self.support = model.rule_support_
        self.n_candidates = model.n_candidates_

    @property
    def n_rules(self) -> int:
        """Number of kept rules."""
        return int(self._model.rule_length_.size)

    @property
    def rules(self) -> list[Rule]:
        """The rules as :class:`Rule` objects, in column order."""
        m = self._model
        return unflatten_rules(m.rule_tree_, m.rule_node_, m.rule_length_, m.condition_feature_,
                               m.condition_greater_, m.condition_threshold_)

    def transform(self, X) -> np.ndarray:
        """The 0/1 rule matrix of ``X``, shape (n_samples, n_rules), dense float64."""
        m = self._model
        return rule_matrix(as_float32(X), m.rule_length_, m.condition_feature_,
                           m.condition_greater_, m.condition_threshold_).astype(np.float64)


class StoredOr:
    """A read-only attribute computed from the stored arrays unless the instance holds its own.

    A fit leaves richer objects under these names (the rule set with its
    scikit-learn trees); a model rebuilt from a file has only the arrays, and
    reads them through this view.
    """

    def __init__(self, view):
        self.view = view
        self.__doc__ = view.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if "n_features_in_" not in vars(obj):
            raise AttributeError(f"{type(obj).__name__} is not fitted: no {self.name}")
        return self.view(obj)
