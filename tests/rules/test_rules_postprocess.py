"""Post-processing of ISLE trees and rules (Akdemir & Jannink 2014, Sect. 2)."""

import numpy as np
import pytest
from sklearn.cross_decomposition import PLSRegression
from sklearn.linear_model import Lasso

from ensemblekit import registry
from ensemblekit.rules.postprocess import (
    RuleEnsembleRegressor,
    _folds,
    _nadaraya_watson,
    _pls_fit,
    _pls_path,
)

from ektesting.estimator_checks import parametrize_with_checks_per_class


def _friedman(n, seed):
    """Friedman & Popescu's simulated data (Akdemir & Jannink Example 3), with 20 inputs."""
    rng = np.random.RandomState(seed)
    X = rng.rand(n, 20)
    y = 10 * np.exp(-2 * X[:, :5] ** 2).prod(axis=1) + X[:, 5:15].sum(axis=1) + rng.randn(n)
    return X, y


def _seeds(random_state):
    rng = np.random.RandomState(random_state)
    return rng.randint(np.iinfo(np.int32).max, size=2)


@parametrize_with_checks_per_class([
    RuleEnsembleRegressor(method="pls", n_estimators=5, cv=3, random_state=0),
], variants=[
    RuleEnsembleRegressor(method="lasso", basis="trees", n_estimators=5, cv=3, random_state=0),
    RuleEnsembleRegressor(method="oob", basis="trees", learning_rate=0.0, top_fraction=0.6,
                          n_estimators=5, cv=3, random_state=0),
    RuleEnsembleRegressor(method="kernel", n_estimators=5, cv=3, random_state=0),
])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_pls_models_with_fewer_components_come_from_one_fit():
    rng = np.random.RandomState(0)
    Z, y = rng.rand(60, 25), rng.rand(60)
    path = _pls_path(Z, y, Z[:10], 6)
    for a in range(1, 7):
        direct = PLSRegression(n_components=a, scale=False).fit(Z, y).predict(Z[:10]).ravel()
        np.testing.assert_allclose(path[:, a - 1], direct, atol=1e-10)
        coef, intercept = _pls_fit(Z, y, a)
        np.testing.assert_allclose(Z[:10] @ coef + intercept, direct, atol=1e-10)


def test_pls_components_minimise_the_inner_cross_validated_error():
    X, y = _friedman(200, 1)
    model = RuleEnsembleRegressor(method="pls", n_estimators=20, max_components=8, cv=5,
                                  random_state=4).fit(X, y)
    Z = model.rules_.transform(X).toarray()
    folds = _folds(X.shape[0], 5, int(_seeds(4)[1]))
    errors = []
    for a in range(1, 9):
        sse = 0.0
        for train, test in folds:
            fitted = PLSRegression(n_components=a, scale=False).fit(Z[train], y[train])
            sse += ((fitted.predict(Z[test]).ravel() - y[test]) ** 2).sum()
        errors.append(sse)
    assert model.n_components_ == int(np.argmin(errors)) + 1
    reference = PLSRegression(n_components=model.n_components_, scale=False).fit(Z, y)
    np.testing.assert_allclose(model.predict(X), reference.predict(Z).ravel(), atol=1e-9)


def test_lasso_weights_solve_the_lasso_at_the_chosen_penalty():
    X, y = _friedman(200, 2)
    model = RuleEnsembleRegressor(method="lasso", n_estimators=20, cv=5, random_state=0).fit(X, y)
    Z = model.rules_.transform(X).toarray()
    reference = Lasso(alpha=model.alpha_, tol=1e-12, max_iter=100000).fit(Z, y)
    np.testing.assert_allclose(model.coef_, reference.coef_, atol=1e-6)
    assert model.intercept_ == pytest.approx(reference.intercept_, abs=1e-6)
    assert 0 < np.count_nonzero(model.coef_) < Z.shape[1]  # sparse, as RuleFit


