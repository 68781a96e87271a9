"""Data frames read as data sets (ensemblekit.frames, Dataset.from_frame / to_frame)."""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.dataset import Attribute, DataError, Dataset, Schema
from ensemblekit.frames import frame_columns, is_frame

pd = pytest.importorskip("pandas")

DAY_MS = 86_400_000


def test_each_dtype_becomes_the_attribute_its_type_declares():
    frame = pd.DataFrame({
        "cat": pd.Categorical(["b", None, "c", "b"], categories=["c", "b", "a"]),
        "text": ["z", "y", None, "z"],
        "flag": [True, False, True, True],
        "maybe": pd.array([True, None, False, True], dtype="boolean"),
        "count": pd.array([1, None, 3, 4], dtype="Int64"),
        "real": [0.5, np.nan, 2.0, -1.0],
        "day": pd.to_datetime(["1970-01-02", None, "1969-12-31", "1970-01-01 00:00:01.5"],
                              format="ISO8601"),
    })
    columns = {c.name: c for c in frame_columns(frame)}
    # a category keeps its declared categories, unused "a" included, in declared order
    assert columns["cat"].values == ("c", "b", "a") and columns["cat"].declared
    np.testing.assert_array_equal(columns["cat"].data, [1, np.nan, 0, 1])
    # strings: sorted distinct values, as a CSV column of text
    assert columns["text"].values == ("y", "z")
    np.testing.assert_array_equal(columns["text"].data, [1, 0, np.nan, 1])
    assert columns["flag"].values == columns["maybe"].values == ("false", "true")
    np.testing.assert_array_equal(columns["flag"].data, [1, 0, 1, 1])
    np.testing.assert_array_equal(columns["maybe"].data, [1, np.nan, 0, 1])
    assert columns["count"].kind == "numeric"
    np.testing.assert_array_equal(columns["count"].data, [1, np.nan, 3, 4])
    # dates: milliseconds since the epoch, UTC (what Weka stores for a date attribute)
    np.testing.assert_array_equal(columns["day"].data, [DAY_MS, np.nan, -DAY_MS, 1500])


def test_a_datetime_with_a_time_zone_counts_from_the_epoch_in_utc():
    stamps = pd.Series(pd.to_datetime(["2000-01-01 00:00"])).dt.tz_localize("Europe/Paris")
    (column,) = frame_columns(pd.DataFrame({"t": stamps}))
    assert column.data[0] == 946_681_200_000  # 1999-12-31 23:00 UTC


def test_polars_types_are_read_the_same_way():
    pl = pytest.importorskip("polars")
    import datetime

    frame = pl.DataFrame({
        "enum": pl.Series(["b", None, "a"], dtype=pl.Enum(["b", "a"])),
        "cat": pl.Series(["y", "x", None], dtype=pl.Categorical),
        "text": ["q", None, "p"],
        "flag": [True, None, False],
        "n": [1, None, 3],
        "day": [datetime.date(1970, 1, 3), None, datetime.date(1970, 1, 1)],
    })
    assert is_frame(frame)
    columns = {c.name: c for c in frame_columns(frame)}
    assert columns["enum"].values == ("b", "a")
    np.testing.assert_array_equal(columns["enum"].data, [0, np.nan, 1])
    # a Categorical declares no categories of its own: read as text
    assert columns["cat"].values == ("x", "y") and not columns["cat"].declared
    assert columns["text"].values == ("p", "q")
    np.testing.assert_array_equal(columns["flag"].data, [1, np.nan, 0])
    np.testing.assert_array_equal(columns["n"].data, [1, np.nan, 3])
    np.testing.assert_array_equal(columns["day"].data, [2 * DAY_MS, np.nan, 0])


def test_columns_of_unread_types_are_all_named_at_once():
    frame = pd.DataFrame({"ok": [1.0, 2.0], "span": pd.to_timedelta([1, 2], unit="s"),
                          "z": [1 + 2j, 3j]})
    with pytest.raises(DataError, match=r"^frame: columns of a type .*'span' \(timedelta64.*'z' "
                                        r"\(complex128\)"):
        Dataset.from_frame(frame)


