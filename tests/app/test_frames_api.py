"""DataFrames and text streams in every api function that takes data; results out as frames."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ensemblekit.api import (
    cluster,
    compare,
    describe_data,
    evaluate,
    evaluate_model,
    fit,
    load_data,
    predict,
)
from ensemblekit.dataset import DataError

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris.arff"
TOY_ARFF = """@relation toy
@attribute colour {red,green}
@attribute size numeric
@attribute class {yes,no}
@data
red,1,yes
green,2,no
red,3,yes
green,?,no
"""


def iris_frame():
    ds = load_data(str(IRIS))
    return ds.to_frame(), ds


def test_load_data_reads_a_frame_where_it_raised_truth_value_ambiguous():
    frame, ds = iris_frame()
    again = load_data(frame)
    assert again.name == "frame" and again.schema.attributes == ds.schema.attributes
    np.testing.assert_array_equal(again.X, ds.X)
    np.testing.assert_array_equal(again.y, ds.y)
    assert load_data(frame, name="iris").name == "iris"


@pytest.mark.parametrize("wrap", [io.StringIO, lambda text: io.BytesIO(text.encode())])
def test_load_data_reads_a_stream_of_arff_or_csv_text(wrap):
    arff = load_data(wrap(TOY_ARFF))
    assert arff.name == "toy" and arff.source == "<stream>"
    assert arff.schema.class_attribute.values == ("yes", "no") and arff.y.tolist() == [0, 1, 0, 1]
    csv = load_data(wrap("colour,size,class\nred,1,yes\ngreen,2,no\n"), target="CLASS")
    assert csv.name == "stream" and csv.schema.class_attribute.name == "class"
    assert csv.schema.features[0].values == ("green", "red")
    with pytest.raises(DataError, match=r"^<stream>, line 6: value 'blue' is not declared"):
        load_data(wrap(TOY_ARFF.replace("red,1,yes", "blue,1,yes")))


def test_an_integer_class_column_of_a_frame_is_a_class_for_classifiers():
    frame = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0],
                          "label": [0, 0, 0, 0, 1, 1, 1, 1]})
    model = fit("c45", frame, target="label", notify=lambda m: None)
    assert model.metadata["schema"]["attributes"][1] == {"name": "label", "kind": "nominal",
                                                         "values": ["0", "1"]}
    assert predict(model, frame.drop(columns="label")).predictions == ["0"] * 4 + ["1"] * 4


def test_predict_and_evaluate_a_model_on_a_frame_or_a_stream_as_on_the_file():
    frame, _ = iris_frame()
    model = fit("knn", str(IRIS))
    on_file = predict(model, str(IRIS), proba=True)
    on_frame = predict(model, frame.drop(columns="class"), proba=True)
    with open(IRIS, encoding="utf-8") as stream:
        on_stream = predict(model, stream, proba=True)
    assert on_frame.predictions == on_file.predictions == on_stream.predictions
    np.testing.assert_array_equal(on_frame.probabilities, on_file.probabilities)
    quiet = {"notify": lambda message: None}  # the resubstitution note
    assert (evaluate_model(model, frame, **quiet).scores
            == evaluate_model(model, str(IRIS), **quiet).scores)


def test_cluster_and_describe_data_take_a_frame():
    frame, _ = iris_frame()
    on_frame = cluster("kmeans", frame, k=3, seed=2)
    on_file = cluster("kmeans", str(IRIS), k=3, seed=2)
    assert on_frame.dataset == "frame"
    np.testing.assert_array_equal(on_frame.labels, on_file.labels)
    assert on_frame.external == on_file.external
    described = describe_data(frame)
    assert described["file"] == "frame" and described["class"]["counts"]["Iris-setosa"] == 50


def test_results_give_their_records_as_a_frame():
    frame, _ = iris_frame()
    result = compare(["c45", "knn"], {"iris": frame}, cv=3, repeats=1)
    records = result.to_frame()
    assert list(records.columns) == list(result.to_records()[0])
    assert len(records) == len(result.to_records())
    assert set(records["dataset"]) == {"iris"} and set(records["algorithm"]) == {"c45", "knn"}
    accuracy = records[records["metric"] == "accuracy"].groupby("algorithm")["value"].mean()
    assert accuracy.to_dict() == pytest.approx(result.table("accuracy")["iris"])
    prediction = predict(fit("c45", frame), frame, proba=True).to_frame()
    assert list(prediction.columns[:2]) == ["row", "prediction"] and len(prediction) == 150
    evaluation = evaluate("c45", frame, test=frame, notify=lambda message: None).to_frame()
    assert set(evaluation.columns) == {"metric", "value"}


@pytest.mark.slow  # starts a process
def test_neither_pandas_nor_polars_is_imported_unless_a_frame_is_given():
    code = textwrap.dedent(f"""
        import sys
        import ensemblekit.api
        assert "pandas" not in sys.modules and "polars" not in sys.modules, "on import"
        from ensemblekit.api import compare, fit, load_data, predict
        model = fit("knn", {str(IRIS)!r})
        predict(model, {str(IRIS)!r})
        compare(["knn"], [{str(IRIS)!r}], cv=2, repeats=1)
        loaded = [m for m in ("pandas", "polars") if m in sys.modules]
        assert not loaded, loaded
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr



def test_predict_reads_a_frame_s_unseen_value_as_missing(tmp_path):
    """predict --unknown on a DataFrame as on a file (issue 32): an unseen value is read as
    missing, with the note counting its rows, or refused with --unknown error."""
    from ensemblekit import api
    from ensemblekit.data import load_dataset

    vote = load_dataset(ROOT / "sample_data" / "vote.arff")
    model = api.fit("c45", vote)
    frame = vote.to_frame().drop(columns=["Class"])
    odd, blank = frame.copy(), frame.copy()
    for column in ("physician-fee-freeze", "synfuels-corporation-cutback"):
        for table, value in ((odd, "maybe"), (blank, None)):
            table[column] = table[column].astype(object)
            table.loc[[3, 10, 11], column] = value
    notes = []
    with api.reading(notify=notes.append):
        got = api.predict(model, odd, proba=True)
    want = api.predict(model, blank, proba=True)
    assert got.predictions == want.predictions
    np.testing.assert_array_equal(got.probabilities, want.probabilities)
    assert notes == ["frame: 3 rows hold a nominal value not seen in training, read as missing "
                     "(attributes 'physician-fee-freeze', 'synfuels-corporation-cutback'); "
                     "--unknown error refuses such values"]
    with pytest.raises(ValueError, match="row 4: value 'maybe' of column 'physician-fee-freeze' "
                                         "was not seen in the training data"):
        api.predict(model, odd, unknown="error")
