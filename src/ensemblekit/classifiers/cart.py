"""``cart-entropy``: scikit-learn's binary decision tree grown with the entropy criterion.

Until version 0.2 this tree was ensemblekit's ``c45``. It is a CART-style tree
(binary splits, information gain, no pruning), not Quinlan's C4.5; the faithful
C4.5 (Weka's J48) is :class:`ensemblekit.classifiers.c45.C45Tree`. This one stays
as a fast rival and as a choice of base tree for the bagging ensembles.

The estimator grows the tree with scikit-learn and copies its node arrays out;
prediction, and everything a saved model needs, is the numpy-only
:class:`~ensemblekit.classifiers.cart_model.CartEntropyModel` it derives from.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..class_domain import declared_classes
from ..constraints import validate_params
from ..rows import quiet_finite_check
from .cart_model import CartEntropyModel, check_float32_range

__all__ = ["CartEntropyTree", "cart_model"]


def take_tree_arrays(model: CartEntropyModel, tree) -> CartEntropyModel:
    """Copy a fitted scikit-learn tree's node arrays into ``model`` (its ``classes_`` set).

    Parameters
    ----------
    model : CartEntropyModel
        Holds ``classes_`` already: the tree's classes, or declared codes that
        include them.
    tree : sklearn.tree.DecisionTreeClassifier
        Fitted, single output.

    Returns
    -------
    CartEntropyModel
        ``model``, with ``n_features_in_``, ``tree_classes_``, ``children_left_``,
        ``children_right_``, ``feature_``, ``threshold_``, ``missing_go_to_left_``
        and ``value_`` set (copies, of the dtypes its declaration names).
    """
    t = tree.tree_
    model.n_features_in_ = int(tree.n_features_in_)
    model.tree_classes_ = np.searchsorted(model.classes_, tree.classes_).astype(np.int64)
    model.children_left_ = np.asarray(t.children_left, dtype=np.int64).copy()
    model.children_right_ = np.asarray(t.children_right, dtype=np.int64).copy()
    model.feature_ = np.asarray(t.feature, dtype=np.int64).copy()
    model.threshold_ = np.asarray(t.threshold, dtype=np.float64).copy()
    model.missing_go_to_left_ = np.asarray(t.missing_go_to_left).astype(bool)
    # scikit-learn's classifier trees hold each node's weighted class fractions, which
    # predict_proba returns as they are (Tree.predict: value.take(leaves))
    model.value_ = np.ascontiguousarray(t.value[:, 0, :], dtype=np.float64).copy()
    return model


def cart_model(tree, classes=None) -> CartEntropyModel:
    """A :class:`CartEntropyModel` of a fitted scikit-learn entropy tree (a bagging member).

    Parameters
    ----------
    tree : sklearn.tree.DecisionTreeClassifier
        Fitted, single output (e.g. by
        :func:`ensemblekit.classifiers.bagging.fit_weighted_tree`).
    classes : ndarray, optional
        The model's ``classes_`` (sorted; they must include the tree's). Default:
        the tree's own classes, so that ``predict_proba`` gives the tree's columns.

    Returns
    -------
    CartEntropyModel
        Predicts as ``tree`` does, byte for byte (on rows within float32's range).
    """
    model = CartEntropyModel()
    model.classes_ = np.asarray(tree.classes_ if classes is None else classes)
    return take_tree_arrays(model, tree)


class CartEntropyTree(CartEntropyModel, ClassifierMixin, BaseEstimator):
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
        Only fitting leaves it: a saved model holds the arrays below, copied
        from it, and predicts with them (as this estimator does too).
    children_left_, children_right_, feature_, threshold_, missing_go_to_left_, value_ : ndarray
        The tree's node arrays, as :class:`~ensemblekit.classifiers.cart_model.CartEntropyModel`
        declares them; prediction walks them.
    tree_classes_ : ndarray of int64
        Positions in ``classes_`` of the tree's classes (the columns of ``value_``).
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
        with quiet_finite_check():
            X, y = validate_data(self, X, y, ensure_all_finite="allow-nan")
        check_float32_range(X)
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
        take_tree_arrays(self, tree)
        return self

    def _checked_rows(self, X):
        # scikit-learn's checks first (NotFittedError, feature names of a data frame),
        # then the model's own; the prediction itself is CartEntropyModel's
        check_is_fitted(self, "tree_")
        with quiet_finite_check():
            X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        return super()._checked_rows(X)

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
