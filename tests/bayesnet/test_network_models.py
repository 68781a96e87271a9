"""The Bayesian networks' model classes: stored state, rebuilt prediction, damaged state refused.

A fitted ``k2``, ``iebn`` or ``bagged-k2`` estimator's declared state is stored
and rebuilt as its numpy-only model class (what a model file does, in memory:
:mod:`ektesting.state_roundtrip`). The rebuilt model must predict the same bytes
as the estimator, also on rows with missing values and on numeric columns it
discretises; a state that no fit produces (an index out of range, NaN, a cycle,
a table of the wrong shape, an entry of another dtype or length, or none) must be
refused with :class:`~ensemblekit.trust.DamagedModelError` naming the entry; and
predicting with a rebuilt model must import neither scikit-learn, scipy nor numba.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ensemblekit.bayesnet.bagging import BaggedK2Classifier
from ensemblekit.bayesnet.bagging_model import BaggedK2Model
from ensemblekit.bayesnet.classifier import K2Classifier
from ensemblekit.bayesnet.classifier_model import K2Model
from ensemblekit.bayesnet.inner import InnerEnsembleK2Classifier
from ensemblekit.bayesnet.inner_model import InnerEnsembleK2Model
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip, stored
from ektesting.support import load_coded

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def labor():
    """labor: numeric and nominal columns, many missing values, 2 declared classes."""
    _ds, X, y, nominal, n_categories = load_coded("labor")
    return X, y.astype(np.int64), {"nominal_features": nominal, "n_categories": n_categories,
                                   "n_classes": 2}


@pytest.fixture(scope="module")
def k2(labor):
    X, y, kw = labor
    return K2Classifier(max_parents=3, **kw).fit(X, y)


def _same_bytes(model, est, X):
    proba = model.predict_proba(X)
    assert proba.dtype == np.float64
    assert proba.tobytes() == est.predict_proba(X).tobytes()
    assert np.array_equal(model.predict(X), est.predict(X))


# --------------------------------------------------------------------------- round trips
def test_k2_round_trip_predicts_the_same_bytes(k2, labor):
    X, _y, _kw = labor
    assert np.isnan(X).any(axis=1).sum() > 10  # rows with missing values are predicted too
    model = roundtrip(k2, K2Model)
    assert type(model) is K2Model
    _same_bytes(model, k2, X)
    # rows the training set never held: other numeric values, every gap
    rng = np.random.RandomState(0)
    Z = X[rng.randint(0, X.shape[0], 40)] * np.where(rng.rand(40, X.shape[1]) < 0.3, 1.5, 1.0)
    Z[rng.rand(*Z.shape) < 0.2] = np.nan
    nominal = labor[2]["nominal_features"]
    Z[:, nominal] = X[rng.randint(0, X.shape[0], 40)][:, nominal]
    _same_bytes(model, k2, Z)
    _same_bytes(model, k2, np.full((2, X.shape[1]), np.nan))


def test_k2_rebuilt_model_describes_the_same_network(k2):
    model = roundtrip(k2, K2Model)
    assert model.parents_ == k2.parents_
    assert model.network() == k2.network()
    assert model.to_dot() == k2.to_dot()


def test_k2_state_is_the_discretiser_and_the_network(k2):
    _params, scalars, arrays = stored(k2)
    assert set(scalars) == {"n_features_in_", "cut_points_", "cpts_", "parent_sets_"}
    assert "discretizer_" not in scalars and not any(k.startswith("discretizer_") for k in arrays)
    for f, cuts in enumerate(k2.discretizer_.cut_points_):
        assert np.array_equal(arrays[f"cut_points_/{f}"], cuts)
    assert [tuple(arrays[f"parent_sets_/{v}"].tolist()) for v in range(len(k2.parents_))] \
        == k2.parents_


def test_k2_equal_frequency_and_labels_without_declared_classes_round_trip():
    X, y = load_coded("iris")[1:3]
    y = np.where(y == 2, 7, y).astype(np.int64)  # labels 0, 1, 7: not codes
    est = K2Classifier(discretize="equal-frequency", n_bins=4).fit(X, y)
    model = roundtrip(est, K2Model)
    assert model.classes_.tolist() == [0, 1, 7]
    _same_bytes(model, est, X)


def test_iebn_round_trip_predicts_the_same_bytes(labor):
    X, y, kw = labor
    est = InnerEnsembleK2Classifier(n_estimators=4, bootstrap=True, random_state=3, **kw).fit(X, y)
    model = roundtrip(est)  # the estimator's first base
    assert type(model) is InnerEnsembleK2Model
    assert model.n_estimators == 4 and model.bootstrap is True
    _same_bytes(model, est, X)
    assert model.to_dot() == est.to_dot()


@pytest.mark.parametrize("declared", [True, False], ids=["declared-classes", "labels"])
@pytest.mark.parametrize("bootstrap", [True, False])
def test_bagged_k2_round_trip_predicts_the_same_bytes(labor, declared, bootstrap):
    X, y, kw = labor
    if not declared:
        kw = {**kw, "n_classes": None}
    est = BaggedK2Classifier(n_estimators=5, max_samples=0.4, bootstrap=bootstrap,
                             random_state=2, **kw).fit(X, y)
    if declared:
        assert all(m.classes_.size == 2 for m in est.estimators_)
    model = roundtrip(est)
    assert type(model) is BaggedK2Model
    assert all(type(m) is K2Model for m in model.estimators_)
    _same_bytes(model, est, X)
    # what show reports: distinct rows per bag, arcs per network
    assert [np.unique(b).size for b in model.estimators_samples_] \
        == [np.unique(b).size for b in est.bagging_.estimators_samples_]
    assert [m.parents_ for m in model.estimators_] == [m.parents_ for m in est.estimators_]


def test_bagged_k2_predicts_the_bytes_of_scikit_learns_bagging(labor):
    X, y, kw = labor
    est = BaggedK2Classifier(n_estimators=6, random_state=0, **kw).fit(X, y)
    assert est.predict_proba(X).tobytes() == est.bagging_.predict_proba(X).tobytes()
    for rows, drawn in zip(est.estimators_samples_, est.bagging_.estimators_samples_):
        assert rows.dtype == np.int64 and np.array_equal(rows, drawn)


def test_bagged_k2_members_lacking_a_class_round_trip():
    X, y = load_coded("iris")[1:3]
    keep = np.r_[np.arange(100), [100, 120, 140]]  # 3 rows of the third class: bags miss it
    X, y = X[keep], y[keep].astype(np.int64)
    est = BaggedK2Classifier(n_estimators=10, max_samples=0.1, random_state=0).fit(X, y)
    assert any(m.classes_.size < 3 for m in est.estimators_)  # members of a partial class set
    model = roundtrip(est)
    _same_bytes(model, est, X)
    assert est.predict_proba(X).tobytes() == est.bagging_.predict_proba(X).tobytes()


def test_unfitted_model_refuses_to_predict():
    from ensemblekit.errors import NotFittedError

    with pytest.raises(NotFittedError):
        K2Model().predict(np.zeros((1, 2)))
    with pytest.raises(NotFittedError):
        K2Model().network()


def test_the_rebuilt_model_checks_its_rows(k2, labor):
    model = roundtrip(k2, K2Model)
    X = labor[0]
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.full((1, X.shape[1]), np.inf))
    bad = X[:1].copy()
    bad[0, labor[2]["nominal_features"][0]] = 99
    with pytest.raises(ValueError, match="unseen category"):
        model.predict(bad)


# --------------------------------------------------------------------------- damaged state
def _set(key, value):
    def tamper(params, scalars, arrays):
        arrays[key] = value(arrays[key]) if callable(value) else value
    return tamper


def _cycle(params, scalars, arrays):
    """Features 1 and 2 each a parent of the other, with tables of the right shapes."""
    card = [arrays["classes_"].size, *arrays["cardinalities_"].tolist()]
    arrays["parent_sets_/1"] = np.array([0, 2])
    arrays["parent_sets_/2"] = np.array([0, 1])
    for v, other in ((1, 2), (2, 1)):
        arrays[f"cpts_/{v}"] = np.full((card[0] * card[other], card[v]), 1.0 / card[v])


def _drop(key):
    def tamper(params, scalars, arrays):
        del arrays[key]
    return tamper


def _cpt(v, change):
    return _set(f"cpts_/{v}", lambda t: change(t.copy()))


def _nan(t):
    t[0, 0] = np.nan
    return t


def _unnormalised(t):
    t[0] = t[0] / 2
    return t


def _extra_node(params, scalars, arrays):
    """One more node (no parents, one value) than the columns give."""
    n = scalars["cpts_"]
    scalars["cpts_"] = scalars["parent_sets_"] = n + 1
    arrays[f"cpts_/{n}"] = np.ones((1, 1))
    arrays[f"parent_sets_/{n}"] = np.zeros(0, dtype=np.int64)


def _numeric_column(arrays):
    """The first column with cut points (a numeric column the discretiser split)."""
    return next(int(k.split("/")[1]) for k, v in arrays.items()
                if k.startswith("cut_points_/") and v.size)


def _descending_cuts(params, scalars, arrays):
    f = _numeric_column(arrays)
    arrays[f"cut_points_/{f}"] = np.r_[arrays[f"cut_points_/{f}"], -1e9]
    arrays["cardinalities_"] = arrays["cardinalities_"].copy()
    arrays["cardinalities_"][f] += 1


def _cut_nominal_column(params, scalars, arrays):
    f = int(arrays["nominal_features_"][0])
    arrays[f"cut_points_/{f}"] = np.array([0.5])


DAMAGE = [
    # (what is wrong, tamper, text the message holds)
    ("parent index out of range", _set("parent_sets_/3", np.array([0, 99])), "parent_sets_.3"),
    ("node its own parent", _set("parent_sets_/3", np.array([3])), "parent_sets_.3"),
    ("a directed cycle", _cycle, "cycle"),
    ("parent indices of another dtype", _set("parent_sets_/2", lambda p: p.astype(np.float64)),
     "parent_sets_.2"),
    ("a CPT of the wrong shape", _cpt(4, lambda t: t[:, :-1]), "cpts_.4"),
    ("a CPT with an extra row", _cpt(0, lambda t: np.vstack([t, t])), "cpts_.0"),
    ("a negative probability", _cpt(1, lambda t: -t), "cpts_.1"),
    ("NaN in a CPT", _cpt(2, _nan), "cpts_.2"),
    ("a CPT row not summing to one", _cpt(2, _unnormalised), "cpts_.2"),
    ("a CPT missing", _drop("cpts_/5"), "cpts_"),
    ("more nodes than columns", _extra_node, "cpts_"),
    ("a mode outside its column", _set("modes_", lambda m: m + 50), "modes_"),
    ("modes of another length", _set("modes_", lambda m: m[:-1]), "modes_"),
    ("cardinalities of another dtype", _set("cardinalities_", lambda c: c.astype(np.int32)),
     "cardinalities_"),
    ("cardinalities that disagree with the cut points", _set("cardinalities_", lambda c: c + 1),
     "cardinalities_"),
    ("cut points out of order", _descending_cuts, "cut_points_"),
    ("an infinite cut point", lambda p, s, a: a.update(
        {f"cut_points_/{_numeric_column(a)}": np.array([np.inf])}), "cut_points_"),
    ("cut points in a nominal column", _cut_nominal_column, "cut_points_"),
    ("a nominal column out of range", _set("nominal_features_", lambda f: f + 100),
     "nominal_features_"),
    ("classes that are not the declared codes", _set("classes_", np.array([0, 5])), "classes_"),
    ("classes of another length than n_classes", _set("classes_", np.arange(3)), "classes_"),
    ("no classes_", _drop("classes_"), "classes_"),
    ("a missing scalar", lambda p, s, a: s.pop("n_features_in_"), "n_features_in_"),
    ("an extra entry", lambda p, s, a: a.update(extra_=np.zeros(1)), "extra_"),
]


@pytest.mark.parametrize("tamper, text", [d[1:] for d in DAMAGE], ids=[d[0] for d in DAMAGE])
def test_damaged_k2_state_is_refused_naming_the_entry(k2, tamper, text):
    with pytest.raises(DamagedModelError, match=text.replace(".", r"\.")):
        roundtrip(k2, K2Model, tamper=tamper)


def test_the_untampered_state_passes(k2):
    roundtrip(k2, K2Model, tamper=lambda p, s, a: None)


def test_a_bad_parent_index_would_break_the_drawing_without_the_check(k2):
    model = roundtrip(k2, K2Model)
    model.parent_sets_ = list(model.parent_sets_)
    model.parent_sets_[3] = np.array([0, 99])
    with pytest.raises(IndexError):
        model.to_dot()
    with pytest.raises(DamagedModelError, match=r"parent_sets_\.3"):
        roundtrip(k2, K2Model, tamper=_set("parent_sets_/3", np.array([0, 99])))


@pytest.fixture(scope="module")
def bagged(labor):
    X, y, kw = labor
    return BaggedK2Classifier(n_estimators=3, random_state=0, **kw).fit(X, y)


def _member_cycle(params, scalars, arrays):
    """_cycle applied to the first member's arrays."""
    prefix = "estimators_/0/"
    member = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
    _cycle(params, scalars, member)
    arrays.update({prefix + k: v for k, v in member.items()})


