"""Evaluation protocols: repeated stratified cross-validation and repeated clustering runs.

A protocol is cut into independent *units* (one algorithm on one data set for one
repeat and fold, or one clustering run), each fully determined by the user's seed,
so units can run in any order or in parallel (joblib) and give the same scores.

Seeding, so that comparisons are paired:

* cross-validation folds come from ``RepeatedStratifiedKFold(random_state=seed)``
  and are the same for every algorithm on a data set;
* the estimator seed of a unit is derived from ``(seed, repeat, fold)`` only, so
  all algorithms in a repeat share it; in clustering runs this makes ``kmeans`` and
  ``iekm`` start run *r* from the same initial centres, as in the Inner Ensembles
  paper (Abbasian et al. 2013, Sect. 3.2).

Nothing here reads files or prints; progress is reported through a callback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ensemblekit import registry

#: Metrics reported when the user does not name any, per task.
DEFAULT_METRICS = {
    registry.CLASSIFICATION: ("accuracy",),
    registry.CLUSTERING: ("nmi", "purity"),
}


class ProtocolError(ValueError):
    """The protocol cannot run on this data (e.g. no class for external indices)."""


@dataclass(frozen=True)
class Score:
    """One metric value of one unit of work (the long format of ``--output``).

    Attributes
    ----------
    dataset : str
        Data set name (file stem).
    algorithm : str
        Registry name.
    params : str
        The algorithm's resolved parameters as compact JSON with sorted keys.
    repeat : int
        Repeat (CV) or run (clustering) number, from 1.
    fold : int
        Fold number from 1; 0 for clustering runs.
    metric : str
        Metric name (see :data:`ensemblekit.metrics.METRICS`).
    value : float
        The score.
    """

    dataset: str
    algorithm: str
    params: str
    repeat: int
    fold: int
    metric: str
    value: float


@dataclass(frozen=True)
class Protocol:
    """How algorithms are evaluated.

    Parameters
    ----------
    kind : {"cv", "runs"}
        Repeated stratified k-fold cross-validation, or repeated clustering runs.
    folds : int
        k of k-fold CV (>= 2); unused for runs.
    repeats : int
        Number of CV repeats, or of clustering runs (>= 1).
    seed : int
        The user's seed; every split and estimator seed derives from it.
    n_clusters : int or None
        Clusters per run; ``None`` uses the number of classes of each data set.
    """

    kind: str
    folds: int = 10
    repeats: int = 10
    seed: int = 1
    n_clusters: int | None = None

    def __post_init__(self):
        if self.kind not in ("cv", "runs"):
            raise ProtocolError(f"protocol must be 'cv' or 'runs', got {self.kind!r}")
        if self.kind == "cv" and self.folds < 2:
            raise ProtocolError(f"--cv needs at least 2 folds, got {self.folds}")
        if self.repeats < 1:
            raise ProtocolError(f"the number of repeats/runs must be at least 1, got {self.repeats}")
        if self.n_clusters is not None and self.n_clusters < 1:
            raise ProtocolError(f"the number of clusters must be at least 1, got {self.n_clusters}")


def derive_seed(seed: int, *keys: int) -> int:
    """Derive an independent estimator seed in ``[0, 2**31)`` from the user seed.

    Parameters
    ----------
    seed : int
        The user's seed (``--seed``), >= 0.
    *keys : int
        Position of the unit (e.g. repeat and fold numbers).

    Returns
    -------
    int
        Same inputs, same output, on every platform (numpy ``SeedSequence``).
    """
    state = np.random.SeedSequence([int(seed), *map(int, keys)]).generate_state(1)[0]
    return int(state) >> 1


@dataclass(frozen=True)
class _Unit:
    data_index: int
    algorithm: str
    params_json: str
    repeat: int
    fold: int
    train: np.ndarray | None
    test: np.ndarray | None
    random_state: int


@dataclass(frozen=True)
class Plan:
    """The units of work of a protocol, and notes for the user about the data.

    Attributes
    ----------
    units : list
        Units ordered by data set, repeat, fold, algorithm.
    notes : list of str
        E.g. a class with fewer instances than folds (stratification is then partial).
    """

    units: list
    notes: list


def plan(datasets: Sequence, algorithms: Sequence[tuple[str, dict]], protocol: Protocol) -> Plan:
    """Cut a protocol into units of work, in a fixed order.

    Parameters
    ----------
    datasets : sequence of ensemblekit.data.Dataset
        Each must have a nominal class (CV, and external indices for runs).
    algorithms : sequence of (name, params)
        Registry names with resolved parameters.
    protocol : Protocol

    Returns
    -------
    Plan

    Raises
    ------
    ProtocolError
        If a data set has no nominal class, or too few labelled rows for the folds.
    """
    import warnings

    from sklearn.model_selection import RepeatedStratifiedKFold

    units: list[_Unit] = []
    notes: list[str] = []
    for d_index, ds in enumerate(datasets):
        y = _labelled_class(ds)
        labelled = np.flatnonzero(y >= 0)
        if protocol.kind == "cv":
            counts = np.bincount(y[labelled])
            if labelled.size < protocol.folds:
                raise ProtocolError(
                    f"{ds.source}: {labelled.size} labelled instances, fewer than {protocol.folds} folds"
                )
            if counts[counts > 0].max() < protocol.folds:
                raise ProtocolError(
                    f"{ds.source}: every class has fewer than {protocol.folds} instances; use fewer folds"
                )
            smallest = counts[counts > 0].min()
            if smallest < protocol.folds:
                notes.append(f"{ds.name}: the smallest class has {smallest} instance"
                             f"{'' if smallest == 1 else 's'}, fewer than {protocol.folds} folds; "
                             "some folds lack it")
            splitter = RepeatedStratifiedKFold(
                n_splits=protocol.folds, n_repeats=protocol.repeats, random_state=protocol.seed
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # reported in notes instead
                splits = list(splitter.split(np.zeros((labelled.size, 1)), y[labelled]))
            for s, (train, test) in enumerate(splits):
                repeat, fold = divmod(s, protocol.folds)
                rs = derive_seed(protocol.seed, repeat + 1, fold + 1)
                for name, params in algorithms:
                    units.append(_Unit(d_index, name, _params_json(params), repeat + 1, fold + 1,
                                       labelled[train], labelled[test], rs))
        else:
            for run in range(protocol.repeats):
                rs = derive_seed(protocol.seed, run + 1)
                for name, params in algorithms:
                    units.append(_Unit(d_index, name, _params_json(params), run + 1, 0, None, None, rs))
    return Plan(units, notes)


def _labelled_class(ds) -> np.ndarray:
    if ds.y is None or ds.schema.class_attribute is None or ds.schema.class_attribute.kind != "nominal":
        raise ProtocolError(
            f"{ds.source}: needs a nominal class attribute (use --target NAME to choose it)"
        )
    return np.asarray(ds.y, dtype=np.int64)


def _params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def run(
    datasets: Sequence,
    work: Plan,
    protocol: Protocol,
    metrics: Sequence[str],
    *,
    n_jobs: int = 1,
    on_unit_done: Callable[[], None] | None = None,
) -> list[Score]:
    """Run a protocol and return every per-unit score.

    Parameters
    ----------
    datasets : sequence of ensemblekit.data.Dataset
    work : Plan
        From :func:`plan` on the same data sets and protocol.
    protocol : Protocol
    metrics : sequence of str
        Metric names (keys of :data:`ensemblekit.metrics.METRICS`).
    n_jobs : int, default=1
        Parallel workers (joblib); results do not depend on it.
    on_unit_done : callable, optional
        Called with no argument after each unit finishes (for a progress bar).

    Returns
    -------
    list of Score
        In plan order: data set, repeat, fold, algorithm, metric.

    """
    from joblib import Parallel, delayed

    units = work.units
    jobs = (
        delayed(_run_unit)(datasets[u.data_index], u, protocol.n_clusters, tuple(metrics))
        for u in units
    )
    results = []
    for result in Parallel(n_jobs=n_jobs, return_as="generator")(jobs):
        results.append(result)
        if on_unit_done is not None:
            on_unit_done()
    scores: list[Score] = []
    for u, values in zip(units, results):
        name = datasets[u.data_index].name
        for metric, value in values:
            scores.append(Score(name, u.algorithm, u.params_json, u.repeat, u.fold, metric, value))
    return scores


def _run_unit(ds, unit: _Unit, n_clusters: int | None, metrics: tuple[str, ...]):
    try:
        return _score_unit(ds, unit, n_clusters, metrics)
    except ValueError as exc:
        where = f"repeat {unit.repeat}, fold {unit.fold}" if unit.fold else f"run {unit.repeat}"
        raise ProtocolError(f"{ds.source}: {unit.algorithm} failed ({where}): {exc}") from None


def _score_unit(ds, unit: _Unit, n_clusters: int | None, metrics: tuple[str, ...]):
    from ensemblekit.metrics import METRICS

    params = json.loads(unit.params_json)
    spec = registry.get(unit.algorithm)
    y = np.asarray(ds.y, dtype=np.int64)
    if unit.train is not None:
        model = registry.make_estimator(unit.algorithm, ds.schema, params, unit.random_state)
        model.fit(ds.X[unit.train], y[unit.train])
        truth, predicted = y[unit.test], model.predict(ds.X[unit.test])
    else:
        if "n_clusters" in spec.param_names:
            params["n_clusters"] = n_clusters or len(np.unique(y[y >= 0]))
        model = registry.make_estimator(unit.algorithm, ds.schema, params, unit.random_state)
        labels = model.fit_predict(ds.X)
        keep = y >= 0
        truth, predicted = y[keep], np.asarray(labels)[keep]
    return [(m, float(METRICS[m].func(truth, predicted))) for m in metrics]


def summarize(scores: Sequence[Score]) -> dict[tuple[str, str, str], tuple[float, float, int]]:
    """Mean, standard deviation (ddof=1; 0 for one value) and count per cell.

    Parameters
    ----------
    scores : sequence of Score

    Returns
    -------
    dict
        ``{(dataset, algorithm, metric): (mean, sd, n)}``; for CV the values are
        the r*k per-fold scores, for clustering the r per-run scores.
    """
    cells: dict[tuple[str, str, str], list[float]] = {}
    for s in scores:
        cells.setdefault((s.dataset, s.algorithm, s.metric), []).append(s.value)
    out = {}
    for key, values in cells.items():
        arr = np.asarray(values, dtype=float)
        sd = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
        out[key] = (float(arr.mean()), sd, int(arr.size))
    return out
