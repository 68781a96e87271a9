"""Evaluation protocols: repeated stratified cross-validation and repeated clustering runs.

A protocol is cut into independent *units* (one algorithm on one data set for one
repeat and fold, or one clustering run), each fully determined by the user's seed,
so units can run in any order or in parallel (joblib) and give the same scores.

Seeding, so that comparisons are paired:

* cross-validation folds come from ``RepeatedStratifiedKFold(random_state=seed)``
  for classifiers (nominal class) and from ``RepeatedKFold(random_state=seed)``
  for regression algorithms (numeric class), over the rows whose class is
  known, and are the same for every algorithm on a data set;
* the estimator seed of a unit is derived from ``(seed, repeat, fold)`` only, so
  all algorithms in a repeat share it; in clustering runs this makes ``kmeans`` and
  ``iekm`` start run *r* from the same initial centres, as in the Inner Ensembles
  paper (Abbasian et al. 2013, Sect. 3.2).

Nothing here reads files or prints; progress is reported through a callback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ensemblekit import registry, safejson

#: Metrics reported when the user does not name any, per task.
DEFAULT_METRICS = {
    registry.CLASSIFICATION: ("accuracy",),
    registry.CLUSTERING: ("nmi", "purity"),
    registry.REGRESSION: ("correlation", "rmse"),
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
        Display label: the registry name, with the grid parameters in brackets
        for a grid point (``iekm[max_features=0.3]``).
    params : str
        The algorithm's resolved parameters as compact JSON with sorted keys.
    repeat : int
        Repeat (CV) or run (clustering) number, from 1.
    fold : int
        Fold number from 1; 0 for clustering runs.
    metric : str
        Metric name (see :data:`ensemblekit.metrics.METRICS`); NaN value when
        the unit failed.
    value : float
        The score.
    seconds : float
        Wall time of the unit (fit and score), the only field that differs
        between two runs with the same seed.
    """

    dataset: str
    algorithm: str
    params: str
    repeat: int
    fold: int
    metric: str
    value: float
    seconds: float = 0.0


@dataclass(frozen=True)
class Failure:
    """A unit that raised: where, the error in one line, and whether it was a ValueError
    (bad data or parameters for the estimator) rather than an unexpected failure."""

    dataset: str
    algorithm: str
    params: str
    repeat: int
    fold: int
    error: str
    bad_input: bool = False


@dataclass(frozen=True)
class Candidate:
    """An algorithm with fixed parameters: one column of a comparison.

    Attributes
    ----------
    algorithm : str
        Registry name.
    params : dict
        Resolved parameters.
    label : str
        Column name: the registry name, or ``name[k=v,...]`` for a grid point.
    grid : dict
        The grid parameters of this point (empty outside a grid).
    """

    algorithm: str
    params: dict
    label: str
    grid: dict = field(default_factory=dict)

    @property
    def params_json(self) -> str:
        """Parameters as compact JSON with sorted keys (stable across runs)."""
        return _params_json(self.params)


