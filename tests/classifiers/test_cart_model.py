"""``cart-entropy`` as data: CartEntropyModel's arrays, its numpy walk, its state check.

The rebuilt model (:func:`ektesting.state_roundtrip.roundtrip`: the declared state stored
and read back as :class:`~ensemblekit.classifiers.cart_model.CartEntropyModel`) must
predict the bytes the fitted estimator and scikit-learn's own tree give, and a damaged
state must be refused naming the entry.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.tree import export_text

from ensemblekit import registry, state
from ensemblekit.classifiers.bagging import bootstrap_counts, fit_weighted_tree
from ensemblekit.classifiers.cart import CartEntropyTree, cart_model
from ensemblekit.classifiers.cart_model import CartEntropyModel
from ensemblekit.data import load_dataset
from ensemblekit.preprocessing import make_preprocessor
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip
from ektesting.support import data_path

nan = np.nan


def _coded(name):
    """A data file as the ``cart-entropy`` entry feeds its tree: one-hot, numeric NaN kept."""
    ds = load_dataset(data_path(f"{name}.arff"))
    keep = ds.y >= 0
    prep = make_preprocessor(ds.schema, impute_numeric=False, scale="none")
    X = np.asarray(prep.fit_transform(ds.X[keep]), dtype=np.float64)
    return X, ds.y[keep], len(ds.schema.class_attribute.values)


@pytest.fixture(scope="module", params=["labor", "colic", "vote", "iris"])
def fitted(request):
    X, y, k = _coded(request.param)
    if request.param in ("labor", "colic"):
        assert np.isnan(X).any()  # numeric gaps reach the tree
    return CartEntropyTree(random_state=1, n_classes=k).fit(X, y), X


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_the_rebuilt_model_predicts_the_same_bytes(fitted):
    est, X = fitted
    model = roundtrip(est, CartEntropyModel)
    assert type(model) is CartEntropyModel and not hasattr(model, "tree_")
    for rows in (X, X[::-1], X[:1]):
        assert _same(model.predict_proba(rows), est.predict_proba(rows))
        assert _same(model.predict(rows), est.predict(rows))
    # and the estimator, which predicts with the same arrays, is scikit-learn's tree
    ref = est.tree_
    assert _same(est.predict_proba(X)[:, ref.classes_], ref.predict_proba(X))
    assert _same(model.apply(X), ref.apply(X.astype(np.float32)))


def test_the_walk_is_scikit_learns_on_hard_rows():
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(scale=1e6, size=(300, 4)), -3)
    X[rng.random(X.shape) < 0.2] = nan
    y = rng.integers(0, 3, 300)
    est = CartEntropyTree(min_samples_leaf=1, random_state=0, n_classes=4).fit(X, y)
    ref = est.tree_
    inner = est.children_left_ != -1
    assert np.isinf(est.threshold_[inner]).any()  # a "missing against known" split
    # every threshold, one float64 step and one float32 step on either side of it
    rows = np.tile(np.nanmedian(X, axis=0), (0, 1))
    for t, j in zip(est.threshold_[inner], est.feature_[inner]):
        if not np.isfinite(t):
            continue
        t32 = np.float32(t)
        for v in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf),
                  float(np.nextafter(t32, np.float32(np.inf))),
                  float(np.nextafter(t32, np.float32(-np.inf)))):
            row = np.nanmedian(X, axis=0)
            row[j] = v
            rows = np.vstack([rows, row])
    extremes = np.array([[3.4e38, -3.4e38, float(np.finfo(np.float32).max), 1e-45],
                         [-0.0, nan, nan, nan], [1e30, -1e30, 5e-324, -5e-324]])
    rows = np.vstack([rows, X, extremes, rng.normal(scale=1e7, size=(500, 4))])
    model = roundtrip(est, CartEntropyModel)
    assert _same(model.predict_proba(rows)[:, ref.classes_], ref.predict_proba(rows))
    assert _same(model.predict(rows), ref.predict(rows))


def test_values_beyond_float32_are_refused_by_the_model_too():
    est = CartEntropyTree(n_classes=2).fit([[0.0], [1.0], [2.0], [3.0]], [0, 1, 0, 1])
    model = roundtrip(est, CartEntropyModel)
    with pytest.raises(ValueError, match="float32"):
        model.predict([[1e39]])
    model.predict([[3.4e38], [nan]])


def test_a_declared_class_without_rows_gets_a_zero_column():
    est = CartEntropyTree(n_classes=3).fit(np.arange(6.0)[:, None], [0, 0, 0, 2, 2, 2])
    model = roundtrip(est, CartEntropyModel)
    assert model.tree_classes_.tolist() == [0, 2]
    np.testing.assert_array_equal(model.predict_proba([[0.0], [5.0]]), [[1, 0, 0], [0, 0, 1]])
    assert model.predict([[5.0]]).tolist() == [2]


def test_the_tree_text_is_scikit_learns(fitted):
    est, _ = fitted
    model = roundtrip(est, CartEntropyModel)
    names = [f"a{j}" for j in range(est.n_features_in_)]
    classes = [f"class {c}" for c in range(est.classes_.size)]
    own = [classes[int(c)] for c in est.tree_.classes_]
    for decimals in (2, 4):
        assert model.tree_text(names, classes, decimals=decimals) == export_text(
            est.tree_, feature_names=names, class_names=own, decimals=decimals)
    assert model.get_depth() == est.tree_.get_depth()
    assert model.get_n_leaves() == est.tree_.get_n_leaves()


def test_a_deep_tree_is_truncated_as_scikit_learn_does():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(2000, 3)), rng.integers(0, 3, 2000)
    est = CartEntropyTree(min_samples_leaf=1, random_state=0).fit(X, y)
    assert est.get_depth() > 11
    assert est.tree_text(decimals=2) == export_text(est.tree_)
    one = CartEntropyTree().fit([[0.0], [1.0]], [1, 1])  # one class: scikit-learn prints 0
    assert one.tree_text(decimals=2) == export_text(one.tree_) == "|--- class: 0\n"


def test_a_bagging_member_is_a_cart_model():
    X, y, k = _coded("labor")
    counts = bootstrap_counts(np.random.default_rng(0), X.shape[0], 1)[0]
    tree = fit_weighted_tree(X.astype(np.float32), y, counts, random_state=3)
    member = cart_model(tree)
    assert _same(member.predict_proba(X), tree.predict_proba(X))
    # a member is rebuilt without parameters (as a Members entry is)
    scalars, arrays = state.collect(member)
    rebuilt = state.restore(CartEntropyModel, None, json.loads(json.dumps(scalars)),
                            {f"m/{key}": value for key, value in arrays.items()}, name="m")
    assert _same(rebuilt.predict_proba(X), tree.predict_proba(X))


def test_the_registry_names_the_model_class():
    spec = registry.get("cart-entropy")
    assert spec.model_class() is CartEntropyModel
    assert issubclass(spec.estimator_class(), CartEntropyModel)


# --------------------------------------------------------------------------- damaged state
def _array(name, change):
    def tamper(params, scalars, arrays):
        arrays[name] = change(arrays[name].copy())
    return tamper


def _second_parent(params, scalars, arrays):
    left, right = arrays["children_left_"], arrays["children_right_"].copy()
    right[0] = left[0]  # the root's two children are one node: it has two parents
    arrays["children_right_"] = right


def _cycle(a):
    inner = np.flatnonzero(a != -1)
    a[inner[-1]] = 0  # a child pointing back at the root
    return a


def _one_child(a):
    a[np.flatnonzero(a != -1)[0]] = -1
    return a


def _drop(name):
    def tamper(params, scalars, arrays):
        if name in arrays:
            del arrays[name]
        else:
            del scalars[name]
    return tamper


def _scalar(name, value):
    def tamper(params, scalars, arrays):
        scalars[name] = value
    return tamper


def _nan_value(v):
    v[0, 0] = nan
    return v


def _leaf_sum(v):
    v[-1] = v[-1] * 0.5
    return v


DAMAGE = [
    (_array("children_left_", lambda a: np.where(a == a.max(), a.size, a)), "children_left_"),
    (_second_parent, "more than one"),
    (_array("children_left_", _cycle), "children_left_"),
    (_array("children_right_", _one_child), "children_right_"),
    (_array("feature_", lambda f: np.where(f >= 0, 10**6, f)), "feature_"),
    (_array("feature_", lambda f: np.full_like(f, -2)), "feature_"),
    (_array("feature_", lambda f: f[:-1].copy()), "feature_"),
    (_array("threshold_", lambda t: t.astype(np.float32)), "threshold_"),
    (_array("threshold_", lambda t: np.where(t == t.max(), nan, t)), "threshold_"),
    (_array("value_", _nan_value), "value_"),
    (_array("value_", lambda v: -v), "value_"),
    (_array("value_", _leaf_sum), "value_"),
    (_array("value_", lambda v: v[:, :1].copy()), "value_"),
    (_array("tree_classes_", lambda c: c[::-1].copy()), "tree_classes_"),
    (_array("tree_classes_", lambda c: c + 5), "tree_classes_"),
    (_array("classes_", lambda c: c + 1), "classes_"),
    (_array("missing_go_to_left_", lambda m: m.astype(np.uint8)), "missing_go_to_left_"),
    (_drop("value_"), "value_"),
    (_drop("missing_go_to_left_"), "missing_go_to_left_"),
    (_drop("n_features_in_"), "n_features_in_"),
    (_scalar("n_features_in_", 0), "n_features_in_"),
    (_scalar("n_features_in_", "8"), "n_features_in_"),
]


@pytest.mark.parametrize("tamper, entry", DAMAGE)
def test_a_damaged_state_is_refused_naming_the_entry(tamper, entry):
    X, y, k = _coded("labor")
    est = CartEntropyTree(random_state=1, n_classes=k).fit(X, y)
    assert est.get_depth() >= 2
    with pytest.raises(DamagedModelError, match=entry):
        roundtrip(est, CartEntropyModel, tamper=tamper)


def test_an_extra_entry_is_refused():
    est = CartEntropyTree(n_classes=2).fit([[0.0], [1.0], [2.0], [3.0]], [0, 1, 0, 1])

    def tamper(params, scalars, arrays):
        arrays["tree_"] = np.zeros(3)
    with pytest.raises(DamagedModelError, match="tree_"):
        roundtrip(est, CartEntropyModel, tamper=tamper)
