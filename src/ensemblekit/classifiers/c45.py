"""``c45``: C4.5 release 8 as Weka 3.9.7's J48 builds, prunes, prints and applies it.

The tree follows J48's semantics (read from Weka's ``weka.classifiers.trees.j48`` package
and re-expressed here; no Weka code is used):

* the split of a node is chosen by gain ratio among the candidate splits whose information
  gain reaches the average gain of the candidates (less 1e-3); a nominal attribute splits
  into one branch per declared value (or, with ``binary_splits``, ``= v`` / ``!= v``), a
  numeric one into ``<= t`` / ``> t``, with release 8's penalty
  ``log2(#candidate thresholds) / N`` on the gain (unless ``mdl_correction`` is False);
  ``t`` is then moved to the largest training value not above the cut (unless
  ``split_point_actual_value`` is False);
* a node is split only when at least two branches get ``min_samples_leaf`` (``-M``)
  instances' weight, and a numeric threshold keeps at least
  ``clip(0.1 * known weight / n_classes, M, 25)`` on each side;
* an instance whose value is missing goes down every branch with a weight proportional to
  the branch's training weight, in training and in prediction;
* the grown tree is collapsed (a subtree that does not reduce the training error becomes a
  leaf), then pruned by C4.5's pessimistic error estimate with confidence
  ``confidence_factor`` (``-C``) and subtree raising (replacing a node by its largest branch
  and re-distributing the node's data down it);
* or, with ``reduced_error_pruning`` (``-R``), grown on ``num_folds - 1`` of
  ``num_folds`` stratified folds of the rows shuffled with ``seed`` (``-N``, ``-Q``), not
  collapsed, and pruned bottom up on the last fold
  (:mod:`ensemblekit.classifiers._c45_rep`).

Growth (split search, routing of instances, collapse) runs in one compiled call
(:mod:`ensemblekit.classifiers._c45_kernels`, numba, imported on first use), pruning, which
re-reads each node's training instances, in another
(:mod:`ensemblekit.classifiers._c45_pruning`). Both are driven by
:mod:`ensemblekit.classifiers._c45_growth`, whose :func:`grow_c45` grows a tree from arrays
that are already valid, with no per-tree checks: the path of the bagging ensembles, which
grow many small unpruned trees.

The fitted tree is a set of flat numpy arrays (one entry per node, children of a node
stored contiguously), held, checked, applied and printed by the numpy-only model class
:class:`~ensemblekit.classifiers.c45_model.C45Model`, the first base of :class:`C45Tree`:
a model file rebuilds that class, without numba or scikit-learn, and
:meth:`C45Model.fit_coded <ensemblekit.classifiers.c45_model.C45Model.fit_coded>` fits it
without scikit-learn (``ensemblekit fit``); :class:`C45Tree` adds scikit-learn's checks of
the input to the same growth.

Weights: J48 weighs instances everywhere (``-M``, the minimum split, the error
estimates). The one place where it counts instances rather than weights is the number of
known values a numeric split needs (``C45Split.handleNumericAttribute``): there a row is
one instance whatever its weight. Two kinds of weight follow:

* ``sample_weight`` (scikit-learn's meaning, and what Weka's ``Bagging`` bags amount to): a
  row of whole-number weight ``k`` stands for ``k`` copies of the row, also in that count
  (any other weight counts as one row), so a weight of 3 grows the tree of the row written
  three times;
* ``instance_weights`` (Weka's meaning, an ARFF file's ``{w}``): every row counts as one
  instance in that count, whatever its weight, as J48 on the weighted file does.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..constraints import validate_params
from ..frames import fit_input, predict_input
from ..rows import quiet_finite_check
from ._c45_growth import add_errors, grow_c45
from .c45_model import C45Model, weka_number

__all__ = ["C45Tree", "add_errors", "grow_c45", "weka_number"]


class C45Tree(C45Model, ClassifierMixin, BaseEstimator):
    """C4.5 release 8 decision tree, as Weka 3.9.7's J48 (``c45``, alias ``j48``).

    Multiway splits on nominal attributes, binary splits on numeric ones chosen by gain
    ratio with release 8's threshold penalty, fractional instances for missing values, and
    error-based pruning with subtree raising, or reduced-error pruning on a held-out fold.
    Fitted on the same data, the tree, its text
    (:meth:`export_text`) and its class probabilities equal J48's (``J48 -t FILE`` and
    ``-p 0 -distribution``); see the module docstring for the rules.

    Parameters
    ----------
    confidence_factor : float in (0, 0.5], default=0.25
        Confidence of the pessimistic error estimate used in pruning (J48 ``-C``); smaller
        prunes more. Used as a 32-bit float, as in Weka.
    min_samples_leaf : int >= 1, default=2
        Minimum total weight of instances in at least two branches of a split (J48 ``-M``).
    unpruned : bool, default=False
        Do not prune (J48 ``-U``); the tree is still collapsed unless ``collapse_tree`` is
        False.
    subtree_raising : bool, default=True
        Consider replacing a node by its largest branch while pruning (J48 ``-S`` turns it
        off).
    collapse_tree : bool, default=True
        Replace subtrees that do not reduce the training error by leaves (J48 ``-O`` turns
        it off).
    binary_splits : bool, default=False
        Split a nominal attribute in two, one value against all the others (J48 ``-B``):
        for each value with at least ``min_samples_leaf`` weight (the others together
        having as much), the split ``attr = v`` / ``attr != v``; the first such value is
        kept unless a later one has a higher gain ratio, and the attribute competes with
        that split's gain and gain ratio. The tree prints ``attr = v`` and ``attr != v``,
        and (as J48 ``-B``) its numeric split points as Java's ``Double.toString`` writes
        them (``127.0``). Numeric attributes split as without it.
    mdl_correction : bool, default=True
        Subtract release 8's ``log2(#candidate thresholds) / N`` from the gain of a
        numeric split (``N`` the node's weight); False is J48 ``-J``.
    split_point_actual_value : bool, default=True
        Move a numeric threshold from the midpoint between the two training values it
        separates at the node down to the largest value of the attribute in the whole
        training data not above it; False (J48 ``-doNotMakeSplitPointActualValue``) keeps
        the midpoint. Training rows fall on the same sides either way; new rows between
        the two values may not.
    reduced_error_pruning : bool, default=False
        Prune on a held-out part of the data instead of by the error estimate (J48 ``-R``):
        the rows are shuffled with ``seed``, stratified into ``num_folds`` folds, the tree
        is grown (not collapsed) on all folds but the last and a split is replaced by a leaf
        when that misclassifies no more of the last fold's rows (see
        :mod:`ensemblekit.classifiers._c45_rep`). The leaves keep and print their growing
        counts. ``confidence_factor``, ``subtree_raising`` and ``collapse_tree`` play no
        part; with ``unpruned`` or a ``confidence_factor`` other than 0.25 ``fit`` refuses,
        as J48 does. A row's weight is not split into copies here: each row is one
        instance of the folds.
    num_folds : int >= 2, default=3
        Folds of reduced-error pruning, one of which prunes (J48 ``-N``); at least this
        many rows are needed.
    seed : int, default=1
        Seed of the ``java.util.Random`` that shuffles the rows for reduced-error pruning
        (J48 ``-Q``; a Java ``int``); not the ``--seed`` of the command line, so that the
        tree equals J48's whatever that is.
    laplace : bool, default=False
        Laplace-corrected class probabilities (J48 ``-A``): a leaf gives
        ``(weight of the class + 1) / (leaf weight + n_classes)`` instead of the class's
        share of the leaf's weight, in every path of the walk (a known value into an empty
        branch, a missing value's weighted branches), as Weka's ``ClassifierTree`` with
        Laplace. Changes probabilities only, not the tree or its text (:meth:`predict`
        may change where classes tie).
    nominal_features : array-like of int or None, default=None
        Indices of the nominal columns of ``X`` (their values are codes); None: every
        column is numeric, unless ``X`` is a DataFrame whose dtypes declare them
        (``category``, string and boolean columns; see :meth:`fit`).
    n_categories : array-like of int or None, default=None
        Number of declared values of each nominal column (in the order of
        ``nominal_features``); a nominal split has one branch per declared value. None:
        the largest code seen plus one.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``. None: the
        distinct labels of ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (``arange(n_classes)`` when declared).
    n_features_in_ : int
    nominal_features_, n_categories_ : ndarray of int64
        The nominal columns (sorted) and the declared values of each.
    frame_categories_ : list of (tuple of str or None)
        Set only when fitted on a DataFrame whose dtypes declared the nominal columns:
        each column's values in code order, None for a numeric column.
    feature_, threshold_, child_start_, n_children_, value_, bag_value_, is_empty_ : ndarray
        The tree's node arrays (node 0 is the root, the children of a node stored
        contiguously after it), as :class:`~ensemblekit.classifiers.c45_model.C45Model`
        describes them.

    References
    ----------
    .. [1] J. R. Quinlan, *C4.5: Programs for Machine Learning*, Morgan Kaufmann, 1993.
    .. [2] J. R. Quinlan, "Improved use of continuous attributes in C4.5", *Journal of
       Artificial Intelligence Research* 4, 77-90, 1996 (release 8's threshold penalty).
    .. [3] Weka 3.9.7, ``weka.classifiers.trees.J48`` (the semantics matched here).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.classifiers.c45 import C45Tree
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> tree = C45Tree().fit(X, y)
    >>> print(tree.export_text())
    x0 <= 3: 0 (3.0)
    x0 > 3: 1 (3.0)
    """

    # ---- fitting
    def fit(self, X, y, sample_weight=None, *, instance_weights=None):
        """Grow the tree on training data, then collapse and prune it as J48 does.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns as numbers, nominal columns as codes; NaN marks a missing value.
            A pandas or polars DataFrame, when ``nominal_features`` is None, declares its
            nominal columns by dtype: ``category`` (with its categories), string and
            boolean columns are nominal, dates are milliseconds since the epoch (see
            :func:`ensemblekit.frames.fit_input`); ``predict`` then codes a frame by the
            same categories, a value unseen in training as missing.
        y : array-like of shape (n_samples,)
            Class labels (codes ``0 .. n_classes - 1`` when ``n_classes`` is given).
        sample_weight : array-like of shape (n_samples,) or None
            Weights >= 0 as copies: a row of weight 3 counts as three copies of the row, a
            row of weight 0 as absent.
        instance_weights : array-like of shape (n_samples,) or None
            Weka's instance weights >= 0 (an ARFF file's ``{w}``): the same as
            ``sample_weight`` but in J48's count of the known values a numeric split needs,
            where each row is one instance. Not with ``sample_weight``.

        Returns
        -------
        self : C45Tree

        Raises
        ------
        ValueError
            If ``X`` is not 2-D or holds infinity, ``y`` is not class labels, a weight is
            negative or not finite, every weight is zero, a nominal column holds a value
            that is not one of its codes, a parameter is out of range, or
            ``reduced_error_pruning`` meets ``unpruned``, a changed ``confidence_factor``
            or fewer rows than ``num_folds``.
        """
        validate_params(self)
        X, declared = fit_input(self, X)
        with quiet_finite_check():
            X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", dtype=np.float64)
        from sklearn.utils.multiclass import check_classification_targets

        check_classification_targets(y)
        return self._fit_checked(X, y, sample_weight, instance_weights, declared)

    # ---- prediction (computed by C45Model; here scikit-learn's checks of the input)
    def predict_proba(self, X):
        """Class probabilities as J48's ``distributionForInstance`` (with ``laplace``, J48 ``-A``).

        :meth:`C45Model.predict_proba <ensemblekit.classifiers.c45_model.C45Model.predict_proba>`
        after scikit-learn's checks of ``X`` (feature names of a data frame).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            As in :meth:`fit`; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If ``X`` has another number of columns than in ``fit`` or a nominal column holds
            a value that is not one of its codes.
        """
        check_is_fitted(self, "feature_")
        X = predict_input(self, X)
        with quiet_finite_check():
            X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)
        return super().predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
