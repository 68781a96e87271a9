"""How many of J48's printed trees and Weka's evaluation figures ensemblekit reproduces.

Issue 33 counts agreement with Weka 3.9.7 on cases built from UCI files in a fixed way;
this script builds such cases from ../shared/datasets and counts the same things:

* **cases**: each file is split into its odd and even data rows (train, test), then
  made harder step by step, each step a case of its own:

  - ``plain``: the split as it is;
  - ``missing``: 5-20 % of the feature values replaced by ``?`` (a seeded share per file),
    in both halves;
  - ``unlabelled``: also every 9th test row's class ``?``;
  - ``wide``: also a nominal attribute of 60 values inserted first (a seeded code per row,
    tied to the class for half of the rows, so that J48 may split on it);
  - ``middle``: also the class moved to the middle of the attributes (``-c``).

* **trees**: J48 with ``[]``, ``-U``, ``-M 5``, ``-C 0.1`` and ``-S -O`` on each case's
  training half; a tree counts when our ``show`` text equals J48's byte for byte.
* **figures**: ``J48``, ``IBk -K 3``, ``IBk -K 7 -I`` and ``BayesNet`` (global K2, LOO-CV,
  two parents) trained on the training half and tested on the other (``-t TRAIN -T
  TEST``); every figure of Weka's report (summary, per-class rows, weighted averages,
  confusion matrix, ignored unlabelled rows) is compared with ``evaluate --test --format
  json`` at the decimals Weka prints.

Run from the repository root (Java and python-weka-wrapper3's ``weka.jar`` needed)::

    python benchmarks/weka_agreement.py [--files a,b,...] [--out FILE]

It prints the counts and each difference; ``--out`` writes the same as Markdown.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

import arff

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from ektesting.weka_report import SUMMARY, parse_weka_report, same_to_printed  # noqa: E402
from ektesting.weka_tools import k2_options, run_weka  # noqa: E402

SHARED = ROOT.parent / "shared" / "datasets"

FILES = ("anneal", "audiology", "balance-scale", "breast-cancer", "breast-w", "car", "colic",
         "credit-a", "credit-g", "diabetes", "ecoli", "glass", "heart-c", "heart-h",
         "heart-statlog", "hepatitis", "ionosphere", "iris", "kr-vs-kp", "labor", "lymph",
         "primary-tumor", "sonar", "soybean", "tic-tac-toe", "vehicle", "vote", "hayes-roth", "zoo")

STEPS = ("plain", "missing", "unlabelled", "wide", "middle")

TREE_OPTIONS = ((), ("-U",), ("-M", "5"), ("-C", "0.1"), ("-S", "-O"))

LEARNERS = (
    ("weka.classifiers.trees.J48", (), "c45", ()),
    ("weka.classifiers.lazy.IBk", ("-K", "3"), "knn", ("n_neighbors=3",)),
    ("weka.classifiers.lazy.IBk", ("-K", "7", "-I"), "knn", ("n_neighbors=7", "weights=inverse")),
    ("weka.classifiers.bayes.BayesNet", tuple(k2_options(2, "loo")), "k2", ()),
)

#: J48 option -> our c45 parameter setting.
C45_SETTINGS = {"-U": ("unpruned=true",), "-S": ("subtree_raising=false",),
                "-O": ("collapse_tree=false",)}
C45_VALUED = {"-M": "min_samples_leaf", "-C": "confidence_factor"}

# ---- building the cases
def _load(name: str) -> dict:
    with (SHARED / f"{name}.arff").open(encoding="utf-8") as handle:
        return arff.load(handle)


def build_cases(name: str, folder: Path) -> list[tuple[str, Path, Path, int]]:
    """``(step, train, test, class index 1-based)`` for each step of one file."""
    doc = _load(name)
    attributes, rows = doc["attributes"], [list(r) for r in doc["data"]]
    draw = random.Random(f"{name}-agreement")
    share = 0.05 + 0.15 * draw.random()
    class_values = attributes[-1][1]
    cases = []
    train, test = rows[0::2], rows[1::2]
    for step in STEPS:
        attrs = list(attributes)
        if step == "missing":
            for part in (train, test):
                for row in part:
                    for j in range(len(row) - 1):
                        if draw.random() < share:
                            row[j] = None
        if step == "unlabelled":
            for i in range(0, len(test), 9):
                test[i][-1] = None
        if step == "wide":
            for part in (train, test):
                for row in part:
                    tied = row[-1] is not None and draw.random() < 0.5
                    code = (class_values.index(row[-1]) * 7 + draw.randrange(3) if tied
                            else draw.randrange(60))
                    row.insert(0, f"v{code % 60}")
        if step in ("wide", "middle"):
            attrs = [("wide60", [f"v{i}" for i in range(60)])] + attrs
        at = len(attrs) - 1
        if step == "middle":
            at = len(attrs) // 2
            for part in (train, test):
                for row in part:
                    row.insert(at, row.pop())
            attrs.insert(at, attrs.pop())
        paths = []
        for part, data in (("train", train), ("test", test)):
            path = folder / f"{name}-{step}-{part}.arff"
            out = {"relation": f"{name}-{step}-{part}", "attributes": attrs, "data": data}
            path.write_text(arff.dumps(out), encoding="utf-8")
            paths.append(path)
        cases.append((step, paths[0], paths[1], at + 1, attrs[at][0]))
    return cases


# ---- running both sides
def _ours(*args: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from ensemblekit.cli import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout


def _c45_params(options) -> list[str]:
    sets, it = [], iter(options)
    for flag in it:
        if flag in C45_VALUED:
            sets += ["-s", f"{C45_VALUED[flag]}={next(it)}"]
        else:
            for setting in C45_SETTINGS[flag]:
                sets += ["-s", setting]
    return sets


def compare_tree(train: Path, class_index: int, target: str, options, folder: Path) -> str | None:
    """None when the printed trees are equal, else the first differing line pair."""
    weka = run_weka("weka.classifiers.trees.J48", "-t", str(train), "-no-cv",
                    "-c", str(class_index), *options)
    want = weka.split("------------------\n", 1)[1].split("\n\nNumber of Leaves", 1)[0]
    model = folder / "tree.model"
    code, _ = _ours("fit", "c45", str(train), "-c", target, *_c45_params(options),
                    "-o", str(model))
    if code != 0:
        return f"fit exited {code}"
    code, shown = _ours("show", str(model))
    got = shown.split("------------------\n", 1)[1].split("\n\nNumber of Leaves", 1)[0]
    if got.strip("\n") == want.strip("\n"):
        return None
    for a, b in zip(got.strip("\n").splitlines(), want.strip("\n").splitlines()):
        if a != b:
            return f"ours {a!r} / weka {b!r}"
    return "lengths differ"


def compare_figures(learner, train: Path, test: Path, class_index: int, target: str):
    """(figures compared, list of differences) for one learner on one case."""
    klass, options, algo, settings = learner
    text = run_weka(klass, "-t", str(train), "-T", str(test), "-o", "-c", str(class_index),
                    *options)
    weka = parse_weka_report(text, "Error on test data")
    sets = [a for s in settings for a in ("-s", s)]
    code, out = _ours("evaluate", algo, str(train), "--test", str(test), "-c", target, *sets,
                      "--format", "json")
    if code != 0:
        return 1, [f"evaluate exited {code}"]
    doc = json.loads(out)
    ours = doc["report"]
    diffs, count = [], 0

    def check(label, mine, printed, decimals):
        nonlocal count
        count += 1
        if not same_to_printed(None if mine != mine else mine, printed, decimals):
            diffs.append(f"{label}: ours {mine} weka {printed}")

    summary = weka["summary"]
    for key, (mine, scale, decimals) in SUMMARY.items():
        check(key, ours[mine] * scale, summary[key], decimals)
    check("incorrect_pct", 100 - 100 * ours["accuracy"], summary["incorrect_pct"], 4)
    if "ignored" in summary:
        check("ignored", doc["ignored_class_unknown_instances"], summary["ignored"], 0)
    for k, row in enumerate(weka["per_class"]):
        for key, value in row.items():
            if key != "class":
                check(f"{row['class']}.{key}", ours["per_class"][key][k], value, 3)
    for key, value in weka["weighted"].items():
        check(f"weighted.{key}", ours["weighted"][key], value, 3)
    for i, row in enumerate(weka["confusion"]):
        for j, value in enumerate(row):
            check(f"confusion[{i}][{j}]", ours["confusion"][i][j], value, 0)
    return count, diffs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default=",".join(FILES))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-figures", action="store_true")
    parser.add_argument("--no-trees", action="store_true")
    args = parser.parse_args()
    lines, trees, trees_equal, figures, figures_equal = [], 0, 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in args.files.split(","):
            for step, train, test, at, target in build_cases(name, folder):
                if not args.no_trees:
                    for options in TREE_OPTIONS:
                        trees += 1
                        diff = compare_tree(train, at, target, options, folder)
                        if diff is None:
                            trees_equal += 1
                        else:
                            lines.append(f"- tree {name}/{step} J48 {' '.join(options)}: {diff}")
                if not args.no_figures:
                    for learner in LEARNERS:
                        count, diffs = compare_figures(learner, train, test, at, target)
                        figures += count
                        figures_equal += count - len(diffs)
                        label = " ".join([learner[0].rsplit(".", 1)[1], *learner[1][:3]])
                        lines += [f"- figure {name}/{step} {label}: {d}" for d in diffs]
                print(f"{name}/{step}: trees {trees_equal}/{trees}, "
                      f"figures {figures_equal}/{figures}", file=sys.stderr, flush=True)
    head = [f"Printed trees equal to J48's: {trees_equal}/{trees}",
            f"Evaluation figures equal to Weka's: {figures_equal}/{figures}", ""]
    report = "\n".join(head + lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
