"""The ``ensemblekit`` command line (Typer).

Commands read files, call the library and print; they never compute scores
themselves. Heavy libraries (scikit-learn, skops) are imported inside the commands
that use them, so ``--help``, ``algorithms`` and ``info`` start fast.

Exit codes: 0 success; 2 bad usage or bad input (one line on stderr naming the
file, line or attribute); 1 an unexpected failure.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import List, Optional

import typer

from ensemblekit import __version__, registry

app = typer.Typer(
    name="ensemblekit",
    help="Ensemble methods inside and around learners, on ARFF and CSV files.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1


class UsageError(Exception):
    """A command-line mistake that is not caught by option parsing."""


def _version(value: bool):
    if value:
        typer.echo(f"ensemblekit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
):
    """Ensemble methods inside and around learners, on ARFF and CSV files.

    Every command reads ARFF or CSV ('-' reads standard input); the class is the
    last attribute unless --target names another. Results go to stdout, messages to
    stderr. Exit codes: 0 ok, 2 bad usage or input, 1 unexpected failure.
    """


# --------------------------------------------------------------------------- helpers
def _err(message: str) -> None:
    """One line on stderr, ``ensemblekit: MESSAGE``, with control characters escaped.

    A message may quote a name from a file; :func:`ensemblekit.report.printable`
    keeps its escape sequences from reaching the terminal.
    """
    from ensemblekit.report import printable

    typer.echo(f"ensemblekit: {printable(message)}", err=True)


def _note(message: str) -> None:
    """A note on stderr (control characters escaped, as in :func:`_err`)."""
    from ensemblekit.report import printable

    typer.echo(printable(message), err=True)


class _ClosedStdout(io.TextIOBase):
    """Stands in for ``sys.stdout`` when file descriptor 1 was closed before we started.

    Python leaves ``sys.stdout`` as None then. This object makes any attempt to
    write output a usage error ("standard output is closed", exit code 2) instead
    of an ``AttributeError``, including the help and version text that click and
    rich print themselves. It reads as no terminal.
    """

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text) -> int:
        raise UsageError("standard output is closed")


def _guard_standard_streams() -> None:
    """Make closed standard streams harmless; called first by :func:`main`.

    A descriptor 0, 1 or 2 that was closed when the process started gets
    ``/dev/null``, so no file this process opens later can take its number (and
    so be written by a child process or a C library that prints). Then:
    ``sys.stdout`` becomes a :class:`_ClosedStdout`, ``sys.stderr`` writes to
    ``/dev/null`` (messages are lost; exit codes still tell), and ``sys.stdin``
    stays None, which :func:`_load` reports only when a command reads ``'-'``.
    """
    closed = [fd for fd in (0, 1, 2) if not _fd_is_open(fd)]
    for fd in closed:
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        os.set_inheritable(fd, True)
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stderr is None and 2 in closed:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)


def _fd_is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _require_stdout() -> None:
    """Refuse, before any work, a command whose output would go to a closed standard output."""
    if sys.stdout is None or isinstance(sys.stdout, _ClosedStdout):
        raise UsageError("standard output is closed")


@contextlib.contextmanager
def _user_errors():
    """Turn bad-input exceptions into one stderr line and exit code 2."""
    from ensemblekit.data import DataError

    handled: tuple = (DataError, registry.ParameterError, registry.UnknownAlgorithmError, UsageError)
    try:
        from ensemblekit.experiment import ProtocolError
        from ensemblekit.persistence import ModelFileError
        from ensemblekit.plots import PlotError

        handled += (ModelFileError, ProtocolError, PlotError)
    except ImportError:  # pragma: no cover - modules always present in a release
        pass
    try:
        yield
    except handled as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None


def _quiet_exit_on_closed_pipe() -> None:
    """The reader (e.g. ``head``) closed stdout: stop quietly with exit code 0."""
    _stdout_to_devnull()
    raise typer.Exit(0)


def _stdout_to_devnull() -> None:
    """Point file descriptor 1 at ``/dev/null``, so flushing what is left at exit cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def _stdout_console():
    """A rich console on stdout: no markup guessing, no emoji codes, quiet exit on a closed pipe."""
    from rich.console import Console

    _require_stdout()

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            _quiet_exit_on_closed_pipe()

    tty = sys.stdout.isatty()
    return _PipeConsole(file=sys.stdout, width=None if tty else 200, soft_wrap=False,
                        force_terminal=None if tty else False, highlight=False, emoji=False)


def _write_stdout(text: str) -> None:
    """Write to stdout; a reader that closed the pipe early (``| head``) ends us quietly."""
    _require_stdout()
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_exit_on_closed_pipe()


def _check_destination(path: Optional[Path], option: str) -> None:
    """Refuse, before any work, an output path that cannot be written.

    Judged after following symbolic links (see
    :func:`ensemblekit.atomic.destination_problem`): the folder of the file a
    link points to must exist and be writable; a device or a named pipe is
    fine; a folder or a socket is refused.
    """
    if path is None:
        return
    from ensemblekit.atomic import destination_problem

    problem = destination_problem(path)
    if problem is not None:
        raise UsageError(f"{option} {path}: {problem}")


def _write_file(path: Path, text: str) -> None:
    from ensemblekit.atomic import write_error_message
    from ensemblekit.report import write_text_atomic

    try:
        write_text_atomic(path, text)
    except OSError as exc:  # a full disk reads "no space left on device writing PATH"
        raise UsageError(write_error_message(path, exc)) from None


def _emit(text: str, output: Optional[Path]) -> None:
    """Send machine output to ``output`` (atomically) or to stdout."""
    if output is None:
        _write_stdout(text)
    else:
        _write_file(output, text)


def _load(path: str, *, target=None, ignore=(), input_format=None, schema=None,
          allow_string=False, no_class=False):
    """Read a data file (or ``'-'``, standard input) for a command.

    Raises
    ------
    UsageError
        ``--target`` together with ``--no-class``, or ``'-'`` while standard
        input is closed.
    DataError
        The file cannot be read (see :func:`ensemblekit.data.load_dataset`).
    """
    from ensemblekit.data import load_dataset

    if no_class and target is not None:
        raise UsageError(f"--target {target} and --no-class contradict each other: --no-class "
                         "makes every attribute a feature; give one of them")
    if path == "-" and sys.stdin is None:
        raise UsageError("cannot read '-': standard input is closed")
    return load_dataset(path, target=target, fmt=input_format, schema=schema, ignore=tuple(ignore),
                        allow_string=allow_string, no_class=no_class)


def _load_for(task: str, path: str, *, target=None, ignore=(), input_format=None, no_class=False,
              algo: Optional[str] = None):
    """Load a file for fitting or evaluating an algorithm of ``task``.

    Classifiers need a nominal class (an inferred whole-number CSV column counts).
    Regression algorithms need a numeric class, kept as numbers (a nominal class is
    a usage error naming ``algo``). Clusterers use the class only to score against:
    when none is named and the last attribute is numeric, it is kept as a feature
    (Weka's clusterers cannot score against a numeric class either), with a note;
    ``--target`` names label columns.
    """
    ds = _load(path, target=target, ignore=ignore, input_format=input_format, no_class=no_class)
    return _prepare_for(task, _class_for(task, ds, target), target, algo)


def _class_for(task: str, ds, target=None):
    """The data set with its class read as ``task`` reads it.

    For classifiers (and clusterers given ``--target``) a CSV column of whole
    numbers becomes a nominal class; regression algorithms keep the class numeric.
    """
    if task == registry.CLASSIFICATION or (task == registry.CLUSTERING and target is not None):
        return ds.with_nominal_class()
    return ds


def _prepare_for(task: str, ds, target=None, algo: Optional[str] = None):
    """Check a data set (its class already read by :func:`_class_for`) for ``task``."""
    cls = ds.schema.class_attribute
    if task == registry.REGRESSION and (cls is None or cls.kind != "numeric"):
        who = f"{algo or 'the algorithm'} is a regression algorithm"
        what = "the data has no class attribute" if cls is None else f"the class '{cls.name}' is nominal"
        raise UsageError(f"{ds.source}: {who} and {what}; name a numeric target with --target")
    if (task == registry.CLUSTERING and target is None and cls is not None
            and cls.kind == "numeric"):
        _note(f"note: {ds.source}: last attribute '{cls.name}' is numeric, so it is clustered as a "
              "feature; name a class with --target to score against it")
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


