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
the training modes and evaluates the network
(:func:`~ensemblekit.bayesnet.k2.predict_proba`).

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

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ensemblekit.errors import InputError

from ..class_domain import N_CLASSES, declared_classes
from ..constraints import Constraint, validate_params
from ..discretize import MDLDiscretizer
from ..trust import (
    CheckContext,
    checked_array,
    class_labels,
    declared_codes,
    feature_count,
    fitted_member,
    fitted_only,
    int_array,
    nested_attr,
)
from .k2 import _check_network, fit_cpts, k2_search
from .k2 import predict_proba as _network_proba

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


def _training_modes(codes: np.ndarray, cardinalities: np.ndarray) -> np.ndarray:
    """Most frequent non-missing code of every column, the lowest code on ties.

    Weka's ``ReplaceMissingValues`` counts the values of a nominal attribute
    and takes ``Utils.maxIndex`` of the counts, i.e. the *first* value in
    declaration order among those with the largest count; a column with no
    value at all gets code 0.
    """
    modes = np.zeros(codes.shape[1], dtype=np.int64)
    for f in range(codes.shape[1]):
        col = codes[:, f]
        seen = col[~np.isnan(col)].astype(np.int64)
        counts = np.bincount(seen, minlength=int(cardinalities[f]))
        modes[f] = int(np.argmax(counts))  # first maximum
    return modes


#: Parameters of the K2 search and the CPTs, shared by ``k2``, ``iebn`` and ``bagged-k2``.
K2_CONSTRAINTS = {
    "max_parents": Constraint("int", "parent limit, the class included (1 = naive Bayes; "
                              "none = unlimited)", low=0, none_ok=True),
    "init": Constraint("choice", "initial structure", choices=("naive-bayes", "empty")),
    "scoring": Constraint("choice", "LOO score: mean posterior of the true class (Weka's "
                          "default) or 0/1 accuracy", choices=("loo-probability", "loo-accuracy")),
    "alpha": Constraint("float", "Dirichlet pseudo-count of the CPTs (Weka -A)", low=0,
                        closed="right"),
    "discretize": Constraint("choice", "numeric attributes: supervised MDL (Fayyad & Irani, as "
                             "Weka) or equal-frequency bins", choices=("mdl", "equal-frequency")),
    "n_bins": Constraint("int", "bins for equal-frequency discretisation", low=1, high=1000),
    "nominal_features": Constraint("any", "indices of the columns holding nominal codes"),
    "n_categories": Constraint("any", "number of categories of each nominal column"),
    "n_classes": N_CLASSES,
}


def _check_k2(est, ctx: CheckContext) -> None:
    """``K2Classifier`` / ``InnerEnsembleK2Classifier``: what ``predict_proba``, ``network`` read.

    Node 0 is the class (``len(classes_)`` values), node ``j`` feature ``j - 1``
    with ``cardinalities_[j - 1]`` values, the discretizer's numbers of bins; the
    training modes that fill missing values are codes of their feature.
    """
    d = feature_count(ctx, est)
    classes = class_labels(ctx, est)
    declared_codes(ctx, est, classes)
    n_classes = classes.size
    disc = ctx.instance(ctx.attr(est, "discretizer_"), "discretizer_", (MDLDiscretizer,))
    fitted_member(ctx, disc, "discretizer_", d)
    card = int_array(ctx, ctx.attr(est, "cardinalities_"), "cardinalities_", low=1, shape=(d,))
    bins = checked_array(ctx, nested_attr(ctx, disc, "n_bins_", "discretizer_.n_bins_"),
                         "discretizer_.n_bins_", kinds="iu", shape=(d,))
    if not np.array_equal(card, bins):
        ctx.fail("cardinalities_ are not the discretizer's numbers of bins")
    modes = int_array(ctx, ctx.attr(est, "modes_"), "modes_", shape=(d,))
    if np.any(modes >= card):
        ctx.fail("modes_ holds a code outside its feature's values")
    _check_network(ctx, ctx.attr(est, "parents_"), ctx.attr(est, "cpts_"),
                   [n_classes, *(int(r) for r in card)])


