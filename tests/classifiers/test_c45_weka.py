"""C45Tree against Weka 3.9.7's J48 itself: 21 UCI files pruned and ``-U``, and each J48 option
(``-B``, ``-J`` and ``-doNotMakeSplitPointActualValue`` at the end, alone and with ``-U``
and ``-M 5``).

For each file and setting Weka runs twice: ``J48 -t FILE -no-cv`` prints the tree, and the
same with ``-classifications CSV -distribution -decimals 12`` prints its class distribution
for every training row. Our tree, fitted on the same rows, must print the same text
(structure, split values and nominal values as Weka prints them, leaf counts), have the
same number of leaves and size, and give the same distributions within 1e-6.

The files cover nominal and numeric attributes, missing values (fractional instances in
growth, pruning and prediction: colic, hepatitis, credit-a, soybean, labor, vote, ...), empty
branches printed ``(0.0)`` (audiology, soybean, primary-tumor), subtree raising (labor) and
many classes (audiology, soybean, primary-tumor). Reduced-error pruning (``-R -N -Q``) is
compared on five files through ``j48_reduced_error``, as Weka 3.9.7's J48 itself fails with
``-R``.
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
from ektesting.weka_tools import j48_reduced_error, needs_weka, run_weka, split_alternate, weka_distributions

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


def _our_tree(name, **params):
    """Our tree on the file ``name`` with ``params``, its text as J48 prints it, its rows
    and which of them have a class."""
    ds, X, y, nominal, n_cat = load_coded(name)
    feats = ds.schema.features
    classes = list(ds.schema.class_attribute.values)
    tree = C45Tree(nominal_features=nominal, n_categories=n_cat, n_classes=len(classes),
                   **params).fit(X, y)
    text = tree.export_text([a.name for a in feats], classes,
                            {j: list(feats[j].values) for j in nominal})
    return tree, text, X, ds.y >= 0


def _agrees_with_j48(name, options, params):
    """Our tree on ``name`` with ``params`` prints J48's text with ``options``, has its leaf
    count and size, and gives its training distributions; returns the tree's text."""
    text, leaves, size, dist = weka_j48(data_path(f"{name}.arff"), options)
    tree, got, X, keep = _our_tree(name, **params)
    assert got == text, (name, options)
    assert (tree.n_leaves_, tree.tree_size_) == (leaves, size)
    np.testing.assert_allclose(tree.predict_proba(X), dist[keep], rtol=0, atol=1e-6)
    return got


def _differs_from_default(name, text):
    """Whether the default tree (J48's, as the tests above check) prints otherwise: the
    option changed the tree, so the agreement could not hold without it."""
    return text != _our_tree(name)[1]


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
    for options, params in OPTIONS:
        _agrees_with_j48(name, options, params)


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

# ---- the growth options of issue 33: -B, -J, -doNotMakeSplitPointActualValue
# each file has missing values; each option changes the printed tree on each
@needs_weka
@pytest.mark.parametrize("name", ["colic", "hepatitis", "credit-a", "anneal"])
def test_binary_splits_print_j48_b_s_tree(name):
    text = _agrees_with_j48(name, ["-B"], {"binary_splits": True})
    assert " != " in text and _differs_from_default(name, text)


@needs_weka
@pytest.mark.parametrize("name", ["colic", "heart-c", "hepatitis", "labor"])
def test_no_mdl_correction_prints_j48_j_s_tree(name):
    text = _agrees_with_j48(name, ["-J"], {"mdl_correction": False})
    assert _differs_from_default(name, text)


@needs_weka
@pytest.mark.parametrize("name", ["heart-c", "hepatitis", "credit-a", "anneal"])
def test_midpoint_split_points_print_j48_s_tree(name):
    text = _agrees_with_j48(name, ["-doNotMakeSplitPointActualValue"],
                            {"split_point_actual_value": False})
    assert _differs_from_default(name, text)