def _class_all_missing(ds) -> bool:
    """Whether ``ds`` has a class attribute but not one instance with a known class value."""
    import numpy as np

    if ds.y is None or ds.schema.class_attribute is None or len(ds.y) == 0:
        return False
    if ds.schema.class_attribute.kind == "nominal":
        return not bool((np.asarray(ds.y) >= 0).any())
    return bool(np.isnan(np.asarray(ds.y, dtype=np.float64)).all())


def _model_metadata(path: Path) -> dict:
    """A model file's metadata, checked to hold what the commands rely on.

    Raises
    ------
    ModelFileError
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
    except (KeyError, TypeError, ValueError, registry.UnknownAlgorithmError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ModelFileError(f"{path}: the model's metadata is damaged ({what})") from None
    return metadata


def _load_checked_model(path: Path):
    """Load a model and check the estimator is the one its metadata names."""
    from ensemblekit.persistence import ModelFileError, load_model

    import importlib

    import numpy as np
    from sklearn.pipeline import Pipeline

    from ensemblekit.data import Schema

    metadata = _model_metadata(path)
    model, metadata = load_model(path)
    spec = registry.get(metadata["algorithm"])
    steps = model.steps if type(model) is Pipeline else []
    step = steps[-1][1] if [name for name, _ in steps] == ["prep", "model"] else None
    module_name, class_name = spec.estimator.split(":")
    if step is None or type(step) is not getattr(importlib.import_module(module_name), class_name):
        raise ModelFileError(f"{path}: the stored estimator is not a {spec.name} model")
    schema = Schema.from_dict(metadata["schema"])
    first = steps[0][1] if steps[0][1] != "passthrough" else step
    width = getattr(first, "n_features_in_", None)
    if width is not None and width != len(schema.features):
        raise ModelFileError(f"{path}: the model file is damaged: its schema has {len(schema.features)} "
                             f"attributes but the estimator reads {width}")
    if spec.task == registry.CLASSIFICATION:
        codes = np.asarray(getattr(step, "classes_", ()))
        n_values = len(schema.class_attribute.values)
        if codes.ndim != 1 or codes.size == 0 or codes.dtype.kind not in "iuf" or np.any(
                (codes < 0) | (codes >= n_values) | (codes != np.round(codes))):
            raise ModelFileError(f"{path}: the model file is damaged: its classes do not index the "
                                 f"{n_values} values of class '{schema.class_attribute.name}'")
    return model, metadata


def _default_n_clusters(ds, n_clusters: Optional[int], settings: List[str]) -> Optional[int]:
    """-k, else --set n_clusters, else the number of classes present in the data."""
    import numpy as np

    if n_clusters is not None or "n_clusters" in registry.parse_settings(settings):
        return n_clusters
    cls = ds.schema.class_attribute
    if cls is None or cls.kind != "nominal":
        raise UsageError(f"{ds.source}: no nominal class to take the number of clusters from; give -k")
    return int(len(np.unique(ds.y[ds.y >= 0])))


def _progress(total: int, description: str):
    """A rich progress bar on stderr when it is a terminal, else a no-op."""
    if not sys.stderr.isatty() or total <= 1:
        return contextlib.nullcontext(None)
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                        console=Console(stderr=True), transient=True)

    @contextlib.contextmanager
    def bar():
        with progress:
            task = progress.add_task(description, total=total)
            yield lambda steps=1: progress.advance(task, steps)

    return bar()


def _check_format(value: Optional[str], allowed: tuple[str, ...], option: str) -> None:
    if value is not None and value not in allowed:
        raise UsageError(f"{option} must be one of {', '.join(allowed)}, got {value!r}")


def _require_classes(ds, algorithm: str):
    """Rows with a known nominal class, for fitting a classifier."""
    cls = ds.schema.class_attribute
    if cls is None or cls.kind != "nominal":
        kind = "no class attribute" if cls is None else f"a numeric class attribute '{cls.name}'"
        raise UsageError(f"{ds.source}: {algorithm} is a classifier but the data has {kind}; "
                         "name a nominal class with --target")
    keep = ds.y >= 0
    if not keep.any():
        raise UsageError(f"{ds.source}: every instance has a missing class value")
    if not keep.all():
        _note(f"note: {int((~keep).sum())} instances with a missing class value were left out")
    return ds.X[keep], ds.y[keep]


def _require_target(ds):
    """Rows with a known numeric target, for fitting a regression algorithm (y as float64)."""
    import numpy as np

    y = np.asarray(ds.y, dtype=np.float64)
    keep = ~np.isnan(y)
    if not keep.any():
        raise UsageError(f"{ds.source}: every instance has a missing target value "
                         f"('{ds.schema.class_attribute.name}')")
    if not keep.all():
        _note(f"note: {int((~keep).sum())} instances with a missing target value were left out")
    return ds.X[keep], y[keep]


def _resolve(algo: str, settings: List[str], n_clusters: Optional[int] = None):
    spec = registry.get(algo)
    params = spec.resolve(registry.parse_settings(settings))
    if n_clusters is not None:
        if "n_clusters" not in spec.param_names:
            raise UsageError(f"-k applies to clustering algorithms; {algo} is a {spec.task} algorithm")
        params["n_clusters"] = spec.params[spec.param_names.index("n_clusters")].check(n_clusters)
    return spec, params


# --------------------------------------------------------------------------- options
_TARGET = typer.Option(None, "--target", "-c", help="Class attribute (default: the last one).")
_SET = typer.Option([], "--set", "-s", help="Algorithm parameter key=value (repeatable).")
_SEED = typer.Option(1, "--seed", help="Random seed: same seed, same output.", min=0, max=2**31 - 1)
_IGNORE = typer.Option([], "--ignore", help="Attribute to drop before anything else (repeatable).")


def _input_format(value: Optional[str]) -> Optional[str]:
    """``--input-format``: arff or csv (any case), checked while the options are parsed."""
    if value is None:
        return None
    if value.lower() not in ("arff", "csv"):
        raise typer.BadParameter(f"must be arff or csv, got {value!r}")
    return value.lower()


_INPUT_FORMAT = typer.Option(None, "--input-format", callback=_input_format,
                             help="Input format: arff or csv (default: by file extension, "
                             "sniffed for '-').")
_CV = typer.Option(None, "--cv", help="Folds of CV, stratified for classifiers (default 10).")
_REPEATS = typer.Option(None, "--repeats", help="CV repeats (default 10).")
_RUNS = typer.Option(None, "--runs", help="Clustering runs (default 30).")
_METRIC = typer.Option([], "--metric", "-m", help="Metric (repeatable; default: accuracy; nmi and "
                       "purity for clustering; correlation and rmse for regression).")
_JSON_FORMAT = typer.Option(None, "--format", help="json for scripts.")
_NJOBS = typer.Option(1, "--n-jobs", "-j", help="Parallel workers (joblib): -1 = all cores, -2 = all "
                      "but one, ...; at most 4 per core. Killing the command ends its workers.")


# --------------------------------------------------------------------------- commands
@app.command()
def algorithms(
    format_: Optional[str] = _JSON_FORMAT,
):
    """List every algorithm with its task, parameters, defaults and preprocessing."""
    import json

    from ensemblekit.report import algorithms_summary, algorithms_table

    with _user_errors():
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        summary = algorithms_summary(registry.ALGORITHMS.values())
        if format_ == "json":
            _write_stdout(json.dumps(summary, indent=1) + "\n")
        else:
            _stdout_console().print(algorithms_table(summary))


@app.command()
def info(
    data: str = typer.Argument(..., help="ARFF or CSV file, or '-' for stdin."),
    target: Optional[str] = _TARGET,
    ignore: List[str] = _IGNORE,
    input_format: Optional[str] = _INPUT_FORMAT,
    format_: Optional[str] = _JSON_FORMAT,
):
    """Print a file's schema: attributes, types, classes and their counts, missing values."""
    import json

    from ensemblekit.report import schema_summary, schema_tables

    with _user_errors():
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        ds = _load(data, target=target, ignore=ignore, input_format=input_format, allow_string=True)
        summary = schema_summary(ds)
        if format_ == "json":
            _write_stdout(json.dumps(summary, indent=1) + "\n")
        else:
            console = _stdout_console()
            for renderable in schema_tables(summary):
                console.print(renderable)


