"""The application layer: what every ``ensemblekit`` command does, callable from Python.

The command line and notebooks share these functions. Each takes paths (or
:class:`~ensemblekit.data.Dataset` objects, pandas or polars DataFrames read by their
dtypes, and streams of ARFF or CSV text; see :func:`load_data`) and plain values, and
returns a result object of :mod:`ensemblekit.results` (``to_frame()`` gives its records
as a pandas DataFrame); none prints or writes a file, except
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

The functions live in :mod:`ensemblekit.app`, one module per command family
(``common``, ``models``, ``predicting``, ``clustering``, ``evaluating``,
``comparing``, ``plotting``); this module is their public face, and imports each
family's module when one of its names is first used. None of them imports a numeric
library until it runs, so the command line starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ensemblekit.errors import InputError, UsageError

if TYPE_CHECKING:  # the names, for readers and tools; at run time __getattr__ imports them
    from ensemblekit.app.analysing import analyse
    from ensemblekit.app.clustering import cluster, select_k
    from ensemblekit.app.common import describe_data, load_data, reading, timings
    from ensemblekit.app.comparing import compare
    from ensemblekit.app.evaluating import evaluate, evaluate_model, evaluate_split, split_rows
    from ensemblekit.app.models import describe_model, fit, load_model, save_model
    from ensemblekit.app.plotting import plot_comparison, plot_paths
    from ensemblekit.app.predicting import predict, predict_chunks

#: Each public name, with the module of :mod:`ensemblekit.app` that defines it. A name is
#: imported on first use (PEP 562), so a command loads only its own family's modules:
#: ``predict`` and ``show`` never load those of ``compare`` or ``cluster``.
_HOMES = {
    "analyse": "analysing",
    "cluster": "clustering", "select_k": "clustering",
    "Notify": "common", "Progress": "common", "describe_data": "common", "load_data": "common",
    "reading": "common", "resolve_params": "common", "timings": "common",
    "worker_count": "common",
    "compare": "comparing", "data_files": "comparing",
    "evaluate": "evaluating", "evaluate_model": "evaluating", "evaluate_split": "evaluating",
    "split_rows": "evaluating",
    "describe_model": "models", "fit": "models", "load_model": "models", "save_model": "models",
    "network_dot": "models", "read_model_metadata": "models",
    "plot_comparison": "plotting", "plot_paths": "plotting",
    "PREDICT_CHUNK": "predicting", "predict": "predicting", "predict_chunks": "predicting",
}

__all__ = ["UsageError", "analyse", "cluster", "compare", "describe_data", "describe_model", "evaluate",
           "evaluate_model", "evaluate_split", "fit", "load_data", "load_model", "plot_comparison",
           "plot_paths", "predict", "predict_chunks", "reading", "save_model", "select_k", "split_rows",
           "timings"]
# Public too, though not in ``__all__`` (what the command line and scripts use besides it):
# Notify, Progress, PREDICT_CHUNK, data_files, network_dot, read_model_metadata,
# resolve_params, worker_count.


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ensemblekit.app.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def input_errors() -> tuple[type[Exception], ...]:
    """The exception types that mean bad usage or bad input (the command line's exit code 2).

    Every one of them derives from :class:`ensemblekit.errors.InputError` (a data file
    that cannot be read, an unknown algorithm or parameter, a damaged model file, a bad
    protocol or plot request, a :class:`UsageError`), so that is the one type given.
    Their messages name the file, line, attribute or parameter at fault.
    """
    return (InputError,)
