"""Plain result objects returned by :mod:`ensemblekit.api`.

Each result holds what a command computed, as numbers and names, and knows how
to give it as plain data: ``to_dict()`` is the document the command line prints
with ``--format json``, and ``to_records()`` (where a result has rows) is a list of
flat dictionaries, ready for ``pandas.DataFrame`` or a CSV writer. Rendering for
people (tables, verdict sentences) is :mod:`ensemblekit.report`'s job; the JSON
documents that hold sentences (a comparison's verdicts) ask it for them.

Nothing here imports numpy at module level, so the command line can name these
types without loading it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ensemblekit import safejson


def to_json(document: Any, *, sort_keys: bool = False) -> str:
    """``document`` as the command line prints it: indented JSON, then a newline.

    Every ``--format json`` document goes through here. NaN and infinities are
    written as ``null`` (bare ``NaN`` is not JSON), numpy scalars and arrays as
    Python numbers and lists (:func:`ensemblekit.safejson.plain`).

    Parameters
    ----------
    document : object
        Plain data (dicts, lists, numbers, strings), as ``to_dict()`` gives.
    sort_keys : bool, default False
        Write each object's keys in sorted order.

    Raises
    ------
    TypeError
        If the document holds an object JSON cannot represent.
    """
    return safejson.dumps(document, indent=1, sort_keys=sort_keys) + "\n"


@dataclass
class FittedModel:
    """A fitted pipeline with the metadata a model file stores.

    Attributes
    ----------
    pipeline : sklearn.pipeline.Pipeline
        The fitted ``prep -> model`` pipeline of a registered algorithm.
    metadata : dict
        Algorithm, task, resolved parameters, seed, training schema and the
        training data's name, size and fingerprint (see
        :func:`ensemblekit.persistence.save_model`).
    """

    pipeline: Any
    metadata: dict

    @property
    def algorithm(self) -> str:
        """Registry name of the fitted algorithm."""
        return self.metadata["algorithm"]

    @property
    def estimator(self):
        """The fitted estimator itself (the pipeline's last step)."""
        return self.pipeline.named_steps["model"]

    def to_dict(self) -> dict:
        """The metadata (what ``show --format json`` prints)."""
        return self.metadata


@dataclass
class Prediction:
    """Predictions for every row of a data set, in file order.

    Attributes
    ----------
    task : {"classification", "regression", "clustering"}
    predictions : list
        One entry per row: a class value (str), a predicted number (float) or a
        cluster number as text.
    probabilities : ndarray of shape (n_rows, n_classes) or None
        Class probabilities over every class value of the training schema (those
        the model never saw get 0); only when asked for.
    classes : tuple of str
        The class values naming the probability columns (empty without them).
    prediction_values : tuple of str
        The values the prediction column can take (the schema's class values, or
        the cluster numbers); empty for a numeric prediction.
    """

    task: str
    predictions: list
    probabilities: Any = None
    classes: tuple = ()
    prediction_values: tuple = ()

    @property
    def columns(self) -> list[str]:
        """Column names of the output: ``row``, ``prediction``, then ``p_<class>`` per class."""
        return ["row", "prediction", *(f"p_{c}" for c in self.classes)]

    def to_records(self) -> list[dict]:
        """One dictionary per row: ``row`` (from 1), ``prediction`` and the probabilities."""
        from ensemblekit.report import prediction_rows

        return [dict(zip(self.columns, row))
                for row in prediction_rows(self.predictions, self.probabilities, self.classes)]

    def to_dict(self) -> dict:
        """The records under ``"predictions"``, with the task and columns."""
        return {"task": self.task, "columns": self.columns, "predictions": self.to_records()}


@dataclass
class ModelEvaluation:
    """A model scored on a test set: a saved one (``evaluate MODEL DATA``), or one
    trained and tested in one step (``evaluate ALGO DATA --test FILE`` or
    ``--split-percentage P``).

    Attributes
    ----------
    model : str
        Where the model came from (its file name, or the algorithm), for the report.
    algorithm : str
    dataset : str
        Name of the test data set.
    instances : int
        Rows scored: those with a known class or target.
    scores : dict of str to float
        Metric name to value.
    task : str
    protocol : str
        How the model was trained and tested, in words.
    report : ClassificationEvaluation or RegressionEvaluation or None
        Weka's report of the test (see :mod:`ensemblekit.evaluation`); None for
        a clusterer.
    class_names : tuple of str
        The class values, in code order (classification).
    resubstitution : bool
        True when the test data is the model's own training data.
    train_instances : int or None
        Training rows, when the model was trained in this call.
    """

    model: str
    algorithm: str
    dataset: str
    instances: int
    scores: dict
    task: str = ""
    protocol: str = ""
    report: Any = None
    class_names: tuple = ()
    resubstitution: bool = False
    train_instances: int | None = None

    def to_dict(self) -> dict:
        """``model``, ``dataset``, ``instances``, ``scores`` and the protocol, with the
        report (per-class figures, confusion matrix) when there is one, as
        ``--format json`` prints them."""
        out = {"model": self.model, "dataset": self.dataset, "instances": self.instances,
               "scores": self.scores}
        if self.protocol:
            out.update(protocol=self.protocol, train_instances=self.train_instances,
                       resubstitution=self.resubstitution)
        if self.report is not None:
            out["report"] = self.report.to_dict()
        return out

    def to_records(self) -> list[dict]:
        """One ``{"metric", "value"}`` record per metric."""
        return [{"metric": m, "value": v} for m, v in self.scores.items()]


@dataclass
class Clustering:
    """One clustering of a data set (``cluster ALGO DATA -k K``).

    Attributes
    ----------
    algorithm : str
    params : dict
        Resolved parameters.
    seed : int
    dataset : str
    labels : ndarray of shape (n_rows,)
        Cluster of each row, from 0.
    sizes : list of int
        Rows per cluster.
    external : dict of str to float
        Agreement with the class (empty when the data has no nominal class).
    internal : dict of str to float
        Internal validity indices on the clustered attributes (empty when they
        cannot be computed; ``notes`` says why).
    prototypes : ndarray of shape (k, n_features) or None
        Cluster centres, for prototype-based clusterers.
    feature_names : list of str
        Names of the prototype columns.
    iterations : int or None
    rules : int or None
        Number of rules (isca, ss-isca).
    members : int or None
        Ensemble size (cluster ensembles).
    partitioner : str or None
        The graph partitioner a consensus function used.
    targets : tuple of str or None
        ss-isca's target attributes.
    class_name : str or None
        Name of the class the external indices compare with.
    model : FittedModel
        The fitted model (``save_model`` writes it).
    """

    algorithm: str
    params: dict
    seed: int
    dataset: str
    labels: Any
    sizes: list
    external: dict
    internal: dict
    prototypes: Any
    feature_names: list
    iterations: int | None
    rules: int | None
    members: int | None
    partitioner: str | None
    targets: tuple | None
    class_name: str | None
    model: FittedModel

    @property
    def similarity(self):
        """The learned instance similarity (isca, ss-isca), shape (n_rows, n_rows)."""
        return self.model.estimator.similarity_

    def to_dict(self) -> dict:
        """The document ``cluster --format json`` prints (labels are not in it)."""
        out = {"algorithm": self.algorithm, "params": self.params, "seed": self.seed,
               "dataset": self.dataset, "sizes": list(self.sizes),
               "iterations": int(self.iterations or 0), "external": self.external,
               "internal": self.internal,
               "prototypes": None if self.prototypes is None else
               [dict(zip(self.feature_names, map(float, row))) for row in self.prototypes]}
        if self.partitioner is not None:
            out["partitioner"] = self.partitioner
        if self.rules is not None:
            out["rules"] = int(self.rules)
        if self.targets is not None:
            out["targets"] = list(self.targets)
        return out

    def to_records(self) -> list[dict]:
        """One ``{"row", "cluster"}`` record per row (rows from 1)."""
        return [{"row": i + 1, "cluster": int(c)} for i, c in enumerate(self.labels)]


@dataclass
class KSelection:
    """Internal indices of one algorithm for every k of a range (``cluster -k A:B``).

    Attributes
    ----------
    algorithm : str
    params : dict
        Resolved parameters other than ``n_clusters``.
    seed : int
    dataset : str
    ks : list of int
    values : dict of str to list of float
        Per index, its value at each k (NaN where it could not be computed).
    best : dict of str to int or None
        The best k of each index.
    model : FittedModel
        The last model fitted (for isca, the one tree cut at every k).
    """

    algorithm: str
    params: dict
    seed: int
    dataset: str
    ks: list
    values: dict
    best: dict
    model: FittedModel

    def to_dict(self) -> dict:
        """The document ``cluster -k A:B --format json`` prints (NaN as null)."""
        import math

        return {"algorithm": self.algorithm, "params": self.params, "seed": self.seed,
                "dataset": self.dataset, "k": self.ks,
                "internal": {name: [None if math.isnan(v) else v for v in column]
                             for name, column in self.values.items()},
                "best_k": self.best}

    def to_records(self) -> list[dict]:
        """One record per k: ``k`` and each index's value."""
        return [{"k": k, **{name: column[i] for name, column in self.values.items()}}
                for i, k in enumerate(self.ks)]


@dataclass
class Comparison:
    """Algorithms compared over data sets under one protocol (``compare``, ``evaluate ALGO``).

    Attributes
    ----------
    task : str
    protocol : ensemblekit.experiment.Protocol
    metrics : list of str
    datasets : list of str
        Data set names, in the order compared.
    labels : list of str
        Algorithm labels (grid points carry their parameters in brackets).
    candidates : list of ensemblekit.experiment.Candidate
    scores : list of ensemblekit.experiment.Score
        Every score, long format.
    failures : list of ensemblekit.experiment.Failure
    summary : dict
        ``(dataset, label, metric) -> (mean, sd, n)``.
    analyses : dict of str to ensemblekit.experiment.MetricAnalysis
        Per metric: ranks, tests over data sets, verdicts and per-cell marks.
    baseline, reference : str or None
        The algorithm cells are tested against (``reference`` is the first
        algorithm when no baseline is given).
    grid : dict of str to list of dict
        Per metric, the grid summary rows (empty without ``--grid``).
    alpha : float
    max_instances : int or None
    units : int
        Units of work in the plan.
    computed : int
        Units computed in this call (the rest came from the resume journal).
    pooled : dict
        ``evaluate ALGO DATA`` by cross-validation: ``(dataset, label) -> report``
        of the out-of-fold predictions of every repeat pooled (see
        :mod:`ensemblekit.evaluation`); empty for ``compare``.
    """

    task: str
    protocol: Any
    metrics: list
    datasets: list
    labels: list
    candidates: list
    scores: list
    failures: list
    summary: dict
    analyses: dict
    baseline: str | None
    reference: str | None
    grid: dict = field(default_factory=dict)
    alpha: float = 0.05
    max_instances: int | None = None
    units: int = 0
    computed: int = 0
    pooled: dict = field(default_factory=dict)

    @property
    def failed(self) -> set:
        """``(dataset, label)`` pairs with a failed unit."""
        return {(f.dataset, f.algorithm) for f in self.failures}

    def table(self, metric: str) -> dict:
        """Mean score per data set and algorithm: ``{dataset: {label: mean or None}}``.

        A cell with a failed unit is None.

        Raises
        ------
        KeyError
            If ``metric`` was not computed.
        """
        if metric not in self.analyses:
            raise KeyError(f"metric {metric!r} was not computed; computed: {', '.join(self.metrics)}")
        failed = self.failed
        return {d: {a: (self.summary[(d, a, metric)][0]
                        if (d, a, metric) in self.summary and (d, a) not in failed else None)
                    for a in self.labels} for d in self.datasets}

    def protocol_dict(self) -> dict:
        """The protocol as ``--format json`` states it."""
        p = self.protocol
        return {"kind": p.kind, "folds": p.folds if p.kind == "cv" else None,
                "repeats": p.repeats, "seed": p.seed, "alpha": self.alpha,
                "max_instances": self.max_instances}

    def to_dict(self) -> dict:
        """The document ``compare --format json`` prints: cells, ranks, tests, verdicts."""
        from ensemblekit.report import comparison_document

        return comparison_document(self)

    def to_records(self) -> list[dict]:
        """Every score (and failure) in long format, the rows of ``--output``."""
        from ensemblekit.report import score_records

        return score_records(self.scores, self.failures)
