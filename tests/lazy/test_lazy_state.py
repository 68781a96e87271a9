"""The lazy ensembles' declared state: stored as plain arrays, rebuilt, checked.

A lazy ensemble refits per test row, so its estimator class is its own model class: its
``_fitted_state`` declares the training rows and classes, the column layout, the gain
ratios of Eq. 2, K and the seed, and everything prediction reads besides (the distances
and their k-d tree, the trees' matrix, the naive-Bayes tables) is rebuilt from them. (1) a
model rebuilt from its stored state predicts byte for byte what the fitted one does, on
rows with missing values and nominal codes; (2) the stored state is arrays of exact dtypes
and JSON scalars, nothing else; (3) a damaged state is refused naming what is wrong.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit import state
from ensemblekit.lazy.lazy_bagging import LazyBaggingClassifier
from ensemblekit.lazy.lazy_stacking import LazyStackingClassifier
from ensemblekit.trust import DamagedModelError

from ektesting import support
from ektesting.state_roundtrip import roundtrip, stored


@pytest.fixture(scope="module")
def labor():
    # 57 rows, numeric and nominal attributes, missing values in most rows
    return support.load_coded("labor")


def _fit(labor, cls=LazyBaggingClassifier, n_rows=45, **params):
    _, X, y, nominal, n_cat = labor
    est = cls(n_estimators=6, nominal_features=nominal, n_categories=n_cat, random_state=3,
              **params)
    return est.fit(X[:n_rows], y[:n_rows])


_CASES = [
    (LazyBaggingClassifier, {}),
    (LazyBaggingClassifier, {"voting": "soft"}),
    (LazyBaggingClassifier, {"tree": "cart-entropy", "max_depth": 4}),
    (LazyStackingClassifier, {}),
    (LazyStackingClassifier, {"combiner": "stacking", "meta_rows": 20}),
    (LazyStackingClassifier, {"tree": "cart-entropy", "knn_neighbors": 3}),
    (LazyStackingClassifier, {"base_estimators": "knn,nb", "n_neighbors": 0}),
]


@pytest.mark.parametrize(("cls", "params"), _CASES)
def test_rebuilt_model_predicts_byte_for_byte_as_the_fitted_one(labor, cls, params):
    _, X, _, _, _ = labor
    est = _fit(labor, cls, **params)
    model = roundtrip(est, type(est))
    assert type(model) is cls and "_parts" not in vars(model)
    test = X[40:]  # ten unseen rows and five training rows, with missing values
    assert np.isnan(test).any()
    want = est.predict_proba(test)
    got = model.predict_proba(test)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert model.predict(test).tobytes() == est.predict(test).tobytes()
    # the rebuilt parts are those of the fit
    assert model.distance_.weights_.tobytes() == est.distance_.weights_.tobytes()
    assert model.X_tree_.tobytes() == est.X_tree_.tobytes()


def test_a_declared_class_without_rows_survives_the_round_trip(labor):
    _, X, y, nominal, n_cat = labor
    est = LazyStackingClassifier(n_estimators=6, nominal_features=nominal, n_categories=n_cat,
                                 n_classes=3, random_state=0).fit(X, y)
    assert est.present_classes_.tolist() == [0, 1]
    model = roundtrip(est, type(est))
    assert model.predict_proba(X[:10]).tobytes() == est.predict_proba(X[:10]).tobytes()
    assert np.all(model.predict_proba(X[:10])[:, 2] == 0)


def test_the_stored_state_is_arrays_of_exact_dtypes(labor):
    _, X, y, _, _ = labor
    est = _fit(labor, LazyStackingClassifier, tree="cart-entropy")
    scalars, arrays = state.collect(est)
    assert set(scalars) == {"n_features_in_", "k_", "seed_"}
    assert all(type(v) is int for v in scalars.values())
    dtypes = {name: (a.dtype.str, a.shape) for name, a in arrays.items()}
    n, d = 45, X.shape[1]
    n_nom = len(est.nominal_features_)
    assert dtypes == {
        "X_": ("<f8", (n, d)),  # the training rows, stored once, with their NaN
        "y_codes_": ("<i8", (n,)),
        "classes_": ("<i8", (2,)),
        "present_classes_": ("<i8", (2,)),
        "nominal_features_": ("<i8", (n_nom,)),
        "n_categories_": ("<i8", (n_nom,)),
        "numeric_features_": ("<i8", (d - n_nom,)),
        "modes_": ("<i8", (n_nom,)),
        "gain_ratios_": ("<f8", (d,)),
    }
    np.testing.assert_array_equal(arrays["X_"], X[:45])
    np.testing.assert_array_equal(arrays["y_codes_"], y[:45])
    assert all(type(a) is np.ndarray and a.flags.c_contiguous for a in arrays.values())


def _set(name, value):
    def tamper(params, scalars, arrays):
        if name in scalars:
            scalars[name] = value(scalars[name]) if callable(value) else value
        else:
            arrays[name] = value(arrays[name].copy()) if callable(value) else value
    return tamper


def _drop(name):
    def tamper(params, scalars, arrays):
        (scalars if name in scalars else arrays).pop(name)
    return tamper


def _extra_scalar(name, value):
    def tamper(params, scalars, arrays):
        scalars[name] = value
    return tamper


def _param(name, value):
    def tamper(params, scalars, arrays):
        params[name] = value
    return tamper


def _bad_code(X):
    X[0, 4] = 99.0  # column 4 of labor is nominal (3 values)
    return X


def _put(index, value):
    def change(a):
        a[index] = value
        return a
    return change


_DAMAGE = [
    # an index out of range
    (_set("y_codes_", lambda y: y + 1), r"model\.y_codes_: holds .*2.*, not below 2"),
    (_set("nominal_features_", lambda f: f + 100), r"model\.nominal_features_: holds"),
    (_set("present_classes_", lambda p: p + 1), r"model\.present_classes_: holds .*2"),
    (_set("k_", 10**6), r"model\.k_: = 1000000 is outside \[0, 45\]"),
    (_set("seed_", -1), r"model\.seed_"),
    # another length than the declaration says
    (_set("X_", lambda x: x[:-1].copy()), r"model\.X_: has shape \(44, 16\)"),
    (_set("gain_ratios_", lambda g: g[:-1].copy()), r"model\.gain_ratios_: has shape"),
    (_set("modes_", lambda m: m[:-1].copy()), r"model\.modes_: has shape"),
    (_set("X_", lambda x: x.reshape(-1)), r"model\.X_: has 1 dimensions"),
    # NaN or infinity where none is allowed
    (_set("gain_ratios_", _put(0, np.nan)), r"model\.gain_ratios_: holds NaN"),
    (_set("X_", _put((0, 0), np.inf)), r"model\.X_: holds an infinite value"),
    (_set("gain_ratios_", _put(0, -0.5)), r"model\.gain_ratios_: holds .*-0\.5.*below"),
    # another dtype
    (_set("X_", lambda x: x.astype(np.float32)), r"model\.X_: has dtype float32, expected "
                                                  r"float64"),
    (_set("y_codes_", lambda y: y.astype(np.float64)), r"model\.y_codes_: has dtype float64"),
    (_set("X_", lambda x: x.astype(object)), r"model\.X_: has dtype object"),
    # a missing or extra entry
    (_drop("X_"), r"model\.X_: missing"),
    (_drop("k_"), r"model\.k_: missing"),
    (_drop("gain_ratios_"), r"model\.gain_ratios_: missing"),
    (_set("distance_", np.zeros(3)), r"model/distance_: not part of"),
    (_extra_scalar("_nb", 3), r"model: _nb is not part of"),
    # rules across entries (_check_state)
    (_set("X_", _bad_code), r"model: X_ column 4 holds a value that is not one of its codes"),
    (_set("modes_", lambda m: m + 5), r"model: modes_ holds a value that is not a code"),
    (_set("n_categories_", lambda r: r * 10**8), r"model: 45 rows of .* one-hot columns is "
                                                  r"beyond any fit"),
    (_set("classes_", lambda c: c[::-1].copy()), r"model: classes_ are not distinct"),
    (_set("y_codes_", np.zeros(45, dtype=np.int64)), r"model: y_codes_ does not hold every "
                                                     r"class"),
    (_set("numeric_features_", lambda f: f[::-1].copy()), r"model: numeric_features_ are not"),
    (_set("nominal_features_", lambda f: f[::-1].copy()), r"model: nominal_features_ is not an "
                                                          r"ascending"),
    (_set("k_", 2), r"model: k_ = 2 is not the K of the parameters \(1\)"),
    (_param("max_depth", 3), r"model: parameters: max_depth=3 applies to tree='cart-entropy'"),
    (_param("n_classes", 3), r"model\.classes_: has shape \(2,\)"),
]


@pytest.fixture(scope="module")
def fitted(labor):
    return _fit(labor)


@pytest.mark.parametrize(("tamper", "message"), _DAMAGE)
def test_a_damaged_state_is_refused_naming_what_is_wrong(fitted, tamper, message):
    est = fitted
    with pytest.raises(DamagedModelError, match=message):
        roundtrip(est, type(est), tamper=tamper)


def test_a_bad_learner_type_is_refused(labor):
    est = _fit(labor, LazyStackingClassifier)
    with pytest.raises(DamagedModelError, match=r"model: parameters: .*'base_estimators'"):
        roundtrip(est, type(est), tamper=_param("base_estimators", "tree,svm"))


def test_declared_classes_are_the_codes(labor):
    _, X, y, nominal, n_cat = labor
    est = LazyBaggingClassifier(n_estimators=3, nominal_features=nominal, n_categories=n_cat,
                                n_classes=3, random_state=0).fit(X, y)
    with pytest.raises(DamagedModelError, match=r"model: classes_ are not the codes 0\.\.2"):
        roundtrip(est, type(est), tamper=_set("classes_", lambda c: c + 1))
    with pytest.raises(DamagedModelError, match=r"model\.present_classes_: holds .*3.*, not below 3"):
        roundtrip(est, type(est), tamper=_set("present_classes_", lambda p: p + 2))


def test_stored_parameters_name_the_classes_they_stand_for(labor):
    # restore() builds the class with the stored parameters: n_classes must agree with classes_
    params, scalars, arrays = stored(_fit(labor))
    assert params["n_classes"] is None and arrays["classes_"].tolist() == [0, 1]
