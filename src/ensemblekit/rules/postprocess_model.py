"""A post-processed ISLE ensemble as a fitted model: its arrays, checks and prediction, numpy only.

:class:`RuleEnsembleModel` is the part of
:class:`ensemblekit.rules.postprocess.RuleEnsembleRegressor` that predicts and
describes a fitted model (Akdemir & Jannink, *Ensemble learning with trees and
rules*, Intelligent Data Analysis 18(5), 2014, Sect. 2). Its state is plain
arrays: the ISLE trees as node arrays (basis ``"trees"``,
:mod:`ensemblekit.rules.isle_model`) or the kept rules as condition arrays
(basis ``"rules"``, :mod:`ensemblekit.rules.extract_model`), the winsorising
bounds of the linear terms, and the weights -- or, for kernel smoothing, the
training design and targets. Prediction computes what the estimator computed
before the split, bit for bit: the rule columns are summed in column order as
scipy's sparse product did, and the dense products go through the same numpy
calls on one BLAS thread.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ensemblekit.errors import ColumnError, InputError, NotFittedError
from ensemblekit.rows import check_rows
from ensemblekit.state import Array, Scalar

from ..constraints import Constraint
from .extract_model import FittedRules, StoredOr, as_float32, rule_matrix, unflatten_rules
from .isle_model import ISLE_CONSTRAINTS, FittedTrees, check_tree_arrays, tree_outputs

__all__ = ["BASES", "METHODS", "TARGET_MAX", "VALUE_MAX", "RuleEnsembleModel", "check_target",
           "nadaraya_watson", "squared_distances"]

#: Post-processing methods of a rule ensemble.
METHODS = ("lasso", "pls", "oob", "kernel", "mean")
#: Which derived features a method works on.
BASES = ("rules", "trees")

#: Largest magnitude of a target a rule ensemble is fitted to. Its trees and weights square
#: the targets and sum the squares over the rows (as the scores of a regression do), which
#: overflows near 1e154; below this bound they cannot, for any number of rows.
TARGET_MAX = 1e100
#: Largest magnitude of a stored tree output or kernel target (a fit gives at most a small
#: multiple of TARGET_MAX): the squared distances of kernel smoothing, summed over up to
#: 2**31 trees, then stay finite.
VALUE_MAX = 1e140

# Rows per block when smoothing new rows against the training rows.
_KERNEL_ROWS = 512
# Whole numbers up to this bound are exact in float32 (the 24-bit significand).
_FLOAT32_EXACT = 1 << 24


@contextlib.contextmanager
def _one_blas_thread():
    """One BLAS thread, so a dense product has the same bits on any number of cores.

    threadpoolctl is a small pure-Python package (scikit-learn's dependency, no
    scikit-learn itself); without it the products run as numpy configures them.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - installed with scikit-learn
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def squared_distances(A, B) -> np.ndarray:
    """Squared Euclidean distances between the rows of dense A (m, p) and B (n, p), shape (m, n)."""
    a2 = np.einsum("ij,ij->i", A, A)
    b2 = np.einsum("ij,ij->i", B, B)
    return np.maximum(a2[:, None] + b2[None, :] - 2.0 * (A @ B.T), 0.0)


def check_target(y) -> None:
    """Refuse targets whose squares would overflow (see :data:`TARGET_MAX`).

    Raises
    ------
    ensemblekit.errors.ColumnError
        Naming the target and its largest value.
    """
    beyond = np.abs(y) > TARGET_MAX
    if beyond.any():
        raise ColumnError(None, f"{{column}} holds {float(y[beyond][0]):.6g}, beyond "
                                f"{TARGET_MAX:g} in magnitude: a rule ensemble squares its "
                                "targets, which would overflow; rescale the target")


def nadaraya_watson(D2, y, h) -> np.ndarray:
    """Gaussian-kernel weighted means of ``y`` for each row of ``D2`` (m, n); stable for small h.

    The nearest training rows of each row weigh 1 and the others less; a
    width whose square underflows to 0 leaves only the nearest rows, where
    ``0 / 0`` would give NaN.
    """
    spread = D2 - D2.min(axis=1, keepdims=True)
    denominator = 2.0 * h * h
    if denominator > 0:
        with np.errstate(over="ignore"):  # a narrow width: far rows weigh exp(-inf) = 0
            z = -spread / denominator
    else:
        z = np.where(spread > 0, -np.inf, 0.0)
    w = np.exp(z)
    return (w @ y) / w.sum(axis=1)


