"""``c45``'s model class: a stored tree rebuilds exactly, and damaged node arrays are refused.

(1) the state a fit leaves, stored and rebuilt as :class:`C45Model` (what a model file
does), predicts the same bytes and prints the same tree; (2) the numpy walk of the model
class gives the compiled walk's probabilities to the last bit, missing values included;
(3) node arrays that would send the walk outside them (a child pointer out of range or
backwards, a shared node, a test with the wrong number of branches), a wrong dtype or
length, NaN where a fit leaves none, or a missing entry are refused, naming the entry.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.classifiers import _c45_kernels as kernels
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.classifiers.c45_model import C45Model, tree_proba
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip
from ektesting.support import load_coded


def _fit(name, **params):
    ds, X, y, nominal, n_cat = load_coded(name)
    tree = C45Tree(nominal_features=nominal, n_categories=n_cat,
                   n_classes=len(ds.schema.class_attribute.values), **params).fit(X, y)
    return tree, X


def _with_gaps(X, seed=0, rate=0.3):
    Q = X.copy()
    Q[np.random.default_rng(seed).random(Q.shape) < rate] = np.nan
    return Q


@pytest.fixture(scope="module")
def labor():
    # numeric and nominal tests, missing values in most rows
    return _fit("labor", unpruned=True)


@pytest.mark.parametrize("name, params", [
    ("labor", {}), ("labor", {"unpruned": True}), ("vote", {}), ("soybean", {}),
    ("iris", {"min_samples_leaf": 1, "unpruned": True, "collapse_tree": False}),
    ("colic", {"binary_splits": True}),
    ("labor", {"binary_splits": True, "mdl_correction": False, "split_point_actual_value": False}),
])
def test_the_rebuilt_model_predicts_the_same_bytes(name, params):
    tree, X = _fit(name, **params)
    model = roundtrip(tree, C45Model)
    assert type(model) is C45Model
    for Q in (X, _with_gaps(X)):
        assert model.predict_proba(Q).tobytes() == tree.predict_proba(Q).tobytes()
        assert model.predict(Q).tobytes() == tree.predict(Q).tobytes()
    assert model.export_text() == tree.export_text()
    assert (model.n_leaves_, model.tree_size_, model.get_depth(), model.unpruned) == (
        tree.n_leaves_, tree.tree_size_, tree.get_depth(), tree.unpruned)


def test_a_single_leaf_rebuilds():
    tree = C45Tree(n_classes=2).fit([[0.0], [1.0]], [0, 1])
    model = roundtrip(tree, C45Model)
    assert model.tree_size_ == 1
    assert model.predict_proba([[0.5]]).tobytes() == tree.predict_proba([[0.5]]).tobytes()


def _compiled(tree, X):
    return kernels.predict_proba(np.ascontiguousarray(X, dtype=np.float64), tree.feature_,
                                 tree.threshold_, tree._nominal_mask(), tree.child_start_,
                                 tree.n_children_, tree.value_, tree.bag_value_, tree.is_empty_,
                                 *tree._totals(), tree.classes_.size, bool(tree.laplace))


def _numpy_walk(tree, X):
    # the walk a model takes when the compiled kernels are not loaded
    return tree_proba(np.asarray(X, dtype=np.float64), tree.feature_, tree.threshold_,
                      tree._nominal_mask(), tree.child_start_, tree.n_children_, tree.value_,
                      tree.bag_value_, tree.is_empty_, *tree._totals(), tree.classes_.size,
                      bool(tree.laplace))


@pytest.mark.parametrize("name", ["labor", "vote", "soybean", "glass", "anneal"])
def test_the_numpy_walk_is_the_compiled_walk_to_the_last_bit(name):
    # soybean has 19 classes: a pairwise sum of a leaf's weights would differ in the last bit
    ds, X, y, nominal, n_cat = load_coded(name)
    rng = np.random.default_rng(len(name))
    for params in ({}, {"unpruned": True, "min_samples_leaf": 1, "collapse_tree": False},
                   {"binary_splits": True}):
        for trial in range(3):
            w = None if trial == 0 else rng.integers(0, 4, y.size).astype(float)
            tree = C45Tree(nominal_features=nominal, n_categories=n_cat,
                           n_classes=len(ds.schema.class_attribute.values), **params).fit(
                X, y, sample_weight=w)
            for Q in (X, _with_gaps(X, seed=trial, rate=0.4)):
                compiled = _compiled(tree, Q).tobytes()
                assert tree.predict_proba(Q).tobytes() == compiled
                assert _numpy_walk(tree, Q).tobytes() == compiled


def _get_probs(tree, x, node, weight, flat=None):
    """Weka's ClassifierTree.getProbs for one row, written out as a plain recursion (all
    classes at once; class weights divided by the node's ``total_`` and ``bag_total_``,
    J48's ``totaL`` and ``perBag``). With ``flat``, a list, every leaf's share is appended
    to it instead, in depth-first order (a flat accumulator's order)."""
    def share(counts, total):
        part = [weight * (c / total) if total > 1e-6 else 0.0 for c in counts]
        if flat is not None:
            flat.append(part)
        return part

    f = tree.feature_[node]
    if f < 0:
        return share(tree.value_[node], tree.total_[node])
    start, k = tree.child_start_[node], tree.n_children_[node]
    v = x[f]
    if np.isnan(v):
        prob = [0.0] * tree.classes_.size
        for j in range(k):
            if not tree.is_empty_[start + j]:
                bag = tree.bag_total_[start + j]
                sub = _get_probs(tree, x, start + j, (bag / tree.total_[node]) * weight, flat)
                prob = [a + b for a, b in zip(prob, sub)]
        return prob
    t = tree.threshold_[node]
    if not tree._nominal_mask()[f]:
        j = int(not v <= t)
    else:  # one branch per value, or (a binary test) the value coded t, then the others
        j = int(v) if np.isnan(t) else int(v != t)
    if not tree.is_empty_[start + j]:
        return _get_probs(tree, x, start + j, weight, flat)
    if tree.bag_total_[start + j] > 1e-6:
        return share(tree.bag_value_[start + j], tree.bag_total_[start + j])
    return share(tree.value_[node], tree.total_[node])


@pytest.mark.parametrize("name, params", [("tic-tac-toe", {}), ("soybean", {}), ("labor", {}),
                                          ("soybean", {"binary_splits": True})])
def test_a_split_on_a_missing_value_adds_its_branches_sums_as_weka(name, params):
    # J48 adds at a split on a missing value the sums its branches return (recursion), not
    # every leaf's share into one running sum: 0 + a + (0 + b + c) is not (a + b) + c
    tree, X = _fit(name, unpruned=True, min_samples_leaf=1, **params)
    Q = _with_gaps(X, seed=5, rate=0.5)
    want = np.array([_get_probs(tree, q, 0, 1.0) for q in Q])
    assert _compiled(tree, Q).tobytes() == want.tobytes()
    assert _numpy_walk(tree, Q).tobytes() == want.tobytes()
    flat = []
    for q in Q:
        parts = []
        _get_probs(tree, q, 0, 1.0, parts)
        row = np.zeros(tree.classes_.size)
        for part in parts:
            row += part
        flat.append(row)
    assert np.array(flat).tobytes() != want.tobytes()  # the order matters on these rows


def test_a_row_of_missing_values_spreads_over_the_branches(labor):
    tree, X = labor
    Q = np.full((1, X.shape[1]), np.nan)
    model = roundtrip(tree, C45Model)
    assert model.predict_proba(Q).tobytes() == _compiled(tree, Q).tobytes()
    assert _numpy_walk(model, Q).tobytes() == _compiled(tree, Q).tobytes()
    assert 0 < model.predict_proba(Q).sum() <= 1 + 1e-12


def test_prediction_checks_rows_without_scikit_learn(labor):
    tree, X = labor
    model = roundtrip(tree, C45Model)
    with pytest.raises(ValueError, match="features"):
        model.predict_proba(X[:, :-1])
    nominal = int(model.nominal_features_[0])
    bad = X[:2].copy()
    bad[0, nominal] = model.n_categories_[0]
    with pytest.raises(ValueError, match=f"nominal column {nominal}"):
        model.predict(bad)
    with pytest.raises(ValueError, match="not fitted"):
        C45Model().predict(X)


# ---------------------------------------------------------------- damaged state
def _split(tree, nominal: bool):
    is_nominal = np.isin(tree.feature_, tree.nominal_features_)
    return int(np.flatnonzero((tree.feature_ >= 0) & (is_nominal == nominal))[0])


def _set(name, change):
    def tamper(params, scalars, arrays):
        arr = arrays[name].copy()
        change(arr)
        arrays[name] = arr
    return tamper


def _replace(name, make):
    def tamper(params, scalars, arrays):
        arrays[name] = make(arrays[name])
    return tamper


def _drop(name):
    def tamper(params, scalars, arrays):
        if name in arrays:
            del arrays[name]
        else:
            del scalars[name]
    return tamper


@pytest.mark.parametrize("tamper, entry, message", [
    (_set("child_start_", lambda a: a.__setitem__(0, 0)), "child_start_", "not after it"),  # root's own child
    (_set("child_start_", lambda a: a.__setitem__(0, a.size - 1)), "child_start_", "not after it|leaf"),
    (_set("child_start_", lambda a: a.__setitem__(0, 10**6)), "child_start_", "not below"),
    (_set("child_start_", lambda a: a.__setitem__(0, -3)), "child_start_", "below its least"),
    (_set("feature_", lambda a: a.__setitem__(0, 99)), "feature_", "not below"),
    (_set("feature_", lambda a: a.__setitem__(0, -1)), "feature_", "leaf by one of"),
    (_set("n_children_", lambda a: a.__setitem__(0, a[0] + 1)), "n_children_", "one child per branch"),
    (_set("n_children_", lambda a: a.__setitem__(0, 10**6)), "n_children_", "not below"),
    (_set("threshold_", lambda a: a.__setitem__(-1, 1.0)), "threshold_", "leaf holds a threshold"),
    (_set("value_", lambda a: a.__setitem__((0, 0), np.nan)), "value_", "NaN"),
    (_set("value_", lambda a: a.__setitem__((0, 0), np.inf)), "value_", "infinite"),
    (_set("bag_value_", lambda a: a.__setitem__((1, 0), -1.0)), "bag_value_", "below"),
    (_set("nominal_features_", lambda a: a.__setitem__(0, 99)), "nominal_features_", "below"),
    (_set("n_categories_", lambda a: a.__setitem__(0, 0)), "n_categories_", "below"),
    (_set("classes_", lambda a: a.__setitem__(0, 1)), "classes_", "class codes"),
    (_replace("child_start_", lambda a: a.astype(np.int32)), "child_start_", "dtype int32"),
    (_replace("is_empty_", lambda a: a.astype(np.int64)), "is_empty_", "dtype int64"),
    (_replace("value_", lambda a: a[:, :1].copy()), "value_", "shape"),
    (_replace("threshold_", lambda a: a[:-1].copy()), "threshold_", "shape"),
    (_replace("bag_value_", lambda a: a[:-1].copy()), "bag_value_", "shape"),
    (_drop("feature_"), "feature_", "missing"),
    (_drop("n_features_in_"), "n_features_in_", "missing"),
    # J48's totals: finite, >= 0, the length of the tree, together, and the sums they stand for
    (_set("total_", lambda a: a.__setitem__(0, -1.0)), "total_", "below"),
    (_set("total_", lambda a: a.__setitem__(0, np.nan)), "total_", "NaN"),
    (_set("bag_total_", lambda a: a.__setitem__(1, np.inf)), "bag_total_", "infinite"),
    (_replace("total_", lambda a: a[:-1].copy()), "total_", "shape"),
    (_set("total_", lambda a: a.__setitem__(-1, a[-1] * 2 + 1)), "total_", "not the sum"),
    (_set("total_", lambda a: a.__setitem__(0, 1e-3)), "total_", "not the sum"),
    (_set("bag_total_", lambda a: a.__setitem__(1, a[1] + 1e-6)), "bag_total_", "not the sum"),
    (_drop("bag_total_"), "total_", "together"),
    (_drop("total_"), "total_", "together"),
])
def test_damaged_state_is_refused_naming_the_entry(labor, tamper, entry, message):
    tree, _ = labor
    with pytest.raises(DamagedModelError, match=message) as info:
        roundtrip(tree, C45Model, tamper=tamper)
    assert str(info.value).replace(": ", ".", 1).startswith(f"model.{entry}")


def test_a_file_without_totals_adds_the_class_weights(labor):
    """A model file written before the trees kept J48's totals has no ``total_`` and
    ``bag_total_``: it loads, and the walk divides by the sums of the class weights,
    which on whole instance weights are J48's totals exactly."""
    def older(params, scalars, arrays):
        del arrays["total_"], arrays["bag_total_"]

    tree, X = _fit("vote", unpruned=True)
    whole = C45Tree(nominal_features=tree.nominal_features, n_categories=tree.n_categories,
                    n_classes=2).fit(*_complete(X, tree))
    for fitted in (whole, labor[0]):
        model = roundtrip(fitted, C45Model, tamper=older)
        assert model.total_ is None and model.bag_total_ is None
        Q = _with_gaps(labor[1] if fitted is labor[0] else X, seed=2)
        got = model.predict_proba(Q)
        if fitted is whole:  # whole weights: the same doubles as with the totals
            assert got.tobytes() == fitted.predict_proba(Q).tobytes()
        else:  # fractional weights: within rounding of J48's
            np.testing.assert_allclose(got, fitted.predict_proba(Q), rtol=0, atol=1e-14)


def _complete(X, tree):
    """The rows of vote without a missing value, and a class for each (the tree's)."""
    keep = ~np.isnan(X).any(axis=1)
    return X[keep], tree.predict(X[keep])


# ---- Laplace (J48 -A), computed by hand: x0 numeric, x1 nominal with a value 2 unseen
_X_HAND = np.array([[1.0, 0], [2.0, 0], [3.0, 0], [4.0, 1], [5.0, 1], [6.0, 1], [7.0, 1]])
_Y_HAND = np.array([0, 0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("walk", ["compiled", "numpy"])
def test_laplace_leaves_computed_by_hand(walk):
    # x0 alone: the tree splits on x0 <= 3, leaves of 3 (class 0) and 4 (class 1) instances
    X = _X_HAND[:, :1]
    tree = C45Tree(n_classes=2, unpruned=True, min_samples_leaf=1, laplace=True).fit(X, _Y_HAND)
    assert tree.export_text() == "x0 <= 3: 0 (3.0)\nx0 > 3: 1 (4.0)"
    Q = np.array([[2.0], [6.0], [np.nan]])
    proba = (_compiled if walk == "compiled" else _numpy_walk)(tree, Q)
    # (n_c + 1) / (n + 2) at a leaf; a missing x0: 3/7 of the left leaf and 4/7 of the right
    want = np.array([[4 / 5, 1 / 5], [1 / 6, 5 / 6], [46 / 105, 59 / 105]])
    np.testing.assert_allclose(proba, want, rtol=0, atol=1e-15)
    assert proba[0].tolist() == [4 / 5, 1 / 5] and proba[1].tolist() == [1 / 6, 5 / 6]
    plain = C45Tree(n_classes=2, unpruned=True, min_samples_leaf=1).fit(X, _Y_HAND)
    assert plain.predict_proba(Q).tolist() == [[1.0, 0.0], [0.0, 1.0], [3 / 7, 4 / 7]]


@pytest.mark.parametrize("walk", ["compiled", "numpy"])
def test_laplace_in_an_empty_branch_computed_by_hand(walk):
    # x1 alone: a three-way split whose branch 2 has no training instance; a row with
    # x1 = 2 gets the split's own distribution, Laplace-corrected: (3 + 1, 4 + 1) / (7 + 2)
    X = _X_HAND[:, 1:]
    tree = C45Tree(nominal_features=[0], n_categories=[3], n_classes=2, unpruned=True,
                   min_samples_leaf=1, laplace=True).fit(X, _Y_HAND)
    assert tree.n_leaves_ == 3 and tree.is_empty_.tolist() == [False, False, False, True]
    Q = np.array([[0.0], [1.0], [2.0], [np.nan]])
    proba = (_compiled if walk == "compiled" else _numpy_walk)(tree, Q)
    want = [[4 / 5, 1 / 5], [1 / 6, 5 / 6], [4 / 9, 5 / 9], [46 / 105, 59 / 105]]
    np.testing.assert_allclose(proba, want, rtol=0, atol=1e-15)
    assert proba[2].tolist() == [4 / 9, 5 / 9]
    plain = C45Tree(nominal_features=[0], n_categories=[3], n_classes=2, unpruned=True,
                    min_samples_leaf=1).fit(X, _Y_HAND)
    assert plain.predict_proba(Q)[2].tolist() == [3 / 7, 4 / 7]


def test_a_test_with_the_wrong_threshold_kind_is_refused(labor):
    tree, _ = labor
    numeric, nominal = _split(tree, False), _split(tree, True)
    for node, value in ((numeric, np.nan), (nominal, 0.5)):
        with pytest.raises(DamagedModelError, match="threshold"):
            roundtrip(tree, C45Model,
                      tamper=_set("threshold_", lambda a, i=node, v=value: a.__setitem__(i, v)))


def test_a_binary_nominal_test_must_name_a_value_and_match_binary_splits():
    tree, _ = _fit("colic", binary_splits=True)
    roundtrip(tree, C45Model)
    node = _split(tree, True)
    n_values = int(tree.n_categories_[np.searchsorted(tree.nominal_features_,
                                                      tree.feature_[node])])
    for value in (-1.0, 0.5, float(n_values)):
        with pytest.raises(DamagedModelError, match="one of its column's value codes"):
            roundtrip(tree, C45Model,
                      tamper=_set("threshold_", lambda a, v=value: a.__setitem__(node, v)))

    def multiway(params, scalars, arrays):
        params["binary_splits"] = False

    with pytest.raises(DamagedModelError, match="binary where binary_splits is false"):
        roundtrip(tree, C45Model, tamper=multiway)
    plain, _ = _fit("colic")

    def binary(params, scalars, arrays):
        params["binary_splits"] = True

    with pytest.raises(DamagedModelError, match="multiway where it is true"):
        roundtrip(plain, C45Model, tamper=binary)


def test_a_node_with_two_parents_or_none_is_refused():
    # weather.nominal: outlook (3 branches), below sunny humidity, below rainy windy
    rows = ["0 0 0 1 1", "0 0 0 0 1", "1 0 0 1 0", "2 1 0 1 0", "2 2 1 1 0", "2 2 1 0 1",
            "1 2 1 0 0", "0 1 0 1 1", "0 2 1 1 0", "2 1 1 1 0", "0 1 1 0 0", "1 1 0 0 0",
            "1 0 1 1 0", "2 1 0 0 1"]
    data = np.array([r.split() for r in rows], dtype=float)
    tree = C45Tree(nominal_features=[0, 1, 2, 3], n_categories=[3, 3, 2, 2], n_classes=2).fit(
        data[:, :4], data[:, 4].astype(int))
    assert tree.feature_.tolist() == [0, 2, -1, 3, -1, -1, -1, -1]
    assert tree.child_start_.tolist() == [1, 4, -1, 6, -1, -1, -1, -1]
    roundtrip(tree, C45Model)
    shared = _replace("child_start_", lambda a: np.array([1, 4, -1, 4, -1, -1, -1, -1]))
    with pytest.raises(DamagedModelError, match="one tree"):  # both splits own nodes 4, 5
        roundtrip(tree, C45Model, tamper=shared)


# ---- fitting without scikit-learn (``ensemblekit fit c45``)
_STATE = ("classes_", "n_features_in_", "nominal_features_", "n_categories_", "feature_",
          "threshold_", "child_start_", "n_children_", "value_", "bag_value_", "is_empty_")


@pytest.mark.parametrize("name, params", [
    ("labor", {}), ("labor", {"confidence_factor": 0.1}), ("vote", {"subtree_raising": False}),
    ("soybean", {}), ("iris", {"min_samples_leaf": 5, "unpruned": True}),
])
def test_fit_coded_grows_the_estimators_tree(name, params):
    ds, X, y, nominal, n_cat = load_coded(name)
    args = dict(nominal_features=nominal, n_categories=n_cat,
                n_classes=len(ds.schema.class_attribute.values), **params)
    weights = np.random.default_rng(3).integers(0, 3, size=len(y)).astype(float)
    for w in (None, weights):
        tree = C45Tree(**args).fit(X, y, sample_weight=w)
        model = C45Model(**args).fit_coded(X, y, sample_weight=w)
        for entry in _STATE:
            got, want = np.asarray(getattr(model, entry)), np.asarray(getattr(tree, entry))
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), entry
        assert model.export_text() == tree.export_text()


@pytest.mark.parametrize("X, y, params, message", [
    (np.ones((3, 2), dtype=np.float32), [0, 1, 0], {}, "2-D float64 array"),
    (np.ones(3), [0, 1, 0], {}, "2-D float64 array"),
    (np.ones((0, 2)), [], {}, "no rows or no columns"),
    (np.array([[1.0], [np.inf], [2.0]]), [0, 1, 0], {}, "infinity"),
    (np.ones((3, 1)), [0, 1], {}, "one label per row"),
    (np.ones((3, 1)), [0, 1, 0], {"confidence_factor": 0.7}, "confidence_factor"),
    (np.array([[0.0], [1.0], [5.0]]), [0, 1, 0], {"nominal_features": [0],
                                                  "n_categories": [2]}, "code"),
])
def test_fit_coded_refuses_bad_input_by_name(X, y, params, message):
    with pytest.raises(ValueError, match=message):
        C45Model(**params).fit_coded(X, np.asarray(y))


_FIT_IMPORTS = r"""
import json, sys
from ensemblekit.cli import main

sys.argv = ["ensemblekit", "fit", "c45", sys.argv[1], "-o", sys.argv[2], *sys.argv[3:]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"sklearn", "numba"})))
"""


def test_the_fit_command_grows_c45_without_scikit_learn(tmp_path):
    import json
    import subprocess
    import sys

    from ektesting.support import data_path

    done = subprocess.run([sys.executable, "-c", _FIT_IMPORTS, str(data_path("labor.arff")),
                           str(tmp_path / "m.ekm")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["numba"]
