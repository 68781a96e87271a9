"""Cluster a data set and score the clustering, or choose the number of clusters (``cluster``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ensemblekit import registry
from ensemblekit.app.common import (
    Notify,
    _default_n_clusters,
    _instance_weights,
    _labelled,
    _load_for,
    _metadata,
    _notifier,
    load_data,
    resolve_params,
    stage,
)
from ensemblekit.errors import InputError, UsageError
from ensemblekit.results import Clustering, FittedModel, KSelection


def _split_targets(ds, names):
    """Move the target attributes out of the features: (data set, Y)."""
    from ensemblekit.dataset import DataError

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
        table = load_data(str(members), no_class=True, typed=False)
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
        with stage("fitting"):
            labels = np.asarray(model.fit_predict(ds.X, y, **fit_params))
    except MissingDependencyError as exc:
        raise UsageError(str(exc)) from None
    except InputError as exc:
        raise UsageError(f"{ds.source}: {algorithm} cannot cluster this data: "
                         f"{registry.refusal_text(exc, algorithm, ds.schema)}") from None
    return model, labels


def _internal_indices(model, ds, labels, notify: Notify) -> dict:
    """Internal indices on the attributes the estimator clustered; {} with a note if impossible."""
    from ensemblekit.metrics import INTERNAL_INDICES, score_model

    try:
        with stage("indices"):
            return score_model(INTERNAL_INDICES, model, ds.X, predicted=labels).values
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
    _instance_weights(ds, spec)  # no clusterer takes them: refused when not all 1
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
    data : path, Dataset, DataFrame or stream
        As :func:`load_data` reads it (a pandas or polars DataFrame by its dtypes).
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
    from ensemblekit.metrics import EXTERNAL_INDICES, score_model
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
        external = score_model(EXTERNAL_INDICES, truth=ds.y[keep], predicted=labels[keep]).values
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
            except InputError as exc:
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
