"""Tests for ensemblekit.classifiers.cart.CartEntropyTree."""

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit.classifiers.cart import CartEntropyTree


@parametrize_with_checks([CartEntropyTree(random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_root_threshold_is_midpoint_and_impurity_in_bits():
    # Two classes, two instances each, separated between 2 and 3: the only
    # perfect split is x <= 2.5 (midpoint of 2 and 3). Root entropy of a 2:2
    # node is -(1/2 log2 1/2 + 1/2 log2 1/2) = 1 bit (Gini would give 0.5).
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([0, 0, 1, 1])
    clf = CartEntropyTree(random_state=0).fit(X, y)
    t = clf.tree_.tree_
    assert t.feature[0] == 0
    assert t.threshold[0] == 2.5
    assert t.impurity[0] == pytest.approx(1.0)
    assert t.node_count == 3
    np.testing.assert_array_equal(clf.predict([[0.0], [2.4], [2.6], [9.0]]), [0, 0, 1, 1])


def test_entropy_of_a_3_to_1_node():
    # 3:1 node: -(3/4 log2 3/4 + 1/4 log2 1/4) = 0.811278...
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([0, 0, 0, 1])
    clf = CartEntropyTree(random_state=0).fit(X, y)
    expected = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert clf.tree_.tree_.impurity[0] == pytest.approx(expected)
    assert expected == pytest.approx(0.8112781245)


def test_min_samples_leaf_two_like_j48_m2():
    # y = 0,1,1,1,1 on x = 1..5. With leaves of one instance the tree would
    # isolate x=1 (split 1.5). With at least 2 per leaf the candidates are 2.5
    # and 3.5. Parent entropy H(1/5) = 0.7219 bits.
    #   2.5: left {0,1} H=1 weighted 2/5 -> 0.4, right pure -> gain 0.3219
    #   3.5: left {0,1,1} H=0.9183 weighted 3/5 -> 0.5510 -> gain 0.1710
    # so the root is 2.5 and its left leaf holds one of each class.
    X = np.arange(1.0, 6.0).reshape(-1, 1)
    y = np.array([0, 1, 1, 1, 1])
    clf = CartEntropyTree(random_state=0).fit(X, y)
    assert clf.tree_.tree_.threshold[0] == 2.5
    np.testing.assert_allclose(clf.predict_proba([[1.0]]), [[0.5, 0.5]])
    np.testing.assert_allclose(clf.predict_proba([[5.0]]), [[0.0, 1.0]])
    one = CartEntropyTree(min_samples_leaf=1, random_state=0).fit(X, y)
    assert one.tree_.tree_.threshold[0] == 1.5


def test_is_unpruned_entropy_tree_matching_sklearn():
    rng = np.random.RandomState(3)
    X = rng.rand(80, 4)
    y = (X[:, 0] + 0.3 * rng.rand(80) > 0.6).astype(int) + (X[:, 1] > 0.7)
    ours = CartEntropyTree(random_state=7).fit(X, y)
    ref = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=7).fit(X, y)
    np.testing.assert_array_equal(ours.tree_.tree_.threshold, ref.tree_.threshold)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X))
    np.testing.assert_allclose(ours.feature_importances_, ref.feature_importances_)
    assert ours.feature_importances_.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("y_missing, expected", [(1, 1), (0, 0)])
def test_missing_values_are_routed_to_the_better_side(y_missing, expected):
    # x in {0, 1} separates the classes at 0.5; the two NaN rows share class
    # y_missing, so the best tree sends NaN to that class's side.
    X = np.array([[0.0], [0.0], [1.0], [1.0], [np.nan], [np.nan]])
    y = np.array([0, 0, 1, 1, y_missing, y_missing])
    clf = CartEntropyTree(random_state=0).fit(X, y)
    assert clf.tree_.tree_.threshold[0] == 0.5
    assert clf.predict([[np.nan]])[0] == expected
    np.testing.assert_array_equal(clf.predict(X), y)


def test_string_labels_and_proba_columns():
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    y = np.array(["b", "b", "a", "a", "c", "c"])
    clf = CartEntropyTree(random_state=0).fit(X, y)
    assert clf.classes_.tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(clf.predict_proba([[1.5]]), [[0.0, 1.0, 0.0]])
    assert clf.predict([[5.5]]).tolist() == ["c"]
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), clf.predict_proba(X))


def test_same_seed_same_tree():
    rng = np.random.RandomState(0)
    X = rng.randint(0, 3, size=(60, 5)).astype(float)  # many tied gains
    y = rng.randint(0, 2, 60)
    a = CartEntropyTree(random_state=11).fit(X, y).tree_.tree_
    b = clone(CartEntropyTree(random_state=11)).fit(X, y).tree_.tree_
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)


def test_bad_input():
    with pytest.raises(NotFittedError):
        CartEntropyTree().predict([[1.0]])
    with pytest.raises(ValueError, match="Unknown label type|continuous"):
        CartEntropyTree().fit([[1.0], [2.0]], [0.5, 1.5])
    with pytest.raises(ValueError, match="min_samples_leaf"):
        CartEntropyTree(min_samples_leaf=0).fit([[1.0], [2.0]], [0, 1])
    clf = CartEntropyTree().fit([[1.0, 2.0], [2.0, 1.0]], [0, 1])
    with pytest.raises(ValueError, match="features"):
        clf.predict([[1.0]])
    with pytest.raises(ValueError, match="[Ii]nfinity|infinite"):
        CartEntropyTree().fit([[np.inf], [1.0]], [0, 1])


@pytest.mark.parametrize("big", [1e308, -1e308, 3.5e38])
def test_values_beyond_float32_are_bad_input(big):
    from ensemblekit.errors import InputError

    X = np.array([[big, 0.0], [np.nan, 1.0], [0.0, 2.0], [1.0, 3.0]])
    with pytest.raises(InputError, match=r"too large for dtype\('float32'\)"):
        CartEntropyTree().fit(X, [0, 1, 0, 1])
    fitted = CartEntropyTree().fit(np.nan_to_num(X * 0.0), [0, 1, 0, 1])  # in range: fits
    with pytest.raises(InputError, match="float32"):
        fitted.predict(X)
    fitted.predict(np.array([[3.4e38, np.nan]]))  # the largest float32 and a missing value pass
