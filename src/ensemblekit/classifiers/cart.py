"""``cart-entropy``: scikit-learn's binary decision tree grown with the entropy criterion.

Until version 0.2 this tree was ensemblekit's ``c45``. It is a CART-style tree
(binary splits, information gain, no pruning), not Quinlan's C4.5; the faithful
C4.5 (Weka's J48) is :class:`ensemblekit.classifiers.c45.C45Tree`. This one stays
as a fast rival and as a choice of base tree for the bagging ensembles.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ensemblekit.errors import InputError

from ..class_domain import N_CLASSES, declared_classes, widen_proba
from ..constraints import Constraint, validate_params
from ..trust import (
    CheckContext,
    class_codes,
    class_labels,
    declared_codes,
    feature_count,
    fitted_member,
    fitted_only,
    nested_attr,
)

__all__ = ["CartEntropyTree"]


def _check_cart(est, ctx: CheckContext) -> None:
    """``CartEntropyTree``: the scikit-learn tree it wraps reads the same columns and classes.

    With declared classes (``n_classes``) ``classes_`` are the codes ``0 .. n - 1``
    and the tree's classes are those of them that have training rows
    (``predict_proba`` spreads the tree's columns to those codes).
    """
    d = feature_count(ctx, est)
    classes = class_labels(ctx, est)
    tree = ctx.instance(ctx.attr(est, "tree_"), "tree_", (DecisionTreeClassifier,))
    fitted_member(ctx, tree, "tree_", d)
    inner = class_labels(ctx, tree, "tree_.classes_",
                         value=nested_attr(ctx, tree, "classes_", "tree_.classes_"))
    if not declared_codes(ctx, est, classes):
        if inner.dtype.kind != classes.dtype.kind or not np.array_equal(inner, classes):
            ctx.fail("classes_ are not the tree's classes")
    class_codes(ctx, inner, "tree_.classes_", classes.size)



def _check_float32_range(X) -> None:
    """Refuse values scikit-learn's trees cannot hold: they cast ``X`` to float32.

    Raises
    ------
    InputError
        When a finite value of ``X`` lies beyond float32's range (about 3.4e38), so
        that the cast would make it infinite.
    """
    flat = np.asarray(X, dtype=np.float64).ravel()  # validated: already float64, so a view
    big = np.finfo(np.float32).max
    # fmax/fmin skip NaN (missing values) and allocate nothing
    if flat.size and (np.fmax.reduce(flat) > big or np.fmin.reduce(flat) < -big):
        raise InputError("Input X contains a value too large for dtype('float32'): "
                         "cart-entropy grows scikit-learn's float32 trees, which hold values "
                         "up to about 3.4e38")


class CartEntropyTree(ClassifierMixin, BaseEstimator):
    """Unpruned binary decision tree grown with the entropy criterion (``cart-entropy``).

    The tree is scikit-learn's :class:`~sklearn.tree.DecisionTreeClassifier`
    with ``criterion="entropy"``, held by composition. Every internal node is
    a *binary* test ``x[j] <= t`` where the threshold ``t`` is the midpoint
    between two adjacent distinct training values of feature ``j``, chosen to
    maximise the information gain (the drop in Shannon entropy, in bits). The
    tree is grown until leaves are pure or cannot be split, with at least
    ``min_samples_leaf`` training instances in every leaf (default 2, the same
    as J48's ``-M 2``), and it is never pruned.

    It is **not** Quinlan's C4.5 and results will not match Weka's J48 exactly:

    * splits are chosen by information gain, not by gain ratio;
    * the tree sees numbers only: the ``cart-entropy`` registry entry one-hot encodes
      nominal attributes, so a nominal test is "value v or not" (a binary
      split on an indicator column), not a multiway split with one branch
      per value;
    * there is no pruning of any kind (neither C4.5's pessimistic-error
      pruning nor subtree raising), so it resembles ``J48 -U`` only in spirit;
    * missing values are handled by scikit-learn's rule (at each split the
      missing instances all go to the side that gives the larger gain), not
      by C4.5's fractional instances.

    Parameters
    ----------
    min_samples_leaf : int or float, default=2
        Minimum number of training instances in a leaf (an int >= 1), or a
        fraction of the training set size (a float in (0, 1)). ``2`` mirrors
        J48's ``-M 2``.
    max_depth : int or None, default=None
        Maximum depth of the tree (>= 1); ``None`` grows it fully.
    random_state : int, RandomState instance or None, default=None
        Seeds the order in which features are tried at each node, which
        decides between splits of exactly equal gain. Fix it for
        reproducible trees.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and ``predict_proba`` has a column for each, 0 for a class without
        training rows. None: the distinct labels of ``y``.

    Attributes
    ----------
    tree_ : DecisionTreeClassifier
        The fitted scikit-learn tree. Its low-level node arrays are in
        ``tree_.tree_`` (``feature``, ``threshold``, ``impurity`` in bits,
        ``value``, ...); its ``classes_`` are the classes with training rows.
    classes_ : ndarray of shape (n_classes,)
        Class labels seen in ``fit``, sorted, or ``arange(n_classes)``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, present only when ``X`` given to ``fit`` has string
        column names (e.g. a pandas DataFrame).

    See Also
    --------
    sklearn.tree.DecisionTreeClassifier : The tree that does the work.

    References
    ----------
    .. [1] J. R. Quinlan, *C4.5: Programs for Machine Learning*, Morgan
       Kaufmann, 1993 (the algorithm this class approximates).
    .. [2] L. Breiman, J. Friedman, R. Olshen and C. Stone, *Classification
       and Regression Trees*, Wadsworth, 1984 (binary splits as used here).
    .. [3] Weka's ``weka.classifiers.trees.J48`` (options ``-U -M 2``), the
       baseline run in the lazy-ensemble papers.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.classifiers.cart import CartEntropyTree
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = CartEntropyTree(random_state=0).fit(X, y)
    >>> float(clf.tree_.tree_.threshold[0])
    2.5
    >>> clf.predict([[1.5], [3.5]]).tolist()
    [0, 1]
    """

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_cart))

    _parameter_constraints = {
        "min_samples_leaf": Constraint("int", "minimum instances per leaf (J48 -M)", low=1,
                                       alt=Constraint("float", low=0, high=1, closed="neither")),
        "max_depth": Constraint("int", "maximum depth (none = unlimited)", low=1, none_ok=True),
        "random_state": Constraint("any", "seed of the order features are tried in"),
        "n_classes": N_CLASSES,
    }

    def __init__(self, min_samples_leaf=2, max_depth=None, random_state=None, n_classes=None):
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.random_state = random_state
        self.n_classes = n_classes

    def fit(self, X, y):
        """Grow the tree on training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training features, float; NaN marks a missing value.
        y : array-like of shape (n_samples,)
            Class labels (any labels scikit-learn accepts for
            classification). There is no ``sample_weight``: the leaf-size
            rule counts rows, so weights would not be equivalent to repeated
            rows; resample rows instead (as bagging does).

        Returns
        -------
        self : CartEntropyTree
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is not 2-D, contains infinity, has a different number of
            rows than ``y``, if ``y`` is continuous (not class labels), or if
            a parameter is out of range
            (:class:`~ensemblekit.constraints.InvalidParameterError`), or,
            with ``n_classes``, a label is not a code ``0 .. n_classes - 1``.
        """
        validate_params(self)
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan")
        _check_float32_range(X)
        check_classification_targets(y)
        if self.n_classes is not None:
            declared_classes(y, self.n_classes)  # checks the codes
        tree = DecisionTreeClassifier(
            criterion="entropy",
            splitter="best",
            min_samples_leaf=self.min_samples_leaf,
            max_depth=self.max_depth,
            random_state=self.random_state,
        )
        tree.fit(X, y)
        self.tree_ = tree
        self.classes_ = tree.classes_ if self.n_classes is None else np.arange(self.n_classes)
        return self

    def _validated_X(self, X):
        check_is_fitted(self, "tree_")
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        _check_float32_range(X)
        return X

    def predict(self, X):
        """Predict the class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Features, float; NaN marks a missing value.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            For each row, the majority class of the leaf it reaches (one of
            ``classes_``).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            If ``X`` has a different number of features than in ``fit``.
        """
        X = self._validated_X(X)
        return self.tree_.predict(X)

    def predict_proba(self, X):
        """Class probabilities: the class frequencies of the leaf each row reaches.

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
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            If ``X`` has a different number of features than in ``fit``.
        """
        X = self._validated_X(X)
        proba = self.tree_.predict_proba(X)
        if self.classes_.size == self.tree_.classes_.size:
            return proba
        return widen_proba(proba, self.tree_.classes_, self.classes_.size)

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

    @property
    def feature_importances_(self):
        """Total entropy reduction brought by each feature, normalised to sum to 1.

        Returns
        -------
        ndarray of shape (n_features_in_,)
            Non-negative; all zeros when the tree is a single leaf.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the tree has not been fitted.
        """
        check_is_fitted(self, "tree_")
        return self.tree_.feature_importances_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
