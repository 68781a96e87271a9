"""``knn``: the k-nearest-neighbour classifier of Weka 3.9.7's ``IBk``, rule for rule.

Weka's ``IBk`` (Aha, Kibler & Albert 1991) with its default search,
``LinearNNSearch`` over ``EuclideanDistance``, decides every detail that a
generic k-NN leaves open; this module follows each of them (read from Weka's
source for the semantics; the code is our own):

* **Ranges.** Numeric attributes are scaled by the minimum and maximum of the
  known training values, ``(x - min) / (max - min)``; an attribute whose range is
  0 (one value, or none known) scales every value to 0.
* **Ranges grow with the test rows** (``range_update="cumulative"``, as Weka):
  before the neighbours of a test row are searched, Weka widens the ranges to
  take in that row's known values, and keeps them widened for the rows after it.
  A row's prediction then depends on the rows before it *in the same call* to
  ``predict``, and :meth:`IBk.widened` carries them over to a later call (as
  ``ensemblekit predict`` does from one chunk of a file to the next); with
  ``range_update="none"`` the training ranges are used for every row, and each
  row is predicted on its own.
* **Per-attribute differences.** Nominal: 0 if the two codes are equal, 1 if they
  differ or either is missing. Numeric, both known: the difference of the scaled
  values. Numeric, one missing: the scaled known value ``v`` gives ``1 - v`` when
  ``v < 0.5`` and ``v`` otherwise (the largest difference the missing value
  could make). Numeric, both missing: 1.
* **Distance.** The sum of the squared differences, attribute by attribute in
  column order (the same floating-point sum as Weka's, so exact ties are the
  same ties).
* **Neighbours.** The ``k`` nearest training rows *and every row tied with the
  k-th distance*: more than ``k`` rows may vote.
* **Class distribution.** Each class starts with ``1 / n`` (``n`` training rows),
  each neighbour adds its weight to its class, and the vector is divided by its
  sum. The weight is 1 (default), ``1 / (d + 0.001)`` (``-I``) or ``1 - d``
  (``-F``), where ``d = sqrt(squared distance / number of attributes)``.
* **Prediction.** The first class of largest probability (the lowest code wins
  a tie), as Weka's ``Utils.maxIndex``.

Distances are computed a block of test rows at a time against all training rows,
so memory stays bounded whatever the number of test rows.
"""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..class_domain import N_CLASSES, declared_classes
from ..constraints import Constraint, validate_params
from ..trust import (
    COUNT_MAX,
    CheckContext,
    checked_array,
    class_labels,
    count_attr,
    declared_codes,
    feature_count,
    fitted_only,
    float_array,
    index_set,
    int_array,
)
from .coded import check_codes, coded_layout

__all__ = ["IBk", "WEIGHTS", "RANGE_UPDATES"]

#: Neighbour weightings: 1 (IBk's default), 1/(d + 0.001) (``-I``), 1 - d (``-F``).
WEIGHTS = ("uniform", "inverse", "similarity")
#: How the attribute ranges treat test rows: widened by each row in turn (Weka), or fixed.
RANGE_UPDATES = ("cumulative", "none")

#: Test-row x training-row distances held at a time, at most (one block: 8 MB per array).
_BLOCK = 1 << 20


