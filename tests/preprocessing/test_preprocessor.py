"""The preprocessing step against the scikit-learn pipeline it replaced, and its stored state."""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.data import load_dataset
from ensemblekit.preprocessing import Preprocessor, make_preprocessor
from ensemblekit.preprocessing_model import PreprocessorModel, feature_names
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip
from ektesting.support import data_path


def _sklearn_step(schema, impute_numeric, scale):
    """The ColumnTransformer ensemblekit used before format 3 (the reference)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder

    numeric = [i for i, a in enumerate(schema.features) if a.kind == "numeric"]
    nominal = [i for i, a in enumerate(schema.features) if a.kind != "numeric"]
    parts = []
    if numeric:
        steps = []
        if impute_numeric:
            steps.append(("impute", SimpleImputer(strategy="mean", keep_empty_features=True)))
        if scale == "minmax":
            steps.append(("scale", MinMaxScaler()))
        parts.append(("numeric", Pipeline(steps or [("keep", "passthrough")]), numeric))
    if nominal:
        cats = [np.arange(max(len(schema.features[i].values), 1), dtype=float) for i in nominal]
        parts.append(("nominal", Pipeline([
            ("impute", SimpleImputer(strategy="most_frequent", keep_empty_features=True)),
            ("onehot", OneHotEncoder(categories=cats, handle_unknown="ignore",
                                     sparse_output=False))]), nominal))
    return ColumnTransformer(parts, sparse_threshold=0.0)


@pytest.mark.parametrize("name", ["breast-cancer.arff", "housing.arff", "vote.arff", "glass.arff"])
@pytest.mark.parametrize("impute_numeric,scale", [(True, "none"), (True, "minmax"),
                                                  (False, "none")])
def test_columns_are_bit_for_bit_those_of_scikit_learn(name, impute_numeric, scale):
    ds = load_dataset(str(data_path(name)))
    X = ds.X.copy()
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.1] = np.nan  # gaps in every kind of column
    train, test = X[: len(X) // 2], X[len(X) // 2:]
    ours = make_preprocessor(ds.schema, impute_numeric=impute_numeric, scale=scale).fit(train)
    ref = _sklearn_step(ds.schema, impute_numeric, scale).fit(train)
    got, want = ours.transform(test), ref.transform(test)
    assert got.shape == want.shape == (len(test), len(feature_names(ds.schema)))
    assert got.tobytes() == want.tobytes()


def test_hand_computed_small_case():
    # numeric column 0 (mean of 1 and 3 = 2, range 1..3), nominal column 1 with 3 values
    step = Preprocessor([0], [1], [3], scale="minmax").fit(
        np.array([[1.0, 2.0], [np.nan, 0.0], [3.0, 2.0]]))
    assert step.numeric_fill_.tolist() == [2.0]
    assert step.scale_.tolist() == [0.5] and step.min_.tolist() == [-0.5]
    assert step.nominal_fill_.tolist() == [2.0]
    out = step.transform(np.array([[np.nan, np.nan], [3.0, 1.0], [5.0, 0.0]]))
    assert out.tolist() == [[0.5, 0.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0], [2.0, 1.0, 0.0, 0.0]]


def test_a_column_without_values_fills_zero_and_ties_take_the_smallest_code():
    step = Preprocessor([0], [1], [4]).fit(np.array([[np.nan, 3.0], [np.nan, 1.0]]))
    assert step.numeric_fill_.tolist() == [0.0]
    assert step.nominal_fill_.tolist() == [1.0]


def test_stored_state_rebuilds_the_same_columns():
    ds = load_dataset(str(data_path("breast-cancer.arff")))
    step = make_preprocessor(ds.schema, scale="minmax").fit(ds.X)
    rebuilt = roundtrip(step, PreprocessorModel)
    assert type(rebuilt) is PreprocessorModel
    assert rebuilt.transform(ds.X).tobytes() == step.transform(ds.X).tobytes()


@pytest.mark.parametrize("tamper,message", [
    (lambda p, s, a: a.__setitem__("nominal_fill_", np.array([9.0] + [0.0] * 8)), "code"),
    (lambda p, s, a: a.__setitem__("numeric_fill_", np.array([np.nan])), "NaN"),
    (lambda p, s, a: a.pop("nominal_fill_"), "missing"),
    (lambda p, s, a: a.__setitem__("scale_", np.array([1.0, 2.0])), "scale_"),
    (lambda p, s, a: s.__setitem__("n_features_in_", 3), "n_features_in_"),
])
def test_damaged_state_is_refused(tamper, message):
    ds = load_dataset(str(data_path("breast-cancer.arff")))
    step = make_preprocessor(ds.schema, scale="minmax").fit(ds.X)
    with pytest.raises(DamagedModelError, match=message):
        roundtrip(step, PreprocessorModel, tamper=tamper)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_the_mean_of_values_near_the_float_limits_is_that_of_the_ordinary_unit():
    # the sum of the known values overflows; their mean does not (issue 29)
    X = np.array([[1e308, 1.0], [1.5e308, np.nan], [np.nan, 3.0], [1.7e308, 2.0],
                  [-1e308, 2.0]])
    big = Preprocessor([0, 1], [], []).fit(X)
    small = Preprocessor([0, 1], [], []).fit(np.ldexp(X, -1000))
    assert big.numeric_fill_[0] == np.ldexp(small.numeric_fill_[0], 1000)
    assert big.numeric_fill_[0] == pytest.approx(8e307, rel=1e-15)
    assert big.numeric_fill_[1] == 2.0  # an ordinary column: the plain masked mean
    assert big.transform(X)[2, 0] == big.numeric_fill_[0]
