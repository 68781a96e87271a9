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

The resampling is delegated to scikit-learn's
:class:`~sklearn.ensemble.BaggingClassifier` (bags drawn by row indexing,
since :class:`K2Classifier` takes no ``sample_weight``; all features, in
their original order, for every member). The averaging is the numpy-only
model class's, :class:`~ensemblekit.bayesnet.bagging_model.BaggedK2Model`,
done as ``BaggingClassifier.predict_proba`` does it: each member's
probabilities are added into the columns of the member's own classes
(``proba[:, member.classes_] += member_proba``) and the sum is divided by
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
from ..constraints import validate_params
from ..discretize import MDLDiscretizer
from ..rows import quiet_finite_check
from .bagging_model import BaggedK2Model
from .classifier import K2Classifier, _missing_target_mask

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

    def _validate_y(self, y):
        n_classes = getattr(self.estimator, "n_classes", None)
        if n_classes is None:
            return super()._validate_y(y)
        self.classes_, codes = declared_classes(column_or_1d(y, warn=True), n_classes)
        self.n_classes_ = int(n_classes)
        return codes


class BaggedK2Classifier(BaggedK2Model, ClassifierMixin, BaseEstimator):
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
    estimators_samples_ : list of n_estimators ndarrays of int64
        Row indices of every bag (with repeats when ``bootstrap=True``),
        counted among the training rows that have a class label.
    n_training_rows_ : int
        Number of training rows that have a class label (the rows the bags
        drew from).
    bagging_ : sklearn.ensemble.BaggingClassifier
        The fitted scikit-learn ensemble that drew the bags (a subclass that
        keeps declared class codes). Only the estimator holds it: a model file
        keeps the members and their bags, and prediction does not use it.
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
        with quiet_finite_check():
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
        # what prediction and show read, as BaggedK2Model's declared state
        self.estimators_ = self.bagging_.estimators_
        self.classes_ = self.bagging_.classes_
        self.n_training_rows_ = int(X.shape[0])
        self.estimators_samples_ = [np.asarray(rows, dtype=np.int64)
                                    for rows in self.bagging_.estimators_samples_]
        return self

    def predict_proba(self, X):
        """Mean of the members' class probabilities (see :meth:`BaggedK2Model.predict_proba`).

        ``X`` is first checked as scikit-learn checks it (column names of a
        data frame, ``NotFittedError``); the computation is the model's, which
        gives the bytes ``BaggingClassifier.predict_proba`` gives.

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
        check_is_fitted(self, "estimators_")
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        return super().predict_proba(X)
