"""Tests for ensemblekit.discretize: MDL cut points (Fayyad & Irani, as Weka) and bins."""

import math
import re
from pathlib import Path

import arff
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from ensemblekit.discretize import (
    MDLDiscretizer,
    equal_frequency_cut_points,
    mdl_cut_points,
)

from ektesting.estimator_checks import parametrize_with_checks_per_class
from ektesting.support import data_path
from ektesting.weka_tools import needs_weka, run_weka

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris.arff"
GLASS = ROOT / "sample_data" / "glass.arff"
DIABETES = data_path("diabetes.arff")




def load_arff(path):
    """Numeric columns (NaN for '?'), their names and the class codes (last attribute)."""
    with open(path) as fh:
        data = arff.load(fh)
    attributes = data["attributes"]
    class_values = attributes[-1][1]
    rows = data["data"]
    y = np.array([class_values.index(r[-1]) for r in rows])
    names, columns = [], []
    for j, (name, kind) in enumerate(attributes[:-1]):
        if isinstance(kind, list):
            continue
        names.append(name)
        columns.append([np.nan if r[j] is None else r[j] for r in rows])
    return np.array(columns, dtype=float).T, y, names, len(class_values)


# --- Weka's published cut points (Weka 3.9.7, supervised Discretize -c last) ---------


def test_iris_cut_points_equal_wekas():
    X, y, names, n_classes = load_arff(IRIS)
    expected = {
        "sepallength": [5.55, 6.15],
        "sepalwidth": [2.95, 3.35],
        "petallength": [2.45, 4.75],
        "petalwidth": [0.8, 1.75],
    }
    assert names == list(expected)
    for j, name in enumerate(names):
        np.testing.assert_allclose(
            mdl_cut_points(X[:, j], y, n_classes), expected[name], rtol=0, atol=1e-12
        )


def test_diabetes_cut_points_equal_wekas():
    X, y, names, _ = load_arff(DIABETES)
    expected = {
        "preg": [6.5],
        "plas": [99.5, 127.5, 154.5],
        "pres": [],
        "skin": [],
        "insu": [14.5, 121.0],
        "mass": [27.85],
        "pedi": [0.5275],
        "age": [28.5],
    }
    assert names == list(expected)
    d = MDLDiscretizer().fit(X, y)
    for j, name in enumerate(names):
        np.testing.assert_allclose(d.cut_points_[j], expected[name], rtol=0, atol=1e-12)
    # pres and skin stay one bin (Weka's "All"): everything gets code 0.
    np.testing.assert_array_equal(d.n_bins_, [2, 4, 1, 1, 3, 2, 2, 2])
    Xt = d.transform(X)
    assert np.all(Xt[:, 2] == 0) and np.all(Xt[:, 3] == 0)


# --- hand-computed cases -------------------------------------------------------------


def test_separable_column_gets_one_cut_at_the_midpoint():
    # 0 0 0 | 1 1 1 between 3 and 5: gain = 1 bit; threshold
    # (log2 5 + log2 7 - (2*1 - 0 - 0)) / 6 = (2.32 + 2.81 - 2) / 6 = 0.52 < 1.
    cuts = mdl_cut_points([1.0, 2.0, 3.0, 5.0, 6.0, 7.0], [0, 0, 0, 1, 1, 1], 2)
    np.testing.assert_array_equal(cuts, [4.0])


def test_order_of_the_input_does_not_matter():
    x = np.array([6.0, 1.0, 5.0, 3.0, 7.0, 2.0])
    y = np.array([1, 0, 1, 0, 1, 0])
    np.testing.assert_array_equal(mdl_cut_points(x, y, 2), [4.0])


def test_pure_column_gets_no_cut():
    # One class only: E(S) = 0, no split can lower it.
    assert mdl_cut_points([1.0, 2.0, 3.0, 4.0], [1, 1, 1, 1], 2).size == 0
    # A constant column has no candidate cut at all.
    assert mdl_cut_points([2.0, 2.0, 2.0, 2.0], [0, 1, 0, 1], 2).size == 0