@app.command()
def fit(
    algo: str = typer.Argument(..., help="Registry name (see 'ensemblekit algorithms')."),
    data: str = typer.Argument(..., help="Training file, or '-' for stdin."),
    output: Path = typer.Option(..., "--output", "-o", help="Model file to write."),
    target: Optional[str] = _TARGET,
    settings: List[str] = _SET,
    seed: int = _SEED,
    n_clusters: Optional[int] = typer.Option(
        None, "-k", help="Clusters (clustering algorithms; default: number of classes)."),
    no_class: bool = typer.Option(False, "--no-class", help="Every attribute is a feature "
                                  "(clustering)."),
    ignore: List[str] = _IGNORE,
    input_format: Optional[str] = _INPUT_FORMAT,
):
    """Fit an algorithm to a file and save the model."""
    from ensemblekit.persistence import data_fingerprint, save_model

    with _user_errors():
        spec = registry.get(algo)
        _refuse_targets_only(spec, "fit")
        _check_destination(output, "--output")
        ds = _load_for(spec.task, data, target=target, ignore=ignore, input_format=input_format,
                       no_class=no_class, algo=algo)
        if spec.task == registry.CLUSTERING:
            n_clusters = _default_n_clusters(ds, n_clusters, settings)
        spec, params = _resolve(algo, settings, n_clusters)
        if spec.task == registry.CLASSIFICATION:
            X, y = _require_classes(ds, algo)
        elif spec.task == registry.REGRESSION:
            X, y = _require_target(ds)
        else:
            X, y = ds.X, None
        model = registry.make_estimator(algo, ds.schema, params, seed)
        try:
            model.fit(X, y)
        except ValueError as exc:
            raise UsageError(f"{ds.source}: {algo} cannot be fitted: {exc}") from None
        metadata = {
            "algorithm": algo,
            "task": spec.task,
            "params": params,
            "seed": seed,
            "schema": ds.schema.to_dict(),
            "training_data": {"name": ds.name, "instances": int(X.shape[0]),
                              "fingerprint": data_fingerprint(X, y)},
        }
        save_model(output, model, metadata)
    _note(f"fitted {algo} on {ds.name} ({X.shape[0]} instances) -> {output}")


_PREDICT_CHUNK = 500  # rows per progress step of 'predict'


def _predict_table(model, metadata, ds, proba: bool):
    """Prediction labels (and probabilities over all declared classes) for a dataset.

    A regression model gives its predicted values, as floats, instead of labels.
    Rows go to the model in chunks of :data:`_PREDICT_CHUNK`, with a progress bar
    on stderr when it is a terminal; every estimator here predicts each row
    independently of the others, so chunks change nothing in the output.
    """
    import numpy as np

    from ensemblekit.data import Schema

    schema = Schema.from_dict(metadata["schema"])
    classify = metadata["task"] == registry.CLASSIFICATION
    if not hasattr(model, "predict"):
        raise UsageError(f"{metadata['algorithm']} models cannot label new rows (the algorithm has "
                         "no out-of-sample rule); use 'ensemblekit cluster' on the file instead")
    if proba and not classify:
        raise UsageError(f"{metadata['algorithm']} is a {metadata['task']} model; it has no class "
                         "probabilities")
    n = ds.X.shape[0]
    codes, known = [], []
    with _progress(n if n > _PREDICT_CHUNK else 0, "rows") as advance:
        for start in range(0, max(n, 1), _PREDICT_CHUNK):
            X = ds.X[start:start + _PREDICT_CHUNK]
            if proba:  # one pass: every classifier here predicts the arg-max (first on ties)
                known.append(model.predict_proba(X))
                codes.append(np.asarray(model.classes_)[np.argmax(known[-1], axis=1)])
            else:
                codes.append(np.asarray(model.predict(X)))
            if advance is not None:
                advance(X.shape[0])
    codes = np.concatenate(codes)
    if metadata["task"] == registry.REGRESSION:
        return [float(v) for v in np.asarray(codes, dtype=np.float64).ravel()], None, ()
    if not classify:
        return [str(int(c)) for c in codes], None, ()
    classes = schema.class_attribute.values
    labels = [classes[int(c)] for c in codes]
    if not proba:
        return labels, None, ()
    full = np.zeros((n, len(classes)))
    full[:, np.asarray(model.classes_, dtype=int)] = np.concatenate(known)
    return labels, full, classes


def _set_n_jobs(model, n_jobs: Optional[int]) -> None:
    """Give a saved model's estimator ``n_jobs`` (when it has that parameter)."""
    if n_jobs is None:
        return
    workers = _check_n_jobs(n_jobs)
    if "n_jobs" in model.named_steps["model"].get_params(deep=False):
        model.set_params(model__n_jobs=workers)


