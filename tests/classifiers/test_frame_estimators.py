"""Estimators fitted on a DataFrame take its category, string and boolean columns as nominal."""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.bayesnet.classifier import K2Classifier
from ensemblekit.bayesnet.inner import InnerEnsembleK2Classifier
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.classifiers.ibk import IBk

pd = pytest.importorskip("pandas")

ESTIMATORS = [C45Tree(), IBk(n_neighbors=3), K2Classifier(),
              InnerEnsembleK2Classifier(n_estimators=3, random_state=0)]


def data(n: int = 40, seed: int = 0):
    """A frame of a category column (declared in unsorted order), a bool, a number and a string."""
    rng = np.random.default_rng(seed)
    y = np.array(["p", "q"])[np.arange(n) % 2]
    frame = pd.DataFrame({
        "colour": pd.Categorical(np.where(y == "p", rng.choice(["red", "blue"], n), "green"),
                                 categories=["red", "green", "blue"]),
        "wet": np.where(y == "q", rng.random(n) < 0.8, rng.random(n) < 0.3),
        "size": np.round(rng.normal(5, 1, n) + (y == "q"), 2),
        "shape": rng.choice(["round", "flat"], n).astype(object),
    })
    frame.loc[3, "colour"] = np.nan
    frame.loc[5, "shape"] = None
    # the same columns coded by hand: codes into the categories, booleans false=0 true=1,
    # strings into their sorted values
    codes = np.column_stack([frame["colour"].cat.codes.to_numpy(float), frame["wet"].to_numpy(float),
                             frame["size"].to_numpy(float),
                             frame["shape"].map({"flat": 0.0, "round": 1.0}).to_numpy(float)])
    codes[3, 0] = np.nan
    return frame, codes, y


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_a_frame_fits_as_the_codes_with_declared_nominal_columns(estimator):
    from sklearn.base import clone

    frame, codes, y = data()
    on_frame = clone(estimator).fit(frame, y)
    by_hand = clone(estimator).set_params(nominal_features=[0, 1, 3], n_categories=[3, 2, 2])
    by_hand.fit(codes, y)
    assert on_frame.nominal_features_.tolist() == [0, 1, 3]
    assert list(on_frame.feature_names_in_) == ["colour", "wet", "size", "shape"]
    assert on_frame.frame_categories_ == [("red", "green", "blue"), ("false", "true"), None,
                                          ("flat", "round")]
    np.testing.assert_array_equal(on_frame.predict_proba(frame), by_hand.predict_proba(codes))
    # at predict time the frame is coded by the training categories, whatever its own
    shuffled = frame.assign(colour=frame["colour"].astype(str).where(frame["colour"].notna()))
    np.testing.assert_array_equal(on_frame.predict_proba(shuffled), by_hand.predict_proba(codes))
    # a value unseen in training is a missing value
    unseen = frame.iloc[:4].assign(colour=["purple", "red", "green", None])
    expected = codes[:4].copy()
    expected[:, 0] = [np.nan, 0, 1, np.nan]
    np.testing.assert_array_equal(on_frame.predict_proba(unseen), by_hand.predict_proba(expected))
    # refitted on an array, the frame's categories are forgotten
    assert not hasattr(clone(estimator).fit(codes, y), "frame_categories_")


def test_declared_nominal_features_are_used_as_given_with_a_numeric_frame():
    _, codes, y = data()
    frame = pd.DataFrame(codes, columns=["a", "b", "c", "d"])
    tree = C45Tree(nominal_features=[0], n_categories=[3]).fit(frame, y)
    assert tree.nominal_features_.tolist() == [0] and not hasattr(tree, "frame_categories_")
    numeric = C45Tree().fit(frame, y)  # no declaration, all numbers: every column numeric
    assert numeric.nominal_features_.tolist() == [] and not hasattr(numeric, "frame_categories_")


def test_a_polars_enum_column_is_nominal_with_its_categories():
    pl = pytest.importorskip("polars")
    frame, codes, y = data()
    def cells(name):
        return [None if pd.isna(v) else v for v in frame[name].astype(object)]

    polars_frame = pl.DataFrame({
        "colour": pl.Series(cells("colour"), dtype=pl.Enum(["red", "green", "blue"])),
        "wet": cells("wet"), "size": cells("size"), "shape": cells("shape"),
    })
    tree = C45Tree().fit(polars_frame, y)
    by_hand = C45Tree(nominal_features=[0, 1, 3], n_categories=[3, 2, 2]).fit(codes, y)
    assert tree.export_text() == by_hand.export_text()
    np.testing.assert_array_equal(tree.predict_proba(polars_frame), by_hand.predict_proba(codes))
