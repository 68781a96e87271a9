"""Compare algorithms over data sets under one protocol (``compare``)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ensemblekit import registry
from ensemblekit.app.common import (
    Notify,
    Progress,
    _class_all_missing,
    _class_for,
    _metrics_for,
    _no_progress,
    _notifier,
    _prepare_for,
    _refuse_targets_only,
    _refuse_weighted,
    load_data,
    resolve_params,
    stage,
    worker_count,
)
from ensemblekit.app.configurations import parse_configuration, parse_configurations
from ensemblekit.app.tuning import tune_candidates
from ensemblekit.errors import UsageError
from ensemblekit.results import Comparison

#: What the algorithms of each task need of a data set's class.
_CLASS_NEEDED = {
    registry.CLASSIFICATION: "classifiers need a nominal class with known values",
    registry.CLUSTERING: "clusterers are scored against a nominal class with known values",
    registry.REGRESSION: "regression algorithms need a numeric class with known values",
}


_DATA_SUFFIXES = (".arff", ".csv", ".tsv", ".arff.gz", ".csv.gz", ".tsv.gz")


def data_files(items: Sequence) -> list[tuple[Any, bool]]:
    """Data items as ``(item, found in a folder)`` pairs, folders expanded in name order.

    A folder gives its ``.arff``, ``.csv`` and ``.tsv`` files, gzip-compressed
    (``.arff.gz``, ...) or not.

    Raises
    ------
    UsageError
        An empty folder, or no data at all.
    """
    files: list[tuple[Any, bool]] = []
    for item in items:
        path = Path(item) if isinstance(item, (str, Path)) else None
        if path is not None and item != "-" and path.is_dir():
            found = sorted(str(p) for p in path.iterdir()
                           if p.name.lower().endswith(_DATA_SUFFIXES) and p.is_file())
            if not found:
                raise UsageError(f"{item}: no .arff, .csv or .tsv files (or .gz of them) in this "
                                 "folder")
            files.extend((f, True) for f in found)
        else:
            files.append((item if path is None else str(item), False))
    if not files:
        raise UsageError("no data: give --data FILE or --data DIR")
    return files


def _named_items(data) -> list[tuple[Any, str | None]]:
    """Each data item with the name its data set takes, None for a file's own name.

    ``data`` may be a mapping of names to items (files, frames, streams, Datasets), or a
    sequence of items, or one path or frame. In a sequence a DataFrame is named ``frame``,
    or ``data1``, ``data2``, ... in order when there are several frames.
    """
    from ensemblekit.frames import is_frame

    if isinstance(data, Mapping):
        return [(item, str(name)) for name, item in data.items()]
    if isinstance(data, (str, Path)) or is_frame(data):
        data = [data]
    items = list(data)
    frames = [k for k, item in enumerate(items) if is_frame(item)]
    names = {k: "frame" if len(frames) == 1 else f"data{i + 1}" for i, k in enumerate(frames)}
    return [(item, names.get(k)) for k, item in enumerate(items)]


def _class_mismatch(task: str, ds) -> str | None:
    """How the class of ``ds`` does not fit ``task``; None if it fits."""
    cls = ds.schema.class_attribute
    if cls is None or ds.y is None:
        return "no class attribute"
    wanted = "numeric" if task == registry.REGRESSION else "nominal"
    if cls.kind != wanted:
        return f"class '{cls.name}' is {cls.kind}"
    return f"every class value of '{cls.name}' is missing" if _class_all_missing(ds) else None


def _load_fitting(task: str, files, target, ignore, input_format, notify: Notify,
                  strict: bool = False) -> list:
    """Load the data sets of a comparison; skip (with one note) misfits found in folders.

    A file found in a folder that cannot be read is skipped with a note (``strict``:
    the error stops the run, as for a file named on its own). The same data reached
    twice (equal features and classes) is compared once, with a note; a classification
    data set with one class present is left out with a note, since it has nothing to
    rank.
    """
    import numpy as np

    from ensemblekit.dataset import DataError, known_class
    from ensemblekit.persistence import data_fingerprint

    datasets, skipped, seen = [], [], {}
    for item, in_folder, name in files:
        try:
            ds = load_data(item, target=target, ignore=ignore, input_format=input_format,
                           name=name)
        except DataError as exc:
            if strict or not in_folder:
                raise
            notify(f"note: skipped {item}: it cannot be read ({exc}); --strict stops instead")
            continue
        ds = _class_for(task, ds, target, notify)
        why = _class_mismatch(task, ds)
        if why is None:
            ds = _prepare_for(task, ds, target, notify=notify)
            _refuse_weighted(ds, "cross-validation")
            twin = seen.setdefault(data_fingerprint(ds.X, ds.y), ds.source)
            if twin != ds.source:
                notify(f"note: {ds.source} holds the same data as {twin}; it is compared once")
                continue
            known = known_class(np.asarray(ds.y)) if task != registry.CLUSTERING else None
            if task == registry.CLASSIFICATION:
                present = np.unique(np.asarray(ds.y)[known])
                if present.size < 2:
                    notify(f"note: {ds.source} is left out: it has one class present, so every "
                           "classifier scores alike and there is nothing to rank")
                    continue
            if known is not None and not known.all():  # as fit says (issue 32)
                what = "class" if task == registry.CLASSIFICATION else "target"
                notify(f"note: {ds.source}: {int((~known).sum())} instances with a missing {what} "
                       "value are left out of the folds")
            datasets.append(ds)
        elif in_folder:
            skipped.append(f"{item} ({why})")
        else:
            wanted = "numeric" if task == registry.REGRESSION else "nominal"
            raise UsageError(f"{ds.source}: {why}, but {_CLASS_NEEDED[task]}; name a {wanted} "
                             "class with --target")
    if skipped:
        notify(f"note: skipped {', '.join(skipped)}: {_CLASS_NEEDED[task]}")
    if not datasets:
        raise UsageError(f"no data file to compare on: {_CLASS_NEEDED[task]}")
    return datasets


def _candidates(configurations, specs, params: dict, grid: Sequence[str], baseline: str | None):
    """Resolve the parameters for each configuration (its own settings over ``params``, the
    ``--set`` values) and expand the grid into candidates."""
    from ensemblekit import experiment

    every = sorted({n for t in specs for n in t.param_names})
    for key in params:
        if key not in every:
            raise registry.ParameterError(f"unknown parameter {key!r}; valid keys: "
                                          f"{', '.join(every)}")
    params = dict(params)
    n_clusters = None
    if specs[0].task == registry.CLUSTERING and "n_clusters" in params:
        spec0 = specs[0]
        param = spec0.params[spec0.param_names.index("n_clusters")]
        value = params.pop("n_clusters")
        n_clusters = param.parse(value) if isinstance(value, str) else param.check(value)
    grid_raw = [experiment.parse_grid(item) for item in grid]
    if len({k for k, _ in grid_raw}) != len(grid_raw):
        raise UsageError("a --grid parameter is given twice")
    candidates, gridded = [], []
    for config, spec in zip(configurations, specs):
        given = {k: v for k, v in params.items() if k in spec.param_names} | config.settings
        try:
            _, values = resolve_params(spec.name, given)
        except registry.ParameterError as exc:
            if not config.settings:
                raise
            raise registry.ParameterError(f"{config.label}: {exc}") from None
        points = {}
        if config.label != baseline:
            for key, texts in grid_raw:
                if key in spec.param_names:
                    param = spec.params[spec.param_names.index(key)]
                    points[key] = [param.parse(v) for v in texts]
        if points:
            gridded.append(config.label)
        for c in experiment.expand_grid(spec.name, values, points):
            # a configuration's grid points are labelled after it: c45:unpruned=true[...]
            candidates.append(c if config.label == spec.name else
                              replace(c, label=config.label + c.label[len(spec.name):],
                                      configuration=config.label))
    for key, _ in grid_raw:
        if not any(key in s.param_names for c, s in zip(configurations, specs)
                   if c.label != baseline):
            raise registry.ParameterError(f"--grid {key}: no compared algorithm (other than the "
                                          f"baseline) has this parameter; valid keys: "
                                          f"{', '.join(every)}")
    return candidates, n_clusters, gridded


def _refuse_same_parameters(candidates) -> None:
    """Two columns with the same parameters (and the same tuned ones) are one column twice."""
    same: dict[tuple, str] = {}
    for c in candidates:
        first = same.setdefault((c.algorithm, c.params_json), c.label)
        if first != c.label:
            raise UsageError(f"{first} and {c.label} have the same parameters; compare one of "
                             "them")


def _protocol(task: str, cv, repeats, runs, seed: int, n_clusters):
    from ensemblekit.experiment import Protocol

    if task in (registry.CLASSIFICATION, registry.REGRESSION):
        if runs is not None:
            who = "classifiers" if task == registry.CLASSIFICATION else "regression algorithms"
            raise UsageError(f"--runs is for clustering algorithms; {who} use --cv and --repeats")
        return Protocol("cv", folds=cv if cv is not None else 10,
                        repeats=repeats if repeats is not None else 10, seed=seed)
    if cv is not None or repeats is not None:
        raise UsageError("--cv/--repeats are for classifiers and regression algorithms; "
                         "clustering algorithms use --runs")
    return Protocol("runs", repeats=runs if runs is not None else 30, seed=seed,
                    n_clusters=n_clusters)


def _noised(candidates, levels: Sequence[float], baseline: str | None):
    """One column group per ``--noise`` level: every candidate at the first level, then at
    the second, ...; and the baseline's label at the first level."""
    from ensemblekit.experiment.noise import check_levels

    levels = check_levels(levels)
    out = [replace(c, noise=level, label=f"{c.label}@noise={level:g}")
           for level in levels for c in candidates]
    return out, None if baseline is None else f"{baseline}@noise={levels[0]:g}"