@app.command()
def predict(
    model_file: Path = typer.Argument(..., metavar="MODEL", help="Model file written by 'fit'."),
    data: str = typer.Argument(..., help="File to predict, or '-' for stdin."),
    proba: bool = typer.Option(False, "--proba", help="Add one probability column per class."),
    format_: str = typer.Option("csv", "--format", help="csv, tsv, json, jsonl or arff."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here instead of stdout."),
    input_format: Optional[str] = _INPUT_FORMAT,
    n_jobs: Optional[int] = typer.Option(
        None, "--n-jobs", "-j", help="Processes for models that predict rows in parallel (lazy "
        "ensembles, knn); -1 = all cores. The output does not depend on it."),
):
    """Predict every row of a file with a saved model (one output row per input row, in order)."""
    from ensemblekit.data import Schema
    from ensemblekit.report import OUTPUT_FORMATS, format_predictions, prediction_rows

    with _user_errors():
        if output is None:
            _require_stdout()
        _check_format(format_, OUTPUT_FORMATS, "--format")
        _check_destination(output, "--output")
        metadata = _model_metadata(model_file)
        schema = Schema.from_dict(metadata["schema"])
        ds = _load(data, schema=schema, input_format=input_format)
        model, metadata = _load_checked_model(model_file)
        _set_n_jobs(model, n_jobs)
        try:
            labels, probabilities, classes = _predict_table(model, metadata, ds, proba)
        except ValueError as exc:
            raise UsageError(f"{model_file}: the model cannot predict {ds.source}: {exc}") from None
        columns = ["row", "prediction", *(f"p_{c}" for c in classes)]
        task = metadata["task"]
        if task == registry.CLASSIFICATION:
            values = schema.class_attribute.values
        elif task == registry.REGRESSION:
            values = ()  # a numeric prediction column
        else:
            values = tuple(str(k) for k in range(int(metadata["params"].get("n_clusters", 0))))
        text = format_predictions(prediction_rows(labels, probabilities, classes), columns, format_,
                                  prediction_values=values,
                                  numeric_prediction=task == registry.REGRESSION)
        _emit(text, output)


@app.command()
def cluster(
    algo: str = typer.Argument(..., help="Clustering algorithm (see 'ensemblekit algorithms')."),
    data: str = typer.Argument(..., help="File to cluster, or '-' for stdin."),
    n_clusters: Optional[str] = typer.Option(
        None, "-k", help="Clusters (default: number of classes), or a range A:B to print the "
        "internal indices for every k from A to B and mark the best k of each."),
    target: Optional[str] = _TARGET,
    settings: List[str] = _SET,
    seed: int = _SEED,
    labels_out: Optional[Path] = typer.Option(None, "--labels-out", help="Write row,cluster CSV here."),
    save: Optional[Path] = typer.Option(None, "--save", help="Also save the fitted model here."),
    members: Optional[Path] = typer.Option(
        None, "--members", help="Member labelings to combine (cspa, hgpa, mcla, hac-*): CSV with a "
        "header row, one column per member, one row per instance of DATA in the same order."),
    targets: Optional[str] = typer.Option(
        None, "--targets", help="ss-isca only (and required there): comma-separated attributes "
        "that form the target matrix Y. They are removed from the clustered attributes; numeric "
        "ones are used as they are, nominal ones one-hot; a missing value becomes its column's "
        "mean."),
    similarity_out: Optional[Path] = typer.Option(
        None, "--similarity-out", help="isca, ss-isca: write the n x n rule similarity S as CSV: "
        "a header 'row,1,2,...,n', then one line 'i,S_i1,...,S_in' per instance i (1-based, "
        "file order), values as Python repr floats."),
    no_class: bool = typer.Option(False, "--no-class", help="The file has no class attribute."),
    ignore: List[str] = _IGNORE,
    input_format: Optional[str] = _INPUT_FORMAT,
    format_: Optional[str] = _JSON_FORMAT,
):
    """Cluster a file; print the prototypes, the internal validity indices and, when it has a
    class, the external ones (NMI, purity, ARI, Rand, Jaccard, FM, Wallace)."""
    import json

    import numpy as np

    from ensemblekit.metrics import EXTERNAL_INDICES, clustering_indices
    from ensemblekit.preprocessing import feature_names
    from ensemblekit.report import (
        cluster_sizes_table,
        format_predictions,
        prediction_rows,
        prototypes_table,
        validity_table,
    )

    with _user_errors():
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        spec = registry.get(algo)
        if spec.task != registry.CLUSTERING:
            raise UsageError(f"{algo} is a {spec.task} algorithm; 'cluster' needs a clustering algorithm")
        k_single, k_range = _parse_k_option(n_clusters)
        if k_range is not None and (labels_out is not None or save is not None):
            raise UsageError("-k A:B tries several k; --labels-out and --save need a single k")
        if members is not None and not _takes_members(spec):
            raise UsageError(f"--members gives member labelings to a cluster ensemble (cspa, hgpa, "
                             f"mcla, hac-*); {algo} does not combine members")
        target_names = _check_targets_option(algo, spec, targets)
        if similarity_out is not None and not _has_similarity(spec):
            raise UsageError(f"--similarity-out writes the rule similarity of isca and ss-isca; "
                             f"{algo} has none")
        _check_destination(labels_out, "--labels-out")
        _check_destination(save, "--save")
        _check_destination(similarity_out, "--similarity-out")
        ds = _load_for(spec.task, data, target=target, ignore=ignore, input_format=input_format,
                       no_class=no_class)
        Y = None
        if target_names is not None:
            ds, Y = _split_targets(ds, target_names)
        has_class = ds.y is not None and ds.schema.class_attribute.kind == "nominal"
        fit_params = {}
        if members is not None:
            fit_params["model__members"] = _load_members(members, ds)
        if k_range is not None:
            _cluster_k_range(algo, ds, k_range, settings, seed, fit_params, format_, Y,
                             similarity_out)
            return
        spec, params = _resolve(algo, settings, _default_n_clusters(ds, k_single, settings))
        model, labels = _fit_clusterer(algo, ds, params, seed, fit_params, Y)
        estimator = model.named_steps["model"]
        if similarity_out is not None:
            _write_file(similarity_out, _similarity_csv(estimator.similarity_))
        centers = getattr(estimator, "cluster_centers_", None)
        n_found = int(labels.max()) + 1 if labels.size else 0
        sizes = np.bincount(labels, minlength=len(centers) if centers is not None else n_found)
        external: dict[str, float] = {}
        if has_class:
            keep = ds.y >= 0
            external = clustering_indices(labels[keep], truth=ds.y[keep], names=EXTERNAL_INDICES)
        internal = _internal_indices(model, ds, labels)
        partitioner = getattr(estimator, "partitioner_", None)
        if partitioner is not None:
            _note(f"note: {algo} partitioned with {_PARTITIONER_TEXT.get(partitioner, partitioner)}")
        names = feature_names(ds.schema)
        if labels_out is not None:
            _write_file(labels_out, format_predictions(
                prediction_rows([str(int(v)) for v in labels]), ["row", "cluster"], "csv"))
        if save is not None:
            from ensemblekit.persistence import data_fingerprint, save_model

            save_model(save, model, {
                "algorithm": algo, "task": spec.task, "params": params, "seed": seed,
                "schema": ds.schema.to_dict(),
                "training_data": {"name": ds.name, "instances": int(ds.X.shape[0]),
                                  "fingerprint": data_fingerprint(ds.X, None)},
                **({} if target_names is None else {"targets": list(target_names)}),
            })
        n_iter = getattr(estimator, "n_iter_", None)
        n_rules = getattr(estimator, "n_rules_", None)
        if format_ == "json":
            out = {"algorithm": algo, "params": params, "seed": seed, "dataset": ds.name,
                   "sizes": sizes.tolist(), "iterations": int(n_iter or 0),
                   "external": external, "internal": internal,
                   "prototypes": None if centers is None else
                   [dict(zip(names, map(float, row))) for row in centers]}
            if partitioner is not None:
                out["partitioner"] = partitioner
            if n_rules is not None:
                out["rules"] = int(n_rules)
            if target_names is not None:
                out["targets"] = list(target_names)
            _write_stdout(json.dumps(out, indent=1) + "\n")
            return
        console = _stdout_console()
        heading = f"{algo} on {ds.name}: {len(sizes)} " + ("prototypes" if centers is not None
                                                          else "clusters")
        ensemble = getattr(estimator, "members_", None)
        if ensemble is not None:
            heading += f", {ensemble.shape[1]} members"
        elif n_iter is not None:
            heading += f" ({n_iter} iterations)"
        elif n_rules is not None:
            heading += f" ({n_rules} rules" + ("" if target_names is None else
                                              f"; targets {', '.join(target_names)}") + ")"
        if centers is not None:
            console.print(prototypes_table(centers, names, sizes, heading))
        else:
            console.print(cluster_sizes_table(sizes, heading))
        if external:
            console.print(validity_table(
                external, f"external indices: agreement with class '{ds.schema.class_attribute.name}'"))
        if internal:
            console.print(validity_table(internal, "internal indices (Euclidean, on the "
                                                   "clustered attributes)"))


_PARTITIONER_TEXT = {
    "metis": "METIS (pymetis)",
    "spectral": "spectral clustering (scikit-learn; pymetis not used)",
    "kahypar": "KaHyPar (kahypar)",
}


def _parse_k_option(text: Optional[str]):
    """``-k`` as (single k or None, range of k or None)."""
    if text is None:
        return None, None
    body = text.strip()
    try:
        if ":" not in body:
            k = int(body)
            if k < 1:
                raise ValueError
            return k, None
        lo, hi = (int(part) for part in body.split(":"))
    except ValueError:
        raise UsageError(f"-k expects a number of clusters >= 1 or a range A:B, got {text!r}") from None
    if lo < 2 or hi < lo:
        raise UsageError(f"-k {text}: a range A:B needs 2 <= A <= B (internal indices need 2 "
                         "clusters or more)")
    if hi - lo > 1000:
        raise UsageError(f"-k {text}: at most 1001 values of k")
    return None, list(range(lo, hi + 1))


def _takes_members(spec) -> bool:
    return spec.estimator.startswith("ensemblekit.clustering.consensus:")


def _load_members(path: Path, ds):
    """The --members file as an (instances x members) array of labels."""
    import numpy as np

    table = _load(str(path), no_class=True)
    if table.X.shape[0] != ds.X.shape[0]:
        raise UsageError(f"{path}: {table.X.shape[0]} rows of member labels, but {ds.source} has "
                         f"{ds.X.shape[0]} instances (one row per instance, same order)")
    missing = np.argwhere(np.isnan(table.X))
    if missing.size:
        row, col = missing[0]
        raise UsageError(f"{path}: member '{table.schema.features[col].name}' has no label for row "
                         f"{row + 1}; every member must label every instance")
    return table.X


def _has_similarity(spec) -> bool:
    """Whether the algorithm learns an instance similarity (``similarity_``): isca, ss-isca."""
    return spec.estimator.startswith("ensemblekit.rules.isca:")


def _refuse_targets_only(spec, command: str) -> None:
    """ss-isca needs ``--targets``, which only ``cluster`` takes: a usage error elsewhere."""
    if spec.fixed.get("supervised", False):
        raise UsageError(f"{spec.name} needs target columns, which only 'ensemblekit cluster "
                         f"{spec.name} DATA --targets NAME,...' gives it; '{command}' cannot run it "
                         "(cluster --save keeps the model)")


def _check_targets_option(algo: str, spec, text: Optional[str]) -> Optional[tuple[str, ...]]:
    """``--targets`` as a tuple of attribute names; None when not given.

    Only ss-isca (``supervised`` fixed to True) takes targets, and it needs them.
    """
    supervised = bool(spec.fixed.get("supervised", False))
    if text is None:
        if supervised:
            raise UsageError(f"{algo} needs target columns (--targets NAME,...)")
        return None
    if not supervised:
        raise UsageError(f"--targets gives target columns to ss-isca; {algo} takes none")
    names = tuple(part.strip() for part in text.split(","))
    if not all(names):
        raise UsageError(f"--targets expects comma-separated attribute names, got {text!r}")
    return names


def _split_targets(ds, names):
    """Move the ``--targets`` attributes out of the features: (data set, Y)."""
    from ensemblekit.data import DataError

    try:
        reduced, Y, _ = ds.split_targets(names)
    except DataError as exc:
        raise UsageError(f"--targets: {exc}") from None
    if reduced.X.shape[1] == 0:
        raise UsageError(f"{ds.source}: no attributes left to cluster once the --targets are "
                         "taken out")
    return reduced, Y


def _similarity_csv(S) -> str:
    """The similarity matrix as CSV: header ``row,1..n``, then ``i,S_i1,...,S_in`` (repr floats)."""
    n = S.shape[0]
    lines = ["row," + ",".join(str(j) for j in range(1, n + 1))]
    lines.extend(f"{i + 1}," + ",".join(repr(float(v)) for v in row) for i, row in enumerate(S))
    return "\n".join(lines) + "\n"


def _fit_clusterer(algo: str, ds, params: dict, seed: int, fit_params: dict, y=None):
    """Fit a registered clusterer to every row of ``ds``; return (pipeline, labels).

    ``y`` is the target matrix of ss-isca (``--targets``); other clusterers get None.
    """
    import numpy as np

    from ensemblekit.clustering.consensus import MissingDependencyError

    model = registry.make_estimator(algo, ds.schema, params, seed)
    try:
        labels = np.asarray(model.fit_predict(ds.X, y, **fit_params))
    except MissingDependencyError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:
        raise UsageError(f"{ds.source}: {algo} cannot cluster this data: {exc}") from None
    return model, labels


def _internal_indices(model, ds, labels) -> dict:
    """Internal indices on the attributes the estimator clustered; {} with a note if impossible."""
    import numpy as np

    from ensemblekit.metrics import INTERNAL_INDICES, clustering_indices

    space = np.asarray(model[:-1].transform(ds.X), dtype=np.float64)
    try:
        return clustering_indices(labels, X=space, names=INTERNAL_INDICES)
    except ValueError as exc:
        _note(f"note: internal indices not computed: {exc}")
        return {}


def _cluster_k_range(algo: str, ds, ks: list, settings, seed: int, fit_params: dict, format_,
                     y=None, similarity_out: Optional[Path] = None):
    """``cluster -k A:B``: internal indices for every k, best k of each marked.

    A hierarchical clusterer whose tree does not depend on k (isca, ss-isca:
    ``labels_for``) is fitted once and its tree cut at every k; the others are
    refitted per k.
    """
    import json
    import math

    from ensemblekit.metrics import INTERNAL_INDICES, best_k
    from ensemblekit.report import k_selection_table

    values = {name: [] for name in INTERNAL_INDICES}
    params = {}
    model = None
    for k in ks:
        _, params = _resolve(algo, settings, k)
        cut = None if model is None else getattr(model.named_steps["model"], "labels_for", None)
        if cut is not None:
            try:
                labels = cut(k)
            except ValueError as exc:
                raise UsageError(f"{ds.source}: {algo} cannot cluster this data: {exc}") from None
        else:
            model, labels = _fit_clusterer(algo, ds, params, seed, fit_params, y)
        found = _internal_indices(model, ds, labels)
        for name in INTERNAL_INDICES:
            values[name].append(found.get(name, float("nan")))
    if similarity_out is not None:  # isca, ss-isca: one fit, one similarity for every k
        _write_file(similarity_out, _similarity_csv(model.named_steps["model"].similarity_))
    best = {name: best_k(ks, column, name) for name, column in values.items()}
    shown = {key: value for key, value in params.items() if key != "n_clusters"}
    if format_ == "json":
        out = {"algorithm": algo, "params": shown, "seed": seed, "dataset": ds.name, "k": ks,
               "internal": {name: [None if math.isnan(v) else v for v in column]
                            for name, column in values.items()},
               "best_k": best}
        _write_stdout(json.dumps(out, indent=1) + "\n")
        return
    console = _stdout_console()
    for renderable in k_selection_table(ks, values, best, f"{algo} on {ds.name}: internal indices "
                                        f"for k = {ks[0]}..{ks[-1]}, seed {seed}"):
        console.print(renderable)


def _check_n_jobs(n_jobs: int) -> int:
    """The number of workers ``--n-jobs`` stands for; a usage error when out of range."""
    from ensemblekit.experiment import worker_count

    try:
        return worker_count(n_jobs, name="--n-jobs")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _protocol(task: str, cv: Optional[int], repeats: Optional[int], runs: Optional[int], seed: int,
              n_clusters: Optional[int]):
    from ensemblekit.experiment import Protocol

    if task in (registry.CLASSIFICATION, registry.REGRESSION):
        if runs is not None:
            who = "classifiers" if task == registry.CLASSIFICATION else "regression algorithms"
            raise UsageError(f"--runs is for clustering algorithms; {who} use --cv and --repeats")
        return Protocol("cv", folds=cv if cv is not None else 10,
                        repeats=repeats if repeats is not None else 10, seed=seed)
    if cv is not None or repeats is not None:
        raise UsageError("--cv/--repeats are for classifiers and regression algorithms; clustering "
                         "algorithms use --runs")
    return Protocol("runs", repeats=runs if runs is not None else 30, seed=seed, n_clusters=n_clusters)


def _protocol_text(p, task: str = registry.CLASSIFICATION) -> str:
    if p.kind == "cv":
        kind = "CV" if task == registry.REGRESSION else "stratified CV"
        return f"{p.repeats}x{p.folds}-fold {kind}, seed {p.seed}"
    k = p.n_clusters if p.n_clusters is not None else "number of classes"
    return f"{p.repeats} clustering runs (k = {k}), seed {p.seed}"


def _metrics_for(task: str, metrics: List[str]) -> list[str]:
    from ensemblekit.experiment import DEFAULT_METRICS
    from ensemblekit.metrics import METRICS

    chosen = list(metrics) or list(DEFAULT_METRICS[task])
    for m in chosen:
        if m not in METRICS:
            raise UsageError(f"unknown metric {m!r}; known: {', '.join(sorted(METRICS))}")
        if METRICS[m].task != task:
            valid = ", ".join(name for name, info in METRICS.items() if info.task == task)
            raise UsageError(f"metric {m!r} is for {METRICS[m].task}, not {task}; valid metrics "
                             f"for {task}: {valid}")
    return chosen


def _data_files(items: List[str]) -> list[tuple[str, bool]]:
    """``--data`` items as ``(path, found in a folder)`` pairs, folders expanded in name order.

    A file found in a folder whose class does not fit the compared algorithms is
    skipped with a note; a file named on its own is an error then.
    """
    files: list[tuple[str, bool]] = []
    for item in items:
        path = Path(item)
        if item != "-" and path.is_dir():
            found = sorted(str(p) for p in path.iterdir()
                           if p.suffix.lower() in (".arff", ".csv", ".tsv") and p.is_file())
            if not found:
                raise UsageError(f"{item}: no .arff, .csv or .tsv files in this folder")
            files.extend((f, True) for f in found)
        else:
            files.append((item, False))
    if not files:
        raise UsageError("no data: give --data FILE or --data DIR")
    return files


#: What the algorithms of each task need of a data set's class in 'compare' and 'evaluate ALGO'.
_CLASS_NEEDED = {
    registry.CLASSIFICATION: "classifiers need a nominal class with known values",
    registry.CLUSTERING: "clusterers are scored against a nominal class with known values",
    registry.REGRESSION: "regression algorithms need a numeric class with known values",
}


def _class_mismatch(task: str, ds) -> Optional[str]:
    """How the class of ``ds`` (read by :func:`_class_for`) does not fit ``task``; None if it fits."""
    cls = ds.schema.class_attribute
    if cls is None or ds.y is None:
        return "no class attribute"
    wanted = "numeric" if task == registry.REGRESSION else "nominal"
    if cls.kind != wanted:
        return f"class '{cls.name}' is {cls.kind}"
    return f"every class value of '{cls.name}' is missing" if _class_all_missing(ds) else None


def _load_fitting(task: str, data_files: list[tuple[str, bool]], opts: "_CompareOptions") -> list:
    """Load the data sets of a comparison of ``task`` algorithms.

    A file found in a folder whose class does not fit the task (a numeric class
    for classifiers and clusterers, a nominal one for regression algorithms) is
    skipped, and one note names every skipped file; a file named on its own that
    does not fit is a usage error.
    """
    datasets, skipped = [], []
    for path, in_folder in data_files:
        ds = _load(path, target=opts.target, ignore=opts.ignore, input_format=opts.input_format)
        ds = _class_for(task, ds, opts.target)
        why = _class_mismatch(task, ds)
        if why is None:
            datasets.append(_prepare_for(task, ds, opts.target))
        elif in_folder:
            skipped.append(f"{path} ({why})")
        else:
            wanted = "numeric" if task == registry.REGRESSION else "nominal"
            raise UsageError(f"{ds.source}: {why}, but {_CLASS_NEEDED[task]}; name a {wanted} "
                             "class with --target")
    if skipped:
        _note(f"note: skipped {', '.join(skipped)}: {_CLASS_NEEDED[task]}")
    if not datasets:
        raise UsageError(f"no data file to compare on: {_CLASS_NEEDED[task]}")
    return datasets


@dataclass
class _CompareOptions:
    """Everything 'compare' (and 'evaluate ALGO') takes besides algorithms and data."""

    settings: List[str]
    target: Optional[str] = None
    ignore: List[str] = dc_field(default_factory=list)
    input_format: Optional[str] = None
    metric: List[str] = dc_field(default_factory=list)
    cv: Optional[int] = None
    repeats: Optional[int] = None
    runs: Optional[int] = None
    seed: int = 1
    n_jobs: int = 1
    output: Optional[Path] = None
    format_: Optional[str] = None
    baseline: Optional[str] = None
    grid: List[str] = dc_field(default_factory=list)
    max_instances: Optional[int] = None
    scheduler: Optional[str] = None
    resume: Optional[Path] = None
    plot: Optional[Path] = None
    alpha: float = 0.05


def _candidates(specs, opts: _CompareOptions):
    """Resolve --set for each algorithm and expand --grid into candidates."""
    from ensemblekit import experiment

    parsed = registry.parse_settings(opts.settings)
    every = sorted({n for t in specs for n in t.param_names})
    for key in parsed:
        if key not in every:
            raise registry.ParameterError(f"unknown parameter {key!r}; valid keys: {', '.join(every)}")
    n_clusters = None
    if specs[0].task == registry.CLUSTERING and "n_clusters" in parsed:
        n_clusters = specs[0].params[specs[0].param_names.index("n_clusters")].parse(parsed.pop("n_clusters"))
    grid_raw = [experiment.parse_grid(item) for item in opts.grid]
    if len({k for k, _ in grid_raw}) != len(grid_raw):
        raise UsageError("a --grid parameter is given twice")
    candidates = []
    gridded = []
    for spec in specs:
        params = spec.resolve({k: v for k, v in parsed.items() if k in spec.param_names})
        grid = {}
        if spec.name != opts.baseline:
            for key, values in grid_raw:
                if key in spec.param_names:
                    param = spec.params[spec.param_names.index(key)]
                    grid[key] = [param.parse(v) for v in values]
        if grid:
            gridded.append(spec.name)
        candidates.extend(experiment.expand_grid(spec.name, params, grid))
    for key, _ in grid_raw:
        if not any(key in s.param_names for s in specs if s.name != opts.baseline):
            raise registry.ParameterError(f"--grid {key}: no compared algorithm (other than the "
                                          f"baseline) has this parameter; valid keys: {', '.join(every)}")
    return candidates, n_clusters, gridded


def _run_comparison(algos: list[str], data_files: list[tuple[str, bool]], opts: _CompareOptions):
    """Shared body of 'compare' and 'evaluate ALGO'.

    ``data_files`` holds ``(path, found in a folder)`` pairs (see :func:`_data_files`).
    """
    from ensemblekit import experiment
    from ensemblekit.metrics import METRICS
    from ensemblekit.report import (comparison_json, comparison_tables, grid_summary, grid_table,
                                    scores_text)

    _check_format(opts.format_, ("json", "table"), "--format")
    _check_n_jobs(opts.n_jobs)
    if not 0 < opts.alpha < 1:
        raise UsageError(f"--alpha must lie strictly between 0 and 1, got {opts.alpha}")
    if opts.output is not None and opts.output.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"--output {opts.output}: the file name must end in .csv or .json")
    if opts.plot is not None and opts.plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(f"--plot {opts.plot}: the file name must end in .png, .svg or .pdf")
    specs = [registry.get(a) for a in algos]
    for spec in specs:
        _refuse_targets_only(spec, "compare" if len(specs) > 1 else "evaluate")
    available = []
    for spec in specs:  # an algorithm whose optional package is missing is left out, with a note
        missing = spec.missing_requirement()
        if missing is None:
            available.append(spec)
        elif spec.name == opts.baseline or len(specs) == 1:
            raise UsageError(f"{spec.name} {missing}")
        else:
            _note(f"{spec.name} skipped: it {missing}")
    specs = available
    algos = [s.name for s in specs]
    tasks = {s.task for s in specs}
    if len(tasks) > 1:
        raise UsageError("algorithms of different tasks cannot be compared: "
                         + ", ".join(f"{s.name} ({s.task})" for s in specs))
    task = tasks.pop()
    if opts.baseline is not None and opts.baseline not in algos:
        raise UsageError(f"--baseline {opts.baseline} is not among the compared algorithms "
                         f"({', '.join(algos)})")
    if opts.grid and opts.baseline is None:
        raise UsageError("--grid needs --baseline: the algorithm the grid points are measured against")
    candidates, n_clusters, gridded = _candidates(specs, opts)
    if opts.plot is not None:
        _check_plottable(opts, candidates, gridded, len(data_files))
    protocol = _protocol(task, opts.cv, opts.repeats, opts.runs, opts.seed, n_clusters)
    metrics = _metrics_for(task, opts.metric)
    for path, option in ((opts.output, "--output"), (opts.plot, "--plot"), (opts.resume, "--resume")):
        _check_destination(path, option)
    warming = experiment.prestart(opts.n_jobs, opts.scheduler)
    datasets = _load_fitting(task, data_files, opts)
    if opts.plot is not None and len(datasets) < len(data_files):
        _check_plottable(opts, candidates, gridded, len(datasets))
    if opts.max_instances is not None:
        datasets = [experiment.subsample(d, opts.max_instances, opts.seed) for d in datasets]
    names = [d.name for d in datasets]
    if len(set(names)) != len(names):
        raise UsageError("two data files have the same name: " + ", ".join(names))
    work = experiment.plan(datasets, candidates, protocol)
    for note in work.notes:
        _note(f"note: {note}")
    if warming is not None:
        warming.join()
    with _progress(len(work.units), "units") as advance:
        result = experiment.run(datasets, work, protocol, metrics, n_jobs=opts.n_jobs,
                                scheduler=opts.scheduler, resume=opts.resume, on_unit_done=advance)
    if opts.resume is not None:
        _note(f"note: {result.computed} of {len(work.units)} units computed now, the rest read "
              f"from {opts.resume}")
    summary = experiment.summarize(result.scores)
    labels = [c.label for c in candidates]
    failed = {(f.dataset, f.algorithm) for f in result.failures}
    ok_scores = [s for s in result.scores if (s.dataset, s.algorithm) not in failed]
    # per-cell marks: against the baseline, else against the first algorithm
    reference = None if opts.baseline is not None or len(labels) < 2 else labels[0]
    analyses = {m: experiment.analyse(ok_scores, labels, datasets, m, protocol, baseline=opts.baseline,
                                      reference=reference, alpha=opts.alpha) for m in metrics}
    grid_rows = {}
    if gridded:
        for m in metrics:
            grid_rows[m] = grid_summary(summary, candidates, opts.baseline, names, m,
                                        METRICS[m].greater_is_better, failed)
    if opts.plot is not None:
        _write_plot(opts.plot, analyses, metrics, grid_rows, summary, candidates, names, opts)
    if opts.output is not None:
        _emit(scores_text(result.scores, result.failures, opts.output.suffix.lower().lstrip(".")),
              opts.output)
    if opts.format_ == "json":
        proto = {"kind": protocol.kind, "folds": protocol.folds if protocol.kind == "cv" else None,
                 "repeats": protocol.repeats, "seed": protocol.seed, "alpha": opts.alpha,
                 "max_instances": opts.max_instances}
        _write_stdout(comparison_json(summary, analyses, names, labels, proto, result.failures,
                                      opts.baseline, reference, grid=grid_rows or None))
    else:
        console = _stdout_console()
        if gridded:
            for m in metrics:
                for renderable in grid_table(grid_rows[m], opts.baseline, METRICS[m].label,
                                             _protocol_text(protocol, task)):
                    console.print(renderable)
        else:
            for renderable in comparison_tables(summary, analyses, names, labels,
                                                _protocol_text(protocol, task), failed, opts.baseline,
                                                reference, protocol.kind):
                console.print(renderable)
    if result.failures:
        first = result.failures[0].error
        _err(f"{len(result.failures)} of {len(work.units)} units failed; first: {first}")
        bad_input = all(f.bad_input for f in result.failures)
        raise typer.Exit(EXIT_BAD_INPUT if bad_input else EXIT_FAILURE)


