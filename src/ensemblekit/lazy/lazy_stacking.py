"""``lazy-stacking`` (LS): lazy bags, a different learner type per bag (Homayouni et al.).

Lazy Stacking keeps Lazy Bagging's bags -- for a test instance ``x``, ``N -
K`` instances bootstrapped from the training set plus ``K`` bootstrapped from
``x``'s ``K`` nearest neighbours under the gain-ratio weighted distance
(Eqs. 1-2) -- but trains a *different type* of learner on the bags to
restore the diversity that lazy bags lose, and combines their predictions
for ``x`` by majority vote (paper, Figure 1 and Procedure *LazyStacking*,
step 6).

What the paper leaves open, and the choices made here
------------------------------------------------------
* **Which learners, on which bags.** The paper says "different types" and
  its experiments run Weka; it names neither the types nor how they are
  assigned. Here bag ``b`` (0-based) gets the type ``base_estimators[b %
  T]``, cycling through the list; the default list is an unpruned tree,
  a nearest-neighbour classifier and naive Bayes (the three classic
  families, and the tree is the learner of LB and TB):

  - ``"tree"``: the base tree chosen by ``tree``, by default the unpruned
    ``c45`` tree (Weka's ``J48 -U``, the tree of the paper's experiments), or
    ``"cart-entropy"`` (scikit-learn's binary entropy tree), at least
    ``min_samples_leaf`` instances per leaf, grown from the bag's counts as
    instance weights exactly as in ``lazy-bagging``;
  - ``"knn"``: Weka IBk's rule on the bag: the ``knn_neighbors`` nearest bag
    instances (a row drawn ``c`` times counts ``c`` times; ties in distance
    go to the lower training index) under the *unweighted* Eq. 2 distance
    (all attributes weight ``1 / R``: range-normalised numeric differences,
    0/1 nominal mismatches, 1 for a missing value), one vote each;
  - ``"nb"``: naive Bayes as Weka's ``NaiveBayes``: class prior and nominal
    value frequencies with a Laplace count of 1, numeric attributes as
    normal densities (weighted mean and population standard deviation,
    at least Weka's ``precision / 6`` where ``precision`` is the mean gap
    between adjacent distinct training values), missing values skipped; a
    class absent from the bag gets probability 0 (as it does from a tree
    grown on that bag).
* **Combination.** ``combiner="vote"`` (default) is the paper's: each member
  votes for its most probable class, the class with most votes wins (the
  first in ``classes_`` on ties), probabilities are the vote shares.
  ``combiner="stacking"`` learns the combination instead, locally and
  without extra fits: the ``meta_rows`` training instances nearest to ``x``
  (Eq. 2) are classified by the members whose bag does not contain them
  (out-of-bag); for each instance and learner type the out-of-bag class
  probabilities are averaged; then, per class, non-negative least squares
  fits the 0/1 class indicator on the learner types' probabilities of that
  class (multi-response linear regression as in Ting & Witten's stacking,
  per class as in Seewald's StackingC). ``x`` gets the fitted combination of
  its members' type-averaged probabilities, normalised. Instances lacking
  an out-of-bag prediction from some type are left out; when none is left,
  or every score is 0, the vote decides.

References
----------
.. [1] H. Homayouni, S. Hashemi and A. Hamzeh, "A Lazy Ensemble Learning
   Method to Classification" (Figure 1, Procedure LazyStacking, Eqs. 1-2).
.. [2] X. Zhu and Y. Yang, "A lazy bagging approach to classification",
   Pattern Recognition 41(10), pp. 2980-2992, 2008.
.. [3] D. H. Wolpert, "Stacked generalization", Neural Networks 5(2), 1992.
.. [4] K. M. Ting and I. H. Witten, "Issues in stacked generalization",
   JAIR 10, pp. 271-289, 1999 (multi-response linear regression, non-negative
   weights).
.. [5] A. K. Seewald, "Towards understanding stacking", PhD thesis, TU Wien,
   2003 (StackingC: one model per class on that class's probabilities).
.. [6] Weka 3.9, ``weka.classifiers.lazy.IBk``, ``weka.classifiers.bayes.NaiveBayes``.
"""

