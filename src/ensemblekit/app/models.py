"""Fit a model, save it, load it back and describe it (``fit``, ``show``)."""

from __future__ import annotations

from collections.abc import Sequence

from ensemblekit import registry
from ensemblekit.app.common import (
    Notify,
    _default_n_clusters,
    _instance_weights,
    _labelled,
    _load_for,
    _metadata,
    _notifier,
    _refuse_targets_only,
    _training_rows,
    resolve_params,
    stage,
)
from ensemblekit.errors import InputError, UsageError
from ensemblekit.results import FittedModel


def fit(algorithm: str, data, *, target: str | None = None, params: dict | None = None,
        seed: int = 1, n_clusters: int | None = None, no_class: bool = False,
        ignore: Sequence[str] = (), input_format: str | None = None,
        notify: Notify | None = None) -> FittedModel:
    """Fit a registered algorithm to a data set (``ensemblekit fit``).

    Parameters
    ----------
    algorithm : str
        Registry name (see ``ensemblekit algorithms``).
    data : path, Dataset, DataFrame or stream
        As :func:`load_data` reads it (a pandas or polars DataFrame by its dtypes).
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
    weights = _instance_weights(ds, spec, None if y is None else _labelled(ds))
    try:
        with stage("fitting"):
            model = _fitted_pipeline(algorithm, spec, ds.schema, values, seed, X, y, weights)
    except InputError as exc:
        raise UsageError(f"{ds.source}: {algorithm} cannot be fitted: "
                         f"{registry.refusal_text(exc, algorithm, ds.schema)}") from None
    return FittedModel(model, _metadata(algorithm, spec, values, seed, ds, X, y))


def _fitted_pipeline(algorithm: str, spec, schema, values: dict, seed: int, X, y,
                     sample_weight=None):
    """The fitted ``prep -> model`` pair of :func:`fit`.

    An algorithm that reads coded columns, and whose model class fits itself on the
    rows the readers give (``fit_coded``, as C4.5's), is fitted as that class in a
    :class:`~ensemblekit.pipeline.ModelPipeline`, the form :func:`load_model` gives, so
    that ``ensemblekit fit`` need not import scikit-learn; any other is fitted as the
    scikit-learn pipeline of :func:`ensemblekit.registry.make_estimator`. Either way the
    model file written is the same. ``sample_weight`` (the file's instance weights, or
    None) goes to the estimator's fit as Weka's ``instance_weights``.
    """
    model_class = spec.model_class()
    weighted = {} if sample_weight is None else {"instance_weights": sample_weight}
    if spec.encode == "codes" and hasattr(model_class, "fit_coded"):
        from ensemblekit.pipeline import ModelPipeline

        model = model_class(**registry.estimator_kwargs(algorithm, schema, values, seed))
        return ModelPipeline([("prep", "passthrough"), ("model", model.fit_coded(X, y,
                                                                                  **weighted))])
    return registry.make_estimator(algorithm, schema, values, seed).fit(
        X, y, **{f"model__{k}": v for k, v in weighted.items()})


def save_model(model: FittedModel, path) -> None:
    """Write a fitted model to ``path`` (atomically; see :mod:`ensemblekit.persistence`).

    What is written is the declared state of the preprocessing step and of the
    estimator (:func:`ensemblekit.state.collect`); it is rebuilt in memory
    first, exactly as :func:`load_model` will, so a model that would be refused
    on loading is never written.

    Raises
    ------
    ensemblekit.persistence.ModelFileError
        The file cannot be written, or the state would be refused on loading.
    """
    import json

    from ensemblekit import state
    from ensemblekit.persistence import ModelFileError
    from ensemblekit.persistence import save_model as write

    steps = model.pipeline.steps
    prep, estimator = steps[0][1], steps[-1][1]
    arrays: dict = {}
    scalars: dict = {"prep": None, "model": None}
    if prep != "passthrough":
        scalars["prep"], found = state.collect(prep, "prep/")
        arrays.update(found)
    scalars["model"], found = state.collect(estimator, "model/")
    arrays.update(found)
    try:
        _rebuild(str(path), model.metadata, json.loads(json.dumps(scalars)), arrays)
    except ModelFileError as exc:
        raise ModelFileError(f"cannot save {path}: the model's state would be refused on "
                             f"loading ({exc})") from None
    write(path, scalars, arrays, model.metadata)


def read_model_metadata(path) -> dict:
    """A model file's metadata, checked to hold what the commands rely on.

    Raises
    ------
    ensemblekit.persistence.ModelFileError
        If a required key is missing or does not fit the registry.
    """
    from ensemblekit.persistence import read_metadata

    metadata = read_metadata(path)
    _check_metadata(path, metadata)
    return metadata


def _check_metadata(path, metadata: dict):
    """The registry entry and schema a model's metadata names, checked against each other."""
    from ensemblekit.dataset import Schema
    from ensemblekit.persistence import ModelFileError

    try:
        spec = registry.get(metadata["algorithm"])
        if metadata["task"] != spec.task:
            raise InputError(f"task {metadata['task']!r} is not {spec.name}'s ({spec.task})")
        schema = Schema.from_dict(metadata["schema"])
        if not isinstance(metadata["params"], dict):
            raise InputError("params is not a mapping")
        if spec.task == registry.CLASSIFICATION and (
                schema.class_attribute is None or schema.class_attribute.kind != "nominal"):
            raise InputError("a classifier's schema needs a nominal class")
        if spec.task == registry.REGRESSION and (
                schema.class_attribute is None or schema.class_attribute.kind != "numeric"):
            raise InputError("a regression model's schema needs a numeric class")
        seed = metadata.get("seed")
        if seed is not None and (type(seed) is not int or not 0 <= seed < 2**32):
            raise InputError(f"seed {seed!r} is not a whole number in [0, 2**32)")
        _training_prior(metadata, schema)
    except (KeyError, TypeError, ValueError, registry.UnknownAlgorithmError) as exc:
        missing = isinstance(exc, KeyError) and not isinstance(exc, registry.UnknownAlgorithmError)
        what = f"missing {exc}" if missing else str(exc).strip("'\"")
        raise ModelFileError(f"{path}: the model's metadata is damaged ({what})") from None
    return spec, schema


def _rebuild(path, metadata: dict, scalars, arrays):
    """The fitted ``prep -> model`` pair a model's metadata and arrays describe, checked.

    The classes come from the registry entry the metadata names (its model
    class, and the preprocessing step it declares), their constructor
    arguments from the checked ``params`` and the schema, and their state from
    ``scalars`` and ``arrays`` through :func:`ensemblekit.state.restore`.

    Raises
    ------
    ensemblekit.persistence.ModelFileError
        Naming the file and the entry that is wrong.
    """
    import numpy as np

    from ensemblekit import state
    from ensemblekit.persistence import ModelFileError
    from ensemblekit.pipeline import ModelPipeline
    from ensemblekit.preprocessing_model import PreprocessorModel, layout
    from ensemblekit.trust import DamagedModelError

    spec, schema = _check_metadata(path, metadata)
    params = metadata["params"]
    unknown = sorted(set(params) - set(spec.exposed))
    if unknown:
        raise ModelFileError(f"{path}: the model's metadata is damaged (params: {spec.name} has "
                             f"no parameter {unknown[0]!r})")
    try:
        kwargs = registry.estimator_kwargs(spec.name, schema, params, metadata.get("seed"))
    except InputError as exc:
        raise ModelFileError(f"{path}: the model's metadata is damaged (params: {exc})") from None
    if type(scalars) is not dict or set(scalars) != {"prep", "model"}:
        raise ModelFileError(f"{path}: the model file is damaged: its state is not one of a "
                             "preprocessing step and a model")
    parts = {"prep": {}, "model": {}}
    for key, value in arrays.items():
        head = key.split("/", 1)[0]
        if head not in parts:
            raise ModelFileError(f"{path}: the model file is damaged: {key}: not part of the model")
        parts[head][key] = value
    try:
        if spec.encode == "codes":
            if scalars["prep"] is not None or parts["prep"]:
                raise DamagedModelError("prep: this algorithm has no preprocessing step")
            prep = "passthrough"
        else:
            prep = state.restore(PreprocessorModel, layout(
                schema, impute_numeric=spec.impute_numeric, scale=spec.scale),
                scalars["prep"], parts["prep"], name="prep")
        model = state.restore(spec.model_class(), kwargs, scalars["model"], parts["model"],
                              name="model")
    except DamagedModelError as exc:
        raise ModelFileError(f"{path}: the model file is damaged: {exc}") from None
    width = getattr(model, "n_features_in_", None)
    if spec.encode == "codes" and width is not None and width != len(schema.features):
        raise ModelFileError(f"{path}: the model file is damaged: its schema has "
                             f"{len(schema.features)} attributes but the estimator reads {width}")
    if spec.task == registry.CLASSIFICATION:
        codes = np.asarray(getattr(model, "classes_", ()))
        n_values = len(schema.class_attribute.values)
        if codes.ndim != 1 or codes.size == 0 or codes.dtype.kind not in "iuf" or np.any(
                (codes < 0) | (codes >= n_values) | (codes != np.round(codes))):
            raise ModelFileError(f"{path}: the model file is damaged: its classes do not index "
                                 f"the {n_values} values of class "
                                 f"'{schema.class_attribute.name}'")
    return ModelPipeline([("prep", prep), ("model", model)])


def load_model(path) -> FittedModel:
    """Load a model file: its metadata, then its state rebuilt as the registry's model classes.

    The file is untrusted input: :func:`ensemblekit.persistence.load_model`
    bounds and checks the container; here the classes come from the registry
    entry the metadata names, never from the file, and every stored array and
    scalar passes the class's declaration and its ``_check_state`` before it
    is used (:func:`ensemblekit.state.restore`). The model class of every
    algorithm that predicts without refitting imports numpy alone.

    Raises
    ------
    ensemblekit.persistence.ModelFileError
    """
    from ensemblekit.persistence import load_model as read

    with stage("loading the model"):
        metadata, arrays = read(path)
        pipeline = _rebuild(path, metadata, metadata["state"], arrays)
    return FittedModel(pipeline, metadata)


def _as_model(model) -> FittedModel:
    return model if isinstance(model, FittedModel) else load_model(model)


def _schema_of(model: FittedModel):
    from ensemblekit.dataset import Schema

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
        # distinct rows of each bag, counted on a sorted copy (a set of Python ints would take
        # about 40 times the array's memory for a bag as large as a model file allows)
        out["bag_sizes"] = [int(np.count_nonzero(np.diff(np.sort(rows)))) + 1 if rows.size else 0
                            for rows in est.estimators_samples_]
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
            raise InputError(f"training_data.class_counts is not {n_values} counts")
        return np.asarray(counts, dtype=np.int64)
    if "target_mean" in train:
        mean = train["target_mean"]
        if type(mean) not in (int, float) or not math.isfinite(mean):
            raise InputError("training_data.target_mean is not a finite number")
        return float(mean)
    return None
