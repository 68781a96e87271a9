"""``c45`` is Weka's J48 everywhere: the registry entry, its ``j48`` alias, ``show``.

(1) the registry entry builds the C4.5 tree on nominal codes and NaN, with J48's options
as parameters, and ``cart-entropy`` names the scikit-learn tree honestly; (2) ``j48`` is
another name of the same entry: the same model, listed once, reported under the entry's
own name (model files, result tables), and naming both in ``compare`` is refused;
(3) ``show`` prints a c45 model as Weka's ``J48 -t FILE`` prints its tree (compared with
Weka itself where Java is present),
and still prints a scikit-learn tree for a ``cart-entropy`` model.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ensemblekit import api, registry
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.classifiers.cart import CartEntropyTree

from ektesting.support import data_path, load_coded, run_cli
from ektesting.weka_tools import needs_weka, run_weka

VOTE = data_path("vote.arff")


# --------------------------------------------------------------------------
# (1) the registry entries
# --------------------------------------------------------------------------
def test_c45_entry_is_the_c45_tree_on_codes_and_nan():
    spec = registry.get("c45")
    assert spec.estimator_class() is C45Tree
    assert (spec.encode, spec.impute_numeric, spec.model_summary) == ("codes", False, "tree")
    assert "J48" in spec.description and "gain ratio" in spec.description
    assert set(spec.param_names) >= {"confidence_factor", "min_samples_leaf", "unpruned",
                                     "subtree_raising", "collapse_tree", "binary_splits",
                                     "mdl_correction", "split_point_actual_value"}
    defaults = spec.defaults()
    assert (defaults["confidence_factor"], defaults["min_samples_leaf"], defaults["unpruned"]) \
        == (0.25, 2, False)  # J48 -C 0.25 -M 2
    assert (defaults["binary_splits"], defaults["mdl_correction"],
            defaults["split_point_actual_value"]) == (False, True, True)  # no -B, -J, -doNot...
    ds, X, y, nominal, n_cat = load_coded("labor")
    model = registry.make_estimator("c45", ds.schema, None, 0)
    assert model["prep"] == "passthrough"
    tree = model["model"]
    assert (tree.nominal_features, tree.n_categories) == (nominal, n_cat)
    # the pipeline is the tree fitted on the rows as they are (codes, NaN)
    model.fit(X, y)
    direct = C45Tree(nominal_features=nominal, n_categories=n_cat, n_classes=2).fit(X, y)
    np.testing.assert_array_equal(model.predict_proba(X), direct.predict_proba(X))


def test_cart_entropy_is_named_honestly():
    spec = registry.get("cart-entropy")
    assert spec.estimator_class() is CartEntropyTree
    assert "not C4.5" in spec.description and "scikit-learn" in spec.description


def test_the_listing_describes_c45_as_j48_and_cart_as_scikit_learn():
    out = run_cli("algorithms").stdout
    rows = {m.group(1): m.start() for m in re.finditer(r"^│ (\S+) +│", out, re.MULTILINE)}
    assert "c45" in rows and "cart-entropy" in rows and "j48" not in rows
    c45_row = out[rows["c45"]: min(v for v in rows.values() if v > rows["c45"])]
    assert "alias: j48" in c45_row and "J48" in c45_row
    entries = {e["name"]: e for e in json.loads(run_cli("algorithms", "--format", "json").stdout)}
    assert entries["c45"]["aliases"] == ["j48"] and entries["cart-entropy"]["aliases"] == []
    assert "j48" not in entries


# --------------------------------------------------------------------------
# (2) the alias
# --------------------------------------------------------------------------
def test_j48_is_the_c45_entry():
    assert registry.get("j48") is registry.get("c45")
    assert registry.canonical_name("j48") == "c45" and registry.canonical_name("c45") == "c45"
    # names ignore case (issue 32): J48 is j48
    assert registry.is_registered("j48") and registry.canonical_name("J48") == "c45"
    assert not registry.is_registered("j-48x")
    assert registry.canonical_name("nonsense") == "nonsense"
    assert registry.get("J48") is registry.get("c45")
    with pytest.raises(registry.UnknownAlgorithmError, match=r"known: .*\bj48\b"):
        registry.get("j-48x")


def test_no_alias_shadows_an_entry_or_another_alias():
    aliases = [a for spec in registry.ALGORITHMS.values() for a in spec.aliases]
    assert len(aliases) == len(set(aliases))
    assert not set(aliases) & set(registry.ALGORITHMS)


def test_a_model_fitted_as_j48_is_a_c45_model(tmp_path):
    as_j48 = api.fit("j48", VOTE, seed=1)
    as_c45 = api.fit("c45", VOTE, seed=1)
    assert as_j48.metadata == as_c45.metadata and as_j48.metadata["algorithm"] == "c45"
    ds, X, _, _, _ = load_coded("vote")
    np.testing.assert_array_equal(as_j48.estimator.predict_proba(X),
                                  as_c45.estimator.predict_proba(X))
    path = tmp_path / "j48.ekm"
    fitted = run_cli("fit", "j48", VOTE, "-o", path)
    assert fitted.exit_code == 0 and "fitted c45 on vote" in fitted.stderr
    assert run_cli("show", path).stdout.count("J48 pruned tree") == 1
    assert run_cli("predict", path, VOTE).exit_code == 0
    # evaluate takes the alias as an algorithm, not as a file name
    result = run_cli("evaluate", "j48", VOTE, "--cv", "2", "--repeats", "1", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert '"c45"' in result.stdout and "j48" not in result.stdout
    split = api.evaluate_split("j48", VOTE, split_percentage=66)
    assert split.algorithm == "c45"


def test_compare_reports_the_entry_and_refuses_both_names():
    result = run_cli("compare", "j48", "cart-entropy", "--data", data_path("iris.arff"), "--cv",
                     "2", "--repeats", "1", "--baseline", "j48", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert '"c45"' in result.stdout and "j48" not in result.stdout
    assert '"baseline": "c45"' in result.stdout
    refused = run_cli("compare", "c45", "j48", "--data", data_path("iris.arff"), "--cv", "2",
                      "--repeats", "1")
    assert refused.exit_code == 2
    assert "named twice (c45 and j48 are the same algorithm)" in refused.stderr
    with pytest.raises(api.UsageError, match="an algorithm is named twice$"):
        api.compare(["c45", "c45"], [data_path("iris.arff")], cv=2, repeats=1)


# --------------------------------------------------------------------------
# (3) show
# --------------------------------------------------------------------------
def _shown_tree(text: str) -> str:
    """The J48 block of ``show``'s output (heading to tree size)."""
    start = text.index("J48 ")
    end = text.index("Size of the tree", start)
    return text[start: text.index("\n", end) if "\n" in text[end:] else len(text)].rstrip()


