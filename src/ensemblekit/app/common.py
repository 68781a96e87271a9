"""What every command shares: the reading context, notes, data preparation and parameters."""

from __future__ import annotations

import contextlib
import contextvars
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ensemblekit import registry
from ensemblekit.errors import UsageError

Notify = Callable[[str], None]


#: ``progress(total, description)`` returns a context manager that yields a callable
#: ``advance(steps=1)``, or None for no progress display.
Progress = Callable[[int, str], Any]


def _notifier(notify: Notify | None) -> Notify:
    if notify is not None:
        return notify
    return lambda message: warnings.warn(message, UserWarning, stacklevel=3)


def _no_progress(total: int, description: str):
    return contextlib.nullcontext(None)


_TIMINGS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("ensemblekit_timings",
                                                                      default=None)


@contextlib.contextmanager
def timings():
    """Record how long each stage of the work inside the ``with`` block takes.

    Yields
    ------
    dict
        Stage name (``"reading"``, ``"fitting"``, ``"units"``, ``"statistics"`` ...) ->
        seconds of wall time spent in it, in the order the stages were first entered;
        filled as the work goes (``ensemblekit --verbose`` prints it).

    Examples
    --------
    >>> with timings() as spent:                                   # doctest: +SKIP
    ...     fit("c45", "vote.arff")
    >>> spent                                                      # doctest: +SKIP
    {'reading': 0.011, 'fitting': 0.052}
    """
    spent: dict[str, float] = {}
    token = _TIMINGS.set(spent)
    try:
        yield spent
    finally:
        _TIMINGS.reset(token)


@contextlib.contextmanager
def stage(name: str):
    """Add the wall time of the ``with`` block to stage ``name`` of the enclosing
    :func:`timings` block (nothing outside one)."""
    spent = _TIMINGS.get()
    if spent is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        spent[name] = spent.get(name, 0.0) + time.perf_counter() - start


def timed(items, name: str):
    """Iterate over ``items``, adding the time each item takes to come to stage ``name``
    of the :func:`timings` block active now (also when iterated later, in another thread)."""
    spent = _TIMINGS.get()
    return iter(items) if spent is None else _timed(iter(items), name, spent)


def _timed(items, name: str, spent: dict):
    while True:
        start = time.perf_counter()
        try:
            item = next(items)
        except StopIteration:
            return
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
        yield item


_READING: contextvars.ContextVar[dict | None] = contextvars.ContextVar("ensemblekit_reading",
                                                                      default=None)


@contextlib.contextmanager
def reading(*, decimal: str | None = None, missing_values: Sequence[str] = (),
            header: bool | None = None, string_to_nominal: bool = False,
            notify: Notify | None = None, nominal: Sequence[str] = (),
            numeric: Sequence[str] = (), string: Sequence[str] = (), date: Sequence[str] = ()):
    """Set how data files are read by every function called inside the ``with`` block.

    As :func:`sklearn.config_context` does for scikit-learn's settings: the
    command line wraps each command in it, so that ``--decimal``,
    ``--missing-values`` and ``--header/--no-header`` reach every file a command
    reads (training, test and ``compare`` files), and the reader's notes reach
    stderr. Arguments given to :func:`load_data` itself take precedence.

    Parameters
    ----------
    decimal : {".", ","}, optional
        CSV decimal mark (default: ``.``, or ``,`` detected in ``;``-separated files).
    missing_values : sequence of str
        CSV cell values read as missing, besides the standard ones.
    header : bool, optional
        CSV: whether the first row names the columns (default: detected).
    string_to_nominal : bool, default=False
        ARFF: read string attributes as nominal (``--string-to-nominal``; see
        :func:`ensemblekit.data.load_dataset`); by default they are left out.
    notify : callable, optional
        Receives the reader's notes (default: :class:`UserWarning`).
    nominal, numeric, string, date : sequence of str
        CSV: columns read as that kind instead of the guessed one (``--nominal
        1,3-5``, ``--date when:yyyy-MM-dd``); see
        :func:`ensemblekit.data.load_dataset`. Prediction reads each column as
        the model's schema says, so it takes ``date`` only (to read dates into
        the numbers the model was trained on) and refuses the others.

    Raises
    ------
    ensemblekit.errors.InputError
        A column list or date format that cannot be read.

    Examples
    --------
    >>> with reading(decimal=",", missing_values=["unknown"]):        # doctest: +SKIP
    ...     result = compare(["knn", "c45"], ["euro.csv"], cv=3, repeats=1)
    """
    from ensemblekit.readers.columns import type_requests

    types = {"nominal": tuple(nominal), "numeric": tuple(numeric), "string": tuple(string),
             "date": tuple(date)}
    type_requests(**types)  # a list or format that cannot be read is refused before any file
    token = _READING.set({"decimal": decimal, "missing_values": tuple(missing_values),
                          "header": header, "string_to_nominal": string_to_nominal,
                          "notify": notify, "types": types})
    try:
        yield
    finally:
        _READING.reset(token)


