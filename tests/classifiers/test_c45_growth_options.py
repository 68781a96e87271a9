"""J48's growth options on trees small enough to compute by hand (issue 33).

(1) ``binary_splits`` (J48 ``-B``): a nominal attribute splits ``= v`` / ``!= v``, the value
chosen by gain ratio with Weka's tie rule, printed, and applied as such;
(2) ``mdl_correction`` (J48 ``-J`` is False): release 8's ``log2(#thresholds) / N`` is what
keeps a weak numeric split out; (3) ``split_point_actual_value``
(``-doNotMakeSplitPointActualValue`` is False): the threshold stays at the midpoint, which
sends a new value between the two training values the other way. Each expected value is
worked out in the comments; the agreement with Weka itself is in ``test_c45_weka.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ensemblekit.classifiers import _c45_kernels as kernels
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.constraints import validate_params


def _h(*p):
    """Entropy in bits of the distribution ``p``."""
    return -sum(q * math.log2(q) for q in p if q > 0)


# ---------------------------------------------------------------- (1) binary_splits
# colour: red x3 (all "no"), green x3 and blue x3 (all "yes")
COLOUR = np.array([[0.0]] * 3 + [[1.0]] * 3 + [[2.0]] * 3)
ANSWER = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1])
NAMES = (["colour"], ["no", "yes"], {0: ["red", "green", "blue"]})


def _colour_tree(**params):
    return C45Tree(nominal_features=[0], n_categories=[3], n_classes=2, **params).fit(
        COLOUR, ANSWER)


def test_a_nominal_attribute_splits_one_value_against_the_rest():
    # red | not red separates the classes: gain = H(1/3, 2/3) bits, and the split
    # information is the same entropy, so the gain ratio is 1
    multiway = _colour_tree()
    assert multiway.export_text(*NAMES) == (
        "colour = red: no (3.0)\ncolour = green: yes (3.0)\ncolour = blue: yes (3.0)")
    tree = _colour_tree(binary_splits=True)
    assert tree.export_text(*NAMES) == "colour = red: no (3.0)\ncolour != red: yes (6.0)"
    assert tree.feature_.tolist() == [0, -1, -1] and tree.n_children_.tolist() == [2, 0, 0]
    assert tree.threshold_[0] == 0.0  # the code of "red", branch 0
    ok, gain, ratio, value = kernels._binary_nominal_split(
        COLOUR[:, 0].copy(), ANSWER, np.ones(9), 3, 2, 2.0, 9.0, np.empty(0))
    assert (ok, value) == (True, 0)
    assert gain == pytest.approx(_h(1 / 3, 2 / 3), abs=1e-15) and ratio == pytest.approx(1.0)
    # blue goes down "!= red"; a missing colour splits 3 : 6
    np.testing.assert_array_equal(tree.predict_proba([[2.0], [0.0]]), [[0, 1], [1, 0]])
    np.testing.assert_allclose(tree.predict_proba([[np.nan]]), [[1 / 3, 2 / 3]], rtol=1e-15)


def test_the_first_value_of_highest_gain_ratio_is_kept():
    # a: 2 no + 2 yes, b: 3 yes, c: 3 no. "a" against the rest has gain 0 (taken first,
    # as Weka takes the first value); "b" against the rest: gain = H(1/2) - 0.7 H(2/7),
    # split information H(0.3), so its ratio beats "a"'s; "c" gives the same ratio
    # exactly, not more, so "b" stays
    X = np.array([[0.0]] * 4 + [[1.0]] * 3 + [[2.0]] * 3)
    y = np.array([0, 1, 0, 1, 1, 1, 1, 0, 0, 0])
    ok, gain, ratio, value = kernels._binary_nominal_split(
        X[:, 0].copy(), y, np.ones(10), 3, 2, 2.0, 10.0, np.empty(0))
    want = 1.0 - 0.7 * _h(2 / 7, 5 / 7)
    assert (ok, value) == (True, 1)
    assert gain == pytest.approx(want, abs=1e-15)
    assert ratio == pytest.approx(want / _h(0.3, 0.7), abs=1e-15)
    tree = C45Tree(binary_splits=True, unpruned=True, nominal_features=[0], n_categories=[3],
                   n_classes=2).fit(X, y)
    assert tree.export_text(["c"], ["n", "y"], {0: ["a", "b", "c"]}) == (
        "c = b: y (3.0)\nc != b: n (7.0/2.0)")


def test_a_value_needs_the_minimum_weight_on_both_sides():
    # with -M 4 no value has 4 rows on its own side: no split (the multiway split has
    # no two branches of 4 either)
    tree = _colour_tree(binary_splits=True, min_samples_leaf=4)
    assert tree.export_text(*NAMES) == ": yes (9.0/3.0)"


# ---------------------------------------------------------------- (2) mdl_correction
# x = 1 .. 8, class 1 at x = 4 and 5 only. With -M 2 the thresholds that leave 2 rows on
# each side are after x = 2, 3, 4, 5, 6: five of them. The best, x <= 3 (a tie with x <= 5,
# the first kept), gains H(1/4) - 5/8 H(2/5) = 0.2044 bits, below log2(5) / 8 = 0.2902.
STEP_X = np.arange(1.0, 9.0)[:, None]
STEP_Y = np.array([0, 0, 0, 1, 1, 0, 0, 0])


def test_the_mdl_penalty_is_log2_of_the_thresholds_over_the_weight():
    order = np.arange(8, dtype=np.int32)
    results = [kernels._numeric_split(STEP_X[:, 0].copy(), order, STEP_Y, np.ones(8),
                                      np.ones(8), True, True, 2, 2.0, 8.0, np.empty(0), mdl)
               for mdl in (True, False)]
    raw = _h(1 / 4, 3 / 4) - 5 / 8 * _h(2 / 5, 3 / 5)
    assert raw - math.log2(5) / 8 < 0
    assert results[0][0] is False  # the penalty leaves no gain: no split
    ok, gain, ratio, cut = results[1]
    assert ok and cut == 3.5
    assert gain == pytest.approx(raw, abs=1e-15)
    assert ratio == pytest.approx(raw / _h(3 / 8, 5 / 8), abs=1e-15)


def test_without_the_mdl_correction_the_weak_split_is_made():
    assert C45Tree(unpruned=True).fit(STEP_X, STEP_Y).export_text() == ": 0 (8.0/2.0)"
    tree = C45Tree(unpruned=True, mdl_correction=False).fit(STEP_X, STEP_Y)
    # below x > 3, rows 4 .. 8 (2 yes, 3 no) split cleanly after x = 5
    assert tree.export_text() == ("x0 <= 3: 0 (3.0)\nx0 > 3\n|   x0 <= 5: 1 (2.0)\n"
                                  "|   x0 > 5: 0 (3.0)")


# ---------------------------------------------------------------- (3) split_point_actual_value
def test_a_midpoint_threshold_sends_values_between_the_other_way():
    # x = 1, 2 | 3, 4: the cut is the midpoint 2.5; J48 moves it down to 2, the largest
    # training value not above it. A new 2.2 falls left of 2.5 but right of 2.
    X, y = np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([0, 0, 1, 1])
    moved = C45Tree().fit(X, y)
    kept = C45Tree(split_point_actual_value=False).fit(X, y)
    assert moved.export_text() == "x0 <= 2: 0 (2.0)\nx0 > 2: 1 (2.0)"
    assert kept.export_text() == "x0 <= 2.5: 0 (2.0)\nx0 > 2.5: 1 (2.0)"
    assert (moved.threshold_[0], kept.threshold_[0]) == (2.0, 2.5)
    assert moved.predict([[2.2]]).tolist() == [1] and kept.predict([[2.2]]).tolist() == [0]
    np.testing.assert_array_equal(moved.predict_proba(X), kept.predict_proba(X))


def test_binary_split_trees_print_split_points_as_java_s_double_to_string():
    # J48 -B prints numeric split points with Double.toString: 2.0, not 2
    X, y = np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([0, 0, 1, 1])
    assert C45Tree(binary_splits=True).fit(X, y).export_text() == (
        "x0 <= 2.0: 0 (2.0)\nx0 > 2.0: 1 (2.0)")
    big = C45Tree(binary_splits=True).fit(X * 1e7, y)
    assert big.export_text().splitlines()[0] == "x0 <= 2.0E7: 0 (2.0)"


@pytest.mark.parametrize("name", ["binary_splits", "mdl_correction", "split_point_actual_value"])
def test_the_options_are_booleans(name):
    with pytest.raises(ValueError, match=name):
        validate_params(C45Tree(**{name: "yes"}))