class K2Classifier(ClassifierMixin, BaseEstimator):
    """Bayesian-network classifier learnt by K2 with the global LOO score.

    The estimator reproduces Weka's ``weka.classifiers.bayes.BayesNet -Q
    weka.classifiers.bayes.net.search.global.K2 -- -P max_parents -S LOO-CV
    [-Q] [-N] -E weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A
    alpha``: supervised MDL discretisation of the numeric columns, training
    modes for missing values, K2 structure search with the leave-one-out
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

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted (``np.unique``), or ``arange(n_classes)`` when
        ``n_classes`` is given; node 0 takes codes into it.
    discretizer_ : MDLDiscretizer
        The fitted discretiser (cut points per numeric column).
    cardinalities_ : ndarray of int of shape (n_features_in_,)
        Number of values of every feature node after discretisation.
    modes_ : ndarray of int of shape (n_features_in_,)
        Training mode of every (discretised) column, used for missing values;
        ties go to the lowest code, as in Weka.
    parents_ : list of n_features_in_ + 1 tuples of int
        Parent sets in order of addition; node 0 is the class, node ``j`` is
        feature ``j - 1``.
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

    #: ensemblekit classes besides the registry's estimators that the state may hold.
    _state_parts = (MDLDiscretizer,)
    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_k2))

    _parameter_constraints = K2_CONSTRAINTS

    def __init__(
        self,
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
    def _codes(self, X: np.ndarray) -> np.ndarray:
        """Discretise, fill missing values with the modes, check the codes."""
        Xt = self.discretizer_.transform(X)
        missing = np.isnan(Xt)
        if missing.any():
            Xt = np.where(missing, self.modes_[None, :].astype(np.float64), Xt)
        nominal = self.discretizer_.nominal_features_
        if nominal.size:
            sub = Xt[:, nominal]
            bad = (
                (sub < 0)
                | (sub != np.floor(sub))
                | (sub >= self.cardinalities_[nominal])
            )
            if bad.any():
                i, k = np.argwhere(bad)[0]
                f = int(nominal[k])
                raise InputError(
                    f"nominal feature {f} holds code {float(X[i, f]):g} in row {i}, but the model "
                    f"was fitted with codes 0..{int(self.cardinalities_[f]) - 1} for it "
                    "(an unseen category: refit with n_categories covering it)"
                )
        return Xt.astype(np.int64)

    def fit(self, X, y):
        """Learn the discretisation, the network structure and its CPTs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns raw; the columns in ``nominal_features`` hold
            integer codes ``0 .. r - 1``. NaN marks a missing value; infinite
            values are rejected.
        y : array-like of shape (n_samples,)
            Class labels of any type. Missing labels (NaN, or None in an
            object array) drop their rows, as Weka does.

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
        self.classes_, y_codes = declared_classes(y, self.n_classes)
        y_codes = y_codes.astype(np.int64)
        n_classes = int(self.classes_.size)

        # (1) supervised MDL (or equal-frequency) discretisation, training data only
        self.discretizer_ = MDLDiscretizer(
            method=self.discretize,
            n_bins=self.n_bins,
            nominal_features=self.nominal_features,
        ).fit(X, y_codes, n_categories=self.n_categories)
        self.cardinalities_ = np.asarray(self.discretizer_.n_bins_, dtype=np.int64)
        codes = self.discretizer_.transform(X)
        # (2) missing values -> training mode (ReplaceMissingValues)
        self.modes_ = _training_modes(codes, self.cardinalities_)
        missing = np.isnan(codes)
        codes = np.where(missing, self.modes_[None, :].astype(np.float64), codes)
        codes = codes.astype(np.int64)
        # (3) structure search, (4) CPTs on the full training data
        self.parents_ = self._search_structure(codes, y_codes, n_classes)
        self.cpts_ = fit_cpts(
            codes,
            y_codes,
            self.parents_,
            self.cardinalities_,
            n_classes,
            alpha=self.alpha,
        )
        return self

    def _search_structure(self, codes, y_codes, n_classes):
        """Parent sets from K2 with the leave-one-out score on the whole training set.

        Subclasses change how candidate structures are scored (see
        :class:`~ensemblekit.bayesnet.inner.InnerEnsembleK2Classifier`).
        """
        return k2_search(codes, y_codes, self.cardinalities_, n_classes,
                         max_parents=self.max_parents, init=self.init, score=self.scoring,
                         alpha=self.alpha)

    def predict_proba(self, X):
        """Class probabilities of the fitted network.

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
        X = validate_data(
            self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False
        )
        codes = self._codes(X)
        return _network_proba(
            codes, self.parents_, self.cpts_, self.cardinalities_, self.classes_.size
        )

    def predict(self, X):
        """Most probable class of every row (the first class on ties, as Weka).

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

    # ------------------------------------------------------------------
    def _node_names(self, feature_names, class_name) -> list[str]:
        check_is_fitted(self, "cpts_")
        d = self.n_features_in_
        if feature_names is None:
            names = getattr(self, "feature_names_in_", None)
            feature_names = (
                list(names) if names is not None else [f"x{j}" for j in range(d)]
            )
        feature_names = [str(n) for n in feature_names]
        if len(feature_names) != d:
            raise InputError(
                f"feature_names has {len(feature_names)} names for {d} features"
            )
        names = [str(class_name), *feature_names]
        if len(set(names)) != len(names):
            raise InputError(f"node names must be distinct, got {names}")
        return names

    def network(self, feature_names=None, class_name="class") -> list[dict]:
        """The learnt network, one record per node (class first).

        Parameters
        ----------
        feature_names : sequence of str or None, default=None
            One name per feature; default ``feature_names_in_`` when ``fit``
            saw column names, else ``x0, x1, ...``.
        class_name : str, default="class"

        Returns
        -------
        list of n_features_in_ + 1 dicts
            Keys ``name`` (str), ``parents`` (list of names, in order of
            addition), ``n_values`` (int, the node's cardinality) and
            ``cpt_shape`` (tuple ``(n_parent_configurations, n_values)``).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``feature_names`` has the wrong length or names repeat.
        """
        names = self._node_names(feature_names, class_name)
        card = [int(self.classes_.size), *(int(r) for r in self.cardinalities_)]
        return [
            {
                "name": names[v],
                "parents": [names[p] for p in ps],
                "n_values": card[v],
                "cpt_shape": tuple(int(s) for s in self.cpts_[v].shape),
            }
            for v, ps in enumerate(self.parents_)
        ]

    def to_dot(self, feature_names=None, class_name="class") -> str:
        """Graphviz DOT text of the network (arcs parent -> child).

        Node identifiers are the quoted node names (backslashes, double quotes
        and newlines escaped); nodes are listed class first, then features in
        column order, arcs per child in order of addition, so the text is
        deterministic. Parameters and errors: see :meth:`network`.

        Returns
        -------
        str
            A ``digraph`` ending with a newline.
        """

        def q(s: str) -> str:
            s = s.replace("\\", "\\\\").replace('"', '\\"')
            s = s.replace("\r", "\\r").replace("\n", "\\n")
            return f'"{s}"'

        nodes = self.network(feature_names, class_name)
        lines = ["digraph K2 {"]
        for i, node in enumerate(nodes):
            style = ", shape=doublecircle" if i == 0 else ""
            label = f"{node['name']} ({node['n_values']})"
            lines.append(f"  {q(node['name'])} [label={q(label)}{style}];")
        for node in nodes:
            for p in node["parents"]:
                lines.append(f"  {q(p)} -> {q(node['name'])};")
        lines.append("}")
        return "\n".join(lines) + "\n"
