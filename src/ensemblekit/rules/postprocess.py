"""Post-processing an ISLE ensemble: weights for its trees or rules, chosen on the training data.

Akdemir & Jannink (*Ensemble learning with trees and rules*, Intelligent Data
Analysis 18(5), 2014) treat the M trees of an ISLE ensemble, or the K rules
taken from their nodes, as derived features and fit a model on them. The
basis is either the tree outputs ``T`` (n x M, Eq. 2) or the 0/1 rule matrix
``R`` (n x K, Eq. 4). The methods, with their registry names:

``lasso`` (``rule-lasso`` = RuleFit, ``tree-lasso``)
    Eq. 2 / Eq. 4: least squares with an L1 penalty, the penalty chosen by
    inner k-fold cross-validation along the exact LARS-lasso path
    (scikit-learn's ``LassoLarsCV``).
``pls`` (``rule-pls``, ``tree-pls``; Sect. 2.1)
    Partial least squares regression on the basis (scikit-learn's
    ``PLSRegression``, unscaled columns as R's ``plsr``), the number of
    components chosen by inner k-fold cross-validation.
``oob`` (``oob-weighted``, ``oob-weighted-top``; Sect. 2.3)
    Tree ``l`` is weighted by the sum over its out-of-bag rows of a Gaussian
    kernel of its errors, ``w_l ∝ Σ_i K_h(y_i - T_l(x_i))``; the bandwidth ``h``
    is chosen by cross-validation; ``top_fraction < 1`` keeps only the trees
    with the largest weights (the paper's "best 60%").
``kernel`` (``rule-kernel``, ``tree-kernel``; Sect. 2.2)
    Nadaraya-Watson smoothing of the training targets with a Gaussian kernel
    on the distance between basis vectors ``t(x)``; bandwidth by
    cross-validation.
``mean`` (``random-forest``, ``isle-average``)
    Equal weights ``1/M``. On trees grown deep on bootstrap samples this is
    Breiman's random forest (``random-forest``; ``max_features < 1`` tries a
    random subset of the features at each split, Breiman's setting is a
    third); on the default ISLE trees (subsamples, depth 3) it is their plain
    average (``isle-average``).

Importances follow Sect. 2.1: rule ``k`` has ``|w_k| sqrt(s_k (1 - s_k))`` with
``s_k`` its support, tree ``k`` has ``|w_k| std(T_k)``, and a variable the sum
over the rules or trees that test it. Equal weights say nothing about the
variables (every deep tree of a forest tests nearly all of them), so ``mean``
gives a variable Breiman's mean decrease in impurity instead: its share of the
squared-error reduction of the splits on it, averaged over the trees and
normalised to sum 1, as scikit-learn's forests report it.

Numpy arrays in and out; nothing here reads files or prints.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ensemblekit.errors import InputError

from ..constraints import validate_params
from ..rows import quiet_finite_check
from ._agreement import pack_rules
from .extract import extract_rules, flatten_rules
from .extract_model import as_float32
from .isle import generate_isle, tree_arrays, tree_outputs
from .postprocess_model import (
    BASES,
    METHODS,
    RuleEnsembleModel,
    check_target,
    nadaraya_watson,
    squared_distances,
)

__all__ = ["BASES", "METHODS", "RuleEnsembleRegressor"]

# Bandwidth grids, as multiples of a data-driven scale (see the fitting code):
# powers of sqrt(2) from 1/8 to 8, plus infinity (equal weights) for oob.
_BANDWIDTH_STEPS = 2.0 ** (np.arange(-6, 7) / 2.0)
# Most LARS steps of the lasso path.
_LARS_STEPS = 2000


class RuleEnsembleRegressor(RuleEnsembleModel, RegressorMixin, BaseEstimator):
    """An ISLE tree ensemble, or its rules, post-processed into one regression model.

    Fitting grows ``n_estimators`` trees by ISLE (Akdemir & Jannink 2014,
    Algorithm 1; :func:`ensemblekit.rules.isle.generate_isle`), takes their
    rules when ``basis="rules"`` (:func:`ensemblekit.rules.extract.extract_rules`)
    and fits the weights of ``method`` (see the module docstring). Every tuning
    choice (lasso penalty, PLS components, bandwidths) is made by inner
    ``cv``-fold cross-validation on the training data only. As in the paper
    and in RuleFit, the trees (and so the rules) are grown once on all the
    training rows before the folds are cut, so the inner folds score rows that
    helped shape the basis; ``oob`` alone avoids this, scoring each held-out
    row with the trees that did not see it.

    Parameters
    ----------
    method : {"lasso", "pls", "oob", "kernel", "mean"}, default="pls"
        Post-processing (Sect. 2 of the paper).
    basis : {"rules", "trees"}, default="rules"
        Derived features: the 0/1 rules of all non-root nodes, or the tree
        outputs. ``oob`` and ``mean`` weight trees and need ``"trees"``.
    n_estimators : int, default=200
        Number of ISLE trees M.
    max_depth : int or None, default=3
        Tree depth (mean leaves ``2**max_depth`` with ``tree_size="random"``);
        None grows every tree fully (``tree_size="fixed"`` only).
    max_samples : float in (0, 1] or None, default=None
        Subsample fraction per tree, without replacement; None uses
        ``min(N/2, 100 + 6 sqrt(N))`` rows (Friedman & Popescu).
    learning_rate : float in [0, 1], default=0.01
        ISLE memory nu. ``oob`` and ``mean`` average trees that each predict
        ``y``, so they need 0.
    max_features : float in (0, 1], default=1.0
        Fraction of the features tried per split.
    tree_size : {"fixed", "random"}, default="fixed"
        RuleFit's random tree sizes with ``"random"``.
    min_samples_leaf : int, default=1
        Fewest training rows in a leaf of every tree.
    bootstrap : bool, default=False
        Draw each tree's sample with replacement (``max_samples`` times N
        rows, N when None) instead of subsampling; with ``max_depth=None``,
        ``method="mean"`` and ``learning_rate=0`` the model is
        scikit-learn's ``RandomForestRegressor`` (same trees for the same
        ISLE seed; see :func:`ensemblekit.rules.isle.generate_isle`).
    linear_terms : bool, default=False
        Also give ``lasso`` and ``pls`` the input variables, winsorised at
        their 2.5% and 97.5% training quantiles and scaled by ``0.4 / std``, as
        RuleFit does (Friedman & Popescu 2008, Eq. 25-27).
    top_fraction : float in (0, 1], default=1.0
        ``oob`` only: fraction of the trees kept, the largest weights first.
    max_components : int, default=30
        ``pls`` only: most components tried by the inner cross-validation.
    cv : int, default=10
        Folds of the inner cross-validation (at most the number of rows).
    random_state : int, RandomState or None
        Seed of the subsamples, the trees and the inner folds.

    Attributes
    ----------
    trees_ : list of sklearn.tree.DecisionTreeRegressor
        The ISLE trees (not stored in a model file; a loaded model reads
        their number, and for ``basis="trees"`` their nodes, from the arrays
        below).
    rules_ : ensemblekit.rules.extract.RuleSet or None
        The kept rules (``basis="rules"``; not stored either, see below).
    n_trees_ : int
        Number of ISLE trees.
    tree_node_count_, tree_children_left_, tree_children_right_, tree_feature_, \
