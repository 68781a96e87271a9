"""``knn`` as data: IBkModel's stored rows and ranges, its numpy prediction, its state check.

The rebuilt model (:func:`ektesting.state_roundtrip.roundtrip`: the declared state stored
and read back as :class:`~ensemblekit.classifiers.ibk_model.IBkModel`) must predict the
bytes the fitted estimator gives, also when the rows come in parts (``widened``), and a
damaged state must be refused naming the entry. The last test checks, in a fresh
interpreter, that the family's model classes (this one and ``cart-entropy``'s) predict
from a stored state without scikit-learn, scipy, numba or joblib.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ensemblekit import registry, state
from ensemblekit.classifiers.cart import CartEntropyTree
from ensemblekit.classifiers.ibk import IBk
from ensemblekit.classifiers.ibk_model import IBkModel
from ensemblekit.data import load_dataset
from ensemblekit.errors import NotFittedError
from ensemblekit.preprocessing import make_preprocessor
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip, stored
from ektesting.support import data_path, load_coded

nan = np.nan


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _fit(name, **params):
    _, X, y, nominal, n_cat = load_coded(name)
    k = int(y.max()) + 1
    est = IBk(nominal_features=nominal, n_categories=n_cat, n_classes=k, **params).fit(X, y)
    return est, X


SETTINGS = [
    ("labor", {}), ("labor", {"n_neighbors": 3, "weights": "inverse"}),
    ("colic", {"n_neighbors": 5, "weights": "similarity"}),
    ("colic", {"n_neighbors": 2, "range_update": "none"}),
    pytest.param("segment", {"n_neighbors": 3}, marks=pytest.mark.slow),  # 2,310 rows: 5 s
]


@pytest.mark.parametrize("name, params", SETTINGS)
def test_the_rebuilt_model_predicts_the_same_bytes(name, params):
    est, X = _fit(name, **params)
    model = roundtrip(est, IBkModel)
    assert type(model) is IBkModel
    if name != "segment":
        assert np.isnan(X).any()  # missing values in stored and test rows
    rng = np.random.default_rng(0)
    wide = X[rng.permutation(len(X))[:300]]
    numeric = np.setdiff1d(np.arange(X.shape[1]), est.nominal_features_)
    wide[:, numeric] = wide[:, numeric] * rng.choice([0.5, 3.0], size=numeric.size) - 1.0
    for rows in (X, X[::-1], X[:1], wide):  # wide: numeric values beyond the training ranges
        assert _same(model.predict_proba(rows), est.predict_proba(rows))
        assert _same(model.predict(rows), est.predict(rows))
        assert _same(model.neighbour_weights(rows), est.neighbour_weights(rows))


def test_the_rebuilt_model_widens_as_the_estimator():
    est, X = _fit("colic", n_neighbors=3)
    model = roundtrip(est, IBkModel)
    a, b = X[:150] * 2.0, X[150:]
    a[:, est.nominal_features_] = X[:150, est.nominal_features_]
    whole = est.predict_proba(np.vstack([a, b]))
    wide = model.widened(a)
    assert type(wide) is IBkModel and wide is not model and wide.X_train_ is model.X_train_
    assert _same(wide.feature_min_, est.widened(a).feature_min_)
    assert _same(np.vstack([model.predict_proba(a), wide.predict_proba(b)]), whole)
    assert model.widened(np.empty((0, X.shape[1]))) is model


def test_the_model_checks_its_rows():
    est, X = _fit("labor")
    model = roundtrip(est, IBkModel)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :-1])
    with pytest.raises(ValueError, match="[Ii]nfinity"):
        model.predict(np.where(np.isnan(X), np.inf, X))
    bad = X[:2].copy()
    bad[:, est.nominal_features_[0]] = 99.0
    with pytest.raises(ValueError, match="codes"):
        model.predict(bad)
    with pytest.raises(NotFittedError):
        IBkModel().predict(X)


@pytest.mark.parametrize("name, params", SETTINGS[:4])
def test_fit_coded_stores_the_estimators_state_and_predicts_the_same(name, params):
    # compare and `fit knn` fit the model class on coded rows, without scikit-learn
    _, X, y, nominal, n_cat = load_coded(name)
    args = dict(nominal_features=nominal, n_categories=n_cat, n_classes=int(y.max()) + 1,
                **params)
    est = IBk(**args).fit(X, y)
    model = IBkModel(**args).fit_coded(X, y)
    (want_scalars, want), (got_scalars, got) = state.collect(est), state.collect(model)
    assert want_scalars == got_scalars and want.keys() == got.keys()
    assert all(_same(want[key], got[key]) for key in want)
    rows = X[::-1]
    assert _same(model.predict_proba(rows), est.predict_proba(rows))
    assert _same(model.widened(X[:7]).predict(rows), est.widened(X[:7]).predict(rows))


@pytest.mark.parametrize("X, y, params, message", [
    ([[0.0, 1.0]], [0], {}, "X must be a 2-D float64 array"),
    (np.zeros((2, 2), dtype=np.float32), [0, 1], {}, "X must be a 2-D float64 array"),
    (np.zeros((0, 2)), [], {}, r"X has shape \(0, 2\): no rows or no columns"),
    (np.array([[0.0, np.inf]]), [0], {}, "X holds infinity"),
    (np.zeros((2, 2)), [0], {}, r"y has shape \(1,\); expected \(2,\)"),
    (np.zeros((2, 2)), [0, 2], {"n_classes": 2}, "y must hold the class codes 0..1"),
    (np.array([[0.0, 3.0]]), [0], {"nominal_features": [1], "n_categories": [2]},
     "nominal column 1 holds a value that is not one of its 2 codes"),
    (np.zeros((2, 2)), [0, 1], {"n_neighbors": 0}, "n_neighbors"),
])
def test_fit_coded_refuses_bad_input_by_name(X, y, params, message):
    from ensemblekit.errors import InputError

    with pytest.raises(InputError, match=message):
        IBkModel(**params).fit_coded(X, np.asarray(y))


def test_the_registry_names_the_model_class():
    spec = registry.get("knn")
    assert spec.model_class() is IBkModel and spec.widens_at_predict
    assert issubclass(spec.estimator_class(), IBkModel)


# --------------------------------------------------------------------------- damaged state
def _array(name, change):
    def tamper(params, scalars, arrays):
        arrays[name] = change(arrays[name].copy())
    return tamper


def _put(name, index, value):
    def change(a):
        a[index] = value
        return a
    return _array(name, change)


def _nominal_code(params, scalars, arrays):
    x = arrays["X_train_"].copy()
    x[0, int(arrays["nominal_features_"][0])] = 7.0
    arrays["X_train_"] = x


def _drop(name):
    def tamper(params, scalars, arrays):
        if name in arrays:
            del arrays[name]
        else:
            del scalars[name]
    return tamper


def _param(name, value):
    def tamper(params, scalars, arrays):
        params[name] = value
    return tamper


DAMAGE = [
    (_array("y_train_", lambda y: y + 5), "y_train_"),
    (_array("y_train_", lambda y: y - 1), "y_train_"),
    (_array("X_train_", lambda x: x[:-1].copy()), "X_train_"),
    (_array("X_train_", lambda x: x.astype(np.float32)), "X_train_"),
    (_put("X_train_", (0, 0), np.inf), "X_train_"),
    (_nominal_code, "nominal value"),
    (_array("feature_min_", lambda m: m - 1), "feature_min_"),
    (_put("feature_max_", 0, nan), "feature_max_"),
    (_array("feature_max_", lambda m: m[:-1].copy()), "feature_max_"),
    (_array("nominal_features_", lambda f: f + 10**6), "nominal_features_"),
    (_array("nominal_features_", lambda f: f[::-1].copy()), "nominal_features_"),
    (_array("nominal_features_", lambda f: f.astype(np.int32)), "nominal_features_"),
    (_array("n_categories_", lambda c: c[:-1].copy()), "n_categories_"),
    (_array("n_categories_", lambda c: c * 0), "n_categories_"),
    (_array("classes_", lambda c: c + 1), "classes_"),
    (_drop("y_train_"), "y_train_"),
    (_drop("n_samples_fit_"), "n_samples_fit_"),
    (lambda p, s, a: s.update(n_samples_fit_=3), "X_train_"),
    (lambda p, s, a: s.update(n_features_in_=2.5), "n_features_in_"),
    (_param("weights", "distance"), "weights"),
    (_param("n_neighbors", 0), "n_neighbors"),
]


@pytest.mark.parametrize("tamper, entry", DAMAGE)
def test_a_damaged_state_is_refused_naming_the_entry(tamper, entry):
    est, _ = _fit("labor", n_neighbors=3)
    with pytest.raises(DamagedModelError, match=entry):
        roundtrip(est, IBkModel, tamper=tamper)


def test_a_column_without_known_values_keeps_its_infinite_range():
    est = IBk().fit([[0.0, nan], [1.0, nan]], [0, 1])
    model = roundtrip(est, IBkModel)
    assert model.feature_min_.tolist() == [0.0, np.inf]
    assert _same(model.predict_proba([[0.2, 5.0]]), est.predict_proba([[0.2, 5.0]]))


# --------------------------------------------------------------------------- numpy only
_CHILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import numpy as np
    from ensemblekit import registry, state

    folder = Path(sys.argv[1])
    out = {}
    for name in ("knn", "cart-entropy"):
        part = folder / name
        meta = json.loads((part / "meta.json").read_text())
        arrays = {f"model/{key}": np.load(part / f"{i}.npy", allow_pickle=False)
                  for i, key in enumerate(meta["arrays"])}
        model = state.restore(registry.get(name).model_class(), meta["params"],
                              meta["scalars"], arrays)
        X = np.load(part / "X.npy", allow_pickle=False)
        out[name] = [type(model).__module__,
                     model.predict_proba(X).tobytes() == (part / "proba.bin").read_bytes(),
                     model.predict(X).tobytes() == (part / "pred.bin").read_bytes()]
        if name == "knn":
            wide = model.widened(X[:5])
            out[name].append(wide.predict_proba(X[5:]).tobytes()
                             == (part / "wide.bin").read_bytes())
    out["modules"] = sorted(m for m in ("sklearn", "scipy", "numba", "joblib")
                            if m in sys.modules)
    print(json.dumps(out))
""")


