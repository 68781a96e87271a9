"""The ``k2`` Bayesian-network classifier: Weka's BayesNet with global K2 LOO search.

:class:`K2Classifier` wraps the numeric core of :mod:`ensemblekit.bayesnet.k2`
in a scikit-learn estimator that prepares raw data exactly the way Weka's
``weka.classifiers.bayes.BayesNet.buildClassifier`` does before and after the
structure search:

1. rows whose class is missing are dropped (``deleteWithMissingClass``);
2. numeric columns are discretised with supervised MDL cut points (Fayyad &
   Irani 1993; Weka's ``supervised.attribute.Discretize``) learnt on the
   training data (:class:`~ensemblekit.discretize.MDLDiscretizer`);
3. missing values of every (now nominal) column are replaced by the column's
   training mode (Weka's ``unsupervised.attribute.ReplaceMissingValues``);
4. the structure is learnt with K2 and the global leave-one-out score
   (:func:`~ensemblekit.bayesnet.k2.k2_search`; Abbasian et al. 2013,
   Algorithms 2 and 3; Weka's ``bayes.net.search.global.K2 -S LOO-CV``);
5. the conditional probability tables are estimated on the whole prepared
   training set with the Dirichlet pseudo-count ``alpha`` (Weka's
   ``SimpleEstimator -A alpha``; :func:`~ensemblekit.bayesnet.k2.fit_cpts`).

Prediction discretises with the learnt cut points, fills missing values with
the training modes and evaluates the network; it is the numpy-only model
class's, :class:`~ensemblekit.bayesnet.classifier_model.K2Model`, which the
estimator extends with ``fit`` and a model file is rebuilt as.

References
----------
.. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner
   Ensembles: Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD
   2013, LNCS 8190, pp. 33-48. Algorithms 2 (K2) and 3 (LOO score).
.. [2] Fayyad, U. M., Irani, K. B. (1993). Multi-interval discretization of
   continuous-valued attributes for classification learning. Proc. 13th
   IJCAI, pp. 1022-1027.
.. [3] Weka 3.9: ``weka.classifiers.bayes.BayesNet`` (``normalizeDataSet``),
   ``bayes.net.search.global.K2``, ``bayes.net.estimate.SimpleEstimator``,
   ``filters.unsupervised.attribute.ReplaceMissingValues``. University of
   Waikato.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
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
from ..frames import fit_input, predict_input
from ..rows import quiet_finite_check
from .classifier_model import K2Model, weka_order
from .k2 import fit_cpts, k2_search, markov_blanket_correction, random_node_order

__all__ = ["K2Classifier"]


def _missing_target_mask(y: np.ndarray) -> np.ndarray:
    """True where a class label is missing: NaN (float) or None/NaN (object)."""
    if y.dtype.kind == "f":
        return np.isnan(y)
    if y.dtype.kind == "O":
        return np.array(
            [v is None or (isinstance(v, float) and np.isnan(v)) for v in y], dtype=bool
        )
    return np.zeros(y.shape[0], dtype=bool)


def _training_modes(codes: np.ndarray, cardinalities: np.ndarray,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """Most frequent non-missing code of every column, the lowest code on ties.

    Weka's ``ReplaceMissingValues`` counts the values of a nominal attribute
    (each instance by its weight) and takes ``Utils.maxIndex`` of the counts, i.e.
    the *first* value in declaration order among those with the largest count; a
    column with no value at all gets code 0.
    """
    modes = np.zeros(codes.shape[1], dtype=np.int64)
    for f in range(codes.shape[1]):
        col = codes[:, f]
        known = ~np.isnan(col)
        seen = col[known].astype(np.int64)
        counts = np.bincount(seen, weights=None if weights is None else weights[known],
                             minlength=int(cardinalities[f]))
        modes[f] = int(np.argmax(counts))  # first maximum
    return modes


def _java_seed(random_state) -> int:
    """The seed of the Java generator that draws the random node order: ``random_state``
    itself when it is an integer, else an integer drawn from it (None: fresh entropy)."""
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(2**31 - 1))


class K2Classifier(K2Model, ClassifierMixin, BaseEstimator):
    """Bayesian-network classifier learnt by K2 with the global LOO score.

    The estimator reproduces Weka's ``weka.classifiers.bayes.BayesNet -Q
    weka.classifiers.bayes.net.search.global.K2 -- -P max_parents -S
    LOO-CV|k-Fold-CV|Cumulative-CV [-Q] [-N] [-R] [-mbc] -E
    weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A alpha``: supervised MDL discretisation of
    the numeric columns, training modes for missing values, K2 structure search with the leave-one-out
    score (Abbasian et al. 2013, Algorithms 2-3) and Dirichlet-smoothed CPTs,
    all estimated on the training data only. On the data sets of the test
    suite it learns Weka 3.9.7's parent sets and its training-set class
    probabilities to Weka's printed precision.

    Parameters
    ----------
    max_parents : int >= 0 or None, default=2
        Most parents a node may receive, the class parent included (Weka's
        ``-P``; 1 keeps naive Bayes). ``None`` means no limit.
    init : {"naive-bayes", "empty"}, default="naive-bayes"
        Initial structure: the class is a parent of every attribute, or no
        arcs at all (Weka's ``-N``).
    scoring : {"loo-probability", "loo-accuracy"}, default="loo-probability"
        Global LOO score of the structure search: mean posterior of the true
        class (Weka's default), or 0/1 accuracy (Weka's ``-Q``; the paper's
        Algorithm 3). (Named ``scoring``, scikit-learn's term, because a
        ``score`` parameter would hide the ``score(X, y)`` method.)
    alpha : float > 0, default=0.5
        Dirichlet pseudo-count: ``P(v = k | J) = (N_Jk + alpha) / (N_J + r_v
        alpha)`` (``SimpleEstimator -A``).
    discretize : {"mdl", "equal-frequency"}, default="mdl"
        How numeric columns become nominal: Fayyad & Irani's supervised MDL
        cut points (Weka's choice), or ``n_bins`` unsupervised
        equal-frequency bins.
    n_bins : int >= 1, default=10
        Number of bins for ``discretize="equal-frequency"``; unused by "mdl".
    nominal_features : array-like of int or None, default=None
        Indices of the columns that already hold nominal codes ``0 .. r - 1``
        (NaN = missing). All other columns are numeric.
    n_categories : array-like of int or None, default=None
        Number of categories ``r`` of each nominal column, in the order of the
        *sorted* ``nominal_features`` (e.g. from the ARFF header, so that
        values absent from the training sample still count). Default: the
        largest code seen in ``fit`` plus one.
    n_classes : int >= 1 or None, default=None
        Number of declared classes (e.g. from the ARFF header): ``y`` then
        holds codes ``0 .. n_classes - 1`` and the class node has
        ``n_classes`` values, also those without training rows, as in Weka
        (such a class gets the smoothed mass ``alpha / (N + n_classes *
        alpha)`` in the class node, and uniform rows ``1 / r`` in its
        children's tables). None: the distinct labels of ``y``.
    markov_blanket : bool, default=False
        After the search, give the class as one more parent to every attribute outside
        the class's Markov blanket, so that all of them take part in classification
        (Weka's ``-mbc``; see :func:`~ensemblekit.bayesnet.k2.markov_blanket_correction`).
        It changes the network only when ``init="empty"``.
    random_order : bool, default=False
        Search the nodes in a random order (Weka's ``-R``): the order
        :func:`~ensemblekit.bayesnet.k2.random_node_order` draws with the Java generator
        seeded by ``random_state``. Weka seeds that generator from the clock, so its
        ``-R`` networks cannot be repeated; this order is the one Weka draws when its
        generator holds the same seed. Under ``init="naive-bayes"`` the class stays first.
    cv_type : {"loo", "kfold", "cumulative"}, default="loo"
        Global score of the search (Weka's ``-S LOO-CV | k-Fold-CV | Cumulative-CV``):
        every training row is scored by the network counted without itself, without its
        fold (``n_folds`` contiguous blocks of the rows in data order, unshuffled), or on
        the rows before it only; see :func:`~ensemblekit.bayesnet.k2.k2_search`.
        ``scoring`` still says what a row scores (probability or 0/1).
    n_folds : int >= 2, default=10
        Folds of ``cv_type="kfold"``; Weka always uses 10 (it has no option for it).
    weka_rounding : bool, default=True
        Break ties of the search's scores that are equal up to round-off as Weka's
        floating-point arithmetic does (see ``weka_rounding`` of
        :func:`~ensemblekit.bayesnet.k2.k2_search`): under ``init="empty"`` Weka accepts
        some arcs whose exact gain is zero, outside the class's Markov blanket, which
        change the network but not the class probabilities (unless ``markov_blanket``).
        False compares the exact closed-form scores and never adds such an arc. The
        class is taken to be the file's last attribute.
    random_state : int, RandomState instance or None, default=None
        Seed of ``random_order`` (the command line's ``--seed``); unused otherwise.
    class_position : int >= 0 or None, default=None
        Index of the class among the attributes of the training data, the columns of
        ``X`` keeping their order around it (Weka's ``-c``; at most ``n_features_in_``;
        the command line sets it from the file). Prediction adds the nodes'
        log-probabilities in that attribute order, as Weka's ``BayesNet`` does, so that
        the probabilities equal Weka's to the last bit (ties of scores then group as
        Weka's do in ROC and PRC areas). None: the class is last.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted (``np.unique``), or ``arange(n_classes)`` when
        ``n_classes`` is given; node 0 takes codes into it.
    discretizer_ : MDLDiscretizer
        The fitted discretiser (cut points per numeric column). Only the
        estimator holds it; a model file keeps ``cut_points_`` and
        ``nominal_features_``, which prediction reads.
    cut_points_ : list of n_features_in_ ndarrays of float64
        The discretiser's cut points of every column (empty for nominal ones).
    nominal_features_ : ndarray of int64
        Sorted indices of the nominal columns.
    cardinalities_ : ndarray of int of shape (n_features_in_,)
        Number of values of every feature node after discretisation.
    modes_ : ndarray of int of shape (n_features_in_,)
        Training mode of every (discretised) column, used for missing values;
        ties go to the lowest code, as in Weka.
    parents_ : list of n_features_in_ + 1 tuples of int
        Parent sets in order of addition; node 0 is the class, node ``j`` is
        feature ``j - 1`` (read only: derived from ``parent_sets_``).
    parent_sets_ : list of n_features_in_ + 1 ndarrays of int64
        The same parent sets as arrays, as a model file stores them.
    cpts_ : list of n_features_in_ + 1 ndarrays
        ``cpts_[v]`` has shape ``(prod(r_p for p in parents_[v]), r_v)``, the
        parent configuration being the mixed-radix number whose most
        significant digit is the first parent.
    n_features_in_ : int
        Number of columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` had string column names.

    References
    ----------
    .. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013).
       Inner Ensembles: Using Ensemble Methods Inside the Learning Algorithm.
       ECML PKDD 2013, LNCS 8190, pp. 33-48. Algorithms 2 and 3.
    .. [2] Cooper, G. F., Herskovits, E. (1992). A Bayesian method for the
       induction of probabilistic networks from data. Machine Learning 9(4),
       309-347.
    .. [3] Fayyad, U. M., Irani, K. B. (1993). Multi-interval discretization
       of continuous-valued attributes for classification learning. IJCAI-93.
    .. [4] Weka 3.9: ``classifiers.bayes.BayesNet``,
       ``bayes.net.search.global.K2``, ``bayes.net.estimate.SimpleEstimator``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0], [2.0, 1], [3.0, 0], [4.0, 1], [5.0, 1], [6.0, 1]])
    >>> clf = K2Classifier(nominal_features=[1]).fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> clf.parents_
    [(), (0,), (0,)]
    >>> clf.predict([[1.5, 0], [5.5, 1]]).tolist()
    ['a', 'b']
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------
    def fit(self, X, y, instance_weights=None):
        """Learn the discretisation, the network structure and its CPTs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns raw; the columns in ``nominal_features`` hold
            integer codes ``0 .. r - 1``. NaN marks a missing value; infinite
            values are rejected. A pandas or polars DataFrame, when
            ``nominal_features`` is None, declares its nominal columns by dtype
            (``category``, string, boolean; see
            :func:`ensemblekit.frames.fit_input`), and ``predict`` codes a frame
            by the same categories, an unseen value as missing.
        y : array-like of shape (n_samples,)
            Class labels of any type. Missing labels (NaN, or None in an
            object array) drop their rows, as Weka does.
        instance_weights : array-like of shape (n_samples,) or None
            Weka's instance weights, finite and >= 0: the modes that fill missing
            values, the leave-one-out score of the search and the CPTs count each
            instance by its weight, as BayesNet does, and so does the supervised MDL
            discretisation of numeric attributes (Weka's Discretize); equal-frequency bins
            refuse weights.

        Returns
        -------
        self : K2Classifier

        Raises
        ------
        ValueError
            On an invalid parameter; ``y`` missing, continuous, infinite or
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
        X, declared = fit_input(self, X)
        nominal_features, n_categories = declared or (self.nominal_features, self.n_categories)
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        if y.dtype.kind == "f" and np.isinf(y).any():
            raise InputError("Input y contains infinity.")
        keep = ~_missing_target_mask(y)
        if not keep.any():
            raise InputError("Input y contains NaN only: no row has a class label.")
        w = None
        if instance_weights is not None:
            w = np.asarray(instance_weights, dtype=np.float64).reshape(-1)
            check_consistent_length(X, w)
            if not np.all(np.isfinite(w)) or np.any(w < 0) or not w[keep].sum() > 0:
                raise InputError("instance_weights must be finite, >= 0 and not all 0")
            w = w[keep]
        X, y = X[keep], y[keep]
        weka_order(X.shape[1], getattr(self, "class_position", None))  # checks it
        check_classification_targets(y)
        self.classes_, y_codes = declared_classes(y, self.n_classes)
        y_codes = y_codes.astype(np.int64)
        n_classes = int(self.classes_.size)

        # (1) supervised MDL (or equal-frequency) discretisation, training data only
        self.discretizer_ = MDLDiscretizer(
            method=self.discretize,
            n_bins=self.n_bins,
            nominal_features=nominal_features,
        ).fit(X, y_codes, n_categories=n_categories, instance_weights=w)
        self.cardinalities_ = np.asarray(self.discretizer_.n_bins_, dtype=np.int64)
        numeric = np.setdiff1d(np.arange(X.shape[1]), self.discretizer_.nominal_features_)
        if w is not None and numeric.size and self.discretize != "mdl":
            raise InputError(f"instance weights on numeric attributes (column {int(numeric[0])}) "
                             "with discretize='equal-frequency', which does not weigh "
                             "instances; the MDL discretisation does, as Weka's")
        codes = self.discretizer_.transform(X)
        # (2) missing values -> training mode (ReplaceMissingValues)
        self.modes_ = _training_modes(codes, self.cardinalities_, w)
        missing = np.isnan(codes)
        codes = np.where(missing, self.modes_[None, :].astype(np.float64), codes)
        codes = codes.astype(np.int64)
        # (3) structure search, (4) CPTs on the full training data
        parents = self._search_structure(codes, y_codes, n_classes, w)
        # (the Inner-Ensemble and bagged subclasses do not take the parameter)
        if getattr(self, "markov_blanket", False):
            parents = markov_blanket_correction(parents)
        self.cpts_ = fit_cpts(
            codes,
            y_codes,
            parents,
            self.cardinalities_,
            n_classes,
            alpha=self.alpha,
            weights=w,
        )
        self.parent_sets_ = [np.array(ps, dtype=np.int64) for ps in parents]
        # what prediction reads of the discretiser, as plain arrays (K2Model's state)
        self.nominal_features_ = self.discretizer_.nominal_features_.astype(np.int64)
        self.cut_points_ = [np.asarray(c, dtype=np.float64) for c in self.discretizer_.cut_points_]
        return self

    def _search_structure(self, codes, y_codes, n_classes, weights=None):
        """Parent sets from K2 with the leave-one-out score on the whole training set
        (``weights``: the instance weights, or None).

        Subclasses change how candidate structures are scored (see
        :class:`~ensemblekit.bayesnet.inner.InnerEnsembleK2Classifier`).
        """
        order = None
        if self.random_order:
            order = random_node_order(codes.shape[1] + 1, self.init,
                                      _java_seed(self.random_state))
        return k2_search(codes, y_codes, self.cardinalities_, n_classes,
                         max_parents=self.max_parents, init=self.init, score=self.scoring,
                         alpha=self.alpha, weights=weights, cv_type=self.cv_type,
                         n_folds=self.n_folds, order=order, weka_rounding=self.weka_rounding)

    def predict_proba(self, X):
        """Class probabilities of the fitted network (see :meth:`K2Model.predict_proba`).

        ``X`` is first checked as scikit-learn checks it (column names of a
        data frame, ``NotFittedError``); the computation is the model's.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Same layout as in :meth:`fit`; NaN values are replaced by the
            training modes after discretisation.

        Returns
        -------
        ndarray of float of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has the wrong number of columns or infinite values, or a
            nominal column holds a code outside the fitted ``0 .. r - 1``.
        """
        check_is_fitted(self, "cpts_")
        X = predict_input(self, X)
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        return super().predict_proba(X)