def load_data(path, *, target: str | None = None, ignore: Sequence[str] = (),
              input_format: str | None = None, schema=None, allow_string: bool = False,
              no_class: bool = False, decimal: str | None = None,
              missing_values: Sequence[str] | None = None, header: bool | None = None,
              notify: Notify | None = None, name: str | None = None, typed: bool = True):
    """Read an ARFF or CSV file (``"-"``: standard input) into a :class:`~ensemblekit.data.Dataset`.

    Gzip-compressed files and input are decompressed (``x.arff.gz`` is ARFF).

    Parameters
    ----------
    path : str or path-like or Dataset or DataFrame or stream
        A Dataset is returned as it is (renamed when ``name`` is given). A pandas or
        polars DataFrame is read by its columns' types
        (:meth:`Dataset.from_frame <ensemblekit.dataset.Dataset.from_frame>`); neither
        library is imported unless such a frame is given. An open stream (``read()``
        giving text or bytes, as ``io.StringIO``) holding ARFF or CSV is read as a file.
    target : str, optional
        Class attribute (default: the last one, as Weka), matched case-insensitively
        when only one attribute matches.
    ignore : sequence of str
        Attributes dropped before anything else.
    input_format : {"arff", "csv"}, optional
        Default: by file extension, sniffed for ``"-"``.
    schema : Schema, optional
        Read the file against this schema (prediction, testing).
    allow_string, no_class : bool
    decimal, missing_values, header, notify
        How CSV is read and where notes go; see :func:`reading` and
        :func:`ensemblekit.data.load_dataset`. Default: the enclosing
        :func:`reading` block's, else the reader's defaults.
    name : str, optional
        The data set's name in results. Default: the file's stem; ``"frame"`` for a
        DataFrame; for a stream, an ARFF file's relation, else ``"stream"``.
    typed : bool, default=True
        Read with the enclosing block's column types (``--nominal`` ...); False
        for a file of another shape than the data (``cluster --members``).

    Raises
    ------
    UsageError
        ``target`` together with ``no_class``, or ``"-"`` while standard input is closed.
    ensemblekit.data.DataError
        The file cannot be read.
    """
    import sys
    from dataclasses import replace

    from ensemblekit.data import load_dataset
    from ensemblekit.dataset import Dataset
    from ensemblekit.frames import is_frame

    if isinstance(path, Dataset):
        return path if name is None else replace(path, name=name)
    if no_class and target is not None:
        raise UsageError(f"--target {target} and --no-class contradict each other: --no-class "
                         "makes every attribute a feature; give one of them")
    if is_frame(path):
        return Dataset.from_frame(path, target, name=name or "frame", ignore=tuple(ignore),
                                  no_class=no_class, schema=schema)
    stream = _stream_bytes(path)
    if stream is None and isinstance(path, str) and path == "-" and sys.stdin is None:
        raise UsageError("cannot read '-': standard input is closed")
    context = _READING.get() or {}
    if missing_values is None:
        missing_values = context.get("missing_values", ())
    with _stream_errors(stream is not None), stage("reading"):
        ds = load_dataset("-" if stream is not None else path, target=target, fmt=input_format,
                          schema=schema, ignore=tuple(ignore), allow_string=allow_string,
                          no_class=no_class, stdin=stream,
                          string_to_nominal=bool(context.get("string_to_nominal")),
                          decimal=context.get("decimal") if decimal is None else decimal,
                          missing_values=tuple(missing_values),
                          header=context.get("header") if header is None else header,
                          notify=_notifier(notify if notify is not None else context.get("notify")),
                          **(context.get("types", {}) if typed else {}))
    if stream is not None:
        ds.source = _STREAM
        ds.name = name or (ds.name if ds.format == "arff" else "stream")
    elif name is not None:
        ds.name = name
    return ds


#: How a stream given as data is shown in messages.
_STREAM = "<stream>"


def _stream_bytes(obj):
    """The bytes of an open stream (text encoded as UTF-8) as a binary stream; None when
    ``obj`` is not a stream (a path, ``"-"``)."""
    import io

    if isinstance(obj, (str, bytes)) or not callable(getattr(obj, "read", None)):
        return None
    data = obj.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, bytes):
        raise UsageError(f"the stream given as data read {type(data).__name__}, not text or bytes")
    return io.BytesIO(data)


