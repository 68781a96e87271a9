"""``evaluate k2`` side by side with Weka 3.9.7's BayesNet on the same train/test splits.

ensemblekit's ``k2`` learns Weka's network and probabilities (global K2, LOO-CV score,
SimpleEstimator -A 0.5; see tests/bayesnet), so both programs predict the same class
distributions for every test instance. These tests check that ``evaluate`` then prints
Weka's figures, to the decimals Weka prints: the summary (correct %, kappa, MAE, RMSE,
RAE, RRSE), every per-class row and the weighted averages, and the confusion matrix.
Weka's report is read by ``weka_report.parse_weka_report``; ours is the ``--format json``
document of the same command line.

Splits are the odd and even rows of each file. primary-tumor's class ``anus`` has no
instance at all: ensemblekit's classifiers keep a declared class they never saw, as Weka
does, and K2 gives it Weka's smoothed mass (issue 19).
"""

from __future__ import annotations

import json
import math

import pytest

from ektesting.support import data_path, run_cli
from ektesting.weka_report import assert_same_report, parse_weka_report, same_to_printed
from ektesting.weka_tools import k2_options, needs_weka, run_weka

#: Files split into halves: two-class and many-class, nominal and numeric attributes,
#: missing values (vote, breast-cancer, credit-a, soybean, labor).
SPLIT_FILES = ("vote", "breast-cancer", "credit-a", "diabetes", "soybean", "labor", "tic-tac-toe",
               "primary-tumor")

def halves(name: str, folder):
    """``(train, test)`` paths: the odd and the even data rows of a shipped ARFF file."""
    lines = data_path(f"{name}.arff").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    header = [line for line in lines[:at + 1] if not line.startswith("%")]
    rows = [line for line in lines[at + 1:] if line.strip() and not line.startswith("%")]
    paths = []
    for part, chosen in (("train", rows[0::2]), ("test", rows[1::2])):
        path = folder / f"{name}-{part}.arff"
        path.write_text("\n".join(header + chosen) + "\n")
        paths.append(path)
    return paths


@needs_weka
@pytest.mark.slow
@pytest.mark.parametrize("name", SPLIT_FILES)
def test_test_file_report_equals_weka(name, tmp_path):
    train, test = halves(name, tmp_path)
    weka = parse_weka_report(run_weka("weka.classifiers.bayes.BayesNet", "-t", str(train),
                                      "-T", str(test), *k2_options(2, "loo-probability")),
                             "Error on test data")
    result = run_cli("evaluate", "k2", train, "--test", test, "--set", "max_parents=2",
                     "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["protocol"] == f"trained on {name}-train, tested on {name}-test"
    assert_same_report(document["report"], weka, name)


@needs_weka
@pytest.mark.slow
@pytest.mark.parametrize("name", ("vote", "diabetes"))
def test_preserve_order_split_equals_weka(name):
    path = data_path(f"{name}.arff")
    weka = parse_weka_report(run_weka("weka.classifiers.bayes.BayesNet", "-t", str(path),
                                      "-split-percentage", "66", "-preserve-order",
                                      *k2_options(2, "loo-probability")),
                             "Error on test split")
    result = run_cli("evaluate", "k2", path, "--split-percentage", "66", "--preserve-order",
                     "--set", "max_parents=2", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    n = int(weka["summary"]["n"])
    assert document["instances"] == n and document["train_instances"] + n == (
        768 if name == "diabetes" else 435)
    assert_same_report(document["report"], weka, f"{name} 66% split")


def test_same_to_printed_rounds_as_weka_prints():
    # Weka prints 15.232 for 15.23204 (4 decimals, trailing zero dropped)
    assert same_to_printed(15.23204, 15.232, 4)
    assert not same_to_printed(15.2326, 15.232, 4)
    assert same_to_printed(None, math.nan, 3) and not same_to_printed(0.5, math.nan, 3)
