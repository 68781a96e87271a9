"""``knn``'s fitted state as plain arrays, and IBk's prediction in numpy.

:class:`IBkModel` is what a saved ``knn`` model is rebuilt as: the stored training
rows, their classes, the ranges of the numeric columns, and Weka IBk's prediction
over them (the rules are listed in :mod:`ensemblekit.classifiers.ibk`; the code
that applies them lives here, and the estimator
:class:`ensemblekit.classifiers.ibk.IBk`, which only stores its training rows,
inherits it). Prediction is serial numpy, a block of test rows at a time; it
never used joblib, so ``n_jobs`` plays no part.
"""

from __future__ import annotations

import copy

import numpy as np

from ..class_domain import N_CLASSES
from ..constraints import Constraint
from ..rows import check_rows
from ..state import Array, Scalar
from ..trust import COUNT_MAX
from .coded import check_codes, numeric_columns

__all__ = ["IBkModel", "WEIGHTS", "RANGE_UPDATES"]

#: Neighbour weightings: 1 (IBk's default), 1/(d + 0.001) (``-I``), 1 - d (``-F``).
WEIGHTS = ("uniform", "inverse", "similarity")
#: How the attribute ranges treat test rows: widened by each row in turn (Weka), or fixed.
RANGE_UPDATES = ("cumulative", "none")

#: Test-row x training-row distances held at a time, at most (one block: 8 MB per array).
_BLOCK = 1 << 20


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
    nominal_features : array-like of int or None, default=None
    n_categories : array-like of int or None, default=None
    n_classes : int >= 1 or None, default=None
        As :class:`~ensemblekit.classifiers.ibk.IBk`. Prediction reads
        ``n_neighbors``, ``weights`` and ``range_update``; the layout of the
        columns comes from the fitted ``nominal_features_`` and ``n_categories_``.

    Attributes
    ----------
    X_train_ : ndarray of float64 of shape (n_samples_fit_, n_features_in_)
        The stored training rows (NaN marks a missing value; nominal columns as codes).
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
        "nominal_features": Constraint("any", "indices of the nominal columns (codes)",
                                       none_ok=True),
        "n_categories": Constraint("any", "declared values of each nominal column",
                                   none_ok=True),
        "n_classes": N_CLASSES,
    }

    def __init__(self, n_neighbors=1, weights="uniform", range_update="cumulative",
                 nominal_features=None, n_categories=None, n_classes=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.range_update = range_update
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_classes = n_classes

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "n_samples_fit_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",)),
        "X_train_": Array("float64", ("n_samples_fit_", "n_features_in_"), nan=True),
        "y_train_": Array("int64", ("n_samples_fit_",), low=0, below="n_classes"),
        "feature_min_": Array("float64", ("n_features_in_",), inf=True),
        "feature_max_": Array("float64", ("n_features_in_",), inf=True),
        "nominal_features_": Array("int64", ("n_nominal",), low=0, below="n_features_in_"),
        "n_categories_": Array("int64", ("n_nominal",), low=1, high=COUNT_MAX),
    }

    def _check_state(self, ctx) -> None:
        """The rules no entry states alone: the classes, nominal codes of the stored rows,
        ranges that are those of the stored rows, and prediction's parameters."""
        if getattr(self, "weights", "uniform") not in WEIGHTS:
            ctx.fail(f"weights = {self.weights!r} is not one of {', '.join(WEIGHTS)}")
        if getattr(self, "range_update", "none") not in RANGE_UPDATES:
            ctx.fail(f"range_update = {self.range_update!r} is not one of "
                     f"{', '.join(RANGE_UPDATES)}")
        k = getattr(self, "n_neighbors", 1)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= COUNT_MAX:
            ctx.fail(f"n_neighbors = {k!r} is not a count >= 1")
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
            training rows and ``C`` the number of classes. Rows sum to 1 (except,
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
        weights = self._weights(self._validated_X(X))
        start = 1.0 / max(1, self.n_samples_fit_)
        dist = start + weights
        total = self.classes_.size * start + weights.sum(axis=1, keepdims=True)
        # as Weka, a total <= 0 (negative "similarity" weights of far rows) is left unscaled
        return dist / np.where(total > 0, total, 1.0)

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
            and all tied with the k-th) of class ``classes_[c]``.

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
        if X.shape[0] == 0:
            return out
        numeric = numeric_columns(self.n_features_in_, self.nominal_features_)
        lows, highs = self._row_ranges(X, numeric)
        onehot = np.zeros((self.n_samples_fit_, self.classes_.size))
        onehot[np.arange(self.n_samples_fit_), self.y_train_] = 1.0
        block = max(1, _BLOCK // max(1, self.n_samples_fit_))
        for s in range(0, X.shape[0], block):
            e = min(X.shape[0], s + block)
            # a scaled value of +-inf (see _scale) makes a squared distance inf
            with np.errstate(over="ignore"):
                sq = self._squared_distances(X[s:e], numeric, lows[s:e], highs[s:e])
            votes = self._votes(sq)
            if np.isfinite(votes).all():
                out[s:e] = votes @ onehot
            else:
                # "similarity" weights 1 - d are -inf at an infinite distance, and -inf * 0
                # in the product would be NaN: add up each class's votes alone
                for c in range(self.classes_.size):
                    out[s:e, c] = np.where(self.y_train_ == c, votes, 0.0).sum(axis=1)
        return out

    def _row_ranges(self, X, numeric):
        """Minimum and maximum of each numeric column as seen by each row, shape (n, m) each."""
        lo = self.feature_min_[numeric]
        hi = self.feature_max_[numeric]
        if self.range_update == "none":
            return (np.broadcast_to(lo, (X.shape[0], numeric.size)),
                    np.broadcast_to(hi, (X.shape[0], numeric.size)))
        cols = X[:, numeric]
        # fmin/fmax skip NaN (a missing value leaves the range as it is)
        lows = np.fmin.accumulate(np.vstack([lo, cols]), axis=0)[1:]
        highs = np.fmax.accumulate(np.vstack([hi, cols]), axis=0)[1:]
        return lows, highs

    def _squared_distances(self, Xb, numeric, lows, highs):
        """Squared IBk distances of the rows ``Xb`` to every training row, (len(Xb), n).

        ``lows`` and ``highs`` (shape (len(Xb), number of numeric columns)) are the
        ranges each row is scaled by; the training values are scaled by the same
        ranges, once per run of rows that share them.
        """
        m, n = Xb.shape[0], self.n_samples_fit_
        acc = np.zeros((m, n))
        diff = np.empty((m, n))
        position = {int(j): i for i, j in enumerate(numeric)}
        train = self.X_train_
        for j in range(self.n_features_in_):  # column order: Weka's order of summation
            if j not in position:
                np.not_equal(Xb[:, j][:, None], train[:, j][None, :], out=diff)  # NaN: unequal
                acc += diff  # 0 or 1, its own square
                continue
            i = position[j]
            lo, hi = lows[:, i], highs[:, i]
            q = _scale(Xb[:, j], lo, hi)
            t_missing = np.isnan(train[:, j])
            # the ranges only widen, so a block holds few runs of equal ranges
            cuts = np.flatnonzero((lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])) + 1
            for r0, r1 in zip(np.r_[0, cuts], np.r_[cuts, m]):
                t = _scale(train[:, j], lo[r0], hi[r0])
                part = diff[r0:r1]
                np.subtract(q[r0:r1, None], t[None, :], out=part)
                q_missing = np.isnan(q[r0:r1])
                if q_missing.any():
                    # one missing: the larger of v and 1 - v; both missing: 1
                    part[q_missing] = np.where(t_missing, 1.0, _far(t))
                if t_missing.any():
                    known = np.flatnonzero(~q_missing)
                    part[np.ix_(known, np.flatnonzero(t_missing))] = _far(q[r0:r1][known])[:, None]
            np.multiply(diff, diff, out=diff)
            acc += diff
        return acc

    def _votes(self, sq):
        """Vote weight of each training row for each test row (0 outside its neighbours)."""
        n = sq.shape[1]
        if n > self.n_neighbors:
            kth = np.partition(sq, self.n_neighbors - 1, axis=1)[:, self.n_neighbors - 1]
            chosen = sq <= kth[:, None]
        else:
            chosen = np.ones(sq.shape, dtype=bool)
        if self.weights == "uniform":
            return chosen.astype(np.float64)
        dist = np.sqrt(np.sqrt(sq) ** 2 / max(1, self.n_features_in_))
        w = 1.0 / (dist + 0.001) if self.weights == "inverse" else 1.0 - dist
        return np.where(chosen, w, 0.0)


