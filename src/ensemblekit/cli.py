"""The ``ensemblekit`` command line (Typer).

Each command parses its options, calls :mod:`ensemblekit.api` (which does the work
and returns a result object) and renders the result with :mod:`ensemblekit.report`.
Nothing here computes a score or imports a numeric library, so ``--help`` starts
fast; the API imports what a command needs when it runs.

Exit codes: 0 success; 2 bad usage or bad input (one line on stderr naming the
file, line or attribute); 1 an unexpected failure.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import typer

from ensemblekit import __version__, api, registry
from ensemblekit import cli_options as opt
from ensemblekit.api import UsageError
from ensemblekit.cli_io import bar_progress as _bar_progress
from ensemblekit.cli_io import check_destination as _check_destination
from ensemblekit.cli_io import commands_for as _commands_for
from ensemblekit.cli_io import emit as _emit
from ensemblekit.cli_io import err as _err
from ensemblekit.cli_io import guard_standard_streams as _guard_standard_streams
from ensemblekit.cli_io import keep_timings as _keep_timings
from ensemblekit.cli_io import left_by_reader as _left_by_reader
from ensemblekit.cli_io import note as _note
from ensemblekit.cli_io import one_line_warning as _one_line_warning
from ensemblekit.cli_io import progress as _progress
from ensemblekit.cli_io import require_stdout as _require_stdout
from ensemblekit.cli_io import say_timings as _say_timings
from ensemblekit.cli_io import set_progress as _set_progress
from ensemblekit.cli_io import set_quiet
from ensemblekit.cli_io import signal_exit_code as _signal_exit_code
from ensemblekit.cli_io import sigterm_stops_the_command as _sigterm_stops_the_command
from ensemblekit.cli_io import start_clock as _start_clock
from ensemblekit.cli_io import stdout_console as _stdout_console
from ensemblekit.cli_io import stdout_to_devnull as _stdout_to_devnull
from ensemblekit.cli_io import write_file as _write_file
from ensemblekit.cli_io import write_stdout as _write_stdout

app = typer.Typer(
    name="ensemblekit",
    help="Ensemble methods inside and around learners, on ARFF and CSV files.",
    cls=opt.Group,
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1


def _version(value: bool):
    if value:
        typer.echo(f"ensemblekit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug",
                               help="On an unexpected failure, print the traceback."),
    quiet: bool = opt.QUIET,
    verbose: bool = opt.VERBOSE,
    progress: str = opt.PROGRESS,
):
    """Ensemble methods inside and around learners, on ARFF and CSV files.

    Every command reads ARFF or CSV ('-' reads standard input); the class is the
    last attribute unless --target names another. Results go to stdout, messages to
    stderr. Exit codes: 0 ok, 2 bad usage or input, 1 unexpected failure.
    """
    if debug:
        os.environ["ENSEMBLEKIT_DEBUG"] = "1"
    if quiet and verbose:
        raise UsageError("--quiet and --verbose contradict each other: give one of them")
    set_quiet(quiet)
    _set_progress(progress, ctx.invoked_subcommand)
    _keep_timings(ctx.with_resource(api.timings()) if verbose else None)


# --------------------------------------------------------------------------- helpers
@contextlib.contextmanager
def _user_errors():
    """Turn bad-input exceptions (:func:`ensemblekit.api.input_errors`) into one stderr line
    and exit code 2."""
    try:
        yield
    except api.input_errors() as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None


def _check_format(value: str | None, allowed: tuple[str, ...], option: str) -> None:
    if value is not None and value not in allowed:
        raise UsageError(f"{option} must be one of {', '.join(allowed)}, got {value!r}")


def _print(renderables) -> None:
    console = _stdout_console()
    for renderable in renderables:
        if getattr(renderable, "no_wrap", None) is True:
            # text whose lines must stay whole (a tree as J48 prints it): never folded
            console.print(renderable, no_wrap=True, overflow="ignore", crop=False)
        else:
            console.print(renderable)


def _reading(params: dict):
    """How the command reads data files, from its parameters (``locals()``: ``--decimal``,
    ``--nominal`` ... where it has them); the reader's notes go to stderr."""
    names = ("decimal", "missing_values", "header", "string_to_nominal", "nominal", "numeric",
             "string", "date")
    return api.reading(**{k: params[k] for k in names if k in params}, notify=_note)