def _check_plottable(candidates, gridded, n_data: int) -> None:
    """Refuse, before any work, a plot that could not be drawn."""
    if gridded:
        keys = {k for c in candidates for k in c.grid}
        if len(keys) > 2:
            raise UsageError("--plot draws heat maps for grids over one or two parameters")
        return
    if len(candidates) < 2 or n_data < 2:
        raise UsageError("--plot draws a critical-difference diagram (3 or more algorithms) or "
                         "a scatter plot of two, over at least 2 data sets")


def compare(algorithms: Sequence[str], data: Sequence, *, metrics: Sequence[str] = (),
            cv: int | None = None, repeats: int | None = None, runs: int | None = None,
            seed: int = 1, params: dict | None = None, target: str | None = None,
            ignore: Sequence[str] = (), input_format: str | None = None,
            baseline: str | None = None, grid: Sequence[str] = (), tune: Sequence[str] = (),
            tune_cv: int = 5, tune_by: str | None = None,
            max_instances: int | None = None, n_jobs: int = 1, scheduler: str | None = None,
            resume=None, alpha: float = 0.05, rope: float | None = None, plot: bool = False,
            pooled: bool = False, report_options: dict | None = None, strict: bool = False,
            predictions: bool = False, noise: Sequence[float] = (),
            progress: Progress | None = None, notify: Notify | None = None) -> Comparison:
    """Compare algorithms over data sets under one protocol (``ensemblekit compare``).

    Parameters
    ----------
    algorithms : sequence of str
        Registry names, all of one task.
    data : sequence or dict of path, Dataset, DataFrame or stream
        Files or folders (a folder's .arff/.csv/.tsv files, in name order; those
        whose class does not suit the task are skipped with a note), pandas or
        polars DataFrames (read by their columns' types; named ``frame``, or
        ``data1``, ``data2``, ... when there are several), and streams of ARFF or
        CSV text (see :func:`load_data`). A dict maps the names the results use to
        its items.
    metrics : sequence of str
        Default: accuracy (classifiers), nmi and purity (clusterers), correlation
        and rmse (regression).
    cv, repeats : int, optional
        Repeated (stratified for classifiers) k-fold CV, default 10 x 10.
    runs : int, optional
        Seeded clustering runs, default 30.
    seed : int
        Fixes folds, runs and every estimator seed: same seed, same scores.
    params : dict, optional
        Parameters by name, given to every algorithm that has them.
    baseline : str, optional
        The algorithm the others are tested against.
    grid : sequence of str
        ``key=start:stop:step`` or ``key=v1,v2``; needs ``baseline``.
    tune : sequence of str
        ``key=start:stop:step`` or ``key=v1,v2``: values an inner stratified
        ``tune_cv``-fold cross-validation chooses from in every training fold, by accuracy
        (classifiers only; see :func:`ensemblekit.app.tuning.tune_candidates`).
    tune_cv : int, default=5
        Inner folds of ``tune``.
    tune_by : str, optional
        The internal index (silhouette, ...) that chooses a clusterer's ``tune`` values in
        each run; needed to tune clusterers.
    max_instances : int, optional
        Subsample each data set once (seeded, without replacement).
    n_jobs, scheduler
        joblib workers, or a Dask scheduler address; results do not depend on them.
    resume : path, optional
        JSON-lines journal of finished units (computed units are not redone). It
        must be a regular file, and is locked for one writer from before the
        data are read until the run ends (see
        :class:`ensemblekit.experiment.JournalLock`).
    alpha : float
        Significance level, in (0, 1).
    predictions : bool, default=False
        Keep every fold's out-of-fold predictions in ``Comparison.predictions``
        (``--predictions-out``; scikit-learn's ``cross_val_predict``, Weka's
        ``-classifications``). Cross-validation only; with ``resume``, the finished units'
        predictions are read from the journal.
    strict : bool, default=False
        A file found in a folder that cannot be read stops the run; by default it
        is skipped with a note.
    rope : float, optional
        Also run the Bayesian signed-rank test with this region of practical
        equivalence, ``>= 0`` in the metric's units: the two algorithms, or each
        against ``baseline`` (needed with three or more). Needs baycomp.
    plot : bool
        Refuse, before any work, a comparison whose plot could not be drawn
        (:func:`plot_comparison` draws it afterwards).
    pooled : bool
        Also report each algorithm's out-of-fold predictions pooled over every
        fold and repeat, Weka's way (``Comparison.pooled``; what ``evaluate``
        prints). Not with ``resume`` or clusterers.
    report_options : dict, optional
        Keyword arguments of each pooled classification report (``cost_matrix``,
        ``curves``; see :func:`~ensemblekit.scores.classification.classification_report`).
    noise : sequence of float
        ``--noise`` levels, each in [0, 1): every algorithm is run once per level, on
        training folds (a clustering run: on rows) where that share of the values of the
        most significant half of the attributes is replaced (see
        :mod:`ensemblekit.experiment.noise`; 0 is the clean data). Each level is a group of
        columns, labelled ``ALGO@noise=LEVEL``, in the order given; ``baseline`` names the
        baseline's column of the first level. Not with ``grid``.

    Returns
    -------
    Comparison

    Raises
    ------
    UsageError, ensemblekit.registry.ParameterError, ensemblekit.data.DataError
    ensemblekit.experiment.ProtocolError
        Among others, if the journal is not a regular file, is in use by another
        run, holds a damaged record, or its disk fills up (what it holds is kept).
    """
    from ensemblekit import experiment
    from ensemblekit.experiment.analysis import import_tests_in_background, n_labelled
    from ensemblekit.metrics import refuse_unmeasured

    notify = _notifier(notify)
    progress = progress or _no_progress
    worker_count(n_jobs)
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha must lie strictly between 0 and 1, got {alpha}")
    if rope is not None:
        _check_rope(rope, len(algorithms), baseline)
    # results carry the entries' own names ("j48" is reported as c45), or a configuration's
    # label (c45:unpruned=true); see ensemblekit.app.configurations
    configurations = parse_configurations(algorithms)
    if baseline is not None:
        baseline = parse_configuration(baseline).label
    named = _named_items(data)
    files = [(f, in_folder, name) for item, name in named
             for f, in_folder in data_files([item])] if named else data_files([])
    specs = [registry.get(c.algorithm) for c in configurations]
    for spec in specs:
        _refuse_targets_only(spec, "compare" if len(specs) > 1 else "evaluate")
    available = []
    for config, spec in zip(configurations, specs):
        # an algorithm whose optional package is missing is left out, with a note
        missing = spec.missing_requirement()
        if missing is None:
            available.append((config, spec))
        elif config.label == baseline or len(specs) == 1:
            raise UsageError(f"{spec.name} {missing}")
        else:
            notify(f"{config.label} skipped: it {missing}")
    configurations, specs = [c for c, _ in available], [s for _, s in available]
    names_given = [c.label for c in configurations]
    tasks = {s.task for s in specs}
    if len(tasks) > 1:
        raise UsageError("algorithms of different tasks cannot be compared: "
                         + ", ".join(f"{s.name} ({s.task})" for s in specs))
    task = tasks.pop()
    if predictions and task == registry.CLUSTERING:
        raise UsageError("--predictions-out writes cross-validation predictions; clusterers "
                         "run on every row (cluster --labels-out writes their labels)")
    if baseline is not None and baseline not in names_given:
        raise UsageError(f"--baseline {baseline} is not among the compared algorithms "
                         f"({', '.join(names_given)})")
    if grid and baseline is None:
        raise UsageError("--grid needs --baseline: the algorithm the grid points are measured "
                         "against")
    candidates, n_clusters, gridded = _candidates(configurations, specs, params or {}, grid,
                                                  baseline)
    candidates = tune_candidates(candidates, tune, tune_cv, grid,
                                 {c.label: c.tune for c in configurations}, tune_by)
    _refuse_same_parameters(candidates)
    if noise:
        if grid:
            raise UsageError("--noise and --grid cannot be combined: compare the grid at one "
                             "noise level (--set) or the levels without a grid")
        candidates, baseline = _noised(candidates, noise, baseline)
    if plot:
        _check_plottable(candidates, gridded, len(files))
    protocol = _protocol(task, cv, repeats, runs, seed, n_clusters)
    chosen = _metrics_for(task, metrics)
    refuse_unmeasured(chosen, specs)  # model-size of an algorithm without a natural size
    # the journal is locked before any work, so that a second run on it is refused at once
    with contextlib.nullcontext() if resume is None else experiment.JournalLock(resume) as journal:
        runner = experiment.Runner(n_jobs, scheduler)  # holds the Dask client from prestart to run
        try:  # a zygote of forked workers, or a Dask client, ends however this ends
            warming = runner.prestart(algorithms=[c.algorithm for c in candidates])
            datasets = _load_fitting(task, files, target, ignore, input_format, notify, strict)
            if plot and len(datasets) < len(files):
                _check_plottable(candidates, gridded, len(datasets))
            if max_instances is not None:
                datasets = [experiment.subsample(d, max_instances, seed) for d in datasets]
            names = [d.name for d in datasets]
            if len(set(names)) != len(names):
                raise UsageError("two data files have the same name: " + ", ".join(names))
            work = experiment.plan(datasets, candidates, protocol)
            for note in work.notes:
                notify(f"note: {note}")
            tests = None
            if warming is not None:
                warming.join()
            # the zygote of forked workers gets the data sets; threads may start now
            if runner.start(datasets, work, protocol) and len(candidates) > 1:
                tests = import_tests_in_background()  # the units run elsewhere meanwhile
            with stage("units"), progress(len(work.units), "units") as advance:
                result = runner.run(datasets, work, protocol, chosen, resume=journal,
                                    on_unit_done=advance, keep_predictions=pooled or predictions)
            if tests is not None:
                tests.join()
        finally:
            runner.close()
    for note in result.notes:
        notify(f"note: {note}")
    if resume is not None:
        notify(f"note: {result.computed} of {len(work.units)} units computed now, the rest read "
               f"from {resume}")
    with stage("statistics"):
        return comparison_of(
            task, protocol, chosen, candidates, names, {d.name: n_labelled(d) for d in datasets},
            result.scores, result.failures, baseline=baseline, alpha=alpha, rope=rope, seed=seed,
            gridded=gridded, notify=notify, max_instances=max_instances, units=len(work.units),
            computed=result.computed, chosen=result.chosen,
            pooled=_pooled_reports(task, datasets, result.predictions,
                                   {(f.dataset, f.algorithm) for f in result.failures},
                                   report_options or {}) if pooled else {},
            predictions=_prediction_records(task, datasets, result.predictions) if predictions
            else [])