def _check_plottable(opts: _CompareOptions, candidates, gridded, n_data: int) -> None:
    """Refuse, before any work, a --plot that could not be drawn."""
    if gridded:
        keys = {k for c in candidates for k in c.grid}
        if len(keys) > 2:
            raise UsageError("--plot draws heat maps for grids over one or two parameters")
        return
    if len(candidates) == 2:
        # Demšar (JMLR 2006, Sect. 3.1): two algorithms are compared with the Wilcoxon
        # signed-rank test, not with the Friedman/Nemenyi critical difference
        raise UsageError("--plot draws a critical-difference diagram, which is for 3 or more "
                         "algorithms: two are compared with the Wilcoxon signed-rank test "
                         "(Demšar 2006), printed under the table")
    if len(candidates) < 2 or n_data < 2:
        raise UsageError("--plot draws a critical-difference diagram, which needs at least 3 "
                         "algorithms and 2 data sets")


def _write_plot(path: Path, analyses, metrics, grid_rows, summary, candidates, names, opts):
    """CD diagram of the first metric, or sensitivity heat maps for a grid."""
    import numpy as np

    from ensemblekit import plots
    from ensemblekit.metrics import METRICS

    metric = metrics[0]
    if grid_rows:
        panels = []
        for c_alg in dict.fromkeys(c.algorithm for c in candidates if c.grid):
            points = [c for c in candidates if c.algorithm == c_alg and c.grid]
            keys = list(points[0].grid)
            if len(keys) > 2:
                raise UsageError("--plot draws heat maps for grids over one or two parameters")
            xs = list(dict.fromkeys(c.grid[keys[-1]] for c in points))
            ys = list(dict.fromkeys(c.grid[keys[0]] for c in points)) if len(keys) == 2 else None
            for d in names:
                values = np.full((len(ys) if ys else 1, len(xs)), np.nan)
                for c in points:
                    cell = summary.get((d, c.label, metric))
                    if cell is not None:
                        row = ys.index(c.grid[keys[0]]) if ys else 0
                        values[row, xs.index(c.grid[keys[-1]])] = cell[0]
                base = summary.get((d, opts.baseline, metric))
                panels.append({"dataset": f"{d}: {c_alg}", "x_name": keys[-1], "x_values": xs,
                               "y_name": keys[0] if ys else None, "y_values": ys, "values": values,
                               "baseline": None if base is None else base[0], "metric": metric,
                               "greater_is_better": METRICS[metric].greater_is_better})
        plots.plot_sensitivity_heatmaps(panels, path, title=f"{metric} over the grid "
                                                            f"(baseline {opts.baseline})")
        return
    an = analyses[metric]
    if an.cd is None:
        raise UsageError("--plot needs at least 3 algorithms and 2 complete data sets for a "
                         "critical-difference diagram")
    plots.plot_critical_difference(an.labels, an.ranks, an.cd, path,
                                   title=f"{metric}: Nemenyi CD at alpha {opts.alpha:g}",
                                   alpha=opts.alpha)