def _weka_tree(text: str) -> str:
    """The J48 block of Weka's ``J48 -t FILE -no-cv`` output, tabs as ``show`` writes them."""
    start = text.index("J48 ")
    end = text.index("Size of the tree", start)
    block = text[start: text.index("\n", end)]
    return block.replace(" : \t", " : ").rstrip()


def test_show_prints_the_tree_as_j48_with_the_files_names(tmp_path):
    path = tmp_path / "vote.ekm"
    assert run_cli("fit", "c45", VOTE, "-o", path).exit_code == 0
    shown = run_cli("show", path).stdout
    tree = _shown_tree(shown)
    assert tree.startswith("J48 pruned tree\n------------------\n")
    model = api.load_model(path)
    est = model.estimator
    assert f"Number of Leaves  : {est.n_leaves_}" in tree
    # the attribute, value and class names of the file, not column numbers or codes
    assert "physician-fee-freeze = n" in tree and "democrat (" in tree


def test_show_still_prints_a_cart_entropy_tree(tmp_path):
    path = tmp_path / "cart.ekm"
    assert run_cli("fit", "cart-entropy", VOTE, "-o", path).exit_code == 0
    shown = run_cli("show", path).stdout
    assert "decision tree: " in shown and "|--- physician-fee-freeze=" in shown
    assert "J48" not in shown


@needs_weka
@pytest.mark.parametrize("name", ["vote.arff", "labor.arff", "iris.arff"])
@pytest.mark.parametrize("unpruned", [False, True])
def test_show_prints_the_tree_weka_prints(tmp_path, name, unpruned):
    path = tmp_path / "model.ekm"
    fit = ["fit", "c45", data_path(name), "-o", path] + (["--set", "unpruned=true"] if unpruned
                                                         else [])
    assert run_cli(*fit).exit_code == 0
    ours = _shown_tree(run_cli("show", path).stdout)
    weka = _weka_tree(run_weka("weka.classifiers.trees.J48", "-t", str(data_path(name)),
                               "-no-cv", *(["-U"] if unpruned else [])))
    assert ours == weka


