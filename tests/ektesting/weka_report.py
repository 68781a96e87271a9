"""Reading the evaluation report Weka 3.9.7 prints (shared by the Weka agreement tests).

``parse_weka_report(text)`` turns the text of ``java weka.classifiers.X -t TRAIN -T TEST``
(or a cross-validation / percentage-split run) into numbers; ``parse_weka_predictions``
reads the ``-classifications "...output.prediction.CSV -distribution -decimals 10"``
listing. Weka prints ``?`` for an undefined figure: it becomes NaN here.
"""

from __future__ import annotations

import csv
import math
import re

_SECTION = re.compile(
    r"^=== (Error on (?:test|training) (?:data|split)|Stratified cross-validation|"
    r"Cross-validation|Summary) ===\s*$",
    re.MULTILINE,
)
_NUMBER = r"(-?(?:\d+\.?\d*|\.\d+)(?:[Ee][+-]?\d+)?|NaN|-?Infinity|\?)"

# summary line label -> (key of the count/value, key of the percentage or None)
_SUMMARY = {
    "Correctly Classified Instances": ("correct", "correct_pct"),
    "Incorrectly Classified Instances": ("incorrect", "incorrect_pct"),
    "UnClassified Instances": ("unclassified", "unclassified_pct"),
    "Kappa statistic": ("kappa", None),
    "Total Cost": ("total_cost", None),  # with a cost matrix (-m FILE)
    "Average Cost": ("average_cost", None),
    "Correlation coefficient": ("correlation", None),
    "Mean absolute error": ("mae", None),
    "Root mean squared error": ("rmse", None),
    "Relative absolute error": ("rae", None),
    "Root relative squared error": ("rrse", None),
    "Total Number of Instances": ("n", None),
    "Ignored Class Unknown Instances": ("ignored", None),
}

# per-class column header -> key
_COLUMNS = {
    "TP Rate": "tp_rate", "FP Rate": "fp_rate", "Precision": "precision", "Recall": "recall",
    "F-Measure": "f_measure", "MCC": "mcc", "ROC Area": "roc_area", "PRC Area": "prc_area",
}  # fmt: skip


def _number(token: str) -> float:
    return math.nan if token in ("?", "NaN") else float(token)


def parse_weka_report(text: str, section: str | None = None) -> dict:
    """Figures of one evaluation section of a Weka report.

    Parameters
    ----------
    text : str
        Weka's standard output.
    section : str, optional
        The section title without the ``===`` (for example ``"Error on test data"``);
        default: the last evaluation section in ``text`` (the test-set one of ``-t -T``).

    Returns
    -------
    dict
        ``summary``: ``{correct, correct_pct, incorrect, incorrect_pct, kappa, mae, rmse,
        rae, rrse, n}`` (a numeric class gives ``correlation`` instead of the first five);
        ``per_class``: a list with one dict per class, keys ``tp_rate, fp_rate, precision,
        recall, f_measure, mcc, roc_area, prc_area, class``; ``weighted``: the "Weighted
        Avg." row (same keys but ``class``); ``confusion``: list of rows of numbers
        (actual class in rows); ``class_names``: from the confusion matrix legend.
        The last three are empty for a numeric class. ``?`` is NaN.

    Raises
    ------
    ValueError
        If no (or not the named) evaluation section is found.
    """
    heads = list(_SECTION.finditer(text))
    if section is not None:
        heads_named = [m for m in heads if m.group(1) == section]
        if not heads_named:
            raise ValueError(f"no '=== {section} ===' section in the Weka output")
        start = heads_named[-1]
    elif heads:
        start = heads[-1]
    else:
        raise ValueError("no evaluation section ('=== Error on ... ===' etc.) in the Weka output")
    later = [m.start() for m in heads if m.start() > start.start()]
    block = text[start.end(): later[0] if later else len(text)]
    # a section ends where the next one-line title other than its own sub-blocks starts
    cut = re.search(r"^=== (?!Detailed Accuracy By Class|Confusion Matrix).* ===\s*$",
                    block, re.MULTILINE)
    if cut:
        block = block[: cut.start()]

    summary = {}
    for line in block.splitlines():
        for label, (key, pct_key) in _SUMMARY.items():
            if line.startswith(label):
                values = re.findall(_NUMBER, line[len(label):])
                summary[key] = _number(values[0])
                if pct_key is not None and len(values) > 1:
                    summary[pct_key] = _number(values[1])

    per_class, weighted, keys = [], {}, []
    if "=== Detailed Accuracy By Class ===" in block:
        table = block.split("=== Detailed Accuracy By Class ===", 1)[1].strip("\n").splitlines()
        header = table[1] if not table[0].strip() else table[0]
        keys = [key for name, key in sorted(_COLUMNS.items(), key=lambda kv: header.find(kv[0]))
                if name in header]
        for line in table[table.index(header) + 1:]:
            if not line.strip():
                break
            if line.startswith("Weighted Avg."):
                tokens = line[len("Weighted Avg."):].split()
                weighted = {k: _number(t) for k, t in zip(keys, tokens)}
                break
            tokens = line.split(None, len(keys))
            row = {k: _number(t) for k, t in zip(keys, tokens)}
            row["class"] = tokens[len(keys)].strip()
            per_class.append(row)

    confusion, class_names = [], []
    if "=== Confusion Matrix ===" in block:
        lines = block.split("=== Confusion Matrix ===", 1)[1].splitlines()
        at = next(i for i, line in enumerate(lines) if "<-- classified as" in line)
        for line in lines[at + 1:]:
            if " | " not in line:
                break
            counts, legend = line.split(" | ", 1)
            confusion.append([float(v) for v in counts.split()])
            class_names.append(legend.split(" = ", 1)[1].rstrip("\n"))
    return {"summary": summary, "per_class": per_class, "weighted": weighted,
            "confusion": confusion, "class_names": class_names}