def test_noisy_column_is_rejected_by_the_mdl_criterion():
    # x = 1 2 3 4, classes 0 1 0 1; E(S) = 1 bit, N = 4.
    # Cuts 1.5 and 3.5 tie at E = 3/4 * H(1/3) = 0.688722 (2.5 gives 1.0); the first
    # (1.5) is the candidate: S1 = {0} (k1 = 1, E1 = 0), S2 = {1, 0, 1} (k2 = 2,
    # E2 = H(1/3) = 0.918296). gain = 1 - 0.688722 = 0.311278.
    # delta = log2(3^2 - 2) - (2*1 - 2*0.918296 - 1*0) = 2.807355 - 0.163408 = 2.643947
    # threshold = (log2(N - 1) + delta) / N = (1.584963 + 2.643947) / 4 = 1.057227
    # gain 0.311 <= 1.057: rejected, no cut.
    h = -(1 / 3 * math.log2(1 / 3) + 2 / 3 * math.log2(2 / 3))
    gain = 1 - 0.75 * h
    threshold = (math.log2(3) + math.log2(7) - (2 - 2 * h)) / 4
    assert gain == pytest.approx(0.311278, abs=1e-6)
    assert threshold == pytest.approx(1.057227, abs=1e-6)
    assert mdl_cut_points([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], 2).size == 0


def test_recursion_splits_both_sides():
    # four classes 0^20 1^20 2^20 3^20 on x = 1..80: the top cut 40.5 gains 1 bit (2 - 1)
    # against a threshold of about 0.108; then each half gains 1 bit against about 0.152,
    # so the left half must be cut at 20.5 and the right half at 60.5
    x = np.arange(1.0, 81.0)
    y = np.repeat([0, 1, 2, 3], 20)
    np.testing.assert_array_equal(mdl_cut_points(x, y, 4), [20.5, 40.5, 60.5])
    # 0^20 1^20 0^20 on x = 1..60: cuts 20.5 and 40.5 tie at the top (E = 2/3 bit,
    # prior H(1/3) = 0.918, gain 0.252 > (log2 59 + 2.971) / 60 = 0.148); the first
    # wins, and the right half 1^20 0^20 then splits perfectly at 40.5.
    x = np.arange(1.0, 61.0)
    y = np.array([0] * 20 + [1] * 20 + [0] * 20)
    np.testing.assert_array_equal(mdl_cut_points(x, y, 2), [20.5, 40.5])
    # With 10 per block, N = 30: gain 0.252 < (log2 29 + 2.971) / 30 = 0.261, no cut.
    x = np.arange(1.0, 31.0)
    y = np.array([0] * 10 + [1] * 10 + [0] * 10)
    assert mdl_cut_points(x, y, 2).size == 0