@contextlib.contextmanager
def _stream_errors(active: bool):
    """Name a stream as ``<stream>`` rather than ``<stdin>`` in the reader's errors."""
    from ensemblekit.dataset import DataError

    try:
        yield
    except DataError as exc:
        if not active or exc.source != "<stdin>":
            raise
        raise DataError(exc.what, _STREAM, exc.line) from None


def describe_data(data, **load_options) -> dict:
    """Schema, missing values and class counts of a data set (``info``), as plain data.

    Parameters
    ----------
    data : path, Dataset, DataFrame or stream
        As :func:`load_data` reads it (a pandas or polars DataFrame by its dtypes).
    **load_options
        As :func:`load_data` (``allow_string`` is on).

    Returns
    -------
    dict
        ``file``, ``relation``, ``instances``, ``attributes`` (name, type, role,
        missing count, and min/max/mean or number of values) and ``class``.
    """
    import numpy as np

    from ensemblekit.dataset import known_class

    ds = load_data(data, allow_string=True, **load_options)
    attrs = []
    feature_pos = 0
    for index, a in enumerate(ds.schema.attributes):
        if index == ds.schema.class_index:
            col = ds.y.astype(float) if ds.y is not None else None
            if col is not None and a.kind != "numeric":  # codes of nominal or string values
                col = np.where(known_class(ds.y), col, np.nan)
            role = "class"
        else:
            # one column of the rows, contiguous: each pass below then reads 8 bytes a row
            col = np.ascontiguousarray(ds.X[:, feature_pos])
            feature_pos += 1
            role = "feature"
        absent = np.isnan(col) if col is not None else np.zeros(0, dtype=bool)
        missing = int(absent.sum())
        date = a.date_format  # a date is a number (milliseconds), as in Weka
        entry = {"name": a.name, "type": a.kind if date is None else "date", "role": role,
                 "missing": missing, **({} if date is None else {"format": date})}
        if a.kind == "numeric":
            present = (col[~absent] if missing else col) if col is not None else np.array([])
            if present.size:
                entry.update(min=float(present.min()), max=float(present.max()),
                             mean=float(present.mean()))
        else:
            entry["values"] = len(a.values)
        attrs.append(entry)
    out = {"file": ds.source, "relation": ds.schema.relation, "instances": ds.n_instances,
           "attributes": attrs}
    cls = ds.schema.class_attribute
    if cls is not None and cls.kind == "nominal":
        counts = np.bincount(ds.y[known_class(ds.y)], minlength=len(cls.values))
        out["class"] = {"name": cls.name, "counts": dict(zip(cls.values, map(int, counts)))}
    elif cls is not None:
        out["class"] = {"name": cls.name, "type": cls.kind}
    return out


def _class_for(task: str, ds, target=None, notify: Notify = None):
    """The data set with its class read as ``task`` reads it.

    For classifiers (and clusterers given a target) a CSV column of whole numbers
    becomes a nominal class; regression algorithms keep the class numeric. When that
    column is the last one, taken as the class by default, ``notify`` gets a note naming
    it and its values, since a year or an id in the last column is easily classified by
    mistake.
    """
    if task == registry.CLASSIFICATION or (task == registry.CLUSTERING and target is not None):
        before = ds.schema.class_attribute
        out = ds.with_nominal_class()
        after = out.schema.class_attribute
        if (notify is not None and target is None and before is not None
                and before.kind == "numeric" and after is not None and after.kind == "nominal"):
            shown = ", ".join(after.values[:5]) + (", ..." if len(after.values) > 5 else "")
            notify(f"note: {ds.source}: the class is the last column '{after.name}', whole "
                   f"numbers read as {len(after.values)} nominal values ({shown}); --target "
                   "names another")
        return out
    return ds


def _labelled(ds):
    """Mask of the rows whose class (or target) value is known."""
    from ensemblekit.dataset import known_class

    return known_class(ds.y)


def _class_all_missing(ds) -> bool:
    """Whether ``ds`` has a class attribute but not one row with a known class value."""
    if ds.y is None or ds.schema.class_attribute is None or len(ds.y) == 0:
        return False
    return not bool(_labelled(ds).any())