BAGGED_DAMAGE = [
    ("a member's class outside the ensemble's", _set("estimators_/0/classes_", np.array([0, 5])),
     "estimators_.0.classes_"),
    ("a member with fewer classes than declared", _set("estimators_/1/classes_", np.array([1])),
     "estimators_.1"),
    ("a member reading other columns", lambda p, s, a: s["estimators_"][2].update(
        n_features_in_=3), "estimators_.2"),
    ("a member's cycle", _member_cycle, "estimators_.0.parent_sets_"),
    ("fewer members than n_estimators", lambda p, s, a: s["estimators_"].pop(), "estimators_"),
    ("a bag index out of range", _set("estimators_samples_/1", lambda b: b + 10**6),
     "estimators_samples_.1"),
    ("an empty bag", _set("estimators_samples_/0", np.zeros(0, dtype=np.int64)),
     "estimators_samples_.0"),
    ("a bag larger than the training set", _set("estimators_samples_/0",
                                                 lambda b: np.concatenate([b, b])),
     "estimators_samples_.0: holds"),
    ("bags of another dtype", _set("estimators_samples_/2", lambda b: b.astype(np.int32)),
     "estimators_samples_.2"),
    ("a missing bag", _drop("estimators_samples_/2"), "estimators_samples_"),
    ("NaN in a member's CPT", _set("estimators_/1/cpts_/0", np.array([[np.nan, 1.0]])),
     "estimators_.1.cpts_.0"),
    ("ensemble classes not the declared codes", _set("classes_", np.array([1, 2])), "classes_"),
]


