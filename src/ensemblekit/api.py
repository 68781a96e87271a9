"""The application layer: what every ``ensemblekit`` command does, callable from Python.

The command line and notebooks share these functions. Each takes paths (or
:class:`~ensemblekit.data.Dataset` objects) and plain values, and returns a result
object of :mod:`ensemblekit.results`; none prints or writes a file, except
:func:`save_model` and :func:`plot_comparison`, which write the file they are
given (for plots, one file per metric named after it). Notes meant for the user
(a skipped data set, a left-out row) go to the ``notify`` callback, or become
:class:`UserWarning`\\ s when none is given.

Examples
--------
>>> from ensemblekit import compare
>>> result = compare(["kmeans", "iekm"], ["sample_data/iris.arff"], runs=3, seed=1)
...                                                            # doctest: +SKIP
>>> result.table("nmi")["iris"]                                # doctest: +SKIP
{'kmeans': 0.7..., 'iekm': 0.7...}

The module imports no numeric library until a function runs, so the command line
starts fast.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ensemblekit import registry
from ensemblekit.errors import InputError
from ensemblekit.results import Clustering, Comparison, FittedModel, KSelection, ModelEvaluation, Prediction

__all__ = ["UsageError", "cluster", "compare", "describe_data", "describe_model", "evaluate",
           "evaluate_model", "evaluate_split", "fit", "load_data", "load_model", "plot_comparison",
           "plot_paths", "predict", "predict_chunks", "reading", "save_model", "select_k", "split_rows"]

Notify = Callable[[str], None]
#: ``progress(total, description)`` returns a context manager that yields a callable
#: ``advance(steps=1)``, or None for no progress display.
Progress = Callable[[int, str], Any]


class UsageError(InputError):
    """A request that cannot be carried out as asked: the message says what to change."""


def input_errors() -> tuple[type[Exception], ...]:
    """The exception types that mean bad usage or bad input (the command line's exit code 2).

    Their messages name the file, line, attribute or parameter at fault.
    """
    from ensemblekit.data import DataError
    from ensemblekit.experiment.protocol import ProtocolError
    from ensemblekit.persistence import ModelFileError
    from ensemblekit.plots import PlotError

    return (DataError, registry.ParameterError, registry.UnknownAlgorithmError, UsageError,
            ModelFileError, ProtocolError, PlotError)


def _notifier(notify: Notify | None) -> Notify:
    if notify is not None:
        return notify
    return lambda message: warnings.warn(message, UserWarning, stacklevel=3)


def _no_progress(total: int, description: str):
    return contextlib.nullcontext(None)


_READING: contextvars.ContextVar[dict | None] = contextvars.ContextVar("ensemblekit_reading",
                                                                      default=None)


@contextlib.contextmanager
def reading(*, decimal: str | None = None, missing_values: Sequence[str] = (),
            header: bool | None = None, notify: Notify | None = None):
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
    notify : callable, optional
        Receives the reader's notes (default: :class:`UserWarning`).

    Examples
    --------
    >>> with reading(decimal=",", missing_values=["unknown"]):        # doctest: +SKIP
    ...     result = compare(["knn", "c45"], ["euro.csv"], cv=3, repeats=1)
    """
    token = _READING.set({"decimal": decimal, "missing_values": tuple(missing_values),
                          "header": header, "notify": notify})
    try:
        yield
    finally:
        _READING.reset(token)


# --------------------------------------------------------------------------- data
def load_data(path, *, target: str | None = None, ignore: Sequence[str] = (),
              input_format: str | None = None, schema=None, allow_string: bool = False,
              no_class: bool = False, decimal: str | None = None,
              missing_values: Sequence[str] | None = None, header: bool | None = None,
              notify: Notify | None = None):
    """Read an ARFF or CSV file (``"-"``: standard input) into a :class:`~ensemblekit.data.Dataset`.

    Gzip-compressed files and input are decompressed (``x.arff.gz`` is ARFF).

    Parameters
    ----------
    path : str or path-like or Dataset
        A Dataset is returned as it is.
    target : str, optional
        Class attribute (default: the last one, as Weka).
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

    Raises
    ------
    UsageError
        ``target`` together with ``no_class``, or ``"-"`` while standard input is closed.
    ensemblekit.data.DataError
        The file cannot be read.
    """
    import sys

    from ensemblekit.data import Dataset, load_dataset

    if isinstance(path, Dataset):
        return path
    if no_class and target is not None:
        raise UsageError(f"--target {target} and --no-class contradict each other: --no-class "
                         "makes every attribute a feature; give one of them")
    if path == "-" and sys.stdin is None:
        raise UsageError("cannot read '-': standard input is closed")
    context = _READING.get() or {}
    if missing_values is None:
        missing_values = context.get("missing_values", ())
    return load_dataset(path, target=target, fmt=input_format, schema=schema, ignore=tuple(ignore),
                        allow_string=allow_string, no_class=no_class,
                        decimal=context.get("decimal") if decimal is None else decimal,
                        missing_values=tuple(missing_values),
                        header=context.get("header") if header is None else header,
                        notify=_notifier(notify if notify is not None else context.get("notify")))


def describe_data(data, **load_options) -> dict:
    """Schema, missing values and class counts of a data set (``info``), as plain data.

    Parameters
    ----------
    data : path or Dataset
    **load_options
        As :func:`load_data` (``allow_string`` is on).

    Returns
    -------
    dict
        ``file``, ``relation``, ``instances``, ``attributes`` (name, type, role,
        missing count, and min/max/mean or number of values) and ``class``.
    """
    import numpy as np

    from ensemblekit.data import known_class

    ds = load_data(data, allow_string=True, **load_options)
    attrs = []
    feature_pos = 0
    for index, a in enumerate(ds.schema.attributes):
        if index == ds.schema.class_index:
            col = ds.y.astype(float) if ds.y is not None else None
            if col is not None and a.kind == "nominal":
                col = np.where(known_class(ds.y), col, np.nan)
            role = "class"
        else:
            col = ds.X[:, feature_pos]
            feature_pos += 1
            role = "feature"
        missing = int(np.isnan(col).sum()) if col is not None else 0
        entry = {"name": a.name, "type": a.kind, "role": role, "missing": missing}
        if a.kind == "numeric":
            present = col[~np.isnan(col)] if col is not None else np.array([])
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
        out["class"] = {"name": cls.name, "type": "numeric"}
    return out


def _class_for(task: str, ds, target=None):
    """The data set with its class read as ``task`` reads it.

    For classifiers (and clusterers given a target) a CSV column of whole numbers
    becomes a nominal class; regression algorithms keep the class numeric.
    """
    if task == registry.CLASSIFICATION or (task == registry.CLUSTERING and target is not None):
        return ds.with_nominal_class()
    return ds


def _labelled(ds):
    """Mask of the rows whose class (or target) value is known."""
    from ensemblekit.data import known_class

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
    return _prepare_for(task, _class_for(task, ds, target), target, algo, notify)


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


def _labelled_rows(ds, task: str):
    """``(X, y)`` of the rows with a known class, ``y`` as a ``task`` model learns it (class
    codes, or float targets): what a model's training-data fingerprint is made of."""
    import numpy as np

    keep = _labelled(ds)
    y = ds.y[keep] if task == registry.CLASSIFICATION else np.asarray(ds.y, dtype=np.float64)[keep]
    return ds.X[keep], y


# --------------------------------------------------------------------------- parameters
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


# --------------------------------------------------------------------------- models
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


def fit(algorithm: str, data, *, target: str | None = None, params: dict | None = None,
        seed: int = 1, n_clusters: int | None = None, no_class: bool = False,
        ignore: Sequence[str] = (), input_format: str | None = None,
        notify: Notify | None = None) -> FittedModel:
    """Fit a registered algorithm to a data set (``ensemblekit fit``).

    Parameters
    ----------
    algorithm : str
        Registry name (see ``ensemblekit algorithms``).
    data : path or Dataset
    target, ignore, input_format, no_class
        As :func:`load_data`.
    params : dict, optional
        Parameters by name (see :func:`resolve_params`).
    seed : int
        Random seed of the estimator.
    n_clusters : int, optional
        Clusterers: default the number of classes in the data.

    Returns
    -------
    FittedModel

    Raises
    ------
    UsageError
        The data does not suit the algorithm, or the estimator refuses it.
    """
    notify = _notifier(notify)
    spec = registry.get(algorithm)
    _refuse_targets_only(spec, "fit")
    ds = _load_for(spec.task, data, target=target, ignore=ignore, input_format=input_format,
                   no_class=no_class, algo=algorithm, notify=notify)
    if spec.task == registry.CLUSTERING:
        n_clusters = _default_n_clusters(ds, n_clusters, params)
    spec, values = resolve_params(algorithm, params, n_clusters)
    X, y = _training_rows(ds, spec.task, algorithm, notify)
    model = registry.make_estimator(algorithm, ds.schema, values, seed)
    try:
        model.fit(X, y)
    except ValueError as exc:
        raise UsageError(f"{ds.source}: {algorithm} cannot be fitted: {exc}") from None
    return FittedModel(model, _metadata(algorithm, spec, values, seed, ds, X, y))


def save_model(model: FittedModel, path) -> None:
    """Write a fitted model to ``path`` (atomically; see :mod:`ensemblekit.persistence`)."""
    from ensemblekit.persistence import save_model as write

    write(path, model.pipeline, model.metadata)


def read_model_metadata(path) -> dict:
    """A model file's metadata, checked to hold what the commands rely on.

    Raises
    ------
    ensemblekit.persistence.ModelFileError
        If a required key is missing or does not fit the registry.
    """
    from ensemblekit.data import Schema
    from ensemblekit.persistence import ModelFileError, read_metadata

    metadata = read_metadata(path)
    try:
        spec = registry.get(metadata["algorithm"])
        if metadata["task"] != spec.task:
            raise ValueError(f"task {metadata['task']!r} is not {spec.name}'s ({spec.task})")
        schema = Schema.from_dict(metadata["schema"])
        if not isinstance(metadata["params"], dict):
            raise ValueError("params is not a mapping")
        if spec.task == registry.CLASSIFICATION and (
                schema.class_attribute is None or schema.class_attribute.kind != "nominal"):
            raise ValueError("a classifier's schema needs a nominal class")
        if spec.task == registry.REGRESSION and (
                schema.class_attribute is None or schema.class_attribute.kind != "numeric"):
            raise ValueError("a regression model's schema needs a numeric class")
        _training_prior(metadata, schema)
    except (KeyError, TypeError, ValueError, registry.UnknownAlgorithmError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ModelFileError(f"{path}: the model's metadata is damaged ({what})") from None
    return metadata


def load_model(path) -> FittedModel:
    """Load a model file and check that the estimator is exactly the one its metadata names.

    The file is untrusted input: :func:`ensemblekit.persistence.load_model` allows
    only exact types and checks their state; here the estimator must be the class
    of the registry entry the metadata names, read the schema's width, and (for a
    classifier) have class codes that index the schema's class values.

    Raises
    ------
    ensemblekit.persistence.ModelFileError
    """
    import numpy as np
    from sklearn.pipeline import Pipeline

    from ensemblekit.data import Schema
    from ensemblekit.persistence import ModelFileError
    from ensemblekit.persistence import load_model as read

    read_model_metadata(path)
    pipeline, metadata = read(path)
    spec = registry.get(metadata["algorithm"])
    steps = pipeline.steps if type(pipeline) is Pipeline else []
    step = steps[-1][1] if [name for name, _ in steps] == ["prep", "model"] else None
    if step is None or type(step) is not spec.estimator_class():
        raise ModelFileError(f"{path}: the stored estimator is not a {spec.name} model")
    schema = Schema.from_dict(metadata["schema"])
    first = steps[0][1] if steps[0][1] != "passthrough" else step
    width = getattr(first, "n_features_in_", None)
    if width is not None and width != len(schema.features):
        raise ModelFileError(f"{path}: the model file is damaged: its schema has "
                             f"{len(schema.features)} attributes but the estimator reads {width}")
    if spec.task == registry.CLASSIFICATION:
        codes = np.asarray(getattr(step, "classes_", ()))
        n_values = len(schema.class_attribute.values)
        if codes.ndim != 1 or codes.size == 0 or codes.dtype.kind not in "iuf" or np.any(
                (codes < 0) | (codes >= n_values) | (codes != np.round(codes))):
            raise ModelFileError(f"{path}: the model file is damaged: its classes do not index "
                                 f"the {n_values} values of class "
                                 f"'{schema.class_attribute.name}'")
    return FittedModel(pipeline, metadata)


def _as_model(model) -> FittedModel:
    return model if isinstance(model, FittedModel) else load_model(model)


def _schema_of(model: FittedModel):
    from ensemblekit.data import Schema

    return Schema.from_dict(model.metadata["schema"])


def describe_model(model, top: int = 15) -> dict:
    """What a fitted model learned, as plain data, for ``show``.

    Parameters
    ----------
    model : FittedModel or path
    top : int
        Rules (isca) listed at most.

    Returns
    -------
    dict
        ``metadata``; ``kind``, the registry entry's ``model_summary`` ("prototypes",
        "tree", "network", "bagged-networks", "rule-clusters", "rule-ensemble",
        "stored-instances" or "none"); ``feature_names`` (the columns the estimator
        reads), ``attribute_names``, ``class_name``, ``class_values``; ``estimator``,
        the fitted estimator; and by kind: ``centers`` and training ``sizes``
        (prototypes), ``nodes`` (network: name, values, parents, CPT shape),
        ``bag_sizes`` and ``arcs`` (bagged networks: distinct rows per bag, arcs per
        network), ``sizes``, ``rules`` and ``n_rules`` (rule clusters); ``category_names``
        (trees: the values of each nominal attribute, None for a numeric one, with which a
        C4.5 tree prints itself as Weka's J48 does).
    """
    import numpy as np

    model = _as_model(model)
    schema = _schema_of(model)
    spec = registry.get(model.algorithm)
    cls = schema.class_attribute
    est = model.estimator
    names = registry.model_feature_names(model.algorithm, schema)
    out = {"metadata": model.metadata, "kind": spec.model_summary, "feature_names": names,
           "attribute_names": [a.name for a in schema.features],
           "class_name": cls.name if cls is not None else "class",
           "class_values": list(cls.values) if cls is not None and cls.kind == "nominal" else [],
           "estimator": est}
    if spec.model_summary == "prototypes":
        centers = est.cluster_centers_
        labels = getattr(est, "labels_", None)
        out["centers"] = centers
        out["sizes"] = (np.bincount(labels, minlength=len(centers)) if labels is not None
                        else np.zeros(len(centers), dtype=int))
    elif spec.model_summary == "tree":
        out["category_names"] = [list(a.values) if a.kind != "numeric" else None
                                 for a in schema.features]
    elif spec.model_summary == "network":
        out["nodes"] = est.network(names, out["class_name"])
    elif spec.model_summary == "bagged-networks":
        out["bag_sizes"] = [len(set(map(int, rows))) for rows in est.estimators_samples_]
        out["arcs"] = [sum(len(p) for p in member.parents_) for member in est.estimators_]
    elif spec.model_summary == "rule-clusters":
        out["sizes"] = np.bincount(est.labels_, minlength=est.n_clusters)
        out["rules"] = est.describe_rules(names, top=top)
        out["n_rules"] = est.n_rules_
    return out


def network_dot(model) -> str:
    """A Bayesian-network model as Graphviz DOT (``show --graph``).

    Raises
    ------
    UsageError
        The model is not a Bayesian network.
    """
    model = _as_model(model)
    if registry.get(model.algorithm).model_summary != "network":
        raise UsageError(f"--graph: a {model.algorithm} model is not a Bayesian network")
    schema = _schema_of(model)
    names = registry.model_feature_names(model.algorithm, schema)
    return model.estimator.to_dot(names, schema.class_attribute.name)


#: Rows given to the model at a time by :func:`predict` (one progress step).
PREDICT_CHUNK = 500


def predict(model, data, *, proba: bool = False, input_format: str | None = None,
            n_jobs: int | None = None, progress: Progress | None = None,
            chunk_rows: int | None = None, scheduler: str | None = None) -> Prediction:
    """Predict every row of a data set with a fitted model (``ensemblekit predict``).

    The rows of a file are read, predicted and gathered chunk by chunk (see
    :func:`predict_chunks`); the result is the same for any chunk size, and
    equals one prediction call on all the rows in file order.

    Parameters
    ----------
    model : FittedModel or path
        A path is loaded with :func:`load_model`.
    data : path or Dataset
        Read against the model's training schema. The class column is not
        read: its values, known or not, missing, or the column left out, give
        the same predictions.
    proba : bool
        Also give class probabilities over every class value of the schema.
    n_jobs : int, optional
        Workers for models that predict rows in parallel (lazy ensembles, knn);
        the output does not depend on it. Not with ``scheduler``.
    progress : callable, optional
        See :data:`Progress`; rows go to the model in chunks of
        :data:`PREDICT_CHUNK`. The result is the same for any chunk size: a
        model whose predictions depend on earlier rows (knn's ranges, which
        each test row widens, as Weka's IBk) gets them across chunks.
    chunk_rows : int, optional
        Rows read from a file at a time (default
        :data:`ensemblekit.streaming.CHUNK_ROWS`).
    scheduler : str, optional
        Address of a Dask distributed scheduler (``tcp://host:8786``): the rows
        are predicted on its workers, :data:`PREDICT_CHUNK` rows per task, each
        task on one core; the output is identical to a serial run (see
        :func:`predict_chunks`).

    Returns
    -------
    Prediction

    Raises
    ------
    UsageError
        The model cannot label new rows, has no probabilities, or refuses the
        data; or both ``n_jobs`` and ``scheduler`` are given.
    ensemblekit.data.DataError
        The file cannot be read against the model's schema.
    ensemblekit.experiment.ProtocolError
        The scheduler cannot be reached, or the ``distributed`` package is missing.
    """
    import numpy as np

    parts = list(predict_chunks(model, data, proba=proba, input_format=input_format, n_jobs=n_jobs,
                                progress=progress, chunk_rows=chunk_rows, scheduler=scheduler))
    first = parts[0]
    labels = [v for p in parts for v in p.predictions]
    probabilities = None if first.probabilities is None else np.concatenate(
        [p.probabilities for p in parts])
    return Prediction(first.task, labels, probabilities, first.classes, first.prediction_values)


def predict_chunks(model, data, *, proba: bool = False, input_format: str | None = None,
                   n_jobs: int | None = None, progress: Progress | None = None,
                   chunk_rows: int | None = None, scheduler: str | None = None):
    """Predict a data set chunk by chunk: read some rows, predict them, yield, read on.

    Memory does not grow with the number of rows of a file, and the first
    predictions come as soon as the first chunk is read: ``ensemblekit
    predict`` writes each chunk before it reads the next.

    With a ``scheduler``, the model is sent to the cluster once and every
    :data:`PREDICT_CHUNK` rows of a chunk are one task; the tasks of at most a
    few chunks are under way at a time (the next chunks are read while the
    workers predict), and each chunk is yielded once all its tasks are back,
    in file order. A task computes exactly what a serial run computes for
    those rows, on one core, so the output is identical byte for byte: a
    model whose predictions depend on the rows before (knn's widening ranges)
    gets, with each task, what those rows changed.

    Parameters
    ----------
    model, data, proba, input_format, n_jobs, progress, chunk_rows, scheduler
        As in :func:`predict`. A file is read with
        :func:`ensemblekit.streaming.iter_chunks` (CSV options and notes from
        the enclosing :func:`reading` block); a Dataset is cut into chunks.

    Yields
    ------
    Prediction
        One per chunk, each for at least one row, in file order; the rows of
        one chunk follow those of the one before. Concatenated, they are
        what :func:`predict` returns.

    Raises
    ------
    UsageError
        The model cannot label new rows, has no probabilities, or refuses the
        data (raised before anything is read), or both ``n_jobs`` and
        ``scheduler`` are given.
    ensemblekit.data.DataError
        The file cannot be read against the model's schema; raised when the
        chunk that holds the fault is read, after the chunks before it were
        yielded.
    ensemblekit.experiment.ProtocolError
        The scheduler cannot be reached (raised before anything is read).
    """
    import numpy as np

    from ensemblekit.class_domain import widen_proba
    from ensemblekit.data import Dataset

    source = model if not isinstance(model, FittedModel) else model.algorithm
    if n_jobs is not None and scheduler is not None:
        raise UsageError("--n-jobs and --scheduler: give one of them (with --scheduler, the "
                         "cluster's worker threads predict the rows, each on one core)")
    model = _as_model(model)
    if n_jobs is not None:
        workers = worker_count(n_jobs)
        if "n_jobs" in model.estimator.get_params(deep=False):
            model.pipeline.set_params(model__n_jobs=workers)
    metadata, pipeline = model.metadata, model.pipeline
    task = metadata["task"]
    schema = _schema_of(model)
    if not registry.get(metadata["algorithm"]).predicts_new_rows:
        raise UsageError(f"{metadata['algorithm']} models cannot label new rows (the algorithm "
                         "has no out-of-sample rule); use 'ensemblekit cluster' on the file "
                         "instead")
    if proba and task != registry.CLASSIFICATION:
        raise UsageError(f"{metadata['algorithm']} is a {task} model; it has no class "
                         "probabilities")
    classes = schema.class_attribute.values if task == registry.CLASSIFICATION else ()
    cluster_values = ()
    if task not in (registry.CLASSIFICATION, registry.REGRESSION):
        cluster_values = tuple(str(i) for i in range(int(metadata["params"].get("n_clusters", 0))))

    if isinstance(data, Dataset):  # already in memory: one chunk
        chunks = iter([data])
    else:  # a generator: nothing is read yet
        chunks = _read_chunks(data, schema, input_format, chunk_rows)
    if scheduler is not None:  # connected before anything is read: a failure is reported at once
        from ensemblekit.experiment.runner import connect

        outputs = _predict_on_cluster(connect(scheduler), pipeline, chunks, proba, progress, source)
    else:
        outputs = _predict_in_order(pipeline, chunks, proba, progress, source)

    for _chunk, parts in outputs:
        codes = np.concatenate([c for c, _ in parts])
        known = [p for _, p in parts]
        if task == registry.REGRESSION:
            yield Prediction(task, [float(v) for v in np.asarray(codes, dtype=np.float64).ravel()])
        elif task != registry.CLASSIFICATION:
            yield Prediction(task, [str(int(c)) for c in codes], prediction_values=cluster_values)
        elif not proba:
            yield Prediction(task, [classes[int(c)] for c in codes], prediction_values=tuple(classes))
        else:
            full = widen_proba(np.concatenate(known), pipeline.classes_, len(classes))
            yield Prediction(task, [classes[int(c)] for c in codes], full, tuple(classes),
                             tuple(classes))


def _predict_rows(pipeline, X, proba: bool):
    """Predict the rows ``X`` in one call of the model: ``(codes or values, probabilities or None)``.

    With ``proba``, one pass: every classifier here predicts the arg-max of its
    probabilities (the first on ties).
    """
    import numpy as np

    if proba:
        known = pipeline.predict_proba(X)
        return np.asarray(pipeline.classes_)[np.argmax(known, axis=1)], known
    return np.asarray(pipeline.predict(X)), None


def _predict_rows_on_one_core(pipeline, X, proba: bool, pin, before=None):
    """:func:`_predict_rows` in a Dask worker, on one core (``pin``, an
    :class:`ensemblekit.experiment.runner.OneCore`): the model's own joblib calls
    stay sequential in the worker. ``before``: the :func:`_extremes` of the rows before
    ``X``, which the pipeline is widened by first (None: nothing to widen)."""
    if before is not None:
        pipeline = _with_final(pipeline, pipeline[-1].widened(before))
    with pin.pinned():
        return _predict_rows(pipeline, X, proba)


def _advanced(pipeline, X):
    """The pipeline as it stands after predicting the rows ``X`` (the same object if nothing changed).

    Every estimator here predicts a row from the fitted model alone, except one whose
    prediction also depends on the rows before it in the same call: knn's IBk, whose
    numeric ranges each row widens (``range_update="cumulative"``, as Weka). Such a final
    estimator has a ``widened(Xt)`` method (``Xt``: the rows after the pipeline's
    preprocessing) that returns a copy carrying that state over, so rows given in later
    calls are predicted as one call on all the rows would predict them; this is the
    pipeline with that copy as its final step. ``widened`` may depend on the rows only
    through each column's smallest and largest known value (see :func:`_extremes`).
    """
    final = pipeline[-1]
    if not hasattr(final, "widened") or X.shape[0] == 0:
        return pipeline
    return _with_final(pipeline, final.widened(pipeline[:-1].transform(X)))


def _with_final(pipeline, estimator):
    """``pipeline`` with ``estimator`` as its final step (a shallow copy; itself if unchanged)."""
    import copy

    if estimator is pipeline[-1]:
        return pipeline
    out = copy.copy(pipeline)
    out.steps = [*pipeline.steps[:-1], (pipeline.steps[-1][0], estimator)]
    return out


def _extremes(pipeline, X, before=None):
    """Two rows: the smallest and the largest known value of each column of the prepared rows
    ``X`` and of the rows ``before`` (the same two rows of earlier rows, or None).

    They widen the final estimator as all those rows would (:func:`_advanced`), so a Dask
    task gets two rows instead of every row before it. NaN where a column has no known value.
    """
    import numpy as np

    if X.shape[0] == 0:
        return before
    Xt = np.asarray(pipeline[:-1].transform(X), dtype=np.float64)
    rows = Xt if before is None else np.vstack([before, Xt])
    return np.vstack([np.fmin.reduce(rows, axis=0), np.fmax.reduce(rows, axis=0)])


def _predict_in_order(pipeline, chunks, proba: bool, progress, source):
    """Predict chunks in this process: yield ``(chunk, parts)`` in order (see :func:`_predict_chunk`),
    each chunk predicted by the pipeline as the chunks before it left it (:func:`_advanced`)."""
    for ds in chunks:
        parts, pipeline = _predict_chunk(pipeline, ds, proba, progress, source)
        yield ds, parts


def _predict_chunk(pipeline, ds, proba: bool, progress, source):
    """Predict one chunk in this process, :data:`PREDICT_CHUNK` rows at a time: a list of
    :func:`_predict_rows` results, and the pipeline as those rows left it (:func:`_advanced`)."""
    n = ds.X.shape[0]
    parts = []
    try:
        with (progress or _no_progress)(n if n > PREDICT_CHUNK else 0, "rows") as advance:
            for start in range(0, max(n, 1), PREDICT_CHUNK):
                X = ds.X[start:start + PREDICT_CHUNK]
                parts.append(_predict_rows(pipeline, X, proba))
                pipeline = _advanced(pipeline, X)
                if advance is not None:
                    advance(X.shape[0])
    except ValueError as exc:
        raise UsageError(f"{source}: the model cannot predict {ds.source}: {exc}") from None
    return parts, pipeline


#: Chunks whose tasks may be under way on a Dask cluster at a time, at most (at least two
#: are, so that the workers predict one while the next is read).
_CHUNKS_IN_FLIGHT = 4


def _predict_on_cluster(client, pipeline, chunks, proba: bool, progress, source):
    """Predict chunks on the Dask cluster of ``client``: yield ``(chunk, parts)`` in order, as
    :func:`_predict_chunk` would, and close the client at the end.

    The model is scattered once to every worker; each :data:`PREDICT_CHUNK` rows of a chunk
    are one task. A model that carries state from row to row (:func:`_advanced`) gets with
    each task the :func:`_extremes` of every row before it, computed here, so each task
    predicts what a serial run predicts. Chunks are read ahead while the workers predict: at
    least two, and up to :data:`_CHUNKS_IN_FLIGHT` while fewer than two tasks per worker
    thread are under way. An error reading a chunk is raised once the chunks before it were
    yielded.
    """
    from collections import deque

    from ensemblekit.experiment.runner import OneCore

    pending: deque = deque()  # (chunk, futures), in file order
    try:
        threads = max(1, sum(client.nthreads().values()))
        [model] = client.scatter([pipeline], broadcast=True, hash=False)
        pin = OneCore()
        chunks, tasks, failed, done = iter(chunks), 0, None, False
        widens, before = hasattr(pipeline[-1], "widened"), None  # extremes of the rows so far
        while True:
            while not done and (len(pending) < 2 or (tasks < 2 * threads
                                                     and len(pending) < _CHUNKS_IN_FLIGHT)):
                try:
                    ds = next(chunks)
                except StopIteration:
                    done = True
                    break
                except Exception as exc:  # noqa: BLE001 - raised after the chunks before it
                    failed, done = exc, True
                    break
                n, futures = ds.X.shape[0], []
                for start in range(0, max(n, 1), PREDICT_CHUNK):
                    X = ds.X[start:start + PREDICT_CHUNK]
                    futures.append(client.submit(_predict_rows_on_one_core, model, X, proba, pin,
                                                 before, pure=False))
                    if widens:
                        try:
                            before = _extremes(pipeline, X, before)
                        except ValueError:  # the task reports it, as a serial run would
                            widens = False
                pending.append((ds, futures))
                tasks += len(futures)
            if not pending:
                break
            ds, futures = pending.popleft()
            tasks -= len(futures)
            n, parts = ds.X.shape[0], []
            with (progress or _no_progress)(n if n > PREDICT_CHUNK else 0, "rows") as advance:
                for start, future in zip(range(0, max(n, 1), PREDICT_CHUNK), futures):
                    try:
                        parts.append(future.result())
                    except ValueError as exc:
                        raise UsageError(f"{source}: the model cannot predict {ds.source}: "
                                         f"{exc}") from None
                    if advance is not None:
                        advance(min(n, start + PREDICT_CHUNK) - start)
            del futures
            yield ds, parts
        if failed is not None:
            raise failed
    finally:
        for _, futures in pending:
            client.cancel(futures)
        client.close()


def _read_chunks(data, schema, input_format: str | None, chunk_rows: int | None):
    """The chunks of a prediction file, read with the options of the enclosing :func:`reading`."""
    import sys

    from ensemblekit.streaming import iter_chunks

    if data == "-" and sys.stdin is None:
        raise UsageError("cannot read '-': standard input is closed")
    context = _READING.get() or {}
    return iter_chunks(data, schema, fmt=input_format, read_class=False, chunk_rows=chunk_rows,
                       notify=_notifier(context.get("notify")), decimal=context.get("decimal"),
                       missing_values=context.get("missing_values", ()), header=context.get("header"))


# --------------------------------------------------------------------------- clustering
def _split_targets(ds, names):
    """Move the target attributes out of the features: (data set, Y)."""
    from ensemblekit.data import DataError

    try:
        reduced, Y, _ = ds.split_targets(names)
    except DataError as exc:
        raise UsageError(f"--targets: {exc}") from None
    if reduced.X.shape[1] == 0:
        raise UsageError(f"{ds.source}: no attributes left to cluster once the --targets are "
                         "taken out")
    return reduced, Y


def _check_targets(spec, targets) -> tuple[str, ...] | None:
    if targets is None:
        if spec.needs_targets:
            raise UsageError(f"{spec.name} needs target columns (--targets NAME,...)")
        return None
    if not spec.needs_targets:
        raise UsageError(f"--targets gives target columns to ss-isca; {spec.name} takes none")
    names = tuple(targets)
    if not names or not all(names):
        raise UsageError("--targets expects comma-separated attribute names")
    return names


def _load_members(members, ds):
    """Member labelings (path, Dataset or array) as an (instances x members) array."""
    import numpy as np

    if isinstance(members, (str, Path)):
        table = load_data(str(members), no_class=True)
        where, X, names = members, table.X, [a.name for a in table.schema.features]
    else:
        X = np.asarray(members, dtype=np.float64)
        where, names = "members", [str(j + 1) for j in range(X.shape[1] if X.ndim == 2 else 0)]
        if X.ndim != 2:
            raise UsageError("members: expected a 2-d array (instances x members)")
    if X.shape[0] != ds.X.shape[0]:
        raise UsageError(f"{where}: {X.shape[0]} rows of member labels, but {ds.source} has "
                         f"{ds.X.shape[0]} instances (one row per instance, same order)")
    missing = np.argwhere(np.isnan(X))
    if missing.size:
        row, col = missing[0]
        raise UsageError(f"{where}: member '{names[col]}' has no label for row {row + 1}; every "
                         "member must label every instance")
    return X


def _fit_clusterer(algorithm: str, ds, params: dict, seed: int, fit_params: dict, y=None):
    """Fit a registered clusterer to every row of ``ds``; return (pipeline, labels)."""
    import numpy as np

    from ensemblekit.clustering.consensus import MissingDependencyError

    model = registry.make_estimator(algorithm, ds.schema, params, seed)
    try:
        labels = np.asarray(model.fit_predict(ds.X, y, **fit_params))
    except MissingDependencyError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:
        raise UsageError(f"{ds.source}: {algorithm} cannot cluster this data: {exc}") from None
    return model, labels


def _internal_indices(model, ds, labels, notify: Notify) -> dict:
    """Internal indices on the attributes the estimator clustered; {} with a note if impossible."""
    import numpy as np

    from ensemblekit.metrics import INTERNAL_INDICES, clustering_indices

    space = np.asarray(model[:-1].transform(ds.X), dtype=np.float64)
    try:
        return clustering_indices(labels, X=space, names=INTERNAL_INDICES)
    except ValueError as exc:
        notify(f"note: internal indices not computed: {exc}")
        return {}


def _clustering_input(algorithm: str, data, members, targets, notify: Notify, **load_options):
    """Check a clustering request against the algorithm's capabilities and load its data.

    Returns
    -------
    spec, ds, Y, fit_params, names
        The entry, the data set (targets taken out), ss-isca's target matrix (or
        None), the member labelings as fit parameters, and the target names.
    """
    spec = registry.get(algorithm)
    if spec.task != registry.CLUSTERING:
        raise UsageError(f"{spec.name} is a {spec.task} algorithm; 'cluster' needs a clustering "
                         "algorithm")
    if members is not None and not spec.takes_members:
        raise UsageError(f"--members gives member labelings to a cluster ensemble (cspa, hgpa, "
                         f"mcla, hac-*); {spec.name} does not combine members")
    names = _check_targets(spec, targets)
    ds = _load_for(spec.task, data, notify=notify, **load_options)
    Y = None
    if names is not None:
        ds, Y = _split_targets(ds, names)
    fit_params = {} if members is None else {"model__members": _load_members(members, ds)}
    return spec, ds, Y, fit_params, names


def cluster(algorithm: str, data, *, k: int | None = None, target: str | None = None,
            params: dict | None = None, seed: int = 1, members=None, targets=None,
            no_class: bool = False, ignore: Sequence[str] = (), input_format: str | None = None,
            notify: Notify | None = None) -> Clustering:
    """Cluster a data set and score the clustering (``ensemblekit cluster``).

    Parameters
    ----------
    algorithm : str
        A clustering algorithm's registry name.
    data : path or Dataset
    k : int, optional
        Number of clusters (default: the ``n_clusters`` parameter, else the
        number of classes in the data).
    members : path or array of shape (n_rows, n_members), optional
        Member labelings for a cluster ensemble (``spec.takes_members``).
    targets : sequence of str, optional
        ss-isca's target attributes (``spec.needs_targets``).

    Returns
    -------
    Clustering
        Labels, sizes, the external indices (when the data has a nominal class)
        and the internal ones (Euclidean, on the clustered attributes).

    Raises
    ------
    UsageError
    """
    from ensemblekit.metrics import EXTERNAL_INDICES, clustering_indices
    from ensemblekit.preprocessing import feature_names

    notify = _notifier(notify)
    spec, ds, Y, fit_params, names = _clustering_input(
        algorithm, data, members, targets, notify, target=target, ignore=ignore,
        input_format=input_format, no_class=no_class)
    spec, values = resolve_params(algorithm, params, _default_n_clusters(ds, k, params))
    pipeline, labels = _fit_clusterer(algorithm, ds, values, seed, fit_params, Y)
    estimator = pipeline.named_steps["model"]
    centers = getattr(estimator, "cluster_centers_", None)
    import numpy as np

    n_found = int(labels.max()) + 1 if labels.size else 0
    sizes = np.bincount(labels, minlength=len(centers) if centers is not None else n_found)
    external: dict[str, float] = {}
    has_class = ds.y is not None and ds.schema.class_attribute.kind == "nominal"
    if has_class:
        keep = _labelled(ds)
        external = clustering_indices(labels[keep], truth=ds.y[keep], names=EXTERNAL_INDICES)
    internal = _internal_indices(pipeline, ds, labels, notify)
    ensemble = getattr(estimator, "members_", None)
    metadata = _metadata(algorithm, spec, values, seed, ds, ds.X, None,
                         **({} if names is None else {"targets": list(names)}))
    return Clustering(
        algorithm=algorithm, params=values, seed=seed, dataset=ds.name, labels=labels,
        sizes=sizes.tolist(), external=external, internal=internal, prototypes=centers,
        feature_names=feature_names(ds.schema), iterations=getattr(estimator, "n_iter_", None),
        rules=getattr(estimator, "n_rules_", None),
        members=None if ensemble is None else int(ensemble.shape[1]),
        partitioner=getattr(estimator, "partitioner_", None), targets=names,
        class_name=ds.schema.class_attribute.name if has_class else None,
        model=FittedModel(pipeline, metadata))


def select_k(algorithm: str, data, ks: Sequence[int], *, target: str | None = None,
             params: dict | None = None, seed: int = 1, members=None, targets=None,
             no_class: bool = False, ignore: Sequence[str] = (), input_format: str | None = None,
             notify: Notify | None = None) -> KSelection:
    """Internal indices for every k of ``ks``, and the best k of each (``cluster -k A:B``).

    A clusterer whose tree does not depend on k (isca, ss-isca: ``labels_for``) is
    fitted once and its tree cut at every k; the others are refitted per k.

    Raises
    ------
    UsageError
    """
    from ensemblekit.metrics import INTERNAL_INDICES, best_k

    notify = _notifier(notify)
    spec, ds, Y, fit_params, names = _clustering_input(
        algorithm, data, members, targets, notify, target=target, ignore=ignore,
        input_format=input_format, no_class=no_class)
    ks = list(ks)
    values = {name: [] for name in INTERNAL_INDICES}
    resolved: dict = {}
    pipeline = None
    for k in ks:
        _, resolved = resolve_params(algorithm, params, k)
        cut = None if pipeline is None else getattr(pipeline.named_steps["model"], "labels_for",
                                                    None)
        if cut is not None:
            try:
                labels = cut(k)
            except ValueError as exc:
                raise UsageError(f"{ds.source}: {algorithm} cannot cluster this data: "
                                 f"{exc}") from None
        else:
            pipeline, labels = _fit_clusterer(algorithm, ds, resolved, seed, fit_params, Y)
        found = _internal_indices(pipeline, ds, labels, notify)
        for name in INTERNAL_INDICES:
            values[name].append(found.get(name, float("nan")))
    best = {name: best_k(ks, column, name) for name, column in values.items()}
    shown = {key: value for key, value in resolved.items() if key != "n_clusters"}
    metadata = _metadata(algorithm, spec, resolved, seed, ds, ds.X, None)
    return KSelection(algorithm, shown, seed, ds.name, ks, values, best,
                      FittedModel(pipeline, metadata))


# --------------------------------------------------------------------------- evaluation
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
    from ensemblekit.experiment import DEFAULT_METRICS
    from ensemblekit.metrics import METRICS

    chosen = list(metrics) or list(DEFAULT_METRICS[task])
    for m in chosen:
        if m not in METRICS:
            raise UsageError(f"unknown metric {m!r}; known: {', '.join(sorted(METRICS))}")
        if not METRICS[m].applies_to(task):
            valid = ", ".join(name for name, info in METRICS.items() if info.applies_to(task))
            raise UsageError(f"metric {m!r} is for {' and '.join(METRICS[m].tasks)}, not {task}; "
                             "valid metrics "
                             f"for {task}: {valid}")
    return chosen


def _training_prior(metadata: dict, schema):
    """What a model's relative errors are measured against, from its metadata: the
    training class counts (ndarray of shape (n_classes,)) or target mean (float);
    None when the file does not record them (written before they were recorded).

    Raises
    ------
    ValueError
        A recorded value of the wrong type, sign or length.
    """
    import math

    import numpy as np

    train = metadata.get("training_data")
    if not isinstance(train, dict):
        return None
    if "class_counts" in train:
        counts = train["class_counts"]
        n_values = len(schema.class_attribute.values) if schema.class_attribute else -1
        if (not isinstance(counts, list) or len(counts) != n_values
                or not all(type(c) is int and 0 <= c < 2**53 for c in counts)):
            raise ValueError(f"training_data.class_counts is not {n_values} counts")
        return np.asarray(counts, dtype=np.int64)
    if "target_mean" in train:
        mean = train["target_mean"]
        if type(mean) not in (int, float) or not math.isfinite(mean):
            raise ValueError("training_data.target_mean is not a finite number")
        return float(mean)
    return None


def _report_metrics(task: str, metrics: Sequence[str], prior) -> list[str]:
    """The measures a report gives: those asked for, or every one the task has (the
    relative errors only when the training prior is known)."""
    from ensemblekit.metrics import REPORT_METRICS

    if metrics:
        return _metrics_for(task, metrics)
    return [m for m in REPORT_METRICS[task] if prior is not None or m not in ("rae", "rrse")]


def _test_report(pipeline, task: str, ds, prior, metrics: Sequence[str], class_names):
    """Score a fitted pipeline on the labelled rows of ``ds``: ``(scores, report, rows)``.

    A classifier is judged by its class probabilities (the predicted class is their first
    arg-max, as Weka's); ``report`` is an :class:`ensemblekit.evaluation` report, or None
    for a clusterer. As in Weka's evaluation, every row is predicted, in file order, and
    the rows with a known class are scored: a model whose predictions depend on the rows
    before (knn's ranges, which each test row widens) sees the unlabelled rows too.
    """
    import numpy as np

    from ensemblekit.metrics import METRICS
    from ensemblekit.scores.classification import classification_report
    from ensemblekit.scores.regression import regression_report

    keep = _labelled(ds)
    if not keep.any():
        raise UsageError(f"{ds.source}: every instance has a missing class value "
                         f"('{ds.schema.class_attribute.name}'); there is nothing to score against")
    X = ds.X[keep]
    truth = ds.y[keep]
    proba = report = None
    if task == registry.CLASSIFICATION:
        proba = registry.class_probabilities(pipeline, ds.X, len(class_names))[keep]
        predicted = np.argmax(proba, axis=1)
        truth = np.asarray(truth, dtype=np.intp)
        report = classification_report(truth, proba, prior, class_names)
    elif task == registry.REGRESSION:
        truth = np.asarray(truth, dtype=np.float64)
        predicted = np.asarray(pipeline.predict(ds.X), dtype=np.float64).ravel()[keep]
        report = regression_report(truth, predicted, prior)
    else:
        predicted = np.asarray(pipeline.predict(ds.X))[keep]
    # internal indices judge the clustering in the space the estimator clustered (the
    # pipeline's preprocessing applied), as compare does
    space = (np.asarray(pipeline[:-1].transform(X), dtype=np.float64)
             if any(METRICS[m].internal for m in metrics) else None)
    scores = {m: METRICS[m].score(predicted, truth=truth, X=space, proba=proba, prior=prior)
              for m in metrics}
    return scores, report, int(keep.sum())


def evaluate_model(model, data, *, metrics: Sequence[str] = (), input_format: str | None = None,
                   notify: Notify | None = None) -> ModelEvaluation:
    """Score a saved model on a test set (``evaluate MODEL DATA``), as Weka's ``-l MODEL -T DATA``.

    Parameters
    ----------
    model : FittedModel or path
    data : path or Dataset
        Read against the model's schema; rows with a missing class are not scored.
    metrics : sequence of str
        Default: every measure of the task (clusterers: nmi and purity). The
        relative errors need the training class counts (or mean) the model
        file records; files written before they were recorded are reported
        without them.
    notify : callable, optional
        Receives the note that ``data`` is the model's own training data
        (the figures are then resubstitution estimates), else a UserWarning.

    Returns
    -------
    ModelEvaluation
        With the Weka-style ``report`` of a classifier or regression model.

    Raises
    ------
    UsageError
    """
    from ensemblekit.data import Schema
    from ensemblekit.persistence import data_fingerprint

    notify = _notifier(notify)
    name = str(model) if not isinstance(model, FittedModel) else model.algorithm
    metadata = (read_model_metadata(model) if not isinstance(model, FittedModel)
                else model.metadata)
    schema = Schema.from_dict(metadata["schema"])
    ds = load_data(data, schema=schema, input_format=input_format)
    if ds.y is None:
        raise UsageError(f"{ds.source}: has no class attribute '{schema.class_attribute.name}' "
                         "to score the model against" if schema.class_attribute else
                         f"{ds.source}: has no class attribute to score against")
    task = metadata["task"]
    prior = _training_prior(metadata, schema)
    chosen = _report_metrics(task, metrics, prior) if task != registry.CLUSTERING else \
        _metrics_for(task, metrics)
    model = _as_model(model)
    if not registry.get(model.algorithm).predicts_new_rows:
        raise UsageError(f"{model.algorithm} models cannot label new rows (the algorithm has "
                         "no out-of-sample rule); use 'ensemblekit compare' or 'cluster' instead")
    scores, report, n = _test_report(model.pipeline, task, ds, prior, chosen, ds.class_values)
    seen = metadata.get("training_data", {}).get("fingerprint")
    same = task != registry.CLUSTERING and seen == data_fingerprint(*_labelled_rows(ds, task))
    if same:
        notify(f"note: {ds.source} is the data this model was trained on: these figures are "
               "resubstitution estimates, optimistic for new data (use --cv, --test or "
               "--split-percentage for honest ones)")
    return ModelEvaluation(name, model.algorithm, ds.name, n, scores, task=task,
                           protocol=f"model {name} tested on {ds.name}", report=report,
                           class_names=tuple(ds.class_values), resubstitution=same)


def split_rows(n: int, percentage: float, *, preserve_order: bool = False, seed: int = 1):
    """Training and test rows of a percentage split (Weka's ``-split-percentage P``).

    The first ``round(n * P / 100)`` rows (Java's rounding: halves up) train and
    the rest test, either in file order (``preserve_order``, Weka's
    ``-preserve-order``) or after a seeded shuffle (numpy's, so the rows differ
    from Weka's own shuffle).

    Parameters
    ----------
    n : int
        Number of instances.
    percentage : float
        Share of training rows, in (0, 100).
    preserve_order : bool
    seed : int

    Returns
    -------
    train, test : ndarray of int
        Row indices, each in ascending order.

    Raises
    ------
    UsageError
        A percentage outside (0, 100), or a split that leaves a side empty.
    """
    import math

    import numpy as np

    if not 0 < percentage < 100 or math.isnan(percentage):
        raise UsageError(f"--split-percentage must lie strictly between 0 and 100, got {percentage:g}")
    n_train = math.floor(n * percentage / 100 + 0.5)
    if not 0 < n_train < n:
        raise UsageError(f"--split-percentage {percentage:g} of {n} instances leaves "
                         f"{'no training' if n_train == 0 else 'no test'} instances")
    order = (np.arange(n) if preserve_order
             else np.random.RandomState(seed % 2**32).permutation(n))
    return np.sort(order[:n_train]), np.sort(order[n_train:])


def evaluate_split(algorithm: str, data, *, test=None, split_percentage: float | None = None,
                   preserve_order: bool = False, metrics: Sequence[str] = (),
                   target: str | None = None, params: dict | None = None, seed: int = 1,
                   ignore: Sequence[str] = (), input_format: str | None = None,
                   notify: Notify | None = None) -> ModelEvaluation:
    """Train on one part and test on another, in one step (Weka's ``-t TRAIN -T TEST``
    or ``-t DATA -split-percentage P [-preserve-order]``).

    Parameters
    ----------
    algorithm : str
        A classifier or regression algorithm.
    data : path or Dataset
        Training data; with ``split_percentage``, the data to split.
    test : path or Dataset, optional
        Test data, read against the training data's schema.
    split_percentage : float, optional
        Percentage of ``data`` to train on, in (0, 100) (see :func:`split_rows`).
    preserve_order : bool
        Split in file order instead of after a seeded shuffle.
    metrics, target, params, seed, ignore, input_format, notify
        As :func:`fit` and :func:`evaluate_model`.

    Returns
    -------
    ModelEvaluation
        The model's scores and Weka-style report on the test rows.

    Raises
    ------
    UsageError
        Neither or both of ``test`` and ``split_percentage``; a clusterer; data
        that does not suit the algorithm.
    """
    notify = _notifier(notify)
    spec = registry.get(algorithm)
    algorithm = spec.name  # reported under the entry's own name (an alias names its entry)
    if preserve_order and split_percentage is None:
        raise UsageError("--preserve-order applies to --split-percentage")
    if (test is None) == (split_percentage is None):
        raise UsageError("give either a test file (--test) or --split-percentage")
    if spec.task == registry.CLUSTERING:
        raise UsageError(f"{algorithm} is a clusterer; --test and --split-percentage evaluate "
                         "classifiers and regression algorithms (cluster it, or use --runs)")
    ds = _load_for(spec.task, data, target=target, ignore=ignore, input_format=input_format,
                   algo=algorithm, notify=notify)
    if split_percentage is not None:
        train_rows, test_rows = split_rows(ds.n_instances, split_percentage,
                                           preserve_order=preserve_order, seed=seed)
        order = "in file order" if preserve_order else f"shuffled with seed {seed}"
        protocol = f"{split_percentage:g}% split of {ds.name} {order}"
        test_ds, ds = ds.take(test_rows), ds.take(train_rows)
    else:
        test_ds = load_data(test, schema=ds.schema, input_format=input_format)
        protocol = f"trained on {ds.name}, tested on {test_ds.name}"
    fitted = fit(algorithm, ds, params=params, seed=seed, notify=notify)
    prior = _training_prior(fitted.metadata, ds.schema)
    chosen = _report_metrics(spec.task, metrics, prior)
    scores, report, n = _test_report(fitted.pipeline, spec.task, test_ds, prior, chosen,
                                     ds.class_values)
    return ModelEvaluation(algorithm, algorithm, test_ds.name, n, scores, task=spec.task,
                           protocol=protocol, report=report, class_names=tuple(ds.class_values),
                           train_instances=fitted.metadata["training_data"]["instances"])


def evaluate(algorithm_or_model, data, *, test=None, split_percentage: float | None = None,
             preserve_order: bool = False, **options):
    """Evaluate one algorithm by a protocol, or one saved model on a test set.

    Parameters
    ----------
    algorithm_or_model : str, path or FittedModel
        A registry name is trained and tested by :func:`evaluate_split` when
        ``test`` or ``split_percentage`` is given, else cross-validated
        (clusterers: seeded runs) as :func:`compare` does with one algorithm,
        with the pooled out-of-fold predictions reported Weka's way; a model
        (file) is scored on ``data`` as a test set by :func:`evaluate_model`.
    data : path or Dataset
    test, split_percentage, preserve_order
        See :func:`evaluate_split`.
    **options
        Those of :func:`compare` (or :func:`evaluate_split`) for an algorithm;
        ``metrics``, ``input_format`` and ``notify`` for a model.

    Returns
    -------
    Comparison or ModelEvaluation
    """
    if isinstance(algorithm_or_model, FittedModel) or (
            not registry.is_registered(algorithm_or_model) and Path(algorithm_or_model).is_file()):
        return evaluate_model(algorithm_or_model, data, **options)
    if test is not None or split_percentage is not None or preserve_order:
        return evaluate_split(algorithm_or_model, data, test=test,
                              split_percentage=split_percentage, preserve_order=preserve_order,
                              **options)
    task = registry.get(algorithm_or_model).task
    if not options.get("metrics") and task != registry.CLUSTERING:
        from ensemblekit.metrics import REPORT_METRICS

        options["metrics"] = REPORT_METRICS[task]
    return compare([algorithm_or_model], [data], pooled=task != registry.CLUSTERING, **options)


# --------------------------------------------------------------------------- comparison
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


def _class_mismatch(task: str, ds) -> str | None:
    """How the class of ``ds`` does not fit ``task``; None if it fits."""
    cls = ds.schema.class_attribute
    if cls is None or ds.y is None:
        return "no class attribute"
    wanted = "numeric" if task == registry.REGRESSION else "nominal"
    if cls.kind != wanted:
        return f"class '{cls.name}' is {cls.kind}"
    return f"every class value of '{cls.name}' is missing" if _class_all_missing(ds) else None


def _load_fitting(task: str, files, target, ignore, input_format, notify: Notify) -> list:
    """Load the data sets of a comparison; skip (with one note) misfits found in folders."""
    datasets, skipped = [], []
    for item, in_folder in files:
        ds = load_data(item, target=target, ignore=ignore, input_format=input_format)
        ds = _class_for(task, ds, target)
        why = _class_mismatch(task, ds)
        if why is None:
            datasets.append(_prepare_for(task, ds, target, notify=notify))
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


def _candidates(specs, params: dict, grid: Sequence[str], baseline: str | None):
    """Resolve the parameters for each algorithm and expand the grid into candidates."""
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
    for spec in specs:
        _, values = resolve_params(spec.name, {k: v for k, v in params.items()
                                               if k in spec.param_names})
        points = {}
        if spec.name != baseline:
            for key, texts in grid_raw:
                if key in spec.param_names:
                    param = spec.params[spec.param_names.index(key)]
                    points[key] = [param.parse(v) for v in texts]
        if points:
            gridded.append(spec.name)
        candidates.extend(experiment.expand_grid(spec.name, values, points))
    for key, _ in grid_raw:
        if not any(key in s.param_names for s in specs if s.name != baseline):
            raise registry.ParameterError(f"--grid {key}: no compared algorithm (other than the "
                                          f"baseline) has this parameter; valid keys: "
                                          f"{', '.join(every)}")
    return candidates, n_clusters, gridded


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
            baseline: str | None = None, grid: Sequence[str] = (),
            max_instances: int | None = None, n_jobs: int = 1, scheduler: str | None = None,
            resume=None, alpha: float = 0.05, plot: bool = False, pooled: bool = False,
            progress: Progress | None = None, notify: Notify | None = None) -> Comparison:
    """Compare algorithms over data sets under one protocol (``ensemblekit compare``).

    Parameters
    ----------
    algorithms : sequence of str
        Registry names, all of one task.
    data : sequence of path or Dataset
        Files or folders (a folder's .arff/.csv/.tsv files, in name order; those
        whose class does not suit the task are skipped with a note).
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
    max_instances : int, optional
        Subsample each data set once (seeded, without replacement).
    n_jobs, scheduler
        joblib workers, or a Dask scheduler address; results do not depend on them.
    resume : path, optional
        JSON-lines journal of finished units (computed units are not redone).
    alpha : float
        Significance level, in (0, 1).
    plot : bool
        Refuse, before any work, a comparison whose plot could not be drawn
        (:func:`plot_comparison` draws it afterwards).
    pooled : bool
        Also report each algorithm's out-of-fold predictions pooled over every
        fold and repeat, Weka's way (``Comparison.pooled``; what ``evaluate``
        prints). Not with ``resume`` or clusterers.

    Returns
    -------
    Comparison

    Raises
    ------
    UsageError, ensemblekit.registry.ParameterError, ensemblekit.data.DataError
    """
    from ensemblekit import experiment
    from ensemblekit.experiment.analysis import grid_summary
    from ensemblekit.metrics import METRICS

    notify = _notifier(notify)
    progress = progress or _no_progress
    worker_count(n_jobs)
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha must lie strictly between 0 and 1, got {alpha}")
    # results carry the entries' own names: "j48" is reported as c45
    named: dict[str, str] = {}  # entry -> the name given for it
    for name in algorithms:
        entry = registry.canonical_name(name)
        if entry in named:
            same = ("" if named[entry] == name
                    else f" ({named[entry]} and {name} are the same algorithm)")
            raise UsageError(f"an algorithm is named twice{same}")
        named[entry] = name
    if baseline is not None:
        baseline = registry.canonical_name(baseline)
    files = data_files(data)
    specs = [registry.get(a) for a in algorithms]
    for spec in specs:
        _refuse_targets_only(spec, "compare" if len(specs) > 1 else "evaluate")
    available = []
    for spec in specs:  # an algorithm whose optional package is missing is left out, with a note
        missing = spec.missing_requirement()
        if missing is None:
            available.append(spec)
        elif spec.name == baseline or len(specs) == 1:
            raise UsageError(f"{spec.name} {missing}")
        else:
            notify(f"{spec.name} skipped: it {missing}")
    specs = available
    names_given = [s.name for s in specs]
    tasks = {s.task for s in specs}
    if len(tasks) > 1:
        raise UsageError("algorithms of different tasks cannot be compared: "
                         + ", ".join(f"{s.name} ({s.task})" for s in specs))
    task = tasks.pop()
    if baseline is not None and baseline not in names_given:
        raise UsageError(f"--baseline {baseline} is not among the compared algorithms "
                         f"({', '.join(names_given)})")
    if grid and baseline is None:
        raise UsageError("--grid needs --baseline: the algorithm the grid points are measured "
                         "against")
    candidates, n_clusters, gridded = _candidates(specs, params or {}, grid, baseline)
    if plot:
        _check_plottable(candidates, gridded, len(files))
    protocol = _protocol(task, cv, repeats, runs, seed, n_clusters)
    chosen = _metrics_for(task, metrics)
    runner = experiment.Runner(n_jobs, scheduler)  # holds the Dask client from prestart to run
    warming = runner.prestart()
    datasets = _load_fitting(task, files, target, ignore, input_format, notify)
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
    if warming is not None:
        warming.join()
    with progress(len(work.units), "units") as advance:
        result = runner.run(datasets, work, protocol, chosen, resume=resume,
                            on_unit_done=advance, keep_predictions=pooled)
    if resume is not None:
        notify(f"note: {result.computed} of {len(work.units)} units computed now, the rest read "
               f"from {resume}")
    summary = experiment.summarize(result.scores)
    labels = [c.label for c in candidates]
    failed = {(f.dataset, f.algorithm) for f in result.failures}
    ok_scores = [s for s in result.scores if (s.dataset, s.algorithm) not in failed]
    # per-cell marks: against the baseline, else against the first algorithm
    reference = None if baseline is not None or len(labels) < 2 else labels[0]
    analyses = {m: experiment.analyse(_defined(ok_scores, m, notify), labels, datasets, m,
                                      protocol, baseline=baseline, reference=reference,
                                      alpha=alpha) for m in chosen}
    grid_rows = {}
    if gridded:
        for m in chosen:
            grid_rows[m] = grid_summary(summary, candidates, baseline, names, m,
                                        METRICS[m].greater_is_better, failed)
    return Comparison(task=task, protocol=protocol, metrics=chosen, datasets=names, labels=labels,
                      candidates=candidates, scores=result.scores, failures=result.failures,
                      summary=summary, analyses=analyses, baseline=baseline, reference=reference,
                      grid=grid_rows, alpha=alpha, max_instances=max_instances,
                      units=len(work.units), computed=result.computed,
                      pooled=_pooled_reports(task, datasets, result.predictions, failed))


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


def _pooled_reports(task: str, datasets, predictions, failed) -> dict:
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
                truth.astype(np.intp), proba, prior, ds.class_values)
        else:
            predicted = np.concatenate([u.predicted for u in units])
            prior = np.concatenate([np.full(u.test.size, u.prior) for u in units])
            reports[(name, label)] = regression_report(truth.astype(np.float64), predicted, prior)
    return reports


