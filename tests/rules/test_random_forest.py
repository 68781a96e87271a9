"""`random-forest` is Breiman's random forest grown as an ISLE ensemble (issue 21, part 3).

Breiman's forest is ISLE with memory 0, bootstrap samples, deep trees and equal weights
(Akdemir & Jannink 2014, Sect. 1.1). Reference: scikit-learn's RandomForestRegressor,
whose trees ours must equal for the same seed; `isle-average` keeps the former
`random-forest` (the default ISLE trees averaged).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.utils import check_random_state

from ensemblekit import api, registry, trust
from ensemblekit.rules.isle import generate_isle
from ensemblekit.rules.postprocess import RuleEnsembleRegressor

from ektesting.state_roundtrip import roundtrip
from ektesting.support import registry_dataset


def _friedman(n=160, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, 6)
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] \
        + rng.randn(n)
    return X, y


def _same_tree(a, b) -> bool:
    ta, tb = a.tree_, b.tree_
    return (ta.node_count == tb.node_count and np.array_equal(ta.feature, tb.feature)
            and np.array_equal(ta.threshold, tb.threshold) and np.array_equal(ta.value, tb.value))


@pytest.mark.parametrize("max_features, min_samples_leaf, seed",
                         [(1.0, 1, 0), (0.4, 1, 3), (1.0, 5, 11), (0.5, 3, 2024)])
def test_bootstrap_isle_trees_are_scikit_learns_forest_trees(max_features, min_samples_leaf, seed):
    X, y = _friedman()
    ensemble = generate_isle(X, y, n_estimators=12, max_depth=None, bootstrap=True,
                             max_features=max_features, min_samples_leaf=min_samples_leaf,
                             random_state=seed)
    forest = RandomForestRegressor(n_estimators=12, max_features=max_features,
                                   min_samples_leaf=min_samples_leaf, random_state=seed).fit(X, y)
    assert all(_same_tree(a, b) for a, b in zip(ensemble.trees, forest.estimators_, strict=True))
    X_new = np.random.RandomState(seed + 1).rand(40, 6)
    np.testing.assert_allclose(ensemble.outputs(X_new).mean(axis=1), forest.predict(X_new),
                               rtol=0, atol=1e-12)


def test_bootstrap_samples_are_the_rows_drawn_with_replacement_and_oob_their_complement():
    X, y = _friedman(200)
    ensemble = generate_isle(X, y, n_estimators=30, max_depth=None, bootstrap=True, random_state=5)
    oob = ensemble.out_of_bag(200)
    for j, (tree, rows) in enumerate(zip(ensemble.trees, ensemble.samples)):
        # the tree's own seed draws N row numbers with replacement; the sample is the set drawn
        drawn = check_random_state(tree.random_state).randint(0, 200, 200)
        assert np.array_equal(rows, np.unique(drawn))
        assert np.array_equal(np.flatnonzero(~oob[:, j]), rows)
    # a bootstrap of N rows holds 1 - (1 - 1/N)^N ~ 63.3% of them on average
    share = np.mean([rows.size / 200 for rows in ensemble.samples])
    assert abs(share - (1 - (1 - 1 / 200) ** 200)) < 0.03


def test_bootstrap_size_follows_max_samples():
    X, y = _friedman(200)
    ensemble = generate_isle(X, y, n_estimators=5, max_depth=None, bootstrap=True,
                             max_samples=0.25, random_state=0)
    for tree, rows in zip(ensemble.trees, ensemble.samples):
        drawn = check_random_state(tree.random_state).randint(0, 200, 50)
        assert np.array_equal(rows, np.unique(drawn))
        # every leaf's weight counts the drawn rows, so the root holds all 50 draws
        assert tree.tree_.weighted_n_node_samples[0] == 50


def _registry_model(name, settings=None, seed=1):
    spec, ds = registry_dataset(name)
    model = registry.make_estimator(name, ds.schema, spec.resolve(settings or {}), seed)
    return model.fit(ds.X, ds.y), ds


def test_random_forest_entry_is_scikit_learns_forest_on_the_same_columns():
    model, ds = _registry_model("random-forest", {"n_estimators": "25", "max_features": "0.33"})
    est = model.named_steps["model"]
    assert (est.method, est.basis, est.bootstrap, est.max_depth, est.min_samples_leaf,
            est.learning_rate) == ("mean", "trees", True, None, 1, 0.0)
    columns = model[:-1].transform(ds.X)
    # RuleEnsembleRegressor draws the ISLE seed first from its random_state
    isle_seed = int(check_random_state(est.random_state).randint(np.iinfo(np.int32).max, size=2)[0])
    forest = RandomForestRegressor(n_estimators=25, max_features=0.33,
                                   random_state=isle_seed).fit(columns, ds.y)
    assert all(_same_tree(a, b) for a, b in zip(est.trees_, forest.estimators_, strict=True))
    np.testing.assert_allclose(model.predict(ds.X), forest.predict(columns), rtol=0, atol=1e-10)
    assert est.intercept_ == 0 and np.all(est.coef_ == 1 / 25)


def test_random_forest_defaults_are_scikit_learns_regression_defaults():
    spec = registry.get("random-forest")
    defaults = spec.defaults()
    forest = RandomForestRegressor()
    assert defaults["max_features"] == forest.max_features == 1.0
    assert defaults["min_samples_leaf"] == forest.min_samples_leaf == 1
    assert defaults["max_depth"] is forest.max_depth is None
    assert spec.fixed["bootstrap"] is True and spec.fixed["learning_rate"] == 0.0


def test_isle_average_is_the_former_random_forest():
    # the equal-weight average of the default ISLE trees (subsamples, depth 3, memory 0)
    model, ds = _registry_model("isle-average", {"n_estimators": "15"})
    est = model.named_steps["model"]
    direct = RuleEnsembleRegressor(method="mean", basis="trees", learning_rate=0.0,
                                   n_estimators=15, random_state=est.random_state)
    columns = model[:-1].transform(ds.X)
    direct.fit(columns, ds.y)
    assert est.bootstrap is False and est.max_depth == 3
    assert all(_same_tree(a, b) for a, b in zip(est.trees_, direct.trees_, strict=True))
    assert np.array_equal(model.predict(ds.X), direct.predict(columns))
    assert max(t.tree_.max_depth for t in est.trees_) == 3


def test_deep_forest_beats_the_depth_3_average_on_friedman_data():
    X, y = _friedman(400, 7)
    X_test, y_test = _friedman(400, 8)
    forest = RuleEnsembleRegressor(method="mean", basis="trees", learning_rate=0.0, max_depth=None,
                                   bootstrap=True, max_features=0.5, n_estimators=60,
                                   random_state=0).fit(X, y)
    average = RuleEnsembleRegressor(method="mean", basis="trees", learning_rate=0.0,
                                    n_estimators=60, random_state=0).fit(X, y)
    assert forest.rules_ is None  # no rules are taken from the deep trees

    def rmse(model):
        return np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2))

    assert rmse(forest) < rmse(average)


def test_oob_weighting_accepts_bootstrap_samples_of_all_rows():
    X, y = _friedman(150)
    model = RuleEnsembleRegressor(method="oob", basis="trees", learning_rate=0.0, max_depth=None,
                                  bootstrap=True, max_samples=1.0, n_estimators=10, cv=3,
                                  random_state=0).fit(X, y)
    assert model.coef_.sum() == pytest.approx(1.0)


# ---------------------------------------------------------------------- model files
def test_a_random_forest_model_file_round_trips(tmp_path):
    spec, ds = registry_dataset("random-forest")
    fitted = api.fit("random-forest", ds, params={"n_estimators": 10}, seed=1)
    path = tmp_path / "rf.ekm"
    api.save_model(fitted, path)
    loaded = api.load_model(path).pipeline
    assert type(loaded.named_steps["model"]).__name__ == "RuleEnsembleModel"
    assert loaded.predict(ds.X).tobytes() == fitted.pipeline.predict(ds.X).tobytes()


def _corrupt_coef(params, scalars, arrays):
    arrays["coef_"] = arrays["coef_"] * 2


def _corrupt_intercept(params, scalars, arrays):
    scalars["intercept_"] = 1.0


def _corrupt_child(params, scalars, arrays):
    # the first child of tree 3's root points past the end of its tree
    left = arrays["tree_children_left_"].copy()
    left[int(arrays["tree_node_count_"][:3].sum())] = 10**6
    arrays["tree_children_left_"] = left


@pytest.mark.parametrize("corrupt, says", [(_corrupt_coef, "equal weights"),
                                           (_corrupt_intercept, "equal weights"),
                                           (_corrupt_child, "tree_children_left_")])
def test_a_damaged_random_forest_is_refused(corrupt, says):
    model, ds = _registry_model("random-forest", {"n_estimators": "10"})
    est = model.named_steps["model"]
    rebuilt = roundtrip(est)
    X = model[:-1].transform(ds.X)
    assert rebuilt.predict(X).tobytes() == est.predict(X).tobytes()
    with pytest.raises(trust.DamagedModelError, match=says):
        roundtrip(est, tamper=corrupt)


def test_variable_importances_are_the_forests_mean_decrease_in_impurity():
    X, y = _friedman(200, 4)
    model = RuleEnsembleRegressor(method="mean", basis="trees", learning_rate=0.0, max_depth=None,
                                  bootstrap=True, n_estimators=20, random_state=3).fit(X, y)
    isle_seed = int(check_random_state(3).randint(np.iinfo(np.int32).max, size=2)[0])
    forest = RandomForestRegressor(n_estimators=20, random_state=isle_seed).fit(X, y)
    np.testing.assert_allclose(model.feature_importances_, forest.feature_importances_, atol=1e-12)
    # y depends on x0..x3 only: the two noise columns get the least
    assert set(np.argsort(model.feature_importances_)[:2]) == {4, 5}


def test_a_constant_target_gives_zero_importances():
    X, _ = _friedman(30)
    model = RuleEnsembleRegressor(method="mean", basis="trees", learning_rate=0.0, max_depth=None,
                                  bootstrap=True, n_estimators=5, random_state=0).fit(X, np.ones(30))
    assert np.array_equal(model.feature_importances_, np.zeros(6))
    assert np.array_equal(model.predict(X), np.ones(30))