def test_show_never_folds_a_long_tree_line(tmp_path):
    # a line of the tree longer than the 200 columns of non-terminal output stays whole
    name = "a" * 230
    rows = [f"{v / 40:.3f},{'x' if v < 20 else 'y'}" for v in range(40)]
    data = tmp_path / "long.arff"
    data.write_text("\n".join(["@relation long", f"@attribute {name} numeric",
                               "@attribute class {x,y}", "@data", *rows]) + "\n")
    model = tmp_path / "long.ekm"
    assert run_cli("fit", "c45", data, "-o", model).exit_code == 0
    shown = _shown_tree(run_cli("show", model).stdout).splitlines()
    assert f"{name} <= 0.475: x (20.0)" in shown and f"{name} > 0.475: y (20.0)" in shown


def _two_class_file(tmp_path, values) -> object:
    """An ARFF file: one numeric attribute ``x`` with ``values``, class a for the first half."""
    half = len(values) // 2
    rows = [f"{v!r},{'a' if i < half else 'b'}" for i, v in enumerate(values)]
    data = tmp_path / "huge.arff"
    data.write_text("\n".join(["@relation huge", "@attribute x numeric",
                               "@attribute class {a,b}", "@data", *rows]) + "\n")
    return data


@pytest.mark.parametrize("values, threshold", [
    ([(i + 1) * 1.5e24 for i in range(40)], "3" + "0" * 25),
    ([(i - 20) * 8.5e306 for i in range(40)], "-85" + "0" * 305),  # up to -1.7e308
    # 1.38e308 + 1.4e308 overflows: Weka's J48 splits at infinity there and recurses until
    # its stack overflows (ours grew the tree until memory ran out); the cut stays finite
    ([float(f"{100 + 2 * i}e306") for i in range(40)], "138" + "0" * 306),
])
def test_thresholds_of_any_finite_size_fit_show_predict_and_evaluate(tmp_path, values, threshold):
    # issue 29: a genuine model with thresholds near 1e25 failed 'show' with exit 1; the
    # tree prints as Weka 3.9.7's J48 prints it for the same file (Java 17 and 25)
    data = _two_class_file(tmp_path, values)
    model = tmp_path / "huge.ekm"
    assert run_cli("fit", "c45", data, "-o", model).exit_code == 0
    shown = run_cli("show", model)
    assert shown.exit_code == 0, shown.output
    assert _shown_tree(shown.stdout).splitlines()[3:5] == [
        f"x <= {threshold}: a (20.0)", f"x > {threshold}: b (20.0)"]
    predicted = run_cli("predict", model, data)
    assert predicted.exit_code == 0
    assert predicted.stdout.splitlines() == ["row,prediction"] + [
        f"{i + 1},{'a' if i < 20 else 'b'}" for i in range(40)]
    scored = run_cli("evaluate", model, data, "--format", "json")
    assert scored.exit_code == 0 and json.loads(scored.stdout)["scores"]["accuracy"] == 1.0
    crossed = run_cli("evaluate", "c45", data, "--cv", "2", "--repeats", "1", "--format", "json")
    assert crossed.exit_code == 0, crossed.output


@needs_weka
def test_show_prints_thresholds_of_every_magnitude_as_weka(tmp_path):
    # magnitudes where Java's digits are not the shortest ones (2**54 .. 2**86), and doubles
    # near 1e308 (no two of which add up past the largest double, where Weka fails): the
    # whole tree as Weka prints it
    rng = np.random.default_rng(29)
    n = 300
    a = rng.uniform(0, 3.7e22, n)
    b = rng.uniform(-2.5e17, 2.5e17, n)
    c = rng.integers(1, 99999, n) * 10.0 ** rng.integers(15, 27, n)
    d = rng.uniform(-1, 1, n) * 8.9e307
    cls = np.where(a < 1.2e22, "p", np.where(b > 0, "q", np.where(d > 0, "r", "s")))
    flip = rng.random(n) < 0.15
    cls[flip] = rng.choice(["p", "q", "r", "s"], int(flip.sum()))
    rows = [",".join(repr(float(v)) for v in row) + f",{k}" for *row, k in zip(a, b, c, d, cls)]
    data = tmp_path / "magnitudes.arff"
    data.write_text("\n".join(["@relation magnitudes", *(f"@attribute {v} numeric" for v in "abcd"),
                               "@attribute class {p,q,r,s}", "@data", *rows]) + "\n")
    path = tmp_path / "model.ekm"
    assert run_cli("fit", "c45", data, "-o", path, "--set", "unpruned=true").exit_code == 0
    ours = _shown_tree(run_cli("show", path).stdout)
    weka = _weka_tree(run_weka("weka.classifiers.trees.J48", "-t", str(data), "-no-cv", "-U"))
    assert ours == weka
    assert ours.count("<=") >= 5