# --------------------------------------------------------------------------- commands
@app.command()
def algorithms(
    name: str | None = typer.Argument(None, metavar="NAME", autocompletion=opt.complete_algorithm,
                                      help="One algorithm: list its parameters with type, default, "
                                      "range and help."),
    format_: str | None = opt.JSON_FORMAT,
):
    """List every algorithm with its task, parameters, defaults and preprocessing,
    or one algorithm's parameters in full (NAME)."""
    from ensemblekit.report import algorithm_params_table, algorithms_table
    from ensemblekit.results import algorithm_summary, algorithms_summary
    from ensemblekit.writers import to_json

    with _user_errors():
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        if name is not None:
            summary = algorithm_summary(registry.get(name))
        else:
            summary = algorithms_summary(registry.ALGORITHMS.values())
        if format_ == "json":
            _write_stdout(to_json(summary))
        elif name is not None:
            _stdout_console().print(algorithm_params_table(summary))
        else:
            _stdout_console().print(algorithms_table(summary))


@app.command()
def info(
    data: str = typer.Argument(..., help="ARFF or CSV file, or '-' for stdin."),
    target: str | None = opt.TARGET,
    ignore: list[str] = opt.IGNORE,
    input_format: str | None = opt.INPUT_FORMAT,
    decimal: str | None = opt.DECIMAL,
    missing_values: list[str] = opt.MISSING_VALUES,
    header: bool | None = opt.HEADER, string_to_nominal: bool = opt.STRING_TO_NOMINAL,
    nominal: list[str] = opt.NOMINAL, numeric: list[str] = opt.NUMERIC,
    string: list[str] = opt.STRING, date: list[str] = opt.DATE,
    format_: str | None = opt.JSON_FORMAT,
):
    """Print a file's schema: attributes, types, classes and their counts, missing values."""
    from ensemblekit.report import schema_tables
    from ensemblekit.writers import to_json

    with _user_errors(), _reading(locals()):
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        summary = api.describe_data(data, target=target, ignore=ignore, input_format=input_format)
        if format_ == "json":
            _write_stdout(to_json(summary))
        else:
            _print(schema_tables(summary))


@app.command()
def fit(
    algo: str = typer.Argument(..., help="Registry name (see 'ensemblekit algorithms').",
                               autocompletion=opt.complete_algorithm),
    data: str = typer.Argument(..., help="Training file, or '-' for stdin."),
    output: Path = typer.Option(..., "--output", "-o", help="Model file to write."),
    target: str | None = opt.TARGET,
    settings: list[str] = opt.SET,
    seed: int = opt.SEED,
    n_clusters: int | None = typer.Option(
        None, "-k", help="Clusters (clustering algorithms; default: number of classes)."),
    no_class: bool = typer.Option(False, "--no-class", help="Every attribute is a feature "
                                  "(clustering)."),
    ignore: list[str] = opt.IGNORE,
    input_format: str | None = opt.INPUT_FORMAT,
    decimal: str | None = opt.DECIMAL,
    missing_values: list[str] = opt.MISSING_VALUES,
    header: bool | None = opt.HEADER,
    nominal: list[str] = opt.NOMINAL, numeric: list[str] = opt.NUMERIC,
    string: list[str] = opt.STRING, date: list[str] = opt.DATE,
    string_to_nominal: bool = opt.STRING_TO_NOMINAL,
):
    """Fit an algorithm to a file and save the model."""
    with _user_errors(), _reading(locals()):
        _check_destination(output, "--output")
        model = api.fit(algo, data, target=target, params=registry.parse_settings(settings), seed=seed,
                        n_clusters=n_clusters, no_class=no_class, ignore=ignore,
                        input_format=input_format, notify=_note)
        api.save_model(model, output)
    train = model.metadata["training_data"]
    _note(f"fitted {model.metadata['algorithm']} on {train['name']} ({train['instances']} "
          f"instances) -> {output}")


