"""Evaluation protocols and their plan: folds, runs, grid points and units of work.

A protocol (repeated stratified cross-validation, repeated k-fold for regression,
or repeated clustering runs) is cut by :func:`plan` into independent *units*: one
candidate (an algorithm with fixed parameters, possibly a grid point) on one data
set for one repeat and fold, or for one clustering run. Each unit is fully
determined by the user's seed, so units can run in any order or in parallel
(:mod:`ensemblekit.experiment.runner`) and give the same scores.

Seeding, so that comparisons are paired:

* cross-validation folds are those of scikit-learn's
  ``RepeatedStratifiedKFold(random_state=seed)`` for classifiers (nominal class)
  and ``RepeatedKFold(random_state=seed)`` for regression algorithms (numeric
  class), drawn by :mod:`ensemblekit.experiment.folds` without scikit-learn,
  over the rows whose class is known, and are the same for every algorithm on a
  data set;
* the estimator seed of a unit is derived from ``(seed, repeat, fold)`` only, so
  all algorithms in a repeat share it; in clustering runs this makes ``kmeans`` and
  ``iekm`` start run *r* from the same initial centres, as in the Inner Ensembles
  paper (Abbasian et al. 2013, Sect. 3.2).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ensemblekit import registry
from ensemblekit.dataset import known_class
from ensemblekit.errors import InputError
from ensemblekit.readers.bounds import Bound

#: Values of one ``--grid`` parameter.
MAX_GRID_VALUES = 1000
#: Points of one algorithm's grid (the product of its parameters' numbers of values),
#: checked before a point is made.
MAX_GRID_POINTS = Bound("the points of a grid", 10_000, "ENSEMBLEKIT_MAX_GRID_POINTS", "points")
#: Units of work of a plan (data sets x candidates x repeats x folds, or x runs), checked
#: before a unit is made: a million fits already take days, and a typo such as
#: ``--runs 1000000000`` would otherwise fill the memory with units.
MAX_UNITS = Bound("the units of work of a comparison", 1_000_000, "ENSEMBLEKIT_MAX_UNITS",
                  "units")


class ProtocolError(InputError):
    """The protocol cannot run on this data (e.g. no class for external indices)."""



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
    tune : dict
        ``{key: [values]}`` an inner cross-validation chooses from in every training fold
        (``--tune``, see :class:`ensemblekit.experiment.tuning.TunedEstimator`); empty when
        nothing is tuned.
    tune_cv : int
        The inner folds of ``tune`` (>= 2).
    tune_by : str
        A clusterer's ``tune``: the internal index that chooses (``--tune-by``, see
        :class:`ensemblekit.experiment.tuning.TunedClusterer`); empty for a classifier,
        whose inner folds score accuracy.
    configuration : str
        Label of the named configuration the candidate belongs to
        (``c45:unpruned=true``, see :mod:`ensemblekit.app.configurations`); empty for a
        plain registry name. A grid point of a configuration keeps it.
    noise : float
        ``--noise``: the share of the values of the most significant half of the
        attributes replaced in every training fold (see
        :mod:`ensemblekit.experiment.noise`); 0 for clean data.
    """

    algorithm: str
    params: dict
    label: str
    grid: dict = field(default_factory=dict)
    tune: dict = field(default_factory=dict)
    tune_cv: int = 5
    configuration: str = ""
    tune_by: str = ""
    noise: float = 0.0

    @property
    def column(self) -> str:
        """The configuration's label, else the registry name: what grid points are grouped by."""
        return self.configuration or self.algorithm

    @property
    def params_json(self) -> str:
        """Parameters as compact JSON with sorted keys (stable across runs); with what is
        tuned (``"tune"``, ``"tune_cv"``) when something is, and the ``"noise"`` level
        when it is not 0."""
        return self._json(self.params)

    def _json(self, params: dict) -> str:
        if self.noise:
            params = params | {"noise": self.noise}
        if not self.tune:
            return _params_json(params)
        if self.tune_by:  # a clusterer: no inner folds, an internal index decides
            return _params_json(params | {"tune": self.tune, "tune_by": self.tune_by})
        return _params_json(params | {"tune": self.tune, "tune_cv": self.tune_cv})

    def params_json_used(self, n_clusters: int | None) -> str:
        """:attr:`params_json` with ``n_clusters`` as a clustering run used it (the protocol's
        ``k`` or the data set's number of classes, see
        :meth:`ensemblekit.experiment.Runner.run`); unchanged for None or without the key."""
        if n_clusters is None or "n_clusters" not in self.params:
            return self.params_json
        return self._json(self.params | {"n_clusters": int(n_clusters)})


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
            raise ProtocolError(
                f"the number of repeats/runs must be at least 1, got {self.repeats}")
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
        than :data:`MAX_GRID_VALUES` values.
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
        if count > MAX_GRID_VALUES:
            raise ProtocolError(f"--grid {text!r}: {count} values; at most {MAX_GRID_VALUES}")
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

    Raises
    ------
    ProtocolError
        More points than :data:`MAX_GRID_POINTS` (checked before any is made).
    """
    import itertools
    import math

    if not grid:
        return [Candidate(algorithm, dict(params), algorithm)]
    keys = list(grid)
    points = math.prod(len(grid[k]) for k in keys)
    if points > MAX_GRID_POINTS.limit():
        sizes = " x ".join(f"{len(grid[k])} values of {k}" for k in keys)
        raise ProtocolError(MAX_GRID_POINTS.exceeded(
            f"the grid of {algorithm} has {points:,} points ({sizes}),"))
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
    return ds.take(rows)


@dataclass(frozen=True)
class Unit:
    """One unit of work: one candidate on one data set for one repeat and fold (or run).

    Attributes
    ----------
    data_index : int
        Position of the data set in the list given to :func:`plan`.
    candidate : int
        Position of the candidate in :attr:`Plan.candidates`.
    repeat : int
        Repeat (CV) or run (clustering) number, from 1.
    fold : int
        Fold number from 1; 0 for a clustering run.
    test : ndarray of shape (n_test,), int32, or None
        File rows of the test fold, ascending; the other rows with a known
        class train. None for a clustering run (every row is clustered).
    random_state : int
        The estimator seed, :func:`derive_seed` of the user seed and
        ``(repeat, fold)`` (``(run,)`` for clustering): shared by every
        candidate of the same repeat and fold.
    data_size : int, default=0
        Instances times features of the data set, to order the work.
    """

    data_index: int
    candidate: int
    repeat: int
    fold: int
    test: np.ndarray | None
    random_state: int
    data_size: int = 0


@dataclass(frozen=True)
class Plan:
    """The units of work of a protocol, and notes for the user about the data.

    Attributes
    ----------
    units : list of Unit
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
        are given clustering runs; too few labelled rows for the folds; or
        more units than :data:`MAX_UNITS` (see :func:`check_size`). All is
        checked before a unit is made.
    """
    from ensemblekit.experiment.folds import kfold_test_folds, stratified_test_folds

    task = task_of(candidates)
    if task == registry.REGRESSION and protocol.kind != "cv":
        raise ProtocolError("regression algorithms are evaluated by cross-validation, not by "
                            "clustering runs")
    # every data set, and the number of units, is checked before any unit is made
    labelled_rows = [_labelled_rows(ds, task, protocol) for ds in datasets]
    check_size(len(datasets), len(candidates), protocol)
    units: list[Unit] = []
    notes: list[str] = []
    for d_index, (ds, labelled) in enumerate(zip(datasets, labelled_rows)):
        size = int(ds.X.shape[0]) * max(1, int(ds.X.shape[1]))
        if task == registry.REGRESSION:
            tests = kfold_test_folds(labelled.size, protocol.folds, protocol.repeats,
                                     protocol.seed)
            units += _cv_units(d_index, tests, labelled, protocol, len(candidates), size)
            continue
        y = _labelled_class(ds)
        if protocol.kind == "cv":
            counts = np.bincount(y[labelled]) if labelled.size else np.zeros(1, dtype=int)
            smallest = counts[counts > 0].min()
            if smallest < protocol.folds:
                notes.append(f"{ds.name}: the smallest class has {smallest} instance"
                             f"{'' if smallest == 1 else 's'}, fewer than {protocol.folds} folds; "
                             "some folds lack it")
            tests = stratified_test_folds(y[labelled], protocol.folds, protocol.repeats,
                                          protocol.seed)
            units += _cv_units(d_index, tests, labelled, protocol, len(candidates), size)
        else:
            for run in range(protocol.repeats):
                rs = derive_seed(protocol.seed, run + 1)
                for c in range(len(candidates)):
                    units.append(Unit(d_index, c, run + 1, 0, None, rs, size))
    return Plan(units, list(candidates), notes)


def check_size(n_datasets: int, n_candidates: int, protocol: Protocol) -> None:
    """Refuse a plan of more units of work than :data:`MAX_UNITS`, before any is made.

    Parameters
    ----------
    n_datasets, n_candidates : int
        Data sets and candidates (algorithms, grid points) of the plan.
    protocol : Protocol

    Raises
    ------
    ProtocolError
        Data sets x candidates x repeats x folds (or x runs) is more than
        :data:`MAX_UNITS`.
    """
    per = protocol.repeats * (protocol.folds if protocol.kind == "cv" else 1)
    units = n_datasets * n_candidates * per
    if units > MAX_UNITS.limit():
        how = (f"{protocol.repeats:,} repeats x {protocol.folds:,} folds" if protocol.kind == "cv"
               else f"{protocol.repeats:,} runs")
        raise ProtocolError(MAX_UNITS.exceeded(
            f"{n_datasets} data sets x {n_candidates} algorithms x {how} make {units:,} units of "
            "work,"))


def _labelled_rows(ds, task: str, protocol: Protocol) -> np.ndarray:
    """The rows of ``ds`` with a known class (or target), checked against the protocol."""
    if task == registry.REGRESSION:
        labelled = np.flatnonzero(known_class(_numeric_target(ds)))
        if labelled.size < protocol.folds:
            raise ProtocolError(f"{ds.source}: {labelled.size} instances with a known target, "
                                f"fewer than {protocol.folds} folds")
        return labelled
    y = _labelled_class(ds)
    labelled = np.flatnonzero(known_class(y))
    if protocol.kind == "cv":
        if labelled.size < protocol.folds:
            raise ProtocolError(f"{ds.source}: {labelled.size} labelled instances, fewer than "
                                f"{protocol.folds} folds")
        counts = np.bincount(y[labelled]) if labelled.size else np.zeros(1, dtype=int)
        if counts[counts > 0].max() < protocol.folds:
            raise ProtocolError(f"{ds.source}: every class has fewer than {protocol.folds} "
                                "instances; use fewer folds")
    return labelled


def task_of(candidates: Sequence[Candidate]) -> str | None:
    """The one task of the candidates.

    Parameters
    ----------
    candidates : sequence of Candidate

    Returns
    -------
    str or None
        ``registry.CLASSIFICATION``, ``registry.CLUSTERING`` or
        ``registry.REGRESSION``; None when there are no candidates.

    Raises
    ------
    ProtocolError
        If the candidates are of different tasks.
    """
    tasks = {registry.get(c.algorithm).task for c in candidates}
    if len(tasks) > 1:
        raise ProtocolError("candidates of different tasks cannot share a protocol: "
                            + ", ".join(sorted(tasks)))
    return tasks.pop() if tasks else None


def _cv_units(d_index, tests, labelled, protocol, n_candidates, size) -> list:
    """One unit per (fold, candidate): the test rows of each fold (file rows, ascending) and
    the fold's seed, shared by every candidate (paired comparison)."""
    units = []
    for s, test in enumerate(tests):
        repeat, fold = divmod(s, protocol.folds)
        rs = derive_seed(protocol.seed, repeat + 1, fold + 1)
        test_rows = labelled[test].astype(np.int32)
        units += [Unit(d_index, c, repeat + 1, fold + 1, test_rows, rs, size)
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


def _params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))