def comparison_of(task: str, protocol, metrics: Sequence[str], candidates, datasets: Sequence[str],
                  labelled: dict | None, scores, failures, *, baseline: str | None, alpha: float,
                  rope: float | None, seed: int, gridded: bool, notify: Notify,
                  **extra) -> Comparison:
    """The tables, tests and verdicts of finished units: what ``compare`` and ``analyse`` print.

    Parameters
    ----------
    task : str
    protocol : ensemblekit.experiment.Protocol
    metrics : sequence of str
    candidates : sequence of ensemblekit.experiment.Candidate
        In column order.
    datasets : sequence of str
        Data set names, in row order.
    labelled : dict or None
        Rows with a known class per data set (they size the corrected t-test's folds);
        None when unknown (see :func:`ensemblekit.experiment.analyse`).
    scores, failures : list
        Of :class:`ensemblekit.experiment.Score` and :class:`ensemblekit.experiment.Failure`.
    baseline : str or None
    alpha, rope, seed
        As :func:`compare`.
    gridded : bool
        The candidates hold a grid: summarise it against ``baseline``.
    notify : callable
        Takes each note (a measure undefined in some fold).
    **extra
        More fields of :class:`Comparison` (``units``, ``computed``, ``pooled``, ...).

    Returns
    -------
    Comparison
    """
    from ensemblekit import experiment
    from ensemblekit.experiment.analysis import grid_summary
    from ensemblekit.metrics import metric_spec

    summary = experiment.summarize(scores)
    labels = [c.label for c in candidates]
    failed = {(f.dataset, f.algorithm) for f in failures}
    ok_scores = [s for s in scores if (s.dataset, s.algorithm) not in failed]
    # per-cell marks: against the baseline, else against the first algorithm
    reference = None if baseline is not None or len(labels) < 2 else labels[0]
    analyses = {m: experiment.analyse(_defined(ok_scores, m, notify), labels, datasets, m,
                                      protocol, baseline=baseline, reference=reference,
                                      alpha=alpha, rope=rope, seed=seed, labelled=labelled)
                for m in metrics}
    grid_rows = {}
    if gridded:
        for m in metrics:
            grid_rows[m] = grid_summary(summary, candidates, baseline, datasets, m,
                                        metric_spec(m).greater_is_better, failed)
    return Comparison(task=task, protocol=protocol, metrics=list(metrics), datasets=list(datasets),
                      labels=labels, candidates=list(candidates), scores=scores,
                      failures=failures, summary=summary, analyses=analyses, baseline=baseline,
                      reference=reference, grid=grid_rows, alpha=alpha, **extra)


