"""Rules from tree nodes: the rule matrix, duplicates and complements, rules in words."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from ensemblekit.rules.extract import Condition, Rule, extract_rules, node_rule_matrix, tree_rules
from ensemblekit.rules.isle import generate_isle

# Four points on a 2x2 grid; y makes the root split on x0 at 2 and both children
# split on x1 at 2, so the tree is the full depth-2 tree with J = 4 leaves.
GRID_X = np.array([[1.0, 1.0], [1.0, 3.0], [3.0, 1.0], [3.0, 3.0]])
GRID_Y = np.array([0.0, 1.0, 10.0, 12.0])


def _grid_tree():
    tree = DecisionTreeRegressor(max_depth=2, random_state=0).fit(GRID_X, GRID_Y)
    assert tree.get_n_leaves() == 4
    return tree


def test_depth2_tree_gives_2_times_J_minus_1_rules_with_the_expected_columns():
    tree = _grid_tree()
    R = node_rule_matrix([tree], GRID_X).toarray()
    # scikit-learn numbers nodes depth first: 1 = x0<=2, 2 = x0<=2 & x1<=2,
    # 3 = x0<=2 & x1>2, 4 = x0>2, 5 = x0>2 & x1<=2, 6 = x0>2 & x1>2
    expected = np.array([
        # 1  2  3  4  5  6
        [1, 1, 0, 0, 0, 0],  # (1, 1)
        [1, 0, 1, 0, 0, 0],  # (1, 3)
        [0, 0, 0, 1, 1, 0],  # (3, 1)
        [0, 0, 0, 1, 0, 1],  # (3, 3)
    ], dtype=float)
    assert R.shape == (4, 2 * (4 - 1))
    np.testing.assert_array_equal(R, expected)
    words = [r.describe(["x0", "x1"]) for r in tree_rules(tree)]
    assert words == ["x0 <= 2", "x0 <= 2 and x1 <= 2", "x0 <= 2 and x1 > 2", "x0 > 2",
                     "x0 > 2 and x1 <= 2", "x0 > 2 and x1 > 2"]


def test_complement_of_the_root_split_and_duplicate_trees_are_dropped():
    tree = _grid_tree()
    rules = extract_rules([tree, _grid_tree()], GRID_X)
    assert rules.n_candidates == 12
    # node 4 (x0 > 2) is the complement of node 1; the second tree repeats the first
    assert [(r.tree, r.node) for r in rules.rules] == [(0, 1), (0, 2), (0, 3), (0, 5), (0, 6)]
    np.testing.assert_array_equal(rules.support, [0.5, 0.25, 0.25, 0.25, 0.25])
    np.testing.assert_array_equal(rules.transform(GRID_X).toarray(),
                                  node_rule_matrix([tree], GRID_X).toarray()[:, [0, 1, 2, 4, 5]])


def test_rules_constant_on_the_training_rows_are_dropped():
    tree = _grid_tree()
    X = GRID_X[:2]  # both rows have x0 <= 2: node 1 fires on all, node 4 on none
    rules = extract_rules([tree], X)
    assert [r.node for r in rules.rules] == [2]  # node 3 is node 2's complement here


def _dedupe_by_brute_force(R):
    n = R.shape[0]
    kept = []
    for k in range(R.shape[1]):
        col = R[:, k]
        if col.sum() in (0, n):
            continue
        if any(np.array_equal(col, R[:, j]) or np.array_equal(col, 1 - R[:, j]) for j in kept):
            continue
        kept.append(k)
    return kept


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hashed_deduplication_equals_pairwise_comparison(seed):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 3, size=(60, 4)).astype(float)  # few values: many equal rules
    y = X[:, 0] + 2 * (X[:, 1] > 1) + rng.rand(60)
    ensemble = generate_isle(X, y, n_estimators=15, max_depth=3, random_state=seed)
    R = node_rule_matrix(ensemble.trees, X).toarray()
    expected = _dedupe_by_brute_force(R)
    rules = extract_rules(ensemble.trees, X)
    assert len(expected) < R.shape[1]
    np.testing.assert_array_equal(rules.transform(X).toarray(), R[:, expected])


def test_rule_matrix_equals_the_conditions_applied_to_new_rows():
    rng = np.random.RandomState(3)
    X = rng.rand(200, 3)
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    ensemble = generate_isle(X, y, n_estimators=5, max_depth=3, random_state=0)
    rules = extract_rules(ensemble.trees, X)
    X_new = rng.rand(50, 3)
    # scikit-learn's trees compare float32 values with the thresholds
    X32 = X_new.astype(np.float32).astype(np.float64)
    by_hand = np.column_stack([
        np.all([(X32[:, c.feature] > c.threshold) if c.greater else (X32[:, c.feature] <= c.threshold)
                for c in rule.conditions], axis=0)
        for rule in rules.rules
    ]).astype(float)
    np.testing.assert_array_equal(rules.transform(X_new).toarray(), by_hand)


def test_describe_merges_intervals_and_reads_indicator_columns_as_equalities():
    rule = Rule(0, 5, (Condition(0, True, 2.45), Condition(1, False, 0.5), Condition(0, False, 4.95),
                       Condition(2, True, 0.5), Condition(0, True, 3.0)))
    names = ["petal length", "colour=red", "flag"]
    assert rule.describe(names, binary_features=[1, 2]) == \
        "3 < petal length <= 4.95 and colour != red and flag = 1"
    assert rule.describe(names) == \
        "3 < petal length <= 4.95 and colour=red <= 0.5 and flag > 0.5"
    assert rule.describe() == "3 < x0 <= 4.95 and x1 <= 0.5 and x2 > 0.5"
    assert rule.features == (0, 1, 2) and rule.length == 5