def test_an_infinite_number_is_refused_naming_column_and_row():
    with pytest.raises(DataError, match=r"column 'x' holds inf in row 2, not a finite number"):
        Dataset.from_frame(pd.DataFrame({"x": [1.0, np.inf], "c": ["a", "b"]}))


def test_target_is_matched_as_the_command_line_matches_it():
    frame = pd.DataFrame({"Species": ["a", "b"], "x": [1.0, 2.0]})
    ds = Dataset.from_frame(frame, target="species")
    assert ds.schema.class_attribute.name == "Species" and ds.y.tolist() == [0, 1]
    assert Dataset.from_frame(frame).schema.class_attribute.name == "x"  # the last, as Weka
    with pytest.raises(DataError, match=r"no column named 'specie' .*did you mean 'Species'"):
        Dataset.from_frame(frame, target="specie")
    with pytest.raises(DataError, match=r"cannot ignore 'y': no such column"):
        Dataset.from_frame(frame, ignore=["y"])


def test_the_round_trip_keeps_values_codes_and_missing_values():
    frame = pd.DataFrame({
        "island": pd.Categorical(["Dream", None, "Biscoe"], categories=["Torgersen", "Dream", "Biscoe"]),
        "mass": [3750.0, np.nan, 5000.0],
        "species": pd.Categorical(["b", "a", None], categories=["b", "a"]),
    })
    ds = Dataset.from_frame(frame, target="species", name="birds")
    assert ds.name == ds.source == "birds" and ds.format == "frame"
    assert ds.schema == Schema("birds", (Attribute("island", "nominal", ("Torgersen", "Dream", "Biscoe")),
                                         Attribute("mass", "numeric"),
                                         Attribute("species", "nominal", ("b", "a"))), 2)
    np.testing.assert_array_equal(ds.X, [[1, 3750], [np.nan, np.nan], [2, 5000]])
    assert ds.y.tolist() == [0, 1, -1]
    back = ds.to_frame()
    assert list(back.columns) == ["island", "mass", "species"]
    assert list(back["island"].cat.categories) == ["Torgersen", "Dream", "Biscoe"]
    assert back["island"].isna().tolist() == [False, True, False]
    assert back["species"].tolist()[:2] == ["b", "a"] and pd.isna(back["species"][2])
    again = Dataset.from_frame(back, target="species", name="birds")
    assert again.schema == ds.schema
    np.testing.assert_array_equal(again.X, ds.X)
    np.testing.assert_array_equal(again.y, ds.y)


def test_a_frame_is_coded_against_a_training_schema_by_name():
    schema = Schema("train", (Attribute("a", "nominal", ("x", "y")), Attribute("b", "numeric"),
                              Attribute("c", "nominal", ("1", "2"))), 2)
    frame = pd.DataFrame({"b": [0.5, 1.5], "extra": [9, 9], "c": [2, 1], "a": ["y", None]})
    ds = Dataset.from_frame(frame, schema=schema)
    np.testing.assert_array_equal(ds.X, [[1, 0.5], [np.nan, 1.5]])
    assert ds.y.tolist() == [1, 0]  # whole numbers read as the text of the class values
    assert Dataset.from_frame(frame, schema=schema, read_class=False).y is None
    with pytest.raises(DataError, match=r"row 2: value 'z' of column 'a' was not seen in the "
                                        r"training data \(known values: 'x', 'y'\)"):
        Dataset.from_frame(frame.assign(a=["x", "z"]), schema=schema)
    with pytest.raises(DataError, match=r"column 'b' of the training data is missing"):
        Dataset.from_frame(frame.drop(columns="b"), schema=schema)
    with pytest.raises(DataError, match=r"column 'b' is nominal here but numeric"):
        Dataset.from_frame(frame.assign(b=["p", "q"]), schema=schema)


def test_a_series_or_an_array_is_not_a_frame():
    assert not is_frame(pd.Series([1.0])) and not is_frame(np.zeros((2, 2)))
    assert is_frame(pd.DataFrame({"x": [1]}))