def plot_paths(path, metrics: Sequence[str] = (), algorithms: Sequence[str] = ()) -> list[Path]:
    """The files ``compare --plot PATH`` writes: one per metric, named ``STEM-METRIC.SUFFIX``.

    ``cd.png`` with metrics nmi and purity gives ``cd-nmi.png`` and
    ``cd-purity.png``, next to where ``cd.png`` would be. The metric is in the
    name even when there is only one, so a script always knows what to look for.
    ``PATH`` itself is never written. The command line checks each of these
    destinations before any work.

    Parameters
    ----------
    path : str or path-like
        The ``--plot`` argument, e.g. ``out/cd.png``.
    metrics : sequence of str
        The compared metrics, in order (repeats are dropped). When empty, the
        default metrics :func:`compare` uses for the task of the first
        registered name in ``algorithms``.
    algorithms : sequence of str
        Registry names; only read when ``metrics`` is empty.

    Returns
    -------
    list of pathlib.Path
        One path per metric; empty when ``metrics`` is empty and no name in
        ``algorithms`` is registered (:func:`compare` refuses those anyway).
    """
    chosen = list(dict.fromkeys(metrics))
    if not chosen:
        from ensemblekit.experiment import DEFAULT_METRICS

        known = [registry.get(a) for a in algorithms if registry.is_registered(a)]
        chosen = list(DEFAULT_METRICS[known[0].task]) if known else []
    given = Path(path)
    return [given.with_name(f"{given.stem}-{metric}{given.suffix}") for metric in chosen]


