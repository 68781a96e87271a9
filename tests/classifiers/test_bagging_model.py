"""``bagging``'s model class: stored bags of trees rebuild exactly, damage is refused, numpy only.

(1) the state a fit leaves, stored and rebuilt as :class:`BaggedTreesModel` (what a model
file does), predicts the same bytes, with ``c45`` and ``cart-entropy`` members, soft and
hard voting, missing values included; the members are rebuilt as the class the ``tree``
parameter names; (2) a damaged member or layout is refused, naming the entry; (3) the
model classes of ``c45`` and ``bagging`` rebuild and predict in a process that never
imports scikit-learn, scipy or numba.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ensemblekit.classifiers.bagging import BaggedTreeClassifier
from ensemblekit.classifiers.bagging_model import BaggedTreesModel
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.classifiers.c45_model import C45Model
from ensemblekit.classifiers.cart_model import CartEntropyModel
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip, stored
from ektesting.support import load_coded


def _fit(name, **params):
    ds, X, y, nominal, n_cat = load_coded(name)
    clf = BaggedTreeClassifier(n_estimators=5, nominal_features=nominal, n_categories=n_cat,
                               n_classes=len(ds.schema.class_attribute.values), random_state=3,
                               **params).fit(X, y)
    Q = X.copy()
    Q[np.random.default_rng(0).random(Q.shape) < 0.3] = np.nan
    return clf, X, Q


@pytest.fixture(scope="module")
def labor_c45():
    return _fit("labor")


@pytest.fixture(scope="module")
def labor_cart():
    return _fit("labor", tree="cart-entropy")


@pytest.mark.parametrize("name, params", [
    ("labor", {}), ("labor", {"voting": "hard"}), ("vote", {}), ("soybean", {}),
    ("labor", {"tree": "cart-entropy"}), ("labor", {"tree": "cart-entropy", "voting": "hard"}),
    ("soybean", {"tree": "cart-entropy"}),  # declared classes without training rows
])
def test_the_rebuilt_model_predicts_the_same_bytes(name, params):
    clf, X, Q = _fit(name, **params)
    model = roundtrip(clf, BaggedTreesModel)
    assert type(model) is BaggedTreesModel
    member = C45Model if clf.tree == "c45" else CartEntropyModel
    assert [type(m) for m in model.estimators_] == [member] * clf.n_estimators
    for rows in (X, Q):
        assert model.predict_proba(rows).tobytes() == clf.predict_proba(rows).tobytes()
        assert model.predict(rows).tobytes() == clf.predict(rows).tobytes()


def test_the_bags_are_not_stored(labor_c45):
    clf, _, _ = labor_c45
    _, scalars, arrays = stored(clf)
    assert not any("bag_counts_" in key for key in list(scalars) + list(arrays))
    assert "estimators_/4/feature_" in arrays


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


def _params(**changes):
    def tamper(params, scalars, arrays):
        params.update(changes)
    return tamper


def _drop_member(params, scalars, arrays):
    scalars["estimators_"].pop()
    for key in [k for k in arrays if k.startswith("estimators_/4/")]:
        del arrays[key]


@pytest.mark.parametrize("tamper, entry, message", [
    (_set("estimators_/1/child_start_", lambda a: a.__setitem__(0, 10**6)),
     "estimators_.1.child_start_", "not below"),
    (_set("estimators_/2/feature_", lambda a: a.__setitem__(0, 99)), "estimators_.2.feature_",
     "not below"),
    (_set("estimators_/0/value_", lambda a: a.__setitem__((0, 0), np.nan)),
     "estimators_.0.value_", "NaN"),
    (_replace("estimators_/3/is_empty_", lambda a: a[:-1].copy()), "estimators_.3.is_empty_",
     "shape"),
    (_replace("estimators_/3/threshold_", lambda a: a.astype(np.float32)),
     "estimators_.3.threshold_", "dtype float32"),
    (_set("estimators_/1/nominal_features_", lambda a: a.__setitem__(0, a[0] + 1)),
     "estimators_.1", "nominal columns"),
    (_replace("estimators_/1/classes_", lambda a: a[:1].copy()), "estimators_.1", "class"),
    (_set("modes_", lambda a: a.__setitem__(0, 99)), "modes_", "outside"),
    (_set("numeric_features_", lambda a: a.__setitem__(0, a[0] + 1)), "numeric_features_",
     "not the columns"),
    (_set("nominal_features_", lambda a: a.__setitem__(0, 99)), "nominal_features_", "below"),
    (_replace("classes_", lambda a: a[::-1].copy()), "classes_", "class codes"),
    (_drop_member, "estimators_", "4 entries, expected 5"),
    (_params(n_estimators=6), "estimators_", "5 entries, expected 6"),
    (_params(n_classes=3), "classes_", "should be 3"),
])
def test_damaged_c45_members_are_refused_naming_the_entry(labor_c45, tamper, entry, message):
    clf, _, _ = labor_c45
    with pytest.raises(DamagedModelError, match=message) as info:
        roundtrip(clf, BaggedTreesModel, tamper=tamper)
    assert str(info.value).replace(": ", ".", 1).startswith(f"model.{entry}")


@pytest.mark.parametrize("tamper, entry, message", [
    (_set("estimators_/1/children_left_", lambda a: a.__setitem__(0, 0)),
     "estimators_.1.children_left_", "before its parent"),
    (_set("estimators_/0/feature_", lambda a: a.__setitem__(0, 10**6)), "estimators_.0.feature_",
     "not below"),
    (_set("estimators_/2/threshold_", lambda a: a.__setitem__(0, np.nan)),
     "estimators_.2.threshold_", "NaN"),
    (_replace("estimators_/1/value_", lambda a: a[:, :1].copy()), "estimators_.1.value_",
     "n_tree_classes"),
    (_set("modes_", lambda a: a.__setitem__(0, 99)), "modes_", "outside"),
])
def test_damaged_cart_members_are_refused_naming_the_entry(labor_cart, tamper, entry, message):
    clf, _, _ = labor_cart
    with pytest.raises(DamagedModelError, match=message) as info:
        roundtrip(clf, BaggedTreesModel, tamper=tamper)
    assert str(info.value).replace(": ", ".", 1).startswith(f"model.{entry}")


def test_the_file_cannot_choose_the_members_class(labor_cart):
    # the members' class follows the tree parameter: cart-entropy arrays read as c45 trees fail
    clf, _, _ = labor_cart
    with pytest.raises(DamagedModelError, match="estimators_.0"):
        roundtrip(clf, BaggedTreesModel, tamper=_params(tree="c45"))
    with pytest.raises(DamagedModelError, match="tree = 'j48'"):
        roundtrip(clf, BaggedTreesModel, tamper=_params(tree="j48"))


_CHILD = """
import json, sys
import numpy as np
from ensemblekit import state
from ensemblekit.classifiers.bagging_model import BaggedTreesModel
from ensemblekit.classifiers.c45_model import C45Model

