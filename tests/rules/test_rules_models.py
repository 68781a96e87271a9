"""Rule ensembles and ISCA as model classes: arrays in, the same bits out, numpy alone (issue 28).

Every registry entry of the family is fitted small on real data, its declared state is
stored and rebuilt as its model class (``ektesting.state_roundtrip``), and the rebuilt
model must predict and describe exactly what the fitted estimator does -- and what the
scikit-learn trees and scipy's sparse rule matrix gave before the split. Damaged states
are refused, naming the entry; a restored model predicts without scikit-learn, scipy or
numba in the process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ensemblekit import registry, trust
from ensemblekit.rules.isca_model import ISCAModel
from ensemblekit.rules.postprocess_model import RuleEnsembleModel

from ektesting.state_roundtrip import roundtrip, stored
from ektesting.support import registry_dataset

_SMALL = {"n_estimators": "6", "cv": "3"}
VARIANTS = [
    ("rule-lasso", _SMALL), ("rule-lasso", {**_SMALL, "linear_terms": "true"}),
    ("tree-lasso", _SMALL), ("tree-lasso", {**_SMALL, "linear_terms": "true"}),
    ("rule-pls", _SMALL), ("rule-pls", {**_SMALL, "linear_terms": "true"}),
    ("tree-pls", _SMALL), ("tree-pls", {**_SMALL, "linear_terms": "true"}),
    ("oob-weighted", _SMALL), ("oob-weighted-top", _SMALL),
    ("rule-kernel", _SMALL), ("tree-kernel", _SMALL), ("isle-average", _SMALL),
    ("random-forest", {"n_estimators": "6"}),
    ("rule-lasso", {**_SMALL, "tree_size": "random", "max_depth": "4"}),
]
_FITTED: dict = {}


def _fitted(name, settings):
    """The fitted pipeline of a registry entry on housing, its estimator and rows to predict.

    The rows are the training rows with a few values missing (the pipeline imputes them),
    then the same rows moved by noise, so new values fall between and beyond the splits.
    """
    key = (name, tuple(sorted(settings.items())))
    if key not in _FITTED:
        spec, ds = registry_dataset(name)
        pipe = registry.make_estimator(name, ds.schema, spec.resolve(settings), 1).fit(ds.X, ds.y)
        raw = ds.X.copy()
        raw[::7, 0] = np.nan
        rows = pipe[:-1].transform(raw)
        noise = np.random.RandomState(0).normal(scale=0.3, size=rows.shape) * rows.std(axis=0)
        _FITTED[key] = (pipe.named_steps["model"], np.vstack([rows, rows + noise]),
                        pipe[:-1].transform(ds.X))
    return _FITTED[key]


def _before_the_split(est, X, X_train):
    """The prediction as the estimator computed it before issue 28: scipy and the sklearn trees."""
    import scipy.sparse as sp
    from threadpoolctl import threadpool_limits

    from ensemblekit.rules.postprocess import _nadaraya_watson, _squared_distances

    if est.basis == "rules":
        Z = est.rules_.transform(X)
    else:
        Z = np.column_stack([t.predict(X) for t in est.trees_])
    if est.linear_scale_ is not None:
        linear = np.clip(X, est.linear_bounds_[0], est.linear_bounds_[1]) * est.linear_scale_
        Z = sp.hstack([Z, sp.csc_matrix(linear)], format="csc") if sp.issparse(Z) \
            else np.hstack([Z, linear])
    with threadpool_limits(limits=1, user_api="blas"):
        if est.method != "kernel":
            return np.asarray(Z @ est.coef_).ravel() + est.intercept_
        train = est.rules_.transform(X_train) if est.basis == "rules" else est.train_basis_
        out = np.empty(Z.shape[0])
        for start in range(0, Z.shape[0], 512):
            D2 = _squared_distances(Z[start:start + 512], train)
            out[start:start + 512] = _nadaraya_watson(D2, est.train_target_, est.bandwidth_)
        return out


@pytest.mark.parametrize("name, settings", VARIANTS)
def test_the_rebuilt_model_predicts_the_same_bits(name, settings):
    est, X, X_train = _fitted(name, settings)
    model = roundtrip(est, RuleEnsembleModel)
    assert type(model) is RuleEnsembleModel
    expected = est.predict(X)
    assert model.predict(X).tobytes() == expected.tobytes()
    assert _before_the_split(est, X, X_train).tobytes() == expected.tobytes()
    names = [f"a{j}" for j in range(est.n_features_in_)]
    assert model.ranked_terms(names) == est.ranked_terms(names)
    assert model.term_descriptions(names) == est.term_descriptions(names)
    assert len(model.trees_) == len(est.trees_)
    if est.basis == "rules":
        assert model.rules_.rules == est.rules_.rules
        assert (model.rules_.n_rules, model.rules_.n_candidates) == (est.rules_.n_rules,
                                                                   est.rules_.n_candidates)
        assert np.array_equal(model.rules_.transform(X), est.rules_.transform(X).toarray())
    else:
        assert model.rules_ is None
        for mine, theirs in zip(model.trees_, est.trees_, strict=True):
            assert mine.predict(X).tobytes() == theirs.predict(X).tobytes()


def test_a_value_beyond_float32_is_refused_as_the_trees_refuse_it():
    est, X, _ = _fitted("tree-pls", _SMALL)
    model = roundtrip(est)
    with pytest.raises(ValueError, match="too large for dtype\\('float32'\\)"):
        model.predict(np.full((1, X.shape[1]), 1e300))


def _set(name, change):
    """A tamper hook replacing the stored array (or scalar) ``name`` by ``change(old)``."""
    def tamper(params, scalars, arrays):
        key = name
        if key in arrays:
            arrays[key] = change(arrays[key])
        else:
            scalars[name] = change(scalars[name])
    return tamper


def _drop(name):
    def tamper(params, scalars, arrays):
        arrays.pop(name, None)
        scalars.pop(name, None)
    return tamper


def _first(value):
    def change(a):
        a = a.copy()
        a.flat[0] = value
        return a
    return change


def _tree_cycle(params, scalars, arrays):
    # the root's left child is the root itself: a walk would never end
    left = arrays["tree_children_left_"].copy()
    left[0] = 0
    arrays["tree_children_left_"] = left


def _second_parent(params, scalars, arrays):
    # the root's right child is also its left child: that node has two parents
    right = arrays["tree_children_right_"].copy()
    right[0] = arrays["tree_children_left_"][0]
    arrays["tree_children_right_"] = right


def _shorter_weights(params, scalars, arrays):
    for name in ("coef_", "term_importances_"):
        arrays[name] = arrays[name][:-1].copy()


def _trees_beside_rules(params, scalars, arrays):
    arrays["tree_value_"] = np.zeros(3)


DAMAGE = [
    ("rule-lasso", _set("condition_feature_", _first(10**6)), "condition_feature_"),
    ("rule-lasso", _set("condition_threshold_", _first(np.nan)), "condition_threshold_"),
    ("rule-lasso", _set("condition_feature_", lambda a: a.astype(np.int32)), "condition_feature_"),
    ("rule-lasso", _set("rule_length_", _first(40)), "rule_length_"),
    ("rule-lasso", _set("rule_support_", _first(1.5)), "rule_support_"),
    ("rule-lasso", _set("coef_", lambda a: a[:-1].copy()), "term_importances_"),
    ("rule-lasso", _shorter_weights, "coef_ does not hold one value for each"),
    ("rule-lasso", _drop("condition_greater_"), "condition_greater_"),
    ("rule-lasso", _drop("n_candidates_"), "n_candidates_"),
    ("rule-lasso", _trees_beside_rules, "tree_value_"),
    ("rule-lasso", _set("alpha_", lambda a: "big"), "alpha_"),
    ("tree-pls", _tree_cycle, "tree_children_left_"),
    ("tree-pls", _second_parent, "two parents"),
    ("tree-pls", _set("tree_children_left_", _first(10**6)), "tree_children_left_"),
    ("tree-pls", _set("tree_feature_", _first(99)), "tree_feature_"),
    ("tree-pls", _set("tree_value_", _first(np.nan)), "tree_value_"),
    ("tree-pls", _set("tree_node_count_", _first(1)), "tree_node_count_"),
    ("tree-pls", _set("tree_threshold_", lambda a: a[:-1].copy()), "tree_threshold_"),
    ("tree-kernel", _set("train_target_", lambda a: a[:-1].copy()), "train_basis_"),
    ("rule-kernel", _set("train_rules_", lambda a: a[:, :-1].copy()), "train_rules_"),
    ("rule-kernel", _set("bandwidth_", lambda a: None), "bandwidth_"),
    # values no fit gives, whose squares would overflow the kernel's distances (issue 29)
    ("tree-kernel", _set("train_target_", _first(1e308)), "train_target_"),
    ("tree-kernel", _set("train_basis_", _first(1e300)), "train_basis_"),
    ("tree-kernel", _set("tree_value_", _first(-1e300)), "tree_value_"),
    ("rule-kernel", _set("train_target_", _first(-1e101)), "train_target_"),
]


@pytest.mark.parametrize("name, tamper, says", DAMAGE)
def test_a_damaged_state_is_refused_naming_the_entry(name, tamper, says):
    est = _fitted(name, _SMALL)[0]
    with pytest.raises(trust.DamagedModelError, match=says):
        roundtrip(est, tamper=tamper)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("name", ["tree-kernel", "rule-kernel"])
def test_a_kernel_width_whose_square_underflows_leaves_the_nearest_rows(name):
    est, rows, _ = _fitted(name, _SMALL)
    model = roundtrip(est, tamper=_set("bandwidth_", lambda h: 1e-200))
    got = model.predict(rows)
    assert np.isfinite(got).all()
    # each row gets the mean target of its nearest training rows, a value among the targets
    assert got.min() >= est.train_target_.min() and got.max() <= est.train_target_.max()


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_stored_weights_that_overflow_a_prediction_are_refused_in_one_line():
    est, rows, _ = _fitted("tree-pls", _SMALL)
    model = roundtrip(est, tamper=_set("coef_", lambda c: np.full_like(c, 1e308)))
    with pytest.raises(ValueError, match=r"^the model's prediction for row 1 is -?inf: its "
                                         r"stored weights overflow, which no fit gives"):
        model.predict(rows)


# ---------------------------------------------------------------------- ISCA
def _isca(name, settings):
    key = (name, tuple(sorted(settings.items())))
    if key not in _FITTED:
        spec, ds = registry_dataset(name)
        if spec.needs_targets:
            reduced, Y, _ = ds.split_targets(["petalwidth"])
            pipe = registry.make_estimator(name, reduced.schema, spec.resolve(settings), 1)
            pipe.fit(reduced.X, Y)
        else:
            pipe = registry.make_estimator(name, ds.schema, spec.resolve(settings), 1).fit(ds.X)
        _FITTED[key] = pipe.named_steps["model"]
    return _FITTED[key]


ISCAS = [("isca", {"n_stages": "4"}), ("isca", {"n_stages": "4", "linkage": "single"}),
         ("ss-isca", {"n_stages": "4", "similarity": "importance"})]


@pytest.mark.parametrize("name, settings", ISCAS)
def test_a_rebuilt_isca_describes_its_rules_and_keeps_its_similarity(name, settings):
    est = _isca(name, settings)
    model = roundtrip(est, ISCAModel)
    assert type(model) is ISCAModel
    names = [f"a{j}" for j in range(est.n_features_in_)]
    assert model.describe_rules(names) == est.describe_rules(names)
    assert model.describe_rules(names, top=3) == [r.describe(names, est.binary_features_)
                                                  for r in est.rules_.rules[:3]]
    assert model.rules_.rules == est.rules_.rules
    assert np.array_equal(model.labels_, est.labels_)
    assert model.similarity_.tobytes() == est.similarity_.tobytes()


ISCA_DAMAGE = [
    (_set("linkage_matrix_", lambda z: z[::-1].copy()), "linkage_matrix_"),
    (_set("linkage_matrix_", lambda z: z[1:].copy()), "linkage_matrix_"),
    (_set("labels_", lambda lab: lab + 3), "labels_"),
    (_set("n_rules_", lambda n: 10**6), "rule_tree_"),
    (_set("rule_stages_", lambda s: s + 5), "rule_stages_"),
    (_set("rule_matrix_", lambda m: m[:, :-1].copy()), "rule_matrix_"),
    (_set("condition_feature_", _first(-1)), "condition_feature_"),
    (_set("rule_weights_", _first(np.inf)), "rule_weights_"),
    (_drop("labels_"), "labels_"),
]


@pytest.mark.parametrize("tamper, says", ISCA_DAMAGE)
def test_a_damaged_isca_state_is_refused_naming_the_entry(tamper, says):
    est = _isca("isca", {"n_stages": "4"})
    with pytest.raises(trust.DamagedModelError, match=says):
        roundtrip(est, tamper=tamper)


# ---------------------------------------------------------------------- numpy only
_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from ensemblekit import state
    from ensemblekit.rules.isca_model import ISCAModel
    from ensemblekit.rules.postprocess_model import RuleEnsembleModel

    cases = json.load(open(sys.argv[1]))
    arrays = np.load(sys.argv[2], allow_pickle=False)
    X = arrays["X"]
    out = []
    for i, (kind, params, scalars) in enumerate(cases):
        mine = {"model/" + k.split("|", 1)[1]: arrays[k] for k in arrays.files
                if k.startswith(f"{i}|")}
        cls = ISCAModel if kind == "isca" else RuleEnsembleModel
        model = state.restore(cls, params, scalars, mine)
        if kind == "isca":
            out.append([model.describe_rules(top=5), model.similarity_.tobytes().hex()])
        else:
            out.append([model.predict(X).tobytes().hex(), model.ranked_terms(top=3)])
    loaded = sorted(m for m in ("sklearn", "scipy", "numba", "joblib", "skops") if m in sys.modules)
    print(json.dumps({"loaded": loaded, "out": out}))
""")


