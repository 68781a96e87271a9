"""Parameter tuning inside a training fold (an inner cross-validation picks the values), and
for a clustering run (an internal index picks them).

:class:`TunedEstimator` is the meta-estimator the runner fits in each outer fold when
``compare --tune`` is given. It follows scikit-learn's ``GridSearchCV`` with ``refit=True``
(Pedregosa et al. 2011; scikit-learn 1.x, ``sklearn.model_selection.GridSearchCV``) and the
idea of Weka's ``CVParameterSelection`` (Kohavi 1995, "Wrappers for performance
enhancement and oblivious decision graphs", ch. 4): every grid point is scored by the mean
accuracy of a stratified k-fold cross-validation on the training rows only, the best point
(the first in grid order on a tie, as ``GridSearchCV``'s ``best_index_``) is refitted on all
of them, and the refitted model predicts. The outer test rows are never seen, so the outer
estimate is not biased by the choice (Varma & Simon 2006, BMC Bioinformatics 7:91).

A clustering run has no held-out rows and, for the choice, no classes: :class:`TunedClusterer`
clusters the run's rows once per grid point and keeps the point whose partition an internal
validity index rates best (silhouette, Dunn, connectivity, Davies-Bouldin or
Calinski-Harabasz, in their own direction), the usual way of choosing, say, the number of
clusters (Rousseeuw 1987; Halkidi, Batistakis & Vazirgiannis 2001). The external indices
that judge the run afterwards are never used to choose.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from ensemblekit.experiment.folds import stratified_test_folds

__all__ = ["TunedClusterer", "TunedEstimator", "grid_points", "tuned_factory"]


def grid_points(grid: dict[str, list]) -> list[dict]:
    """The points of ``grid`` in scikit-learn's ``ParameterGrid`` order.

    Parameters
    ----------
    grid : dict
        ``{key: [values]}``, each list non-empty.

    Returns
    -------
    list of dict
        Keys sorted by name, the last key varying fastest (as ``ParameterGrid``).
    """
    keys = sorted(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


class TunedEstimator:
    """A classifier whose parameters an inner stratified cross-validation chooses.

    Parameters
    ----------
    make_for : callable
        ``make_for(point)`` returns the estimator factory (``make(random_state)``, see
        :func:`ensemblekit.registry.estimator_factory`) of the algorithm with the grid point
        ``point`` (a dict) over its other parameters.
    grid : dict
        ``{key: [parsed values]}``; at least one value per key.
    tune_cv : int, default=5
        Inner folds, >= 2 and at most the row count of the smallest class of the
        training rows.
    random_state : int
        Seed of the inner folds (``StratifiedKFold(tune_cv, shuffle=True,
        random_state=random_state)``, see
        :func:`ensemblekit.experiment.folds.stratified_test_folds`) and of every fit.

    Attributes
    ----------
    best_params_ : dict
        The chosen point.
    cv_scores_ : ndarray of shape (n_points,)
        Mean inner accuracy of each point, in :func:`grid_points` order, in [0, 1].
    best_estimator_ : estimator
        Refitted on every training row with ``best_params_``.

    Raises
    ------
    ValueError
        From :meth:`fit`, when a class has fewer than ``tune_cv`` training rows.
    """

    def __init__(self, make_for: Callable, grid: dict, tune_cv: int = 5,
                 random_state: int | None = None):
        self.make_for = make_for
        self.grid = grid
        self.tune_cv = tune_cv
        self.random_state = random_state

    @staticmethod
    def _fit(model, X, y):
        (getattr(model, "fit_coded", None) or model.fit)(X, y)
        return model

    def fit(self, X: np.ndarray, y: np.ndarray) -> TunedEstimator:
        """Choose the grid point on ``(X, y)`` and refit it there.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Training rows (ensemblekit's coded layout).
        y : ndarray of shape (n_samples,), int
            Their class codes (every one known).

        Returns
        -------
        self
        """
        y = np.asarray(y)
        smallest = int(np.bincount(np.unique(y, return_inverse=True)[1].ravel()).min())
        if smallest < self.tune_cv:
            raise ValueError(f"--tune-cv {self.tune_cv}: a class has only {smallest} training "
                             "rows in this fold; use fewer inner folds")
        tests = stratified_test_folds(y, self.tune_cv, 1, self.random_state)
        points = grid_points(self.grid)
        scores = np.empty((len(points), len(tests)))
        for p, point in enumerate(points):
            make = self.make_for(point)
            for f, test in enumerate(tests):
                train = np.ones(y.shape[0], dtype=bool)
                train[test] = False
                model = self._fit(make(self.random_state), X[train], y[train])
                scores[p, f] = np.mean(np.asarray(model.predict(X[test])) == y[test])
        self.cv_scores_ = scores.mean(axis=1)
        best = int(np.flatnonzero(self.cv_scores_ == self.cv_scores_.max())[0])
        self.best_params_ = points[best]
        self.best_estimator_ = self._fit(self.make_for(points[best])(self.random_state), X, y)
        return self

    @property
    def classes_(self):
        """The refitted model's classes."""
        return self.best_estimator_.classes_

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes of ``X`` (shape (n,)) by the refitted model."""
        return self.best_estimator_.predict(X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class probabilities of ``X`` (shape (n, n_classes)) by the refitted model."""
        return self.best_estimator_.predict_proba(X)


class TunedClusterer:
    """A clusterer whose parameters an internal validity index chooses, run by run.

    Parameters
    ----------
    make_for : callable
        ``make_for(point)`` returns the factory (``make(random_state)``) of the clustering
        pipeline with the grid point ``point`` over its other parameters.
    grid : dict
        ``{key: [parsed values]}``; at least one value per key.
    index : str
        An internal index of :data:`ensemblekit.metrics.METRICS` (``silhouette``, ...).
    random_state : int
        The run's seed, given to every grid point's clusterer (so every point starts from
        the same random state, as the runs of different algorithms do).

    Attributes
    ----------
    best_params_ : dict
        The chosen point.
    index_values_ : ndarray of shape (n_points,)
        The index of each point's partition, in :func:`grid_points` order; NaN where it is
        undefined (a single cluster).
    best_estimator_ : pipeline
        The chosen point's fitted pipeline; its labels are the run's.

    Raises
    ------
    ValueError
        From :meth:`fit_predict`, when the index is undefined at every point.
    """

    def __init__(self, make_for: Callable, grid: dict, index: str,
                 random_state: int | None = None):
        self.make_for = make_for
        self.grid = grid
        self.index = index
        self.random_state = random_state

    def fit_predict(self, X: np.ndarray, y=None) -> np.ndarray:
        """Cluster ``X`` (shape (n_samples, n_features)) at every grid point; keep the best.

        Ties go to the first point in grid order. Returns the chosen partition's labels,
        shape (n_samples,).
        """
        from ensemblekit.metrics import metric_spec, score_model

        better_high = metric_spec(self.index).greater_is_better
        points = grid_points(self.grid)
        values = np.full(len(points), np.nan)
        fitted = []
        for p, point in enumerate(points):
            model = self.make_for(point)(self.random_state)
            labels = np.asarray(model.fit_predict(X))
            fitted.append((model, labels))
            if np.unique(labels).size > 1:  # an internal index needs two clusters or more
                values[p] = score_model([self.index], model, X, predicted=labels).values[
                    self.index]
        finite = np.isfinite(values)
        if not finite.any():
            raise ValueError(f"--tune-by {self.index} is undefined at every tuned value (each "
                             "gave a single cluster)")
        best_value = np.max(values[finite]) if better_high else np.min(values[finite])
        best = int(np.flatnonzero(finite & (values == best_value))[0])
        self.index_values_ = values
        self.best_params_ = points[best]
        self.best_estimator_, labels = fitted[best]
        return labels

    @property
    def steps(self):
        """The chosen pipeline's steps (what :func:`ensemblekit.metrics.model_size` reads)."""
        return self.best_estimator_.steps

    def __getitem__(self, item):
        """A slice of the chosen pipeline (``model[:-1]``: the space the index judged)."""
        return self.best_estimator_[item]


def tuned_factory(cand, params: dict, maker: Callable) -> Callable:
    """The factory of a :class:`TunedEstimator` (a :class:`TunedClusterer` for a clusterer)
    for a candidate with ``--tune`` values.

    Parameters
    ----------
    cand : ensemblekit.experiment.protocol.Candidate
        With a non-empty ``tune`` and its ``tune_cv``.
    params : dict
        Its other parameters.
    maker : callable
        ``maker(cand, params, bare)``: an estimator factory (the runner's, cached per task).

    Returns
    -------
    callable
        ``make(random_state)``: a new unfitted :class:`TunedEstimator`.
    """
    if cand.tune_by:  # a clusterer: whole pipelines, judged by an internal index
        return lambda random_state: TunedClusterer(
            lambda point: maker(cand, params | point, False), cand.tune, cand.tune_by,
            random_state)

    def make_for(point):
        return maker(cand, params | point, True)

    return lambda random_state: TunedEstimator(make_for, cand.tune, cand.tune_cv, random_state)
