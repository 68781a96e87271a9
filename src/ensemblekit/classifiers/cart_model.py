"""``cart-entropy``'s fitted tree as plain arrays, and its prediction in numpy.

:class:`CartEntropyModel` is what a saved ``cart-entropy`` model is rebuilt as: the
node arrays of the binary tree scikit-learn grew (children, split feature and
threshold, where a missing value goes, the class distribution of each node), and
a prediction that walks them exactly as scikit-learn's ``Tree.apply`` does, so
that it gives the same bytes without importing scikit-learn. The estimator,
:class:`ensemblekit.classifiers.cart.CartEntropyTree`, grows the tree and copies
these arrays out of it at the end of ``fit``.

How scikit-learn walks a tree (``sklearn/tree/_tree.pyx``, ``_apply_dense``):
the rows are cast to float32 first; at each internal node a NaN goes to the left
child when the node's ``missing_go_to_left`` is set, else right; any other value
goes left when ``float32(x) <= threshold``, compared in float64 (C promotes the
float32 value), else right. The leaf's row of ``value`` (the weighted fraction
of training rows of each class) is the probability row. numpy compares a float32
array with a float64 array in float64 too, so the walk below is the same walk.
"""

from __future__ import annotations

import numpy as np

from ..class_domain import N_CLASSES, widen_proba
from ..constraints import Constraint
from ..errors import ColumnError, InputError
from ..rows import check_rows
from ..state import Array, Scalar

__all__ = ["CartEntropyModel", "check_float32_range"]

#: Largest value a float32 holds; the trees read their input as float32.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_float32_range(X) -> None:
    """Refuse values scikit-learn's trees cannot hold: they cast ``X`` to float32.

    Parameters
    ----------
    X : ndarray of float64
        Rows already checked (a view is taken; nothing is allocated).

    Raises
    ------
    ensemblekit.errors.ColumnError
        When a finite value of ``X`` lies beyond float32's range (about 3.4e38), so
        that the cast would make it infinite: the first column holding one, and the value.
    """
    flat = np.asarray(X, dtype=np.float64).ravel()  # validated: already float64, so a view
    # fmax/fmin skip NaN (missing values) and allocate nothing
    if flat.size and (np.fmax.reduce(flat) > _FLOAT32_MAX or np.fmin.reduce(flat) < -_FLOAT32_MAX):
        X = np.asarray(X, dtype=np.float64)
        beyond = np.abs(np.nan_to_num(X)) > _FLOAT32_MAX
        column = int(np.flatnonzero(beyond.any(axis=0))[0])
        value = float(X[beyond[:, column], column][0])
        raise ColumnError(column, f"{{column}} holds {value:.6g}, a value too large for "
                                  "dtype('float32'), in which scikit-learn's trees read the "
                                  "data (at most about 3.4e38 in magnitude)")


