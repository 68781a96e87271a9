"""``knn``'s fitted state as plain arrays, and IBk's prediction in numpy.

:class:`IBkModel` is what a saved ``knn`` model is rebuilt as: the stored training
rows, their classes, the ranges of the numeric columns, and Weka IBk's prediction
over them (the rules are listed in :mod:`ensemblekit.classifiers.ibk`; the code
that applies them lives here, and the estimator
:class:`ensemblekit.classifiers.ibk.IBk`, which only stores its training rows,
inherits it). Prediction is serial numpy, a block of test rows at a time; it
never used joblib, so ``n_jobs`` plays no part.

Every rule is computed here once: the ranges each test row sees, the scaled values, the
difference to a missing value, the neighbours and their weights, the class distribution.
The steps that are long chains of small array operations, the squared differences
summed attribute by attribute (:func:`ordered_sums`; on all-nominal rows a count of
mismatches) and the count of uniform votes, have compiled twins in
:mod:`ensemblekit.classifiers._ibk_kernels` that the estimator uses and that give the
same bits; this module, which a model file is rebuilt with, imports numba only for a
model fitted in this process by :meth:`IBkModel.fit_coded` (as ``ensemblekit compare``
does), never for one rebuilt from a file.
"""

from __future__ import annotations

import copy

import numpy as np

from ..class_domain import N_CLASSES, declared_classes
from ..constraints import Constraint
from ..rows import check_rows
from ..state import Array, Scalar
from ..trust import COUNT_MAX
from .coded import check_coded_training, check_codes, coded_layout, numeric_columns

#: The modules of compiled (numba) kernels a fit or prediction loads (see
#: :data:`ensemblekit.classifiers.c45_model.KERNEL_MODULES`).
KERNEL_MODULES = ("ensemblekit.classifiers._ibk_kernels",)

__all__ = ["IBkModel", "WEIGHTS", "RANGE_UPDATES"]

#: Neighbour weightings: 1 (IBk's default), 1/(d + 0.001) (``-I``), 1 - d (``-F``).
WEIGHTS = ("uniform", "inverse", "similarity")
#: How the attribute ranges treat test rows: widened by each row in turn (Weka), or fixed.
RANGE_UPDATES = ("cumulative", "none")

#: Test-row x training-row distances held at a time, at most (one block: 8 MB per array).
_BLOCK = 1 << 20
#: One-byte codes of a missing value in the compiled mismatch count: a test row's and a
#: training row's differ from each other and from every code below them.
_TEST_MISSING, _TRAIN_MISSING = 255, 254
#: Most attributes whose mismatches the compiled count adds up (in 16 bits).
_COUNT_MAX = (1 << 16) - 1