def _rules_view(model):
    """The kept rules (basis ``"rules"``; None for tree outputs), read from the arrays."""
    return FittedRules(model) if model.basis == "rules" else None


def _trees_view(model):
    """The ISLE trees read from the arrays (their number; their nodes for basis ``"trees"``)."""
    return FittedTrees(model)


_TERMS = "n_terms"


class RuleEnsembleModel:
    """A fitted ISLE rule or tree ensemble with post-processed weights: prediction and words.

    The model class of :class:`ensemblekit.rules.postprocess.RuleEnsembleRegressor`
    (see that class for the method, the parameters and the attributes): it
    holds the parameters, the declaration of the fitted state, the checks a
    stored state must pass, and prediction, computed with numpy alone.

    The design of a row is its rules (0/1, basis ``"rules"``) or its tree
    outputs (basis ``"trees"``), then, with linear terms, its inputs
    winsorised to ``linear_bounds_`` and scaled by ``linear_scale_``
    (Friedman & Popescu 2008, Eq. 25-27). The prediction is
    ``design @ coef_ + intercept_`` (lasso, PLS, out-of-bag weights, the
    equal weights of a forest), or for kernel smoothing the Nadaraya-Watson
    mean of the training targets with a Gaussian kernel of width
    ``bandwidth_`` on the distance between designs (Akdemir & Jannink 2014,
    Sect. 2.2).
    """

    _parameter_constraints = {
        "method": Constraint("choice", "post-processing of the ISLE trees or rules",
                             choices=METHODS),
        "basis": Constraint("choice", "derived features: the rules, or the tree outputs",
                            choices=BASES),
        **{name: ISLE_CONSTRAINTS[name] for name in (
            "n_estimators", "max_depth", "max_samples", "learning_rate", "max_features",
            "tree_size", "min_samples_leaf", "bootstrap")},
        "linear_terms": Constraint("bool", "also use the attributes as linear terms, winsorised "
                                   "and scaled as RuleFit"),
        "top_fraction": Constraint("float", "fraction of the trees kept", low=0, high=1,
                                   closed="right"),
        "max_components": Constraint("int", "most PLS components tried", low=1, high=10000),
        "cv": Constraint("int", "folds of the inner cross-validation that tunes the weights",
                         low=2, high=1000),
        "random_state": Constraint("any", "seed of the subsamples, the trees and the inner folds"),
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "n_trees_": Scalar("int", low=1),
        # basis "trees": the ISLE trees' nodes, tree after tree (children within the tree)
        "tree_node_count_": Array("int64", ("n_trees_",), low=1, optional=True),
        "tree_children_left_": Array("int64", ("n_nodes",), low=-1, optional=True),
        "tree_children_right_": Array("int64", ("n_nodes",), low=-1, optional=True),
        "tree_feature_": Array("int64", ("n_nodes",), low=-2, below="n_features_in_",
                               optional=True),
        "tree_threshold_": Array("float64", ("n_nodes",), optional=True),
        "tree_value_": Array("float64", ("n_nodes",), low=-VALUE_MAX, high=VALUE_MAX,
                             optional=True),
        # basis "rules": the kept rules, their conditions rule after rule
        "rule_tree_": Array("int64", ("n_rules",), low=0, below="n_trees_", optional=True),
        "rule_node_": Array("int64", ("n_rules",), low=1, optional=True),
        "rule_length_": Array("int64", ("n_rules",), low=1, optional=True),
        "condition_feature_": Array("int64", ("n_conditions",), low=0, below="n_features_in_",
                                    optional=True),
        "condition_greater_": Array("bool", ("n_conditions",), optional=True),
        "condition_threshold_": Array("float64", ("n_conditions",), optional=True),
        "rule_support_": Array("float64", ("n_rules",), low=0, high=1, optional=True),
        "n_candidates_": Scalar("int", low=0, optional=True),
        # what every basis has
        "binary_features_": Array("int64", ("*",), low=0, below="n_features_in_"),
        "linear_bounds_": Array("float64", (2, "n_features_in_"), optional=True),
        "linear_scale_": Array("float64", ("n_features_in_",), low=0, optional=True),
        "coef_": Array("float64", (_TERMS,), optional=True),
        "intercept_": Scalar("float"),
        "bandwidth_": Scalar("float", low=0, inf=True, optional=True),
        "n_components_": Scalar("int", low=0, optional=True),
        "alpha_": Scalar("float", low=0, optional=True),
        "term_importances_": Array("float64", (_TERMS,), low=0, optional=True),
        "feature_importances_": Array("float64", ("n_features_in_",), low=0),
        # kernel smoothing: the training targets and designs (tree outputs, or packed rules)
        "train_target_": Array("float64", ("n_train",), low=-TARGET_MAX, high=TARGET_MAX,
                               optional=True),
        "train_basis_": Array("float64", ("n_train", _TERMS), low=-VALUE_MAX, high=VALUE_MAX,
                              optional=True),
        "train_rules_": Array("uint8", ("n_train", "*"), optional=True),
    }

    rules_ = StoredOr(_rules_view)
    trees_ = StoredOr(_trees_view)

    def __init__(self, method="pls", basis="rules", n_estimators=200, max_depth=3,
                 max_samples=None, learning_rate=0.01, max_features=1.0, tree_size="fixed",
                 min_samples_leaf=1, bootstrap=False, linear_terms=False, top_fraction=1.0,
                 max_components=30, cv=10, random_state=None):
        self.method = method
        self.basis = basis
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.learning_rate = learning_rate
        self.max_features = max_features
        self.tree_size = tree_size
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.linear_terms = linear_terms
        self.top_fraction = top_fraction
        self.max_components = max_components
        self.cv = cv
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_state(self, ctx) -> None:
        """The rules between the stored arrays that their declarations cannot state.

        The basis decides which arrays are stored (tree nodes, or rules with
        their supports); the trees are well formed; the rules' conditions add
        up; one weight per design column (basis, then linear terms) or, for
        kernel smoothing, one training design per target; a tree average has
        the equal weights ``1/M`` and intercept 0.
        """
        if self.method not in METHODS or self.basis not in BASES:
            ctx.fail(f"method={self.method!r}, basis={self.basis!r} is not a rule ensemble")
        trees = ("tree_node_count_", "tree_children_left_", "tree_children_right_",
                 "tree_feature_", "tree_threshold_", "tree_value_")
        rules = ("rule_tree_", "rule_node_", "rule_length_", "condition_feature_",
                 "condition_greater_", "condition_threshold_", "rule_support_", "n_candidates_")
        stored, absent = (trees, rules) if self.basis == "trees" else (rules, trees)
        for name in stored:
            if getattr(self, name) is None:
                ctx.fail(f"{name} is missing from a model of basis {self.basis!r}")
        for name in absent:
            if getattr(self, name) is not None:
                ctx.fail(f"{name} is stored for a model of basis {self.basis!r}")
        d = self.n_features_in_
        if self.basis == "trees":
            check_tree_arrays(ctx, self.tree_node_count_, self.tree_children_left_,
                              self.tree_children_right_, self.tree_feature_)
            n_basis = self.n_trees_
        else:
            if int(self.rule_length_.sum()) != self.condition_feature_.size:
                ctx.fail(f"rule_length_ adds up to {int(self.rule_length_.sum())} conditions, "
                         f"condition_feature_ holds {self.condition_feature_.size}")
            n_basis = self.rule_length_.size
            if self.n_candidates_ < n_basis:
                ctx.fail(f"n_candidates_ = {self.n_candidates_} is fewer than the "
                         f"{n_basis} rules kept")
        binary = self.binary_features_
        if np.any(np.diff(binary) <= 0):
            ctx.fail("binary_features_ is not a set of columns in increasing order")
        if (self.linear_bounds_ is None) != (self.linear_scale_ is None):
            ctx.fail("linear_bounds_ and linear_scale_ are not both stored or both absent")
        n_terms = n_basis + (d if self.linear_scale_ is not None else 0)
        if self.method == "kernel":
            self._check_kernel(ctx, n_basis, n_terms)
            return
        for name in ("train_target_", "train_basis_", "train_rules_"):
            if getattr(self, name) is not None:
                ctx.fail(f"{name} is stored for method {self.method!r}, which does not smooth")
        for name in ("coef_", "term_importances_"):
            value = getattr(self, name)
            if value is None or value.size != n_terms:
                ctx.fail(f"{name} does not hold one value for each of the {n_terms} terms")
        if self.method == "mean" and (
                not np.array_equal(self.coef_, np.full(n_terms, 1.0 / n_terms))
                or self.intercept_ != 0):
            ctx.fail("coef_ and intercept_ are not the equal weights 1/M and 0 of a tree average")
        if self.method == "oob" and self.bandwidth_ is None:
            ctx.fail("bandwidth_ is missing from an out-of-bag weighting")

    def _check_kernel(self, ctx, n_basis: int, n_terms: int) -> None:
        for name in ("coef_", "term_importances_"):
            if getattr(self, name) is not None:
                ctx.fail(f"{name} is stored for kernel smoothing, which has no weights")
        if self.bandwidth_ is None or not 0 < self.bandwidth_ < np.inf:
            ctx.fail("bandwidth_ is not a positive width")
        if self.linear_scale_ is not None:
            ctx.fail("linear terms are stored for kernel smoothing, which does not use them")
        if self.train_target_ is None or self.train_target_.size < 1:
            ctx.fail("train_target_ is missing")
        design, other = (("train_basis_", "train_rules_") if self.basis == "trees"
                         else ("train_rules_", "train_basis_"))
        if getattr(self, design) is None or getattr(self, other) is not None:
            ctx.fail(f"a kernel model of basis {self.basis!r} stores {design}, not {other}")
        if self.basis == "rules" and self.train_rules_.shape[1] != (n_basis + 7) // 8:
            ctx.fail(f"train_rules_ has {self.train_rules_.shape[1]} bytes per row, "
                     f"{(n_basis + 7) // 8} pack the {n_basis} rules")
        if self.basis == "trees" and self.train_basis_.shape[1] != n_terms:
            ctx.fail(f"train_basis_ has {self.train_basis_.shape[1]} columns, expected {n_terms}")

    # -------------------------------------------------------------- predict
    def predict(self, X):
        """Predict the target of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite numbers.

        Returns
        -------
        ndarray of shape (n_samples,)

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InputError
            If ``X`` has the wrong number of columns, or values that are not
            finite or overflow float32 (the trees read float32); or if a
            prediction is not finite, which only stored weights no fit gives
            (a damaged model) can cause.
        """
        X = check_rows(self, X, allow_nan=False)
        basis, linear = self._design(X)
        # overflow is reported below, as one line, not as numpy's warning
        with _one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
            if self.method == "kernel":
                out = self._smooth(basis)
            elif self.basis == "rules":
                out = self._rule_sum(basis, linear)
            else:
                Z = basis if linear is None else np.hstack([basis, linear])
                out = np.asarray(Z @ self.coef_).ravel() + self.intercept_
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            raise InputError(f"the model's prediction for row {int(bad[0]) + 1} is {out[bad[0]]}: "
                             "its stored weights overflow, which no fit gives (a damaged model?)")
        return out

    def _design(self, X):
        """The basis columns of ``X`` (rules as bool, or tree outputs), and the linear terms."""
        X32 = as_float32(X)
        if self.basis == "rules":
            basis = rule_matrix(X32, self.rule_length_, self.condition_feature_,
                                self.condition_greater_, self.condition_threshold_)
        else:
            basis = tree_outputs(X32, self.tree_node_count_, self.tree_children_left_,
                                 self.tree_children_right_, self.tree_feature_,
                                 self.tree_threshold_, self.tree_value_)
        linear = None
        if self.linear_scale_ is not None:
            linear = np.clip(X, self.linear_bounds_[0], self.linear_bounds_[1]) * self.linear_scale_
        return basis, linear

    def _rule_sum(self, fired, linear) -> np.ndarray:
        """``design @ coef_ + intercept_`` summed column after column, as a sparse product is.

        Each row's sum starts at 0 and adds the weights of its rules in column
        order, then each linear term's product (adding 0 for a rule that does
        not fire changes nothing), the order of scipy's compressed-column
        product that computed it before.
        """
        y = np.zeros(fired.shape[0])
        columns = np.ascontiguousarray(fired.T)
        for k, w in enumerate(self.coef_[:columns.shape[0]].tolist()):
            y += np.where(columns[k], w, 0.0)
        if linear is not None:
            for j, w in enumerate(self.coef_[columns.shape[0]:].tolist()):
                y += linear[:, j] * w
        return y + self.intercept_

    def _smooth(self, basis) -> np.ndarray:
        """Nadaraya-Watson means of the training targets, a block of rows at a time."""
        out = np.empty(basis.shape[0])
        if self.basis == "trees":
            train = self.train_basis_
            for start in range(0, basis.shape[0], _KERNEL_ROWS):
                D2 = squared_distances(basis[start:start + _KERNEL_ROWS], train)
                out[start:start + _KERNEL_ROWS] = nadaraya_watson(D2, self.train_target_,
                                                                  self.bandwidth_)
            return out
        # 0/1 rule vectors: squared norms and inner products are whole numbers, exact in
        # any order (float32 holds them exactly below 2**24 rules)
        n_rules = basis.shape[1]
        dtype = np.float32 if n_rules < _FLOAT32_EXACT else np.float64
        train = np.unpackbits(self.train_rules_, axis=1, count=n_rules).astype(dtype)
        b2 = train.sum(axis=1, dtype=np.float64)
        for start in range(0, basis.shape[0], _KERNEL_ROWS):
            block = basis[start:start + _KERNEL_ROWS].astype(dtype)
            a2 = block.sum(axis=1, dtype=np.float64)
            cross = (block @ train.T).astype(np.float64)
            D2 = np.maximum(a2[:, None] + b2[None, :] - 2.0 * cross, 0.0)
            out[start:start + _KERNEL_ROWS] = nadaraya_watson(D2, self.train_target_,
                                                              self.bandwidth_)
        return out

    # -------------------------------------------------------------- reading
    def _fitted(self) -> None:
        if "n_features_in_" not in vars(self):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 "'fit' with appropriate arguments before using this estimator.")

    def _n_basis(self) -> int:
        return self.rule_length_.size if self.basis == "rules" else self.n_trees_

    def model_size(self) -> int:
        """The ensemble's size for ``-m model-size``: the rules (or, with ``basis="trees"``,
        the trees) it uses: those with a non-zero weight, every one for kernel smoothing,
        which weights none. Linear terms are not counted."""
        self._fitted()
        n_basis = self._n_basis()
        if self.coef_ is None:
            return int(n_basis)
        return int(np.count_nonzero(self.coef_[:n_basis]))

    def term_descriptions(self, feature_names=None, terms=None) -> list[str]:
        """Terms in words: a rule's conditions, ``tree j``, or a linear variable's name.

        Parameters
        ----------
        feature_names : sequence of str, optional
            Names of the input columns (default ``x0, x1, ...``).
        terms : sequence of int, optional
            Which terms (columns of the design), in this order; default all.

        Returns
        -------
        list of str
        """
        self._fitted()
        names = feature_names if feature_names is not None else \
            [f"x{j}" for j in range(self.n_features_in_)]
        n_basis = self._n_basis()
        n_terms = n_basis + (len(names) if self.linear_scale_ is not None else 0)
        rules = (unflatten_rules(self.rule_tree_, self.rule_node_, self.rule_length_,
                                 self.condition_feature_, self.condition_greater_,
                                 self.condition_threshold_) if self.basis == "rules" else [])

        def describe(k):
            if k >= n_basis:
                return f"linear: {names[k - n_basis]}"
            if self.basis == "rules":
                return rules[k].describe(names, self.binary_features_)
            return f"tree {k + 1}"

        return [describe(int(k)) for k in (range(n_terms) if terms is None else terms)]

    def ranked_terms(self, feature_names=None, top=None) -> list[dict]:
        """Terms with a non-zero weight, the most important first (Sect. 2.1 importances).

        Parameters
        ----------
        feature_names : sequence of str, optional
            Names of the input columns, for the rules in words.
        top : int, optional
            Return at most this many.

        Returns
        -------
        list of dict
            Keys ``term`` (words), ``coefficient`` (w_k), ``support`` (fraction of
            training rows a rule fires for; None for trees and linear terms) and
            ``importance``; empty for ``kernel``, which has no weights.
        """
        self._fitted()
        if self.coef_ is None:
            return []
        n_rules = self.rule_length_.size if self.basis == "rules" else 0
        order = np.lexsort((np.arange(self.coef_.size), -self.term_importances_))
        chosen = [k for k in order if self.coef_[k] != 0][:top]
        words = self.term_descriptions(feature_names, chosen)
        out = []
        for k, word in zip(chosen, words):
            out.append({"term": word, "coefficient": float(self.coef_[k]),
                        "support": float(self.rule_support_[k]) if k < n_rules else None,
                        "importance": float(self.term_importances_[k])})
        return out
