"""``c45``'s model class: a fitted J48 tree's node arrays, its prediction and its printed form.

:class:`C45Model` is what :class:`ensemblekit.classifiers.c45.C45Tree` leaves after
``fit`` and what a model file rebuilds: the flat node arrays (one entry per node, the
children of a node stored contiguously after it), declared in ``_fitted_state`` (see
:mod:`ensemblekit.state`), the rules that make them one tree (:meth:`C45Model._check_state`),
the walk that gives class probabilities as Weka 3.9.7's J48 ``distributionForInstance``
(an instance with a missing value goes down every branch, weighted by the branch's
training weight), and the tree printed as J48 prints it. It imports numpy only: the
estimator grows the tree with numba and scikit-learn, a loaded model needs neither.

The walk is plain numpy over all rows at once, and adds the same numbers in the same
order as the compiled walk of :mod:`ensemblekit.classifiers._c45_kernels` (class weights
summed class by class, a branch weight ``w * (branch / total)``, and at a split on a
missing value the sums its branches return added from 0, branch by branch, as J48's
recursive ``ClassifierTree.getProbs`` adds them), so the probabilities are equal to the
last bit, and equal to J48's for a tree whose node weights are J48's (grown on whole
instance weights; fractional weights from missing training values are summed in another
order, which leaves differences of about 1e-15). Where those kernels are loaded already
(the tree was grown in this process, as in cross-validation), the compiled walk is taken:
it costs microseconds per call, where the numpy walk's array set-up costs a fraction of a
millisecond.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ensemblekit.class_domain import N_CLASSES
from ensemblekit.constraints import Constraint
from ensemblekit.errors import InputError, NotFittedError
from ensemblekit.rows import check_rows
from ensemblekit.state import Array, Scalar
from ensemblekit.trust import COUNT_MAX, CheckContext

from ._c45_nodes import _SMALL, _depth, _first_max
from ._java_numbers import java_double as _java_double
from ._java_numbers import weka_number
from .coded import check_codes

__all__ = ["C45Model", "weka_number"]

#: The compiled kernels' module, used for prediction only once something else loaded it.
_KERNELS = "ensemblekit.classifiers._c45_kernels"


def _fail(ctx: CheckContext, entry: str, what: str) -> None:
    """Fail naming the entry (``"estimators_.3"``: a member) after the model's path."""
    ctx.path.extend(entry.split("."))
    ctx.fail(what)


def _sum_in_order(rows) -> np.ndarray:
    """Each row of a 2-d array summed left to right from 0.0, as a compiled loop adds.

    ``ndarray.sum`` adds in pairs and may differ in the last bit; a cumulative sum adds
    one term after another.
    """
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0])
    start = np.zeros((rows.shape[0], 1))
    return np.cumsum(np.hstack([start, rows]), axis=1)[:, -1]


def _split_totals(child_start, n_children, bag_value) -> np.ndarray:
    """Each node's class weights over all its branches, branch by branch, class by class
    (0 at a leaf)."""
    width = int(n_children.max(initial=0))
    if width == 0:
        return np.zeros(child_start.size)
    branch = np.arange(width)
    inside = branch[None, :] < n_children[:, None]
    rows = np.where(inside, child_start[:, None] + branch[None, :], 0)
    terms = np.where(inside[:, :, None], bag_value[rows], 0.0)
    return _sum_in_order(terms.reshape(child_start.size, -1))


def _preorder(child_start, n_children) -> np.ndarray:
    """Rank of each node in a depth-first walk that takes branches in order."""
    n = child_start.size
    splits = np.flatnonzero(n_children > 0).tolist()
    size = np.ones(n, dtype=np.int64)
    for i in reversed(splits):  # children come after their parent
        s = int(child_start[i])
        size[i] = 1 + int(size[s:s + int(n_children[i])].sum())
    rank = np.zeros(n, dtype=np.int64)
    for i in splits:
        s, k = int(child_start[i]), int(n_children[i])
        rank[s] = rank[i] + 1
        if k > 1:
            rank[s + 1:s + k] = rank[i] + 1 + np.cumsum(size[s:s + k - 1])
    return rank