from __future__ import annotations

import math

import numpy as np

from ensemblekit.errors import InputError

from ..constraints import Constraint
from ..trust import CheckContext
from ..units import in_units, unit_exponents
from .distance import WeightedDistance
from .lazy_bagging import (
    _SEED_MAX,
    KERNEL_MODULES,  # noqa: F401 - its bagged trees'
    LAZY_STATE,
    _LazyEnsemble,
    lazy_bag_counts,
)

__all__ = ["LEARNER_TYPES", "LazyStackingClassifier"]

LEARNER_TYPES = ("tree", "knn", "nb")
"""Names accepted in ``base_estimators``."""

_LOG_2PI = math.log(2.0 * math.pi)
#: Largest standardised distance a naive-Bayes member squares (its square stays finite).
_Z_MAX = 1e150


def parse_base_estimators(value) -> tuple[str, ...]:
    """``"tree,knn,nb"`` or a sequence of names -> tuple of learner-type names.

    Raises
    ------
    ValueError
        If the list is empty or names a type not in :data:`LEARNER_TYPES`.
    """
    if isinstance(value, str):
        names = tuple(part.strip() for part in value.split(","))
    else:
        try:
            names = tuple(value)
        except TypeError:
            names = ()
    if not names or any(not isinstance(v, str) or v not in LEARNER_TYPES for v in names):
        raise InputError(
            f"base_estimators must list learner types among {', '.join(LEARNER_TYPES)} "
            f"(e.g. 'tree,knn,nb'), got {value!r}"
        )
    return names


