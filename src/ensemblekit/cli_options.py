"""The options that several commands of the command line share (Typer declarations).

Declared once here so that ``cli.py`` stays a thin list of commands: each command
names the options it takes (``cv: int | None = opt.CV``). Parsing callbacks check a
value's form only; what a value means is checked by the API.
"""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperGroup

from ensemblekit.errors import UsageError


def complete_algorithm(incomplete: str) -> list[str]:
    """Shell completion of an algorithm argument: the registry names that start with what
    was typed."""
    from ensemblekit import registry

    return sorted(name for name in registry.ALGORITHMS if name.startswith(incomplete))


# the root's options, given before the command (ensemblekit --quiet compare ...)
QUIET = typer.Option(False, "--quiet", "-q",
                     help="Print no notes and no progress on stderr: only results, and errors.")
VERBOSE = typer.Option(False, "--verbose", "-v",
                       help="At the end, print on stderr how long each stage took (reading the "
                       "data, fitting, the units of a comparison, its statistics ...) and the "
                       "total wall time. Not with --quiet.")


def _progress_mode(value: str) -> str:
    """``--progress``: one of the modes (any case), checked while the options are parsed."""
    from ensemblekit.cli_io import PROGRESS_MODES

    if value.lower() not in PROGRESS_MODES:
        raise typer.BadParameter(f"must be one of {', '.join(PROGRESS_MODES)}, got {value!r}")
    return value.lower()


PROGRESS = typer.Option("auto", "--progress", metavar="auto|bar|lines|none",
                        callback=_progress_mode,
                        help="How compare and evaluate show their progress on stderr: auto (a bar "
                        "on a terminal, else one line every few seconds with done/total and an "
                        "ETA, for CI logs; nothing with --quiet), bar, lines or none. predict "
                        "shows a bar only.")

TARGET = typer.Option(None, "--target", "-c", help="Class attribute (default: the last one).")
SET = typer.Option([], "--set", "-s", help="Algorithm parameter key=value (repeatable).")
SEED = typer.Option(1, "--seed", help="Random seed: same seed, same output.", min=0, max=2**31 - 1)
IGNORE = typer.Option([], "--ignore", help="Attribute to drop before anything else (repeatable).")


def _input_format(value: str | None) -> str | None:
    """``--input-format``: arff or csv (any case), checked while the options are parsed."""
    if value is None:
        return None
    if value.lower() not in ("arff", "csv"):
        raise typer.BadParameter(f"must be arff or csv, got {value!r}")
    return value.lower()


INPUT_FORMAT = typer.Option(None, "--input-format", callback=_input_format,
                             help="Input format: arff or csv (default: by file extension, "
                             "sniffed for '-').")


def _decimal(value: str | None) -> str | None:
    """``--decimal``: the CSV decimal mark, '.' or ','."""
    if value is not None and value not in (".", ","):
        raise typer.BadParameter(f"must be '.' or ',', got {value!r}")
    return value


DECIMAL = typer.Option(None, "--decimal", callback=_decimal,
                        help="CSV decimal mark: '.' or ',' (default: '.', and ',' for the columns "
                        "of a ';'-separated file written like 5,1).")
MISSING_VALUES = typer.Option([], "--missing-values", metavar="TOKEN",
                               help="CSV cell value read as missing (repeatable), besides the "
                               "empty field, ?, -, NA, N/A, n/a, NaN (NA and NaN in any case), "
                               "null, NULL, None, #N/A, #N/A N/A, #NA and <NA>.")
HEADER = typer.Option(None, "--header/--no-header",
                       help="CSV: the first row names the columns, or is data (columns "
                       "att1..attN). Default: data when its values fit the rows below.")
_COLS = ("1-based positions and ranges (1,3-5), first, last, or names; repeatable. Overrides "
         "the reader's guess (Weka's CSVLoader")
NOMINAL = typer.Option([], "--nominal", metavar="COLS",
                       help=f"CSV: read these columns as nominal: {_COLS} -N).")
NUMERIC = typer.Option([], "--numeric", metavar="COLS",
                       help=f"CSV: read these columns as numeric: {_COLS} -R).")
STRING = typer.Option([], "--string", metavar="COLS",
                      help=f"CSV: read these columns as string attributes, left out with a note "
                      f"(--string-to-nominal makes them nominal): {_COLS} -S).")
DATE = typer.Option([], "--date", metavar="COLS[:FORMAT]",
                    help="CSV: read these columns as dates in a Java SimpleDateFormat pattern "
                    "(default yyyy-MM-dd'T'HH:mm:ss), into milliseconds since 1970 as Weka does, "
                    "in the local time zone unless the pattern reads one (Weka's CSVLoader -D "
                    "-format). COLS as for --nominal.")
STRING_TO_NOMINAL = typer.Option(False, "--string-to-nominal",
                                  help="Read string attributes (ARFF, or CSV --string) as nominal "
                                  "ones (Weka's StringToNominal). Default: leave them out, with a "
                                  "note.")