class CartEntropyModel:
    """A fitted ``cart-entropy`` tree: its node arrays and its prediction (numpy only).

    The base of :class:`ensemblekit.classifiers.cart.CartEntropyTree` (see there
    for the parameters and how the tree is grown), and the class a saved
    ``cart-entropy`` model, or a ``cart-entropy`` member of ``bagging``, is rebuilt
    as. Nodes are numbered as scikit-learn numbers them: the root is 0 and every
    child comes after its parent.

    Parameters
    ----------
    min_samples_leaf : int or float, default=2
    max_depth : int or None, default=None
    random_state : int, RandomState instance or None, default=None
    n_classes : int >= 1 or None, default=None
        As :class:`~ensemblekit.classifiers.cart.CartEntropyTree`; only ``n_classes``
        is read after ``fit`` (by the state check: ``classes_`` are its codes).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted, or ``arange(n_classes)`` when declared.
    tree_classes_ : ndarray of int64 of shape (n_tree_classes,)
        Positions in ``classes_`` of the classes with training rows (the tree's
        own classes), increasing: column ``k`` of ``value_`` is class
        ``classes_[tree_classes_[k]]``.
    children_left_, children_right_ : ndarray of int64 of shape (n_nodes,)
        Children of each node; ``-1`` and ``-1`` for a leaf.
    feature_ : ndarray of int64 of shape (n_nodes,)
        Column tested at each internal node (``-2`` at a leaf).
    threshold_ : ndarray of float64 of shape (n_nodes,)
        ``float32(x) <= threshold_`` sends a row left (``-2.0`` at a leaf). ``inf``
        where scikit-learn split the missing values from the known ones: every
        known value goes left, a missing one as ``missing_go_to_left_`` says.
    missing_go_to_left_ : ndarray of bool of shape (n_nodes,)
        Where a missing value (NaN) goes at each internal node.
    value_ : ndarray of float64 of shape (n_nodes, n_tree_classes)
        Weighted fraction of the node's training rows in each of the tree's classes;
        a leaf's row is the probability row of the rows reaching it.
    n_features_in_ : int
        Number of columns read.

    References
    ----------
    .. [1] scikit-learn, ``sklearn/tree/_tree.pyx`` (``Tree.apply``, ``Tree.predict``)
       and ``sklearn/tree/_export.py`` (``export_text``): the walk and the text
       reproduced here.
    """

    _parameter_constraints = {
        "min_samples_leaf": Constraint("int", "minimum instances per leaf (J48 -M)", low=1,
                                       alt=Constraint("float", low=0, high=1, closed="neither")),
        "max_depth": Constraint("int", "maximum depth (none = unlimited)", low=1, none_ok=True),
        "random_state": Constraint("any", "seed of the order features are tried in"),
        "n_classes": N_CLASSES,
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",)),
        "tree_classes_": Array("int64", ("n_tree_classes",), low=0, below="n_classes"),
        "children_left_": Array("int64", ("n_nodes",), low=-1, below="n_nodes"),
        "children_right_": Array("int64", ("n_nodes",), low=-1, below="n_nodes"),
        "feature_": Array("int64", ("n_nodes",), low=-2, below="n_features_in_"),
        "threshold_": Array("float64", ("n_nodes",), inf=True),
        "missing_go_to_left_": Array("bool", ("n_nodes",)),
        "value_": Array("float64", ("n_nodes", "n_tree_classes"), low=0, high=1),
    }

    def __init__(self, min_samples_leaf=2, max_depth=None, random_state=None, n_classes=None):
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.random_state = random_state
        self.n_classes = n_classes

    # ---- the state check
    def _check_state(self, ctx) -> None:
        """One binary tree (each child after its parent, each node but the root one parent),
        leaves without children, class distributions at the leaves, and the classes."""
        left, right = self.children_left_, self.children_right_
        n = left.size
        if n == 0:
            ctx.fail("children_left_: a tree has at least one node")
        leaf = left == -1
        if np.any(leaf != (right == -1)):
            ctx.fail("children_right_: a node has one child (a leaf has -1 and -1)")
        inner = np.flatnonzero(~leaf)
        if np.any(left[inner] <= inner) or np.any(right[inner] <= inner):
            ctx.fail("children_left_: a child comes before its parent (a cycle, or not a tree)")
        parents = np.bincount(np.concatenate([left[inner], right[inner]]), minlength=n)
        if parents[0] != 0 or np.any(parents[1:] != 1):
            ctx.fail("children_left_: a node has no parent or more than one (not one tree)")
        if np.any(self.feature_[inner] < 0):
            ctx.fail("feature_: an internal node tests no column")
        sums = self.value_[leaf].sum(axis=1)
        if np.any(np.abs(sums - 1.0) > 1e-6):
            ctx.fail("value_: a leaf's class fractions do not sum to 1")
        present = self.tree_classes_
        if np.any(np.diff(present) <= 0):
            ctx.fail("tree_classes_ are not increasing")
        classes = self.classes_
        n_classes = getattr(self, "n_classes", None)
        if n_classes is not None:
            if not np.array_equal(classes, np.arange(n_classes)):
                ctx.fail(f"classes_ are not the codes 0 .. {n_classes - 1}")
        else:
            if np.any(np.diff(classes) <= 0):
                ctx.fail("classes_ are not increasing")
            if present.size != classes.size:
                ctx.fail("tree_classes_: without declared classes the tree has every class")

    # ---- prediction
    def _checked_rows(self, X):
        """``X`` checked (shape, NaN allowed, no infinity, within float32's range)."""
        X = check_rows(self, X, allow_nan=True)
        check_float32_range(X)
        return X

    def apply(self, X):
        """Index of the leaf each row reaches, as scikit-learn's ``Tree.apply``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Features; NaN marks a missing value.

        Returns
        -------
        ndarray of intp of shape (n_samples,)

        Raises
        ------
        ensemblekit.errors.NotFittedError
            Before ``fit``.
        ensemblekit.errors.InputError
            Another number of columns, infinity, or a value beyond float32's range.
        """
        return self._leaves(self._checked_rows(X))

    def _leaves(self, X):
        """The walk of ``Tree.apply`` on rows already checked (float64 or float32)."""
        X32 = np.asarray(X, dtype=np.float32)  # as scikit-learn casts its input
        left, right = self.children_left_, self.children_right_
        node = np.zeros(X32.shape[0], dtype=np.intp)
        active = np.flatnonzero(left[node] != -1)
        while active.size:  # one step down per pass: the depth of the tree bounds the passes
            at = node[active]
            x = X32[active, self.feature_[at]]
            # float32 against float64: numpy compares in float64, as the C code does
            go_left = np.where(np.isnan(x), self.missing_go_to_left_[at], x <= self.threshold_[at])
            at = np.where(go_left, left[at], right[at])
            node[active] = at
            active = active[left[at] != -1]
        return node

    def _tree_proba(self, X):
        """The leaf rows of ``value_`` (the tree's classes only) for rows already checked."""
        return self.value_[self._leaves(X)]

    def predict_proba(self, X):
        """Class probabilities: the class fractions of the leaf each row reaches.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Features, float; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1; column ``k`` is the (weighted) fraction of training
            instances of class ``classes_[k]`` in the leaf (0 for a declared
            class without training rows). No Laplace correction is applied.

        Raises
        ------
        ensemblekit.errors.NotFittedError
            Before ``fit``.
        ensemblekit.errors.InputError
            If ``X`` has another number of features than in ``fit``, holds
            infinity, or a value beyond float32's range.
        """
        proba = self._tree_proba(self._checked_rows(X))
        if self.classes_.size == self.tree_classes_.size:
            return proba
        return widen_proba(proba, self.tree_classes_, self.classes_.size)

    def predict(self, X):
        """Predict the class of each row: the majority class of the leaf it reaches.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Features, float; NaN marks a missing value.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            One of ``classes_`` per row (the first of the tree's classes on a tie).

        Raises
        ------
        ensemblekit.errors.NotFittedError, ensemblekit.errors.InputError
            As :meth:`predict_proba`.
        """
        proba = self._tree_proba(self._checked_rows(X))
        return self.classes_[self.tree_classes_[np.argmax(proba, axis=1)]]

    def predict_log_proba(self, X):
        """Natural logarithm of :meth:`predict_proba` (``-inf`` for zero).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Features, float; NaN marks a missing value.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    # ---- description (``ensemblekit show``)
    def get_n_leaves(self) -> int:
        """Number of leaves of the tree."""
        return int(np.count_nonzero(self.children_left_ == -1))

    def model_size(self) -> int:
        """The tree's size for ``-m model-size``: its node count, leaves included (as
        J48's "Size of the tree")."""
        return int(self.children_left_.size)

    def get_depth(self) -> int:
        """Depth of the tree: the longest root-to-leaf path, in splits (0 for one leaf)."""
        return int(self._node_depths().max())

    #: What ``-m structure-stability`` compares (see :mod:`ensemblekit.scores.structure`).
    structure_kind = "splits"

    def structure(self) -> list[tuple[int, int]]:
        """The tree's splits for ``-m structure-stability``: one ``(attribute, depth)`` pair
        per internal node, the root at depth 0, in node order."""
        depth = self._node_depths()
        inner = np.flatnonzero(self.children_left_ != -1)
        return [(int(self.feature_[i]), int(depth[i])) for i in inner]

    def _node_depths(self) -> np.ndarray:
        depth = np.zeros(self.children_left_.size, dtype=np.int64)
        for node in np.flatnonzero(self.children_left_ != -1):  # parents before children
            depth[self.children_left_[node]] = depth[self.children_right_[node]] = depth[node] + 1
        return depth

    def tree_text(self, feature_names=None, class_names=None, *, decimals=4, max_depth=10,
                  spacing=3) -> str:
        """The tree as scikit-learn's ``export_text`` prints it, character for character.

        Parameters
        ----------
        feature_names : sequence of str, optional
            One name per column (default ``feature_<j>``).
        class_names : sequence of str, optional
            One name per class of ``classes_`` (default: the labels); the tree's
            own classes (``tree_classes_``) are taken from it.
        decimals : int, default=4
            Digits of the thresholds.
        max_depth : int, default=10
            Levels printed before a branch is shown as truncated.
        spacing : int, default=3
            Width of one indentation step.

        Returns
        -------
        str
            ``|--- name <= t`` / ``|--- name >  t`` lines and ``|--- class: c`` leaves,
            one per line, as ``sklearn.tree.export_text(tree, feature_names=...,
            class_names=..., decimals=...)`` gives for the scikit-learn tree.

        Raises
        ------
        ValueError
            ``feature_names`` or ``class_names`` of the wrong length.
        """
        d = self.n_features_in_
        if feature_names is not None and len(feature_names) != d:
            raise InputError(f"feature_names must contain {d} elements, got {len(feature_names)}")
        if class_names is None:
            class_names = [str(c) for c in self.classes_]
        elif len(class_names) != self.classes_.size:
            raise InputError(f"class_names must contain {self.classes_.size} elements, got "
                             f"{len(class_names)}")
        own = [class_names[int(k)] for k in self.tree_classes_]
        names = [f"feature_{j}" if feature_names is None else feature_names[j] for j in range(d)]
        left, right = self.children_left_, self.children_right_
        lines: list[str] = []

        def subtree_depth(node: int) -> int:
            deepest, stack = 1, [(node, 1)]
            while stack:
                at, level = stack.pop()
                deepest = max(deepest, level)
                if left[at] != -1:
                    stack.extend(((int(right[at]), level + 1), (int(left[at]), level + 1)))
            return deepest

        def leaf(node: int, indent: str) -> None:
            best = int(np.argmax(self.value_[node]))
            # scikit-learn prints the class index itself when the tree has one class
            name = str(own[best]) if len(own) != 1 else str(best)
            lines.append(f"{indent} class: {name}\n")

        stack = [(0, 1)]
        while stack:  # depth first, left before right, as export_text's recursion
            item = stack.pop()
            if isinstance(item, str):
                lines.append(item)
                continue
            node, depth = item
            indent = ("|" + " " * spacing) * depth
            indent = indent[:-spacing] + "-" * spacing
            if depth <= max_depth + 1:
                if left[node] != -1:
                    name = names[int(self.feature_[node])]
                    threshold = "{1:.{0}f}".format(decimals, self.threshold_[node])
                    lines.append(f"{indent} {name} <= {threshold}\n")
                    stack.append((int(right[node]), depth + 1))
                    stack.append(f"{indent} {name} >  {threshold}\n")
                    stack.append((int(left[node]), depth + 1))
                else:
                    leaf(node, indent)
            else:
                below = subtree_depth(node)
                if below == 1:
                    leaf(node, indent)
                else:
                    lines.append(f"{indent} truncated branch of depth {below}\n")
        return "".join(lines)