def _prediction_records(task: str, datasets, units) -> list[tuple]:
    """One record per test instance of every fold (see ``Comparison.predictions``), ordered
    by data set, repeat, fold, algorithm (column order) and row."""
    import numpy as np

    by_name = {d.name: d for d in datasets}
    order = {d.name: i for i, d in enumerate(datasets)}
    records = []
    for u in sorted(units, key=lambda u: (order[u.dataset], u.repeat, u.fold)):
        ds = by_name[u.dataset]
        truth = np.asarray(ds.y)[u.test]
        for k, row in enumerate(u.test):
            if task == registry.CLASSIFICATION:
                code, actual = int(u.predicted[k]), int(truth[k])
                records.append((u.dataset, u.algorithm, u.repeat, u.fold, int(row) + 1,
                                ds.class_values[actual] if actual >= 0 else None,
                                ds.class_values[code], float(u.proba[k, code])))
            else:
                actual = float(truth[k])
                records.append((u.dataset, u.algorithm, u.repeat, u.fold, int(row) + 1,
                                None if np.isnan(actual) else actual, float(u.predicted[k]),
                                None))
    return records


def _check_rope(rope: float, n_algorithms: int, baseline: str | None) -> None:
    """Refuse, before any work, a ``--rope`` that cannot be used."""
    import importlib.util
    import math

    if not (math.isfinite(rope) and rope >= 0):
        raise UsageError(f"--rope must be a finite number >= 0, got {rope}")
    if n_algorithms > 2 and baseline is None:
        raise UsageError("--rope compares two algorithms, or each algorithm with --baseline: "
                         "give --baseline to compare three or more")
    if importlib.util.find_spec("baycomp") is None:
        raise UsageError("--rope needs the baycomp package: pip install 'ensemblekit[bayes]'")