class _NaiveBayesTables:
    """Weighted naive-Bayes statistics of many bags at once (Weka NaiveBayes semantics).

    Built from the training rows (at fit, and again from a loaded model's
    rows); :meth:`proba` takes a matrix of bag counts and query rows and
    returns every bag's posterior for every query, with the sufficient
    statistics computed as count-weighted sums.
    """

    def __init__(self, X, y_codes, n_classes, nominal, n_categories, numeric):
        self.n_classes = n_classes
        self.rows = [np.flatnonzero(y_codes == c) for c in range(n_classes)]
        self.nominal = np.asarray(nominal, dtype=np.intp)
        self.numeric = np.asarray(numeric, dtype=np.intp)
        self.n_categories = np.asarray(n_categories, dtype=np.float64)
        self.offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]]).astype(np.intp) \
            if len(n_categories) else np.zeros(0, dtype=np.intp)
        nom = X[:, self.nominal]
        self.nom_known = (~np.isnan(nom)).astype(np.float64)
        onehot = np.zeros((X.shape[0], int(np.sum(n_categories))))
        for j, o in enumerate(self.offsets):
            col = nom[:, j]
            ok = ~np.isnan(col)
            onehot[np.flatnonzero(ok), o + col[ok].astype(np.intp)] = 1.0
        self.onehot = onehot
        # a column near the float limits is measured in a power-of-two unit of its own, in
        # which its squares and sums cannot overflow (as the distance measures it)
        self.exponents = unit_exponents(X, self.numeric)
        num = in_units(X, self.exponents)[:, self.numeric]
        known = ~np.isnan(num)
        self.num_known = known.astype(np.float64)
        self.num_x = np.where(known, num, 0.0)
        self.num_x2 = self.num_x * self.num_x
        floor = np.empty(self.numeric.size)
        for j in range(self.numeric.size):
            values = np.unique(num[known[:, j], j])
            # Weka NaiveBayes: precision = mean gap between adjacent distinct
            # values (0.01 without a gap); NormalEstimator's smallest sd is precision / 6
            precision = (values[-1] - values[0]) / (values.size - 1) if values.size > 1 else 0.01
            floor[j] = precision / 6.0
        self.sd_floor = floor

    def log_joint(self, counts, Q):
        """``log P(c) + sum_j log P(q_j | c)`` per bag, query and class.

        Parameters
        ----------
        counts : ndarray of shape (n_bags, n_samples)
        Q : ndarray of shape (n_queries, n_features)
            Query rows (nominal codes checked by the caller), NaN = missing.

        Returns
        -------
        ndarray of shape (n_bags, n_queries, n_classes)
            ``-inf`` for the classes absent from a bag.
        """
        n_bags = counts.shape[0]
        m = Q.shape[0]
        out = np.zeros((n_bags, m, self.n_classes))
        total = counts.sum(axis=1)
        qn = Q[:, self.nominal]
        qn_known = ~np.isnan(qn)
        q_index = self.offsets + np.where(qn_known, qn, 0).astype(np.intp)  # (m, p_nom)
        qx = in_units(Q, self.exponents)[:, self.numeric]
        qx_known = ~np.isnan(qx)
        qx0 = np.where(qx_known, qx, 0.0)
        for c, rows in enumerate(self.rows):
            B = counts[:, rows]
            w = B.sum(axis=1)
            with np.errstate(divide="ignore"):
                prior = np.where(w > 0, np.log((w + 1.0) / (total + self.n_classes)), -np.inf)
            acc = np.broadcast_to(prior[:, None], (n_bags, m)).copy()
            if self.nominal.size:
                value_counts = B @ self.onehot[rows]  # (bags, sum r)
                known_counts = B @ self.nom_known[rows]  # (bags, p_nom)
                num = value_counts[:, q_index] + 1.0  # (bags, m, p_nom)
                den = known_counts[:, None, :] + self.n_categories
                acc += np.where(qn_known, np.log(num / den), 0.0).sum(axis=2)
            if self.numeric.size:
                s0 = B @ self.num_known[rows]
                s1 = B @ self.num_x[rows]
                s2 = B @ self.num_x2[rows]
                have = s0 > 0
                safe = np.where(have, s0, 1.0)
                mean = s1 / safe
                var = np.maximum(s2 / safe - mean * mean, 0.0)
                sd = np.maximum(np.sqrt(var), self.sd_floor)
                # a value more than 1e150 deviations from a mean would square to inf, and
                # every class to -inf (NaN probabilities): it is that far from each class
                with np.errstate(over="ignore"):
                    z = (qx0[None, :, :] - mean[:, None, :]) / sd[:, None, :]
                np.clip(z, -_Z_MAX, _Z_MAX, out=z)
                logpdf = -0.5 * _LOG_2PI - np.log(sd)[:, None, :] - 0.5 * z * z
                use = qx_known[None, :, :] & have[:, None, :]
                acc += np.where(use, logpdf, 0.0).sum(axis=2)
            out[:, :, c] = acc
        return out

    def proba(self, counts, Q):
        """Posterior class probabilities, shape (n_bags, n_queries, n_classes)."""
        lj = self.log_joint(counts, Q)
        top = lj.max(axis=2, keepdims=True)
        e = np.exp(lj - top)
        return e / e.sum(axis=2, keepdims=True)


def _knn_proba(counts, order, y_onehot, k):
    """IBk on bags given as counts: class shares among the ``k`` nearest bag instances.

    Parameters
    ----------
    counts : ndarray of shape (n_bags, n_samples)
    order : ndarray of int of shape (n_queries, n_positions)
        For each query, training rows by increasing distance (a prefix of the
        full order is enough when it holds ``k`` bag instances).
    y_onehot : ndarray of shape (n_samples, n_classes)
    k : int

    Returns
    -------
    ndarray of shape (n_bags, n_queries, n_classes)
    """
    taken_counts = counts[:, order]  # (bags, m, positions)
    before = np.cumsum(taken_counts, axis=2) - taken_counts
    take = np.minimum(taken_counts, np.maximum(k - before, 0.0))
    votes = np.einsum("bmp,mpc->bmc", take, y_onehot[order])
    total = votes.sum(axis=2, keepdims=True)
    return votes / np.where(total > 0, total, 1.0)