@app.command()
def evaluate(
    algo_or_model: str = typer.Argument(..., metavar="ALGO|MODEL",
                                        help="Registry name (cross-validated) or a model file "
                                             "(scored on DATA as a test set)."),
    data: str = typer.Argument(..., help="ARFF or CSV file, or '-' for stdin."),
    cv: Optional[int] = _CV,
    repeats: Optional[int] = _REPEATS,
    runs: Optional[int] = _RUNS,
    metric: List[str] = _METRIC,
    target: Optional[str] = _TARGET,
    settings: List[str] = _SET,
    seed: int = _SEED,
    n_jobs: int = _NJOBS,
    ignore: List[str] = _IGNORE,
    input_format: Optional[str] = _INPUT_FORMAT,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Per-fold scores (.csv/.json)."),
    format_: Optional[str] = _JSON_FORMAT,
):
    """Evaluate one algorithm (repeated CV or clustering runs) or one saved model (test set)."""
    with _user_errors():
        _require_stdout()
        if algo_or_model not in registry.ALGORITHMS and Path(algo_or_model).is_file():
            given = [name for name, v in (("--cv", cv), ("--repeats", repeats), ("--runs", runs),
                                          ("--set", settings or None), ("--output", output),
                                          ("--target", target), ("--ignore", ignore or None))
                     if v is not None]
            if given:
                raise UsageError(f"{', '.join(given)} cannot be used when evaluating a saved model "
                                 "(it is scored as it is on DATA)")
            _evaluate_model(Path(algo_or_model), data, metric, input_format, format_)
            return
        _run_comparison([algo_or_model], [(data, False)], _CompareOptions(
            settings=settings, target=target, ignore=ignore, input_format=input_format, metric=metric,
            cv=cv, repeats=repeats, runs=runs, seed=seed, n_jobs=n_jobs, output=output,
            format_=format_))