@dataclass(frozen=True)
class Protocol:
    """How algorithms are evaluated.

    Parameters
    ----------
    kind : {"cv", "runs"}
        Repeated k-fold cross-validation (stratified by class for classifiers,
        plain for regression algorithms), or repeated clustering runs.
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


def parse_grid(text: str) -> tuple[str, list[str]]:
    """Parse one ``--grid`` item: ``key=start:stop:step`` or ``key=v1,v2,...``.

    A range includes both ends when ``stop`` lies on the step (floating-point
    steps are rounded to 10 decimals, so ``0.1:0.9:0.1`` gives nine values).

    Returns
    -------
    (key, values)
        Values as text, for the parameter's own parser.

    Raises
    ------
    ProtocolError
        On a malformed item, a non-positive step, ``stop < start``, or more
        than 1000 values.
    """
    key, sep, body = text.partition("=")
    key = key.strip()
    if not sep or not key or not body.strip():
        raise ProtocolError(f"--grid expects key=start:stop:step or key=v1,v2,..., got {text!r}")
    if ":" in body:
        parts = body.split(":")
        if len(parts) != 3:
            raise ProtocolError(f"--grid {text!r}: a range is start:stop:step")
        try:
            start, stop, step = (float(p) for p in parts)
        except ValueError:
            raise ProtocolError(f"--grid {text!r}: start, stop and step must be numbers") from None
        if not step > 0 or stop < start:
            raise ProtocolError(f"--grid {text!r}: needs step > 0 and stop >= start")
        count = int(np.floor((stop - start) / step + 1e-9)) + 1
        if count > 1000:
            raise ProtocolError(f"--grid {text!r}: {count} values; at most 1000")
        integral = all(float(p).is_integer() for p in parts)
        values = [start + i * step for i in range(count)]
        return key, [str(int(round(v))) if integral else repr(round(v, 10)) for v in values]
    values = [v.strip() for v in body.split(",") if v.strip()]
    if not values:
        raise ProtocolError(f"--grid {text!r}: no values")
    if len(set(values)) != len(values):
        raise ProtocolError(f"--grid {text!r}: a value is given twice")
    return key, values


def expand_grid(algorithm: str, params: dict, grid: dict[str, list]) -> list[Candidate]:
    """One candidate per point of the Cartesian product of the grid values.

    Parameters
    ----------
    algorithm : str
        Registry name.
    params : dict
        Resolved parameters; grid keys override them point by point.
    grid : dict
        ``{key: [parsed values]}`` in the order given; the first key varies slowest.

    Returns
    -------
    list of Candidate
        A single candidate labelled ``algorithm`` when ``grid`` is empty.
    """
    import itertools

    if not grid:
        return [Candidate(algorithm, dict(params), algorithm)]
    keys = list(grid)
    out = []
    for combo in itertools.product(*(grid[k] for k in keys)):
        point = dict(zip(keys, combo))
        label = algorithm + "[" + ",".join(f"{k}={_plain(v)}" for k, v in point.items()) + "]"
        out.append(Candidate(algorithm, {**params, **point}, label, point))
    return out


def _plain(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(round(v, 10))
    return str(v)


def subsample(ds, max_instances: int, seed: int):
    """At most ``max_instances`` rows drawn without replacement (Abbasian et al. 2013, Sect. 3.2).

    The draw depends only on the seed and the data set's name, so every
    algorithm and every run sees the same rows, and adding a data set to a
    comparison does not change the others. Rows keep their file order.

    Parameters
    ----------
    ds : ensemblekit.data.Dataset
    max_instances : int
        >= 1.
    seed : int

    Returns
    -------
    ensemblekit.data.Dataset
        ``ds`` itself when it is small enough.
    """
    import zlib

    if max_instances < 1:
        raise ProtocolError(f"--max-instances must be at least 1, got {max_instances}")
    if ds.n_instances <= max_instances:
        return ds
    rng = np.random.RandomState(derive_seed(seed, zlib.crc32(ds.name.encode("utf-8"))))
    rows = np.sort(rng.choice(ds.n_instances, size=max_instances, replace=False))
    y = None if ds.y is None else ds.y[rows]
    return replace(ds, X=ds.X[rows], y=y, lines=ds.lines[rows])


@dataclass(frozen=True)
class _Unit:
    data_index: int
    candidate: int
    repeat: int
    fold: int
    test: np.ndarray | None  # int32 rows of the test fold (ascending); the rest of the labelled rows train
    random_state: int
    data_size: int = 0  # instances x features, to order the work


@dataclass(frozen=True)
class Plan:
    """The units of work of a protocol, and notes for the user about the data.

    Attributes
    ----------
    units : list
        Units ordered by data set, repeat, fold, candidate.
    candidates : list of Candidate
    notes : list of str
        E.g. a class with fewer instances than folds (stratification is then partial).
    """

    units: list
    candidates: list
    notes: list


def plan(datasets: Sequence, candidates: Sequence[Candidate], protocol: Protocol) -> Plan:
    """Cut a protocol into units of work, in a fixed order.

    Parameters
    ----------
    datasets : sequence of ensemblekit.data.Dataset
        Each must have a nominal class for classifiers (CV) and clusterers
        (external indices, number of clusters), a numeric class for
        regression algorithms.
    candidates : sequence of Candidate
        Algorithms with fixed parameters (see :func:`expand_grid`), all of
        one task.
    protocol : Protocol

    Returns
    -------
    Plan
        For classifiers, repeated stratified k-fold over the rows with a known
        class; for regression algorithms, repeated plain k-fold
        (``RepeatedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)``)
        over the rows whose target is not missing. Either way every candidate
        gets the same folds and estimator seeds.

    Raises
    ------
    ProtocolError
        If the candidates are of different tasks; if a data set's class does not
        fit their task (no class, a numeric class for classifiers or clusterers,
        a nominal class for regression algorithms); if regression algorithms
        are given clustering runs; or too few labelled rows for the folds.
    """
    import warnings

    from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

    task = _task_of(candidates)
    if task == registry.REGRESSION and protocol.kind != "cv":
        raise ProtocolError("regression algorithms are evaluated by cross-validation, not by "
                            "clustering runs")
    units: list[_Unit] = []
    notes: list[str] = []
    for d_index, ds in enumerate(datasets):
        size = int(ds.X.shape[0]) * max(1, int(ds.X.shape[1]))
        if task == registry.REGRESSION:
            target = _numeric_target(ds)
            labelled = np.flatnonzero(~np.isnan(target))
            if labelled.size < protocol.folds:
                raise ProtocolError(
                    f"{ds.source}: {labelled.size} instances with a known target, fewer than "
                    f"{protocol.folds} folds"
                )
            splitter = RepeatedKFold(n_splits=protocol.folds, n_repeats=protocol.repeats,
                                     random_state=protocol.seed)
            splits = splitter.split(np.zeros((labelled.size, 1)))
            units += _cv_units(d_index, splits, labelled, protocol, len(candidates), size)
            continue
        y = _labelled_class(ds)
        labelled = np.flatnonzero(y >= 0)
        if protocol.kind == "cv":
            counts = np.bincount(y[labelled]) if labelled.size else np.zeros(1, dtype=int)
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
            units += _cv_units(d_index, splits, labelled, protocol, len(candidates), size)
        else:
            for run in range(protocol.repeats):
                rs = derive_seed(protocol.seed, run + 1)
                for c in range(len(candidates)):
                    units.append(_Unit(d_index, c, run + 1, 0, None, rs, size))
    return Plan(units, list(candidates), notes)


def _task_of(candidates: Sequence[Candidate]) -> str | None:
    """The one task of the candidates (None when there are none)."""
    tasks = {registry.get(c.algorithm).task for c in candidates}
    if len(tasks) > 1:
        raise ProtocolError("candidates of different tasks cannot share a protocol: "
                            + ", ".join(sorted(tasks)))
    return tasks.pop() if tasks else None


def _cv_units(d_index, splits, labelled, protocol, n_candidates, size) -> list:
    """One unit per (split, candidate): the test rows of each fold (file rows, ascending) and
    the fold's seed, shared by every candidate (paired comparison)."""
    units = []
    for s, (_, test) in enumerate(splits):
        repeat, fold = divmod(s, protocol.folds)
        rs = derive_seed(protocol.seed, repeat + 1, fold + 1)
        test_rows = labelled[test].astype(np.int32)
        units += [_Unit(d_index, c, repeat + 1, fold + 1, test_rows, rs, size)
                  for c in range(n_candidates)]
    return units


def _labelled_class(ds) -> np.ndarray:
    ca = ds.schema.class_attribute
    if ds.y is not None and ca is not None and ca.kind == "numeric":
        raise ProtocolError(
            f"{ds.source}: the class '{ca.name}' is numeric, but classifiers and clusterers need a "
            "nominal class (use --target NAME to choose it, or a regression algorithm)"
        )
    if ds.y is None or ca is None or ca.kind != "nominal":
        raise ProtocolError(
            f"{ds.source}: needs a nominal class attribute (use --target NAME to choose it)"
        )
    return np.asarray(ds.y, dtype=np.int64)


def _numeric_target(ds) -> np.ndarray:
    """The numeric class of a data set for regression (float64, NaN = missing)."""
    ca = ds.schema.class_attribute
    if ds.y is None or ca is None:
        raise ProtocolError(f"{ds.source}: regression algorithms need a numeric class attribute "
                            "(use --target NAME to choose it)")
    if ca.kind != "numeric":
        raise ProtocolError(f"{ds.source}: the class '{ca.name}' is nominal, but regression "
                            "algorithms need a numeric class (use --target NAME to choose it)")
    return np.asarray(ds.y, dtype=np.float64)


def _n_labelled(ds) -> int:
    """Rows with a known class: code >= 0 (nominal) or not NaN (numeric)."""
    ca = ds.schema.class_attribute
    if ca is not None and ca.kind == "numeric":
        return int((~np.isnan(np.asarray(ds.y, dtype=np.float64))).sum())
    return int((np.asarray(ds.y) >= 0).sum())


def _params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class RunResult:
    """Everything a protocol produced.

    Attributes
    ----------
    scores : list of Score
        In plan order (data set, repeat, fold, candidate, metric); failed units
        are absent.
    failures : list of Failure
        Units that raised, in plan order.
    computed : int
        Units computed by this call (the others came from the resume journal).
    """

    scores: list
    failures: list
    computed: int


def _unit_key(ds_name: str, cand: Candidate, unit: _Unit) -> tuple:
    return (ds_name, cand.algorithm, cand.params_json, unit.repeat, unit.fold)


