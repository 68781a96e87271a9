"""``bagging``'s model class: the bagged trees a fit leaves, checked and combined with numpy.

:class:`BaggedTreesModel` is what :class:`ensemblekit.classifiers.bagging.BaggedTreeClassifier`
leaves after ``fit`` and what a model file rebuilds: the coded layout of the columns and
the member trees, each a :class:`~ensemblekit.classifiers.c45_model.C45Model` (``tree="c45"``)
or a :class:`~ensemblekit.classifiers.cart_model.CartEntropyModel` (``tree="cart-entropy"``),
the class chosen by the code from the ``tree`` parameter, never by the file. Prediction
averages the members' class distributions (soft) or counts their votes (hard) exactly as
the estimator always did, in numpy only.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.class_domain import N_CLASSES, widen_proba
from ensemblekit.constraints import MAX_MEMBERS, Constraint
from ensemblekit.errors import NotFittedError
from ensemblekit.rows import check_rows
from ensemblekit.state import Array, Members, Scalar
from ensemblekit.trust import COUNT_MAX, CheckContext, DamagedModelError

from .c45_model import C45Model, _fail
from .coded import check_codes, numeric_columns

__all__ = ["TREES", "TREE_CONSTRAINTS", "BaggedTreesModel", "member_model", "onehot_tree_matrix"]


#: The base trees the tree ensembles can grow (their ``tree`` parameter).
TREES = ("c45", "cart-entropy")

#: The trees' parameters, shared by ``bagging`` and the lazy ensembles.
TREE_CONSTRAINTS = {
    "tree": Constraint("choice", "base tree: c45 (unpruned J48, as the papers) or cart-entropy "
                       "(scikit-learn's binary entropy tree)", choices=TREES),
    "min_samples_leaf": Constraint("int", "minimum instances per leaf (J48 -M)", low=1),
    "max_depth": Constraint("int", "maximum tree depth, tree=cart-entropy only (none = "
                            "unlimited)", low=1, none_ok=True),
}


def onehot_tree_matrix(X, numeric, nominal, n_categories, modes):
    """The matrix the ``cart-entropy`` trees see, as the ``cart-entropy`` entry builds it.

    Numeric columns as they are (NaN kept), then one 0/1 column per declared
    value of each nominal column, a missing value replaced by the column's
    training mode: the column layout of :func:`ensemblekit.preprocessing.make_preprocessor`
    with ``impute_numeric=False``.

    Returns
    -------
    ndarray of float32 of shape (n_samples, len(numeric) + sum(n_categories)), C-ordered
    """
    parts = [X[:, numeric]]
    for j, (f, r) in enumerate(zip(nominal, n_categories)):
        col = np.where(np.isnan(X[:, f]), modes[j], X[:, f])
        parts.append(col[:, None] == np.arange(r)[None, :])
    return np.ascontiguousarray(np.hstack(parts), dtype=np.float32)


def member_model(owner) -> type:
    """The model class of an ensemble's trees, chosen by its ``tree`` parameter.

    Parameters
    ----------
    owner : object
        The ensemble, its parameters set.

    Returns
    -------
    type
        :class:`~ensemblekit.classifiers.c45_model.C45Model` for ``tree="c45"``,
        :class:`~ensemblekit.classifiers.cart_model.CartEntropyModel` for
        ``"cart-entropy"`` (imported only then).

    Raises
    ------
    DamagedModelError
        For any other ``tree``.
    """
    tree = getattr(owner, "tree", None)
    if tree == "c45":
        return C45Model
    if tree == "cart-entropy":
        from .cart_model import CartEntropyModel

        return CartEntropyModel
    raise DamagedModelError(f"model: tree = {tree!r} is not one of {', '.join(map(repr, TREES))}")


class BaggedTreesModel:
    """Fitted bagged trees (TB): the members and how their distributions are combined.

    The parameters are those of :class:`ensemblekit.classifiers.bagging.BaggedTreeClassifier`,
    which fits it (see there); this class only stores them.

    Parameters
    ----------
    n_estimators, voting, tree, min_samples_leaf, max_depth, nominal_features, \
