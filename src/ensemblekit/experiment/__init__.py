"""Evaluation protocols: repeated stratified cross-validation and repeated clustering runs.

A comparison goes through four steps, one module each:

* :mod:`~ensemblekit.experiment.protocol` -- the protocol (folds, runs, grid
  points, subsampling) and its :func:`plan`: independent units of work, each
  fully determined by the user's seed, so that they can run in any order or in
  parallel and give the same scores; every algorithm gets the same folds and
  estimator seeds (paired comparisons);
* :mod:`~ensemblekit.experiment.runner` -- a :class:`Runner` runs the units
  serially, on local worker processes (joblib) or on a Dask cluster, each on
  one core, and returns long-format :class:`Score` rows;
  :mod:`~ensemblekit.experiment.scheduler` reaches the Dask scheduler within a
  deadline, checks that it is one, and notices when its workers are gone;
* :mod:`~ensemblekit.experiment.journal` -- the resume journal (``--resume``):
  finished units on disk, one writer at a time (:class:`JournalLock`);
* :mod:`~ensemblekit.experiment.analysis` -- summaries, average ranks, the
  tests over data sets and their verdicts, and the grid summary.

Nothing here prints; the journal is the only file written; progress is
reported through a callback. The names below are re-exported from those
modules, :data:`DEFAULT_METRICS` from :mod:`ensemblekit.metrics`, and :func:`worker_count`
from :mod:`ensemblekit._workers`.
"""

from ensemblekit._workers import MAX_WORKERS_PER_CORE, worker_count
from ensemblekit.experiment.analysis import (
    MetricAnalysis,
    PairVerdict,
    analyse,
    beats,
    grid_summary,
    summarize,
)
from ensemblekit.experiment.journal import JournalLock
from ensemblekit.experiment.protocol import (
    Candidate,
    Plan,
    Protocol,
    ProtocolError,
    Unit,
    derive_seed,
    expand_grid,
    parse_grid,
    plan,
    subsample,
)
from ensemblekit.experiment.runner import (
    Failure,
    Runner,
    RunResult,
    Score,
    UnitPredictions,
    run,
)
from ensemblekit.metrics import DEFAULT_METRICS

__all__ = [
    "DEFAULT_METRICS",
    "MAX_WORKERS_PER_CORE",
    "Candidate",
    "Failure",
    "JournalLock",
    "MetricAnalysis",
    "PairVerdict",
    "Plan",
    "Protocol",
    "ProtocolError",
    "RunResult",
    "Runner",
    "Score",
    "Unit",
    "UnitPredictions",
    "analyse",
    "beats",
    "derive_seed",
    "expand_grid",
    "grid_summary",
    "parse_grid",
    "plan",
    "run",
    "subsample",
    "summarize",
    "worker_count",
]