def _check_ibk(est, ctx: CheckContext) -> None:
    """``IBk`` (``knn``): stored rows, their class indices and ranges, as ``fit`` leaves them.

    ``X_train_`` holds ``n_samples_fit_`` rows of the model's columns (NaN for missing,
    nominal columns as codes of their declared values), ``y_train_`` an index into
    ``classes_`` per row, and ``feature_min_`` / ``feature_max_`` are the ranges of
    the known values of each column (``inf`` / ``-inf`` for a column with none), which
    the distance divides by; the parameters ``predict`` reads are among their choices.
    """
    d = feature_count(ctx, est)
    classes = class_labels(ctx, est)
    declared_codes(ctx, est, classes)
    count_attr(ctx, est, "n_neighbors")
    ctx.choice(est, "weights", WEIGHTS)
    ctx.choice(est, "range_update", RANGE_UPDATES)
    n = count_attr(ctx, est, "n_samples_fit_")
    rows = float_array(ctx, ctx.attr(est, "X_train_"), "X_train_", nan=True, shape=(n, d))
    int_array(ctx, ctx.attr(est, "y_train_"), "y_train_", high=classes.size, shape=(n,))
    nominal = index_set(ctx, ctx.attr(est, "nominal_features_"), "nominal_features_", d)
    cats = int_array(ctx, ctx.attr(est, "n_categories_"), "n_categories_", low=1, high=COUNT_MAX,
                     shape=nominal.shape)
    coded = np.nan_to_num(rows[:, nominal], nan=0.0)  # NaN: a missing value
    if np.any((coded < 0) | (coded >= cats) | (coded != np.floor(coded))):
        ctx.fail("X_train_ holds a nominal value that is not one of its column's codes")
    known = ~np.isnan(rows)
    for name, want in (("feature_min_", np.where(known, rows, np.inf).min(axis=0)),
                       ("feature_max_", np.where(known, rows, -np.inf).max(axis=0))):
        got = checked_array(ctx, ctx.attr(est, name), name, kinds="f", shape=(d,))
        if not np.array_equal(got, want):
            ctx.fail(f"{name} is not the range of the known values of X_train_")


