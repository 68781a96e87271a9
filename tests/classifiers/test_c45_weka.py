"""C45Tree against Weka 3.9.7's J48 itself: 21 UCI files pruned and ``-U``, and each J48 option.

For each file and setting Weka runs twice: ``J48 -t FILE -no-cv`` prints the tree, and the
same with ``-classifications CSV -distribution -decimals 12`` prints its class distribution
for every training row. Our tree, fitted on the same rows, must print the same text
(structure, split values and nominal values as Weka prints them, leaf counts), have the
same number of leaves and size, and give the same distributions within 1e-6.

The files cover nominal and numeric attributes, missing values (fractional instances in
growth, pruning and prediction: colic, hepatitis, credit-a, soybean, labor, vote, ...), empty
branches printed ``(0.0)`` (audiology, soybean, primary-tumor), subtree raising (labor) and
many classes (audiology, soybean, primary-tumor).
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.data import load_dataset

from ektesting.support import data_path, load_coded, run_cli, weighted_copy
from ektesting.weka_report import assert_same_report, parse_weka_report
from ektesting.weka_tools import needs_weka, run_weka, split_alternate, weka_distributions

FILES = ["vote", "breast-cancer", "credit-a", "colic", "hepatitis", "soybean", "audiology",
         "labor", "mushroom", "iris", "glass", "diabetes", "segment", "anneal", "heart-c",
         "primary-tumor", "zoo", "lymph", "kr-vs-kp", "tic-tac-toe", "heart-h"]

CSV_OUT = "weka.classifiers.evaluation.output.prediction.CSV -distribution -decimals 12"


def weka_j48(path, options):
    """Weka's tree text, leaf count, size, and training-file distributions."""
    base = ["-t", str(path), "-no-cv", *options]
    # the two runs of Java at once (the machine has 2 cores; each run is mostly start-up)
    with ThreadPoolExecutor(max_workers=2) as pool:
        tree_run = pool.submit(run_weka, "weka.classifiers.trees.J48", *base)
        preds_run = pool.submit(run_weka, "weka.classifiers.trees.J48", *base,
                                "-classifications", CSV_OUT)
        out, preds = tree_run.result(), preds_run.result()
    body = out.split("------------------\n", 1)[1]
    text = body.split("\n\nNumber of Leaves", 1)[0].strip("\n")
    leaves = int(re.search(r"Number of Leaves\s*:\s*(\d+)", out).group(1))
    size = int(re.search(r"Size of the tree\s*:\s*(\d+)", out).group(1))
    rows = []
    for line in preds.splitlines():
        parts = line.split(",")
        if len(parts) > 4 and parts[0].isdigit():
            rows.append([float(p.lstrip("*")) for p in parts[4:]])
    return text, leaves, size, np.array(rows)


@needs_weka
@pytest.mark.slow  # 84 runs of Java
@pytest.mark.parametrize("name", FILES)
def test_tree_text_and_distributions_equal_j48(name):
    ds, X, y, nominal, n_cat = load_coded(name)
    keep = ds.y >= 0
    feats = ds.schema.features
    names = [a.name for a in feats]
    classes = list(ds.schema.class_attribute.values)
    categories = {j: list(feats[j].values) for j in nominal}
    for unpruned in (False, True):
        text, leaves, size, dist = weka_j48(data_path(f"{name}.arff"),
                                            ["-U"] if unpruned else [])
        tree = C45Tree(unpruned=unpruned, nominal_features=nominal, n_categories=n_cat,
                       n_classes=len(classes)).fit(X, y)
        assert tree.export_text(names, classes, categories) == text, (name, unpruned)
        assert (tree.n_leaves_, tree.tree_size_) == (leaves, size)
        assert dist.shape == (keep.size, len(classes))
        np.testing.assert_allclose(tree.predict_proba(X), dist[keep], rtol=0, atol=1e-6)


OPTIONS = [
    (["-U", "-O"], {"unpruned": True, "collapse_tree": False}),
    (["-S"], {"subtree_raising": False}),
    (["-O"], {"collapse_tree": False}),
    (["-C", "0.1", "-M", "5"], {"confidence_factor": 0.1, "min_samples_leaf": 5}),
    (["-C", "0.5", "-M", "1"], {"confidence_factor": 0.5, "min_samples_leaf": 1}),
]


@needs_weka
@pytest.mark.slow  # 20 runs of Java
@pytest.mark.parametrize("name", ["colic", "labor"])  # missing values, subtree raising
def test_each_j48_option_means_the_same(name):
    ds, X, y, nominal, n_cat = load_coded(name)
    keep = ds.y >= 0
    feats = ds.schema.features
    classes = list(ds.schema.class_attribute.values)
    for options, params in OPTIONS:
        text, leaves, size, dist = weka_j48(data_path(f"{name}.arff"), options)
        tree = C45Tree(nominal_features=nominal, n_categories=n_cat, n_classes=len(classes),
                       **params).fit(X, y)
        got = tree.export_text([a.name for a in feats], classes,
                               {j: list(feats[j].values) for j in nominal})
        assert got == text, (name, options)
        assert (tree.n_leaves_, tree.tree_size_) == (leaves, size)
        np.testing.assert_allclose(tree.predict_proba(X), dist[keep], rtol=0, atol=1e-6)