def parse_weka_predictions(text: str) -> dict:
    """The CSV prediction listing of ``-classifications "...prediction.CSV [-distribution]"``.

    Returns
    -------
    dict
        ``actual``: list of 0-based class codes (nominal class; None where the class is
        missing) or floats (numeric class); ``predicted``: likewise; ``distribution``:
        list of per-class probability lists (nominal class with ``-distribution``; the
        ``*`` marking Weka's predicted class is dropped), else empty.
    """
    body = text.split("=== Predictions on", 1)[1].split("===", 1)[1]
    lines = [line for line in body.strip().splitlines() if line.strip()]
    rows = list(csv.reader(lines[1:]))

    def value(field: str):
        if field in ("?", ""):
            return None
        if ":" in field:  # nominal "index:label", index 1-based
            return int(field.split(":", 1)[0]) - 1
        return float(field)

    return {
        "actual": [value(r[1]) for r in rows],
        "predicted": [value(r[2]) for r in rows],
        "distribution": [[float(v.lstrip("*")) for v in r[4:]] for r in rows if len(r) > 4],
    }


#: Summary keys of the Weka report -> (key of our report, scale, Weka's printed decimals).
SUMMARY = {"correct": ("correct", 1, 0), "incorrect": ("incorrect", 1, 0),
           "correct_pct": ("accuracy", 100, 4), "kappa": ("kappa", 1, 4), "mae": ("mae", 1, 4),
           "rmse": ("rmse", 1, 4), "rae": ("rae", 1, 4), "rrse": ("rrse", 1, 4), "n": ("n", 1, 0)}


def same_to_printed(ours, printed: float, decimals: int) -> bool:
    """Whether ``ours`` rounds to what Weka printed with ``decimals`` decimals ('?' = NaN)."""
    if ours is None or printed != printed:
        return (ours is None) == (printed != printed)
    return abs(ours - printed) <= 0.5 * 10.0**-decimals + 1e-9


def assert_same_report(ours: dict, weka: dict, where: str) -> None:
    for key, (mine, scale, decimals) in SUMMARY.items():
        value = ours[mine] * scale
        assert same_to_printed(value, weka["summary"][key], decimals), (
            f"{where}: {key}: ours {value}, Weka {weka['summary'][key]}")
    assert ours["class_names"] == weka["class_names"], where
    assert ours["confusion"] == weka["confusion"], f"{where}: confusion matrix"
    assert len(weka["per_class"]) == len(ours["class_names"])
    for k, row in enumerate(weka["per_class"]):
        for key, printed in row.items():
            if key == "class":
                continue
            assert same_to_printed(ours["per_class"][key][k], printed, 3), (
                f"{where}: class {row['class']} {key}: ours {ours['per_class'][key][k]}, "
                f"Weka {printed}")
    for key, printed in weka["weighted"].items():
        assert same_to_printed(ours["weighted"][key], printed, 3), (
            f"{where}: weighted {key}: ours {ours['weighted'][key]}, Weka {printed}")