def test_restored_models_predict_without_scikit_learn_scipy_or_numba(tmp_path):
    cases, arrays, expected = [], {}, []
    X = _fitted(*VARIANTS[0])[1]
    for name, settings in (VARIANTS[1], VARIANTS[3], VARIANTS[10], VARIANTS[11], VARIANTS[13]):
        est = _fitted(name, settings)[0]
        params, scalars, stored_arrays = stored(est)
        i = len(cases)
        cases.append(["rules", params, scalars])
        arrays.update({f"{i}|{k}": v for k, v in stored_arrays.items()})
        expected.append([est.predict(X).tobytes().hex(), est.ranked_terms(top=3)])
    est = _isca("isca", {"n_stages": "4"})
    params, scalars, stored_arrays = stored(est)
    cases.append(["isca", params, scalars])
    arrays.update({f"{len(cases) - 1}|{k}": v for k, v in stored_arrays.items()})
    expected.append([est.describe_rules(top=5), est.similarity_.tobytes().hex()])
    arrays["X"] = X
    np.savez(tmp_path / "arrays.npz", **arrays)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / "child.py").write_text(_CHILD)
    done = subprocess.run([sys.executable, str(tmp_path / "child.py"), str(tmp_path / "cases.json"),
                           str(tmp_path / "arrays.npz")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["loaded"] == []
    assert result["out"] == json.loads(json.dumps(expected))


@pytest.mark.parametrize("linkage", ["average", "single"])
def test_a_rebuilt_isca_cuts_its_tree_as_the_consensus_helpers_do(linkage):
    from ensemblekit.clustering.consensus import cut_dendrogram, first_occurrence_order

    est = _isca("isca", {"n_stages": "4", "linkage": linkage})
    model = roundtrip(est, ISCAModel)
    n = est.labels_.size
    assert np.array_equal(model.labels_for(est.n_clusters), est.labels_)
    for k in range(1, n + 1):
        expected = (np.arange(n) if k == n else np.zeros(n, dtype=np.intp) if k == 1 else
                    first_occurrence_order(cut_dendrogram(est.linkage_matrix_, n, k)))
        assert np.array_equal(model.labels_for(k), expected)
    for bad in (0, n + 1, 2.0, True):
        with pytest.raises(ValueError, match="n_clusters"):
            model.labels_for(bad)