@app.command()
def predict(
    model_file: Path = typer.Argument(..., metavar="MODEL", help="Model file written by 'fit'."),
    data: str = typer.Argument(..., help="File to predict, or '-' for stdin."),
    proba: bool = typer.Option(False, "--proba", help="Add one probability column per class."),
    format_: str = typer.Option("csv", "--format", help="csv, tsv, json, jsonl or arff."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here instead of stdout."),
    input_format: str | None = opt.INPUT_FORMAT,
    decimal: str | None = opt.DECIMAL,
    missing_values: list[str] = opt.MISSING_VALUES,
    header: bool | None = opt.HEADER,
    nominal: list[str] = opt.NOMINAL, numeric: list[str] = opt.NUMERIC,
    string: list[str] = opt.STRING, date: list[str] = opt.DATE,
    n_jobs: int | None = typer.Option(
        None, "--n-jobs", "-j", help="Processes for models that predict rows in parallel (lazy "
        "ensembles, knn); -1 = all cores. The output does not depend on it."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="Dask scheduler address (tcp://host:8786) to predict the rows "
        "on, each task on one core (not with --n-jobs). The output does not depend on it."),
    unknown: str = opt.UNKNOWN,
    columns: str | None = opt.COLUMNS,
):
    """Predict every row of a file with a saved model (one output row per input row, in order).

    The file is read, predicted and written in chunks of rows, so memory does not grow with its
    size and the first rows come out at once. The class column is read only for --columns
    actual or error. Columns: row, prediction, p_<class> (--proba), then --columns. The model
    declares each column's type, a date column's pattern included (--date overrides it);
    --nominal, --numeric and --string are refused.
    """
    from ensemblekit.cli_io import emit_parts
    from ensemblekit.writers import OUTPUT_FORMATS, format_prediction_stream

    with _user_errors(), _reading(locals()):
        if output is None:
            _require_stdout()
        _check_format(format_, OUTPUT_FORMATS, "--format")
        _check_destination(output, "--output")
        chunks = api.predict_chunks(model_file, data, proba=proba, input_format=input_format,
                                    n_jobs=n_jobs, progress=_bar_progress, scheduler=scheduler,
                                    unknown=unknown, columns=opt.parse_columns(columns))
        emit_parts(format_prediction_stream(chunks, format_), output)


@app.command()
def cluster(
    algo: str = typer.Argument(..., help="Clustering algorithm (see 'ensemblekit algorithms').",
                               autocompletion=opt.complete_algorithm),
    data: str = typer.Argument(..., help="File to cluster, or '-' for stdin."),
    n_clusters: str | None = typer.Option(
        None, "-k", help="Clusters (default: number of classes), or a range A:B to print the "
        "internal indices for every k from A to B and mark the best k of each."),
    target: str | None = opt.TARGET,
    settings: list[str] = opt.SET,
    seed: int = opt.SEED,
    labels_out: Path | None = typer.Option(None, "--labels-out", help="Write row,cluster CSV here."),
    save: Path | None = typer.Option(None, "--save", help="Also save the fitted model here."),
    members: Path | None = typer.Option(
        None, "--members", help="Member labelings to combine (cspa, hgpa, mcla, hac-*): CSV with a "
        "header row, one column per member, one row per instance of DATA in the same order."),
    targets: str | None = typer.Option(
        None, "--targets", help="ss-isca only (and required there): comma-separated attributes "
        "that form the target matrix Y. They are removed from the clustered attributes; numeric "
        "ones are used as they are, nominal ones one-hot; a missing value becomes its column's "
        "mean."),
    similarity_out: Path | None = typer.Option(
        None, "--similarity-out", help="isca, ss-isca: write the n x n rule similarity S as CSV: "
        "a header 'row,1,2,...,n', then one line 'i,S_i1,...,S_in' per instance i (1-based, "
        "file order), values as Python repr floats."),
    no_class: bool = typer.Option(False, "--no-class", help="The file has no class attribute."),
    ignore: list[str] = opt.IGNORE,
    input_format: str | None = opt.INPUT_FORMAT,
    decimal: str | None = opt.DECIMAL,
    missing_values: list[str] = opt.MISSING_VALUES,
    header: bool | None = opt.HEADER,
    nominal: list[str] = opt.NOMINAL, numeric: list[str] = opt.NUMERIC,
    string: list[str] = opt.STRING, date: list[str] = opt.DATE,
    string_to_nominal: bool = opt.STRING_TO_NOMINAL,
    format_: str | None = opt.JSON_FORMAT,
):
    """Cluster a file; print the prototypes, the internal validity indices and, when it has a
    class, the external ones (NMI, purity, ARI, Rand, Jaccard, FM, Wallace)."""
    from ensemblekit import report, writers
    from ensemblekit.results import prediction_rows
    from ensemblekit.writers import to_json

    with _user_errors(), _reading(locals()):
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        spec = registry.get(algo)
        if spec.task != registry.CLUSTERING:
            raise UsageError(f"{algo} is a {spec.task} algorithm; 'cluster' needs a clustering "
                             "algorithm")
        k_single, k_range = opt.parse_k_option(n_clusters)
        if k_range is not None and (labels_out is not None or save is not None):
            raise UsageError("-k A:B tries several k; --labels-out and --save need a single k")
        names = None
        if targets is not None:
            names = tuple(part.strip() for part in targets.split(","))
            if spec.needs_targets and not all(names):
                raise UsageError(f"--targets expects comma-separated attribute names, got "
                                 f"{targets!r}")
        if similarity_out is not None and not spec.exports_similarity:
            raise UsageError(f"--similarity-out writes the rule similarity of isca and ss-isca; "
                             f"{algo} has none")
        for path, option in ((labels_out, "--labels-out"), (save, "--save"),
                             (similarity_out, "--similarity-out")):
            _check_destination(path, option)
        common = dict(target=target, params=registry.parse_settings(settings), seed=seed, members=members,
                      targets=names, no_class=no_class, ignore=ignore, input_format=input_format,
                      notify=_note)
        if k_range is not None:
            result = api.select_k(algo, data, k_range, **common)
        else:
            result = api.cluster(algo, data, k=k_single, **common)
        if similarity_out is not None:
            from ensemblekit.cli_io import emit_parts

            emit_parts(writers.similarity_csv_parts(result.model.estimator.similarity_blocks()),
                       similarity_out)
        if k_range is not None:
            if format_ == "json":
                _write_stdout(to_json(result.to_dict()))
            else:
                _print(report.k_selection_table(
                    result.ks, result.values, result.best, f"{algo} on {result.dataset}: internal "
                    f"indices for k = {result.ks[0]}..{result.ks[-1]}, seed {seed}"))
            return
        if result.partitioner is not None:
            _note(f"note: {algo} partitioned with "
                  f"{report.PARTITIONER_TEXT.get(result.partitioner, result.partitioner)}")
        if labels_out is not None:
            _write_file(labels_out, writers.format_predictions(prediction_rows(
                [str(int(v)) for v in result.labels]), ["row", "cluster"], "csv"))
        if save is not None:
            api.save_model(result.model, save)
        if format_ == "json":
            _write_stdout(to_json(result.to_dict()))
        else:
            _print(report.clustering_renderables(result))


def _run_comparison(algos: list[str], data: list[str], *, format_, output, plot, resume,
                    evaluate: bool = False, curve_out: Path | None = None,
                    predictions_out: Path | None = None, **options) -> None:
    """Shared body of 'compare' and 'evaluate ALGO': call the API, write files, render."""
    from ensemblekit import writers

    _check_format(format_, ("json", "table"), "--format")
    api.worker_count(options["n_jobs"])
    opt.check_outputs(output, plot)
    plot_files = [] if plot is None else api.plot_paths(plot, options.get("metrics") or (), algos)
    for path, option in ((output, "--output"), *((p, "--plot") for p in plot_files),
                         (resume, "--resume"), (predictions_out, "--predictions-out")):
        _check_destination(path, option)
    if evaluate:
        result = api.evaluate(algos[0], data[0], progress=_progress, notify=_note,
                              curves=curve_out is not None, **options)
        _write_curves(curve_out, next(iter(result.pooled.values()), None))
    else:
        result = api.compare(algos, data, resume=resume, plot=plot is not None,
                             predictions=predictions_out is not None, progress=_progress,
                             notify=_note, **options)
        if predictions_out is not None:
            _emit(writers.predictions_csv(result.predictions), predictions_out)
    _render_comparison(result, format_, output, plot)
    if result.failures:
        _err(f"{len(result.failures)} of {result.units} units failed; first: "
             f"{result.failures[0].error}")
        bad_input = all(f.bad_input for f in result.failures)
        raise typer.Exit(EXIT_BAD_INPUT if bad_input else EXIT_FAILURE)


def _render_comparison(result, format_: str | None, output: Path | None,
                       plot: Path | None) -> None:
    """Write a comparison's plots and scores file, and print its tables (or JSON)."""
    from ensemblekit import report, writers
    from ensemblekit.writers import to_json

    if plot is not None:
        for written in api.plot_comparison(result, plot, notify=_note):
            _note(f"wrote {written}")
    if output is not None:
        _emit(writers.scores_text(result.scores, result.failures,
                                  output.suffix.lower().lstrip("."), result.chosen), output)
    if format_ == "json":
        _write_stdout(to_json(result.to_dict()))
    elif result.pooled:
        _print(report.cross_validation_renderables(result))
    else:
        _print(report.comparison_renderables(result))


def _write_curves(path: Path | None, report) -> None:
    """``--curve-out``: the report's ROC and precision-recall points, written atomically."""
    from ensemblekit import writers

    if path is not None and report is not None:
        _write_file(path, writers.curves_csv(report))


@app.command()
def evaluate(
    algo_or_model: str = typer.Argument(..., metavar="ALGO|MODEL",
                                        help="Registry name (cross-validated, or trained and "
                                             "tested) or a model file (scored on DATA)."),
    data: str = typer.Argument(..., help="ARFF or CSV file, or '-' for stdin (with --test: "
                                         "the training data)."),
    test: str | None = opt.TEST,
    split_percentage: float | None = opt.SPLIT_PERCENTAGE,
    preserve_order: bool = opt.PRESERVE_ORDER,
    cv: int | None = opt.CV,
    repeats: int | None = opt.REPEATS,
    runs: int | None = opt.RUNS,
    metric: list[str] = opt.METRIC,
    target: str | None = opt.TARGET,
    settings: list[str] = opt.SET,
    seed: int = opt.SEED,
    n_jobs: int = opt.NJOBS,
    ignore: list[str] = opt.IGNORE,
    input_format: str | None = opt.INPUT_FORMAT,
    decimal: str | None = opt.DECIMAL,
    missing_values: list[str] = opt.MISSING_VALUES,
    header: bool | None = opt.HEADER,
    nominal: list[str] = opt.NOMINAL, numeric: list[str] = opt.NUMERIC,
    string: list[str] = opt.STRING, date: list[str] = opt.DATE,
    string_to_nominal: bool = opt.STRING_TO_NOMINAL,
    output: Path | None = typer.Option(None, "--output", "-o", help="Per-fold scores (.csv/.json)."),
    format_: str | None = opt.JSON_FORMAT,
    cost_matrix: str | None = opt.COST_MATRIX,
    curve_out: Path | None = opt.CURVE_OUT,
    tune: list[str] = opt.TUNE,
    tune_cv: int = opt.TUNE_CV,
    tune_by: str | None = opt.TUNE_BY,
):
    """Evaluate one algorithm (repeated CV, a test file or a percentage split; clustering:
    seeded runs) or one saved model (test set), with Weka's measures, per-class table and
    confusion matrix."""
    from ensemblekit import report
    from ensemblekit.writers import to_json

    with _user_errors(), _reading(locals()):
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        _check_destination(curve_out, "--curve-out")
        extras = {"cost_matrix": cost_matrix, "curves": curve_out is not None}
        is_model = not registry.is_registered(algo_or_model) and Path(algo_or_model).is_file()
        one_split = test is not None or split_percentage is not None or preserve_order
        if is_model or one_split:
            given = [name for name, v in (("--cv", cv), ("--repeats", repeats), ("--runs", runs),
                                          ("--output", output), ("--tune", tune or None))
                     if v is not None]
            if is_model:
                given += [name for name, v in (
                    ("--set", settings or None), ("--target", target), ("--ignore", ignore or None),
                    ("--test", test), ("--split-percentage", split_percentage),
                    ("--preserve-order", preserve_order or None)) if v is not None]
            if given:
                why = ("when evaluating a saved model (it is scored as it is on DATA)" if is_model
                       else "with one train/test split (--test, --split-percentage)")
                raise UsageError(f"{', '.join(given)} cannot be used {why}")
            if is_model:
                result = api.evaluate_model(algo_or_model, data, metrics=metric,
                                            input_format=input_format, notify=_note, **extras)
            else:
                result = api.evaluate_split(
                    algo_or_model, data, test=test, split_percentage=split_percentage,
                    preserve_order=preserve_order, metrics=metric, target=target,
                    params=registry.parse_settings(settings), seed=seed, ignore=ignore,
                    input_format=input_format, notify=_note, **extras)
            _write_curves(curve_out, result.report)
            if format_ == "json":
                _write_stdout(to_json(result.to_dict()))
            else:
                _print(report.evaluation_renderables(result))
            return
        _run_comparison([algo_or_model], [data], format_=format_, output=output, plot=None,
                        resume=None, params=registry.parse_settings(settings), target=target,
                        ignore=ignore, input_format=input_format, metrics=metric, cv=cv,
                        repeats=repeats, runs=runs, seed=seed, n_jobs=n_jobs, evaluate=True,
                        cost_matrix=cost_matrix, curve_out=curve_out, tune=tune, tune_cv=tune_cv,
                        tune_by=tune_by)


@app.command()
def compare(
    algos: list[str] = typer.Argument(
        ..., metavar="ALGO...", autocompletion=opt.complete_algorithm,
        help="Registry names of one task; ALGO:key=value+key=value is a configuration, a "
        "column of its own whose settings win over --set (c45:unpruned=true)."),
    data: list[str] = typer.Option(..., "--data", "-d", help="Data file or folder (repeatable)."),
    cv: int | None = opt.CV,
    repeats: int | None = opt.REPEATS,
    runs: int | None = opt.RUNS,
    metric: list[str] = opt.METRIC,
    target: str | None = opt.TARGET,
    settings: list[str] = opt.SET,
    seed: int = opt.SEED,
    n_jobs: int = opt.NJOBS,
    ignore: list[str] = opt.IGNORE,
    input_format: str | None = opt.INPUT_FORMAT,
    decimal: str | None = opt.DECIMAL,
    missing_values: list[str] = opt.MISSING_VALUES,
    header: bool | None = opt.HEADER,
    nominal: list[str] = opt.NOMINAL, numeric: list[str] = opt.NUMERIC,
    string: list[str] = opt.STRING, date: list[str] = opt.DATE,
    string_to_nominal: bool = opt.STRING_TO_NOMINAL,
    output: Path | None = typer.Option(None, "--output", "-o",
                                          help="Every per-fold score, long format (.csv or .json)."),
    format_: str | None = opt.JSON_FORMAT,
    baseline: str | None = opt.BASELINE,
    grid: list[str] = opt.GRID,
    tune: list[str] = opt.TUNE,
    tune_cv: int = opt.TUNE_CV,
    tune_by: str | None = opt.TUNE_BY,
    max_instances: int | None = opt.MAX_INSTANCES,
    scheduler: str | None = opt.SCHEDULER,
    resume: Path | None = opt.RESUME,
    plot: Path | None = opt.PLOT,
    alpha: float = opt.ALPHA,
    rope: float | None = opt.ROPE,
    strict: bool = opt.STRICT,
    predictions_out: Path | None = opt.PREDICTIONS_OUT,
    noise: list[float] = opt.NOISE,
):
    """Compare algorithms over data sets under one protocol: tables, ranks, Friedman/Nemenyi."""
    with _user_errors(), _reading(locals()):
        _require_stdout()
        if len(set(algos)) != len(algos):
            raise UsageError("an algorithm is named twice")
        _run_comparison(list(algos), list(data), format_=format_, output=output, plot=plot,
                        resume=resume, params=registry.parse_settings(settings), target=target, ignore=ignore,
                        input_format=input_format, metrics=metric, cv=cv, repeats=repeats,
                        runs=runs, seed=seed, n_jobs=n_jobs, baseline=baseline, grid=grid,
                        tune=tune, tune_cv=tune_cv, tune_by=tune_by,
                        max_instances=max_instances,
                        scheduler=scheduler, alpha=alpha, rope=rope, strict=strict,
                        predictions_out=predictions_out, noise=noise)


@app.command()
def analyse(
    record: Path = typer.Argument(..., metavar="RUN.jsonl|SCORES.csv",
                                  help="A compare's --resume journal, or its --output scores."),
    metric: list[str] = opt.ANALYSE_METRIC,
    baseline: str | None = opt.BASELINE,
    alpha: float = opt.ALPHA,
    rope: float | None = opt.ROPE,
    seed: int | None = opt.ANALYSE_SEED,
    output: Path | None = typer.Option(None, "--output", "-o",
                                       help="Every per-fold score, long format (.csv or .json)."),
    plot: Path | None = opt.PLOT,
    format_: str | None = opt.JSON_FORMAT,
):
    """Redraw a finished comparison's tables, tests and plots from its record, fitting nothing."""
    with _user_errors():
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        opt.check_outputs(output, plot)
        for path, option in ((output, "--output"), (plot, "--plot")):
            _check_destination(path, option)
        result = api.analyse(record, metrics=metric, baseline=baseline, alpha=alpha, rope=rope,
                             seed=seed, notify=_note)
        _render_comparison(result, format_, output, plot)


@app.command()
def show(
    model_file: Path = typer.Argument(..., metavar="MODEL", help="Model file written by 'fit'."),
    format_: str | None = typer.Option(None, "--format", help="json for scripts (metadata)."),
    graph: Path | None = typer.Option(None, "--graph", help="Write a Bayesian network as "
                                         "Graphviz DOT here."),
):
    """Print what a saved model learned, with its metadata."""
    from ensemblekit.cli_io import rich_text
    from ensemblekit.description import description_renderables, description_text, model_description
    from ensemblekit.writers import to_json

    with _user_errors():
        _require_stdout()
        _check_format(format_, ("json", "table"), "--format")
        _check_destination(graph, "--graph")
        model = api.load_model(model_file)
        if graph is not None:
            _write_file(graph, api.network_dot(model))
        if format_ == "json":
            _write_stdout(to_json(model.metadata, sort_keys=True))
            return
        shown = model_description(api.describe_model(model))
        if sys.stdout.isatty():  # rich on a terminal; plain lines, without rich, elsewhere
            _print(description_renderables(shown))
        else:
            _write_stdout(description_text(shown, rich_text))


def main() -> None:
    """Console-script entry point: run the app, map failures to exit codes.

    0 on success, and when the reader of stdout closes the pipe early (``| head``);
    2 with one stderr line for bad usage or input, including a standard output
    that was closed before the command started; 1 for an unexpected failure.
    """
    import warnings

    from ensemblekit._imports import plain_scipy_docstrings

    _start_clock()
    _guard_standard_streams()
    plain_scipy_docstrings()  # about 0.2 s less start-up for every command that loads scipy
    warnings.showwarning = _one_line_warning
    every_command = app.registered_commands
    app.registered_commands = _commands_for(app, sys.argv[1:])
    try:
        with _sigterm_stops_the_command():
            _run_app()
    finally:
        app.registered_commands = every_command


def console_main() -> None:
    """The ``ensemblekit`` script: :func:`main`, then :func:`gc.freeze` as the process ends.

    Shutdown (atexit, flushing) is unchanged but skips traversing numpy's and numba's objects:
    0.2 s of a 0.9 s ``fit c45`` (benchmarks/bench_startup.py). Tests call :func:`main`.
    """
    import gc

    try:
        main()
    finally:
        gc.freeze()


def _run_app() -> None:
    """Run the app once, mapping failures to exit codes (the body of :func:`main`)."""
    try:
        try:
            code = app(prog_name="ensemblekit", standalone_mode=False)
            _say_timings()
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
    except SystemExit as exc:
        if _left_by_reader(exc):
            _stdout_to_devnull()
            sys.exit(0)
        raise
    except BaseException as exc:  # noqa: BLE001 - last-resort handler
        if (code := _signal_exit_code(exc)) is not None:  # Ctrl-C: 130, SIGTERM: 143
            sys.exit(code)
        if os.environ.get("ENSEMBLEKIT_DEBUG") or not isinstance(exc, Exception):
            raise
        _err(f"unexpected failure: {type(exc).__name__}: {exc} (run with --debug, or set "
             "ENSEMBLEKIT_DEBUG=1, for the traceback)")
        sys.exit(EXIT_FAILURE)


if __name__ == "__main__":  # pragma: no cover
    console_main()