out = {}
for name, cls in (("c45", C45Model), ("bagging-c45", BaggedTreesModel),
                  ("bagging-cart", BaggedTreesModel)):
    with open(f"{sys.argv[1]}/{name}.json") as f:
        params, scalars = json.load(f)
    arrays = dict(np.load(f"{sys.argv[1]}/{name}.npz", allow_pickle=False))
    model = state.restore(cls, params, scalars, {f"model/{k}": v for k, v in arrays.items()})
    X = np.load(f"{sys.argv[1]}/X.npy", allow_pickle=False)
    out[name] = model.predict_proba(X).tobytes().hex()
print(json.dumps({"proba": out, "modules": sorted(
    m for m in ("sklearn", "scipy", "numba", "joblib", "skops") if m in sys.modules)}))
"""


def test_the_model_classes_predict_without_sklearn_scipy_or_numba(labor_c45, labor_cart,
                                                                   tmp_path):
    bagged, _, Q = labor_c45
    cart = labor_cart[0]
    _, X, y, nominal, n_cat = load_coded("labor")
    tree = C45Tree(nominal_features=nominal, n_categories=n_cat, n_classes=2).fit(X, y)
    fitted = {"c45": tree, "bagging-c45": bagged, "bagging-cart": cart}
    for name, est in fitted.items():
        params, scalars, arrays = stored(est)
        params = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in params.items()}
        (tmp_path / f"{name}.json").write_text(json.dumps([params, scalars]))
        np.savez(tmp_path / f"{name}.npz", **arrays)
    np.save(tmp_path / "X.npy", Q)
    result = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["modules"] == []
    for name, est in fitted.items():
        assert report["proba"][name] == est.predict_proba(Q).tobytes().hex()