class LazyStackingClassifier(_LazyEnsemble):
    """Lazy Stacking: lazy bags with a different learner type per bag, majority vote.

    For a test row ``x``: the ``K`` nearest training rows under the
    gain-ratio weighted distance (Eq. 2; ``K`` from Eq. 1), ``n_estimators``
    bags of ``N - K`` rows bootstrapped from the training set plus ``K``
    bootstrapped from the neighbours (the bags of ``lazy-bagging``), bag ``b``
    learnt by learner type ``base_estimators[b % T]``, and the members'
    predictions for ``x`` combined by majority vote (``combiner="vote"``) or
    by a local stacked combination (``"stacking"``). See the module
    docstring for the learner types and the combiner, and for what the paper
    leaves open.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of bags and members per test instance (L), 1 to 1000.
    base_estimators : str or sequence of str, default="tree,knn,nb"
        Learner types cycled over the bags, among ``"tree"`` (the tree chosen
        by ``tree``), ``"knn"`` (IBk) and ``"nb"`` (naive Bayes); repeats allowed.
    combiner : {"vote", "stacking"}, default="vote"
        The paper's majority vote, or the out-of-bag stacked combination.
    beta : float, default=0.99
        Beta-similarity of Eq. 1, in (0, 1).
    n_neighbors : int or None, default=None
        Set ``K`` directly (0 .. N); None uses ``beta``.
    knn_neighbors : int, default=1
        ``k`` of the ``"knn"`` members (Weka IBk's default 1), >= 1.
    meta_rows : int, default=100
        Training instances nearest to ``x`` whose out-of-bag predictions
        train the stacked combination (capped at N), >= 1.
    tree : {"c45", "cart-entropy"}, default="c45"
        The ``"tree"`` members: unpruned C4.5 (Weka's ``J48 -U``) or
        scikit-learn's binary entropy tree.
    min_samples_leaf : int, default=2
        Minimum instances per leaf of the ``"tree"`` members, >= 1.
    max_depth : int or None, default=None
        Depth limit of ``cart-entropy`` members; must stay None with ``tree="c45"``.
    nominal_features : array-like of int or None, default=None
        Indices of the columns holding nominal codes ``0 .. r - 1`` (NaN = missing).
    n_categories : array-like of int or None, default=None
        Categories of each nominal column, in the order of the sorted
        ``nominal_features``; default: the largest code seen plus one.
    n_jobs : int or None, default=None
        Workers for the test rows (joblib). Results do not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seed of the model, drawn at ``fit``; with the row's place among the
        training values (see ``_row_keys``) it seeds every row's bags and trees.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and ``predict_proba`` has a column for each, 0 for a class without
        training rows. None: the distinct labels of ``y``.

    Attributes
    ----------
    learner_types_ : tuple of str
        The parsed ``base_estimators`` (built with ``distance_``, as the next two).
    k_ : int
        The number of neighbours K used.
    distance_ : ensemblekit.lazy.distance.WeightedDistance
        Eq. 2 with the gain-ratio weights (finds the neighbours).
    knn_distance_ : ensemblekit.lazy.distance.WeightedDistance or None
        Eq. 2 with uniform weights (the ``"knn"`` members' distance).
    X_, gain_ratios_, X_tree_, y_codes_, present_classes_, modes_, nominal_features_
        As in :class:`~ensemblekit.lazy.lazy_bagging.LazyBaggingClassifier`.
    numeric_features_, n_categories_, seed_
        As in :class:`~ensemblekit.lazy.lazy_bagging.LazyBaggingClassifier`.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted, or ``arange(n_classes)``.
    n_features_in_ : int
        Number of columns seen in ``fit``.

    References
    ----------
    .. [1] H. Homayouni, S. Hashemi and A. Hamzeh, "A Lazy Ensemble Learning
       Method to Classification".
    .. [2] X. Zhu and Y. Yang, Pattern Recognition 41(10), 2008.
    .. [3] K. M. Ting and I. H. Witten, JAIR 10, 1999; A. K. Seewald, 2003
       (the stacked combination).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0], [1.0, 0], [2.0, 1], [3.0, 1], [4.0, 1], [5.0, 0]] * 4)
    >>> y = np.array([0, 0, 0, 1, 1, 1] * 4)
    >>> clf = LazyStackingClassifier(n_estimators=6, nominal_features=[1], random_state=0)
    >>> clf.fit(X, y).predict([[0.5, 0], [4.5, 1]]).tolist()
    [0, 1]
    """

    _parameter_constraints = {
        **_LazyEnsemble._parameter_constraints,
        "n_estimators": Constraint("int", "bags and members per test instance (L)", low=1,
                                   high=1000),
        "base_estimators": Constraint("choice", "learner types cycled over the bags",
                                      choices=LEARNER_TYPES, multiple=True),
        "combiner": Constraint("choice", "majority vote (the paper) or a local stacked "
                               "combination of out-of-bag predictions",
                               choices=("vote", "stacking")),
        "knn_neighbors": Constraint("int", "k of the kNN members (Weka IBk default 1)", low=1),
        "meta_rows": Constraint("int", "nearest training instances that train the stacked "
                                "combination", low=1),
        "min_samples_leaf": Constraint("int", "minimum instances per leaf of the trees", low=1),
    }

    #: What a fit leaves, as a model file holds it (see ensemblekit.state): lazy-bagging's
    #: state; the learner types, the kNN members' distance and the naive-Bayes tables are
    #: rebuilt from it and the parameters.
    _fitted_state = LAZY_STATE

    def _check_state(self, ctx: CheckContext) -> None:
        """The cross-entry rules of a loaded model (see ``_check_lazy_state``; the learner
        types are checked with the parameters)."""
        self._check_lazy_state(ctx)

    def __init__(self, n_estimators=10, base_estimators="tree,knn,nb", combiner="vote",
                 beta=0.99, n_neighbors=None, knn_neighbors=1, meta_rows=100, tree="c45",
                 min_samples_leaf=2, max_depth=None, nominal_features=None, n_categories=None,
                 n_jobs=None, random_state=None, n_classes=None):
        self.n_estimators = n_estimators
        self.base_estimators = base_estimators
        self.combiner = combiner
        self.beta = beta
        self.n_neighbors = n_neighbors
        self.knn_neighbors = knn_neighbors
        self.meta_rows = meta_rows
        self.tree = tree
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.n_classes = n_classes

    def _validate_params_once(self):
        super()._validate_params_once()
        parse_base_estimators(self.base_estimators)

    def _derived_parts(self) -> dict:
        """lazy-bagging's parts, the learner types, and what the kNN and NB members read.

        ``knn_distance``: Eq. 2 with uniform weights (None without kNN members);
        ``nb``: the naive-Bayes tables of the training rows (None without NB
        members); ``y_onehot``: the class indicators of the training rows.
        """
        parts = super()._derived_parts()
        types = parse_base_estimators(self.base_estimators)
        used = {types[b % len(types)] for b in range(int(self.n_estimators))}
        d = self.n_features_in_
        parts["learner_types"] = types
        parts["knn_distance"] = None
        if "knn" in used:
            parts["knn_distance"] = WeightedDistance.from_fitted(
                self.X_, np.full(d, 1.0 / d), self.nominal_features_, self.n_categories_)
        parts["y_onehot"] = np.eye(self._n_present)[self.y_codes_]
        parts["nb"] = None
        if "nb" in used:
            parts["nb"] = _NaiveBayesTables(self.X_, self.y_codes_, self._n_present,
                                            self.nominal_features_, self.n_categories_,
                                            self.numeric_features_)
        return parts

    @property
    def learner_types_(self) -> tuple[str, ...]:
        """The parsed ``base_estimators`` of the fit."""
        return self._part("learner_types")

    @property
    def knn_distance_(self) -> WeightedDistance | None:
        """Eq. 2 with uniform weights (the ``"knn"`` members' distance), or None."""
        return self._part("knn_distance")

    @property
    def _y_onehot(self) -> np.ndarray:
        return self._part("y_onehot")

    @property
    def _nb(self) -> _NaiveBayesTables | None:
        return self._part("nb")

    def _n_query_neighbors(self):
        if self.combiner == "stacking":
            return max(self.k_, min(int(self.meta_rows), self.y_codes_.size))
        return self.k_

    def _knn_orders(self, Q):
        """Training rows by increasing unweighted distance to each query (stable), shape (m, n)."""
        d = self.knn_distance_._squared(Q, self.knn_distance_.X_)
        return np.argsort(d, axis=1, kind="stable")

    def _members(self, context, counts, seeds, Q, Q_tree):
        """Every member's class probabilities for the query rows, shape (L, m, C)."""
        L = counts.shape[0]
        types = self.learner_types_
        proba = np.empty((L, Q.shape[0], self._n_present))
        kind = np.array([types[b % len(types)] for b in range(L)])
        for b in np.flatnonzero(kind == "tree"):
            tree = self._grow_tree(context, counts[b], seeds[b])
            proba[b] = self._tree_proba(tree, Q_tree, context)
        knn = np.flatnonzero(kind == "knn")
        if knn.size:
            k = int(self.knn_neighbors)
            order = self._knn_orders(Q)
            # the k nearest bag instances nearly always lie among the first few
            # rows of the order (a row is in a bag with probability ~0.63);
            # use the whole order only when that prefix falls short
            prefix = order[:, : max(64, 8 * k)]
            if np.all(counts[knn][:, prefix].sum(axis=2) >= k):
                order = prefix
            proba[knn] = _knn_proba(counts[knn], order, self._y_onehot, k)
        nb = np.flatnonzero(kind == "nb")
        if nb.size:
            proba[nb] = self._nb.proba(counts[nb], Q)
        return proba, kind

    def _predict_row(self, i, X, neighbours, rng, context):
        L = int(self.n_estimators)
        n = self.y_codes_.size
        counts = lazy_bag_counts(rng, n, neighbours[: self.k_], L)
        seeds = rng.integers(0, _SEED_MAX, size=L)
        x = X[i : i + 1]
        if self.combiner == "vote":
            proba, _ = self._members(context, counts, seeds, x, context["X_tree"][i : i + 1])
            votes = np.zeros(self._n_present)
            np.add.at(votes, np.argmax(proba[:, 0, :], axis=1), 1.0)
            return votes / L
        # stacking: members on x and, out of bag, on the meta rows near x
        meta = neighbours[: min(int(self.meta_rows), n)]
        Q = np.vstack([x, self.distance_.X_[meta]])
        Q_tree = np.vstack([context["X_tree"][i : i + 1], context["train"][meta]])
        proba, kind = self._members(context, counts, seeds, Q, Q_tree)
        votes = np.zeros(self._n_present)
        np.add.at(votes, np.argmax(proba[:, 0, :], axis=1), 1.0)
        votes /= L
        combined = _stack(proba[:, 0, :], proba[:, 1:, :], counts[:, meta] == 0, kind,
                          self.y_codes_[meta], self._n_present)
        return votes if combined is None else combined