def tree_proba(X, feature, threshold, nominal, child_start, n_children, value, bag_value,
               is_empty, n_classes):
    """J48's ``distributionForInstance`` (no Laplace correction) of every row of ``X``.

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
        Codes of the nominal columns in range; NaN = missing.
    feature, threshold, child_start, n_children, value, bag_value, is_empty : ndarray
        The node arrays of :class:`C45Model`, already checked to form one tree.
    nominal : ndarray of bool of shape (n_features,)
        Which columns are nominal.
    n_classes : int

    Returns
    -------
    ndarray of float64 of shape (n_samples, n_classes)
        A row reaching a leaf gets the leaf's class frequencies. A missing value at a
        split sends the row down every branch that received training weight, weighted by
        the branch's share of the node's weight; a known value that leads into a branch
        without training instances gives that branch's class distribution as its parent's
        split counts it (the node's when that is empty). As in J48, a row split by a
        missing value loses the share of branches without training weight, so it may sum
        to less than 1. The sums are Weka's (``ClassifierTree.getProbs``, recursive): a
        split on a missing value gives ``0 + p_0 + p_1 + ...`` over its branches, each
        ``p_j`` that branch's own sum, the order the compiled walk adds in too.
    """
    n = X.shape[0]
    out = np.zeros((n, n_classes))
    node_total = _sum_in_order(value)
    bag_total = _sum_in_order(bag_value)
    done_rows, done_keys, done_parts, done_frames = [], [], [], []
    # a "frame": one row's visit of a split on a missing value, whose branches' sums it adds
    frame_parent, frame_key, frame_depth, frame_row, n_frames = [], [], [], [], 0
    split_totals = None

    def add(rows, nodes, weights, dist, total, frames):
        done_rows.append(rows)
        done_keys.append(nodes)
        done_frames.append(frames)
        done_parts.append(weights[:, None] * (dist / total[:, None]))

    rows = np.arange(n)
    nodes = np.zeros(n, dtype=np.int64)
    weights = np.ones(n)
    frames = np.full(n, -1, dtype=np.int64)  # -1: no open frame (the row's result itself)
    while rows.size:
        f = feature[nodes]
        leaf = f < 0
        if leaf.any():
            at, r, w, fr = nodes[leaf], rows[leaf], weights[leaf], frames[leaf]
            ok = node_total[at] > _SMALL
            at = at[ok]
            add(r[ok], at, w[ok], value[at], node_total[at], fr[ok])
            split = ~leaf
            rows, nodes, weights, f, frames = (rows[split], nodes[split], weights[split],
                                               f[split], frames[split])
        v = X[rows, f]
        miss = np.isnan(v)
        next_rows, next_nodes, next_weights, next_frames = [], [], [], []
        if miss.any():
            r, at, w = rows[miss], nodes[miss], weights[miss]
            opened = n_frames + np.arange(r.size)
            parent = frames[miss]
            n_frames += r.size
            frame_parent.append(parent)
            frame_key.append(at)
            frame_row.append(r)
            depth = np.ones(r.size, dtype=np.int64)  # 1 for a frame opened by no frame
            inside = parent >= 0
            if inside.any():
                depth[inside] = np.concatenate(frame_depth)[parent[inside]] + 1
            frame_depth.append(depth)
            start, count = child_start[at], n_children[at]
            if split_totals is None:
                split_totals = _split_totals(child_start, n_children, bag_value)
            split_total = split_totals[at]
            for j in range(int(count.max())):
                has = count > j
                child = start[has] + j
                keep = ~is_empty[child]
                next_rows.append(r[has][keep])
                next_nodes.append(child[keep])
                next_weights.append(w[has][keep] * (bag_total[child[keep]] / split_total[has][keep]))
                next_frames.append(opened[has][keep])
            known = ~miss
            rows, nodes, weights, f, v, frames = (rows[known], nodes[known], weights[known],
                                                  f[known], v[known], frames[known])
        branch = np.zeros(rows.size, dtype=np.int64)
        is_nominal = nominal[f]
        branch[is_nominal] = v[is_nominal].astype(np.int64)
        numeric = ~is_nominal
        branch[numeric] = np.where(v[numeric] <= threshold[nodes[numeric]], 0, 1)
        child = child_start[nodes] + branch
        empty = is_empty[child]
        if empty.any():
            r, at, w, ch, fr = rows[empty], nodes[empty], weights[empty], child[empty], frames[empty]
            own = bag_total[ch] > _SMALL
            add(r[own], at[own], w[own], bag_value[ch[own]], bag_total[ch[own]], fr[own])
            up = ~own & (node_total[at] > _SMALL)
            add(r[up], at[up], w[up], value[at[up]], node_total[at[up]], fr[up])
            full = ~empty
            rows, child, weights, frames = rows[full], child[full], weights[full], frames[full]
        next_rows.append(rows)
        next_nodes.append(child)
        next_weights.append(weights)
        next_frames.append(frames)
        rows = np.concatenate(next_rows)
        nodes = np.concatenate(next_nodes)
        weights = np.concatenate(next_weights)
        frames = np.concatenate(next_frames)
    if not done_rows:
        return out
    rows = np.concatenate(done_rows)
    parts = np.concatenate(done_parts)
    frames = np.concatenate(done_frames)
    if not n_frames:  # one part per row
        out[rows] = parts
        return out
    rank = _preorder(child_start, n_children)
    keys = rank[np.concatenate(done_keys)]
    f_parent = np.concatenate(frame_parent)
    f_key = rank[np.concatenate(frame_key)]
    f_depth = np.concatenate(frame_depth)
    f_sum = np.zeros((n_frames, n_classes))
    part_depth = np.where(frames < 0, 0, f_depth[np.maximum(frames, 0)])
    # deepest frames first: each adds its parts and the sums of the frames it opened, in
    # the order of a depth-first walk, from 0; then it is itself a part of its parent
    for d in range(int(f_depth.max()), -1, -1):
        mine = np.flatnonzero(part_depth == d)
        inner = np.flatnonzero(f_depth == d + 1)
        into = np.concatenate([frames[mine], f_parent[inner]])
        key = np.concatenate([keys[mine], f_key[inner]])
        vec = np.concatenate([parts[mine], f_sum[inner]])
        if d == 0:  # the rows' results: one term each
            out[np.concatenate([rows[mine], np.concatenate(frame_row)[inner]])] = vec
            break
        _add_in_order(f_sum, into, key, vec)
    return out