@needs_weka
@pytest.mark.parametrize("options, params, name", [
    (["-B", "-U"], {"binary_splits": True, "unpruned": True}, "credit-a"),
    (["-B", "-M", "5"], {"binary_splits": True, "min_samples_leaf": 5}, "soybean"),
    (["-J", "-U"], {"mdl_correction": False, "unpruned": True}, "hepatitis"),
    (["-J", "-M", "5"], {"mdl_correction": False, "min_samples_leaf": 5}, "heart-c"),
    (["-doNotMakeSplitPointActualValue", "-U"],
     {"split_point_actual_value": False, "unpruned": True}, "anneal"),
    (["-doNotMakeSplitPointActualValue", "-M", "5"],
     {"split_point_actual_value": False, "min_samples_leaf": 5}, "credit-a"),
    (["-B", "-J", "-doNotMakeSplitPointActualValue"],
     {"binary_splits": True, "mdl_correction": False, "split_point_actual_value": False},
     "colic"),
])
def test_growth_options_combine_with_u_and_m_as_in_j48(options, params, name):
    _agrees_with_j48(name, options, params)


@needs_weka
@pytest.mark.parametrize("options, params, name", [
    (["-B"], {"binary_splits": True}, "heart-c"), (["-J"], {"mdl_correction": False}, "credit-a"),
    # where a held-out value falls between a training value and the midpoint above it
    (["-doNotMakeSplitPointActualValue"], {"split_point_actual_value": False}, "hepatitis"),
    (["-doNotMakeSplitPointActualValue"], {"split_point_actual_value": False}, "glass"),
])
def test_growth_options_give_j48_s_test_distributions(name, options, params, tmp_path):
    """``-p 0 -distribution`` on held-out rows, 10 % of their values (and of the training
    rows') missing: the options change the distributions, and J48's change alike (within
    the 1e-14 that fractional training weights leave, see above)."""
    train, test = split_alternate(data_path(f"{name}.arff"), tmp_path, missing=0.1, seed=7)
    want = np.array(weka_distributions("weka.classifiers.trees.J48", train, test, options))
    got = _predict_split(train, test, **params)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    assert not np.array_equal(got, _predict_split(train, test))  # the option mattered


REP_SETTINGS = [(3, 1), (5, 7)]  # J48 -R -N 3 -Q 1 (the defaults) and -R -N 5 -Q 7


@needs_weka
@pytest.mark.parametrize("name", ["labor", "colic", "heart-c", "hepatitis", "diabetes"])
def test_reduced_error_pruning_prints_j48_s_tree(name, tmp_path):
    """``reduced_error_pruning`` (J48 ``-R -N -Q``): the same shuffle, folds, growing set,
    split points (moved to values of all the rows) and pruning as J48, so the same printed
    tree, leaf count and size; and the same distributions for test rows with 15 % missing
    values (within 1e-14: node weights from fractional instances are summed in another
    order). Weka 3.9.7's own J48 -R fails; ``j48_reduced_error`` runs its classes as 3.8
    did (see weka_tools)."""
    ds, X, y, nominal, n_cat = load_coded(name)
    _, test = split_alternate(data_path(f"{name}.arff"), tmp_path, missing=0.15, seed=5)
    feats = ds.schema.features
    classes = list(ds.schema.class_attribute.values)
    rows = load_dataset(test).X
    weka = j48_reduced_error(data_path(f"{name}.arff"), test, REP_SETTINGS)
    for (folds, seed), (text, leaves, size, dist) in zip(REP_SETTINGS, weka):
        tree = C45Tree(reduced_error_pruning=True, num_folds=folds, seed=seed,
                       nominal_features=nominal, n_categories=n_cat,
                       n_classes=len(classes)).fit(X, y)
        got = tree.export_text([a.name for a in feats], classes,
                               {j: list(feats[j].values) for j in nominal})
        assert got == text, (name, folds, seed)
        assert (tree.n_leaves_, tree.tree_size_) == (leaves, size)
        np.testing.assert_allclose(tree.predict_proba(rows), np.array(dist), rtol=0, atol=1e-14)


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