def _stack(proba_x, proba_meta, oob, kind, y_meta, n_classes):
    """Out-of-bag stacked combination (module docstring); None when it cannot be trained.

    proba_x : (L, C) members on x; proba_meta : (L, M, C) members on the meta
    rows; oob : (L, M) whether a meta row is out of member b's bag.
    """
    from scipy.optimize import nnls

    types = [t for t in LEARNER_TYPES if np.any(kind == t)]
    feats = []
    avail = np.ones(proba_meta.shape[1], dtype=bool)
    x_feats = []
    for t in types:
        members = kind == t
        w = oob[members].astype(np.float64)  # (L_t, M)
        n_oob = w.sum(axis=0)
        avail &= n_oob > 0
        mean = np.einsum("bm,bmc->mc", w, proba_meta[members]) / np.maximum(n_oob, 1.0)[:, None]
        feats.append(mean)
        x_feats.append(proba_x[members].mean(axis=0))
    if not avail.any():
        return None
    A = np.stack(feats, axis=2)[avail]  # (rows, C, T)
    ax = np.stack(x_feats, axis=1)  # (C, T)
    target = np.eye(n_classes)[y_meta[avail]]  # (rows, C)
    scores = np.zeros(n_classes)
    for c in range(n_classes):
        coef, _ = nnls(A[:, c, :], target[:, c])
        scores[c] = ax[c] @ coef
    scores = np.maximum(scores, 0.0)
    total = scores.sum()
    if not total > 0:
        return None
    return scores / total
