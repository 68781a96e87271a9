"""``bagged-k2`` (BGBN): bagging of the ``k2`` Bayesian-network classifier.

:class:`BaggedK2Classifier` is the bagging baseline of the Inner Ensembles
paper (Abbasian et al. 2013, "BGBN"): ``n_estimators`` :class:`K2Classifier`
members, each learnt -- discretisation, structure and CPTs -- on its own bag
of resampled training instances, whose class-probability distributions are
averaged (a soft vote). This is what Weka's
``weka.classifiers.meta.Bagging -W weka.classifiers.bayes.BayesNet`` does:
Bagging draws resampled instance sets and ``distributionForInstance`` sums
the members' distributions and normalises the sum, i.e. takes their mean,
and every member BayesNet runs its own supervised discretisation on the bag
it is given.

The resampling and averaging are delegated to scikit-learn's
:class:`~sklearn.ensemble.BaggingClassifier` (bags drawn by row indexing,
since :class:`K2Classifier` takes no ``sample_weight``; all features, in
their original order, for every member). Its ``predict_proba`` adds each
member's probabilities into the columns of the member's own classes
(``proba[:, member.classes_] += member_proba``) and divides by
``n_estimators``, so a member whose bag lacked a class contributes 0 to that
class and the rows still sum to one. With declared classes (``n_classes``)
every member knows them all, as Weka's members share the ARFF header: a class
missing from a bag, or from the whole training set, gets each member's
smoothed mass.

References
----------
.. [1] Breiman, L. (1996). Bagging predictors. Machine Learning 24(2),
   123-140.
.. [2] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner
   Ensembles: Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD
   2013, LNCS 8190, pp. 33-48 (the BGBN baseline of Table 1).
.. [3] Weka 3.9: ``weka.classifiers.meta.Bagging`` (``buildClassifier``,
   ``distributionForInstance``), ``weka.classifiers.bayes.BayesNet``.
   University of Waikato.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import BaggingClassifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ensemblekit.errors import InputError

from ..class_domain import declared_classes
from ..constraints import MAX_MEMBERS, Constraint, validate_params
from ..discretize import MDLDiscretizer
from ..trust import (
    COUNT_MAX,
    CheckContext,
    check_bagging,
    checked_array,
    class_codes,
    class_labels,
    declared_codes,
    feature_count,
    fitted_member,
    fitted_only,
    flag_value,
    instance_list,
    n_jobs_attr,
    nested_attr,
)
from .classifier import K2Classifier, _missing_target_mask
from .classifier_model import K2_CONSTRAINTS

__all__ = ["BaggedK2Classifier"]


class _DeclaredClassBagging(BaggingClassifier):
    """scikit-learn's bagging whose classes are its members' declared class codes.

    :class:`~sklearn.ensemble.BaggingClassifier` takes its classes from the
    labels it is given (``np.unique``) and fits the members on indices into
    them. When the member declares ``n_classes``, this subclass instead keeps
    the codes ``0 .. n_classes - 1`` as they are, so every member (and the
    ensemble) has a probability column for every declared class; otherwise it
    is scikit-learn's class unchanged.
    """

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(check_bagging))

    def _validate_y(self, y):
        n_classes = getattr(self.estimator, "n_classes", None)
        if n_classes is None:
            return super()._validate_y(y)
        self.classes_, codes = declared_classes(column_or_1d(y, warn=True), n_classes)
        self.n_classes_ = int(n_classes)
        return codes


def _check_bagged_k2(est, ctx: CheckContext) -> None:
    """``BaggedK2Classifier``: K2 members over all columns, in order, voting on ``classes_``.

    scikit-learn's bagging adds each member's probabilities at the columns its
    ``classes_`` name (codes into the ensemble's classes), and ``show`` redraws
    the bags from ``bagging_``'s seeds and sizes. ``bagging_`` is scikit-learn's
    class (model files written before declared classes) or the subclass that
    keeps declared class codes.
    """
    d = feature_count(ctx, est)
    classes = class_labels(ctx, est)
    declared_codes(ctx, est, classes)
    bag = ctx.instance(ctx.attr(est, "bagging_"), "bagging_",
                       (BaggingClassifier, _DeclaredClassBagging))
    members = instance_list(ctx, ctx.attr(est, "estimators_"), "estimators_", (K2Classifier,),
                            nonempty=True)
    inner = instance_list(ctx, nested_attr(ctx, bag, "estimators_", "bagging_.estimators_"),
                          "bagging_.estimators_", (K2Classifier,), length=len(members))
    if ctx.integer(bag, "bagging_.n_features_in_", value=nested_attr(ctx, bag, "n_features_in_")) != d:
        ctx.fail("bagging_ reads another number of columns than the model")
    bag_classes = class_labels(ctx, bag, "bagging_.classes_", value=nested_attr(ctx, bag, "classes_"))
    if bag_classes.dtype.kind != classes.dtype.kind or not np.array_equal(bag_classes, classes):
        ctx.fail("classes_ are not bagging_.classes_")
    if ctx.integer(bag, "bagging_.n_classes_", value=nested_attr(ctx, bag, "n_classes_")) != classes.size:
        ctx.fail("bagging_.n_classes_ is not the number of classes")
    if ctx.integer(bag, "bagging_.n_estimators",
                   value=nested_attr(ctx, bag, "n_estimators")) != len(inner):
        ctx.fail("bagging_.n_estimators is not the number of members")
    n_jobs_attr(ctx, bag, "bagging_.n_jobs")
    lists = [("estimators_", members)]
    if inner is not members:
        lists.append(("bagging_.estimators_", inner))
    for label, listed in lists:
        for i, member in enumerate(listed):
            name = f"{label}[{i}]"
            fitted_member(ctx, member, name, d)
            class_codes(ctx, nested_attr(ctx, member, "classes_", f"{name}.classes_"), f"{name}.classes_",
                        classes.size)
    features = nested_attr(ctx, bag, "estimators_features_", "bagging_.estimators_features_")
    if type(features) is not list or len(features) != len(inner) or not all(
            type(f) is np.ndarray and f.dtype.kind in "iu" and f.shape == (d,)
            and np.array_equal(f, np.arange(d)) for f in features):
        ctx.fail("bagging_.estimators_features_ does not give every member all columns in order")
    # what estimators_samples_ (show) redraws: one seed per member, bags of _max_samples rows
    checked_array(ctx, nested_attr(ctx, bag, "_seeds", "bagging_._seeds"), "bagging_._seeds", kinds="iu",
                  shape=(len(inner),))
    n_rows = ctx.integer(bag, "bagging_._n_samples", 1, COUNT_MAX,
                         value=nested_attr(ctx, bag, "_n_samples"))
    ctx.integer(bag, "bagging_._max_samples", 1, n_rows, value=nested_attr(ctx, bag, "_max_samples"))
    if ctx.integer(bag, "bagging_._max_features", value=nested_attr(ctx, bag, "_max_features")) != d:
        ctx.fail("bagging_._max_features is not the number of columns")
    flag_value(ctx, nested_attr(ctx, bag, "bootstrap"), "bagging_.bootstrap")
    if (nested_attr(ctx, bag, "bootstrap_features") is not False
            or nested_attr(ctx, bag, "_sample_weight") is not None):
        ctx.fail("bagging_ draws features or weights rows, which ensemblekit never does")


class BaggedK2Classifier(ClassifierMixin, BaseEstimator):
    """Bagging of K2 Bayesian-network classifiers (BGBN), averaging probabilities.

    Every member is a :class:`~ensemblekit.bayesnet.classifier.K2Classifier`
    with the K2 parameters below, fitted on its own bag: ``max(1,
    int(max_samples * n))`` training rows drawn with replacement
    (``bootstrap=True``, Breiman's bagging and Weka's ``Bagging``) or without
    it. Each member discretises the numeric columns on its bag only (MDL cut
    points of the bag, as Weka's Bagging of BayesNet does), fills missing
    values with the bag's modes, searches its structure and estimates its
    CPTs on the bag. The ensemble's class probabilities are the mean of the
    members' probabilities (soft vote); a class absent from a member's bag
    gets probability 0 from that member. ``predict`` returns the class with
    the largest mean probability, the first in ``classes_`` on ties (as
    Weka's ``Utils.maxIndex``).

    Nominal columns keep the number of categories of the *whole* training
    set in every member (``n_categories`` when given, else the largest code
    seen in ``fit`` plus one), as Weka's members share the ARFF header; a
    member whose bag lacks a category therefore still accepts it at
    prediction time.

    Parameters
    ----------
    n_estimators : int >= 1, default=10
        Number of members (Weka's ``-I``; the paper's ensemble size).
    max_samples : float in (0, 1], default=1.0
        Size of each bag as a fraction of the training rows (Weka's ``-P``
        divided by 100); at least one row.
    bootstrap : bool, default=True
        Draw the bag with replacement (bagging) or without (subsampling, the
        protocol of the paper's Table 1).
    random_state : int, RandomState instance or None, default=None
        Seed of the bags; an int makes ``fit`` reproducible.
    max_parents : int >= 0 or None, default=2
        K2 parameter of every member: most parents per node, the class parent
        included (Weka's ``-P``).
    init : {"naive-bayes", "empty"}, default="naive-bayes"
        K2 parameter: initial structure of every member.
    scoring : {"loo-probability", "loo-accuracy"}, default="loo-probability"
        K2 parameter: the global leave-one-out score of the structure search.
    alpha : float > 0, default=0.5
        K2 parameter: Dirichlet pseudo-count of the CPTs.
    discretize : {"mdl", "equal-frequency"}, default="mdl"
        K2 parameter: discretisation of the numeric columns, fitted per bag.
    n_bins : int >= 1, default=10
        K2 parameter: bins for ``discretize="equal-frequency"``.
    nominal_features : array-like of int or None, default=None
        Indices of the columns holding nominal codes ``0 .. r - 1`` (NaN =
        missing); all other columns are numeric.
    n_categories : array-like of int or None, default=None
        Number of categories of each nominal column, in the order of the
        sorted ``nominal_features``. Default: the largest code seen in the
        whole training set plus one (not per bag).
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and every member has ``n_classes`` class values, so a class absent
        from a bag (or from the training set) gets each member's smoothed
        mass, as in Weka's Bagging of BayesNet. None: the distinct labels of
        ``y``, each member knowing only the classes of its bag.

    Attributes
    ----------
    estimators_ : list of n_estimators K2Classifier
        The fitted members. As in scikit-learn's ``BaggingClassifier`` they
        were fitted on class *indices* into ``classes_``, so a member's
        ``classes_`` holds the indices of the classes present in its bag
        (all ``n_classes`` codes when ``n_classes`` is given).
    estimators_samples_ : list of n_estimators ndarrays of int
        Row indices of every bag (with repeats when ``bootstrap=True``),
        counted among the training rows that have a class label.
    bagging_ : sklearn.ensemble.BaggingClassifier
        The fitted scikit-learn ensemble doing the resampling and averaging
        (a subclass that keeps declared class codes).
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted (``np.unique``), or ``arange(n_classes)``.
    n_features_in_ : int
        Number of columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` had string column names.

    See Also
    --------
    ensemblekit.bayesnet.classifier.K2Classifier : the member classifier.

    References
    ----------
    .. [1] Breiman, L. (1996). Bagging predictors. Machine Learning 24(2),
       123-140.
    .. [2] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013).
       Inner Ensembles: Using Ensemble Methods Inside the Learning Algorithm.
       ECML PKDD 2013, LNCS 8190, pp. 33-48 (BGBN, Table 1).
    .. [3] Weka 3.9: ``weka.classifiers.meta.Bagging -W
       weka.classifiers.bayes.BayesNet``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0], [2.0, 1], [3.0, 0], [4.0, 1], [5.0, 1], [6.0, 1]] * 3)
    >>> y = ["a", "a", "a", "b", "b", "b"] * 3
    >>> clf = BaggedK2Classifier(n_estimators=5, random_state=0,
    ...                          nominal_features=[1]).fit(X, y)
    >>> len(clf.estimators_)
    5
    >>> clf.predict([[1.5, 0], [5.5, 1]]).tolist()
    ['a', 'b']
    """

    #: ensemblekit classes besides the registry's estimators that the state may hold.
    _state_parts = (_DeclaredClassBagging,)
    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_bagged_k2))

    _parameter_constraints = {
        "n_estimators": Constraint("int", "number of bagged networks", low=1, high=MAX_MEMBERS),
        "max_samples": Constraint("float", "bag size as a fraction of the training set", low=0,
                                  high=1, closed="right"),
        "bootstrap": Constraint("bool", "draw bags with replacement"),
        "random_state": Constraint("any", "seed of the bags"),
        **K2_CONSTRAINTS,
    }

    def __init__(
        self,
        n_estimators=10,
        max_samples=1.0,
        bootstrap=True,
        random_state=None,
        max_parents=2,
        init="naive-bayes",
        scoring="loo-probability",
        alpha=0.5,
        discretize="mdl",
        n_bins=10,
        nominal_features=None,
        n_categories=None,
        n_classes=None,
    ):
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.random_state = random_state
        self.max_parents = max_parents
        self.init = init
        self.scoring = scoring
        self.alpha = alpha
        self.discretize = discretize
        self.n_bins = n_bins
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_classes = n_classes

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------
    def _member(self, n_categories) -> K2Classifier:
        return K2Classifier(
            max_parents=self.max_parents,
            init=self.init,
            scoring=self.scoring,
            alpha=self.alpha,
            discretize=self.discretize,
            n_bins=self.n_bins,
            nominal_features=self.nominal_features,
            n_categories=n_categories,
            n_classes=self.n_classes,
        )

    def _full_n_categories(self, X: np.ndarray):
        """Categories per nominal column on the whole training set.

        Also checks ``nominal_features``, ``n_categories`` and the nominal
        codes on every row, so that a bad code is reported even when no bag
        happens to draw its row.
        """
        if self.nominal_features is None:
            return self.n_categories
        disc = MDLDiscretizer(
            method="equal-frequency", n_bins=1, nominal_features=self.nominal_features
        ).fit(X, n_categories=self.n_categories)
        return [int(r) for r in disc.n_bins_[disc.nominal_features_]]

    def fit(self, X, y):
        """Draw the bags and fit one K2 network on each.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns raw; the columns in ``nominal_features`` hold
            integer codes ``0 .. r - 1``. NaN marks a missing value; infinite
            values are rejected.
        y : array-like of shape (n_samples,)
            Class labels of any type. Rows with a missing label (NaN, or None
            in an object array) are dropped before bagging, as Weka's Bagging
            does (``deleteWithMissingClass``).

        Returns
        -------
        self : BaggedK2Classifier

        Raises
        ------
        ValueError
            On an invalid parameter (``n_estimators`` not an integer >= 1,
            ``max_samples`` outside (0, 1], ``bootstrap`` not a bool, or an
            invalid K2 parameter); ``y`` missing, continuous, infinite or
            entirely missing; ``X`` empty, not 2-D or holding infinite values;
            a nominal column with negative or fractional codes or codes
            ``>= n_categories``; with ``n_classes``, a label that is not a
            code ``0 .. n_classes - 1``.
        """
        validate_params(self)
        if y is None:
            raise InputError(
                f"This {type(self).__name__} estimator requires y to be passed, "
                "but the target y is None."
            )
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        if y.dtype.kind == "f" and np.isinf(y).any():
            raise InputError("Input y contains infinity.")
        keep = ~_missing_target_mask(y)
        if not keep.any():
            raise InputError("Input y contains NaN only: no row has a class label.")
        X, y = X[keep], y[keep]
        check_classification_targets(y)

        member = self._member(self._full_n_categories(X))
        self.bagging_ = _DeclaredClassBagging(
            estimator=member,
            n_estimators=int(self.n_estimators),
            max_samples=float(self.max_samples),
            max_features=1.0,
            bootstrap=bool(self.bootstrap),
            bootstrap_features=False,
            random_state=self.random_state,
        )
        with warnings.catch_warnings():
            # scikit-learn advises an integer max_samples when a fraction gives
            # small bags; this estimator takes fractions only (as Weka's -P).
            warnings.filterwarnings(
                "ignore", message="Using the fractional value", category=UserWarning
            )
            self.bagging_.fit(X, y)
        # K2's node order is the column order: every member must see all
        # columns, unpermuted (scikit-learn draws them "without replacement").
        identity = np.arange(X.shape[1])
        for features in self.bagging_.estimators_features_:
            if not np.array_equal(features, identity):  # pragma: no cover
                raise RuntimeError(
                    "BaggingClassifier permuted the feature columns; K2 needs them in order"
                )
        self.estimators_ = self.bagging_.estimators_
        self.classes_ = self.bagging_.classes_
        return self

    @property
    def estimators_samples_(self):
        check_is_fitted(self, "bagging_")
        return self.bagging_.estimators_samples_

    def predict_proba(self, X):
        """Mean of the members' class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Same layout as in :meth:`fit`; each member discretises with its
            own cut points and fills NaN with its own modes.

        Returns
        -------
        ndarray of float of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one. A member contributes
            0 to the classes absent from its bag.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has the wrong number of columns or infinite values, or a
            nominal column holds a code outside ``0 .. n_categories - 1``.
        """
        check_is_fitted(self, "bagging_")
        X = validate_data(
            self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False
        )
        return self.bagging_.predict_proba(X)

    def predict(self, X):
        """Class with the largest mean probability (the first class on ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.

        Raises
        ------
        See :meth:`predict_proba`.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
