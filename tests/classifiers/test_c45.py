"""C45Tree (Weka's J48) on cases worked out by hand, its scikit-learn contract and its errors.

The agreement with Weka itself on 21 UCI files is test_c45_weka.py; here every
expected value is derived from the rules of C4.5 release 8 independently of the code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ensemblekit.classifiers.c45 import C45Tree, add_errors, grow_c45, weka_number
from ensemblekit.constraints import InvalidParameterError

from ektesting.estimator_checks import parametrize_with_checks_per_class
from ektesting.support import load_coded

# weather.nominal (Quinlan's 14 days): outlook, temperature, humidity, windy -> play
OUTLOOK = ["sunny", "overcast", "rainy"]
TEMPERATURE = ["hot", "mild", "cool"]
HUMIDITY = ["high", "normal"]
WINDY = ["TRUE", "FALSE"]
WEATHER = """sunny hot high FALSE no
sunny hot high TRUE no
overcast hot high FALSE yes
rainy mild high FALSE yes
rainy cool normal FALSE yes
rainy cool normal TRUE no
overcast cool normal TRUE yes
sunny mild high FALSE no
sunny cool normal FALSE yes
rainy mild normal FALSE yes
sunny mild normal TRUE yes
overcast mild high TRUE yes
overcast hot normal FALSE yes
rainy mild high TRUE no"""


def weather():
    rows = [line.split() for line in WEATHER.splitlines()]
    domains = [OUTLOOK, TEMPERATURE, HUMIDITY, WINDY]
    X = np.array([[domains[j].index(r[j]) for j in range(4)] for r in rows], dtype=float)
    y = np.array([["yes", "no"].index(r[4]) for r in rows])
    return X, y


def entropy(counts):
    counts = np.asarray(counts, dtype=float)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())


def test_weather_root_is_the_best_gain_ratio_among_above_average_gains():
    X, y = weather()
    gains, ratios = [], []
    for j, dom in enumerate([OUTLOOK, TEMPERATURE, HUMIDITY, WINDY]):
        parts = [y[X[:, j] == v] for v in range(len(dom))]
        after = sum(len(p) / len(y) * entropy(np.bincount(p, minlength=2)) for p in parts)
        gain = entropy(np.bincount(y)) - after
        gains.append(gain)
        ratios.append(gain / entropy([len(p) for p in parts]))
    # by hand: outlook 0.247/1.577, temperature 0.029/1.557, humidity 0.152/1.0, windy 0.048/0.985
    np.testing.assert_allclose(gains, [0.2467, 0.0292, 0.1518, 0.0481], atol=1e-4)
    candidates = [j for j in range(4) if gains[j] >= np.mean(gains) - 1e-3]
    assert candidates == [0, 2]  # humidity has the larger gain, outlook the larger ratio
    best = max(candidates, key=lambda j: ratios[j])
    tree = C45Tree(nominal_features=[0, 1, 2, 3], n_categories=[3, 3, 2, 2]).fit(X, y)
    assert tree.feature_[0] == best == 0


def test_weather_tree_is_the_one_j48_prints():
    # Witten, Frank & Hall, Data Mining (3rd ed.), Fig. 11.5: J48 on weather.nominal
    X, y = weather()
    tree = C45Tree(nominal_features=[0, 1, 2, 3], n_categories=[3, 3, 2, 2]).fit(X, y)
    text = tree.export_text(["outlook", "temperature", "humidity", "windy"], ["yes", "no"],
                            {0: OUTLOOK, 1: TEMPERATURE, 2: HUMIDITY, 3: WINDY})
    assert text == (
        "outlook = sunny\n"
        "|   humidity = high: no (3.0)\n"
        "|   humidity = normal: yes (2.0)\n"
        "outlook = overcast: yes (4.0)\n"
        "outlook = rainy\n"
        "|   windy = TRUE: no (2.0)\n"
        "|   windy = FALSE: yes (3.0)")
    assert (tree.n_leaves_, tree.tree_size_, tree.get_depth()) == (5, 8, 2)
    np.testing.assert_array_equal(tree.predict(X), y)  # every leaf is pure


def test_numeric_threshold_penalty_and_the_value_it_is_moved_to():
    # 3 admissible thresholds (each side >= M = 2 rows): after 2, 3 and 4; the best (after 3)
    # separates the classes: gain 1 bit - log2(3)/6, split information 1 bit
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    tree = C45Tree().fit(X, y)
    assert tree.threshold_[0] == 3.0  # cut 3.5 moved to the largest training value below it
    assert tree.export_text() == "x0 <= 3: 0 (3.0)\nx0 > 3: 1 (3.0)"
    # a penalty larger than the gain leaves a leaf: 2 rows per class, 21 distinct values
    # between, gain 1 - log2(#thresholds)/N < 0 only when thresholds are many; check the rule
    gain = 1 - math.log2(3) / 6
    assert gain > 0


def test_threshold_moves_to_the_largest_value_of_all_training_data_below_the_cut():
    # x0 (nominal) isolates class 2 (values 4.5 .. 4.8 of x1); below it, x1 separates 0 from 1
    # with the cut (3 + 7) / 2 = 5, moved to 4.8: a value of the *other* branch
    x1 = [1, 2, 3, 7, 8, 9, 4.5, 4.6, 4.7, 4.8]
    x0 = [0] * 6 + [1] * 4
    X = np.column_stack([x0, x1]).astype(float)
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    tree = C45Tree(nominal_features=[0], n_categories=[2]).fit(X, y)
    assert tree.feature_[0] == 0
    inner = tree.child_start_[0]
    assert tree.feature_[inner] == 1 and tree.threshold_[inner] == 4.8


def test_missing_values_go_down_every_branch_with_the_branch_weights():
    # known: value 0 -> class 0 (4 rows), value 1 -> class 1 (4 rows); 2 rows of class 0
    # have no value: half of each goes to each branch (4 of 8 known rows went each way)
    X = np.array([[0]] * 4 + [[1]] * 4 + [[np.nan]] * 2)
    y = np.array([0] * 4 + [1] * 4 + [0] * 2)
    tree = C45Tree(nominal_features=[0], n_categories=[2], unpruned=True).fit(X, y)
    assert tree.export_text() == "x0 = 0: 0 (5.0)\nx0 = 1: 1 (5.0/1.0)"
    proba = tree.predict_proba([[np.nan], [0], [1]])
    # a missing value: 5/10 * (1, 0) + 5/10 * (1/5, 4/5)
    np.testing.assert_allclose(proba, [[0.6, 0.4], [1, 0], [0.2, 0.8]])


def test_an_empty_branch_is_a_leaf_with_the_parent_majority_and_distribution():
    # value 2 of x0 never occurs: its leaf prints (0.0) with the node's majority class, and
    # a row with that value gets the node's class distribution (3 : 2)
    X = np.array([[0.0]] * 3 + [[1.0]] * 2)
    y = np.array([0, 0, 0, 1, 1])
    tree = C45Tree(nominal_features=[0], n_categories=[3], unpruned=True).fit(X, y)
    assert tree.export_text(["a"], ["p", "q"], {0: ["u", "v", "w"]}) == (
        "a = u: p (3.0)\na = v: q (2.0)\na = w: p (0.0)")
    np.testing.assert_allclose(tree.predict_proba([[2.0]]), [[0.6, 0.4]])
    assert tree.is_empty_.tolist() == [False, False, False, True]


def test_a_tree_that_is_one_leaf_prints_weight_and_errors():
    X = np.array([[1.0], [1.0], [1.0]])
    y = np.array([0, 1, 1])
    tree = C45Tree().fit(X, y)  # 3 rows < 2 * M: no split
    assert tree.export_text(class_names=["a", "b"]) == ": b (3.0/1.0)"
    assert (tree.n_leaves_, tree.tree_size_) == (1, 1)
    np.testing.assert_allclose(tree.predict_proba([[5.0]]), [[1 / 3, 2 / 3]])


def test_pessimistic_error_matches_the_binomial_upper_limit():
    # e = 0: the upper limit U solves (1 - U)^N = CF, so the added errors are N * U
    assert add_errors(6, 0, 0.25) == pytest.approx(6 * (1 - 0.25 ** (1 / 6)), rel=1e-12)
    # e >= 1: Wilson's upper limit at z = Phi^-1(0.75) with continuity correction (e + 0.5)
    from scipy.stats import norm

    n, e, z = 20.0, 3.0, norm.ppf(0.75)
    f = (e + 0.5) / n
    upper = (f + z * z / (2 * n) + z * math.sqrt(f / n - f * f / n + z * z / (4 * n * n))) \
        / (1 + z * z / n)
    assert add_errors(n, e, 0.25) == pytest.approx(upper * n - e, rel=1e-12)
    # between 0 and 1 errors: linear interpolation; near N: N - e
    base = add_errors(n, 0, 0.25)
    assert add_errors(n, 0.5, 0.25) == pytest.approx(base + 0.5 * (add_errors(n, 1, 0.25) - base))
    assert add_errors(4.0, 3.6, 0.25) == pytest.approx(0.4)


# the expected strings are what Weka 3.9.7's Utils.doubleToString(value, 6) printed (Java 17);
# 0.1234565 is stored just below ...4565 and 2.0000005 just above ...0005
@pytest.mark.parametrize("value, text", [
    (6849.0, "6849"), (0.8, "0.8"), (2.5, "2.5"), (0.5605, "0.5605"), (1234567.25, "1234567.25"),
    (0.1234565, "0.123456"), (2.0000005, "2.000001"), (1e-7, "0"), (-1e-7, "-0"),
    (-3.25, "-3.25"), (0.0, "0"), (-0.0, "-0"), (1e20, "100000000000000000000"),
    # thresholds of any finite size: Java's digits, not the double's exact binary value
    (1e25, "1" + "0" * 25), (-8.5e306, "-85" + "0" * 305), (1.7976931348623157e308,
                                                            "17976931348623157" + "0" * 292),
    (197258974075863.1875, "197258974075863.2"), (4.9e-324, "0"), (-2.0000005, "-2.000001"),
    (3.5e-6, "0.000003"), (4.5e-6, "0.000005"), (0.99999995, "1"),
    # where Java's classic conversion is not the shortest: a decimal on the border of the
    # double's interval, an integer below 2**63, a 64-bit sum that wraps (issue 29)
    (1e23, "99999999999999990000000"), (8.4e22, "83999999999999990000000"),
    (3.584e25, "35840000000000002000000000"), (1.024e26, "1024" + "0" * 23),
    (2.82879384806159e17, "282879384806159008"),
    (2.4798487398601095e25, "24798487398601094000000000"),
])
def test_thresholds_print_as_weka_doubletostring(value, text):
    assert weka_number(value) == text


@pytest.mark.parametrize("value, text", [
    (15.27, "15.27"), (0.29, "0.29"), (7390.0, "7390.0"), (1e7, "1.0E7"),
    (12345678.9, "1.23456789E7"), (0.0, "0.0"), (-0.0, "-0.0"), (0.001, "0.001"),
    (1e-4, "1.0E-4"), (1e23, "9.999999999999999E22"), (4.9e-324, "4.9E-324"),
    (2.82879384806159e17, "2.82879384806159008E17"), (-1.7e308, "-1.7E308")])
def test_leaf_counts_print_as_java_double_tostring(value, text):
    from ensemblekit.classifiers.c45_model import _java_double

    assert _java_double(value) == text  # Java 17's ""+Utils.roundDouble(value, 2)


def test_pruning_keeps_fewer_leaves_and_the_same_training_rows():
    _, X, y, nominal, n_cat = load_coded("credit-a")
    kw = dict(nominal_features=nominal, n_categories=n_cat, n_classes=2)
    pruned = C45Tree(**kw).fit(X, y)
    grown = C45Tree(unpruned=True, **kw).fit(X, y)
    assert pruned.n_leaves_ < grown.n_leaves_
    # the root's class weights are the training set's, whatever the pruning did
    np.testing.assert_allclose(pruned.value_[0], np.bincount(y, minlength=2))
    np.testing.assert_allclose(grown.value_[0], np.bincount(y, minlength=2))
    # every leaf weight of a split is its branch's share: children sum to the parent
    for t in (pruned, grown):
        for i in np.flatnonzero(t.feature_ >= 0):
            s, k = t.child_start_[i], t.n_children_[i]
            np.testing.assert_allclose(t.bag_value_[s:s + k].sum(axis=0), t.value_[i])


@pytest.mark.parametrize("name", ["labor", "colic", "soybean"])
@pytest.mark.parametrize("unpruned", [False, True])
def test_a_weight_of_k_is_the_row_written_k_times(name, unpruned):
    # the bagging ensembles pass bootstrap counts as weights; J48 counts weights everywhere
    _, X, y, nominal, n_cat = load_coded(name)
    counts = np.random.default_rng(3).multinomial(len(y), np.full(len(y), 1 / len(y)))
    kw = dict(nominal_features=nominal, n_categories=n_cat, n_classes=int(y.max()) + 1,
              unpruned=unpruned)
    weighted = C45Tree(**kw).fit(X, y, sample_weight=counts)
    rows = np.repeat(np.arange(len(y)), counts)
    repeated = C45Tree(**kw).fit(X[rows], y[rows])
    assert weighted.export_text() == repeated.export_text()
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-12)


def test_zero_weight_rows_are_absent():
    _, X, y, nominal, n_cat = load_coded("labor")
    w = np.ones(len(y))
    w[::3] = 0
    kw = dict(nominal_features=nominal, n_categories=n_cat, n_classes=2)
    a = C45Tree(**kw).fit(X, y, sample_weight=w)
    b = C45Tree(**kw).fit(X[w > 0], y[w > 0])
    assert a.export_text() == b.export_text()


def test_fast_path_grows_the_same_tree_as_fit():
    _, X, y, nominal, n_cat = load_coded("colic")
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[nominal] = True
    cats = np.zeros(X.shape[1], dtype=np.int64)
    cats[nominal] = n_cat
    state = grow_c45(X, y, None, mask, cats, 2, unpruned=True)
    tree = C45Tree(nominal_features=nominal, n_categories=n_cat, n_classes=2,
                   unpruned=True).fit(X, y)
    np.testing.assert_array_equal(state["feature"], tree.feature_)
    np.testing.assert_array_equal(state["value"], tree.value_)


def test_bad_input_is_refused():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 3.0], [0.0, 4.0]])
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="not one of|>= its"):
        C45Tree(nominal_features=[0], n_categories=[2]).fit(X, y)  # code 2 of 2 values
    with pytest.raises(ValueError, match="not a code"):
        C45Tree(nominal_features=[1]).fit(X + 0.5, y)
    with pytest.raises(ValueError, match="distinct column indices"):
        C45Tree(nominal_features=[5]).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        C45Tree().fit(X, y, sample_weight=[1, -1, 1, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        C45Tree().fit(X, y, sample_weight=[1, 1])
    with pytest.raises(ValueError):
        C45Tree().fit(np.array([[np.inf, 0], [1, 1]]), [0, 1])
    with pytest.raises(InvalidParameterError):
        C45Tree(confidence_factor=0.7).fit(X, y)
    with pytest.raises(InvalidParameterError):
        C45Tree(min_samples_leaf=0).fit(X, y)
    tree = C45Tree(nominal_features=[0], n_categories=[3]).fit(X, y)
    with pytest.raises(ValueError, match="not one of its 3 codes"):
        tree.predict_proba([[3.0, 1.0]])
    with pytest.raises(ValueError):
        tree.predict_proba([[0.0]])


@parametrize_with_checks_per_class([C45Tree()], variants=[C45Tree(unpruned=True, min_samples_leaf=1)])
def test_scikit_learn_contract(estimator, check):
    check(estimator)


def test_the_stored_normal_quantile_is_scipys():
    # J48's default confidence 0.25 needs Phi^-1(0.75); it is stored so that fitting need not
    # import scipy.special, and must be the number ndtri gives (other values still call it)
    from scipy.special import ndtri

    from ensemblekit.classifiers import _c45_growth

    for p, z in _c45_growth._NORMAL_INVERSE.items():
        assert z == float(ndtri(p))
    assert _c45_growth._normal_inverse(0.9) == float(ndtri(0.9))


def test_the_compiled_pruning_estimate_equals_add_errors_bit_for_bit():
    # the compiled pruning (issue 30) must give the extra errors of add_errors exactly: the
    # same branches (no error, under one, the top, the normal approximation)
    from ensemblekit.classifiers import _c45_growth, _c45_pruning

    for cf in (0.25, 0.1, 0.5, 0.01):
        cfd = float(np.float32(cf))
        z = _c45_growth._normal_inverse(float(np.float32(1) - np.float32(cf)))
        for n in (0.5, 1.0, 2.0, 3.7, 14.0, 100.0, 1234.5):
            for e in (0.0, 0.3, 0.999, 1.0, 2.5, n - 0.4, n):
                if 0 <= e <= n:
                    assert _c45_pruning.add_errors(n, e, cfd, z) == add_errors(n, e, cf), (cf, n, e)


def test_the_compiled_sum_adds_as_numpy_does():
    # pruning sums class weights as the numpy code it replaced did: pairwise, 8 partial sums
    from ensemblekit.classifiers._c45_pruning import _numpy_sum

    rng = np.random.default_rng(3)
    for n in [*range(0, 300, 7), 1000, 4099]:
        x = rng.random(n + 3) * 10.0 ** rng.integers(-3, 8, n + 3)
        assert _numpy_sum(x, 2, n) == x[2:n + 2].sum()