def _scale(values, lo, hi):
    """``(x - min) / (max - min)``, and 0 where the range is 0 or unknown (NaN stays NaN).

    Near the float limits ``max - min`` or ``x - min`` may overflow although
    every value is finite; those entries are computed from halves instead,
    ``(x/2 - min/2) / (max/2 - min/2)``, which cannot overflow and, halving
    being exact for numbers that large, gives the bits the plain form gives on
    the same data scaled down by a power of two. Every other entry keeps the
    plain form, so ordinary data gets Weka's bits. A value far outside a narrow
    range (``range_update="none"``) may still scale to +-inf: further than a
    float holds in any unit of the data.
    """
    known = np.isfinite(lo) & np.isfinite(hi)  # (+inf, -inf): a column with no known value
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        width = hi - lo
        shifted = values - lo
        flat = ~known | (width == 0)
        out = shifted / np.where(flat, 1.0, width)
        over = known & (np.isinf(width) | np.isinf(shifted))
        if np.any(over):
            halves = (values / 2 - lo / 2) / np.where(flat, 1.0, hi / 2 - lo / 2)
            out = np.where(over, halves, out)
    return np.where(flat & ~np.isnan(values), 0.0, out)


def _far(v):
    """The difference to a missing value from a scaled known value ``v``: ``1 - v`` below 0.5."""
    return np.where(v < 0.5, 1.0 - v, v)
