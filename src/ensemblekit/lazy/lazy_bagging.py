"""``lazy-bagging`` (LB): bags trimmed around each test instance (Zhu & Yang 2008).

For a test instance ``x`` Lazy Bagging finds ``x``'s ``K`` nearest training
instances ``S`` under the gain-ratio weighted distance (Eq. 2, see
:mod:`ensemblekit.lazy.distance`), with ``K`` from beta-similarity (Eq. 1),
and builds ``L`` bags, each holding ``N - K`` instances drawn with
replacement from the whole training set ``T`` and ``K`` drawn with
replacement from ``S``. An unpruned tree is grown on every bag, applied to
``x``, and the class with the most votes wins (Lazy Stacking paper, Procedure
*LazyStacking* with one learner type, steps 1-7, and Section 3.2). The tree
is the papers' unpruned C4.5 (Weka's ``J48 -U``, ``tree="c45"``) or
scikit-learn's entropy tree (``tree="cart-entropy"``, the trees of versions
before 0.2).

Implementation
--------------
* Bags are vectors of counts given to the tree as instance weights
  (:func:`lazy_bag_counts`, :func:`~ensemblekit.classifiers.bagging.fit_weighted_c45`,
  :func:`~ensemblekit.classifiers.bagging.fit_weighted_tree`): no row is copied.
* The neighbours of all rows passed to ``predict`` are found in one batched
  query (:meth:`~ensemblekit.lazy.distance.WeightedDistance.kneighbors`).
* Rows are then processed in chunks through joblib (``n_jobs``). Each row
  draws its bags from its own random generator, seeded by the model's seed
  (from ``random_state`` at ``fit``) and the row's *place among the training
  values* (:func:`_row_keys`: per numeric attribute, where the value falls in
  the sorted training column; per nominal attribute, its code), and its
  neighbours depend on that row only; so a row's result is the same whatever
  rows are predicted with it, in whatever order, chunks or number of
  workers, and equal rows get equal results. The seed does not depend on the
  values themselves, so data rescaled by any strictly increasing map of its
  columns (to +-1e8 or to +-1e308) draws the very same bags (issue 29).
* The fitted state (:data:`LAZY_STATE`) is plain arrays: the training rows
  and classes, the column layout, the gain ratios, ``K`` and the seed. The
  distances, their k-d tree and the trees' matrix are rebuilt from them by
  the code that builds them at ``fit``, so a model read from a file
  predicts exactly what the fitted one did. Prediction refits, so it needs
  scikit-learn (and numba for the C4.5 trees), unlike other model files.

References
----------
.. [1] X. Zhu and Y. Yang, "A lazy bagging approach to classification",
   Pattern Recognition 41(10), pp. 2980-2992, 2008.
.. [2] H. Homayouni, S. Hashemi and A. Hamzeh, "A Lazy Ensemble Learning
   Method to Classification" (Section 3, Eqs. 1-2; Lazy Bagging is the
   baseline LB of Tables 2-3).
.. [3] L. Breiman, "Bagging predictors", Machine Learning 24(2), 1996.
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ensemblekit.errors import InputError

from ..class_domain import N_CLASSES, declared_classes, widen_proba
from ..classifiers.bagging import (
    TREE_CONSTRAINTS,
    c45_proba,
    check_tree_choice,
    fit_weighted_c45,
    fit_weighted_tree,
    nominal_modes,
    onehot_tree_matrix,
)
from ..classifiers.c45_model import KERNEL_MODULES  # noqa: F401 - C4.5's, for its trees
from ..classifiers.coded import coded_layout
from ..constraints import Constraint, validate_params
from ..rows import quiet_finite_check
from ..state import Array, Scalar
from ..trust import COUNT_MAX, CheckContext, n_jobs_attr
from .distance import WeightedDistance, beta_similarity_k, gain_ratios, normalise_weights

__all__ = ["LazyBaggingClassifier", "lazy_bag_counts"]

_SEED_MAX = np.iinfo(np.int32).max


def lazy_bag_counts(rng, n_samples, neighbours, n_bags):
    """Lazy bags as counts: ``N - K`` draws from all rows plus ``K`` from the neighbours.

    Step 4 (a)-(c) of the Lazy Stacking procedure (Lazy Bagging's bags): bag
    ``b`` holds ``N - K`` rows drawn uniformly with replacement from the
    ``N`` training rows and ``K`` rows drawn uniformly with replacement from
    the ``K`` neighbours, ``K = len(neighbours)``. With ``K = 0`` these are
    plain bootstrap bags.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the draws: first the ``n_bags x (N - K)`` draws from all
        rows, then the ``n_bags x K`` draws among the neighbours.
    n_samples : int
        Number of training rows ``N`` (>= 1).
    neighbours : ndarray of int of shape (K,)
        Training indices of the test instance's neighbours, ``0 <= K <= N``.
    n_bags : int
        Number of bags ``L``.

    Returns
    -------
    counts : ndarray of float64 of shape (n_bags, n_samples)
        Times each training row is in each bag; each bag sums to ``N``.

    Raises
    ------
    ValueError
        If there are more neighbours than rows.
    """
    neighbours = np.asarray(neighbours, dtype=np.intp)
    k = neighbours.size
    if k > n_samples:
        raise InputError(f"{k} neighbours for {n_samples} training rows")
    base = rng.integers(0, n_samples, size=(n_bags, n_samples - k))
    if k:
        local = neighbours[rng.integers(0, k, size=(n_bags, k))]
        base = np.hstack([base, local])
    offsets = (np.arange(n_bags) * n_samples)[:, None]
    flat = np.bincount((base + offsets).ravel(), minlength=n_bags * n_samples)
    return flat.reshape(n_bags, n_samples).astype(np.float64)


#: The place of a missing value in a row's seed key (every real place is >= 0).
_MISSING_PLACE = -1


def _sorted_columns(X, numeric):
    """The known training values of each numeric column, sorted (what :func:`_row_keys` reads)."""
    return [np.sort(X[~np.isnan(X[:, f]), f]) for f in numeric]


def _row_keys(model, X):
    """The key that, with the model's seed, seeds each row's bags: a 128-bit hash of its places.

    A row's place is, per numeric attribute, the pair of insertion points
    (left and right) of its value in the sorted known training values of that
    column, and per nominal attribute its code (twice); a missing value has
    the place ``(-1, -1)``. The hash of these integers depends on the row and
    the model only, so a row gets the same bags wherever it sits in the input
    and however the rows are chunked or spread over workers.

    Why places and not values (issue 29, scale invariance): the same data
    rescaled -- to +-1e8 or to +-1e308, or by any strictly increasing map of
    a column -- keeps every place, hence every seed, and so every prediction
    the rest of the path (range-normalised distances, trees that compare
    values) makes alike; a hash of the raw values gave each scaling other bags.
    Rows whose values lie between the same training values share a seed; that
    is harmless, since the seed only draws the bags, and each row's bags are
    enriched by its own neighbours. A value equal to a training value has a
    place of its own (left < right), apart from the values around it.

    Parameters
    ----------
    model : _LazyEnsemble
        A fitted lazy ensemble (its numeric and nominal columns and sorted
        training columns).
    X : ndarray of float64 of shape (n_rows, n_features_in_)
        Checked rows (nominal codes in range, NaN = missing).

    Returns
    -------
    keys : list of int
        One key in ``0 .. 2**128 - 1`` per row.
    """
    n, d = X.shape
    places = np.full((n, d, 2), _MISSING_PLACE, dtype="<i8")
    for f, column in zip(model.numeric_features_, model._part("sorted_columns")):
        known = ~np.isnan(X[:, f])
        values = X[known, f]
        places[known, f, 0] = np.searchsorted(column, values, side="left")
        places[known, f, 1] = np.searchsorted(column, values, side="right")
    for f in model.nominal_features_:
        known = ~np.isnan(X[:, f])
        places[known, f, :] = X[known, f].astype(np.int64)[:, None]
    return [int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=16).digest(), "little")
            for row in places.reshape(n, 2 * d)]


def _predict_chunk(model, X, neighbours, keys):
    """Class probabilities of a chunk of rows (run in a joblib worker or in process)."""
    from sklearn import config_context
    from threadpoolctl import threadpool_limits

    out = np.empty((X.shape[0], model._n_present))
    # one BLAS thread: sums come out the same in every process; the trees'
    # parameters were checked once at fit
    with threadpool_limits(limits=1), config_context(skip_parameter_validation=True):
        context = model._chunk_context(X)
        for i in range(X.shape[0]):
            rng = np.random.default_rng(np.random.SeedSequence([model.seed_, keys[i]]))
            out[i] = model._predict_row(i, X, neighbours[i], rng, context)
    return out


#: What a lazy ensemble's fit leaves, as a model file holds it (see ensemblekit.state): the
#: training rows and classes, the column layout, the gain ratios of Eq. 2, K and the seed.
#: Everything else prediction reads (the distances and their k-d tree, the trees' matrix, the
#: naive-Bayes tables) is rebuilt from these by the code of ``fit``
#: (``_LazyEnsemble._derived_parts``).
LAZY_STATE = {
    "n_features_in_": Scalar("int", low=1),
    "classes_": Array("int64", ("n_classes",)),
    "present_classes_": Array("int64", ("n_present",), low=0, below="n_classes"),
    "y_codes_": Array("int64", ("n_samples",), low=0, below="n_present"),
    "X_": Array("float64", ("n_samples", "n_features_in_"), nan=True),
    "nominal_features_": Array("int64", ("n_nominal",), low=0, below="n_features_in_"),
    "n_categories_": Array("int64", ("n_nominal",), low=1, high=COUNT_MAX),
    "numeric_features_": Array("int64", ("n_numeric",), low=0, below="n_features_in_"),
    "modes_": Array("int64", ("n_nominal",), low=0),
    # a gain ratio is at most 1 in exact arithmetic; no upper bound is stated so that a
    # rounding above it never refuses a model a fit produced
    "gain_ratios_": Array("float64", ("n_features_in_",), low=0),
    "k_": Scalar("int", low=0, high="n_samples"),
    "seed_": Scalar("int", low=0, high=_SEED_MAX - 1),
}

#: Largest ``n_samples * (n_numeric + sum(n_categories_))``: the size of the one-hot matrices
#: prediction rebuilds (the distance's embedding, the cart-entropy trees' matrix).
_LAYOUT_MAX = COUNT_MAX


def _increasing(values) -> bool:
    return bool(np.all(values[1:] > values[:-1]))


class _LazyEnsemble(ClassifierMixin, BaseEstimator):
    """Fitting and batched, parallel prediction shared by the lazy ensembles."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.non_deterministic = False
        return tags

    # --- parameters ----------------------------------------------------
    #: Parameters shared by the lazy ensembles. ``n_estimators`` stops at 1000: prediction
    #: loops over the bags of every test row, and model files are checked against this bound.
    _parameter_constraints = {
        "n_estimators": Constraint("int", "bags and trees per test instance (L)", low=1,
                                   high=1000),
        "beta": Constraint("float", "beta-similarity: K = round(N (1 - beta) log4 N)", low=0,
                           high=1, closed="neither"),
        "n_neighbors": Constraint("int", "K directly (none = from beta)", low=0, none_ok=True),
        **TREE_CONSTRAINTS,
        "nominal_features": Constraint("any", "indices of the columns holding nominal codes"),
        "n_categories": Constraint("any", "number of categories of each nominal column"),
        "n_jobs": Constraint("int", "workers for the test rows (joblib; -1 = all cores)",
                             none_ok=True),
        "random_state": Constraint("any", "seed of the model"),
        "n_classes": N_CLASSES,
    }

    @property
    def _n_present(self) -> int:
        """Classes with training rows: the width of the members' probabilities."""
        return self.present_classes_.size

    def _validate_params_once(self):
        validate_params(self)
        check_tree_choice(self)
        j = self.n_jobs
        if j == 0:  # joblib's rule: a count of workers, or -1, -2, ... counted from all cores
            raise InputError(f"n_jobs must be a non-zero integer or None, got {j!r}")

    # --- fit -----------------------------------------------------------
    def fit(self, X, y):
        """Store the training set, learn the attribute weights and the neighbourhood size.

        Lazy learning defers the ensembles to prediction time; ``fit``
        validates the parameters, computes the gain-ratio weights and the
        neighbour index of Eq. 2, ``K`` (Eq. 1 or ``n_neighbors``), the
        trees' encoding of the data, and draws the model's seed.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns raw; the columns in ``nominal_features`` hold
            integer codes ``0 .. r - 1``. NaN marks a missing value; infinite
            values are rejected.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On a bad parameter (see the class docstring: e.g. ``n_estimators``
            < 1, ``beta`` outside (0, 1), ``n_neighbors`` < 0 or larger than
            the training set), ``X`` empty, not 2-D or infinite, ``y``
            continuous or of another length, a nominal column holding a
            value that is not a code ``0 .. r - 1``, or, with ``n_classes``, a
            label that is not a code ``0 .. n_classes - 1``; with
            ``tree="cart-entropy"``, a value beyond float32's range (about
            3.4e38), which those trees cannot read (a ``ColumnError``). Values
            near the float limits are otherwise computed with, not refused.
        """
        self._validate_params_once()
        with quiet_finite_check():
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        # the ensembles work on the classes that have rows; declared classes
        # without rows get probability 0 (predict_proba widens)
        self.classes_, declared = declared_classes(y, self.n_classes)
        present, y_codes = np.unique(declared, return_inverse=True)
        self.present_classes_ = present.astype(np.intp)
        self.y_codes_ = y_codes.astype(np.intp)
        n = X.shape[0]
        self.nominal_features_, self.n_categories_, self.numeric_features_ = coded_layout(
            X, self.nominal_features, self.n_categories)
        if self.n_neighbors is None:
            self.k_ = beta_similarity_k(n, float(self.beta))
        else:
            if self.n_neighbors > n:
                raise InputError(
                    f"n_neighbors={self.n_neighbors} is larger than the training set ({n} rows)"
                )
            self.k_ = int(self.n_neighbors)
        # the training rows, kept for the distance and the trees (a copy: the caller's array
        # may change)
        self.X_ = np.array(X, dtype=np.float64, order="C")
        # the weights of Eq. 2 (WeightedDistance(weights="gain-ratio") computes the same)
        self.gain_ratios_ = gain_ratios(self.X_, y_codes, self.nominal_features_,
                                        self.n_categories_)
        # the cart-entropy trees fill a missing nominal value with the training mode (the
        # lowest code on ties)
        self.modes_ = nominal_modes(X, self.nominal_features_, self.n_categories_)
        self.seed_ = int(check_random_state(self.random_state).randint(_SEED_MAX))
        # what prediction reads besides the declared state, built now (a fitted estimator's
        # __dict__ does not change at predict) by the code that rebuilds it for a loaded model
        self._parts = self._derived_parts()
        return self

    # --- what prediction reads, derived from the declared state ---------
    def _derived_parts(self) -> dict:
        """The objects prediction reads, built from the declared state (``LAZY_STATE``).

        ``distance``: Eq. 2 with the gain-ratio weights; ``X_tree``: the training rows as
        the trees see them (``nan_free``: without NaN); ``sorted_columns``: the sorted
        known values of each numeric column (the rows' seed keys, :func:`_row_keys`);
        subclasses add theirs.
        """
        distance = WeightedDistance.from_fitted(
            self.X_, normalise_weights(self.gain_ratios_), self.nominal_features_,
            self.n_categories_, gain_ratios=self.gain_ratios_)
        X_tree = self._tree_matrix(self.X_)
        return {"distance": distance, "X_tree": X_tree, "nan_free": not np.isnan(X_tree).any(),
                "sorted_columns": _sorted_columns(self.X_, self.numeric_features_)}

    def _part(self, name: str):
        """A derived part (:meth:`_derived_parts`), built on first use for a loaded model."""
        parts = self.__dict__.get("_parts")
        if parts is None:
            if "X_" not in self.__dict__:
                raise AttributeError(f"this {type(self).__name__} is not fitted")
            parts = self.__dict__["_parts"] = self._derived_parts()
        return parts[name]

    @property
    def distance_(self) -> WeightedDistance:
        """Eq. 2 with the gain-ratio weights on the training rows (finds the neighbours)."""
        return self._part("distance")

    @property
    def X_tree_(self) -> np.ndarray:
        """The training rows as the trees see them (see :meth:`_tree_matrix`)."""
        return self._part("X_tree")

    @property
    def _tree_nan_free(self) -> bool:
        return self._part("nan_free")

    def _check_lazy_state(self, ctx: CheckContext) -> None:
        """The rules of a loaded lazy ensemble's state that its declaration cannot state.

        The parameters are valid together (``max_depth`` only with cart-entropy
        trees), ``classes_`` are distinct and ascending (the codes ``0 ..
        n_classes - 1`` when ``n_classes`` declares them), every class of
        ``present_classes_`` has training rows, the nominal and numeric columns
        part the columns, ``X_``'s nominal columns hold codes of their
        categories, the modes are codes, ``k_`` is the ``K`` of the parameters,
        and the one-hot matrices prediction rebuilds stay within a fit's size.
        """
        try:
            self._validate_params_once()
        except (InputError, TypeError, ValueError) as exc:
            ctx.fail(f"parameters: {exc}")
        n_jobs_attr(ctx, self)
        classes, present = self.classes_, self.present_classes_
        if not _increasing(classes):
            ctx.fail("classes_ are not distinct labels in ascending order")
        if self.n_classes is not None and not np.array_equal(classes, np.arange(classes.size)):
            ctx.fail(f"classes_ are not the codes 0..{classes.size - 1} n_classes declares")
        if not present.size or not _increasing(present):
            ctx.fail("present_classes_ is not a non-empty ascending list of class codes")
        if self.n_classes is None and present.size != classes.size:
            ctx.fail("present_classes_ leaves out classes although n_classes declares none")
        if np.any(np.bincount(self.y_codes_, minlength=present.size) == 0):
            ctx.fail("y_codes_ does not hold every class of present_classes_")
        d = self.n_features_in_
        nominal, categories = self.nominal_features_, self.n_categories_
        if not _increasing(nominal):
            ctx.fail("nominal_features_ is not an ascending list of columns")
        is_numeric = np.ones(d, dtype=bool)
        is_numeric[nominal] = False
        if not np.array_equal(self.numeric_features_, np.flatnonzero(is_numeric)):
            ctx.fail("numeric_features_ are not the columns nominal_features_ leaves")
        n = self.y_codes_.size
        width = self.numeric_features_.size + int(categories.sum())
        if n * width > _LAYOUT_MAX:
            ctx.fail(f"{n} rows of {width} one-hot columns is beyond any fit")
        for f, r in zip(nominal, categories):
            col = self.X_[:, f]
            seen = col[~np.isnan(col)]
            if np.any((seen < 0) | (seen >= r) | (seen != np.floor(seen))):
                ctx.fail(f"X_ column {int(f)} holds a value that is not one of its codes")
        if np.any(self.modes_ >= categories):
            ctx.fail("modes_ holds a value that is not a code of its column")
        want = (beta_similarity_k(n, float(self.beta)) if self.n_neighbors is None
                else int(self.n_neighbors))
        if self.k_ != want:
            ctx.fail(f"k_ = {self.k_} is not the K of the parameters ({want})")

    def _tree_matrix(self, X):
        """The matrix the trees see.

        ``tree="c45"``: ``X`` itself (float64, C-ordered: codes and NaN);
        ``"cart-entropy"``: float32, numeric columns, then one indicator per
        nominal value.
        """
        if self.tree == "c45":
            return np.ascontiguousarray(X, dtype=np.float64)
        from ..classifiers.cart_model import check_float32_range

        check_float32_range(X)  # the cart-entropy trees read float32
        return onehot_tree_matrix(X, self.numeric_features_, self.nominal_features_,
                                  self.n_categories_, self.modes_)

    # --- predict -------------------------------------------------------
    def _check_X(self, X):
        check_is_fitted(self, "distance_")
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan",
                              reset=False)
        for f, r in zip(self.nominal_features_, self.n_categories_):
            col = X[:, f]
            seen = col[~np.isnan(col)]
            bad = (seen < 0) | (seen >= r) | (seen != np.floor(seen))
            if bad.any():
                raise InputError(
                    f"nominal feature {f} holds {float(seen[bad][0]):g}, not one of the codes "
                    f"0..{int(r) - 1} the model was fitted with"
                )
        return X

    def _n_query_neighbors(self):
        return self.k_

    def _chunk_context(self, X):
        """Per-chunk precomputation shared by the rows of the chunk.

        ``train``: the training matrix the trees are grown on. scikit-learn's
        check for infinite values refuses a read-only float32 array (as a
        model loaded from a memory map, or a joblib worker's copy, holds), so
        such a matrix with NaN in it is copied once per chunk.
        """
        train = self.X_tree_
        if self.tree != "c45" and not self._tree_nan_free and not train.flags.writeable:
            train = train.copy()
        # c45 trees are grown on the declared class codes (J48 sees every declared class)
        y_tree = self.present_classes_[self.y_codes_]
        nominal = np.zeros(self.n_features_in_, dtype=bool)
        nominal[self.nominal_features_] = True
        return {"X_tree": self._tree_matrix(X), "train": train, "y_tree": y_tree,
                "nominal": nominal}

    def predict_proba(self, X):
        """Class probabilities of each row from the ensemble built for that row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Same layout as in :meth:`fit`; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to 1 (0 for a declared class
            without training rows). A row's values depend only on the fitted
            model and the row itself (not on the other rows, their order,
            chunking or ``n_jobs``).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has the wrong number of columns, infinite values, or a
            nominal column holds a value that is not a fitted code; with
            ``tree="cart-entropy"``, a value beyond float32's range.
        """
        from joblib import Parallel, delayed, effective_n_jobs

        from ensemblekit._workers import parallel_options

        X = self._check_X(X)
        n = X.shape[0]
        _, neighbours = self.distance_.kneighbors(X, self._n_query_neighbors())
        keys = _row_keys(self, X)
        workers = effective_n_jobs(self.n_jobs)
        if workers == 1 or n < 2:
            proba = _predict_chunk(self, X, neighbours, keys)
        else:
            n_chunks = min(n, 4 * workers)
            bounds = np.linspace(0, n, n_chunks + 1).astype(int)
            # the workers end with this process, even when it is killed (see ensemblekit._workers)
            proba = np.vstack(Parallel(n_jobs=self.n_jobs, **parallel_options())(
                delayed(_predict_chunk)(self, X[a:b], neighbours[a:b], keys[a:b])
                for a, b in itertools.pairwise(bounds)
            ))
        return widen_proba(proba, self.present_classes_, self.classes_.size)

    def predict(self, X):
        """Class of each row: the largest :meth:`predict_proba`, the first in ``classes_`` on ties.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.

        Raises
        ------
        See :meth:`predict_proba`.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def _grow_tree(self, context, counts, seed):
        """One member tree on a bag of ``context["train"]`` given as counts."""
        if self.tree == "c45":
            return fit_weighted_c45(context["train"], context["y_tree"], counts,
                                    min_samples_leaf=self.min_samples_leaf,
                                    nominal_features=self.nominal_features_,
                                    n_categories=self.n_categories_,
                                    n_classes=self.classes_.size)
        # the float32 matrix was checked at fit: skip scikit-learn's checks
        # unless NaN needs its missing-value mask
        return fit_weighted_tree(context["train"], self.y_codes_, counts,
                                 min_samples_leaf=self.min_samples_leaf,
                                 max_depth=self.max_depth, random_state=int(seed),
                                 check_input=not self._tree_nan_free)

    def _tree_proba(self, tree, Q_tree, context):
        """A member tree's class probabilities for rows of the trees' matrix, shape (m, n_present).

        The rows were checked (:meth:`_check_X`, or training rows checked at fit).
        """
        if self.tree == "c45":
            return c45_proba(tree, Q_tree, context["nominal"])[:, self.present_classes_]
        return tree.predict_proba(Q_tree, check_input=False)


class LazyBaggingClassifier(_LazyEnsemble):
    """Lazy Bagging: for each test instance, bagged unpruned trees on bags enriched with its neighbours.

    For a test row ``x``: ``K`` nearest training rows under the gain-ratio
    weighted distance of Eq. 2; ``n_estimators`` bags of ``N - K`` rows
    bootstrapped from the training set plus ``K`` rows bootstrapped from the
    neighbours (:func:`lazy_bag_counts`); an unpruned tree per bag, grown
    from the counts as instance weights; the majority vote of the trees
    (``voting="hard"``, the papers' rule) or the mean of their leaf class
    distributions (``"soft"``). Probabilities are the vote shares (hard) or
    mean distributions (soft); ``predict`` takes the largest, the first class
    in ``classes_`` on ties.

    The trees see the data as the tree's own registry entry does: with
    ``tree="c45"`` (unpruned J48) nominal codes and missing values as they
    are; with ``"cart-entropy"`` numeric columns as they are (missing values
    routed by the tree) and nominal columns one-hot after replacing a missing
    value by the training mode.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of bags and trees per test instance (the papers' L), 1 to 1000.
    beta : float, default=0.99
        Beta-similarity of Eq. 1, in (0, 1): ``K = round(N (1 - beta) log4 N)``.
    n_neighbors : int or None, default=None
        Set ``K`` directly (0 .. N; 0 gives plain bagging per instance);
        None uses ``beta``.
    voting : {"hard", "soft"}, default="hard"
        Majority vote (Zhu & Yang) or average of the trees' probabilities.
    tree : {"c45", "cart-entropy"}, default="c45"
        The base tree: unpruned C4.5 (Weka's ``J48 -U``, the papers') or
        scikit-learn's binary entropy tree.
    min_samples_leaf : int, default=2
        Minimum instances per leaf, repeats counted (J48's ``-M 2``), >= 1.
    max_depth : int or None, default=None
        Depth limit of the ``cart-entropy`` trees (None: unlimited); must stay
        None with ``tree="c45"``.
    nominal_features : array-like of int or None, default=None
        Indices of the columns holding nominal codes ``0 .. r - 1`` (NaN =
        missing); all other columns are numeric.
    n_categories : array-like of int or None, default=None
        Number of categories of each nominal column, in the order of the
        sorted ``nominal_features``; default: the largest code seen plus one.
    n_jobs : int or None, default=None
        Workers for the test rows (joblib; None = 1 unless a joblib context
        says otherwise, -1 = all cores). Results do not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seed of the model, drawn at ``fit``; with the row's place among the
        training values (see ``_row_keys``) it seeds every row's bags and trees.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and ``predict_proba`` has a column for each, 0 for a class without
        training rows. None: the distinct labels of ``y``.

    Attributes
    ----------
    k_ : int
        The number of neighbours K used.
    X_ : ndarray of float64 of shape (n_samples, n_features_in_)
        The training rows (nominal codes, NaN = missing), C-ordered.
    gain_ratios_ : ndarray of float64 of shape (n_features_in_,)
        Gain ratio of each attribute (the weights of Eq. 2 before normalising).
    distance_ : ensemblekit.lazy.distance.WeightedDistance
        Eq. 2 on the training set: ``distance_.gain_ratios_`` are the raw gain
        ratios, ``distance_.weights_`` the normalised weights ``IR'``. Built
        from ``X_`` and ``gain_ratios_`` (a loaded model builds it on first use).
    X_tree_ : ndarray
        The training rows as the trees see them: ``X_`` (c45), or float32
        numeric columns then nominal indicators (cart-entropy); built like
        ``distance_``.
    y_codes_ : ndarray of int of shape (n_samples,)
        Training classes as indices into ``present_classes_``.
    present_classes_ : ndarray of int
        The indices into ``classes_`` of the classes that have training rows
        (all of them unless ``n_classes`` declares more).
    modes_ : ndarray of int
        Training mode of each nominal column (fills its missing values for the
        cart-entropy trees).
    nominal_features_, numeric_features_ : ndarray of int
        Column indices of the nominal and numeric attributes.
    n_categories_ : ndarray of int
        Categories of each nominal column.
    seed_ : int
        The model's seed.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted, or ``arange(n_classes)``.
    n_features_in_ : int
        Number of columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` had string column names.

    See Also
    --------
    ensemblekit.lazy.lazy_stacking.LazyStackingClassifier : different learner types per bag.
    ensemblekit.classifiers.bagging.BaggedTreeClassifier : the eager rival (TB).

    References
    ----------
    .. [1] X. Zhu and Y. Yang, "A lazy bagging approach to classification",
       Pattern Recognition 41(10), pp. 2980-2992, 2008.
    .. [2] H. Homayouni, S. Hashemi and A. Hamzeh, "A Lazy Ensemble Learning
       Method to Classification", Eqs. 1-2 and Section 3.2.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0], [1.0, 0], [2.0, 1], [3.0, 1], [4.0, 1], [5.0, 0]] * 4)
    >>> y = np.array([0, 0, 0, 1, 1, 1] * 4)
    >>> clf = LazyBaggingClassifier(n_estimators=5, nominal_features=[1], random_state=0)
    >>> clf.fit(X, y).k_  # round(24 * 0.01 * log4(24)) = round(0.55)
    1
    >>> clf.predict([[0.5, 0], [4.5, 1]]).tolist()
    [0, 1]
    """

    _parameter_constraints = {
        **_LazyEnsemble._parameter_constraints,
        "voting": Constraint("choice", "majority vote or mean tree probabilities",
                             choices=("hard", "soft")),
    }

    #: What a fit leaves, as a model file holds it (see ensemblekit.state); the distance and
    #: the trees' matrix are rebuilt from it.
    _fitted_state = LAZY_STATE

    def _check_state(self, ctx: CheckContext) -> None:
        """The cross-entry rules of a loaded model (see ``_check_lazy_state``)."""
        self._check_lazy_state(ctx)

    def __init__(self, n_estimators=10, beta=0.99, n_neighbors=None, voting="hard", tree="c45",
                 min_samples_leaf=2, max_depth=None, nominal_features=None, n_categories=None,
                 n_jobs=None, random_state=None, n_classes=None):
        self.n_estimators = n_estimators
        self.beta = beta
        self.n_neighbors = n_neighbors
        self.voting = voting
        self.tree = tree
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.n_classes = n_classes

    def _predict_row(self, i, X, neighbours, rng, context):
        L = int(self.n_estimators)
        counts = lazy_bag_counts(rng, self.y_codes_.size, neighbours[: self.k_], L)
        seeds = rng.integers(0, _SEED_MAX, size=L)
        x = context["X_tree"][i : i + 1]
        proba = np.zeros(self._n_present)
        for b in range(L):
            tree = self._grow_tree(context, counts[b], seeds[b])
            p = self._tree_proba(tree, x, context)[0]
            if self.voting == "soft":
                proba += p
            else:
                proba[np.argmax(p)] += 1.0
        if self.tree == "c45" and self.voting == "soft":
            # a J48 row may sum to less than 1 (a missing value's empty branches): normalise
            # the sum, as Weka's Bagging does
            total = proba.sum()
            return proba / total if total > 0 else proba
        return proba / L