def _evaluate_model(model_file: Path, data: str, metric: List[str], input_format, format_):
    import json

    import numpy as np

    from ensemblekit.data import Schema
    from ensemblekit.metrics import METRICS
    from ensemblekit.report import metrics_table

    _check_format(format_, ("json", "table"), "--format")
    metadata = _model_metadata(model_file)
    schema = Schema.from_dict(metadata["schema"])
    ds = _load(data, schema=schema, input_format=input_format)
    if ds.y is None:
        raise UsageError(f"{ds.source}: has no class attribute '{schema.class_attribute.name}' "
                         "to score the model against" if schema.class_attribute else
                         f"{ds.source}: has no class attribute to score against")
    metrics = _metrics_for(metadata["task"], metric)
    model, metadata = _load_checked_model(model_file)
    # rows with a known class: not NaN for a regression target, code >= 0 otherwise
    keep = ~np.isnan(ds.y) if metadata["task"] == registry.REGRESSION else ds.y >= 0
    if not keep.any():
        raise UsageError(f"{ds.source}: every instance has a missing class value "
                         f"('{schema.class_attribute.name}'); there is nothing to score against")
    if not hasattr(model, "predict"):
        raise UsageError(f"{metadata['algorithm']} models cannot label new rows (the algorithm has "
                         "no out-of-sample rule); use 'ensemblekit compare' or 'cluster' instead")
    predicted = np.asarray(model.predict(ds.X[keep]))
    # internal indices judge the clustering in the space the estimator clustered (the
    # pipeline's preprocessing applied), as compare does
    space = (np.asarray(model[:-1].transform(ds.X[keep]), dtype=np.float64)
             if any(METRICS[m].internal for m in metrics) else None)
    values = {m: METRICS[m].score(predicted, truth=ds.y[keep], X=space) for m in metrics}
    if format_ == "json":
        _write_stdout(json.dumps({"model": str(model_file), "dataset": ds.name,
                                  "instances": int(keep.sum()), "scores": values}, indent=1) + "\n")
    else:
        _stdout_console().print(metrics_table(values, f"{metadata['algorithm']} model on {ds.name} "
                                                      f"({int(keep.sum())} instances)"))


