"""``bagging`` (TB): traditional bagging of unpruned trees, Weka's ``J48 -U`` by default.

The rival the lazy-ensemble papers call TB (Zhu & Yang 2008; Homayouni,
Hashemi & Hamzeh): ``n_estimators`` unpruned trees, each grown on a bootstrap
bag of the ``N`` training instances (Breiman 1996), combined by averaging their
class-probability distributions as Weka's ``Bagging`` does (``voting="soft"``)
or by majority vote (``voting="hard"``).

The base tree is chosen by ``tree`` (shared with the lazy ensembles, see
:data:`TREE_CONSTRAINTS`):

* ``"c45"`` (default): the unpruned C4.5 tree of ``c45``
  (:class:`~ensemblekit.classifiers.c45.C45Tree` with ``unpruned=True``, Weka's
  ``J48 -U -M 2``), the base learner the papers ran. It reads nominal codes and
  missing values as they are (multiway nominal splits, fractional instances).
* ``"cart-entropy"``: scikit-learn's binary entropy tree of ``cart-entropy``
  (:class:`~ensemblekit.classifiers.cart.CartEntropyTree`), on numeric columns
  and one indicator column per nominal value (a missing nominal value replaced
  by the training mode), as ``bagging`` did before version 0.2.

The fitted trees, their prediction and the model-file state are the numpy-only
:class:`~ensemblekit.classifiers.bagging_model.BaggedTreesModel`, the first base of
:class:`BaggedTreeClassifier`; this module grows the trees.

A bag is a vector of bootstrap *counts* (how many times each training row was
drawn) given to the tree as sample weights; no row is copied. Weka's J48 counts
instance weights everywhere (class distributions, ``-M``), so a count of 3 is the
row written out 3 times, as Weka's ``Bagging`` writes out its bags
(:func:`fit_weighted_c45`; the one difference is the order in which the fractional
weights of a missing value are added, which can move a leaf count by 1e-15). :func:`fit_weighted_tree`
grows, from such counts, the same tree
:class:`~ensemblekit.classifiers.cart.CartEntropyTree` grows on the bag's rows written
out with their repeats (the lazy ensembles use it too): scikit-learn ignores
rows of weight 0, weighs class counts and entropies by the counts, and the
rule "at least ``min_samples_leaf`` instances per leaf", which scikit-learn
counts in distinct rows, is stated in weights instead (``min_weight_fraction_leaf``).

References
----------
.. [1] L. Breiman, "Bagging predictors", Machine Learning 24(2), pp. 123-140, 1996.
.. [2] X. Zhu and Y. Yang, "A lazy bagging approach to classification", Pattern
   Recognition 41(10), pp. 2980-2992, 2008 (TB as the rival of lazy bagging).
.. [3] Weka 3.9, ``weka.classifiers.meta.Bagging`` with ``trees.J48 -U``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ensemblekit.errors import InputError

from ..class_domain import declared_classes
from ..constraints import validate_params
from ..rows import quiet_finite_check
from .bagging_model import TREE_CONSTRAINTS, TREES, BaggedTreesModel, onehot_tree_matrix
from .c45_model import KERNEL_MODULES  # noqa: F401 - C4.5's, which its trees' fits load
from .cart import cart_model
from .coded import coded_layout

__all__ = ["TREES", "TREE_CONSTRAINTS", "BaggedTreeClassifier", "bootstrap_counts",
           "c45_proba", "check_tree_choice", "fit_weighted_c45", "fit_weighted_tree",
           "nominal_modes", "onehot_tree_matrix"]


def check_tree_choice(estimator) -> None:
    """Refuse ``max_depth`` with ``tree="c45"``: C4.5 has no depth limit.

    Raises
    ------
    ValueError
        If ``estimator.tree == "c45"`` and ``estimator.max_depth`` is not None.
    """
    if estimator.tree == "c45" and estimator.max_depth is not None:
        raise InputError(f"max_depth={estimator.max_depth!r} applies to tree='cart-entropy'; "
                         "the c45 tree (J48) has no depth limit: leave max_depth at none")


def nominal_modes(X, nominal, n_categories):
    """Training mode of each nominal column (the lowest code on ties, 0 when all are missing).

    Returns
    -------
    ndarray of int of shape (len(nominal),)
    """
    modes = np.zeros(len(nominal), dtype=np.intp)
    for j, (f, r) in enumerate(zip(nominal, n_categories)):
        seen = X[~np.isnan(X[:, f]), f].astype(np.intp)
        modes[j] = int(np.argmax(np.bincount(seen, minlength=int(r)))) if seen.size else 0
    return modes


def bootstrap_counts(rng, n_samples, n_bags):
    """Bootstrap bags as counts: ``n_bags`` draws of ``n_samples`` rows with replacement.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the draws (``n_bags * n_samples`` integers, bag by bag).
    n_samples : int
        Number of training rows ``N`` (>= 1); every bag has ``N`` draws.
    n_bags : int
        Number of bags.

    Returns
    -------
    counts : ndarray of float64 of shape (n_bags, n_samples)
        ``counts[b, i]`` = times row ``i`` was drawn into bag ``b``; each row
        of ``counts`` sums to ``n_samples``.
    """
    draws = rng.integers(0, n_samples, size=(n_bags, n_samples))
    offsets = (np.arange(n_bags) * n_samples)[:, None]
    flat = np.bincount((draws + offsets).ravel(), minlength=n_bags * n_samples)
    return flat.reshape(n_bags, n_samples).astype(np.float64)


def fit_weighted_tree(X, y, counts, *, min_samples_leaf=2, max_depth=None, random_state=None,
                      check_input=True):
    """Grow the unpruned entropy tree of ``cart-entropy`` on a bag given as counts.

    The result equals :class:`~ensemblekit.classifiers.cart.CartEntropyTree` (with the
    same ``min_samples_leaf``, ``max_depth`` and ``random_state``) fitted on
    ``X`` and ``y`` with row ``i`` written out ``counts[i]`` times: rows of
    count 0 take no part; class frequencies and entropies count the repeats;
    a leaf must hold at least ``min_samples_leaf`` instances counting repeats
    and a node is split only if it holds at least ``2 * min_samples_leaf``
    (a leaf weight of at least ``min_samples_leaf - 0.25``: counts are whole
    numbers, and twice that bound is the node-size rule); cut points are
    midpoints between adjacent distinct values of the drawn rows. Features
    are tried in the same random order, so even ties of gain are broken
    alike. One difference remains: a missing value reaching a node that saw
    no missing value in training goes to the child with more *distinct* rows
    (scikit-learn counts rows there, not weights), where the written-out bag
    sends it to the child with more instances.

    Parameters
    ----------
    X : ndarray of float32 of shape (n_samples, n_features)
        Training features (NaN = missing, routed as by ``CartEntropyTree``). float32
        avoids a conversion copy per tree (scikit-learn's trees work in float32).
    y : ndarray of shape (n_samples,)
        Class codes of *all* rows, so that every tree's ``classes_`` covers
        every class even when the bag lacks one.
    counts : ndarray of shape (n_samples,)
        Non-negative whole numbers, not all 0.
    min_samples_leaf : int, default=2
        Minimum instances per leaf, repeats counted (J48's ``-M``).
    max_depth : int or None, default=None
        Depth limit; None grows the tree fully.
    random_state : int or None, default=None
        Seed of the feature order at each node (decides exact ties of gain).
    check_input : bool, default=True
        Passed to scikit-learn's ``fit``. ``False`` skips its input checks
        (for a float32 C-ordered ``X`` already checked) and must only be used
        when ``X`` has no NaN: scikit-learn then treats no value as missing.

    Returns
    -------
    tree : sklearn.tree.DecisionTreeClassifier
        The fitted tree; its ``predict_proba`` gives the bag's class
        frequencies in the leaf.
    """
    total = float(np.sum(counts))
    m = int(min_samples_leaf)
    kwargs = {"min_samples_leaf": 1, "min_weight_fraction_leaf": 0.0}
    if total < 2 * m:
        # no split can leave m instances on both sides: a single leaf
        kwargs["min_samples_split"] = X.shape[0] + 1
    else:
        kwargs["min_weight_fraction_leaf"] = min(0.5, (m - 0.25) / total)
    tree = DecisionTreeClassifier(
        criterion="entropy", splitter="best", max_depth=max_depth, random_state=random_state,
        **kwargs,
    )
    return tree.fit(X, y, sample_weight=counts, check_input=check_input)


def fit_weighted_c45(X, y, counts, *, min_samples_leaf=2, nominal_features=(),
                     n_categories=(), n_classes=None):
    """Grow the unpruned C4.5 tree (Weka's ``J48 -U -M m``) on a bag given as counts.

    Weka's J48 weighs every instance, also in its ``-M`` rule, so the tree
    grown from ``counts`` as instance weights is the tree grown on the bag
    written out with its repeats (as Weka's ``Bagging`` builds its bags, up to
    the order of the sums of a missing value's fractional weights); rows of
    count 0 take no part. The arrays
    are not checked (the ensembles check them once, at ``fit``): the tree is
    grown by :func:`ensemblekit.classifiers.c45.grow_c45` and equals
    ``C45Tree(unpruned=True, ...).fit(X, y, sample_weight=counts)``, but for the
    last bits of its class weights where rows have missing values (J48's own
    bookkeeping, ``weka_sums``, is not replayed per bag: it costs about as much
    as the growth).

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
        Numeric columns as numbers, the columns in ``nominal_features`` as
        codes ``0 .. r - 1``; NaN = missing (fractional instances).
    y : ndarray of int of shape (n_samples,)
        Class codes ``0 .. n_classes - 1`` of *all* rows.
    counts : ndarray of shape (n_samples,)
        Non-negative whole numbers, not all 0.
    min_samples_leaf : int, default=2
        J48's ``-M``.
    nominal_features : ndarray of int
        Sorted indices of the nominal columns.
    n_categories : ndarray of int
        Declared values of each of them, in that order.
    n_classes : int
        Number of classes (J48's class distributions have one entry per
        declared class, also those the bag lacks).

    Returns
    -------
    tree : ensemblekit.classifiers.c45.C45Tree
        The fitted tree; ``predict_proba`` has ``n_classes`` columns.
    """
    from .c45 import C45Tree

    nominal = np.asarray(nominal_features, dtype=np.int64)
    categories = np.asarray(n_categories, dtype=np.int64)
    tree = C45Tree(min_samples_leaf=min_samples_leaf, unpruned=True, nominal_features=nominal,
                   n_categories=categories, n_classes=int(n_classes))
    return tree._grow(X, y, counts, nominal, categories, np.arange(int(n_classes)),
                      weka_sums=False)


def c45_proba(tree, X, nominal_mask):
    """A fitted C4.5 tree's ``predict_proba`` on rows already checked, compiled.

    The lazy ensembles grow a tree per test row and apply it to that one row, while
    fitting (numba is loaded to grow the tree anyway); the compiled walk
    (:func:`ensemblekit.classifiers._c45_kernels.predict_proba`) costs a microsecond
    there, where the numpy walk of the model class costs a few hundred. Both add the
    same numbers in the same order: the probabilities are equal to the last bit
    (tests/classifiers/test_c45_model.py compares them).

    Parameters
    ----------
    tree : ensemblekit.classifiers.c45_model.C45Model
    X : ndarray of float64 of shape (n_samples, n_features), C-ordered
        Codes of the tree's nominal columns in range; NaN = missing.
    nominal_mask : ndarray of bool of shape (n_features,)
        Which columns are nominal.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    from . import _c45_kernels as kernels

    return kernels.predict_proba(X, tree.feature_, tree.threshold_, nominal_mask,
                                 tree.child_start_, tree.n_children_, tree.value_,
                                 tree.bag_value_, tree.is_empty_, *tree._totals(),
                                 tree.classes_.size, bool(getattr(tree, "laplace", False)))


class BaggedTreeClassifier(BaggedTreesModel, ClassifierMixin, BaseEstimator):
    """Traditional bagging (TB) of unpruned trees, the rival of the lazy ensembles.

    ``n_estimators`` trees, each grown on its own bootstrap bag of ``N``
    instances drawn with replacement from the ``N`` training rows. Bags are
    count vectors passed as instance weights. The tree is ``tree="c45"``, the
    unpruned C4.5 tree (Weka's ``J48 -U``, :func:`fit_weighted_c45`), or
    ``"cart-entropy"``, scikit-learn's binary entropy tree
    (:func:`fit_weighted_tree`, nominal columns one-hot), both with at least
    ``min_samples_leaf`` instances in two branches / per leaf.
    ``voting="soft"`` averages the trees' leaf class distributions, as Weka's
    ``Bagging``; ``"hard"`` gives each tree one vote for its class and returns
    the vote shares as probabilities. ``predict`` takes the class with the
    largest probability, the first in ``classes_`` on ties.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees (the papers' ensemble size L), >= 1.
    voting : {"soft", "hard"}, default="soft"
        Average of probabilities, or majority vote.
    tree : {"c45", "cart-entropy"}, default="c45"
        The base tree (see the module docstring).
    min_samples_leaf : int, default=2
        Minimum instances per leaf, repeats counted (J48's ``-M 2``), >= 1.
    max_depth : int or None, default=None
        Depth limit of every ``cart-entropy`` tree (None: unlimited); must
        stay None with ``tree="c45"``.
    nominal_features : array-like of int or None, default=None
        Indices of the columns holding nominal codes ``0 .. r - 1`` (NaN =
        missing); all other columns are numeric.
    n_categories : array-like of int or None, default=None
        Number of categories of each nominal column, in the order of the
        sorted ``nominal_features``; default: the largest code seen plus one.
    random_state : int, RandomState instance or None, default=None
        Seeds the bags (and the ``cart-entropy`` trees' feature order).
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and ``predict_proba`` has a column for each, 0 for a class without
        training rows. None: the distinct labels of ``y``.

    Attributes
    ----------
    estimators_ : list of C45Tree or of CartEntropyModel
        The fitted trees (fitted on the class codes into ``classes_`` of all
        training rows, so every tree knows every class that has rows); a
        ``cart-entropy`` tree is kept as the node arrays of the scikit-learn
        tree grown (:func:`ensemblekit.classifiers.cart.cart_model`).
    bag_counts_ : ndarray of shape (n_estimators, n_samples)
        Bootstrap counts of every bag (fitting only: a model file does not keep them).
    nominal_features_, numeric_features_, n_categories_, modes_ : ndarray of int64
        The coded layout of the columns, as
        :class:`~ensemblekit.classifiers.bagging_model.BaggedTreesModel` describes it.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted, or ``arange(n_classes)``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` had string column names.

    References
    ----------
    .. [1] L. Breiman, "Bagging predictors", Machine Learning 24(2), 1996.
    .. [2] X. Zhu and Y. Yang, Pattern Recognition 41(10), 2008 (TB).
    .. [3] H. Homayouni, S. Hashemi and A. Hamzeh, "A Lazy Ensemble Learning
       Method to Classification", Table 2 (TB column: Weka's Bagging of J48 -U).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]] * 3)
    >>> y = np.array([0, 0, 0, 1, 1, 1] * 3)
    >>> clf = BaggedTreeClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> clf.predict([[0.5], [4.5]]).tolist()
    [0, 1]
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def fit(self, X, y):
        """Draw the bags and grow one tree on each.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns as numbers, the columns in ``nominal_features`` as
            codes ``0 .. r - 1``; NaN = missing (handled by the trees).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : BaggedTreeClassifier

        Raises
        ------
        ValueError
            On a bad parameter (``n_estimators`` < 1, ``voting`` not "soft" or
            "hard", ``tree`` not "c45" or "cart-entropy", ``min_samples_leaf``
            < 1, ``max_depth`` < 1, or set with ``tree="c45"``), ``X`` empty,
            not 2-D or infinite, a nominal column holding a value that is not
            a code, ``y`` continuous or of another length, or, with
            ``n_classes``, a label that is not a code ``0 .. n_classes - 1``.
        """
        validate_params(self)
        check_tree_choice(self)
        with quiet_finite_check():
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        y = column_or_1d(y)
        check_classification_targets(y)
        self.classes_, codes = declared_classes(y, self.n_classes)
        nominal, categories, numeric = coded_layout(X, self.nominal_features, self.n_categories)
        self.nominal_features_ = nominal.astype(np.int64)
        self.n_categories_ = categories.astype(np.int64)
        self.numeric_features_ = numeric.astype(np.int64)
        self.modes_ = nominal_modes(X, nominal, categories).astype(np.int64)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        rng = np.random.default_rng(seed)
        counts = bootstrap_counts(rng, X.shape[0], int(self.n_estimators))
        tree_seeds = rng.integers(0, np.iinfo(np.int32).max, size=int(self.n_estimators))
        if self.tree == "c45":
            self.estimators_ = [
                fit_weighted_c45(X, codes, counts[b], min_samples_leaf=self.min_samples_leaf,
                                 nominal_features=self.nominal_features_,
                                 n_categories=self.n_categories_, n_classes=self.classes_.size)
                for b in range(int(self.n_estimators))
            ]
        else:
            X32 = self._tree_matrix(X)
            # each scikit-learn tree is kept as the numpy model of its node arrays
            self.estimators_ = [
                cart_model(fit_weighted_tree(X32, codes, counts[b],
                                             min_samples_leaf=self.min_samples_leaf,
                                             max_depth=self.max_depth,
                                             random_state=int(tree_seeds[b])))
                for b in range(int(self.n_estimators))
            ]
        self.bag_counts_ = counts
        return self

    def predict_proba(self, X):
        """Mean leaf class distributions (soft) or vote shares (hard) of the trees.

        :meth:`BaggedTreesModel.predict_proba
        <ensemblekit.classifiers.bagging_model.BaggedTreesModel.predict_proba>` after
        scikit-learn's checks of ``X`` (feature names of a data frame).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            As in :meth:`fit`; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has the wrong number of columns or infinite values, or
            (``c45``) a nominal column holds a value that is not a code.
        """
        check_is_fitted(self, "estimators_")
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        return super().predict_proba(X)