def test_oob_weights_by_hand():
    # tree 0 is out of bag for rows 0, 1 (errors 1, 0); tree 1 for rows 1, 2 (errors 2, 0)
    errors = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    usable = np.array([[True, False], [True, True], [False, True]])
    w0 = np.exp(-0.5) + 1.0
    w1 = np.exp(-2.0) + 1.0
    weights = RuleEnsembleRegressor()._oob_weights(errors, usable, 1.0)
    np.testing.assert_allclose(weights, [w0 / (w0 + w1), w1 / (w0 + w1)])
    np.testing.assert_allclose(RuleEnsembleRegressor()._oob_weights(errors, usable, np.inf), [0.5, 0.5])
    np.testing.assert_allclose(RuleEnsembleRegressor(top_fraction=0.5)._oob_weights(errors, usable, 1.0),
                               [1.0, 0.0])
    # tiny bandwidths do not underflow: every kernel value is 0.0 in floating point here (a
    # plain sum would give 0/0), and the tree with the smallest out-of-bag error takes it all
    inexact = np.array([[1.0, 0.0], [0.5, 2.0], [0.0, 1.0]])  # smallest: 0.5 (tree 0), 1.0 (tree 1)
    assert np.exp(-inexact[usable] ** 2 / (2 * 1e-6 ** 2)).max() == 0.0
    np.testing.assert_allclose(RuleEnsembleRegressor()._oob_weights(inexact, usable, 1e-6), [1.0, 0.0])


def test_oob_weighted_prediction_is_the_weighted_mean_of_tree_outputs():
    X, y = _friedman(300, 3)
    model = RuleEnsembleRegressor(method="oob", basis="trees", learning_rate=0.0, top_fraction=0.6,
                                  n_estimators=30, random_state=0).fit(X, y)
    outputs = np.column_stack([t.predict(X[:7]) for t in model.trees_])
    assert model.coef_.sum() == pytest.approx(1.0)
    assert np.count_nonzero(model.coef_) == 18  # 60% of 30 trees
    np.testing.assert_allclose(model.predict(X[:7]), outputs @ model.coef_)


def test_random_forest_weights_are_equal():
    X, y = _friedman(200, 4)
    model = RuleEnsembleRegressor(method="mean", basis="trees", learning_rate=0.0, n_estimators=12,
                                  random_state=0).fit(X, y)
    outputs = np.column_stack([t.predict(X) for t in model.trees_])
    np.testing.assert_allclose(model.predict(X), outputs.mean(axis=1))


def test_nadaraya_watson_by_hand():
    D2 = np.array([[0.0, 1.0, 4.0], [9.0, 9.0, 9.0]])
    y = np.array([1.0, 2.0, 3.0])
    w = np.exp([0.0, -0.5, -2.0])
    np.testing.assert_allclose(_nadaraya_watson(D2, y, 1.0), [(w @ y) / w.sum(), 2.0])
    # far below the distances: the nearest row only, without 0/0
    np.testing.assert_allclose(_nadaraya_watson(D2[:1] + 1000.0, y, 1e-3), [1.0])


def test_kernel_smoothing_predicts_with_the_training_rows_and_chosen_bandwidth():
    X, y = _friedman(150, 5)
    model = RuleEnsembleRegressor(method="kernel", basis="trees", n_estimators=10, cv=5,
                                  random_state=0).fit(X, y)
    T_train = np.column_stack([t.predict(X) for t in model.trees_])
    T_new = np.column_stack([t.predict(X[:5]) for t in model.trees_])
    D2 = ((T_new[:, None, :] - T_train[None, :, :]) ** 2).sum(-1)
    w = np.exp(-D2 / (2 * model.bandwidth_ ** 2))
    np.testing.assert_allclose(model.predict(X[:5]), (w @ y) / w.sum(1), rtol=1e-9)
    assert model.coef_ is None and not model.feature_importances_.any()


def test_importances_follow_section_2_1():
    X, y = _friedman(250, 6)
    model = RuleEnsembleRegressor(method="pls", n_estimators=20, random_state=0).fit(X, y)
    s = np.asarray(model.rules_.transform(X).mean(axis=0)).ravel()
    np.testing.assert_allclose(model.rules_.support, s)
    np.testing.assert_allclose(model.term_importances_, np.abs(model.coef_) * np.sqrt(s * (1 - s)))
    by_hand = np.zeros(X.shape[1])
    for rule, importance in zip(model.rules_.rules, model.term_importances_):
        by_hand[list(rule.features)] += importance
    np.testing.assert_allclose(model.feature_importances_, by_hand)
    # the signal lives in the first 15 inputs
    assert set(np.argsort(-model.feature_importances_)[:5]) <= set(range(15))

    trees = RuleEnsembleRegressor(method="pls", basis="trees", n_estimators=20,
                                  random_state=0).fit(X, y)
    T = np.column_stack([t.predict(X) for t in trees.trees_])
    np.testing.assert_allclose(trees.term_importances_, np.abs(trees.coef_) * T.std(axis=0))