def run(
    datasets: Sequence,
    work: Plan,
    protocol: Protocol,
    metrics: Sequence[str],
    *,
    n_jobs: int = 1,
    scheduler: str | None = None,
    resume: str | os.PathLike | None = None,
    on_unit_done: Callable[[], None] | None = None,
) -> RunResult:
    """Run a protocol; record every unit's scores, or its error.

    Parameters
    ----------
    datasets : sequence of ensemblekit.data.Dataset
    work : Plan
        From :func:`plan` on the same data sets and protocol.
    protocol : Protocol
    metrics : sequence of str
        Metric names (keys of :data:`ensemblekit.metrics.METRICS`).
    n_jobs : int, default=1
        Worker processes (joblib's loky backend), with joblib's meaning of
        negative values: -1 all cores, -2 all but one, ... (see
        :func:`worker_count` for the range). Results do not depend on it. The
        workers end when this process ends, even when it is killed (see
        :mod:`ensemblekit._workers`). Ignored with ``scheduler``.
    scheduler : str, optional
        Address of a Dask distributed scheduler (``tcp://host:8786``); the units
        then run on its workers through joblib's dask backend (needs the
        ``distributed`` package). Results are identical to a serial run.
    resume : path, optional
        JSON-lines journal: finished units found there are not computed again;
        each unit computed now is appended and flushed as soon as it finishes
        (in a parallel run, as soon as its task returns: units whose measured
        cost is small share a task of about half a second of work), so a killed
        run loses at most the work under way. Failed units are tried again.
    on_unit_done : callable, optional
        Called with no argument after each unit finishes (for a progress bar).

    Returns
    -------
    RunResult

    Raises
    ------
    ProtocolError
        If the journal belongs to another comparison, or the scheduler cannot be
        reached.
    ValueError
        If ``n_jobs`` is out of range (see :func:`worker_count`), before any work.
    """
    local_workers = worker_count(n_jobs) if scheduler is None else None
    units = work.units
    names = [ds.name for ds in datasets]
    keys = [_unit_key(names[u.data_index], work.candidates[u.candidate], u) for u in units]
    outcomes: dict[tuple, dict] = {}
    journal = None
    if resume is not None:
        fingerprint = _run_fingerprint(datasets, work, protocol, metrics)
        journal = _Journal(Path(resume), fingerprint, set(keys), metrics)
        outcomes.update({k: v for k, v in journal.done().items() if v.get("error") is None})
    todo = [i for i, k in enumerate(keys) if k not in outcomes]
    for _ in range(len(units) - len(todo)):
        if on_unit_done is not None:
            on_unit_done()
    try:
        with _backend(scheduler) as (n_workers, options):
            _execute(datasets, work, protocol, metrics, todo, keys, outcomes, journal,
                     local_workers if n_workers is None else n_workers, on_unit_done, options)
    finally:
        if journal is not None:
            journal.close()
    scores: list[Score] = []
    failures: list[Failure] = []
    for u, key in zip(units, keys):
        cand = work.candidates[u.candidate]
        outcome = outcomes[key]
        if outcome.get("error") is not None:
            failures.append(Failure(key[0], cand.label, cand.params_json, u.repeat, u.fold,
                                    outcome["error"], bool(outcome.get("bad_input"))))
            continue
        for metric in metrics:
            scores.append(Score(key[0], cand.label, cand.params_json, u.repeat, u.fold, metric,
                                float(outcome["scores"][metric]), float(outcome["seconds"])))
    return RunResult(scores, failures, len(todo))