def _defined(scores, metric: str, notify: Notify) -> list:
    """The scores of ``metric`` whose (data set, algorithm) cell is a number in every fold.

    A measure can be undefined in a fold (a ROC area when the fold holds one class, a
    relative error when every test target equals the training mean); such a cell is
    left out of the tests over data sets and per-cell marks, as a failed cell is, with
    a note, rather than stopping the comparison.
    """
    import math

    undefined = sorted({(s.dataset, s.algorithm) for s in scores
                        if s.metric == metric and not math.isfinite(s.value)})
    for dataset, algorithm in undefined:
        notify(f"note: {metric} is undefined (NaN or infinite) in some fold of {algorithm} on "
               f"{dataset}; that cell is left out of the tests")
    bad = set(undefined)
    return [s for s in scores if s.metric == metric and (s.dataset, s.algorithm) not in bad]


def _pooled_reports(task: str, datasets, predictions, failed, options: dict) -> dict:
    """``(dataset, label) -> report`` of the out-of-fold predictions of every fold pooled,
    each relative error against its own fold's training prior (as Weka's
    cross-validation sums them)."""
    import numpy as np

    from ensemblekit.scores.classification import classification_report
    from ensemblekit.scores.regression import regression_report

    groups: dict[tuple, list] = {}
    for unit in predictions:
        groups.setdefault((unit.dataset, unit.algorithm), []).append(unit)
    by_name = {d.name: d for d in datasets}
    reports = {}
    for (name, label), units in groups.items():
        if (name, label) in failed:
            continue
        ds = by_name[name]
        truth = np.concatenate([ds.y[u.test] for u in units])
        if task == registry.CLASSIFICATION:
            proba = np.concatenate([u.proba for u in units])
            prior = np.concatenate([np.tile(u.prior, (u.test.size, 1)) for u in units])
            reports[(name, label)] = classification_report(
                truth.astype(np.intp), proba, prior, ds.class_values, **options)
        else:
            predicted = np.concatenate([u.predicted for u in units])
            prior = np.concatenate([np.full(u.test.size, u.prior) for u in units])
            reports[(name, label)] = regression_report(truth.astype(np.float64),
                                                                  predicted, prior)
    return reports