tree_threshold_, tree_value_ : ndarray or None
        ``basis="trees"``: the trees' nodes, tree after tree, which
        :meth:`predict` walks (:func:`ensemblekit.rules.isle_model.tree_outputs`).
    rule_tree_, rule_node_, rule_length_, condition_feature_, condition_greater_, \
condition_threshold_ : ndarray or None
        ``basis="rules"``: each kept rule's tree, node and number of
        conditions, and the conditions rule after rule
        (:func:`ensemblekit.rules.extract_model.flatten_rules`).
    rule_support_ : ndarray of shape (n_rules,) or None
        Fraction of the training rows each kept rule fires for.
    n_candidates_ : int or None
        Rules before duplicates, complements and constant rules were dropped.
    train_target_, train_basis_, train_rules_ : ndarray or None
        ``kernel``: the training targets, and their tree outputs
        (``basis="trees"``) or their rule matrix bit-packed along the rules
        (``basis="rules"``, ``numpy.packbits``).
    coef_ : ndarray of shape (n_terms,) or None
        Weight of each basis column, then of each linear term; None for
        ``kernel``.
    intercept_ : float
        ``w_0`` (0 for ``oob`` and ``mean``).
    bandwidth_ : float or None
        Chosen kernel width (``oob``, ``kernel``); ``inf`` means equal weights.
    n_components_ : int or None
        Chosen number of PLS components.
    alpha_ : float or None
        Chosen lasso penalty.
    term_importances_ : ndarray of shape (n_terms,) or None
        Importance of each rule / tree / linear term (Sect. 2.1).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Sum of the importances of the terms that use each input column
        (zeros for ``kernel``, which has no weights); for ``mean``, the mean
        decrease in impurity (see the module docstring).
    binary_features_ : ndarray of int
        Input columns holding only 0 and 1 in the training data (printed as
        equalities by :meth:`term_descriptions`).

    References
    ----------
    Akdemir & Jannink, *Ensemble learning with trees and rules: supervised,
    semi-supervised, unsupervised*, Intelligent Data Analysis 18(5), 2014.
    Friedman & Popescu, *Importance sampled learning ensembles*, 2003;
    *Predictive learning via rule ensembles*, Ann. Appl. Stat. 2(3), 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.rules.postprocess import RuleEnsembleRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(200, 3)
    >>> y = 2 * (X[:, 0] > 0.5) + X[:, 1]
    >>> model = RuleEnsembleRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> model.predict(X[:2]).shape
    (2,)
    """

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> None:
        """The declared ranges, then the rules that tie parameters together."""
        validate_params(self)
        if self.method in ("oob", "mean"):
            if self.basis != "trees":
                raise InputError(f"method={self.method!r} weights trees: it needs basis='trees'")
            if self.learning_rate != 0:
                raise InputError(f"method={self.method!r} averages trees that each predict y: it "
                                 f"needs learning_rate=0, got {self.learning_rate!r}")
        if (self.method == "oob" and not self.bootstrap and self.max_samples is not None
                and self.max_samples >= 1):
            raise InputError("method='oob' needs out-of-bag rows: max_samples must be < 1")
        if self.tree_size == "random" and self.max_depth is None:
            raise InputError("tree_size='random' needs max_depth (the mean size is "
                             "2**max_depth leaves)")

    def fit(self, X, y):
        """Grow the ISLE trees and fit the post-processing weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite numeric inputs (the registry's pipeline imputes and one-hot
            encodes before this).
        y : array-like of shape (n_samples,)
            Numeric targets.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On bad parameters, non-finite input, or fewer than 2 rows.
        ensemblekit.errors.ColumnError
            A value of ``X`` beyond float32's range (about 3.4e38), which the
            trees cannot read, or a target beyond ``TARGET_MAX`` (1e100) in
            magnitude, whose squares would overflow.
        """
        self._check_params()
        with quiet_finite_check():
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        as_float32(X)  # the trees read float32: a larger value is refused, naming its column
        check_target(y)
        n = X.shape[0]
        if n < 2:
            raise InputError(f"n_samples={n}: a rule ensemble needs at least 2 instances")
        rng = check_random_state(self.random_state)
        isle_seed, cv_seed = (int(s) for s in rng.randint(np.iinfo(np.int32).max, size=2))
        ensemble = generate_isle(X, y, n_estimators=self.n_estimators, max_depth=self.max_depth,
                                 max_samples=self.max_samples, learning_rate=self.learning_rate,
                                 max_features=self.max_features, tree_size=self.tree_size,
                                 min_samples_leaf=self.min_samples_leaf, bootstrap=self.bootstrap,
                                 random_state=isle_seed)
        self.trees_ = ensemble.trees
        self.rules_ = extract_rules(self.trees_, X) if self.basis == "rules" else None
        self.binary_features_ = np.flatnonzero(np.all((X == 0) | (X == 1), axis=0))
        if self.linear_terms and self.method in ("lasso", "pls"):
            low, high = np.quantile(X, [0.025, 0.975], axis=0)
            clipped = np.clip(X, low, high)
            std = clipped.std(axis=0)
            self.linear_bounds_ = np.vstack([low, high])
            self.linear_scale_ = np.where(std > 0, 0.4 / np.where(std > 0, std, 1.0), 0.0)
        else:
            self.linear_bounds_ = self.linear_scale_ = None
        Z = self._training_design(X)
        with threadpool_limits(limits=1, user_api="blas"):  # same bits on any core count
            self._post_process(Z, X, y, ensemble, cv_seed)
        self._keep_arrays()
        return self

    def _keep_arrays(self) -> None:
        """The trees' nodes (basis "trees") or the rules' conditions, as the model stores them."""
        self.n_trees_ = len(self.trees_)
        for name in ("tree_node_count_", "tree_children_left_", "tree_children_right_",
                     "tree_feature_", "tree_threshold_", "tree_value_", "rule_tree_",
                     "rule_node_", "rule_length_", "condition_feature_", "condition_greater_",
                     "condition_threshold_", "rule_support_", "n_candidates_"):
            setattr(self, name, None)
        if self.basis == "trees":
            for name, value in tree_arrays(self.trees_).items():
                setattr(self, f"tree_{name}_", value)
            return
        for name, value in flatten_rules(self.rules_.rules).items():
            setattr(self, f"{name}_", value)
        self.rule_support_ = np.asarray(self.rules_.support, dtype=np.float64)
        self.n_candidates_ = int(self.rules_.n_candidates)

    def _post_process(self, Z, X, y, ensemble, cv_seed) -> None:
        """Fit the weights of ``method`` on the design ``Z`` (n, n_terms)."""
        n = X.shape[0]
        self.coef_ = None
        self.intercept_ = 0.0
        self.bandwidth_ = self.n_components_ = self.alpha_ = None
        self.train_target_ = self.train_basis_ = self.train_rules_ = None
        folds = _folds(n, min(self.cv, n), cv_seed)
        if self.method in ("lasso", "pls") and Z.shape[1] == 0:
            # no rule splits the training rows (e.g. a constant target): the mean is the model
            self.coef_ = np.zeros(0)
            self.intercept_ = float(y.mean())
            self.n_components_ = 0 if self.method == "pls" else None
        elif self.method == "lasso":
            self._fit_lasso(Z, y, folds)
        elif self.method == "pls":
            self._fit_pls(Z, y, folds)
        elif self.method == "oob":
            outputs = ensemble.outputs(X)
            self._fit_oob(outputs, ensemble.out_of_bag(n), y, folds)
        elif self.method == "kernel":
            self._fit_kernel(Z, y, folds)
        else:
            self.coef_ = np.full(len(self.trees_), 1.0 / len(self.trees_))
        self._set_importances(Z)

    def _training_design(self, X) -> np.ndarray | sp.csc_matrix:
        """Basis columns (rules or tree outputs), then the linear terms when used."""
        Z = self.rules_.transform(X) if self.basis == "rules" else tree_outputs(self.trees_, X)
        if self.linear_scale_ is not None:
            linear = np.clip(X, self.linear_bounds_[0], self.linear_bounds_[1]) * self.linear_scale_
            Z = sp.hstack([Z, sp.csc_matrix(linear)], format="csc") if sp.issparse(Z) else \
                np.hstack([Z, linear])
        return Z

    def _fit_lasso(self, Z, y, folds) -> None:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LassoLarsCV

        # LARS computes the whole lasso path exactly, and on these wide, strongly
        # correlated 0/1 columns far faster than coordinate descent (2 s against
        # 100 s for 1000 rules and 667 rows)
        Z = Z.toarray() if sp.issparse(Z) else Z
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            lasso = LassoLarsCV(cv=folds, max_iter=_LARS_STEPS).fit(Z, y)
        self.coef_ = np.asarray(lasso.coef_, dtype=np.float64)
        self.intercept_ = float(lasso.intercept_)
        self.alpha_ = float(lasso.alpha_)

    def _fit_pls(self, Z, y, folds) -> None:
        Z = Z.toarray() if sp.issparse(Z) else Z
        n, p = Z.shape
        smallest_train = min(n - test.size for _, test in folds)
        top = max(1, min(self.max_components, p, smallest_train - 1))
        errors = np.zeros(top)
        for train, test in folds:
            errors += ((_pls_path(Z[train], y[train], Z[test], top) - y[test, None]) ** 2).sum(0)
        self.n_components_ = int(np.argmin(errors)) + 1
        self.coef_, self.intercept_ = _pls_fit(Z, y, self.n_components_)

    def _fit_oob(self, outputs, oob, y, folds) -> None:
        if not oob.any():
            raise InputError("method='oob' needs out-of-bag rows, but every tree's subsample "
                             "holds every row; lower max_samples")
        errors = np.where(oob, y[:, None] - outputs, 0.0)
        scale = float(np.sqrt(np.mean(errors[oob] ** 2)))
        grid = [np.inf] + ([scale * s for s in _BANDWIDTH_STEPS[::-1]] if scale > 0 else [])
        usable_by_fold = []  # out-of-bag cells of each fold's training rows
        for train, _ in folds:
            in_train = np.zeros(y.size, dtype=bool)
            in_train[train] = True
            usable_by_fold.append(oob & in_train[:, None])
        best, best_error = np.inf, np.inf
        for h in grid:
            total, counted = 0.0, 0
            for (_, test), usable in zip(folds, usable_by_fold):
                w = self._oob_weights(errors, usable, h)
                # a held-out row is predicted only by the trees that did not see it; a row
                # none of whose trees is kept falls back to their plain mean, so every
                # bandwidth is scored on the same rows (those out of bag somewhere)
                held = oob[test]
                rows = held.any(1)
                mass = held[rows] * w
                plain = held[rows].astype(np.float64)
                mass = np.where(mass.sum(1, keepdims=True) > 0, mass, plain)
                pred = (mass * outputs[test][rows]).sum(1) / mass.sum(1)
                total += float(((pred - y[test][rows]) ** 2).sum())
                counted += int(rows.sum())
            error = total / counted if counted else np.inf
            if error < best_error:
                best, best_error = h, error
        self.bandwidth_ = float(best)
        self.coef_ = self._oob_weights(errors, oob, best)

    def _oob_weights(self, errors, usable, h) -> np.ndarray:
        """Normalised tree weights from the kernel of their out-of-bag errors (Sect. 2.3).

        With ``top_fraction < 1`` only the largest weights are kept; equal
        weights (``h = inf``) are ranked by mean squared out-of-bag error, the
        order the kernel weights take as ``h`` grows.
        """
        M = errors.shape[1]
        if np.isinf(h):
            logw = np.where(usable.any(0), 0.0, -np.inf)
        else:
            # log sum_i exp(-e_il^2 / 2h^2) over usable rows, computed stably
            z = np.where(usable, -(errors ** 2) / (2.0 * h * h), -np.inf)
            top = z.max(0)
            finite = np.isfinite(top)
            logw = np.full(M, -np.inf)
            logw[finite] = top[finite] + np.log(np.exp(z[:, finite] - top[finite]).sum(0))
        if not np.isfinite(logw).any():
            return np.full(M, 1.0 / M)
        w = np.exp(logw - logw.max())
        if self.top_fraction < 1:
            keep = max(1, int(np.ceil(self.top_fraction * M)))
            counts = usable.sum(0)
            mse = np.where(counts > 0, np.where(usable, errors ** 2, 0.0).sum(0) /
                           np.maximum(counts, 1), np.inf)
            order = np.lexsort((np.arange(M), mse, -w))
            w[order[keep:]] = 0.0
        return w / w.sum()

    def _fit_kernel(self, Z, y, folds) -> None:
        D2 = _squared_distances(Z, Z)
        off = D2[~np.eye(D2.shape[0], dtype=bool)]
        positive = off[off > 0]
        scale = float(np.sqrt(np.median(positive))) if positive.size else 1.0
        best, best_error = None, np.inf
        for h in scale * _BANDWIDTH_STEPS:
            error = 0.0
            for train, test in folds:
                error += float(((_nadaraya_watson(D2[np.ix_(test, train)], y[train], h)
                                 - y[test]) ** 2).sum())
            if error < best_error:
                best, best_error = h, error
        self.bandwidth_ = float(best)
        if self.basis == "rules":
            self.train_rules_ = pack_rules(Z)
        else:
            self.train_basis_ = Z
        self.train_target_ = y

    def _set_importances(self, Z) -> None:
        n_features = self.n_features_in_
        self.feature_importances_ = np.zeros(n_features)
        if self.coef_ is None:
            self.term_importances_ = None
            return
        spread = _column_std(Z)
        if self.basis == "rules":
            s = self.rules_.support
            spread[:s.size] = np.sqrt(s * (1 - s))
        self.term_importances_ = np.abs(self.coef_) * spread
        if self.method == "mean":
            split = [t.feature_importances_ for t in self.trees_ if t.tree_.node_count > 1]
            mean = np.mean(split, axis=0, dtype=np.float64) if split else None
            if mean is not None and mean.sum() > 0:
                self.feature_importances_ = mean / mean.sum()
            return
        for k, features in enumerate(self._term_features()):
            self.feature_importances_[list(features)] += self.term_importances_[k]

    def _term_features(self) -> list[tuple[int, ...]]:
        """Input columns each term uses: a rule's tested features, a tree's split features."""
        if self.basis == "rules":
            out = [rule.features for rule in self.rules_.rules]
        else:
            out = [tuple(sorted(set(int(f) for f in t.tree_.feature if f >= 0))) for t in self.trees_]
        if self.linear_scale_ is not None:
            out += [(j,) for j in range(self.n_features_in_)]
        return out

    # -------------------------------------------------------------- predict
    def predict(self, X):
        """Predict the target of each row (computed by :class:`RuleEnsembleModel`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            If ``X`` has the wrong number of columns or non-finite values.
        """
        check_is_fitted(self, "trees_")
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, reset=False)
        return super().predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


# ----------------------------------------------------------------- kernels
def _folds(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled k-fold splits of ``range(n)`` as (train, test) index pairs."""
    from sklearn.model_selection import KFold

    return list(KFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros((n, 1))))