@pytest.mark.parametrize("tamper, text", [d[1:] for d in BAGGED_DAMAGE],
                         ids=[d[0] for d in BAGGED_DAMAGE])
def test_damaged_bagged_k2_state_is_refused_naming_the_entry(bagged, tamper, text):
    with pytest.raises(DamagedModelError, match=text.replace(".", r"\.")):
        roundtrip(bagged, tamper=tamper)


# --------------------------------------------------------------------------- numpy only
def _save_state(path: Path, est):
    params, scalars, arrays = stored(est)
    np.savez(path / "arrays.npz", **{k.replace("/", "|"): v for k, v in arrays.items()})
    (path / "state.json").write_text(json.dumps({"params": params, "scalars": scalars}))


_NUMPY_ONLY = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import numpy as np
    from ensemblekit import state
    from ensemblekit.bayesnet.classifier_model import K2Model
    from ensemblekit.bayesnet.inner_model import InnerEnsembleK2Model
    {extra_import}
    here = Path(sys.argv[1])
    saved = json.loads((here / "state.json").read_text())
    with np.load(here / "arrays.npz", allow_pickle=False) as npz:
        arrays = {{"model/" + k.replace("|", "/"): npz[k] for k in npz.files}}
    X = np.load(here / "X.npy", allow_pickle=False)
    model = state.restore({cls}, saved["params"], saved["scalars"], arrays)
    proba = model.predict_proba(X)
    model.predict(X)
    {describe}
    loaded = sorted(m for m in ("sklearn", "scipy", "numba", "joblib", "skops")
                    if m in sys.modules)
    print(json.dumps({{"loaded": loaded, "proba": proba.tobytes().hex()}}))
""")


def _predict_in_fresh_interpreter(tmp_path, est, X, cls, extra_import="", describe=""):
    _save_state(tmp_path, est)
    np.save(tmp_path / "X.npy", X)
    code = _NUMPY_ONLY.format(cls=cls, extra_import=extra_import, describe=describe)
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_predicting_with_a_rebuilt_network_imports_no_scikit_learn(tmp_path, k2, labor):
    X = labor[0]
    out = _predict_in_fresh_interpreter(tmp_path, k2, X, "K2Model",
                                        describe="model.network(); model.to_dot()")
    assert out["loaded"] == []
    assert bytes.fromhex(out["proba"]) == k2.predict_proba(X).tobytes()


def test_predicting_with_a_rebuilt_bagging_imports_no_scikit_learn(tmp_path, bagged, labor):
    X = labor[0]
    out = _predict_in_fresh_interpreter(
        tmp_path, bagged, X, "BaggedK2Model",
        extra_import="from ensemblekit.bayesnet.bagging_model import BaggedK2Model",
        describe="[m.to_dot() for m in model.estimators_]; model.estimators_samples_")
    assert out["loaded"] == []
    assert bytes.fromhex(out["proba"]) == bagged.predict_proba(X).tobytes()