def test_linear_terms_are_winsorised_and_scaled_as_rulefit():
    X, y = _friedman(200, 7)
    model = RuleEnsembleRegressor(method="lasso", n_estimators=10, linear_terms=True,
                                  random_state=0).fit(X, y)
    n_rules = model.rules_.n_rules
    assert model.coef_.shape == (n_rules + X.shape[1],)
    low, high = np.quantile(X, [0.025, 0.975], axis=0)
    clipped = np.clip(X, low, high)
    linear = clipped * (0.4 / clipped.std(axis=0))
    Z = model._training_design(X)
    np.testing.assert_allclose(Z.toarray()[:, n_rules:], linear)
    assert model.term_descriptions()[-1] == "linear: x19"


@pytest.mark.slow  # ten ensembles of 40 trees with 5-fold inner CV
def test_all_nine_registered_post_processors_learn_the_friedman_function():
    X, y = _friedman(450, 8)
    train, test = np.arange(300), np.arange(300, 450)
    names = [n for n, spec in registry.ALGORITHMS.items()
             if spec.estimator.endswith(":RuleEnsembleRegressor")]
    assert len(names) == 10  # the paper's nine, rf as Breiman's forest, and isle-average
    for name in names:
        spec = registry.get(name)
        kwargs = {**spec.fixed, **spec.defaults(), "n_estimators": 40, "cv": 5}
        model = RuleEnsembleRegressor(random_state=0, **kwargs).fit(X[train], y[train])
        r = np.corrcoef(model.predict(X[test]), y[test])[0, 1]
        assert r > 0.3, name  # averaging shallow trees fits the additive part poorly


def test_same_seed_same_predictions():
    X, y = _friedman(150, 9)
    a = RuleEnsembleRegressor(n_estimators=15, random_state=3).fit(X, y).predict(X)
    b = RuleEnsembleRegressor(n_estimators=15, random_state=3).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kwargs, text", [
    ({"method": "ridge"}, "method"),
    ({"basis": "leaves"}, "basis"),
    ({"method": "oob", "basis": "rules", "learning_rate": 0.0}, "basis='trees'"),
    ({"method": "mean", "basis": "trees", "learning_rate": 0.1}, "learning_rate=0"),
    ({"method": "oob", "basis": "trees", "learning_rate": 0.0, "max_samples": 1.0}, "out-of-bag"),
    ({"cv": 1}, "cv"),
    ({"max_components": 0}, "max_components"),
    ({"top_fraction": 0.0}, "top_fraction"),
    ({"n_estimators": 0}, "n_estimators"),
])
def test_bad_parameters_are_named(kwargs, text):
    X, y = _friedman(30, 0)
    with pytest.raises(ValueError, match=text):
        RuleEnsembleRegressor(**kwargs).fit(X, y)


def test_missing_values_are_refused():
    X, y = _friedman(30, 0)
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RuleEnsembleRegressor(n_estimators=3).fit(X, y)


@pytest.mark.parametrize("method", ["pls", "lasso"])
def test_a_target_no_rule_splits_gives_the_mean(method):
    X, _ = _friedman(30, 0)
    # memory 0: every tree sees the constant itself (residuals could carry rounding noise)
    model = RuleEnsembleRegressor(method=method, n_estimators=5, learning_rate=0.0,
                                  random_state=0).fit(X, np.full(30, 2.5))
    assert model.rules_.n_rules == 0
    np.testing.assert_array_equal(model.predict(X[:4]), np.full(4, 2.5))
    assert model.ranked_terms() == []


def test_oob_without_out_of_bag_rows_is_refused():
    X, y = _friedman(20, 0)
    # 0.98 of 20 rows rounds to all 20: no tree leaves a row out
    with pytest.raises(ValueError, match="out-of-bag rows"):
        RuleEnsembleRegressor(method="oob", basis="trees", learning_rate=0.0, max_samples=0.98,
                              n_estimators=4).fit(X, y)


def test_top_fraction_with_equal_weights_keeps_the_trees_with_the_smallest_oob_error():
    # three trees, all out of bag for both rows; squared errors 4, 1 and 9 on average
    errors = np.array([[2.0, 1.0, 3.0], [2.0, 1.0, 3.0]])
    usable = np.ones_like(errors, dtype=bool)
    weights = RuleEnsembleRegressor(top_fraction=0.5)._oob_weights(errors, usable, np.inf)
    np.testing.assert_allclose(weights, [0.5, 0.5, 0.0])