def plot_comparison(result: Comparison, path) -> list[Path]:
    """Draw a comparison, one figure per metric, in the files :func:`plot_paths` names.

    Each figure is the critical-difference diagram of that metric (two
    algorithms: a scatter plot of their scores per data set, with the diagonal)
    or, for a grid, one sensitivity heat map per data set and gridded algorithm, coloured
    by the difference from the baseline (:func:`ensemblekit.plots.heatmap_limits`).
    Every figure is drawn before the first file is written, and the files are
    written all or none (:func:`ensemblekit.plots.write_plots`).

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of ``result.metrics``.

    Raises
    ------
    UsageError
        No diagram can be drawn for some metric (fewer than 3 algorithms or 2
        complete data sets, or a grid over more than two parameters); no file
        is written.
    ensemblekit.plots.PlotError
        The suffix is not .png, .svg or .pdf, matplotlib is missing, or a file
        cannot be written (none is left behind).
    """
    from ensemblekit import plots

    fmt = plots.plot_format(path)
    metrics = list(dict.fromkeys(result.metrics))
    paths = plot_paths(path, metrics)
    figures = [(target, _metric_figure(result, metric, fmt)) for metric, target in zip(metrics, paths)]
    plots.write_plots(figures)
    return paths


def _metric_figure(result: Comparison, metric: str, fmt: str) -> bytes:
    """The bytes of one metric's figure for :func:`plot_comparison`."""
    import numpy as np

    from ensemblekit import plots
    from ensemblekit.metrics import METRICS

    if result.grid:
        panels = []
        for c_alg in dict.fromkeys(c.algorithm for c in result.candidates if c.grid):
            points = [c for c in result.candidates if c.algorithm == c_alg and c.grid]
            keys = list(points[0].grid)
            if len(keys) > 2:
                raise UsageError("--plot draws heat maps for grids over one or two parameters")
            xs = list(dict.fromkeys(c.grid[keys[-1]] for c in points))
            ys = list(dict.fromkeys(c.grid[keys[0]] for c in points)) if len(keys) == 2 else None
            for d in result.datasets:
                values = np.full((len(ys) if ys else 1, len(xs)), np.nan)
                for c in points:
                    cell = result.summary.get((d, c.label, metric))
                    if cell is not None:
                        row = ys.index(c.grid[keys[0]]) if ys else 0
                        values[row, xs.index(c.grid[keys[-1]])] = cell[0]
                base = result.summary.get((d, result.baseline, metric))
                panels.append({"dataset": f"{d}: {c_alg}", "x_name": keys[-1], "x_values": xs,
                               "y_name": keys[0] if ys else None, "y_values": ys,
                               "values": values, "baseline": None if base is None else base[0],
                               "metric": metric,
                               "greater_is_better": METRICS[metric].greater_is_better})
        return plots.render_sensitivity_heatmaps(
            panels, fmt, title=f"{metric} over the grid (baseline {result.baseline})")
    an = result.analyses[metric]
    if len(result.labels) == 2:
        # Demšar (JMLR 2006, Sect. 3.1): two algorithms are compared with the Wilcoxon
        # signed-rank test, not with a critical difference; the figure shows each data set
        table = result.table(metric)
        done = [d for d in result.datasets if None not in table[d].values()]
        if len(done) < 2:
            raise UsageError(f"--plot needs 2 complete data sets for the scatter plot of {metric}")
        a, b = result.labels
        return plots.render_pairwise_scatter(
            a, b, [table[d][a] for d in done], [table[d][b] for d in done], done, fmt,
            title=f"{METRICS[metric].display_name}: mean over folds per data set",
            greater_is_better=METRICS[metric].greater_is_better)
    if an.cd is None:
        raise UsageError(f"--plot needs at least 3 algorithms and 2 complete data sets for a "
                         f"critical-difference diagram (of {metric})")
    return plots.render_critical_difference(an.labels, an.ranks, an.cd, fmt,
                                            title=f"{metric}: Nemenyi CD at alpha {result.alpha:g}",
                                            alpha=result.alpha)
