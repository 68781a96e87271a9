"""``bagging`` (TB) grows unpruned ``c45`` trees (Weka's ``J48 -U``) by default.

(1) every member is the unpruned C4.5 tree grown on its bag written out row by row (a
bootstrap count is an instance weight), on nominal codes and missing values as they
are; (2) soft and hard voting combine those members; (3) the registry entry hands the
coded columns to the ensemble, ``tree`` chooses the tree, and ``max_depth`` is refused
with ``c45``; (4) scikit-learn's estimator checks with the default tree.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit import registry
from ensemblekit.classifiers.bagging import BaggedTreeClassifier
from ensemblekit.classifiers.c45 import C45Tree

from ektesting.support import data_path, load_coded, run_cli
from ektesting.weka_tools import needs_weka, run_weka


@parametrize_with_checks([BaggedTreeClassifier(n_estimators=3, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def labor():
    # numeric and nominal attributes, missing values in most rows
    return load_coded("labor")


def _written_out(counts):
    return np.repeat(np.arange(counts.size), counts.astype(int))


@pytest.mark.parametrize("min_samples_leaf", [1, 2, 4])
def test_each_member_is_unpruned_c45_on_its_bag_written_out(labor, min_samples_leaf):
    _, X, y, nominal, n_cat = labor
    clf = BaggedTreeClassifier(n_estimators=6, min_samples_leaf=min_samples_leaf,
                               nominal_features=nominal, n_categories=n_cat,
                               random_state=3).fit(X, y)
    assert clf.tree == "c45" and len(clf.estimators_) == 6
    for tree, counts in zip(clf.estimators_, clf.bag_counts_):
        assert isinstance(tree, C45Tree) and tree.unpruned
        rows = _written_out(counts)
        ref = C45Tree(unpruned=True, min_samples_leaf=min_samples_leaf, nominal_features=nominal,
                      n_categories=n_cat, n_classes=2).fit(X[rows], y[rows])
        assert tree.export_text() == ref.export_text()
        np.testing.assert_allclose(tree.predict_proba(X), ref.predict_proba(X), rtol=0,
                                   atol=1e-12)


@pytest.mark.parametrize("voting", ["soft", "hard"])
def test_proba_combines_the_c45_members(labor, voting):
    _, X, y, nominal, n_cat = labor
    clf = BaggedTreeClassifier(n_estimators=7, voting=voting, nominal_features=nominal,
                               n_categories=n_cat, random_state=2).fit(X, y)
    member = np.stack([t.predict_proba(X) for t in clf.estimators_])
    if voting == "soft":  # Weka's Bagging: the sum of the trees' rows, normalised
        expected = member.sum(axis=0) / member.sum(axis=0).sum(axis=1, keepdims=True)
    else:
        expected = np.stack([np.eye(2)[m.argmax(axis=1)] for m in member]).mean(axis=0)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[expected.argmax(axis=1)])


def test_the_bags_do_not_depend_on_the_tree(labor):
    _, X, y, nominal, n_cat = labor
    common = {"n_estimators": 4, "nominal_features": nominal, "n_categories": n_cat,
              "random_state": 9}
    c45 = BaggedTreeClassifier(**common).fit(X, y)
    cart = BaggedTreeClassifier(tree="cart-entropy", **common).fit(X, y)
    np.testing.assert_array_equal(c45.bag_counts_, cart.bag_counts_)


def test_a_declared_class_without_rows_gets_probability_zero(labor):
    _, X, y, nominal, n_cat = labor
    clf = BaggedTreeClassifier(n_estimators=3, nominal_features=nominal, n_categories=n_cat,
                               random_state=0, n_classes=3).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(y), 3)
    np.testing.assert_array_equal(proba[:, 2], 0.0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_registry_entry_gives_the_coded_columns_and_the_tree_choice(labor):
    ds, X, y, nominal, n_cat = labor
    spec = registry.get("bagging")
    assert (spec.encode, spec.impute_numeric) == ("codes", False)
    assert "tree" in spec.param_names and spec.defaults()["tree"] == "c45"
    model = registry.make_estimator("bagging", ds.schema, {"n_estimators": 3}, 4).fit(X, y)
    est = model["model"]
    assert (est.nominal_features, est.n_categories, est.random_state) == (nominal, n_cat, 4)
    direct = BaggedTreeClassifier(n_estimators=3, nominal_features=nominal, n_categories=n_cat,
                                  random_state=4, n_classes=2).fit(X, y)
    np.testing.assert_array_equal(model.predict_proba(X), direct.predict_proba(X))
    assert "max_depth" in spec.param_names
    assert "cart-entropy only" in next(p.help for p in spec.params if p.name == "max_depth")


def test_max_depth_with_c45_is_a_usage_error(tmp_path):
    result = run_cli("fit", "bagging", data_path("iris.arff"), "-o", tmp_path / "m.ekm", "--set",
                     "max_depth=3")
    assert result.exit_code == 2
    assert "max_depth=3 applies to tree='cart-entropy'" in result.stderr
    assert not (tmp_path / "m.ekm").exists()
    with pytest.raises(ValueError, match="the c45 tree .J48. has no depth limit"):
        BaggedTreeClassifier(max_depth=2).fit([[0.0], [1.0]], [0, 1])
    BaggedTreeClassifier(max_depth=2, tree="cart-entropy").fit([[0.0], [1.0]], [0, 1])


@needs_weka
@pytest.mark.parametrize("name", ["vote.arff", "labor.arff"])
def test_a_member_is_wekas_j48_u_on_its_bag_written_out(tmp_path, name):
    # Weka's Bagging resamples instances: a bag is the file's rows with their repeats; J48 -U
    # on that file prints the tree the member is
    ds, X, y, nominal, n_cat = load_coded(name)
    lines = data_path(name).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    rows = [line for line in lines[start:] if line.strip() and not line.startswith("%")]
    assert len(rows) == len(y)  # every row has its class: ensemblekit's rows in file order
    clf = BaggedTreeClassifier(n_estimators=2, nominal_features=nominal, n_categories=n_cat,
                               random_state=7).fit(X, y)
    for b, tree in enumerate(clf.estimators_):
        bag = tmp_path / f"bag{b}.arff"
        picked = [rows[i] for i in _written_out(clf.bag_counts_[b])]
        bag.write_text("\n".join(lines[:start] + picked) + "\n")
        printed = run_weka("weka.classifiers.trees.J48", "-U", "-t", str(bag), "-no-cv")
        block = printed[printed.index("------------------\n") + len("------------------\n"):
                        printed.index("\n\nNumber of Leaves")]
        names = [a.name for a in ds.schema.features]
        cats = [list(a.values) if a.kind != "numeric" else None for a in ds.schema.features]
        ours = tree.export_text(names, list(ds.schema.class_attribute.values), cats)
        _same_tree_text(ours, block.lstrip("\n"))


def _same_tree_text(ours: str, weka: str) -> None:
    """Equal tree texts, leaf counts within 0.01.

    A row drawn 3 times is one row of weight 3 here and three rows in the written-out
    bag: with a missing value, its fractional weights are summed in another order, which
    can move a count printed with 2 decimals by 0.01 (e.g. 2.375 rounds either way).
    """
    pattern = re.compile(r"\(([-0-9.E]+)(?:/([-0-9.E]+))?\)")
    assert pattern.sub("()", ours) == pattern.sub("()", weka)
    for a, b in zip(pattern.findall(ours), pattern.findall(weka)):
        assert [float(v or 0) for v in a] == pytest.approx([float(v or 0) for v in b], abs=0.0101)
