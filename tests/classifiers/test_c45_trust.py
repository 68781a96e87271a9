"""A C45Tree survives a model file, and the model-file check refuses damaged node arrays.

The compiled prediction walk indexes the node arrays without bounds checks, so every way a
crafted file could send it outside them (a child pointer out of range or backwards, a
shared or cyclic node, a test with the wrong number of branches) must be refused before
the tree runs.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from ensemblekit import model_types, trust
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.persistence import load_model, save_model

from ektesting.support import load_coded


@pytest.fixture(scope="module")
def fitted():
    _, X, y, nominal, n_cat = load_coded("labor")  # numeric and nominal tests, missing values
    return C45Tree(nominal_features=nominal, n_categories=n_cat, n_classes=2,
                   unpruned=True).fit(X, y), X


def test_a_fitted_tree_passes_and_round_trips(fitted, tmp_path):
    tree, X = fitted
    model_types.check_model(tree)
    path = tmp_path / "tree.ekm"
    save_model(path, tree, {"algorithm": "c45"})
    loaded, _ = load_model(path)
    assert type(loaded) is C45Tree
    np.testing.assert_array_equal(loaded.predict_proba(X), tree.predict_proba(X))
    assert loaded.export_text() == tree.export_text()


def _damaged(tree, name, change):
    bad = copy.deepcopy(tree)
    arr = getattr(bad, name).copy()
    change(arr)
    setattr(bad, name, arr)
    return bad


def _first_split(tree):
    return int(np.flatnonzero(tree.feature_ >= 0)[0])


def _nominal_split(tree):
    nominal = set(tree.nominal_features_.tolist())
    return int(next(i for i in np.flatnonzero(tree.feature_ >= 0) if tree.feature_[i] in nominal))


def _numeric_split(tree):
    nominal = set(tree.nominal_features_.tolist())
    return int(next(i for i in np.flatnonzero(tree.feature_ >= 0)
                    if tree.feature_[i] not in nominal))


@pytest.mark.parametrize("name, change, message", [
    ("child_start_", lambda a: a.__setitem__(0, 0), "not after it"),  # the root its own child
    ("child_start_", lambda a: a.__setitem__(0, a.size - 1), "not after it|leaf"),
    ("child_start_", lambda a: a.__setitem__(0, 10**6), "outside"),
    ("feature_", lambda a: a.__setitem__(0, 99), "outside"),
    ("feature_", lambda a: a.__setitem__(0, -1), "leaf by one array"),
    ("n_children_", lambda a: a.__setitem__(0, a[0] + 1), "one child per branch|not after"),
    ("threshold_", lambda a: a.__setitem__(-1, 1.0), "leaf holds a threshold"),
    ("value_", lambda a: a.__setitem__((0, 0), np.nan), "not finite"),
    ("bag_value_", lambda a: a.__setitem__((1, 0), -1.0), "outside"),
])
def test_damaged_node_arrays_are_refused(fitted, name, change, message):
    tree, _ = fitted
    with pytest.raises(trust.DamagedModelError, match=message):
        model_types.check_model(_damaged(tree, name, change))


def test_shared_children_and_wrong_types_are_refused(fitted):
    tree, _ = fitted
    # a numeric test without a threshold, a nominal one with a threshold
    i = _numeric_split(tree)
    with pytest.raises(trust.DamagedModelError, match="threshold"):
        model_types.check_model(_damaged(tree, "threshold_", lambda arr: arr.__setitem__(i, np.nan)))
    j = _nominal_split(tree)
    with pytest.raises(trust.DamagedModelError, match="threshold"):
        model_types.check_model(_damaged(tree, "threshold_", lambda arr: arr.__setitem__(j, 0.5)))
    # int32 pointers would compile another walk: only the dtypes a fit stores are accepted
    bad = copy.deepcopy(tree)
    bad.child_start_ = bad.child_start_.astype(np.int32)
    with pytest.raises(trust.DamagedModelError, match="int64"):
        model_types.check_model(bad)
    bad = copy.deepcopy(tree)
    bad.value_ = bad.value_[:, :1]
    with pytest.raises(trust.DamagedModelError, match="shape"):
        model_types.check_model(bad)


def test_a_node_with_two_parents_is_refused():
    # weather.nominal: outlook (3 branches), below sunny humidity, below rainy windy
    rows = ["0 0 0 1 1", "0 0 0 0 1", "1 0 0 1 0", "2 1 0 1 0", "2 2 1 1 0", "2 2 1 0 1",
            "1 2 1 0 0", "0 1 0 1 1", "0 2 1 1 0", "2 1 1 1 0", "0 1 1 0 0", "1 1 0 0 0",
            "1 0 1 1 0", "2 1 0 0 1"]
    data = np.array([r.split() for r in rows], dtype=float)
    tree = C45Tree(nominal_features=[0, 1, 2, 3], n_categories=[3, 3, 2, 2]).fit(
        data[:, :4], data[:, 4].astype(int))
    assert tree.feature_.tolist() == [0, 2, -1, 3, -1, -1, -1, -1]
    assert tree.child_start_.tolist() == [1, 4, -1, 6, -1, -1, -1, -1]
    model_types.check_model(tree)
    bad = copy.deepcopy(tree)
    bad.child_start_ = np.array([1, 4, -1, 4, -1, -1, -1, -1])  # both splits own nodes 4, 5
    with pytest.raises(trust.DamagedModelError, match="one tree"):
        model_types.check_model(bad)