n_categories, random_state, n_classes
        As :class:`ensemblekit.classifiers.bagging.BaggedTreeClassifier`.

    Attributes
    ----------
    estimators_ : list of C45Model or of CartEntropyModel
        The trees, fitted on the class codes into ``classes_``: a ``c45`` tree has a
        column per class; every ``cart-entropy`` tree has the classes with training rows
        as its ``classes_`` (the same in every tree).
    nominal_features_, numeric_features_ : ndarray of int64
        Column indices of the nominal and numeric attributes.
    n_categories_ : ndarray of int64
        Categories of each nominal column.
    modes_ : ndarray of int64
        Training mode of each nominal column (fills its missing values for the
        ``cart-entropy`` trees).
    classes_ : ndarray of int64 of shape (n_classes,)
        The class codes ``0 .. n_classes - 1``.
    n_features_in_ : int
    """

    _parameter_constraints = {
        "n_estimators": Constraint("int", "number of bagged trees (L)", low=1, high=MAX_MEMBERS),
        "voting": Constraint("choice", "mean tree probabilities (Weka) or majority vote",
                             choices=("soft", "hard")),
        **TREE_CONSTRAINTS,
        "nominal_features": Constraint("any", "indices of the columns holding nominal codes"),
        "n_categories": Constraint("any", "number of categories of each nominal column"),
        "random_state": Constraint("any", "seed of the bags and the trees"),
        "n_classes": N_CLASSES,
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",), low=0, below="n_classes"),
        "nominal_features_": Array("int64", ("n_nominal",), low=0, below="n_features_in_"),
        "n_categories_": Array("int64", ("n_nominal",), low=1, high=COUNT_MAX),
        "numeric_features_": Array("int64", ("n_numeric",), low=0, below="n_features_in_"),
        "modes_": Array("int64", ("n_nominal",), low=0),
        "estimators_": Members(member_model, length="n_estimators"),
    }

    def __init__(self, n_estimators=10, voting="soft", tree="c45", min_samples_leaf=2,
                 max_depth=None, nominal_features=None, n_categories=None, random_state=None,
                 n_classes=None):
        self.n_estimators = n_estimators
        self.voting = voting
        self.tree = tree
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.random_state = random_state
        self.n_classes = n_classes

    def _check_state(self, ctx: CheckContext) -> None:
        """The columns' layout, and members that read it and give the model's classes.

        ``classes_`` are the codes ``0 .. n_classes - 1``; ``nominal_features_`` and
        ``numeric_features_`` split the columns; ``modes_`` are codes of their columns.
        A ``c45`` member reads the model's columns with the model's nominal layout and
        gives a column per class; the ``cart-entropy`` members read the one-hot matrix
        (numeric columns, then one per category) and all know the same classes: every
        class, or with declared classes (``n_classes``) those with training rows.
        """
        classes = self.classes_
        n_classes = classes.size
        if not n_classes or not np.array_equal(classes, np.arange(n_classes)):
            _fail(ctx, "classes_", "not the class codes 0 .. n_classes - 1")
        d = self.n_features_in_
        nominal, categories = self.nominal_features_, self.n_categories_
        if nominal.size > 1 and np.any(nominal[1:] <= nominal[:-1]):
            _fail(ctx, "nominal_features_", "not distinct indices in ascending order")
        if not np.array_equal(self.numeric_features_, numeric_columns(d, nominal)):
            _fail(ctx, "numeric_features_", "not the columns that are not nominal")
        if np.any(self.modes_ >= categories):
            _fail(ctx, "modes_", "a code outside its column's categories")
        if self.tree == "c45":
            for i, member in enumerate(self.estimators_):
                if member.n_features_in_ != d:
                    _fail(ctx, f"estimators_.{i}", f"reads {member.n_features_in_} columns, "
                          f"the model {d}")
                if member.classes_.size != n_classes:
                    _fail(ctx, f"estimators_.{i}", "does not give one probability per class")
                if not (np.array_equal(member.nominal_features_, nominal)
                        and np.array_equal(member.n_categories_, categories)):
                    _fail(ctx, f"estimators_.{i}", "its nominal columns are not the model's")
            return
        width = self.numeric_features_.size + int(categories.sum())
        first = self.estimators_[0].classes_ if self.estimators_ else None
        for i, member in enumerate(self.estimators_):
            if member.n_features_in_ != width:
                _fail(ctx, f"estimators_.{i}", f"reads {member.n_features_in_} columns, "
                      f"the one-hot matrix has {width}")
            if not np.array_equal(member.classes_, first):
                _fail(ctx, f"estimators_.{i}", "knows other classes than estimators_.0")
        if first is not None and (np.any(first < 0) or np.any(first >= n_classes) or (
                self.n_classes is None and first.size != n_classes)):
            _fail(ctx, "estimators_.0", "its classes are not the model's")

    # ---- prediction
    def _tree_matrix(self, X):
        """What the ``cart-entropy`` trees read: numeric columns, then nominal indicators."""
        return onehot_tree_matrix(X, self.numeric_features_, self.nominal_features_,
                                  self.n_categories_, self.modes_)

    def predict_proba(self, X):
        """Mean leaf class distributions (soft) or vote shares (hard) of the trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Numeric columns as numbers, the nominal columns as codes; NaN marks a
            missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to 1 (0 for a declared class
            without training rows). With ``c45`` trees and soft voting, the sum
            of the trees' rows normalised, as Weka's ``Bagging``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``X`` has the wrong number of columns or infinite values, (``c45``) a
            nominal column holds a value that is not a code, or (``cart-entropy``) a
            value is beyond float32's range.
        """
        if getattr(self, "estimators_", None) is None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. "
                                 "Call 'fit' with appropriate arguments before using this "
                                 "estimator.")
        X = check_rows(self, X, allow_nan=True)
        n = X.shape[0]
        c45 = self.tree == "c45"
        if c45:
            check_codes(X, self.nominal_features_, self.n_categories_)
            mask = np.zeros(self.n_features_in_, dtype=np.bool_)
            mask[self.nominal_features_] = True
            Xt = X
            present = np.arange(self.classes_.size)  # every tree has every declared class
        else:
            from .cart_model import check_float32_range

            check_float32_range(X)
            mask, Xt = None, self._tree_matrix(X)
            present = self.estimators_[0].classes_  # the codes with training rows, in every tree
        proba = np.zeros((n, present.size))
        for tree in self.estimators_:
            p = tree._proba(Xt, mask) if c45 else tree._tree_proba(Xt)
            if self.voting == "soft":
                proba += p
            else:
                proba[np.arange(n), np.argmax(p, axis=1)] += 1.0
        if c45 and self.voting == "soft":
            # J48 drops the share of a missing value's empty branches, so a tree's row may
            # sum to less than 1: Weka's Bagging normalises the sum of the trees' rows
            total = proba.sum(axis=1, keepdims=True)
            return proba / np.where(total > 0, total, 1.0)
        return widen_proba(proba / len(self.estimators_), present, self.classes_.size)

    def predict(self, X):
        """Class with the largest :meth:`predict_proba` (the first in ``classes_`` on ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
