"""The fitted ``bagged-k2`` ensemble (BGBN) and its soft vote, with numpy alone.

:class:`BaggedK2Model` holds what a fitted
:class:`~ensemblekit.bayesnet.bagging.BaggedK2Classifier` predicts and
describes itself with: its members, each a
:class:`~ensemblekit.bayesnet.classifier_model.K2Model` fitted on its own bag,
and the training rows of every bag (``show`` reports how many distinct rows
each bag drew). The fit delegates the resampling to scikit-learn's
``BaggingClassifier``; the model keeps none of it, and averages the members'
probabilities the way that class does (``_parallel_predict_proba`` with one
job): a zero matrix to which each member, in order, adds its probabilities at
the columns of its own classes, divided at the end by the number of members.

References
----------
.. [1] Breiman, L. (1996). Bagging predictors. Machine Learning 24(2),
   123-140.
.. [2] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner
   Ensembles: Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD
   2013, LNCS 8190, pp. 33-48 (the BGBN baseline of Table 1).
.. [3] Weka 3.9: ``weka.classifiers.meta.Bagging`` (``distributionForInstance``).
"""

from __future__ import annotations

import numpy as np

from ..constraints import MAX_MEMBERS, Constraint
from ..rows import check_rows
from ..state import Array, ArrayList, Members, Scalar
from .classifier_model import K2_CONSTRAINTS, K2Model, _fail

__all__ = ["BaggedK2Model"]


class BaggedK2Model:
    """A fitted bagging of K2 networks: the members, their bags, the mean of their probabilities.

    The numpy-only part of :class:`~ensemblekit.bayesnet.bagging.BaggedK2Classifier`,
    whose documentation gives the parameters and the fit; a model file is
    rebuilt as this class, its members as
    :class:`~ensemblekit.bayesnet.classifier_model.K2Model`.

    Parameters
    ----------
    n_estimators, max_samples, bootstrap, random_state
        The bagging's parameters; stored only (``n_estimators`` is the number
        of members a stored state must hold).
    max_parents, init, scoring, alpha, discretize, n_bins, nominal_features, n_categories, n_classes
        The members' K2 parameters; stored only.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns; every member reads them all, in order.
    classes_ : ndarray of int64 of shape (n_classes,)
        Class labels, distinct and ascending (``arange(n_classes)`` when
        ``n_classes`` is given).
    n_training_rows_ : int
        Number of training rows with a class label, the rows the bags drew from.
    estimators_ : list of n_estimators K2Model
        The members. Their ``classes_`` are indices into ``classes_``: the
        classes of their bag (all of them when ``n_classes`` is given).
    estimators_samples_ : list of n_estimators ndarrays of int64
        Row indices of every bag, among the ``n_training_rows_`` rows (with
        repeats when ``bootstrap=True``).
    """

    _parameter_constraints = {
        "n_estimators": Constraint("int", "number of bagged networks", low=1, high=MAX_MEMBERS),
        "max_samples": Constraint("float", "bag size as a fraction of the training set", low=0,
                                  high=1, closed="right"),
        "bootstrap": Constraint("bool", "draw bags with replacement"),
        "random_state": Constraint("any", "seed of the bags"),
        **K2_CONSTRAINTS,
    }

    #: What a fit leaves and prediction and ``show`` read (see ensemblekit.state).
    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",), low=0),
        "n_training_rows_": Scalar("int", low=1),
        "estimators_": Members(K2Model, length="n_estimators"),
        "estimators_samples_": ArrayList(Array("int64", ("*",), low=0,
                                               below="n_training_rows_"),
                                         length="n_estimators"),
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

    def model_size(self) -> int:
        """The bagging's size for ``-m model-size``: the arcs of all its networks, summed
        (see :meth:`K2Model.model_size <ensemblekit.bayesnet.classifier_model.K2Model.model_size>`)."""
        return sum(member.model_size() for member in self.estimators_)

    # no ``structure_kind``: a bagging holds E networks, not one structure to compare, so
    # ``-m structure-stability`` is refused for it (a comparison of k2 with iebn is not)

    def _check_state(self, ctx) -> None:
        """What the declaration cannot say: members that vote on this model's classes.

        ``classes_`` distinct and ascending (``arange(n_classes)`` when the
        parameter is set); every member reads ``n_features_in_`` columns and
        its ``classes_`` are indices into ``classes_`` (all of them when
        ``n_classes`` is set, as every member then knows every class); every
        bag holds rows. Each member's own network was checked as it was
        rebuilt.
        """
        classes = self.classes_
        if classes.size == 0:
            _fail(ctx, "classes_", "is empty")
        if np.any(classes[1:] <= classes[:-1]):
            _fail(ctx, "classes_", "is not a list of distinct codes in ascending order")
        declared = vars(self).get("n_classes")
        declared = (int(declared) if isinstance(declared, (int, np.integer))
                    and not isinstance(declared, bool) else None)
        if declared is not None and not np.array_equal(classes, np.arange(declared)):
            _fail(ctx, "classes_", f"is not the codes 0 .. {declared - 1}")
        for i, member in enumerate(self.estimators_):
            if member.n_features_in_ != self.n_features_in_:
                _fail(ctx, f"estimators_.{i}.n_features_in_",
                      f"= {member.n_features_in_}, but the ensemble reads {self.n_features_in_} "
                      "columns")
            if int(member.classes_.max()) >= classes.size:
                _fail(ctx, f"estimators_.{i}.classes_",
                      f"holds a class index outside [0, {classes.size})")
            if declared is not None and member.classes_.size != declared:
                _fail(ctx, f"estimators_.{i}.classes_", f"is not the {declared} declared classes")
        for i, bag in enumerate(self.estimators_samples_):
            if bag.size == 0:
                _fail(ctx, f"estimators_samples_.{i}", "is an empty bag")
            if bag.size > self.n_training_rows_:  # a bag draws at most max_samples <= 1 of them
                _fail(ctx, f"estimators_samples_.{i}", f"holds {bag.size} rows, more than the "
                      f"{self.n_training_rows_} training rows")

    def predict_proba(self, X):
        """Mean of the members' class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Numeric columns raw, nominal columns as codes, NaN for a missing
            value; each member discretises with its own cut points and fills
            gaps with its own modes.

        Returns
        -------
        ndarray of float of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one. A member adds 0 to
            the classes absent from its bag.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``X`` has the wrong number of columns or infinite values, or a
            nominal column holds a code outside ``0 .. n_categories - 1``.
        """
        X = check_rows(self, X, allow_nan=True)
        n_classes = self.classes_.size
        # scikit-learn's _parallel_predict_proba, one job: add in member order ...
        proba = np.zeros((X.shape[0], n_classes))
        for member in self.estimators_:
            member_proba = member.predict_proba(X)
            if n_classes == len(member.classes_):
                proba += member_proba
            else:
                proba[:, member.classes_] += member_proba[:, range(len(member.classes_))]
        # ... then BaggingClassifier.predict_proba: sum over the jobs, divide by their number
        return proba / len(self.estimators_)

    def predict(self, X):
        """Class with the largest mean probability (the first class on ties, as Weka).

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