class IBkModel:
    """A fitted ``knn`` (Weka's IBk): stored rows, ranges, and the prediction (numpy only).

    The base of :class:`ensemblekit.classifiers.ibk.IBk` (see there and the
    module :mod:`ensemblekit.classifiers.ibk` for the parameters and every rule),
    and the class a saved ``knn`` model is rebuilt as.

    Parameters
    ----------
    n_neighbors : int >= 1, default=1
    weights : {"uniform", "inverse", "similarity"}, default="uniform"
    range_update : {"cumulative", "none"}, default="cumulative"
    cross_validate : bool, default=False
    mean_squared : bool, default=False
    window_size : int >= 0, default=0
    nominal_features : array-like of int or None, default=None
    n_categories : array-like of int or None, default=None
    n_classes : int >= 1 or None, default=None
        As :class:`~ensemblekit.classifiers.ibk.IBk`. Prediction reads the fitted
        ``n_neighbors_``, ``weights`` and ``range_update``; the layout of the
        columns comes from the fitted ``nominal_features_`` and ``n_categories_``.

    Attributes
    ----------
    n_neighbors_ : int
        The number of neighbours ``k`` prediction uses: ``n_neighbors``, or with
        ``cross_validate`` the one hold-one-out chose in ``1 .. n_neighbors``.
    X_train_ : ndarray of float64 of shape (n_samples_fit_, n_features_in_)
        The stored training rows (NaN marks a missing value; nominal columns as codes;
        with ``window_size`` only the last ones).
    y_train_ : ndarray of int64 of shape (n_samples_fit_,)
        Index into ``classes_`` of each stored row's class.
    feature_min_, feature_max_ : ndarray of float64 of shape (n_features_in_,)
        Minimum and maximum of the known training values of each column
        (``inf`` and ``-inf`` for a column with none), and of the rows taken in by
        :meth:`widened` in a widened copy.
    nominal_features_ : ndarray of int64 of shape (n_nominal,)
        Sorted indices of the nominal columns.
    n_categories_ : ndarray of int64 of shape (n_nominal,)
        Declared values of each nominal column.
    classes_ : ndarray of shape (n_classes,)
        Class labels (``arange(n_classes)`` when declared).
    n_samples_fit_ : int
        Number of stored training rows.
    n_features_in_ : int
        Number of columns.

    References
    ----------
    .. [1] Weka 3.9.7: ``weka.classifiers.lazy.IBk``, ``weka.core.EuclideanDistance``,
       ``weka.core.NormalizableDistance``, ``weka.core.neighboursearch.LinearNNSearch``.
    """

    _parameter_constraints = {
        "n_neighbors": Constraint("int", "number of neighbours k; rows tied with the k-th vote "
                                  "too (IBk -K)", low=1),
        "weights": Constraint("choice", "vote weight: uniform, inverse = 1/(d+0.001) (IBk -I), "
                              "similarity = 1-d (IBk -F)", choices=WEIGHTS),
        "range_update": Constraint("choice", "cumulative: each test row widens the numeric "
                                   "ranges for itself and later rows, as Weka; none: training "
                                   "ranges only", choices=RANGE_UPDATES),
        "cross_validate": Constraint("bool", "choose k in 1..n_neighbors by hold-one-out on "
                                     "the training rows, the lowest of fewest errors (IBk -X)"),
        "mean_squared": Constraint("bool", "with cross_validate, mean squared rather than mean "
                                   "absolute error for a numeric class (IBk -E); knn's classes "
                                   "are nominal, so it changes nothing, as in Weka"),
        "window_size": Constraint("int", "keep only the last W training rows; 0: all (IBk -W)",
                                  low=0),
        "nominal_features": Constraint("any", "indices of the nominal columns (codes)",
                                       none_ok=True),
        "n_categories": Constraint("any", "declared values of each nominal column",
                                   none_ok=True),
        "n_classes": N_CLASSES,
    }

    def __init__(self, n_neighbors=1, weights="uniform", range_update="cumulative",
                 cross_validate=False, mean_squared=False, window_size=0,
                 nominal_features=None, n_categories=None, n_classes=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.range_update = range_update
        self.cross_validate = cross_validate
        self.mean_squared = mean_squared
        self.window_size = window_size
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_classes = n_classes

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "n_samples_fit_": Scalar("int", low=1),
        # optional: a knn file written before it was stored has none, and its k is n_neighbors
        "n_neighbors_": Scalar("int", low=1, high=COUNT_MAX, optional=True),
        "classes_": Array("int64", ("n_classes",)),
        "X_train_": Array("float64", ("n_samples_fit_", "n_features_in_"), nan=True),
        "y_train_": Array("int64", ("n_samples_fit_",), low=0, below="n_classes"),
        "feature_min_": Array("float64", ("n_features_in_",), inf=True),
        "feature_max_": Array("float64", ("n_features_in_",), inf=True),
        "nominal_features_": Array("int64", ("n_nominal",), low=0, below="n_features_in_"),
        "n_categories_": Array("int64", ("n_nominal",), low=1, high=COUNT_MAX),
    }

    def model_size(self) -> int:
        """The model's size for ``-m model-size``: the training instances it stores
        (its prototypes)."""
        return int(self.n_samples_fit_)

    def _check_state(self, ctx) -> None:
        """The rules no entry states alone: the classes, nominal codes of the stored rows,
        ranges that are those of the stored rows, prediction's parameters, a chosen k among
        those tried (or ``n_neighbors`` itself without ``cross_validate``) and no more rows
        than the window. A state without ``n_neighbors_`` (a file written before it was
        stored, when k was always ``n_neighbors``) gets ``n_neighbors``."""
        if getattr(self, "weights", "uniform") not in WEIGHTS:
            ctx.fail(f"weights = {self.weights!r} is not one of {', '.join(WEIGHTS)}")
        if getattr(self, "range_update", "none") not in RANGE_UPDATES:
            ctx.fail(f"range_update = {self.range_update!r} is not one of "
                     f"{', '.join(RANGE_UPDATES)}")
        k = getattr(self, "n_neighbors", 1)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= COUNT_MAX:
            ctx.fail(f"n_neighbors = {k!r} is not a count >= 1")
        chosen = self.n_neighbors_
        if chosen is None and getattr(self, "cross_validate", False) is not True:
            # a file written before the k used was stored: it is n_neighbors
            self.n_neighbors_ = chosen = int(k)
        if chosen is None:
            ctx.fail("n_neighbors_ is missing: cross_validate needs the k it chose")
        if getattr(self, "cross_validate", False) is True:
            if chosen > k:
                ctx.fail(f"n_neighbors_ = {chosen} is not one of the k's hold-one-out tries "
                         f"(1 .. n_neighbors = {k})")
        elif chosen != k:
            ctx.fail(f"n_neighbors_ = {chosen} is not n_neighbors = {k} (no cross_validate)")
        window = getattr(self, "window_size", 0)
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
            ctx.fail(f"window_size = {window!r} is not a count >= 0")
        if window and self.n_samples_fit_ > window:
            ctx.fail(f"n_samples_fit_ = {self.n_samples_fit_} is more rows than "
                     f"window_size = {window} keeps")
        classes = self.classes_
        n_classes = getattr(self, "n_classes", None)
        if n_classes is not None:
            if not np.array_equal(classes, np.arange(n_classes)):
                ctx.fail(f"classes_ are not the codes 0 .. {n_classes - 1}")
        elif np.any(np.diff(classes) <= 0):
            ctx.fail("classes_ are not increasing")
        nominal = self.nominal_features_
        if np.any(np.diff(nominal) <= 0):
            ctx.fail("nominal_features_ are not increasing column indices")
        rows = self.X_train_
        coded = np.nan_to_num(rows[:, nominal], nan=0.0)  # NaN: a missing value
        if np.any((coded < 0) | (coded >= self.n_categories_) | (coded != np.floor(coded))):
            ctx.fail("X_train_ holds a nominal value that is not one of its column's codes")
        known = ~np.isnan(rows)
        for name, want in (("feature_min_", np.where(known, rows, np.inf).min(axis=0)),
                           ("feature_max_", np.where(known, rows, -np.inf).max(axis=0))):
            if not np.array_equal(getattr(self, name), want):
                ctx.fail(f"{name} is not the range of the known values of X_train_")

    # ---- fitting (on arrays already in the coded layout; the estimator IBk adds
    # scikit-learn's checks of array-likes and data frames)
    def fit_coded(self, X, y):
        """Store the training rows and their numeric ranges, from arrays in the coded layout.

        What ``ensemblekit compare`` and ``ensemblekit fit`` call on the rows their
        readers produce, so that neither imports scikit-learn for ``knn``: the fitted
        state is the one :meth:`ensemblekit.classifiers.ibk.IBk.fit` stores from the
        same arrays (that method adds scikit-learn's checks of array-likes and data
        frames). A model fitted here sums its distances with the compiled kernel, as
        the estimator does (the same bits); a model rebuilt from a file keeps the numpy
        sum.

        Parameters
        ----------
        X : ndarray of float64 of shape (n_samples, n_features)
            The training rows in the layout of :mod:`ensemblekit.classifiers.coded`
            (NaN a missing value; no infinity).
        y : ndarray of shape (n_samples,)
            Their classes: with ``n_classes``, the codes ``0 .. n_classes - 1``.

        Returns
        -------
        self : IBkModel
            Fitted, with the state listed in the class docstring.

        Raises
        ------
        ensemblekit.errors.InputError
            A parameter out of its range; rows refused by
            :func:`~ensemblekit.classifiers.coded.check_coded_training`; a label that is
            not a declared class code, or a nominal value that is not one of its codes.
        """
        from ..constraints import validate_params

        validate_params(self)
        self._fit_checked(X, check_coded_training(X, y))
        self._compiled = True
        return self

    def _fit_checked(self, X, y, declared=None):
        """Store the fitted state from a float64 matrix and labels whose shapes are checked:
        the common tail of :meth:`fit_coded` and ``IBk.fit`` (class codes, nominal codes,
        ranges). ``declared`` is ``(nominal_features, n_categories)`` when a data frame's
        dtypes declared them, else None (the parameters say)."""
        classes, codes = declared_classes(y, self.n_classes)
        nominal, cats, _ = coded_layout(X, *(declared or (self.nominal_features,
                                                          self.n_categories)))
        if self.window_size and X.shape[0] > self.window_size:
            # as IBk -W: only the last rows are kept (the classes and the column layout
            # are still those of every row, as Weka's header is)
            X, codes = X[-self.window_size:], codes[-self.window_size:]
        self.X_train_ = np.ascontiguousarray(X)
        self.y_train_ = codes.astype(np.int64)
        known = ~np.isnan(X)
        # with no missing value the rows are their own known values (the same reduction)
        some_missing = not known.all()
        self.feature_min_ = (np.where(known, X, np.inf) if some_missing else X
                             ).min(axis=0, initial=np.inf)
        self.feature_max_ = (np.where(known, X, -np.inf) if some_missing else X
                             ).max(axis=0, initial=-np.inf)
        self.nominal_features_ = nominal.astype(np.int64)
        self.n_categories_ = cats.astype(np.int64)
        self.classes_ = classes
        self.n_samples_fit_ = int(X.shape[0])
        self.n_features_in_ = int(X.shape[1])
        self.n_neighbors_ = int(self.n_neighbors)
        if self.cross_validate:
            self.n_neighbors_ = self._hold_one_out_k()
        return self

    def _hold_one_out_k(self):
        """The ``k`` in ``1 .. n_neighbors`` with the fewest hold-one-out errors on the stored
        rows (the lowest such ``k``), as IBk's ``crossValidate`` (``-X``) chooses it.

        Each stored row is classified by the others under the training ranges: its
        neighbour list is the ``n_neighbors`` nearest other rows and every row tied with
        the last of them (a row is never its own neighbour; a copy of it is); for each
        smaller ``k`` the list is cut after the k-th and the rows tied with it, ties
        judged on the distance IBk weighs by (``sqrt(squared distance / attributes)``,
        which rounding may tie where the squared distances differ). The vote is
        :meth:`predict_proba`'s (``1/n`` per class, ``n`` the stored rows), and a row is an
        error when its first class of largest probability is not its own. A numeric
        class, which Weka scores by absolute (or, with ``-E``, squared) error, is not
        among knn's, so ``mean_squared`` plays no part here.
        """
        upper, n = int(self.n_neighbors), self.n_samples_fit_
        if n < 2:  # no other row: every k gives the same vote, and the lowest k wins
            return 1
        errors = np.zeros(upper, dtype=np.int64)
        listed_k = min(upper, n - 1)
        for s, e, sq in self._distance_blocks(self.X_train_, widen=False):
            m = e - s
            others = np.ones(sq.shape, dtype=bool)
            others[np.arange(m), np.arange(s, e)] = False
            sq = sq[others].reshape(m, n - 1)
            classes = np.broadcast_to(self.y_train_, (m, n))[others].reshape(m, n - 1)
            kth = np.partition(sq, listed_k - 1, axis=1)[:, listed_k - 1]
            listed = sq <= kth[:, None]
            d = np.sqrt(np.sqrt(sq) ** 2 / max(1, self.n_features_in_))
            nearest = np.argsort(np.where(listed, sq, np.inf), axis=1, kind="stable")
            ranked = np.take_along_axis(d, nearest, axis=1)  # nearest first
            truth = self.y_train_[s:e]
            for k in range(1, upper + 1):
                chosen = (listed if k >= listed_k
                          else listed & (d <= ranked[:, k - 1][:, None]))
                dist = np.full((m, self.classes_.size), 1.0 / n)
                total = np.full(m, self.classes_.size / n)
                self._add_chosen(sq, chosen, classes, dist, total)
                proba = dist / np.where(total > 0, total, 1.0)[:, None]
                errors[k - 1] += np.count_nonzero(np.argmax(proba, axis=1) != truth)
        return int(np.argmin(errors)) + 1  # the first (lowest k) of the fewest errors

    # ---- prediction
    def _validated_X(self, X):
        X = check_rows(self, X, allow_nan=True)
        check_codes(X, self.nominal_features_, self.n_categories_)
        return X

    def predict_proba(self, X):
        """Class distributions of the rows, as IBk's ``distributionForInstance``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Numeric columns as numbers, nominal columns as codes; NaN marks a
            missing value. With ``range_update="cumulative"`` the rows are taken
            in order (see the class docstring).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            ``(1/n + w_c) / (C/n + sum of w)`` for class ``c``, where ``w_c`` is the
            weight of the neighbours of class ``c``, ``n`` the number of
            training rows and ``C`` the number of classes; each weight is added in
            turn, nearest neighbour first, as Weka adds them (the same doubles). Rows sum to 1 (except,
            as in Weka, when ``weights="similarity"`` gives far rows negative weights
            that bring the sum to 0 or below: the row is then left unscaled).

        Raises
        ------
        ensemblekit.errors.NotFittedError
            If called before ``fit``.
        ValueError
            If ``X`` has a different number of features than in ``fit``, holds
            infinity, or a nominal column holds a value that is not one of its codes.
        """
        X = self._validated_X(X)
        n = max(1, self.n_samples_fit_)
        # Weka's operands: 1/n per class and C/n (not C * (1/n)) for the total, onto which
        # each neighbour's weight is added in turn (see _add_votes)
        dist = np.full((X.shape[0], self.classes_.size), 1.0 / n)
        total = np.full(X.shape[0], self.classes_.size / n)
        self._accumulate(X, dist, total)
        # as Weka, a total <= 0 (negative "similarity" weights of far rows) is left unscaled
        return dist / np.where(total > 0, total, 1.0)[:, None]

    def predict(self, X):
        """The class of largest probability (the first one on a tie), as IBk predicts.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            As for :meth:`predict_proba`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            One of ``classes_`` per row.

        Raises
        ------
        ensemblekit.errors.NotFittedError
            If called before ``fit``.
        ValueError
            As :meth:`predict_proba`.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def neighbour_weights(self, X):
        """Summed vote weight of each row's neighbours, per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            As for :meth:`predict_proba`.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Column ``c``: the total weight of the neighbours (the ``k`` nearest
            and all tied with the k-th) of class ``classes_[c]``, added nearest first.

        Raises
        ------
        ensemblekit.errors.NotFittedError
            If called before ``fit``.
        ValueError
            As :meth:`predict_proba`.
        """
        return self._weights(self._validated_X(X))

    def widened(self, X):
        """This classifier with its ranges widened by the rows ``X``, as after predicting them.

        With ``range_update="cumulative"``, ``predict_proba(vstack([A, B]))`` equals
        ``predict_proba(A)`` followed by ``widened(A).predict_proba(B)``: the rows of a
        large file can be given in parts (chunks, or tasks of a cluster) and still
        get Weka's predictions for the whole file in one pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Rows already predicted, as for :meth:`predict_proba`. Only each
            numeric column's smallest and largest known value count, so the two
            rows of the column minima and maxima of ``X`` widen the same as
            ``X`` itself.

        Returns
        -------
        IBkModel
            A new fitted classifier (of this one's class) whose ``feature_min_`` and ``feature_max_``
            also take in the known numeric values of ``X``; it shares every
            other fitted array with this one, which is left unchanged. With
            ``range_update="none"`` or no rows, this classifier itself.

        Raises
        ------
        ensemblekit.errors.NotFittedError
            If called before ``fit``.
        ValueError
            As :meth:`predict_proba`.
        """
        if getattr(self, "X_train_", None) is None:
            self._validated_X(X)  # raises NotFittedError
        if np.shape(X)[0] == 0:  # nothing to take in (and nothing to validate)
            return self
        X = self._validated_X(X)
        if self.range_update == "none":
            return self
        numeric = numeric_columns(self.n_features_in_, self.nominal_features_)
        low, high = self.feature_min_.copy(), self.feature_max_.copy()
        # fmin/fmax skip NaN: a missing value leaves a range as it is
        low[numeric] = np.fmin(self.feature_min_[numeric],
                               np.fmin.reduce(X[:, numeric], axis=0, initial=np.inf))
        high[numeric] = np.fmax(self.feature_max_[numeric],
                                np.fmax.reduce(X[:, numeric], axis=0, initial=-np.inf))
        out = copy.copy(self)
        out.feature_min_, out.feature_max_ = low, high
        return out

    def _weights(self, X):
        out = np.zeros((X.shape[0], self.classes_.size))
        return self._accumulate(X, out, np.zeros(X.shape[0]))

    def _accumulate(self, X, dist, total):
        """Add each row's neighbour weights onto ``dist`` (per class) and ``total``, in
        Weka's order (see :meth:`_add_votes`); returns ``dist``."""
        if X.shape[0] == 0:
            return dist
        if self._counted() and self.weights == "uniform" and self.n_neighbors_ == 1:
            return _add_counts(dist, total, self._nearest_counted_votes(X, np.zeros_like(dist)))
        for s, e, sq in self._distance_blocks(X):
            self._add_votes(sq, dist[s:e], total[s:e])
        return dist

    def _counted(self):
        """Whether the distances are compiled mismatch counts (every column nominal)."""
        return (not numeric_columns(self.n_features_in_, self.nominal_features_).size
                and getattr(self, "_compiled", False) and self.n_features_in_ <= _COUNT_MAX
                and self.n_categories_.max(initial=0) < _TRAIN_MISSING)

    def _distance_blocks(self, X, widen=True):
        """``(start, end, squared distances)`` per block of rows ``X``: the mismatch counts
        of :meth:`_counted_blocks` or the sums of :meth:`_summed_blocks`. ``widen=False``:
        the rows lie within the training ranges (the stored rows), which they leave as
        they are."""
        if self._counted():
            return self._counted_blocks(X)
        numeric = numeric_columns(self.n_features_in_, self.nominal_features_)
        return self._summed_blocks(X, numeric, widen)

    def _blocks(self, n_rows):
        """``(start, end)`` of the blocks of test rows whose distances are held at a time."""
        block = max(1, _BLOCK // max(1, self.n_samples_fit_))
        return ((s, min(n_rows, s + block)) for s in range(0, n_rows, block))

    def _summed_blocks(self, X, numeric, widen=True):
        """``(start, end, squared distances)`` per block: scaled rows, column-ordered sums
        (``widen``: as :meth:`_row_ranges`)."""
        nominal = np.ones(self.n_features_in_, dtype=bool)
        nominal[numeric] = False
        lows, highs = self._row_ranges(X, numeric, widen)
        summed = self._ordered_sums()
        train = _ScaledTraining(self.X_train_, numeric)
        for s, e in self._blocks(X.shape[0]):
            # cumulative ranges take in each row before it is scaled: its values lie within
            Q, FQ = _scaled_rows(X[s:e], numeric, lows[s:e], highs[s:e],
                                 self.range_update == "cumulative" or not widen)
            sq = np.empty((e - s, self.n_samples_fit_))
            # the ranges only widen, so a block holds few runs of rows that share them
            changed = ((lows[s + 1:e] != lows[s:e - 1]) | (highs[s + 1:e] != highs[s:e - 1]))
            cuts = [0, *(np.flatnonzero(changed.any(axis=1)) + 1).tolist(), e - s]
            for r0, r1 in zip(cuts[:-1], cuts[1:]):
                T, FT = train.scaled(lows[s + r0], highs[s + r0])
                # a scaled value of +-inf (see _scale) makes a squared distance inf
                with np.errstate(over="ignore", invalid="ignore"):
                    summed(Q[r0:r1], FQ[r0:r1], T, FT, nominal, sq[r0:r1])
            yield s, e, sq

    def _counted_blocks(self, X):
        """As :meth:`_summed_blocks` when every column is nominal and the sums are compiled:
        the distances are mismatch counts (the same bits; see
        :func:`ensemblekit.classifiers._ibk_kernels.mismatch_counts`), no range plays a part."""
        from ._ibk_kernels import mismatch_counts

        Q, T, acc = self._byte_operands(X)
        for s, e in self._blocks(X.shape[0]):
            sq = np.empty((e - s, self.n_samples_fit_))
            mismatch_counts(Q[s:e], T, acc, sq)
            yield s, e, sq

    def _nearest_counted_votes(self, X, out):
        """:meth:`_add_votes` of :meth:`_counted_blocks` for uniform votes of the nearest
        rows (k = 1), in one compiled pass per test row (the same whole numbers)."""
        from ._ibk_kernels import nearest_mismatch_votes

        Q, T, acc = self._byte_operands(X)
        nearest_mismatch_votes(Q, T, acc, self.y_train_, out)
        return out

    def _byte_operands(self, X):
        """One-byte codes of the test rows and of the training rows (transposed), and a
        count per training row wide enough for every attribute, for the compiled counts."""
        T = np.ascontiguousarray(_byte_codes(self.X_train_, _TRAIN_MISSING).T)
        wide = np.uint8 if self.n_features_in_ <= np.iinfo(np.uint8).max else np.uint16
        return _byte_codes(X, _TEST_MISSING), T, np.empty(self.n_samples_fit_, dtype=wide)

    def _ordered_sums(self):
        """The function that sums the squared differences (:func:`ordered_sums`, numpy).

        The estimator :class:`~ensemblekit.classifiers.ibk.IBk`, and a model fitted by
        :meth:`fit_coded`, give the compiled form of the same sum (imported on first use,
        so that fitting never loads numba); a model rebuilt from a file keeps this one
        (numpy only).
        """
        if getattr(self, "_compiled", False):
            from ._ibk_kernels import ordered_sums as compiled

            return compiled
        return ordered_sums

    def _row_ranges(self, X, numeric, widen=True):
        """Minimum and maximum of each numeric column as seen by each row, shape (n, m) each
        (``widen=False``: the fitted ranges for every row, whatever ``range_update``)."""
        lo = self.feature_min_[numeric]
        hi = self.feature_max_[numeric]
        if self.range_update == "none" or not widen:
            return (np.broadcast_to(lo, (X.shape[0], numeric.size)),
                    np.broadcast_to(hi, (X.shape[0], numeric.size)))
        cols = X[:, numeric]
        # fmin/fmax skip NaN (a missing value leaves the range as it is)
        lows = np.fmin.accumulate(np.vstack([lo, cols]), axis=0)[1:]
        highs = np.fmax.accumulate(np.vstack([hi, cols]), axis=0)[1:]
        return lows, highs

    def _add_votes(self, sq, dist, total):
        """Add the vote weights of each row's neighbours onto ``dist`` and ``total``, in place.

        The neighbours are the rows within the k-th smallest squared distance ``sq`` (ties
        included). As Weka's ``IBk.makeDistribution`` over the list ``LinearNNSearch``
        returns (nearest first), each neighbour's weight is added in turn, nearest first,
        to its class's entry and to the total, each sum rounded: uniform votes add 1.0 one
        at a time (:func:`_add_counts`), weighted ones in increasing distance (rows at the
        same distance have the same weight, so their order among themselves is immaterial).
        """
        n, k = sq.shape[1], self.n_neighbors_
        if n <= k:
            chosen = np.ones(sq.shape, dtype=bool)
        else:
            # the k-th smallest (NaN, an undefined distance, sorts last, as in np.partition)
            kth = (np.fmin.reduce(sq, axis=1) if k == 1
                   else np.partition(sq, k - 1, axis=1)[:, k - 1])
            if self.weights == "uniform" and getattr(self, "_compiled", False):
                # the counts below, in one compiled pass (the same whole numbers)
                from ._ibk_kernels import counted_votes

                votes = np.zeros(dist.shape)
                counted_votes(sq, kth, self.y_train_, votes)
                _add_counts(dist, total, votes)
                return
            chosen = sq <= kth[:, None]
        self._add_chosen(sq, chosen, self.y_train_, dist, total)

    def _add_chosen(self, sq, chosen, classes, dist, total):
        """Add the vote weights of the ``chosen`` rows (a mask of ``sq``'s shape) onto
        ``dist`` and ``total``, in place, in :meth:`_add_votes`' order. ``classes``: the
        class index of each column of ``sq`` (shape ``(n,)``), or of each entry (``sq``'s
        shape)."""
        n, n_classes = sq.shape[1], self.classes_.size
        flat = np.flatnonzero(chosen)  # (np.nonzero of a 2-D mask is 20x slower)
        rows = flat // n
        cls = classes.ravel()[flat] if classes.ndim == 2 else classes[flat - rows * n]
        if self.weights == "uniform":
            counts = np.bincount(rows * n_classes + cls, minlength=sq.shape[0] * n_classes)
            _add_counts(dist, total, counts.reshape(sq.shape[0], n_classes).astype(np.float64))
            return
        near = sq.ravel()[flat]
        order = np.lexsort((near, rows))  # row by row, nearest first (NaN last)
        rows, near, cls = rows[order], near[order], cls[order]
        d = np.sqrt(np.sqrt(near) ** 2 / max(1, self.n_features_in_))
        w = 1.0 / (d + 0.001) if self.weights == "inverse" else 1.0 - d
        _add_in_turn(dist, total, rows, cls, w)


def _add_in_turn(dist, total, rows, classes, w):
    """``dist[rows[i], classes[i]] += w[i]`` and ``total[rows[i]] += w[i]``, one term after
    another in the given order for each row (``rows`` grouped, each group in order)."""
    if not rows.size:
        return
    first = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    rank = np.arange(rows.size) - np.repeat(first, np.diff(np.r_[first, rows.size]))
    by_rank = np.argsort(rank, kind="stable")  # the i-th term of every row, together
    ends = np.cumsum(np.bincount(rank))
    for lo, hi in zip(np.r_[0, ends[:-1]], ends):
        at = by_rank[lo:hi]  # at most one term per row: no index repeats
        r = rows[at]
        dist[r, classes[at]] += w[at]
        total[r] += w[at]


def _add_counts(dist, total, counts):
    """Uniform votes: ``counts[i, c]`` votes of 1.0 added one at a time onto ``dist[i, c]``
    and, all of a row's, onto ``total[i]`` (:func:`_add_ones`); returns ``dist``."""
    _add_ones(dist, counts)
    _add_ones(total, counts.sum(axis=1))
    return dist


def _add_ones(acc, counts):
    """Add 1.0 to each ``acc`` entry ``counts`` times, rounding after every addition, in place.

    What a loop adding one vote at a time gives (Weka's), which may differ in the last
    bit from ``acc + counts``. Without looping over every vote: for ``x >= 1`` below
    ``2**53``, ``x + 1`` is exact while it stays below the next power of two, so each
    round makes one rounded addition and then jumps, exactly, as far as the binade allows
    (about ``2 * log2(count)`` rounds).

    Parameters
    ----------
    acc : ndarray of float64, >= 0
        Updated in place.
    counts : ndarray of float64 (whole numbers >= 0) of acc's shape
    """
    left = np.array(counts, dtype=np.float64)
    while True:
        active = left > 0
        if not active.any():
            return
        a = acc[active] + 1.0  # the rounded step (from below 1, or across a power of two)
        rest = left[active] - 1.0
        _, e = np.frexp(a)  # a < 2**e, a >= 2**(e - 1) >= 1
        room = np.ceil(np.ldexp(1.0, e) - a) - 1.0  # exact steps left in the binade
        jump = np.where(e <= 53, np.minimum(rest, np.maximum(room, 0.0)), 0.0)
        acc[active] = a + jump
        left[active] = rest - jump


class _ScaledTraining:
    """The training rows, transposed, with each numeric column scaled by the ranges asked for.

    ``scaled(lo, hi)`` gives ``T`` (n_features, n_samples): numeric columns as
    :func:`_scale` makes them under ``lo``/``hi`` (one entry per numeric column),
    nominal ones as their codes; and ``FT``, :func:`_far` of ``T``. A column is scaled
    again only when its range changed since the last call.
    """

    def __init__(self, train, numeric):
        self.numeric = numeric
        self.raw = np.array(train.T, order="C")  # unscaled, a column per row
        self.T = self.raw.copy()  # a copy: the stored rows stay as they are
        self.FT = np.zeros_like(self.T)
        self.lo = np.full(numeric.size, np.nan)  # NaN: not scaled yet
        self.hi = np.full(numeric.size, np.nan)

    def scaled(self, lo, hi):
        changed = np.flatnonzero((lo != self.lo) | (hi != self.hi))
        if changed.size:
            cols = self.numeric[changed]
            # column by column, the same bits as one column at a time; every stored value
            # lies within the ranges, which only ever widen the training ones
            t = _scale(self.raw[cols], lo[changed, None], hi[changed, None], inside=True)
            self.T[cols] = t
            self.FT[cols] = _far(t)
            self.lo, self.hi = np.array(lo), np.array(hi)
        return self.T, self.FT


def _scaled_rows(Xb, numeric, lows, highs, inside):
    """Test rows with their numeric columns scaled by their own ranges, and :func:`_far` of
    them (``inside``: every known value lies within its row's range, see :func:`_scale`)."""
    Q = np.array(Xb, dtype=np.float64)
    Q[:, numeric] = _scale(Xb[:, numeric], lows, highs, inside=inside)
    with np.errstate(invalid="ignore", over="ignore"):
        return Q, _far(Q)


def ordered_sums(Q, FQ, T, FT, nominal, out):
    """Squared IBk distances of the rows ``Q`` to the training rows ``T``, into ``out`` (numpy).

    For each test row and training row: the sum, attribute by attribute in column order
    starting from 0, of the squared per-attribute difference (the order of Weka's sum, so
    exact ties are the same ties). A nominal attribute adds 0 if the two codes are equal
    and 1 if they differ or either is missing. A numeric one adds ``d * d`` where ``d`` is
    ``q - t`` of the two scaled values, the precomputed far value of the known one when the
    other is missing, and 1 when both are. The compiled
    :func:`ensemblekit.classifiers._ibk_kernels.ordered_sums` does the same operations in
    the same order.

    Parameters
    ----------
    Q, FQ : ndarray of float64 of shape (m, n_features)
        Test rows (numeric columns scaled, nominal ones codes; NaN: missing), and
        :func:`_far` of them.
    T, FT : ndarray of float64 of shape (n_features, n_samples)
        Training rows, transposed, scaled by the same ranges as ``Q``, and :func:`_far` of them.
    nominal : ndarray of bool of shape (n_features,)
        Which columns are nominal.
    out : ndarray of float64 of shape (m, n_samples)
        Written with the squared distances.
    """
    out[:] = 0.0
    diff = np.empty_like(out)
    for j in range(Q.shape[1]):
        q, t = Q[:, j], T[j]
        if nominal[j]:
            np.not_equal(q[:, None], t[None, :], out=diff)  # NaN: unequal
            out += diff  # 0 or 1, its own square
            continue
        np.subtract(q[:, None], t[None, :], out=diff)
        q_missing, t_missing = np.isnan(q), np.isnan(t)
        if q_missing.any():  # one missing: the far value of the other; both: 1
            diff[q_missing] = np.where(t_missing, 1.0, FT[j])
        if t_missing.any():
            known = np.flatnonzero(~q_missing)
            diff[np.ix_(known, np.flatnonzero(t_missing))] = FQ[known, j][:, None]
        np.multiply(diff, diff, out=diff)
        out += diff


def _scale(values, lo, hi, inside=False):
    """``(x - min) / (max - min)``, and 0 where the range is 0 or unknown (NaN stays NaN).

    Near the float limits ``max - min`` or ``x - min`` may overflow although
    every value is finite; those entries are computed from halves instead,
    ``(x/2 - min/2) / (max/2 - min/2)``, which cannot overflow and, halving
    being exact for numbers that large, gives the bits the plain form gives on
    the same data scaled down by a power of two. Every other entry keeps the
    plain form, so ordinary data gets Weka's bits. A value far outside a narrow
    range (``range_update="none"``) may still scale to +-inf: further than a
    float holds in any unit of the data.

    ``inside=True`` says every known value lies within its ``[lo, hi]``: then ``x - min``
    cannot overflow unless ``max - min`` does (rounding keeps the order), and when no
    range is 0, unknown or overflowing, the plain form is every entry (2 passes, not 8).
    """
    known = np.isfinite(lo) & np.isfinite(hi)  # (+inf, -inf): a column with no known value
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        width = hi - lo
        if inside and known.all() and np.all(np.isfinite(width) & (width != 0)):
            return (values - lo) / width
        shifted = values - lo
        flat = ~known | (width == 0)
        out = shifted / np.where(flat, 1.0, width)
        over = known & (np.isinf(width) | np.isinf(shifted))
        if np.any(over):
            halves = (values / 2 - lo / 2) / np.where(flat, 1.0, hi / 2 - lo / 2)
            out = np.where(over, halves, out)
    return np.where(flat & ~np.isnan(values), 0.0, out)


def _byte_codes(rows, missing):
    """Nominal codes (each below ``missing``) as uint8, a missing value (NaN) as ``missing``."""
    return np.where(np.isnan(rows), missing, rows).astype(np.uint8)


def _far(v):
    """The difference to a missing value from a scaled known value ``v``: ``1 - v`` below 0.5."""
    return np.where(v < 0.5, 1.0 - v, v)