class IBk(ClassifierMixin, BaseEstimator):
    """k-nearest-neighbour classifier as Weka's ``IBk`` (``knn``).

    See the module docstring for every rule (ranges, missing values, ties,
    class distribution); in short: Euclidean distance on min-max scaled numeric
    attributes and 0/1 nominal mismatches, the ``k`` nearest training rows plus
    all rows tied with the k-th, and a vote that starts every class at ``1/n``.

    Parameters
    ----------
    n_neighbors : int >= 1, default=1
        Number of neighbours ``k`` (``-K``; Weka's default 1). Rows tied with
        the k-th nearest vote too.
    weights : {"uniform", "inverse", "similarity"}, default="uniform"
        Weight of a neighbour's vote: 1; ``1 / (d + 0.001)`` (``-I``); or
        ``1 - d`` (``-F``), with ``d`` the distance divided by the square root
        of the number of attributes (in ``[0, 1]`` for in-range values).
    range_update : {"cumulative", "none"}, default="cumulative"
        ``"cumulative"``: as Weka, each test row widens the numeric ranges
        (minimum and maximum) to its own known values before its neighbours are
        searched, and the widened ranges stay for the later rows of the same
        ``predict`` call, so a row's prediction may depend on the rows before it.
        ``"none"``: the training ranges are used for every row.
    nominal_features : array-like of int or None, default=None
        Columns holding nominal codes ``0 .. n_categories[j] - 1`` (NaN:
        missing); the others are numeric. None: all numeric.
    n_categories : array-like of int or None, default=None
        Declared number of values of each nominal column (in the order of
        ``nominal_features``). None: the largest code seen plus one.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and every declared class has a probability column (a class without
        training rows keeps its ``1/n`` start). None: the labels of ``y``.

    Attributes
    ----------
    X_train_ : ndarray of shape (n_samples_fit_, n_features_in_)
        The stored training rows (float; NaN marks a missing value).
    y_train_ : ndarray of int of shape (n_samples_fit_,)
        Index into ``classes_`` of each stored row's class.
    feature_min_, feature_max_ : ndarray of shape (n_features_in_,)
        Minimum and maximum of the known training values of each column
        (``inf`` and ``-inf`` for a column with none; not used for nominal columns),
        and of the rows taken in by :meth:`widened` in a widened copy.
    nominal_features_ : ndarray of int64
        Sorted indices of the nominal columns.
    n_categories_ : ndarray of int64
        Declared values of each nominal column, in the order of ``nominal_features_``.
    classes_ : ndarray of shape (n_classes,)
        Class labels (``arange(n_classes)`` when declared).
    n_samples_fit_ : int
        Number of stored training rows.
    n_features_in_ : int
        Number of features seen in ``fit``.

    References
    ----------
    .. [1] D. Aha, D. Kibler and M. Albert, "Instance-based learning algorithms",
       *Machine Learning* 6:37-66, 1991.
    .. [2] Weka 3.9.7: ``weka.classifiers.lazy.IBk``, ``weka.core.EuclideanDistance``,
       ``weka.core.NormalizableDistance``, ``weka.core.neighboursearch.LinearNNSearch``
       (the semantics followed here).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.classifiers.ibk import IBk
    >>> X = np.array([[0.0, 0], [1.0, 0], [10.0, 1]])
    >>> clf = IBk(nominal_features=[1]).fit(X, [0, 0, 1])
    >>> clf.predict([[2.0, 0], [9.0, 1]]).tolist()
    [0, 1]
    >>> clf.predict_proba([[9.0, 1]]).round(3).tolist()  # (1/3 + 1) / (2/3 + 1) for class 1
    [[0.2, 0.8]]
    """

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(fitted_only(_check_ibk))

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

    # ---- fitting
    def fit(self, X, y):
        """Store the training rows and the ranges of their numeric columns.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns as numbers, nominal columns as codes; NaN marks a
            missing value.
        y : array-like of shape (n_samples,)
            Class labels (codes ``0 .. n_classes - 1`` when ``n_classes`` is given).

        Returns
        -------
        self : IBk

        Raises
        ------
        ValueError
            If ``X`` is not 2-D or holds infinity, ``y`` is not class labels, a
            nominal column holds a value that is not one of its codes, or a
            parameter is out of range.
        """
        validate_params(self)
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", dtype=np.float64)
        check_classification_targets(y)
        classes, codes = declared_classes(y, self.n_classes)
        nominal, cats, _ = coded_layout(X, self.nominal_features, self.n_categories)
        self.X_train_ = np.ascontiguousarray(X)
        self.y_train_ = codes.astype(np.int64)
        known = ~np.isnan(X)
        self.feature_min_ = np.where(known, X, np.inf).min(axis=0, initial=np.inf)
        self.feature_max_ = np.where(known, X, -np.inf).max(axis=0, initial=-np.inf)
        self.nominal_features_ = nominal
        self.n_categories_ = cats
        self.classes_ = classes
        self.n_samples_fit_ = int(X.shape[0])
        return self

    # ---- prediction
    def _validated_X(self, X):
        check_is_fitted(self, "X_train_")
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)
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
        sklearn.exceptions.NotFittedError
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
        sklearn.exceptions.NotFittedError
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
        sklearn.exceptions.NotFittedError
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
        IBk
            A new fitted classifier whose ``feature_min_`` and ``feature_max_``
            also take in the known numeric values of ``X``; it shares every
            other fitted array with this one, which is left unchanged. With
            ``range_update="none"`` or no rows, this classifier itself.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        ValueError
            As :meth:`predict_proba`.
        """
        check_is_fitted(self, "X_train_")
        if np.shape(X)[0] == 0:  # nothing to take in (and nothing to validate)
            return self
        X = self._validated_X(X)
        if self.range_update == "none":
            return self
        numeric = np.setdiff1d(np.arange(self.n_features_in_), self.nominal_features_)
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
        numeric = np.setdiff1d(np.arange(self.n_features_in_), self.nominal_features_)
        lows, highs = self._row_ranges(X, numeric)
        onehot = np.zeros((self.n_samples_fit_, self.classes_.size))
        onehot[np.arange(self.n_samples_fit_), self.y_train_] = 1.0
        block = max(1, _BLOCK // max(1, self.n_samples_fit_))
        for s in range(0, X.shape[0], block):
            e = min(X.shape[0], s + block)
            sq = self._squared_distances(X[s:e], numeric, lows[s:e], highs[s:e])
            out[s:e] = self._votes(sq) @ onehot
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _scale(values, lo, hi):
    """``(x - min) / (max - min)``, and 0 where the range is 0 or unknown (NaN stays NaN)."""
    width = hi - lo
    flat = ~(np.isfinite(width) & (width != 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (values - lo) / np.where(flat, 1.0, width)
    return np.where(flat & ~np.isnan(values), 0.0, out)


def _far(v):
    """The difference to a missing value from a scaled known value ``v``: ``1 - v`` below 0.5."""
    return np.where(v < 0.5, 1.0 - v, v)
