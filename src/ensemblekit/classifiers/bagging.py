"""``bagging`` (TB): traditional bagging of the unpruned ``c45`` tree.

The rival the lazy-ensemble papers call TB (Zhu & Yang 2008; Homayouni,
Hashemi & Hamzeh): ``n_estimators`` unpruned trees, each grown on a bootstrap
bag of the ``N`` training instances (Breiman 1996), combined by averaging their
class-probability distributions as Weka's ``Bagging`` does (``voting="soft"``)
or by majority vote (``voting="hard"``).

A bag is a vector of bootstrap *counts* (how many times each training row was
drawn) given to the tree as ``sample_weight``; no row is copied.
:func:`fit_weighted_tree` grows, from such counts, the same tree
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

from ..class_domain import N_CLASSES, declared_classes, widen_proba
from ..constraints import MAX_MEMBERS, Constraint, validate_params

__all__ = ["TREE_CONSTRAINTS", "BaggedTreeClassifier", "bootstrap_counts", "fit_weighted_tree"]


#: The trees' parameters, shared by ``bagging`` and the lazy ensembles.
TREE_CONSTRAINTS = {
    "min_samples_leaf": Constraint("int", "minimum instances per leaf (J48 -M)", low=1),
    "max_depth": Constraint("int", "maximum tree depth (none = unlimited)", low=1, none_ok=True),
}


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
    """Grow the unpruned entropy tree of ``c45`` on a bag given as counts.

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


class BaggedTreeClassifier(ClassifierMixin, BaseEstimator):
    """Traditional bagging (TB) of unpruned entropy trees, the rival of the lazy ensembles.

    ``n_estimators`` trees, each the ``c45`` tree (:class:`~ensemblekit.classifiers.cart.CartEntropyTree`:
    scikit-learn's binary entropy tree, unpruned, at least ``min_samples_leaf``
    instances per leaf) grown on its own bootstrap bag of ``N`` instances
    drawn with replacement from the ``N`` training rows. Bags are count
    vectors passed as sample weights (see :func:`fit_weighted_tree`).
    ``voting="soft"`` averages the trees' leaf class frequencies, as Weka's
    ``Bagging``; ``"hard"`` gives each tree one vote for its class and returns
    the vote shares as probabilities. ``predict`` takes the class with the
    largest probability, the first in ``classes_`` on ties.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees (the papers' ensemble size L), >= 1.
    voting : {"soft", "hard"}, default="soft"
        Average of probabilities, or majority vote.
    min_samples_leaf : int, default=2
        Minimum instances per leaf, repeats counted (J48's ``-M 2``), >= 1.
    max_depth : int or None, default=None
        Depth limit of every tree (None: unlimited).
    random_state : int, RandomState instance or None, default=None
        Seeds the bags and the trees.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and ``predict_proba`` has a column for each, 0 for a class without
        training rows. None: the distinct labels of ``y``.

    Attributes
    ----------
    estimators_ : list of sklearn.tree.DecisionTreeClassifier
        The fitted trees (fitted on the class codes into ``classes_`` of all
        training rows, so every tree knows every class that has rows).
    bag_counts_ : ndarray of shape (n_estimators, n_samples)
        Bootstrap counts of every bag.
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
       Method to Classification", Table 2 (TB column).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]] * 3)
    >>> y = np.array([0, 0, 0, 1, 1, 1] * 3)
    >>> clf = BaggedTreeClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> clf.predict([[0.5], [4.5]]).tolist()
    [0, 1]
    """

    _parameter_constraints = {
        "n_estimators": Constraint("int", "number of bagged trees (L)", low=1, high=MAX_MEMBERS),
        "voting": Constraint("choice", "mean tree probabilities (Weka) or majority vote",
                             choices=("soft", "hard")),
        **TREE_CONSTRAINTS,
        "random_state": Constraint("any", "seed of the bags and the trees"),
        "n_classes": N_CLASSES,
    }

    def __init__(self, n_estimators=10, voting="soft", min_samples_leaf=2, max_depth=None,
                 random_state=None, n_classes=None):
        self.n_estimators = n_estimators
        self.voting = voting
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
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
            Training features (numbers; NaN = missing, routed by the trees).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : BaggedTreeClassifier

        Raises
        ------
        ValueError
            On a bad parameter (``n_estimators`` < 1, ``voting`` not "soft" or
            "hard", ``min_samples_leaf`` < 1, ``max_depth`` < 1), ``X`` empty,
            not 2-D or infinite, ``y`` continuous or of another length, or,
            with ``n_classes``, a label that is not a code ``0 .. n_classes - 1``.
        """
        validate_params(self)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        y = column_or_1d(y)
        check_classification_targets(y)
        self.classes_, codes = declared_classes(y, self.n_classes)
        X32 = np.asarray(X, dtype=np.float32)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        rng = np.random.default_rng(seed)
        counts = bootstrap_counts(rng, X.shape[0], int(self.n_estimators))
        tree_seeds = rng.integers(0, np.iinfo(np.int32).max, size=int(self.n_estimators))
        self.estimators_ = [
            fit_weighted_tree(X32, codes, counts[b], min_samples_leaf=self.min_samples_leaf,
                              max_depth=self.max_depth, random_state=int(tree_seeds[b]))
            for b in range(int(self.n_estimators))
        ]
        self.bag_counts_ = counts
        return self

    def predict_proba(self, X):
        """Mean leaf class frequencies (soft) or vote shares (hard) of the trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to 1 (0 for a declared class
            without training rows).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has the wrong number of columns or infinite values.
        """
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        X32 = np.asarray(X, dtype=np.float32)
        present = self.estimators_[0].classes_  # the codes with training rows, in every tree
        proba = np.zeros((X.shape[0], present.size))
        for tree in self.estimators_:
            p = tree.predict_proba(X32)
            if self.voting == "soft":
                proba += p
            else:
                proba[np.arange(X.shape[0]), np.argmax(p, axis=1)] += 1.0
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