@needs_weka
@pytest.mark.parametrize("name", ["iris", "vote", "credit-a", "labor", "breast-cancer"])
def test_fit_on_a_weighted_file_prints_j48_s_tree(name, tmp_path, monkeypatch, capsys):
    """`fit c45` on an ARFF file with instance weights grows Weka J48's tree on it: weights
    in every count, and one instance per row in the known values a numeric split needs
    (whole-number weights of 2, 3 and 4 change the tree where they counted as copies)."""
    from ektesting.support import run_main

    path = weighted_copy(name, tmp_path)
    out = run_weka("weka.classifiers.trees.J48", "-t", str(path), "-no-cv")
    weka = out.split("------------------\n", 1)[1].split("\n\nNumber of Leaves", 1)[0]
    model = tmp_path / "m.model"
    code, _, err = run_main(["fit", "c45", path, "-o", model], monkeypatch, capsys)
    assert code == 0, err
    code, shown, _ = run_main(["show", model], monkeypatch, capsys)
    ours = shown.split("------------------\n", 1)[1].split("\n\nNumber of Leaves", 1)[0]
    assert ours.strip("\n") == weka.strip("\n")


def _predict_split(train, test, **params):
    """Our class distributions of the rows of ``test``, the tree grown on ``train``."""
    tr = load_dataset(train)
    feats = tr.schema.features
    nominal = [i for i, a in enumerate(feats) if a.kind != "numeric"]
    tree = C45Tree(nominal_features=nominal, n_categories=[len(feats[i].values) for i in nominal],
                   n_classes=len(tr.schema.class_attribute.values), **params).fit(tr.X, tr.y)
    return tree.predict_proba(load_dataset(test).X)


@needs_weka
@pytest.mark.parametrize("name", ["car", "tic-tac-toe", "kr-vs-kp", "diabetes", "segment"])
@pytest.mark.parametrize("options, params", [([], {}), (["-U"], {"unpruned": True})])
def test_distributions_of_rows_with_missing_values_equal_j48_bit_for_bit(name, options, params,
                                                                         tmp_path):
    """A tree grown on complete rows (whole instance weights) gives test rows with 20 %
    missing values J48's distributions to the last bit: a split on a missing value adds
    the sums its branches return, as ``ClassifierTree.getProbs`` recurses (issue 33)."""
    train, test = split_alternate(data_path(f"{name}.arff"), tmp_path, missing=0.2, seed=3,
                                  train_missing=False)
    want = np.array(weka_distributions("weka.classifiers.trees.J48", train, test, options))
    got = _predict_split(train, test, **params)
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@needs_weka
@pytest.mark.parametrize("name, missing", [("colic", 0.05), ("credit-a", 0.1), ("diabetes", 0.2),
                                           ("car", 0.1), ("soybean", 0.05)])
@pytest.mark.parametrize("options, params", [([], {}), (["-U"], {"unpruned": True})])
def test_distributions_after_training_on_missing_values_equal_j48_bit_for_bit(
        name, missing, options, params, tmp_path):
    """Where training rows have missing values, J48's node totals are running sums of
    fractional instance weights in the order of its data (sorted at each node by every
    numeric attribute in turn) and of its Distribution bookkeeping; the tree keeps those
    doubles (``total_``, ``bag_total_``, ``value_``, ``bag_value_``), so the test rows'
    distributions equal J48's to the last bit (they differed by up to 8e-15; issue 33)."""
    train, test = split_alternate(data_path(f"{name}.arff"), tmp_path, missing=missing, seed=4)
    want = np.array(weka_distributions("weka.classifiers.trees.J48", train, test, options))
    got = _predict_split(train, test, **params)
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@needs_weka
@pytest.mark.parametrize("name, missing, train_missing, options, params", [
    ("car", 0.2, False, ["-A"], {}),
    ("vote", 0.1, True, ["-A"], {}),
    ("colic", 0.05, True, ["-A"], {}),
    ("diabetes", 0.1, True, ["-A"], {}),
    ("labor", 0.0, True, ["-A", "-U"], {"unpruned": True}),
])
def test_laplace_distributions_equal_j48_a_bit_for_bit(name, missing, train_missing, options,
                                                       params, tmp_path):
    """``laplace=True`` is J48 ``-A``: Laplace-corrected leaves on every path of the walk,
    to the last bit, on trees grown with and without missing values."""
    train, test = split_alternate(data_path(f"{name}.arff"), tmp_path, missing=missing, seed=4,
                                  train_missing=train_missing)
    want = np.array(weka_distributions("weka.classifiers.trees.J48", train, test, options))
    got = _predict_split(train, test, laplace=True, **params)
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@needs_weka
@pytest.mark.parametrize("name, missing, seed, options", [
    ("breast-cancer", 0.05, 3, []), ("breast-cancer", 0.2, 2, []), ("soybean", 0.2, 3, []),
    ("breast-cancer", 0.1, 3, ["-A"]),
])
def test_evaluate_on_missing_values_prints_j48_s_roc_and_prc_areas(name, missing, seed, options,
                                                                   tmp_path):
    """``evaluate c45 TRAIN --test TEST`` on files with injected missing values prints every
    figure of J48's report, ROC and PRC areas included: Weka groups tied scores by exact
    equality, so a last-bit difference moved these areas by up to 0.009 (issue 33)."""
    train, test = split_alternate(data_path(f"{name}.arff"), tmp_path, missing=missing,
                                  seed=seed)
    weka = parse_weka_report(run_weka("weka.classifiers.trees.J48", "-t", str(train), "-T",
                                      str(test), *options), "Error on test data")
    sets = ["--set", "laplace=true"] if "-A" in options else []
    result = run_cli("evaluate", "c45", train, "--test", test, *sets, "--format", "json")
    assert result.exit_code == 0, result.output
    assert_same_report(json.loads(result.stdout)["report"], weka, f"{name} {options}")