def test_missing_values_are_ignored():
    x = np.array([1.0, np.nan, 2.0, 3.0, np.nan, 5.0, 6.0, 7.0])
    y = np.array([0, 1, 0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(mdl_cut_points(x, y, 2), [4.0])
    assert mdl_cut_points([np.nan, np.nan, 1.0], [0, 1, 0], 2).size == 0


def test_mdl_cut_points_rejects_bad_input():
    with pytest.raises(ValueError, match="lengths"):
        mdl_cut_points([1.0, 2.0], [0], 2)
    with pytest.raises(ValueError, match="class codes"):
        mdl_cut_points([1.0, 2.0], [0, 2], 2)
    with pytest.raises(ValueError, match="class codes"):
        mdl_cut_points([1.0, 2.0], [0, 0.5], 2)
    with pytest.raises(ValueError, match="infinite"):
        mdl_cut_points([1.0, np.inf], [0, 1], 2)
    with pytest.raises(ValueError, match="one-dimensional"):
        mdl_cut_points([[1.0, 2.0]], [0, 1], 2)
    with pytest.raises(ValueError, match="n_classes"):
        mdl_cut_points([1.0, 2.0], [0, 0], 0)


def test_equal_frequency_bins():
    np.testing.assert_array_equal(
        equal_frequency_cut_points(np.arange(1.0, 11.0), 2), [5.5]
    )
    # Targets 10/3 and 20/3 values on the left move to 3 and 7.
    np.testing.assert_array_equal(
        equal_frequency_cut_points(np.arange(1.0, 11.0), 3), [3.5, 7.5]
    )
    # Ties: 1 1 1 1 1 1 2 3; the target 4 moves to the only boundaries (after 6 or 7
    # values): 6 is nearer, cut 1.5. NaN is ignored.
    x = [1, 1, 1, 1, 1, 1, 2, 3, np.nan]
    np.testing.assert_array_equal(equal_frequency_cut_points(x, 2), [1.5])
    # Duplicate cuts merge; a constant column gets none; one bin means no cut.
    np.testing.assert_array_equal(equal_frequency_cut_points([1, 1, 1, 2], 3), [1.5])
    assert equal_frequency_cut_points([4.0, 4.0, 4.0], 3).size == 0
    assert equal_frequency_cut_points(np.arange(10.0), 1).size == 0


# --- the estimator ---------------------------------------------------------------------


def test_transform_codes_bins_like_weka():
    X = np.array([[1.0], [2.0], [3.0], [5.0], [6.0], [7.0]])
    y = [0, 0, 0, 1, 1, 1]
    d = MDLDiscretizer().fit(X, y)
    # Weka: bin j holds cut[j-1] < v <= cut[j]; the cut value itself goes left.
    Xt = d.transform([[-100.0], [4.0], [4.0000001], [100.0], [np.nan]])
    np.testing.assert_array_equal(Xt[:, 0], [0.0, 0.0, 1.0, 1.0, np.nan])
    assert Xt.dtype == np.float64


def test_nominal_features_pass_through():
    X = np.array(
        [
            [1.0, 0, 2],
            [2.0, 1, 0],
            [3.0, 0, np.nan],
            [5.0, 2, 1],
            [6.0, 1, 0],
            [7.0, 0, 2],
        ]
    )
    y = np.array(["a", "a", "a", "b", "b", "b"])
    d = MDLDiscretizer(nominal_features=[2, 1]).fit(X, y)
    np.testing.assert_array_equal(d.nominal_features_, [1, 2])
    np.testing.assert_array_equal(d.classes_, ["a", "b"])
    assert d.cut_points_[1].size == 0 and d.cut_points_[2].size == 0
    np.testing.assert_array_equal(d.n_bins_, [2, 3, 3])  # inferred: max code + 1
    Xt = d.transform(X)
    np.testing.assert_array_equal(Xt[:, 1:], X[:, 1:])
    np.testing.assert_array_equal(Xt[:, 0], [0, 0, 0, 1, 1, 1])
    # n_categories (in sorted-index order) overrides the inference, e.g. from a schema.
    d = MDLDiscretizer(nominal_features=[1, 2]).fit(X, y, n_categories=[4, 5])
    np.testing.assert_array_equal(d.n_bins_, [2, 4, 5])
    with pytest.raises(ValueError, match="n_categories"):
        MDLDiscretizer(nominal_features=[1, 2]).fit(X, y, n_categories=[2, 5])
    with pytest.raises(ValueError, match="n_categories"):
        MDLDiscretizer(nominal_features=[1, 2]).fit(X, y, n_categories=[4])
    with pytest.raises(ValueError, match="integer codes"):
        MDLDiscretizer(nominal_features=[0]).fit(X + 0.5, y)
    with pytest.raises(ValueError, match="outside"):
        MDLDiscretizer(nominal_features=[3]).fit(X, y)


def test_equal_frequency_method_ignores_y():
    X = np.arange(1.0, 11.0).reshape(-1, 1)
    d = MDLDiscretizer(method="equal-frequency", n_bins=2).fit(X)
    np.testing.assert_array_equal(d.cut_points_[0], [5.5])
    np.testing.assert_array_equal(d.transform(X)[:, 0], [0] * 5 + [1] * 5)
    np.testing.assert_array_equal(d.n_bins_, [2])


def test_parameter_and_fit_errors():
    X = np.arange(6.0).reshape(-1, 1)
    y = [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="method"):
        MDLDiscretizer(method="kononenko").fit(X, y)
    with pytest.raises(ValueError, match="n_bins"):
        MDLDiscretizer(method="equal-frequency", n_bins=0).fit(X)
    with pytest.raises(ValueError, match="requires y"):
        MDLDiscretizer().fit(X)
    with pytest.raises(ValueError, match="infinity"):
        MDLDiscretizer().fit(np.array([[np.inf]] * 6), y)
    with pytest.raises(NotFittedError):
        MDLDiscretizer().transform(X)
    d = MDLDiscretizer().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features"):
        d.transform(np.zeros((2, 3)))
    assert clone(d).get_params() == d.get_params()


@parametrize_with_checks_per_class(
    [MDLDiscretizer()], variants=[MDLDiscretizer(method="equal-frequency", n_bins=3)]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --- the real Weka, when it is installed ------------------------------------------------

_NUM = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE]-?[0-9]+)?"
_RANGE = re.compile(r"\((-inf|" + _NUM + r")-(inf|" + _NUM + r")[\]\)]")


def parse_weka_header(text):
    """Cut points per attribute from the header Weka's Discretize prints.

    Ranges look like '(-inf-5.55]', '(5.55-6.15]', '(6.15-inf)'; one bin is 'All'.
    """
    cuts = {}
    for line in text.splitlines():
        if line.lower().startswith("@data"):
            break
        m = re.match(
            r"@attribute\s+('(?:[^'\\]|\\.)*'|\S+)\s+\{(.*)\}\s*$", line, re.IGNORECASE
        )
        if not m:
            continue
        name, body = m.group(1).strip("'"), m.group(2)
        ranges = _RANGE.findall(body)
        if ranges:
            cuts[name] = [float(hi) for _, hi in ranges if hi != "inf"]
        elif "All" in body:
            cuts[name] = []
    return cuts


def test_parse_weka_header():
    text = (
        "@relation x\n"
        "@attribute a {'\\'(-inf-5.55]\\'','\\'(5.55-6.15]\\'','\\'(6.15-inf)\\''}\n"
        "@attribute b {'\\'(-inf--0.5]\\'','\\'(-0.5-inf)\\''}\n"
        "@attribute c {'\\'All\\''}\n"
        "@attribute class {x,y}\n@data\n"
    )
    assert parse_weka_header(text) == {"a": [5.55, 6.15], "b": [-0.5], "c": []}


@needs_weka
@pytest.mark.parametrize("path", [IRIS, GLASS], ids=["iris", "glass"])
def test_cut_points_agree_with_running_weka(path):
    out = run_weka("weka.filters.supervised.attribute.Discretize", "-i", str(path), "-c", "last",
                   timeout=120)
    weka = parse_weka_header(out)
    X, y, names, n_classes = load_arff(path)
    assert set(names) <= set(weka)
    for j, name in enumerate(names):
        ours = mdl_cut_points(X[:, j], y, n_classes)
        # Weka prints the cuts rounded to 6 decimal places.
        assert len(ours) == len(weka[name]), name
        np.testing.assert_allclose(ours, weka[name], rtol=0, atol=5e-7, err_msg=name)


def test_better_encoding_cut_points_of_iris():
    # Weka's GainRatioAttributeEval discretises with useBetterEncoding=true: the
    # cost of a cut is log2(#candidate cuts), so sepal length and petal length get
    # a third cut that the default encoding refuses.
    from ensemblekit.data import load_dataset

    ds = load_dataset(data_path("iris.arff"))
    X, y = ds.X, ds.y
    cuts = [mdl_cut_points(X[:, f], y, 3, better_encoding=True) for f in range(4)]
    np.testing.assert_allclose(cuts[0], [5.55, 6.15, 7.05])
    np.testing.assert_allclose(cuts[1], [2.95, 3.35])
    np.testing.assert_allclose(cuts[2], [2.45, 4.75, 5.15])
    np.testing.assert_allclose(cuts[3], [0.8, 1.75])
    np.testing.assert_allclose(mdl_cut_points(X[:, 0], y, 3), [5.55, 6.15])


def test_better_encoding_keeps_every_default_cut():
    # The two encodings choose the same candidate in every interval and the better
    # one has the lower threshold, so its cuts are a superset.
    rng = np.random.default_rng(4)
    for _ in range(30):
        n = int(rng.integers(20, 200))
        x = np.round(rng.normal(size=n), 1)
        y = (x + rng.normal(scale=0.7, size=n) > 0).astype(int) + (x > 1.2)
        default = mdl_cut_points(x, y, 3)
        better = mdl_cut_points(x, y, 3, better_encoding=True)
        assert set(default.tolist()) <= set(better.tolist())
