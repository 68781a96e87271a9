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

from ..class_domain import N_CLASSES, declared_classes, widen_proba
from ..constraints import MAX_MEMBERS, Constraint, validate_params
from ..trust import (
    CheckContext,
    checked_array,
    class_codes,
    class_labels,
    declared_codes,
    feature_count,
    fitted_member,
    fitted_only,
    float_array,
    index_set,
    instance_list,
    int_array,
    nested_attr,
)
from .coded import coded_layout

__all__ = ["TREES", "TREE_CONSTRAINTS", "BaggedTreeClassifier", "bootstrap_counts",
           "c45_proba", "check_tree_choice", "fit_weighted_c45", "fit_weighted_tree",
           "fitted_tree_choice", "fitted_tree_layout", "nominal_modes", "onehot_tree_matrix"]


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
    ``C45Tree(unpruned=True, ...).fit(X, y, sample_weight=counts)``.

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
    return tree._grow(X, y, counts, nominal, categories, np.arange(int(n_classes)))


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
                                 tree.bag_value_, tree.is_empty_, tree.classes_.size)


def fitted_tree_layout(ctx: CheckContext, est, d: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The coded columns of a tree ensemble; returns ``(nominal, n_categories, width)``.

    ``nominal_features_`` and ``numeric_features_`` split the ``d`` columns,
    ``modes_`` are codes of their columns, and ``width`` is the number of
    columns the ``cart-entropy`` trees read (numeric, then one per category).
    """
    nominal = index_set(ctx, ctx.attr(est, "nominal_features_"), "nominal_features_", d)
    categories = int_array(ctx, ctx.attr(est, "n_categories_"), "n_categories_", low=1,
                           shape=nominal.shape)
    numeric = checked_array(ctx, ctx.attr(est, "numeric_features_"), "numeric_features_", kinds="iu", ndim=1)
    if numeric.tolist() != np.setdiff1d(np.arange(d), nominal).tolist():
        ctx.fail("numeric_features_ is not the list of the columns that are not nominal")
    modes = int_array(ctx, ctx.attr(est, "modes_"), "modes_", shape=nominal.shape)
    if np.any(modes >= categories):
        ctx.fail("modes_ holds a code outside its column's categories")
    return nominal, categories, numeric.size + sum(int(r) for r in categories)


def fitted_tree_choice(ctx: CheckContext, est) -> str:
    """The base tree (``tree``) of bagging or a lazy ensemble, one of ``TREES``."""
    if "tree" not in vars(est):
        ctx.fail("holds no tree choice: the model was written by ensemblekit 0.1, before "
                 "bagging and the lazy ensembles grew c45 trees; fit it again")
    return ctx.choice(est, "tree", TREES)


def _check_c45_members(ctx: CheckContext, trees, name: str, d: int, n_classes: int,
                       nominal: np.ndarray, categories: np.ndarray) -> None:
    """Unpruned C4.5 members: fitted on the owner's ``d`` columns, nominal columns and classes.

    Each member's own state is checked by the C4.5 tree's check; here that it
    reads the columns and gives the probability columns its owner expects.
    """
    for i, tree in enumerate(trees):
        label = f"{name}[{i}]"
        fitted_member(ctx, tree, label, d)
        codes = checked_array(ctx, nested_attr(ctx, tree, "classes_", f"{label}.classes_"),
                              f"{label}.classes_", kinds="iu", ndim=1)
        if codes.tolist() != list(range(n_classes)):
            ctx.fail(f"{label} does not give one probability per class of the model")
        for attr, want in (("nominal_features_", nominal), ("n_categories_", categories)):
            got = checked_array(ctx, nested_attr(ctx, tree, attr, f"{label}.{attr}"), f"{label}.{attr}",
                                kinds="iu")
            if got.tolist() != want.tolist():
                ctx.fail(f"{label}.{attr} is not the model's {attr}")
        if nested_attr(ctx, tree, "unpruned", f"{label}.unpruned") is not True:
            ctx.fail(f"{label} is not an unpruned tree")


def _check_bagged_trees(est, ctx: CheckContext) -> None:
    """``BaggedTreeClassifier``: trees over all columns, each with every class (codes 0 .. C-1).

    ``predict_proba`` adds the trees' probability rows, so each tree must give one
    column per class of ``classes_`` (a ``c45`` tree: per declared class). The
    ``cart-entropy`` trees read the one-hot matrix of the coded columns.
    """
    d = feature_count(ctx, est)
    classes = class_labels(ctx, est)
    n_classes = classes.size
    declared = declared_codes(ctx, est, classes)
    ctx.choice(est, "voting", ("soft", "hard"))
    kind = fitted_tree_choice(ctx, est)
    nominal, categories, width = fitted_tree_layout(ctx, est, d)
    counts = float_array(ctx, ctx.attr(est, "bag_counts_"), "bag_counts_", ndim=2, low=0)
    if kind == "c45":
        from .c45 import C45Tree

        trees = instance_list(ctx, ctx.attr(est, "estimators_"), "estimators_", (C45Tree,),
                              nonempty=True)
        _check_c45_members(ctx, trees, "estimators_", d, n_classes, nominal, categories)
        if counts.shape[0] != len(trees):
            ctx.fail("bag_counts_ does not hold one bag per tree")
        return
    trees = instance_list(ctx, ctx.attr(est, "estimators_"), "estimators_", (DecisionTreeClassifier,),
                          nonempty=True)
    first = None
    for i, tree in enumerate(trees):
        name = f"estimators_[{i}]"
        fitted_member(ctx, tree, name, width)
        codes = class_codes(ctx, nested_attr(ctx, tree, "classes_", f"{name}.classes_"),
                            f"{name}.classes_", n_classes)
        # every class, or (declared classes) every class that has training rows
        if codes.size != n_classes and not declared:
            ctx.fail(f"{name} does not know every class")
        if first is None:
            first = codes
        elif not np.array_equal(codes, first):
            ctx.fail(f"{name} knows other classes than estimators_[0]")
    if counts.shape[0] != len(trees):
        ctx.fail("bag_counts_ does not hold one bag per tree")


class BaggedTreeClassifier(ClassifierMixin, BaseEstimator):
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
    estimators_ : list of C45Tree or of sklearn.tree.DecisionTreeClassifier
        The fitted trees (fitted on the class codes into ``classes_`` of all
        training rows, so every tree knows every class that has rows).
    bag_counts_ : ndarray of shape (n_estimators, n_samples)
        Bootstrap counts of every bag.
    nominal_features_, numeric_features_ : ndarray of int
        Column indices of the nominal and numeric attributes.
    n_categories_ : ndarray of int
        Categories of each nominal column.
    modes_ : ndarray of int
        Training mode of each nominal column (fills its missing values for the
        ``cart-entropy`` trees).
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

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_bagged_trees))

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
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        y = column_or_1d(y)
        check_classification_targets(y)
        self.classes_, codes = declared_classes(y, self.n_classes)
        self.nominal_features_, self.n_categories_, self.numeric_features_ = coded_layout(
            X, self.nominal_features, self.n_categories)
        self.modes_ = nominal_modes(X, self.nominal_features_, self.n_categories_)
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
            self.estimators_ = [
                fit_weighted_tree(X32, codes, counts[b], min_samples_leaf=self.min_samples_leaf,
                                  max_depth=self.max_depth, random_state=int(tree_seeds[b]))
                for b in range(int(self.n_estimators))
            ]
        self.bag_counts_ = counts
        return self

    def _tree_matrix(self, X):
        """What the ``cart-entropy`` trees read: numeric columns, then nominal indicators."""
        return onehot_tree_matrix(X, self.numeric_features_, self.nominal_features_,
                                  self.n_categories_, self.modes_)

    def predict_proba(self, X):
        """Mean leaf class distributions (soft) or vote shares (hard) of the trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            As in :meth:`fit`; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to 1 (0 for a declared class
            without training rows). With ``c45`` trees and soft voting, the sum
            of the trees' rows normalised, as Weka's ``Bagging``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has the wrong number of columns or infinite values, or
            (``c45``) a nominal column holds a value that is not a code.
        """
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        if self.tree == "c45":
            Xt = X
            present = np.arange(self.classes_.size)  # every tree has every declared class
        else:
            Xt = self._tree_matrix(X)
            present = self.estimators_[0].classes_  # the codes with training rows, in every tree
        proba = np.zeros((X.shape[0], present.size))
        for tree in self.estimators_:
            p = tree.predict_proba(Xt)
            if self.voting == "soft":
                proba += p
            else:
                proba[np.arange(X.shape[0]), np.argmax(p, axis=1)] += 1.0
        if self.tree == "c45" and self.voting == "soft":
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