def _cart_fitted():
    ds = load_dataset(data_path("labor.arff"))
    keep = ds.y >= 0
    prep = make_preprocessor(ds.schema, impute_numeric=False, scale="none")
    X = np.asarray(prep.fit_transform(ds.X[keep]), dtype=np.float64)
    return CartEntropyTree(random_state=0, n_classes=2).fit(X, ds.y[keep]), X


def test_model_classes_predict_without_scikit_learn(tmp_path):
    knn, X_knn = _fit("labor", n_neighbors=3)
    cart, X_cart = _cart_fitted()
    for name, est, X in (("knn", knn, X_knn), ("cart-entropy", cart, X_cart)):
        params, scalars, arrays = stored(est)
        part = tmp_path / name
        part.mkdir()
        for i, value in enumerate(arrays.values()):
            np.save(part / f"{i}.npy", value, allow_pickle=False)
        (part / "meta.json").write_text(json.dumps(
            {"params": params, "scalars": scalars, "arrays": list(arrays)}))
        np.save(part / "X.npy", X)
        (part / "proba.bin").write_bytes(est.predict_proba(X).tobytes())
        (part / "pred.bin").write_bytes(est.predict(X).tobytes())
        if name == "knn":
            (part / "wide.bin").write_bytes(est.widened(X[:5]).predict_proba(X[5:]).tobytes())
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True,
                          text=True, check=True)
    out = json.loads(done.stdout)
    assert out["knn"] == ["ensemblekit.classifiers.ibk_model", True, True, True]
    assert out["cart-entropy"] == ["ensemblekit.classifiers.cart_model", True, True]
    assert out["modules"] == []