def _batches(todo: list[int], units: list, n_workers: int) -> list[list[int]]:
    """Group units into tasks: consecutive units of one data set, about 8 tasks per worker.

    Shipping a data set to a worker costs about as much as a small unit, so a
    parallel run sends each data set once per batch rather than once per unit.
    A serial run keeps one unit per task (finest resume granularity).
    """
    if n_workers == 1:
        return [[i] for i in todo]
    size = max(1, -(-len(todo) // (8 * n_workers)))
    batches: list[list[int]] = []
    for i in todo:
        last = batches[-1] if batches else None
        if last and len(last) < size and units[last[0]].data_index == units[i].data_index:
            last.append(i)
        else:
            batches.append([i])
    # largest data sets first (stable), so no worker is left with a long batch at the end
    return sorted(batches, key=lambda b: -units[b[0]].data_size)


def _execute(datasets, work, protocol, metrics, todo, keys, outcomes, journal, workers, on_unit_done,
             options):
    """Run the units ``todo`` on ``workers`` workers; a unit lost with a dead worker is tried
    once more on its own.

    ``options`` are keyword arguments of ``joblib.Parallel`` for the backend (see :func:`_backend`).
    """
    metrics = tuple(metrics)
    costs = None
    if journal is None:
        batches = _batches(todo, work.units, workers)
    elif workers == 1:
        batches = [[i] for i in todo]  # in this process: each unit is recorded as it finishes
    else:
        # workers return whole tasks: cheap units share one (see _timed_batches), so that
        # the journal still gets every unit within about a second of its finishing
        costs = _UnitCosts()
        batches = _timed_batches(todo, work.units, costs, _JOURNAL_TASK_SECONDS)
    lost = _dispatch(datasets, work, protocol, metrics, batches, todo, keys, outcomes, journal,
                     workers, on_unit_done, costs, options)
    if lost:
        # a worker died (killed, out of memory, crashed): give every unfinished unit a
        # second chance alone, so one bad unit cannot take its neighbours down with it
        retry = sorted(lost)
        lost = _dispatch(datasets, work, protocol, metrics, [[i] for i in retry], retry, keys,
                         outcomes, journal, workers, on_unit_done, None, options)
    for i, reason in lost.items():
        outcomes[keys[i]] = {"scores": {}, "seconds": 0.0, "error": f"{_where(work, datasets, i)}: {reason}"}
        if on_unit_done is not None:
            on_unit_done()


#: The most worker processes ``n_jobs`` may ask for, per core. Units are
#: CPU-bound and run on one core each (see :func:`_one_core`), so workers beyond
#: the core count only share cores; a few times the count still allows
#: deliberate oversubscription (a script written for a larger machine, a
#: container whose CPU quota hides idle cores), while each worker holds about
#: 140 MB of imported scikit-learn, so a four- or five-digit count would start
#: processes until memory or the process limit ran out.
MAX_WORKERS_PER_CORE = 4


def worker_count(n_jobs: int, name: str = "n_jobs") -> int:
    """The number of worker processes ``n_jobs`` stands for, with joblib's meaning.

    A positive value is that many workers; a negative one counts back from the
    number of cores *C*: -1 is all *C*, -2 all but one, ..., -*C* one worker
    (joblib's ``cpu_count() + 1 + n_jobs``). Cores are counted as joblib
    counts them (:func:`joblib.cpu_count`: the CPUs this process may run on,
    within a container's CPU quota).

    Parameters
    ----------
    n_jobs : int
        From 1 to ``MAX_WORKERS_PER_CORE * C``, or from -1 to -*C*.
    name : str, default="n_jobs"
        How the error message names the value (the command line passes
        ``"--n-jobs"``).

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    ValueError
        If ``n_jobs`` is not an integer, is 0, is below -*C* (no worker would
        be left) or above ``MAX_WORKERS_PER_CORE * C``; the message states the
        valid range on this machine.
    """
    import numbers

    from joblib import cpu_count

    cores = max(1, cpu_count())
    most = MAX_WORKERS_PER_CORE * cores
    if isinstance(n_jobs, numbers.Integral) and not isinstance(n_jobs, bool):
        workers = cores + 1 + int(n_jobs) if n_jobs < 0 else int(n_jobs)
        if 1 <= workers <= most:
            return workers
    back = "-1 (all cores)" if cores == 1 else f"-1 to -{cores} (-1 = all cores, -2 = all but one, ...)"
    raise ValueError(f"{name} must be 1 to {most} workers (at most {MAX_WORKERS_PER_CORE} per core, "
                     f"{cores} {'core' if cores == 1 else 'cores'} here) or {back}, got {n_jobs!r}")


#: Expected seconds of work per task of a journaled parallel run: units of one data set
#: and candidate whose measured cost is small share a task, so dispatching tiny units
#: costs little, and a killed run loses at most about this much work per task under way.
_JOURNAL_TASK_SECONDS = 0.5


class _UnitCosts:
    """Mean seconds per unit of each (data set, candidate), learnt from finished units."""

    def __init__(self):
        self._sums: dict[tuple[int, int], list[float]] = {}

    def add(self, unit, seconds: float) -> None:
        entry = self._sums.setdefault((unit.data_index, unit.candidate), [0.0, 0])
        entry[0] += seconds
        entry[1] += 1

    def estimate(self, unit) -> float:
        """Mean seconds so far; infinity while no unit of the pair has finished."""
        entry = self._sums.get((unit.data_index, unit.candidate))
        return entry[0] / entry[1] if entry else float("inf")


def _timed_batches(todo: list[int], units: list, costs: _UnitCosts, budget: float):
    """Yield tasks lazily: consecutive units of one data set whose estimated seconds add up
    to at most ``budget``; a unit of unknown or large cost goes alone.

    The estimates are read when each task is formed, so they improve as the run goes.
    """
    batch: list[int] = []
    spent = 0.0
    for i in todo:
        cost = costs.estimate(units[i])
        if batch and (units[batch[0]].data_index != units[i].data_index or spent + cost > budget):
            yield batch
            batch, spent = [], 0.0
        batch.append(i)
        spent += cost
        if spent >= budget:
            yield batch
            batch, spent = [], 0.0
    if batch:
        yield batch


def _where(work, datasets, i) -> str:
    u = work.units[i]
    place = f"repeat {u.repeat}, fold {u.fold}" if u.fold else f"run {u.repeat}"
    return f"{work.candidates[u.candidate].label} on {datasets[u.data_index].name} ({place})"


def _dispatch(datasets, work, protocol, metrics, batches, todo, keys, outcomes, journal,
              workers, on_unit_done, costs, options) -> dict[int, str]:
    """Run batches (a list or a lazy iterable) through joblib; return ``{unit: reason}`` for
    units lost with a worker. ``costs`` (optional) learns each finished unit's seconds;
    ``options`` are more keyword arguments of ``joblib.Parallel`` (see :func:`_backend`)."""
    from joblib import Parallel, delayed

    # A task is one tuple that carries its data set. joblib's dask backend would
    # otherwise scatter the data set to a single worker (or broadcast it, which Dask's
    # Active Memory Manager undoes within seconds), tie every task of that data set
    # to that worker, and leave the others idle until work stealing moves tasks over.
    # Data sent with each task costs little: a task holds many units (see _batches).
    jobs = (
        delayed(_run_batch)((batch, datasets[work.units[batch[0]].data_index],
                             [work.candidates[work.units[i].candidate] for i in batch],
                             [work.units[i] for i in batch]), protocol.n_clusters, metrics)
        for batch in batches
    )
    pending = set(todo)
    # units are already grouped in batches: joblib passes them on one by one and keeps
    # ``pre_dispatch`` of them under way (see _backend), so a worker that finishes gets
    # the next one (balanced by cost, not by count)
    parallel = Parallel(n_jobs=workers, return_as="generator_unordered", batch_size=1, **options)
    with _one_core() if workers == 1 else contextlib.nullcontext():  # serial: pin once
        iterator = iter(parallel(jobs))
        while True:
            try:
                results = next(iterator)
            except StopIteration:
                break
            except Exception as exc:  # noqa: BLE001 - a worker died; its units are retried
                reason = f"worker lost: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                return {i: reason for i in sorted(pending)}
            for i, outcome in results:
                outcomes[keys[i]] = outcome
                pending.discard(i)
                if costs is not None:
                    costs.add(work.units[i], float(outcome.get("seconds", 0.0)))
                if journal is not None:
                    journal.append(keys[i], outcome)
                if on_unit_done is not None:
                    on_unit_done()
    return {}


def _run_batch(task, n_clusters, metrics):
    indices, ds, cands, units = task
    # A unit runs on one core, whatever runs it: BLAS/OpenMP reductions then
    # add up in the same order in a serial run, a joblib worker or a Dask
    # worker (so results are identical bit for bit), parallelism comes from
    # running units side by side, and scikit-learn's own joblib calls stay in
    # this process (under the dask backend they would otherwise be sent back
    # to the cluster as tiny tasks, several times slower).
    with _one_core():
        return [_run_unit(i, ds, c, u, n_clusters, metrics) for i, c, u in zip(indices, cands, units)]


_PINNED = threading.local()


@contextlib.contextmanager
def _one_core():
    """Limit BLAS/OpenMP to one thread and joblib to sequential, once per thread (re-entrant).

    threadpoolctl limits only the thread pools of libraries already loaded, so
    scikit-learn's OpenMP runtime is loaded first (its extension modules load
    it lazily, e.g. on the first import of ``sklearn.neighbors``); otherwise
    the units that import it would still run on every core.
    """
    import sklearn.utils._openmp_helpers  # noqa: F401 - loads scikit-learn's OpenMP runtime
    from joblib import parallel_config
    from threadpoolctl import threadpool_limits

    if getattr(_PINNED, "active", False):
        yield
        return
    _PINNED.active = True
    try:
        with threadpool_limits(limits=1), parallel_config(backend="sequential"):
            yield
    finally:
        _PINNED.active = False


def _warm_worker() -> None:
    """Import what units need, so a worker's first unit does not pay for it.

    A worker process runs only units, which never read scipy's docstrings, so
    it imports scipy as the command line does (see
    :func:`ensemblekit._imports.plain_scipy_docstrings`): about 0.2 s sooner.
    """
    import importlib

    from ensemblekit._imports import plain_scipy_docstrings

    plain_scipy_docstrings()
    for spec in registry.ALGORITHMS.values():
        importlib.import_module(spec.estimator.split(":")[0])
    for module in ("sklearn.pipeline", "sklearn.compose", "sklearn.impute", "sklearn.preprocessing",
                   "ensemblekit.preprocessing", "ensemblekit.metrics", "threadpoolctl"):
        importlib.import_module(module)


def prestart(n_jobs: int = 1, scheduler: str | None = None, wait: float = 2.0):
    """Start the workers and their imports in the background (returns a joinable thread or None).

    Called before the data sets are read, so that the worker processes start
    and import scikit-learn while the main process parses files. It returns
    once joblib has dispatched the warm-up, or once the Dask client is
    connected and about to send it (or after ``wait`` seconds): importing
    joblib or distributed and connecting to the scheduler hold the
    interpreter lock, so doing them while the main thread parses files would
    delay both, and the workers would start their imports later. Failures are
    ignored here: :func:`run` reports them.

    Parameters
    ----------
    n_jobs : int, default=1
        joblib workers, as in :func:`run`; one worker (and no scheduler) starts
        nothing.
    scheduler : str, optional
        Address of a Dask distributed scheduler.
    wait : float, default=2.0
        At most this many seconds to wait for the hand-over (connecting to a
        reachable scheduler takes well under one here); past it, reading the
        data goes ahead.

    Returns
    -------
    threading.Thread or None
        The warm-up, None when there is nothing to start. Join it before
        :func:`run`: if the scheduler could not be reached, ``run`` then
        reports that failure at once instead of trying to connect again.

    Raises
    ------
    ValueError
        If ``n_jobs`` is out of range (see :func:`worker_count`) and no
        scheduler is given.
    """
    workers = worker_count(n_jobs) if scheduler is None else None
    if workers == 1:
        return None
    _UNREACHABLE.pop(scheduler, None)  # a failure from an earlier prestart is stale now
    handed_over = threading.Event()

    def warm():
        try:
            if scheduler is not None:
                try:
                    client = _dask_client(scheduler)
                except (OSError, TimeoutError) as exc:
                    _UNREACHABLE[scheduler] = exc  # run() reports it rather than trying again
                    return
                handed_over.set()  # the request is small: it leaves while the files are read
                client.run(_warm_worker)
            else:
                from joblib import Parallel, delayed

                from ensemblekit._workers import parallel_options

                # a generator: the call dispatches the tasks and returns; the same
                # options as run() passes, so that run() reuses these workers
                replies = Parallel(n_jobs=workers, return_as="generator", **parallel_options())(
                    delayed(_warm_worker)() for _ in range(workers))
                handed_over.set()
                for _ in replies:
                    pass
        except Exception:  # noqa: BLE001 - only an optimisation
            pass
        finally:
            handed_over.set()

    thread = threading.Thread(target=warm, name="ensemblekit-prestart", daemon=True)
    thread.start()
    handed_over.wait(wait)
    return thread


@contextlib.contextmanager
def _backend(scheduler: str | None):
    """joblib's default backend, or the dask backend on a distributed cluster.

    Yields ``(workers, options)``: the cluster's thread count (None for the
    default backend, which takes ``n_jobs``) and keyword arguments for
    ``joblib.Parallel``. ``pre_dispatch`` is how many tasks joblib keeps under
    way: loky workers share one queue, where a second task per worker waits
    for whichever worker is free first; the Dask scheduler assigns a task to a
    worker at once, so a second one could wait behind a long task while
    another worker idles at the end of a run: one per worker there. Local
    workers also get :func:`ensemblekit._workers.parallel_options`, so that
    they end with this process; a cluster's workers are the user's and are
    left alone.
    """
    if scheduler is None:
        from ensemblekit._workers import parallel_options

        yield None, {"pre_dispatch": "2*n_jobs", **parallel_options()}
        return
    try:
        import distributed  # noqa: F401  (the dask backend of joblib needs it)
    except ImportError:
        raise ProtocolError("--scheduler needs the distributed package: "
                            "pip install 'ensemblekit[distributed]'") from None
    from joblib import parallel_config

    try:
        failed = _UNREACHABLE.pop(scheduler, None)
        if failed is not None:
            raise failed
        client = _dask_client(scheduler)
    except (OSError, TimeoutError) as exc:
        raise ProtocolError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        workers = max(1, sum(client.nthreads().values()))
        with parallel_config(backend="dask"):
            yield workers, {"pre_dispatch": "n_jobs"}
    finally:
        _CLIENTS.pop(scheduler, None)
        client.close()


_CLIENTS: dict = {}

#: A connection that :func:`prestart` could not make, by address: the :func:`run` that
#: follows reports it at once instead of waiting out a second connection timeout.
_UNREACHABLE: dict = {}


_CLIENT_LOCK = threading.Lock()


def _dask_client(address: str):
    """One client per scheduler address in this process (shared by :func:`prestart` and :func:`run`)."""
    from distributed import Client

    with _CLIENT_LOCK:
        client = _CLIENTS.get(address)
        if client is None or client.status in ("closing", "closed"):
            client = Client(address, timeout="10s")
            _CLIENTS[address] = client
        return client



def _run_unit(index: int, ds, cand: Candidate, unit: _Unit, n_clusters: int | None,
              metrics: tuple[str, ...]):
    start = time.perf_counter()
    try:
        values = _score_unit(ds, cand, unit, n_clusters, metrics)
    except Exception as exc:  # recorded per unit; the rest of the run goes on
        where = f"repeat {unit.repeat}, fold {unit.fold}" if unit.fold else f"run {unit.repeat}"
        text = " ".join(str(exc).split())
        return index, {"scores": {}, "seconds": time.perf_counter() - start,
                       "error": f"{cand.label} failed on {ds.name} ({where}): {type(exc).__name__}: {text}",
                       "bad_input": isinstance(exc, ValueError)}
    return index, {"scores": values, "seconds": time.perf_counter() - start, "error": None}


def _score_unit(ds, cand: Candidate, unit: _Unit, n_clusters: int | None, metrics: tuple[str, ...]):
    from ensemblekit.metrics import METRICS

    params = dict(cand.params)
    spec = registry.get(cand.algorithm)
    regression = spec.task == registry.REGRESSION
    # regression: float targets, NaN = missing; otherwise class codes, -1 = missing
    y = np.asarray(ds.y, dtype=np.float64 if regression else np.int64)
    if unit.test is not None:
        test = unit.test.astype(np.intp)
        in_test = np.zeros(y.shape[0], dtype=bool)
        in_test[test] = True
        known = ~np.isnan(y) if regression else y >= 0
        train = np.flatnonzero(known & ~in_test)  # ascending, as the splitter gives it
        model = registry.make_estimator(cand.algorithm, ds.schema, params, unit.random_state)
        model.fit(ds.X[train], y[train])
        truth, predicted = y[test], model.predict(ds.X[test])
    else:
        if "n_clusters" in spec.param_names:
            params["n_clusters"] = n_clusters or len(np.unique(y[y >= 0]))
        model = registry.make_estimator(cand.algorithm, ds.schema, params, unit.random_state)
        labels = np.asarray(model.fit_predict(ds.X))
        keep = y >= 0
        truth, predicted = y[keep], labels[keep]
        if any(METRICS[m].internal for m in metrics):
            # internal indices judge all rows (the class is not needed), in the space
            # the estimator clustered: the pipeline's preprocessing (one-hot,
            # imputation) applied, the estimator's own scaling not
            space = np.asarray(model[:-1].transform(ds.X), dtype=np.float64)
            return {m: (METRICS[m].score(labels, X=space) if METRICS[m].internal
                        else float(METRICS[m].func(truth, predicted))) for m in metrics}
    return {m: float(METRICS[m].func(truth, predicted)) for m in metrics}


def _run_fingerprint(datasets, work: Plan, protocol: Protocol, metrics) -> str:
    """Hash of everything that decides the units' results (not n_jobs or the scheduler)."""
    h = hashlib.sha256()
    from ensemblekit import __version__

    head = {
        "ensemblekit": __version__,
        "protocol": [protocol.kind, protocol.folds, protocol.repeats, protocol.seed, protocol.n_clusters],
        "metrics": list(metrics),
        "candidates": [[c.algorithm, c.params_json] for c in work.candidates],
        "datasets": [ds.name for ds in datasets],
        # the task picks the folds (stratified or plain k-fold); the class's kind how y is read
        "task": _task_of(work.candidates),
        "classes": [None if ds.schema.class_attribute is None else
                    [ds.schema.class_attribute.name, ds.schema.class_attribute.kind] for ds in datasets],
    }
    h.update(json.dumps(head, sort_keys=True).encode())
    for ds in datasets:
        h.update(np.ascontiguousarray(ds.X).tobytes())
        if ds.y is not None:
            h.update(np.ascontiguousarray(ds.y).tobytes())
    return "sha256:" + h.hexdigest()


class _Journal:
    """Append-only JSON-lines record of finished units (``--resume``).

    The first line names the comparison (a fingerprint of data, candidates,
    protocol and metrics); each further line is one finished unit. A line cut
    short by a killed process is dropped when the journal is opened again.

    The file is read line by line with a bound: a line longer than
    :attr:`MAX_LINE` bytes, or with JSON nested deeper than :attr:`MAX_DEPTH`
    levels (measured before parsing, :mod:`ensemblekit.safejson`), is refused
    with a :class:`ProtocolError` naming the file and the line. Memory stays
    bounded by the comparison's units, whatever the file holds.
    """

    VERSION = 1
    #: Longest line read back, newline included (4 MiB). The records written here
    #: take a few hundred bytes; a longer line was not written by ensemblekit.
    MAX_LINE = 4 * 2**20
    #: Deepest JSON nesting read back; a record is 2 levels deep (its scores).
    MAX_DEPTH = 8

    def __init__(self, path: Path, fingerprint: str, keys: set, metrics: Sequence[str]):
        self.path = path
        self.fingerprint = fingerprint
        self._done: dict[tuple, dict] = {}
        try:
            with open(path, "rb") as reader:
                complete, total = self._read(reader, fingerprint, keys, metrics)
        except FileNotFoundError:
            complete = total = 0
        except OSError as exc:
            raise ProtocolError(f"cannot read --resume file {path}: {exc.strerror}") from None
        if complete == 0:  # new, empty, or only a header cut short: start afresh
            try:
                self._fh = open(path, "w", encoding="utf-8")
            except OSError as exc:
                raise ProtocolError(f"cannot write --resume file {path}: {exc.strerror}") from None
            self._write({"ensemblekit_journal": self.VERSION, "run": fingerprint})
            return
        if complete != total:  # drop a half-written last line
            with open(path, "r+b") as fh:
                fh.truncate(complete)
        self._fh = open(path, "a", encoding="utf-8")

    def _read(self, reader, fingerprint: str, keys: set, metrics: Sequence[str]) -> tuple[int, int]:
        """Check the header and keep the finished units; return (bytes of complete lines, bytes read)."""
        path = self.path
        complete = total = 0
        number = 0
        while True:
            line = reader.readline(self.MAX_LINE + 1)
            if not line:
                return complete, total
            number += 1
            total += len(line)
            if not line.endswith(b"\n"):
                if len(line) > self.MAX_LINE:
                    raise ProtocolError(
                        f"{path}, line {number}: longer than {self.MAX_LINE // 2**20} MiB, which no "
                        "journal record is; use a new --resume file or delete this one")
                return complete, total  # the end of the file: a last line cut short
            text = line.decode("utf-8", errors="replace")
            if number == 1:
                try:
                    head = safejson.loads(text, max_depth=self.MAX_DEPTH)
                except ValueError:  # not JSON, or nested too deeply
                    head = {}
                if not isinstance(head, dict) or head.get("ensemblekit_journal") != self.VERSION \
                        or head.get("run") != fingerprint:
                    raise ProtocolError(
                        f"{path} records a different comparison (other data, algorithms, "
                        "parameters, protocol, seed, metrics or ensemblekit version); use a new "
                        "--resume file or delete this one")
            else:
                key, outcome = self._record(text, number, keys, metrics)
                self._done[key] = outcome
            complete += len(line)

    def _record(self, text: str, number: int, keys: set, metrics: Sequence[str]) -> tuple:
        """One unit line as (key, outcome); ProtocolError naming the line if it is damaged."""
        try:
            rec = safejson.loads(text, max_depth=self.MAX_DEPTH)
            key = (rec["dataset"], rec["algorithm"], rec["params"], rec["repeat"], rec["fold"])
            outcome = {"scores": rec["scores"], "seconds": float(rec["seconds"]),
                       "error": rec.get("error")}
            if key not in keys:
                raise ValueError("a unit that is not part of this comparison")
            if outcome["error"] is None and not all(
                    isinstance(outcome["scores"].get(m), (int, float))
                    and np.isfinite(outcome["scores"][m]) for m in metrics):
                raise ValueError("missing or non-finite scores")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            what = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."  # may quote the line
            raise ProtocolError(f"{self.path}, line {number}: damaged journal record ({what}); "
                                "use a new --resume file or delete this one") from None
        return key, outcome

    def done(self) -> dict[tuple, dict]:
        """Finished units read from the file: ``{key: outcome}``."""
        return dict(self._done)

    def append(self, key: tuple, outcome: dict) -> None:
        """Record one finished unit and flush it to the operating system."""
        dataset, algorithm, params, repeat, fold = key
        self._write({"dataset": dataset, "algorithm": algorithm, "params": params, "repeat": repeat,
                     "fold": fold, "scores": outcome["scores"], "seconds": outcome["seconds"],
                     "error": outcome.get("error")})

    def _write(self, record: dict) -> None:
        self._fh.write(json.dumps(record, sort_keys=True) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def summarize(scores: Sequence[Score]) -> dict[tuple[str, str, str], tuple[float, float, int]]:
    """Mean, standard deviation (ddof=1; 0 for one value) and count per cell.

    Parameters
    ----------
    scores : sequence of Score

    Returns
    -------
    dict
        ``{(dataset, algorithm label, metric): (mean, sd, n)}``; for CV the
        values are the r*k per-fold scores, for clustering the r per-run scores.
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


# --------------------------------------------------------------------------- analysis
@dataclass(frozen=True)
class PairVerdict:
    """The decision about one pair of algorithms over the data sets.

    Attributes
    ----------
    better, worse : str
        The two labels, the one the test leans towards first (the better average
        rank for Nemenyi, the larger signed-rank sum for Wilcoxon). When the test
        leans neither way the order carries no meaning (the compared algorithm
        first for two algorithms, the baseline first against a baseline).
    significant : bool
        Whether the difference is significant at alpha.
    test : {"wilcoxon", "wilcoxon-holm", "nemenyi"}
        The procedure that decided.
    pvalue : float or None
        The p-value compared with alpha (Holm-adjusted for ``"wilcoxon-holm"``);
        None for Nemenyi, which compares rank differences with the CD.
    raw_pvalue : float or None
        The unadjusted p-value (``"wilcoxon-holm"`` only).
    rank_difference : float or None
        Difference of average ranks (``"nemenyi"`` only), ``>= 0``.
    """

    better: str
    worse: str
    significant: bool
    test: str
    pvalue: float | None = None
    raw_pvalue: float | None = None
    rank_difference: float | None = None


@dataclass
class MetricAnalysis:
    """Statistics of one metric over data sets, and the verdicts drawn from them (Demšar 2006).

    Attributes
    ----------
    metric : str
    labels : list of str
        Candidate labels (table columns).
    datasets : list of str
        Data sets with a score for every candidate (the others are left out
        of ranks and tests).
    means : ndarray of shape (n_datasets, n_candidates)
    ranks : ndarray of shape (n_candidates,) or None
        Average ranks (1 = best); None with fewer than 2 candidates.
    friedman : stats.FriedmanResult or None
        With 3 or more candidates and at least 2 data sets; None otherwise (two
        algorithms are compared by :attr:`wilcoxon`, not by Friedman's test).
    cd : float or None
        Nemenyi critical difference at ``alpha`` (3 or more candidates); also what
        the CD diagram draws.
    marks : dict
        ``{(dataset, label): "▲" | "▼" | ""}``: significantly better / worse
        than the baseline on that data set (paired test over folds or runs).
    pairwise : list of tuple
        ``(label_a, label_b, rank_difference, exceeds_cd)`` for every pair, a the
        better-ranked (3 or more candidates). A description of the ranks; the
        decisions are in :attr:`verdicts`.
    versus_baseline : list
        ``stats.PairedResult`` of each candidate against the baseline over data
        sets (Wilcoxon signed-rank, Holm-adjusted); only when that post-hoc test
        is made (3 or more candidates, a baseline, and Friedman rejects).
    alpha : float
    pair : tuple of str or None
        With exactly 2 candidates, ``(a, b)``: a is compared with b (b is the
        baseline, else the first column). :attr:`wilcoxon` and :attr:`sign` are
        oriented so that "wins" are a's.
    wilcoxon : stats.SignedRankResult or None
        Two candidates: Wilcoxon signed-rank test over the data sets.
    sign : stats.SignTestResult or None
        Two candidates: sign test over the data sets (reported beside Wilcoxon).
    min_pvalue : float or None
        Smallest p-value the deciding test (Wilcoxon for 2 candidates, Friedman
        for more) can give with this many data sets.
    omnibus_rejects : bool or None
        3 or more candidates: whether Friedman's test rejects at ``alpha``.
    posthoc : {"nemenyi", "wilcoxon-holm"} or None
        The post-hoc procedure that follows when Friedman rejects: Wilcoxon-Holm
        against the baseline when there is one, else Nemenyi; None when
        Friedman does not reject or cannot.
    unreachable : str or None
        The test that cannot reach ``alpha`` with this many data sets, whatever
        the scores: ``"wilcoxon"`` (2 candidates), ``"friedman"``,
        ``"wilcoxon-holm"`` or ``"nemenyi"``; no verdict about any pair is then
        given.
    posthoc_limit : float or None
        For ``unreachable == "wilcoxon-holm"`` the smallest possible
        Holm-adjusted p-value; for ``"nemenyi"`` the largest possible rank
        difference, k - 1.
    verdicts : list of PairVerdict
        At most one per pair of candidates.
    """

    metric: str
    labels: list
    datasets: list
    means: np.ndarray
    ranks: np.ndarray | None = None
    friedman: object = None
    cd: float | None = None
    marks: dict = field(default_factory=dict)
    pairwise: list = field(default_factory=list)
    versus_baseline: list = field(default_factory=list)
    alpha: float = 0.05
    pair: tuple | None = None
    wilcoxon: object = None
    sign: object = None
    min_pvalue: float | None = None
    omnibus_rejects: bool | None = None
    posthoc: str | None = None
    unreachable: str | None = None
    posthoc_limit: float | None = None
    verdicts: list = field(default_factory=list)


def analyse(scores: Sequence[Score], labels: Sequence[str], datasets: Sequence, metric: str,
            protocol: Protocol, *, baseline: str | None = None, reference: str | None = None,
            alpha: float = 0.05) -> MetricAnalysis:
    """Average ranks, the tests over data sets, their verdicts, and per-cell marks, for one metric.

    Parameters
    ----------
    scores : sequence of Score
        From :func:`run`; cells with a failed unit must be left out.
    labels : sequence of str
        Candidate labels in column order.
    datasets : sequence of ensemblekit.data.Dataset
        The data sets compared (their sizes give the t-test's train/test ratio).
    metric : str
    protocol : Protocol
    baseline : str, optional
        Label of the baseline: the per-cell marks and the comparisons over data
        sets are made against it.
    reference : str, optional
        Label the per-cell marks are made against when there is no baseline
        (e.g. the first algorithm); it does not change the tests over data sets.
    alpha : float, default=0.05
        Significance level of every test.

    Returns
    -------
    MetricAnalysis

    Notes
    -----
    The procedure follows Demšar (2006), so that one table never states two
    verdicts about the same pair:

    * **Two candidates** (Sect. 3.1): the Wilcoxon signed-rank test over the data
      sets decides, as Demšar recommends; the sign test is reported beside it.
      No Friedman, Nemenyi or critical-difference test is made: with k = 2 they
      only restate a weaker test of the same pair.
    * **Three or more** (Sect. 3.2): the Friedman test (Iman-Davenport F, or the
      exact p-value where F is undefined, see :class:`stats.FriedmanResult`)
      comes first. Post-hoc tests are made only when it rejects. Without a
      baseline, the Nemenyi test judges every pair (rank difference at least the
      CD). With a baseline, the question is how each algorithm compares with
      that control, and Demšar (Sect. 3.2.2) replaces Nemenyi's all-pairs test
      by a procedure for k - 1 comparisons with a control that controls the
      family-wise error; here each algorithm is compared with the baseline by
      the Wilcoxon signed-rank test (Sect. 3.1.3) with Holm's step-down
      adjustment, and no Nemenyi verdict is given, so the two procedures never
      speak about the same pair.
    * **Too few data sets**: when the deciding test cannot reach ``alpha`` for
      any scores -- Wilcoxon's smallest two-sided p is 2/2^N, Friedman's is
      :func:`stats.friedman_min_pvalue`, the smallest Holm-adjusted p against a
      baseline (k - 1) 2/2^N, and Nemenyi needs a rank difference k - 1 to reach
      the CD -- ``unreachable`` names it and no verdict is given.

    Per-cell marks come from the corrected resampled t-test over the r*k folds
    (Nadeau & Bengio 2003) for CV, and from the Wilcoxon signed-rank test over
    the paired runs for clustering; they answer a different question (this data
    set, these folds or runs), are not corrected for the number of cells, and
    are labelled as such in the report.
    """
    from ensemblekit import stats
    from ensemblekit.metrics import METRICS

    better_high = METRICS[metric].greater_is_better
    per_cell: dict[tuple[str, str], list[tuple[int, int, float]]] = {}
    for s in scores:
        if s.metric == metric:
            per_cell.setdefault((s.dataset, s.algorithm), []).append((s.repeat, s.fold, s.value))
    names = [d.name for d in datasets]
    complete = [d for d in names if all((d, a) in per_cell for a in labels)]
    means = np.array([[np.mean([v for _, _, v in per_cell[(d, a)]]) for a in labels] for d in complete])
    result = MetricAnalysis(metric, list(labels), complete, means.reshape(len(complete), len(labels)),
                            alpha=alpha)
    ref = baseline if baseline is not None else reference
    if ref is not None:
        sizes = {d.name: d for d in datasets}
        for d in complete:
            base = sorted(per_cell[(d, ref)])
            for a in labels:
                other = sorted(per_cell[(d, a)])
                result.marks[(d, a)] = ""
                if a == ref or [k[:2] for k in other] != [k[:2] for k in base] or len(other) < 2:
                    continue
                x = np.array([v for _, _, v in other])
                b = np.array([v for _, _, v in base])
                if protocol.kind == "cv":
                    size = _n_labelled(sizes[d])
                    n_test = max(1, round(size / protocol.folds))  # a fold's size
                    t, p = stats.corrected_resampled_ttest(x, b, size - n_test, n_test)
                    better = t > 0 if better_high else t < 0
                else:
                    test = stats.wilcoxon_signed_rank(x, b, better_high)
                    p, better = test.pvalue, test.direction > 0
                if p < alpha:
                    result.marks[(d, a)] = "▲" if better else "▼"
    labels = list(labels)
    k, n = len(labels), len(complete)
    if k >= 2 and n >= 1:
        result.ranks = stats.average_ranks(result.means, better_high)
    if k < 2 or n < 2:
        return result
    if k == 2:
        _two_algorithms(result, baseline, better_high)
    else:
        _several_algorithms(result, baseline, better_high)
    return result


def _two_algorithms(result: MetricAnalysis, baseline: str | None, better_high: bool) -> None:
    """Wilcoxon decides, the sign test is shown beside it (Demšar 2006, Sect. 3.1)."""
    from ensemblekit import stats

    labels, alpha = result.labels, result.alpha
    against = labels.index(baseline) if baseline is not None else 0
    compared = 1 - against
    a, b = labels[compared], labels[against]
    result.pair = (a, b)
    x, y = result.means[:, compared], result.means[:, against]
    result.wilcoxon = stats.wilcoxon_signed_rank(x, y, better_high)
    result.sign = stats.sign_test(x, y, better_high)
    result.min_pvalue = stats.paired_min_pvalue(len(result.datasets))
    if not result.min_pvalue < alpha:
        result.unreachable = "wilcoxon"
        return
    w = result.wilcoxon
    first, second = (b, a) if w.direction < 0 else (a, b)
    result.verdicts.append(PairVerdict(first, second, bool(w.pvalue < alpha), "wilcoxon",
                                       pvalue=w.pvalue))


def _several_algorithms(result: MetricAnalysis, baseline: str | None, better_high: bool) -> None:
    """Friedman first; Nemenyi or Wilcoxon-Holm against the baseline only after it rejects."""
    from ensemblekit import stats

    labels, alpha = result.labels, result.alpha
    k, n = len(labels), len(result.datasets)
    result.friedman = f = stats.friedman_test(result.means, better_high)
    result.cd = stats.critical_difference(k, n, alpha)
    order = np.argsort(result.ranks, kind="stable")
    for i_pos, i in enumerate(order):
        for j in order[i_pos + 1:]:
            gap = float(result.ranks[j] - result.ranks[i])
            result.pairwise.append((labels[i], labels[j], gap, gap >= result.cd))
    result.min_pvalue = f.min_pvalue
    if not f.min_pvalue < alpha:
        result.unreachable = "friedman"
        return
    result.omnibus_rejects = bool(f.pvalue < alpha)
    if not result.omnibus_rejects:
        return
    if baseline is not None:
        holm_floor = min(1.0, (k - 1) * stats.paired_min_pvalue(n))
        result.posthoc = "wilcoxon-holm"
        if not holm_floor < alpha:
            result.unreachable, result.posthoc_limit = "wilcoxon-holm", holm_floor
            return
        result.versus_baseline = stats.wilcoxon_holm(result.means, labels.index(baseline),
                                                     better_high, alpha)
        for r in result.versus_baseline:
            other = labels[r.index]
            first, second = (other, baseline) if r.better else (baseline, other)
            result.verdicts.append(PairVerdict(first, second, r.significant, "wilcoxon-holm",
                                               pvalue=r.adjusted_pvalue, raw_pvalue=r.pvalue))
        return
    result.posthoc = "nemenyi"
    if not k - 1 >= result.cd:
        result.unreachable, result.posthoc_limit = "nemenyi", float(k - 1)
        return
    for a, b, gap, exceeds in result.pairwise:
        result.verdicts.append(PairVerdict(a, b, bool(exceeds), "nemenyi", rank_difference=gap))
