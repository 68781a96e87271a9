"""Evaluate one algorithm by a protocol, or one saved model on a test set (``evaluate``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ensemblekit import registry
from ensemblekit.app.common import (
    Notify,
    _class_for,
    _labelled,
    _labelled_rows,
    _load_for,
    _metrics_for,
    _notifier,
    _refuse_weighted,
    load_data,
    stage,
)
from ensemblekit.app.comparing import compare
from ensemblekit.app.models import _as_model, _training_prior, fit, read_model_metadata
from ensemblekit.errors import UsageError
from ensemblekit.results import FittedModel, ModelEvaluation


def _report_metrics(task: str, metrics: Sequence[str], prior) -> list[str]:
    """The measures a report gives: those asked for, or every one the task has (the
    relative errors only when the training prior is known)."""
    from ensemblekit.metrics import default_metrics

    if metrics:
        return _metrics_for(task, metrics)
    return [m for m in default_metrics(task, report=True)
            if prior is not None or m not in ("rae", "rrse")]


def cost_matrix_for(cost_matrix, class_names: Sequence[str]):
    """The cost matrix of ``--cost-matrix``, checked against the class values.

    Parameters
    ----------
    cost_matrix : path, str or array-like of shape (C, C)
        A cost file in Weka's ``CostMatrix`` form or ``[a b; c d]``
        (:func:`ensemblekit.readers.cost_matrix.read_cost_matrix`), that one-line
        form itself when no such file exists, or the matrix.
    class_names : sequence of str
        The ``C`` class values, in code order.

    Returns
    -------
    ndarray of float64, shape (C, C)

    Raises
    ------
    UsageError, ensemblekit.data.DataError
        An unreadable or malformed file, or a matrix that is not C by C; the message
        names the file.
    """
    import os

    from ensemblekit.errors import InputError
    from ensemblekit.readers.cost_matrix import parse_cost_matrix, read_cost_matrix
    from ensemblekit.scores.costs import check_cost_matrix

    source = "--cost-matrix"
    if isinstance(cost_matrix, (str, os.PathLike)):
        source = os.fspath(cost_matrix)
        inline = isinstance(cost_matrix, str) and cost_matrix.lstrip().startswith("[")
        cost_matrix = (parse_cost_matrix(cost_matrix, "--cost-matrix")
                       if inline and not os.path.exists(cost_matrix)
                       else read_cost_matrix(cost_matrix))
    try:
        return check_cost_matrix(cost_matrix, len(class_names))
    except InputError as exc:
        names = f" ({', '.join(map(str, class_names))})" if len(class_names) <= 10 else ""
        raise UsageError(f"{source}: {exc}{names}") from None


def _refuse_extras(name: str, task: str, cost_matrix, curves: bool) -> None:
    """Cost matrices and threshold curves judge class predictions only."""
    given = [option for option, on in (("--cost-matrix", cost_matrix is not None),
                                       ("--curve-out", curves)) if on]
    if given and task != registry.CLASSIFICATION:
        kind = "a clusterer" if task == registry.CLUSTERING else "a regression algorithm"
        raise UsageError(f"{' and '.join(given)}: for classifiers only, and {name} is {kind}")


def _test_report(pipeline, task: str, ds, prior, metrics: Sequence[str], class_names,
                 **report_options):
    """Score a fitted pipeline on the labelled rows of ``ds``: ``(scores, report, rows)``.

    A classifier is judged by its class probabilities (the predicted class is their first
    arg-max, as Weka's); ``report`` is Weka's report of :mod:`ensemblekit.scores.classification`
    or :mod:`ensemblekit.scores.regression`, or None for a clusterer. As in Weka's
    evaluation, every row is predicted, in file order, and the rows with a known class are
    scored: a model whose predictions depend on the rows before (knn's ranges, which each
    test row widens) sees the unlabelled rows too. ``report_options`` (``cost_matrix``,
    ``curves``) go to :func:`~ensemblekit.scores.classification.classification_report`.
    """
    import time

    import numpy as np

    from ensemblekit.metrics import model_predictions, score_model
    from ensemblekit.scores.classification import classification_report
    from ensemblekit.scores.regression import regression_report

    keep = _labelled(ds)
    if not keep.any():
        raise UsageError(f"{ds.source}: every instance has a missing class value "
                         f"('{ds.schema.class_attribute.name}'); there is nothing to score against")
    classifier = task == registry.CLASSIFICATION
    start = time.perf_counter()
    predicted, proba = model_predictions(pipeline, ds.X, task=task, proba=classifier,
                                         n_classes=len(class_names) if classifier else None)
    seconds = {"predict": time.perf_counter() - start}  # for -m predict-seconds
    predicted = np.asarray(predicted)[keep]
    unlabelled = None if proba is None else proba[~keep]  # ranked by Weka's curves too
    proba = None if proba is None else proba[keep]
    truth = ds.y[keep]
    report = None
    if classifier:
        truth = np.asarray(truth, dtype=np.intp)
        report = classification_report(truth, proba, prior, class_names, unlabelled=unlabelled,
                                       **report_options)
    elif task == registry.REGRESSION:
        truth = np.asarray(truth, dtype=np.float64)
        report = regression_report(truth, predicted, prior)
    # internal indices judge the labelled rows in the space the estimator clustered (the
    # pipeline's preprocessing applied), as compare does
    scores = score_model(metrics, pipeline, ds.X[keep], truth=truth, predicted=predicted,
                         proba=proba, prior=prior, seconds=seconds).values
    return scores, report, int(keep.sum())


def evaluate_model(model, data, *, metrics: Sequence[str] = (), input_format: str | None = None,
                   cost_matrix=None, curves: bool = False,
                   notify: Notify | None = None) -> ModelEvaluation:
    """Score a saved model on a test set (``evaluate MODEL DATA``), as Weka's ``-l MODEL -T DATA``.

    Parameters
    ----------
    model : FittedModel or path
    data : path, Dataset, DataFrame or stream
        As :func:`load_data` reads it (a pandas or polars DataFrame by its dtypes).
        Read against the model's schema; rows with a missing class are not scored.
    metrics : sequence of str
        Default: every measure of the task (clusterers: nmi and purity). The
        relative errors need the training class counts (or mean) the model
        file records; files written before they were recorded are reported
        without them.
    cost_matrix : path, str or array-like of shape (C, C), optional
        Costs of (actual, predicted) class pairs (see :func:`cost_matrix_for`): the
        report then gives Weka's Total Cost and Average Cost (Weka's ``Evaluation``
        with a ``CostMatrix``, ``-m FILE``). Classifiers only.
    curves : bool, default=False
        Keep each class's ROC and precision-recall points in the report (Weka's
        ``ThresholdCurve``, ``-threshold-file``). Classifiers only.
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
    from ensemblekit.dataset import Schema
    from ensemblekit.persistence import data_fingerprint

    notify = _notifier(notify)
    name = str(model) if not isinstance(model, FittedModel) else model.algorithm
    metadata = (read_model_metadata(model) if not isinstance(model, FittedModel)
                else model.metadata)
    schema = Schema.from_dict(metadata["schema"])
    ds = load_data(data, schema=schema, input_format=input_format)
    _refuse_weighted(ds, "evaluate")
    if ds.y is None:
        raise UsageError(f"{ds.source}: has no class attribute '{schema.class_attribute.name}' "
                         "to score the model against" if schema.class_attribute else
                         f"{ds.source}: has no class attribute to score against")
    task = metadata["task"]
    _refuse_extras(name, task, cost_matrix, curves)
    if cost_matrix is not None:
        cost_matrix = cost_matrix_for(cost_matrix, ds.class_values)
    prior = _training_prior(metadata, schema)
    chosen = _report_metrics(task, metrics, prior) if task != registry.CLUSTERING else \
        _metrics_for(task, metrics)
    model = _as_model(model)
    if not registry.get(model.algorithm).predicts_new_rows:
        raise UsageError(f"{model.algorithm} models cannot label new rows (the algorithm has "
                         "no out-of-sample rule); use 'ensemblekit compare' or 'cluster' instead")
    with stage("testing"):
        scores, report, n = _test_report(model.pipeline, task, ds, prior, chosen,
                                         ds.class_values, cost_matrix=cost_matrix, curves=curves)
    seen = metadata.get("training_data", {}).get("fingerprint")
    same = task != registry.CLUSTERING and seen == data_fingerprint(*_labelled_rows(ds, task))
    if same:
        notify(f"note: {ds.source} is the data this model was trained on: these figures are "
               "resubstitution estimates, optimistic for new data (use --cv, --test or "
               "--split-percentage for honest ones)")
    return ModelEvaluation(name, model.algorithm, ds.name, n, scores, task=task,
                           protocol=f"model {name} tested on {ds.name}", report=report,
                           class_names=tuple(ds.class_values), resubstitution=same,
                           ignored=0 if task == registry.CLUSTERING else ds.n_instances - n)


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
                   cost_matrix=None, curves: bool = False,
                   notify: Notify | None = None) -> ModelEvaluation:
    """Train on one part and test on another, in one step (Weka's ``-t TRAIN -T TEST``
    or ``-t DATA -split-percentage P [-preserve-order]``).

    Parameters
    ----------
    algorithm : str
        A classifier or regression algorithm.
    data : path, Dataset, DataFrame or stream
        As :func:`load_data` reads it (a pandas or polars DataFrame by its dtypes).
        Training data; with ``split_percentage``, the data to split.
    test : path or Dataset, optional
        Test data, read against the training data's schema.
    split_percentage : float, optional
        Percentage of ``data`` to train on, in (0, 100) (see :func:`split_rows`).
    preserve_order : bool
        Split in file order instead of after a seeded shuffle.
    metrics, target, params, seed, ignore, input_format, cost_matrix, curves, notify
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
    _refuse_extras(algorithm, spec.task, cost_matrix, curves)
    ds = _load_for(spec.task, data, target=target, ignore=ignore, input_format=input_format,
                   algo=algorithm, notify=notify)
    _refuse_weighted(ds, "evaluate")
    if cost_matrix is not None:
        cost_matrix = cost_matrix_for(cost_matrix, ds.class_values)
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
    with stage("testing"):
        scores, report, n = _test_report(fitted.pipeline, spec.task, test_ds, prior, chosen,
                                         ds.class_values, cost_matrix=cost_matrix, curves=curves)
    return ModelEvaluation(algorithm, algorithm, test_ds.name, n, scores, task=spec.task,
                           protocol=protocol, report=report, class_names=tuple(ds.class_values),
                           train_instances=fitted.metadata["training_data"]["instances"],
                           ignored=test_ds.n_instances - n)


def evaluate(algorithm_or_model, data, *, test=None, split_percentage: float | None = None,
             preserve_order: bool = False, cost_matrix=None, curves: bool = False, **options):
    """Evaluate one algorithm by a protocol, or one saved model on a test set.

    Parameters
    ----------
    algorithm_or_model : str, path or FittedModel
        A registry name is trained and tested by :func:`evaluate_split` when
        ``test`` or ``split_percentage`` is given, else cross-validated
        (clusterers: seeded runs) as :func:`compare` does with one algorithm,
        with the pooled out-of-fold predictions reported Weka's way; a model
        (file) is scored on ``data`` as a test set by :func:`evaluate_model`.
    data : path, Dataset, DataFrame or stream
        As :func:`load_data` reads it (a pandas or polars DataFrame by its dtypes).
    test, split_percentage, preserve_order
        See :func:`evaluate_split`.
    cost_matrix, curves
        See :func:`evaluate_model`; under cross-validation they judge the pooled
        out-of-fold predictions (``Comparison.pooled``), as Weka's ``-x`` does.
    **options
        Those of :func:`compare` (or :func:`evaluate_split`) for an algorithm;
        ``metrics``, ``input_format`` and ``notify`` for a model.

    Returns
    -------
    Comparison or ModelEvaluation
    """
    extras = {"cost_matrix": cost_matrix, "curves": curves}
    if isinstance(algorithm_or_model, FittedModel) or (
            not registry.is_registered(algorithm_or_model) and Path(algorithm_or_model).is_file()):
        return evaluate_model(algorithm_or_model, data, **extras, **options)
    if test is not None or split_percentage is not None or preserve_order:
        return evaluate_split(algorithm_or_model, data, test=test,
                              split_percentage=split_percentage, preserve_order=preserve_order,
                              **extras, **options)
    task = registry.get(algorithm_or_model).task
    _refuse_extras(algorithm_or_model, task, cost_matrix, curves)
    if not options.get("metrics"):
        from ensemblekit.metrics import default_metrics

        options["metrics"] = default_metrics(task, report=True)
    if cost_matrix is not None:  # checked against the class before any fold is run
        target = options.get("target")
        data = _class_for(task, load_data(data, target=target, ignore=options.get("ignore", ()),
                                          input_format=options.get("input_format")), target)
        extras["cost_matrix"] = cost_matrix_for(cost_matrix, data.class_values)
    return compare([algorithm_or_model], [data], pooled=task != registry.CLUSTERING,
                   report_options=extras, **options)