def _pls_fit(Z, y, n_components):
    """PLS regression of y on Z with ``n_components``: (coefficients (p,), intercept)."""
    import warnings

    from sklearn.cross_decomposition import PLSRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (UserWarning, RuntimeWarning))
        pls = PLSRegression(n_components=n_components, scale=False).fit(Z, y)
    coef = np.asarray(pls.coef_, dtype=np.float64).reshape(-1)
    # scikit-learn centres Z before applying coef_; fold the centring into w_0
    intercept = float(y.mean() - Z.mean(axis=0) @ coef)
    return coef, intercept


def _pls_path(Z, y, Z_new, top):
    """Predictions on ``Z_new`` of the PLS models with 1..top components, shape (m, top).

    PLS components are nested (the first a components of a fit with more are
    the a-component fit), and the rotation matrix ``W (P'W)^-1`` has a
    triangular ``P'W``, so one fit with ``top`` components gives every smaller
    model: its first ``a`` rotation and loading columns.
    """
    import warnings

    from sklearn.cross_decomposition import PLSRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (UserWarning, RuntimeWarning))
        pls = PLSRegression(n_components=top, scale=False).fit(Z, y)
    scores = (Z_new - Z.mean(axis=0)) @ pls.x_rotations_       # (m, top), scale=False centres only
    steps = scores * pls.y_loadings_[0]                        # each component's contribution
    return y.mean() + np.cumsum(steps, axis=1)


def _column_std(Z) -> np.ndarray:
    """Population standard deviation of each column of a dense or sparse matrix."""
    if sp.issparse(Z):
        mean = np.asarray(Z.mean(axis=0)).ravel()
        mean_sq = np.asarray(Z.multiply(Z).mean(axis=0)).ravel()
        return np.sqrt(np.maximum(mean_sq - mean ** 2, 0.0))
    return Z.std(axis=0)


def _squared_distances(A, B) -> np.ndarray:
    """Squared Euclidean distances between the rows of A (m, p) and B (n, p), dense (m, n)."""
    if sp.issparse(A) or sp.issparse(B):
        A = sp.csr_matrix(A)
        B = sp.csr_matrix(B)
        a2 = np.asarray(A.multiply(A).sum(1)).ravel()
        b2 = np.asarray(B.multiply(B).sum(1)).ravel()
        cross = np.asarray((A @ B.T).todense())
        return np.maximum(a2[:, None] + b2[None, :] - 2.0 * cross, 0.0)
    return squared_distances(A, B)


#: The kernel mean (kept under its former name for the fitting code and its tests).
_nadaraya_watson = nadaraya_watson