def _add_in_order(acc, into, key, vec):
    """``acc[into[i]] += vec[i]``, for each target one term after another by increasing key."""
    if not into.size:
        return
    order = np.lexsort((key, into))
    into, vec = into[order], vec[order]
    first = np.flatnonzero(np.r_[True, into[1:] != into[:-1]])
    rank = np.arange(into.size) - np.repeat(first, np.diff(np.r_[first, into.size]))
    for k in range(int(rank.max()) + 1):
        sel = rank == k
        acc[into[sel]] += vec[sel]


# ---- Weka's number formats (the digits: :mod:`._java_numbers`)
def _round2(x: float) -> float:
    """Weka's ``Utils.roundDouble(x, 2)`` (Java's ``Math.round``: half up)."""
    return math.floor(x * 100.0 + 0.5) / 100.0


class C45Model:
    """A fitted C4.5 tree (Weka's J48): its node arrays, prediction and printed form.

    The parameters are those of :class:`ensemblekit.classifiers.c45.C45Tree`, which
    fits it (see there); this class only stores them. A model file rebuilds this class
    from the declared state below.

    Parameters
    ----------
    confidence_factor, min_samples_leaf, unpruned, subtree_raising, collapse_tree, \
nominal_features, n_categories, n_classes
        As :class:`ensemblekit.classifiers.c45.C45Tree`.

    Attributes
    ----------
    classes_ : ndarray of int64 of shape (n_classes,)
        Class codes ``0 .. n_classes - 1``.
    n_features_in_ : int
    nominal_features_ : ndarray of int64
        Indices of the nominal columns (sorted).
    n_categories_ : ndarray of int64
        Declared values of each of them.
    feature_ : ndarray of int64 of shape (n_nodes,)
        Attribute tested at each node, -1 at a leaf. Node 0 is the root.
    threshold_ : ndarray of float64 of shape (n_nodes,)
        Threshold of a numeric test (``x <= t`` is the first branch), NaN otherwise.
    child_start_, n_children_ : ndarray of int64 of shape (n_nodes,)
        The children of node ``i`` are nodes ``child_start_[i] .. + n_children_[i] - 1``
        (branch order: the nominal values, or ``<=`` then ``>``); -1 and 0 at a leaf.
    value_ : ndarray of float64 of shape (n_nodes, n_classes)
        Training weight of each class at the node (fractional with missing values).
    bag_value_ : ndarray of float64 of shape (n_nodes, n_classes)
        Class weights of the node's branch as its parent's split counts them (what J48
        prints at a leaf and uses for the missing-value branch weights).
    is_empty_ : ndarray of bool of shape (n_nodes,)
        Leaves that received no training weight.
    """

    _parameter_constraints = {
        "confidence_factor": Constraint("float", "confidence of the pruning error estimate (J48 -C)",
                                        low=0, high=0.5, closed="right"),
        "min_samples_leaf": Constraint("int", "minimum instances in two branches (J48 -M)", low=1),
        "unpruned": Constraint("bool", "do not prune (J48 -U)"),
        "subtree_raising": Constraint("bool", "raise the largest branch when pruning "
                                      "(false = J48 -S)"),
        "collapse_tree": Constraint("bool", "collapse subtrees that do not reduce training "
                                    "error (false = J48 -O)"),
        "nominal_features": Constraint("any", "indices of the nominal columns (codes)",
                                       none_ok=True),
        "n_categories": Constraint("any", "declared values of each nominal column",
                                   none_ok=True),
        "n_classes": N_CLASSES,
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",), low=0, below="n_classes"),
        "nominal_features_": Array("int64", ("n_nominal",), low=0, below="n_features_in_"),
        "n_categories_": Array("int64", ("n_nominal",), low=1, high=COUNT_MAX),
        "feature_": Array("int64", ("n_nodes",), low=-1, below="n_features_in_"),
        "threshold_": Array("float64", ("n_nodes",), nan=True),
        "child_start_": Array("int64", ("n_nodes",), low=-1, below="n_nodes"),
        "n_children_": Array("int64", ("n_nodes",), low=0, below="n_nodes"),
        "value_": Array("float64", ("n_nodes", "n_classes"), low=0),
        "bag_value_": Array("float64", ("n_nodes", "n_classes"), low=0),
        "is_empty_": Array("bool", ("n_nodes",)),
    }

    def __init__(self, confidence_factor=0.25, min_samples_leaf=2, unpruned=False,
                 subtree_raising=True, collapse_tree=True, nominal_features=None,
                 n_categories=None, n_classes=None):
        self.confidence_factor = confidence_factor
        self.min_samples_leaf = min_samples_leaf
        self.unpruned = unpruned
        self.subtree_raising = subtree_raising
        self.collapse_tree = collapse_tree
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_classes = n_classes

    def _check_state(self, ctx: CheckContext) -> None:
        """The node arrays form one tree over the model's columns and classes.

        The walk indexes these arrays by the values they hold, so: node 0 is the root;
        the children of node ``i`` are ``child_start_[i] .. + n_children_[i] - 1``, all
        after ``i`` and inside the arrays, and every node but the root has exactly one
        parent (no cycle, no sharing); a leaf has ``feature_ == -1``, no children and no
        threshold; a numeric test has two children and a finite threshold, a nominal test
        one child per declared value of its column. ``classes_`` are the codes
        ``0 .. n_classes - 1`` and ``nominal_features_`` distinct, ascending.
        """
        classes = self.classes_
        if not classes.size or not np.array_equal(classes, np.arange(classes.size)):
            _fail(ctx, "classes_", "not the class codes 0 .. n_classes - 1")
        nominal = self.nominal_features_
        if nominal.size > 1 and np.any(nominal[1:] <= nominal[:-1]):
            _fail(ctx, "nominal_features_", "not distinct indices in ascending order")
        feature, threshold = self.feature_, self.threshold_
        start, count = self.child_start_, self.n_children_
        n, d = feature.size, self.n_features_in_
        if n == 0:
            _fail(ctx, "feature_", "empty (a tree has at least its root)")
        leaf = feature < 0
        if np.any(leaf != (count == 0)) or np.any(leaf != (start < 0)):
            _fail(ctx, "feature_", "a node is a leaf by one of feature_, n_children_, "
                  "child_start_ and a split by another")
        if np.any(leaf & ~np.isnan(threshold)):
            _fail(ctx, "threshold_", "a leaf holds a threshold")
        width = np.full(d, 2, dtype=np.int64)
        width[nominal] = self.n_categories_
        is_nominal = np.zeros(d, dtype=bool)
        is_nominal[nominal] = True
        split = np.flatnonzero(~leaf)
        f = feature[split]
        if np.any(count[split] != width[f]):
            _fail(ctx, "n_children_", "a split does not have one child per branch of its test")
        if np.any(~np.isfinite(threshold[split[~is_nominal[f]]])) or np.any(
                ~np.isnan(threshold[split[is_nominal[f]]])):
            _fail(ctx, "threshold_", "a numeric test has no finite threshold, or a nominal "
                  "test has one")
        if np.any(start[split] <= split) or np.any(start[split] + count[split] > n):
            _fail(ctx, "child_start_", "a node's children are not after it inside the node "
                  "arrays")
        parents = np.zeros(n + 1, dtype=np.int64)
        np.add.at(parents, start[split], 1)
        np.add.at(parents, start[split] + count[split], -1)
        parents = np.cumsum(parents)[:n]
        if parents[0] != 0 or np.any(parents[1:] != 1):
            _fail(ctx, "child_start_", "the nodes do not form one tree (a node with no parent "
                  "or with several)")

    # ---- fitting (on arrays already checked; the estimator C45Tree adds scikit-learn's checks)
    def fit_coded(self, X, y, sample_weight=None, *, instance_weights=None):
        """Grow and prune the tree on arrays in ensemblekit's coded layout.

        What ``ensemblekit fit c45`` calls on the rows its readers produce, so that
        fitting imports numpy and numba but not scikit-learn (whose import alone
        takes longer than J48's whole run). The tree is the one
        :meth:`ensemblekit.classifiers.c45.C45Tree.fit` grows from the same arrays;
        that method adds scikit-learn's checks of array-likes and data frames.

        Parameters
        ----------
        X : ndarray of float64 of shape (n_samples, n_features)
            Numeric columns as numbers, nominal columns as codes; NaN marks a missing
            value, infinity is refused.
        y : ndarray of shape (n_samples,)
            Class labels (codes ``0 .. n_classes - 1`` when ``n_classes`` is given).
        sample_weight : array-like of shape (n_samples,) or None
            Instance weights >= 0 as copies, as in ``C45Tree.fit``.
        instance_weights : array-like of shape (n_samples,) or None
            Weka's instance weights, as in ``C45Tree.fit`` (not with ``sample_weight``).

        Returns
        -------
        self

        Raises
        ------
        ensemblekit.errors.InputError
            If a parameter is out of range, ``X`` is not a non-empty 2-D float64 array
            without infinity, ``y`` does not have one label per row, or a weight or a
            nominal code is invalid.
        """
        from ensemblekit.constraints import validate_params

        from .coded import check_coded_training

        validate_params(self)
        return self._fit_checked(X, check_coded_training(X, y), sample_weight, instance_weights)

    def _fit_checked(self, X, y, sample_weight, instance_weights=None, declared=None):
        """Fit on a float64 matrix and labels whose shapes are checked: the common tail of
        :meth:`fit_coded` and ``C45Tree.fit`` (class codes, weights, nominal codes).
        ``declared`` is ``(nominal_features, n_categories)`` when a data frame's dtypes
        declared them, else None (the parameters say)."""
        from ensemblekit.class_domain import declared_classes

        from .coded import coded_layout

        classes, codes = declared_classes(y, self.n_classes)
        n = X.shape[0]
        rows = None  # J48's count of known values: copies (None) or one per row
        if instance_weights is not None:
            if sample_weight is not None:
                raise InputError("give sample_weight (copies) or instance_weights (Weka's), "
                                 "not both")
            sample_weight, rows = instance_weights, np.ones(n)
        if sample_weight is None:
            w = np.ones(n)
        else:
            w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if w.shape[0] != n:
                raise InputError(f"sample_weight has {w.shape[0]} entries for {n} rows")
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise InputError("sample_weight must be finite and >= 0")
            if n and not np.any(w > 0):
                raise InputError("sample_weight is zero for every row: nothing to learn from")
        nominal, cats, _ = coded_layout(X, *(declared or (self.nominal_features, self.n_categories)))
        return self._grow(X, codes, w, nominal, cats, classes, rows)

    def _grow(self, X, codes, w, nominal, cats, classes, rows=None):
        """Grow (and prune, as the parameters say) on arrays already checked; set the fitted state.

        The one growing path of :meth:`fit_coded`, ``C45Tree.fit`` and the bagging
        ensembles (:func:`ensemblekit.classifiers.bagging.fit_weighted_c45`), which check
        their arrays once for all their trees. ``w`` are instance weights >= 0 (rows of
        weight 0 take no part); ``nominal`` and ``cats`` the sorted nominal columns and
        their numbers of values; ``classes`` the ``classes_`` to set (``codes`` index them);
        ``rows`` how many instances each row is in J48's count of known values (None: a
        whole-number weight is that many copies).
        """
        from ._c45_growth import grow_c45

        keep = w > 0
        if not keep.all():
            X, codes, w = X[keep], codes[keep], w[keep]
            rows = None if rows is None else rows[keep]
        d = X.shape[1]
        mask = np.zeros(d, dtype=bool)
        mask[nominal] = True
        n_cats = np.zeros(d, dtype=np.int64)
        n_cats[nominal] = cats
        state = grow_c45(X, codes, w, mask, n_cats, classes.size,
                         min_samples_leaf=self.min_samples_leaf,
                         confidence_factor=self.confidence_factor, unpruned=self.unpruned,
                         subtree_raising=self.subtree_raising, collapse_tree=self.collapse_tree,
                         counts=rows, split_policy=self._split_policy(X.shape[0]))
        self.classes_ = classes
        self.n_features_in_ = d
        self.nominal_features_ = np.asarray(nominal, dtype=np.int64)
        self.n_categories_ = np.asarray(cats, dtype=np.int64)
        self.feature_ = state["feature"]
        self.threshold_ = state["threshold"]
        self.child_start_ = state["child_start"]
        self.n_children_ = state["n_children"]
        self.value_ = state["value"]
        self.bag_value_ = state["bag_value"]
        self.is_empty_ = state["is_empty"]
        return self

    def _split_policy(self, n_rows: int):
        """How each node of the tree grown on ``n_rows`` rows chooses its split: None, J48's
        (a subclass may return another policy, see ``grow_unpruned`` in
        :mod:`ensemblekit.classifiers._c45_kernels`)."""
        return None

    # ---- prediction
    def _fitted(self) -> None:
        if getattr(self, "feature_", None) is None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. "
                                 "Call 'fit' with appropriate arguments before using this "
                                 "estimator.")

    def _nominal_mask(self) -> np.ndarray:
        mask = np.zeros(self.n_features_in_, dtype=np.bool_)
        mask[self.nominal_features_] = True
        return mask

    def predict_proba(self, X):
        """Class probabilities as J48's ``distributionForInstance`` (no Laplace correction).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Numeric columns as numbers, nominal columns as codes; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The class frequencies of the leaf reached; with a missing value at a split, the
            average over the branches weighted by their training weight. (As in J48, a row
            sent by a missing value into a branch with no training instances loses that
            branch's share, so such a row may sum to less than 1.)

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``X`` has another number of columns than in ``fit``, holds infinity, or a
            nominal column holds a value that is not one of its codes.
        """
        self._fitted()
        X = check_rows(self, X, allow_nan=True)
        check_codes(X, self.nominal_features_, self.n_categories_)
        return self._proba(X, self._nominal_mask())

    def _proba(self, X, nominal_mask):
        """:meth:`predict_proba` of rows already checked (float64, codes in range); also
        used per bag by the bagging ensembles."""
        kernels = sys.modules.get(_KERNELS)
        if kernels is not None:  # loaded to grow a tree: the compiled walk, same bits
            return kernels.predict_proba(
                np.ascontiguousarray(X, dtype=np.float64), self.feature_, self.threshold_,
                np.ascontiguousarray(nominal_mask, dtype=np.bool_), self.child_start_,
                self.n_children_, self.value_, self.bag_value_, self.is_empty_,
                self.classes_.size)
        return tree_proba(X, self.feature_, self.threshold_, nominal_mask, self.child_start_,
                          self.n_children_, self.value_, self.bag_value_, self.is_empty_,
                          self.classes_.size)

    def predict(self, X):
        """The class of each row: the first class of largest probability (J48's tie rule).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_log_proba(self, X):
        """Natural logarithm of :meth:`predict_proba` (``-inf`` for zero)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    # ---- size and text
    def get_n_leaves(self) -> int:
        """Number of leaves (J48's "Number of Leaves")."""
        self._fitted()
        return int(np.sum(self.feature_ < 0))

    @property
    def n_leaves_(self) -> int:
        """Number of leaves (J48's "Number of Leaves")."""
        return self.get_n_leaves()

    @property
    def tree_size_(self) -> int:
        """Number of nodes (J48's "Size of the tree")."""
        self._fitted()
        return int(self.feature_.size)

    def model_size(self) -> int:
        """The tree's size for ``-m model-size``: its node count, leaves included
        (J48's "Size of the tree", :attr:`tree_size_`)."""
        return self.tree_size_

    def get_depth(self) -> int:
        """Length of the longest path from the root to a leaf (0 for a single leaf)."""
        self._fitted()
        return _depth(self.child_start_, self.n_children_)

    def _label(self, node, parent, class_names):
        """J48's leaf label ``class (n/errors)`` from the parent's count of the branch."""
        bag = self.bag_value_[node]
        tot = float(bag.sum())
        if tot > _SMALL:
            cls = _first_max(bag)
        else:
            cls = _first_max(self.value_[parent] if parent >= 0 else bag)
        wrong = tot - float(bag[cls])
        text = f"{class_names[cls]} ({_java_double(_round2(tot))}"
        if wrong > _SMALL:
            text += "/" + _java_double(_round2(wrong))
        return text + ")"

    def export_text(self, feature_names=None, class_names=None, category_names=None) -> str:
        """The tree as J48 prints it (between its "----" line and "Number of Leaves").

        Parameters
        ----------
        feature_names : sequence of str or None
            Name of each column; default ``x0, x1, ...``.
        class_names : sequence of str or None
            Name of each class; default the labels of ``classes_``.
        category_names : dict or sequence or None
            Names of the values of each nominal column: ``{column: [names]}`` or a list
            indexed by column (None entries for numeric columns); default the codes.

        Returns
        -------
        str
            One line per branch, ``|   `` per level, ``name = value`` or ``name <= t`` /
            ``name > t`` (``t`` with at most 6 decimals), and at leaves
            ``: class (weight/errors)`` (the errors left out when there are none). A tree
            that is a single leaf prints ``: class (weight)``.
        """
        self._fitted()
        d = self.n_features_in_
        names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(d)]
        cnames = ([str(c) for c in class_names] if class_names is not None
                  else [str(c) for c in self.classes_])
        if isinstance(category_names, dict):
            cats = category_names
        elif category_names is not None:
            cats = dict(enumerate(category_names))
        else:
            cats = {}
        if self.feature_[0] < 0:
            return ": " + self._label(0, -1, cnames)
        lines = []
        stack = [(0, 0, 0)]  # (node, next branch, depth): depth first, branches in order
        while stack:
            node, j, depth = stack.pop()
            if j >= self.n_children_[node]:
                continue
            stack.append((node, j + 1, depth))
            att = int(self.feature_[node])
            ch = int(self.child_start_[node]) + j
            if self.threshold_[node] == self.threshold_[node]:
                t = weka_number(float(self.threshold_[node]))
                side = f" <= {t}" if j == 0 else f" > {t}"
            else:
                vals = cats.get(att)
                side = f" = {vals[j] if vals is not None else j}"
            line = "|   " * depth + names[att] + side
            if self.feature_[ch] < 0:
                lines.append(line + ": " + self._label(ch, node, cnames))
            else:
                lines.append(line)
                stack.append((ch, 0, depth + 1))
        return "\n".join(lines)