# predict's Weka extras
def _unknown(value: str) -> str:
    """``--unknown``: missing or error."""
    if value not in ("missing", "error"):
        raise typer.BadParameter(f"must be missing or error, got {value!r}")
    return value


UNKNOWN = typer.Option("missing", "--unknown", callback=_unknown, metavar="missing|error",
                       help="A nominal value not seen in training: read it as missing, with "
                       "one note counting the rows (as Weka's InputMappedClassifier), or refuse "
                       "the file (error).")
COLUMNS = typer.Option(None, "--columns", metavar="actual,error,distribution,ATTR...",
                       help="Add Weka's -classifications columns after the others, in this order: "
                       "actual (the class in DATA; empty where missing or absent), error (+ "
                       "where the prediction is wrong; a regression model: predicted - actual), "
                       "distribution (one column distribution_<class> per class: Weka's 3 "
                       "decimals, * on the predicted class), or any attribute of DATA by name "
                       "(its text). Text in every format.")


def parse_columns(text: str | None) -> tuple[str, ...]:
    """``--columns a,b,c`` as its names, in order (empty names refused)."""
    if text is None:
        return ()
    names = tuple(part.strip() for part in text.split(","))
    if not all(names):
        raise UsageError(f"--columns {text!r}: an empty name; give names separated by commas, "
                         "e.g. actual,error,distribution")
    return names


CV = typer.Option(None, "--cv", help="Folds of CV, stratified for classifiers (default 10).")
REPEATS = typer.Option(None, "--repeats", help="CV repeats (default 10).")
RUNS = typer.Option(None, "--runs", help="Clustering runs (default 30).")
METRIC = typer.Option([], "--metric", "-m", help="Metric (repeatable; compare's default: accuracy; "
                       "nmi and purity for clustering; correlation and rmse for regression; "
                       "evaluate's: every measure of the task). fit-seconds, predict-seconds and "
                       "model-size measure the run (lower is better); times are measured, so "
                       "they differ from run to run; structure-stability compares the models of "
                       "a repeat's folds. README: 'Protocols and metrics'.")
JSON_FORMAT = typer.Option(None, "--format", help="json for scripts.")
NJOBS = typer.Option(1, "--n-jobs", "-j", help="Parallel workers (joblib): -1 = all cores, -2 = all "
                      "but one, ...; at most 4 per core. Killing the command ends its workers.")

# evaluate's one split, and compare's own
TEST = typer.Option(None, "--test", "-T", help="Train on DATA, test on this file (Weka's -T).")
SPLIT_PERCENTAGE = typer.Option(None, "--split-percentage",
                                help="Train on this percentage of DATA, test on the rest "
                                "(shuffled with --seed; Weka's -split-percentage).")
PRESERVE_ORDER = typer.Option(False, "--preserve-order",
                              help="Split in file order, not shuffled (Weka's -preserve-order).")
BASELINE = typer.Option(None, "--baseline", "-b", help="Algorithm the others are tested against.")
GRID = typer.Option([], "--grid", help="Parameter grid key=start:stop:step or key=v1,v2 "
                    "(repeatable; needs --baseline).")
TUNE = typer.Option([], "--tune", help="Tune a parameter in every training fold by an inner "
                    "stratified cross-validation (accuracy): key=start:stop:step or key=v1,v2 "
                    "(repeatable; classifiers).")
TUNE_CV = typer.Option(5, "--tune-cv", help="Inner folds of --tune.")
TUNE_BY = typer.Option(None, "--tune-by", metavar="INDEX", help="Clusterers: the internal index "
                       "that chooses --tune's values in each run (silhouette, dunn, ...).")
MAX_INSTANCES = typer.Option(None, "--max-instances", min=1,
                             help="Subsample each data set to at most N rows.")
SCHEDULER = typer.Option(None, "--scheduler",
                         help="Dask scheduler address (tcp://host:8786) to run the units on.")
RESUME = typer.Option(None, "--resume", help="JSON-lines journal: finished units are kept there "
                      "and not computed again.")
PLOT = typer.Option(None, "--plot", help="Critical-difference diagram of 3 or more algorithms "
                    "(or heat maps with --grid), one file per metric: cd.png writes "
                    "cd-METRIC.png (.png, .svg or .pdf).")
NOISE = typer.Option([], "--noise", metavar="LEVEL",
                     help="Run every algorithm again with this share of the training values of "
                     "the most significant half of the attributes replaced by draws from their "
                     "training distribution (repeatable: 0.2, 0.4, 0.6 in the Inner Ensembles "
                     "paper; 0 = clean); each level is a column group. README: 'Protocols and metrics'.")
ALPHA = typer.Option(0.05, "--alpha", help="Significance level of the tests.")
ROPE = typer.Option(None, "--rope", metavar="WIDTH",
                   help="Also run the Bayesian signed-rank test with this region of practical "
                   "equivalence (0.01 = one point of accuracy): two algorithms, or each against "
                   "--baseline. Needs baycomp (pip install 'ensemblekit[bayes]').")

