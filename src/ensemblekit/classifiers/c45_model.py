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
recursive ``ClassifierTree.getProbs`` adds them, class weights divided by J48's own
totals ``total_`` and ``bag_total_``), so the probabilities are equal to the last bit,
and equal to J48's (a fit keeps J48's doubles of every class weight and total; see
:mod:`ensemblekit.classifiers._c45_weka_sums`). Where those kernels are loaded already
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
#: The modules of compiled (numba) kernels a fit loads: a process that will fit can import
#: them, and start numba, before it has the data (see ``experiment.runner._prepare_zygote``).
KERNEL_MODULES = (_KERNELS, "ensemblekit.classifiers._c45_pruning",
                  "ensemblekit.classifiers._c45_weka_sums")
#: Largest Java ``int``: J48 reads ``-N`` and ``-Q`` as ints.
JAVA_INT_MAX = 2**31 - 1
#: How far a stored total may be from the sum of its class weights (relative): J48's
#: running sums differ from it by rounding alone.
_TOTAL_SLACK = 1e-9


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
               is_empty, total, bag_total, n_classes, laplace=False):
    """J48's ``distributionForInstance`` of every row of ``X``.

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
        Codes of the nominal columns in range; NaN = missing.
    feature, threshold, child_start, n_children, value, bag_value, is_empty : ndarray
        The node arrays of :class:`C45Model`, already checked to form one tree.
    total, bag_total : ndarray of float64 of shape (n_nodes,)
        The totals of ``value`` and ``bag_value`` (:meth:`C45Model._totals`): each class
        weight is divided by them, and a branch's share of its split is
        ``bag_total[branch] / total[split]``.
    nominal : ndarray of bool of shape (n_features,)
        Which columns are nominal.
    n_classes : int
    laplace : bool, default=False
        Laplace-corrected class shares, as J48 ``-A`` (``Distribution.laplaceProb``):
        ``(weight of the class + 1) / (total weight + n_classes)`` wherever the plain walk
        takes ``weight of the class / total weight``, on the same paths; a leaf or an
        empty branch without training weight then gives ``1 / n_classes`` for every class
        instead of nothing.

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
    node_total = total
    done_rows, done_keys, done_parts, done_frames = [], [], [], []
    # a "frame": one row's visit of a split on a missing value, whose branches' sums it adds
    frame_parent, frame_key, frame_depth, frame_row, n_frames = [], [], [], [], 0

    def add(rows, nodes, weights, dist, total, frames):
        done_rows.append(rows)
        done_keys.append(nodes)
        done_frames.append(frames)
        if laplace:
            done_parts.append(weights[:, None] * ((dist + 1.0) / (total[:, None] + n_classes)))
        else:
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
            ok = (node_total[at] > _SMALL) | laplace
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
            split_total = total[at]
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
        t = threshold[nodes]
        is_nominal = nominal[f]
        multiway = is_nominal & np.isnan(t)
        branch[multiway] = v[multiway].astype(np.int64)
        binary = is_nominal & ~multiway  # branch 0 is the value coded t, 1 any other
        branch[binary] = np.where(v[binary] == t[binary], 0, 1)
        numeric = ~is_nominal
        branch[numeric] = np.where(v[numeric] <= t[numeric], 0, 1)
        child = child_start[nodes] + branch
        empty = is_empty[child]
        if empty.any():
            r, at, w, ch, fr = rows[empty], nodes[empty], weights[empty], child[empty], frames[empty]
            own = bag_total[ch] > _SMALL
            add(r[own], at[own], w[own], bag_value[ch[own]], bag_total[ch[own]], fr[own])
            up = ~own & ((node_total[at] > _SMALL) | laplace)
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
    confidence_factor, min_samples_leaf, unpruned, subtree_raising, collapse_tree, laplace, \
binary_splits, mdl_correction, split_point_actual_value, reduced_error_pruning, num_folds, seed, \
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
        Threshold of a numeric test (``x <= t`` is the first branch); the code ``v`` of a
        binary nominal test (``binary_splits``: ``x = v`` is the first branch, ``x != v``
        the second); NaN at a multiway nominal test and at a leaf.
    child_start_, n_children_ : ndarray of int64 of shape (n_nodes,)
        The children of node ``i`` are nodes ``child_start_[i] .. + n_children_[i] - 1``
        (branch order: the nominal values, ``= v`` then ``!= v``, or ``<=`` then ``>``);
        -1 and 0 at a leaf.
    value_ : ndarray of float64 of shape (n_nodes, n_classes)
        Training weight of each class at the node (fractional with missing values).
    bag_value_ : ndarray of float64 of shape (n_nodes, n_classes)
        Class weights of the node's branch as its parent's split counts them (what J48
        prints at a leaf and uses for the missing-value branch weights).
    is_empty_ : ndarray of bool of shape (n_nodes,)
        Leaves that received no training weight.
    total_, bag_total_ : ndarray of float64 of shape (n_nodes,) or None
        The totals of ``value_`` and ``bag_value_`` as J48's ``Distribution`` keeps them
        (``totaL`` and ``perBag``: running sums of instance weights, which differ from a
        sum over the classes in the last bits when weights are fractional); the walk
        divides by them. None in a model file written before ensemblekit kept them: the
        walk then adds the class weights.
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
        "binary_splits": Constraint("bool", "split nominal attributes in two, one value "
                                    "against the rest (J48 -B)"),
        "mdl_correction": Constraint("bool", "penalise numeric splits' gain by "
                                     "log2(#thresholds)/N (false = J48 -J)"),
        "split_point_actual_value": Constraint("bool", "move a numeric threshold to the largest "
                                               "training value not above it (false = J48 "
                                               "-doNotMakeSplitPointActualValue)"),
        "reduced_error_pruning": Constraint("bool", "prune on a held-out fold instead of the "
                                            "error estimate (J48 -R)"),
        "num_folds": Constraint("int", "folds of reduced-error pruning, one of them prunes "
                                "(J48 -N)", low=2),
        "seed": Constraint("int", "seed of the hold-out split of reduced-error pruning (J48 -Q)",
                           low=-JAVA_INT_MAX - 1, high=JAVA_INT_MAX),
        "laplace": Constraint("bool", "Laplace-corrected leaf probabilities (J48 -A)"),
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
        "total_": Array("float64", ("n_nodes",), low=0, optional=True),
        "bag_total_": Array("float64", ("n_nodes",), low=0, optional=True),
    }

    def __init__(self, confidence_factor=0.25, min_samples_leaf=2, unpruned=False,
                 subtree_raising=True, collapse_tree=True, laplace=False, binary_splits=False,
                 mdl_correction=True, split_point_actual_value=True, reduced_error_pruning=False,
                 num_folds=3, seed=1, nominal_features=None, n_categories=None,
                 n_classes=None):
        self.confidence_factor = confidence_factor
        self.min_samples_leaf = min_samples_leaf
        self.unpruned = unpruned
        self.subtree_raising = subtree_raising
        self.collapse_tree = collapse_tree
        self.binary_splits = binary_splits
        self.mdl_correction = mdl_correction
        self.split_point_actual_value = split_point_actual_value
        self.reduced_error_pruning = reduced_error_pruning
        self.num_folds = num_folds
        self.seed = seed
        self.laplace = laplace
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_classes = n_classes

    def _check_state(self, ctx: CheckContext) -> None:
        """The node arrays form one tree over the model's columns and classes.

        The walk indexes these arrays by the values they hold, so: node 0 is the root;
        the children of node ``i`` are ``child_start_[i] .. + n_children_[i] - 1``, all
        after ``i`` and inside the arrays, and every node but the root has exactly one
        parent (no cycle, no sharing); a leaf has ``feature_ == -1``, no children and no
        threshold; a numeric test has two children and a finite threshold; a nominal test
        has no threshold and one child per declared value of its column, or (a binary
        test, exactly when the model's ``binary_splits`` is true) two children and the code
        of one of the column's values as its threshold. ``classes_`` are the codes
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
        t = threshold[split]
        binary = is_nominal[f] & ~np.isnan(t)
        if np.any(~np.isfinite(t[~is_nominal[f]])):
            _fail(ctx, "threshold_", "a numeric test has no finite threshold")
        code = t[binary]
        if np.any((code != np.floor(code)) | (code < 0) | (code >= width[f[binary]])):
            _fail(ctx, "threshold_", "a binary nominal test's threshold is not one of its "
                  "column's value codes")
        declared = getattr(self, "binary_splits", None)  # None: a member rebuilt without params
        if declared is not None and np.any(binary != (is_nominal[f] & bool(declared))):
            _fail(ctx, "threshold_", "a nominal test is binary where binary_splits is false, "
                  "or multiway where it is true")
        if np.any(count[split] != np.where(binary, 2, width[f])):
            _fail(ctx, "n_children_", "a split does not have one child per branch of its test")
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
        if (self.total_ is None) != (self.bag_total_ is None):
            _fail(ctx, "total_", "total_ and bag_total_ are stored together or not at all")
        for name, total, rows in (("total_", self.total_, self.value_),
                                  ("bag_total_", self.bag_total_, self.bag_value_)):
            if total is not None:
                own = _sum_in_order(rows)
                if np.any(np.abs(total - own) > _TOTAL_SLACK * np.maximum(own, 1.0)):
                    _fail(ctx, name, "a total is not the sum of its class weights")

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

    def _grow(self, X, codes, w, nominal, cats, classes, rows=None, weka_sums=True):
        """Grow (and prune, as the parameters say) on arrays already checked; set the fitted state.

        The one growing path of :meth:`fit_coded`, ``C45Tree.fit`` and the bagging
        ensembles (:func:`ensemblekit.classifiers.bagging.fit_weighted_c45`), which check
        their arrays once for all their trees. ``w`` are instance weights >= 0 (rows of
        weight 0 take no part); ``nominal`` and ``cats`` the sorted nominal columns and
        their numbers of values; ``classes`` the ``classes_`` to set (``codes`` index them);
        ``rows`` how many instances each row is in J48's count of known values (None: a
        whole-number weight is that many copies); ``weka_sums`` as in
        :func:`~ensemblekit.classifiers._c45_growth.grow_c45` (the ensembles leave it out).
        """
        from ._c45_growth import grow_c45

        rep = bool(self.reduced_error_pruning)
        if rep and self.unpruned:
            raise InputError("reduced_error_pruning prunes, unpruned does not: set one of "
                             "them (J48 refuses -R with -U)")
        if rep and np.float32(self.confidence_factor) != np.float32(0.25):
            raise InputError("confidence_factor plays no part in reduced-error pruning: "
                             "leave it at 0.25 (J48 refuses -C with -R)")
        if rep and self.binary_splits:
            raise InputError("reduced_error_pruning does not take binary_splits yet: set one "
                             "of them")
        keep = w > 0
        if not rep and not keep.all():  # (reduced-error pruning places them in its folds)
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
                         counts=rows, binary_splits=self.binary_splits,
                         mdl_correction=self.mdl_correction,
                         split_point_actual_value=self.split_point_actual_value,
                         reduced_error_pruning=rep, num_folds=self.num_folds, seed=self.seed,
                         weka_sums=weka_sums, split_policy=self._split_policy(X.shape[0]))
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
        self.total_ = state["total"]
        self.bag_total_ = state["bag_total"]
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
        """Class probabilities as J48's ``distributionForInstance`` (Laplace-corrected with
        ``laplace``, as J48 ``-A``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Numeric columns as numbers, nominal columns as codes; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The class frequencies of the leaf reached (with ``laplace``, ``(weight of the
            class + 1) / (leaf weight + n_classes)``); with a missing value at a split, the
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

    def _totals(self):
        """``(total, bag_total)`` the walk divides by: :attr:`total_` and
        :attr:`bag_total_`, or for a model file that holds none, the sums of ``value_``
        (at a split: of its branches' class weights, branch by branch) and of
        ``bag_value_``, left to right."""
        if getattr(self, "total_", None) is not None:
            return self.total_, self.bag_total_
        total = np.where(self.n_children_ > 0,
                         _split_totals(self.child_start_, self.n_children_, self.bag_value_),
                         _sum_in_order(self.value_))
        return total, _sum_in_order(self.bag_value_)

    def _proba(self, X, nominal_mask):
        """:meth:`predict_proba` of rows already checked (float64, codes in range); also
        used per bag by the bagging ensembles."""
        total, bag_total = self._totals()
        # (members of a bagging ensemble are restored without parameters: no Laplace)
        laplace = bool(getattr(self, "laplace", False))
        kernels = sys.modules.get(_KERNELS)
        if kernels is not None:  # loaded to grow a tree: the compiled walk, same bits
            return kernels.predict_proba(
                np.ascontiguousarray(X, dtype=np.float64), self.feature_, self.threshold_,
                np.ascontiguousarray(nominal_mask, dtype=np.bool_), self.child_start_,
                self.n_children_, self.value_, self.bag_value_, self.is_empty_, total,
                bag_total, self.classes_.size, laplace)
        return tree_proba(X, self.feature_, self.threshold_, nominal_mask, self.child_start_,
                          self.n_children_, self.value_, self.bag_value_, self.is_empty_,
                          total, bag_total, self.classes_.size, laplace)

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

    #: What ``-m structure-stability`` compares (see :mod:`ensemblekit.scores.structure`).
    structure_kind = "splits"

    def structure(self) -> list[tuple[int, int]]:
        """The tree's splits for ``-m structure-stability``: one ``(attribute, depth)`` pair
        per internal node, the root at depth 0, in node order."""
        self._fitted()
        depth = np.zeros(self.feature_.size, dtype=np.int64)
        for i in np.flatnonzero(self.n_children_ > 0).tolist():  # children after their parent
            s = self.child_start_[i]
            depth[s:s + self.n_children_[i]] = depth[i] + 1
        inner = np.flatnonzero(self.feature_ >= 0)
        return [(int(self.feature_[i]), int(depth[i])) for i in inner]

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

    def _side(self, nominal, att, t, j, cats) -> str:
        """The test of branch ``j`` of a split on column ``att`` (nominal or not) with
        threshold ``t``, as J48 prints it after the attribute's name."""
        if not nominal:
            # J48 -B prints its split points with Java's Double.toString, J48 with 6 decimals
            binary = getattr(self, "binary_splits", False)
            number = _java_double(t) if binary else weka_number(t)
            return f" <= {number}" if j == 0 else f" > {number}"
        vals = cats.get(att)
        if t != t:  # one branch per value
            return f" = {vals[j] if vals is not None else j}"
        name = vals[int(t)] if vals is not None else int(t)
        return f" = {name}" if j == 0 else f" != {name}"

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
            One line per branch, ``|   `` per level, ``name = value`` (with
            ``binary_splits``: ``name = value`` / ``name != value``) or ``name <= t`` /
            ``name > t`` (``t`` with at most 6 decimals; with ``binary_splits``, as Java's
            ``Double.toString`` writes it, as J48 ``-B`` does), and at leaves
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
        nominal = self._nominal_mask()
        lines = []
        stack = [(0, 0, 0)]  # (node, next branch, depth): depth first, branches in order
        while stack:
            node, j, depth = stack.pop()
            if j >= self.n_children_[node]:
                continue
            stack.append((node, j + 1, depth))
            att = int(self.feature_[node])
            ch = int(self.child_start_[node]) + j
            side = self._side(bool(nominal[att]), att, float(self.threshold_[node]), j, cats)
            line = "|   " * depth + names[att] + side
            if self.feature_[ch] < 0:
                lines.append(line + ": " + self._label(ch, node, cnames))
            else:
                lines.append(line)
                stack.append((ch, 0, depth + 1))
        return "\n".join(lines)