def _prepare_for(task: str, ds, target=None, algo: str | None = None, notify: Notify = None):
    """Check a data set (its class already read by :func:`_class_for`) for ``task``."""
    cls = ds.schema.class_attribute
    if task == registry.REGRESSION and (cls is None or cls.kind != "numeric"):
        who = f"{algo or 'the algorithm'} is a regression algorithm"
        what = ("the data has no class attribute" if cls is None
                else f"the class '{cls.name}' is nominal")
        raise UsageError(f"{ds.source}: {who} and {what}; name a numeric target with --target")
    if (task == registry.CLUSTERING and target is None and cls is not None
            and cls.kind == "numeric"):
        _notifier(notify)(f"note: {ds.source}: last attribute '{cls.name}' is numeric, so it is "
                          "clustered as a feature; name a class with --target to score against it")
        ds = ds.class_as_feature()
    if ds.X.shape[1] == 0:
        raise UsageError(f"{ds.source}: no attributes besides the class '{cls.name}'" if cls else
                         f"{ds.source}: no attributes")
    if _class_all_missing(ds):
        cls = ds.schema.class_attribute
        why = ("so the clusters cannot be scored against it; drop it with --ignore "
               f"{cls.name} or name another class with --target" if task == registry.CLUSTERING
               else "so there is nothing to learn from; name another class with --target")
        raise UsageError(f"{ds.source}: every instance's class value is missing (class "
                         f"'{cls.name}'), {why}")
    return ds


def _load_for(task: str, data, *, target=None, ignore=(), input_format=None, no_class=False,
              algo: str | None = None, notify: Notify = None):
    """Load a file for fitting or evaluating an algorithm of ``task``.

    Classifiers need a nominal class (an inferred whole-number CSV column counts).
    Regression algorithms need a numeric class, kept as numbers. Clusterers use the
    class only to score against: when none is named and the last attribute is
    numeric, it is kept as a feature (Weka's clusterers cannot score against a
    numeric class either), with a note.
    """
    ds = load_data(data, target=target, ignore=ignore, input_format=input_format,
                   no_class=no_class)
    return _prepare_for(task, _class_for(task, ds, target, _notifier(notify)), target, algo,
                        notify)


def _training_rows(ds, task: str, algorithm: str, notify: Notify):
    """``(X, y)`` of the rows a ``task`` algorithm can learn from (y None for clusterers)."""
    if task == registry.CLUSTERING:
        return ds.X, None
    cls = ds.schema.class_attribute
    if task == registry.CLASSIFICATION and (cls is None or cls.kind != "nominal"):
        kind = "no class attribute" if cls is None else f"a numeric class attribute '{cls.name}'"
        raise UsageError(f"{ds.source}: {algorithm} is a classifier but the data has {kind}; "
                         "name a nominal class with --target")
    keep = _labelled(ds)
    what = "class" if task == registry.CLASSIFICATION else "target"
    if not keep.any():
        raise UsageError(f"{ds.source}: every instance has a missing class value" if
                         task == registry.CLASSIFICATION else
                         f"{ds.source}: every instance has a missing target value "
                         f"('{cls.name}')")
    if not keep.all():
        notify(f"note: {int((~keep).sum())} instances with a missing {what} value were left out")
    return _labelled_rows(ds, task)


def _instance_weights(ds, spec, rows=None):
    """The instance weights to fit ``spec``'s estimator with (of ``rows`` when given); None
    when every weight is 1.

    An algorithm takes them when its model or estimator class says so: a ``fit_coded`` or
    ``fit`` with an ``instance_weights`` parameter (Weka's meaning, as ``C45Tree``'s and
    ``K2Classifier``'s).

    Raises
    ------
    UsageError
        The file gives weights other than 1 and the algorithm does not take them.
    """
    import inspect


    if not ds.weighted:
        return None
    fits = [getattr(cls, name, None) for cls in (spec.model_class(), spec.estimator_class())
            for name in ("fit_coded", "fit")]
    if not any(f is not None and "instance_weights" in inspect.signature(f).parameters
               for f in fits):
        raise UsageError(f"{ds.source}: {spec.name} does not take instance weights, and the file "
                         f"gives weights other than 1 (the first on line "
                         f"{ds.first_weighted_line}); c45, iec45, k2 and iebn take them")
    return ds.weights if rows is None else ds.weights[rows]


def _refuse_weighted(ds, what: str) -> None:
    """Refuse instance weights other than 1 where they would be ignored (``what`` says where).

    Weka's evaluation weighs every training and test instance; ensemblekit's scores do not
    yet, so a weighted file is refused rather than evaluated as if unweighted.
    """

    if ds.weighted:
        raise UsageError(f"{ds.source}: gives instance weights other than 1 (the first on line "
                         f"{ds.first_weighted_line}), which {what} does not use yet; fit c45 on "
                         "it, or remove the weights")


def _labelled_rows(ds, task: str):
    """``(X, y)`` of the rows with a known class, ``y`` as a ``task`` model learns it (class
    codes, or float targets): what a model's training-data fingerprint is made of."""
    import numpy as np

    keep = _labelled(ds)
    y = ds.y[keep] if task == registry.CLASSIFICATION else np.asarray(ds.y, dtype=np.float64)[keep]
    return ds.X[keep], y