# evaluate's Weka extras (classifiers)
COST_MATRIX = typer.Option(None, "--cost-matrix", metavar="FILE",
                           help="Cost matrix (rows: actual class, columns: predicted, in the "
                           "class's value order), in Weka's cost-file form ('ROWS COLUMNS' line, "
                           "then one line per row; % starts a comment) or as [0 1; 5 0], in a "
                           "file or inline: the report adds Weka's Total Cost and Average Cost "
                           "(Weka's -m).")
CURVE_OUT = typer.Option(None, "--curve-out", metavar="FILE",
                         help="Write each class's ROC and precision-recall points (threshold, "
                         "tp, fp, tn, fn, tpr, fpr, precision, recall, ...) as CSV, from the "
                         "predictions the report scores (cross-validation: the pooled "
                         "out-of-fold ones; Weka's -threshold-file).")
STRICT = typer.Option(False, "--strict",
                     help="Stop at a file in a --data folder that cannot be read; by default it "
                     "is skipped with a note.")
PREDICTIONS_OUT = typer.Option(None, "--predictions-out", metavar="FILE",
                              help="Write every fold's out-of-fold predictions as CSV: data "
                              "set, algorithm, repeat, fold, row, actual, predicted and the "
                              "predicted class's probability (Weka's -classifications).")

ANALYSE_METRIC = typer.Option([], "--metric", "-m", help="Measure to analyse (repeatable; default: "
                              "those recorded). From a journal, any measure computable from the "
                              "predictions (kappa, auc, rmse, nmi ...); from scores, those recorded.")
ANALYSE_SEED = typer.Option(None, "--seed", min=0, max=2**31 - 1,
                            help="Seed of the bootstrap intervals and the Bayesian test (default: "
                            "the journal's; 1 for a scores file).")


def parse_k_option(text: str | None):
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


def check_outputs(output: Path | None, plot: Path | None) -> None:
    """Refuse an ``--output`` or ``--plot`` whose file name does not say its format."""
    if output is not None and output.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"--output {output}: the file name must end in .csv or .json")
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(f"--plot {plot}: the file name must end in .png, .svg or .pdf")


#: The value an option takes, as its help names it, by the option's first name: what a
#: user types (FILE, N, KEY=VALUE), not the Python type that holds it. Options that declare
#: their own ``metavar`` keep it; flags take no value and show none.
METAVARS = {
    "--target": "NAME", "--set": "KEY=VALUE", "--seed": "N", "--ignore": "NAME",
    "--input-format": "arff|csv", "--decimal": "MARK", "--cv": "K", "--repeats": "N",
    "--runs": "N", "--metric": "NAME", "--format": "FORMAT", "--n-jobs": "N", "--test": "FILE",
    "--split-percentage": "PERCENT", "--baseline": "ALGO", "--grid": "KEY=RANGE",
    "--tune": "KEY=RANGE", "--tune-cv": "K", "--max-instances": "N", "--scheduler": "ADDRESS",
    "--resume": "FILE", "--plot": "FILE", "--alpha": "LEVEL", "--output": "FILE", "-k": "K",
    "--labels-out": "FILE", "--save": "FILE", "--members": "FILE", "--targets": "NAME,...",
    "--similarity-out": "FILE", "--graph": "FILE", "--data": "FILE|DIR",
}

#: A value's name by its type, for an option missing from :data:`METAVARS`.
_TYPE_METAVARS = {"integer": "N", "float": "X", "path": "FILE"}


def _value_name(param) -> str:
    """The metavar of an option that takes a value (see :data:`METAVARS`)."""
    name = max(param.opts, key=len)
    return METAVARS.get(name) or METAVARS.get(param.opts[0]) or \
        _TYPE_METAVARS.get(param.type.name, "TEXT")


class _Unnamed:
    """A parameter type as it is, but nameless in help: an argument's help row names it
    (DATA, MODEL) and says what it is, so the type column stays empty."""

    def __init__(self, inner):
        self.__dict__["_inner"] = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __call__(self, *args, **kwargs):
        return self._inner(*args, **kwargs)

    def get_metavar(self, *args, **kwargs) -> str:
        return ""


def name_values(command) -> None:
    """Give the options and arguments of ``command`` the names its help shows for values.

    An option that takes a value gets :func:`_value_name` unless it declares a metavar; a
    flag keeps none; an argument is named in capitals (DATA) and shows no type. Before, the
    help showed Python's types (``<str>``, ``<path>``, ``<int>``) beside every value.
    """
    for param in command.params:
        if param.param_type_name == "argument":
            if param.metavar is None:
                param.metavar = param.name.upper()
            param.type = _Unnamed(param.type)
        elif not (getattr(param, "is_flag", False) or getattr(param, "count", False)) \
                and param.metavar is None:
            param.metavar = _value_name(param)


class Group(TyperGroup):
    """The root command: its commands' help names values, not types (:func:`name_values`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for command in (self, *self.commands.values()):
            name_values(command)