@app.command()
def compare(
    algos: List[str] = typer.Argument(..., metavar="ALGO...", help="Registry names of one task."),
    data: List[str] = typer.Option(..., "--data", "-d", help="Data file or folder (repeatable)."),
    cv: Optional[int] = _CV,
    repeats: Optional[int] = _REPEATS,
    runs: Optional[int] = _RUNS,
    metric: List[str] = _METRIC,
    target: Optional[str] = _TARGET,
    settings: List[str] = _SET,
    seed: int = _SEED,
    n_jobs: int = _NJOBS,
    ignore: List[str] = _IGNORE,
    input_format: Optional[str] = _INPUT_FORMAT,
    output: Optional[Path] = typer.Option(None, "--output", "-o",
                                          help="Every per-fold score, long format (.csv or .json)."),
    format_: Optional[str] = _JSON_FORMAT,
    baseline: Optional[str] = typer.Option(None, "--baseline", "-b",
                                           help="Algorithm the others are tested against."),
    grid: List[str] = typer.Option([], "--grid", help="Parameter grid key=start:stop:step or "
                                   "key=v1,v2 (repeatable; needs --baseline)."),
    max_instances: Optional[int] = typer.Option(None, "--max-instances", min=1,
                                                help="Subsample each data set to at most N rows."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address "
                                            "(tcp://host:8786) to run the units on."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="JSON-lines journal: finished "
                                          "units are kept there and not computed again."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Critical-difference diagram (or "
                                        "heat maps with --grid): .png, .svg or .pdf."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the tests."),
):
    """Compare algorithms over data sets under one protocol: tables, ranks, Friedman/Nemenyi."""
    with _user_errors():
        _require_stdout()
        if len(set(algos)) != len(algos):
            raise UsageError("an algorithm is named twice")
        _run_comparison(list(algos), _data_files(data), _CompareOptions(
            settings=settings, target=target, ignore=ignore, input_format=input_format, metric=metric,
            cv=cv, repeats=repeats, runs=runs, seed=seed, n_jobs=n_jobs, output=output,
            format_=format_, baseline=baseline, grid=grid, max_instances=max_instances,
            scheduler=scheduler, resume=resume, plot=plot, alpha=alpha))


@app.command()
def show(
    model_file: Path = typer.Argument(..., metavar="MODEL", help="Model file written by 'fit'."),
    format_: Optional[str] = typer.Option(None, "--format", help="json for scripts (metadata)."),
    graph: Optional[Path] = typer.Option(None, "--graph", help="Write a Bayesian network as "
                                         "Graphviz DOT here."),
):
    """Print what a saved model learned, with its metadata."""
    import json

    from ensemblekit.data import Schema
    from ensemblekit.report import model_description

    with _user_errors():
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        _check_destination(graph, "--graph")
        model, metadata = _load_checked_model(model_file)
        if graph is not None:
            estimator = model.named_steps["model"]
            if not hasattr(estimator, "to_dot"):
                raise UsageError(f"--graph: a {metadata['algorithm']} model is not a Bayesian network")
            schema = Schema.from_dict(metadata["schema"])
            names = registry.model_feature_names(metadata["algorithm"], schema)
            _write_file(graph, estimator.to_dot(names, schema.class_attribute.name))
        if format_ == "json":
            _write_stdout(json.dumps(metadata, indent=1, sort_keys=True) + "\n")
            return
        console = _stdout_console()
        for renderable in model_description(model, metadata, Schema.from_dict(metadata["schema"])):
            console.print(renderable)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    from ensemblekit.report import printable

    if sys.stderr is None:
        return
    text = " ".join(str(message).split())
    sys.stderr.write(f"ensemblekit: warning: {printable(text)}\n")


def _left_by_reader(exc: SystemExit) -> bool:
    """Whether ``exc`` is rich's exit after the reader of stdout closed the pipe.

    rich (which typer uses for ``--help``) answers a broken pipe by pointing
    stdout at ``/dev/null`` and raising ``SystemExit(1)`` while the
    ``BrokenPipeError`` is being handled.
    """
    return exc.code == 1 and isinstance(exc.__context__, BrokenPipeError)


def main() -> None:
    """Console-script entry point: run the app, map failures to exit codes.

    0 on success, and when the reader of stdout closes the pipe early (``| head``);
    2 with one stderr line for bad usage or input, including a standard output
    that was closed before the command started; 1 for an unexpected failure.
    """
    import warnings

    from ensemblekit._imports import plain_scipy_docstrings

    _guard_standard_streams()
    plain_scipy_docstrings()  # about 0.2 s less start-up for every command that loads scipy
    warnings.showwarning = _one_line_warning
    try:
        try:
            code = app(prog_name="ensemblekit", standalone_mode=False)
        except typer.Abort:
            _err("aborted")
            sys.exit(EXIT_FAILURE)
        except typer.TyperException as exc:  # option parsing: one line, exit 2
            show = getattr(exc, "show", None)
            if type(exc).__name__ == "NoArgsIsHelpError" and show is not None:
                show()
                sys.exit(0)
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            command = getattr(getattr(exc, "ctx", None), "command_path", "ensemblekit")
            _err(f"error: {message} (see '{command} --help')")
            sys.exit(getattr(exc, "exit_code", EXIT_BAD_INPUT))
        sys.exit(code if isinstance(code, int) else 0)
    except BrokenPipeError:
        # The reader (e.g. `head`) closed the pipe: stop quietly, like other Unix tools.
        _stdout_to_devnull()
        sys.exit(0)
    except UsageError as exc:  # e.g. help or version text for a closed standard output
        _err(f"error: {exc}")
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        _err("interrupted")
        sys.exit(130)
    except SystemExit as exc:
        if _left_by_reader(exc):
            _stdout_to_devnull()
            sys.exit(0)
        raise
    except Exception as exc:  # noqa: BLE001 - last-resort handler
        if os.environ.get("ENSEMBLEKIT_DEBUG"):
            raise
        _err(f"unexpected failure: {type(exc).__name__}: {exc} (set ENSEMBLEKIT_DEBUG=1 for the traceback)")
        sys.exit(EXIT_FAILURE)


if __name__ == "__main__":  # pragma: no cover
    main()