def resolve_params(algorithm: str, params: dict | None = None, n_clusters: int | None = None):
    """The registry entry of ``algorithm`` and its parameters, defaults filled in.

    Parameters
    ----------
    algorithm : str
        Registry name.
    params : dict, optional
        Parameter values by the estimator's own names: text (as ``--set`` gives it,
        parsed) or Python values (checked).
    n_clusters : int, optional
        ``-k``: the number of clusters of a clustering algorithm.

    Returns
    -------
    spec : AlgorithmSpec
    values : dict

    Raises
    ------
    ensemblekit.registry.UnknownAlgorithmError, ensemblekit.registry.ParameterError
    UsageError
        ``n_clusters`` given to an algorithm that has none.
    """
    spec = registry.get(algorithm)
    given = dict(params or {})
    values = spec.resolve({k: v for k, v in given.items() if isinstance(v, str)})
    by_name = {p.name: p for p in spec.params}
    for key, value in given.items():
        if not isinstance(value, str):
            values[key] = by_name[key].check(value)
    if n_clusters is not None:
        if "n_clusters" not in by_name:
            raise UsageError(f"-k applies to clustering algorithms; {algorithm} is a {spec.task} "
                             "algorithm")
        values["n_clusters"] = by_name["n_clusters"].check(n_clusters)
    return spec, values


def _default_n_clusters(ds, n_clusters: int | None, params: dict | None) -> int | None:
    """-k, else the n_clusters parameter, else the number of classes present in the data."""
    import numpy as np

    if n_clusters is not None or "n_clusters" in (params or {}):
        return n_clusters
    cls = ds.schema.class_attribute
    if cls is None or cls.kind != "nominal":
        raise UsageError(f"{ds.source}: no nominal class to take the number of clusters from; "
                         "give -k")
    return int(len(np.unique(ds.y[_labelled(ds)])))


def _refuse_targets_only(spec, command: str) -> None:
    """An algorithm that needs targets (ss-isca) runs only under ``cluster --targets``."""
    if spec.needs_targets:
        raise UsageError(f"{spec.name} needs target columns, which only 'ensemblekit cluster "
                         f"{spec.name} DATA --targets NAME,...' gives it; '{command}' cannot run "
                         "it (cluster --save keeps the model)")


def _metadata(algorithm: str, spec, params: dict, seed: int, ds, X, y, **extra) -> dict:
    """A fitted model's metadata. ``training_data`` records the data's name, size and
    fingerprint (for the resubstitution warning of ``evaluate``) and what the relative
    errors are measured against: the class counts of a classifier's training rows, the
    mean target of a regression's."""
    import numpy as np

    from ensemblekit.persistence import data_fingerprint

    train = {"name": ds.name, "instances": int(X.shape[0]), "fingerprint": data_fingerprint(X, y)}
    if spec.task == registry.CLASSIFICATION:
        counts = np.bincount(np.asarray(y, dtype=np.intp),
                             minlength=len(ds.schema.class_attribute.values))
        train["class_counts"] = [int(c) for c in counts]
    elif spec.task == registry.REGRESSION:
        train["target_mean"] = float(np.mean(y))
    # the entry's own name: a model fitted as "j48" is a c45 model
    return {"algorithm": spec.name, "task": spec.task, "params": params, "seed": seed,
            "schema": ds.schema.to_dict(), "training_data": train, **extra}


def worker_count(n_jobs: int) -> int:
    """The number of workers ``n_jobs`` stands for (joblib's negative values).

    Raises
    ------
    UsageError
        Zero, or more than :data:`ensemblekit.experiment.MAX_WORKERS_PER_CORE` per core.
    """
    from ensemblekit.experiment import worker_count as count

    try:
        return count(n_jobs, name="--n-jobs")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _metrics_for(task: str, metrics: Sequence[str]) -> list[str]:
    from ensemblekit.metrics import METRICS, UnknownMetricError, default_metrics, metric_spec

    chosen = list(metrics) or list(default_metrics(task))
    for m in chosen:
        try:
            spec = metric_spec(m)
        except UnknownMetricError as exc:
            raise UsageError(str(exc)) from None
        if not spec.applies_to(task):
            valid = ", ".join(name for name, info in METRICS.items() if info.applies_to(task))
            raise UsageError(f"metric {m!r} is for {' and '.join(spec.tasks)}, not {task}; "
                             "valid metrics "
                             f"for {task}: {valid}")
    return chosen
