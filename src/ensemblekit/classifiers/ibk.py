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
* **Class distribution.** Each class starts with ``1 / n`` (``n`` training rows)
  and the total with ``C / n`` (``C`` classes); each neighbour in turn, nearest
  first, adds its weight to its class and to the total, and the vector is divided by
  the total. The weight is 1 (default), ``1 / (d + 0.001)`` (``-I``) or ``1 - d``
  (``-F``), where ``d = sqrt(squared distance / number of attributes)``. The order
  of the additions is Weka's (``IBk.makeDistribution`` over the list
  ``LinearNNSearch`` returns, nearest first), so the probabilities are Weka's to the
  last bit, and a near tie that rounding decides goes the same way.
* **Prediction.** The first class of largest probability (the lowest code wins
  a tie), as Weka's ``Utils.maxIndex``.
* **Choosing k** (``cross_validate``, ``-X``). Every stored row is classified by
  the other stored rows (a copy of it counts, itself does not) for each ``k`` up
  to ``n_neighbors``; the ``k`` with the fewest errors, the lowest on a tie, is
  used from then on (``n_neighbors_``).
* **Window** (``window_size``, ``-W``). Only the last ``window_size`` training
  rows are stored; the ranges are theirs.

Distances are computed a block of test rows at a time against all training rows,
so memory stays bounded whatever the number of test rows. The prediction, and
everything a saved model needs, is the numpy-only
:class:`~ensemblekit.classifiers.ibk_model.IBkModel` this estimator derives from;
the estimator adds ``fit``, scikit-learn's input checks, and the compiled form
(numba, :mod:`ensemblekit.classifiers._ibk_kernels`, loaded on the first prediction)
of the steps numpy does slowly: the column-ordered sum of the squared attribute
differences (a count of mismatches when every attribute is nominal) and the count of
uniform votes. They give the numpy forms' bits, so a fitted estimator and the model
rebuilt from its file predict the same bytes.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..constraints import validate_params
from ..frames import fit_input, predict_input
from ..rows import quiet_finite_check
from .ibk_model import RANGE_UPDATES, WEIGHTS, IBkModel

__all__ = ["IBk", "WEIGHTS", "RANGE_UPDATES"]


class IBk(IBkModel, ClassifierMixin, BaseEstimator):
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
    cross_validate : bool, default=False
        Choose ``k`` by hold-one-out on the stored training rows (``-X``), as
        IBk's ``crossValidate``: each row is classified by the other rows under
        the training ranges with every ``k`` from ``n_neighbors`` (the upper
        bound, ``-K``) down to 1, and the ``k`` with the fewest misclassified
        rows is kept, the lowest one on a tie. The list of neighbours for a
        smaller ``k`` is cut after the k-th and every row tied with it, ties
        judged on the distance ``d`` the weights use (see ``weights``), as Weka's
        ``pruneToK`` judges them.
        Prediction then uses the chosen ``k`` (``n_neighbors_``; ``show`` prints
        it, as Weka's model text does).
    mean_squared : bool, default=False
        With ``cross_validate``, Weka's ``-E`` scores a *numeric* class by the
        mean squared instead of the mean absolute hold-one-out error. knn's
        classes are nominal, scored by the count of misclassified rows, so it
        changes nothing here (as ``-E`` changes nothing in Weka on a nominal
        class); it is accepted so that Weka's option set carries over.
    window_size : int >= 0, default=0
        Keep only the last ``window_size`` training rows (``-W``; 0: all), as
        IBk drops the oldest rows beyond its window: ``fit`` stores the last
        rows in the order given (rows whose class is missing are dropped before,
        by ``ensemblekit fit``, as Weka drops them). The ranges are those of the
        stored rows; ``classes_`` (with ``n_classes`` None, the probability
        columns) still covers every class of ``y``, as Weka's header does.
    nominal_features : array-like of int or None, default=None
        Columns holding nominal codes ``0 .. n_categories[j] - 1`` (NaN:
        missing); the others are numeric. None: all numeric, unless ``X`` is a
        pandas or polars DataFrame whose dtypes declare them (``category``,
        string and boolean columns, as :func:`ensemblekit.frames.fit_input`
        reads them; ``predict`` then codes a frame by the same categories, an
        unseen value as missing, and ``frame_categories_`` holds them).
    n_categories : array-like of int or None, default=None
        Declared number of values of each nominal column (in the order of
        ``nominal_features``). None: the largest code seen plus one.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``
        and every declared class has a probability column (a class without
        training rows keeps its ``1/n`` start). None: the labels of ``y``.

    Attributes
    ----------
    n_neighbors_ : int
        The ``k`` prediction uses: ``n_neighbors``, or with ``cross_validate`` the
        one chosen in ``1 .. n_neighbors``.
    X_train_ : ndarray of shape (n_samples_fit_, n_features_in_)
        The stored training rows (float; NaN marks a missing value); with
        ``window_size``, the last ``window_size`` rows of ``X``.
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

    #: distances summed by the compiled kernel (see IBkModel._ordered_sums), the same bits
    _compiled = True

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
        X, declared = fit_input(self, X)
        with quiet_finite_check():
            X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", dtype=np.float64)
        if y.dtype.kind not in "iu":  # whole-number labels in one column always pass
            check_classification_targets(y)
        return self._fit_checked(X, y, declared)

    # ---- prediction: IBkModel's, after scikit-learn's checks
    def _validated_X(self, X):
        # NotFittedError and the feature names of a data frame as scikit-learn says them,
        # then the model's own checks (shape, infinity, nominal codes)
        check_is_fitted(self, "X_train_")
        X = predict_input(self, X)
        with quiet_finite_check():
            X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)
        return super()._validated_X(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
