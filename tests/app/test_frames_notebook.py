"""Issue 32, acceptance 1: a data scientist's notebook on palmerpenguins-like data in a DataFrame.

The frame is built here: a string class with three values, ``category`` columns (one with
NaN), four float columns with a few NaN. What ``fit``, ``compare`` and ``evaluate`` compute
on it must equal what they compute on the same data written to a file and read back: a CSV
whose nominal columns hold text (so the reader makes them nominal over their sorted values,
the frame's categories here), and an ARFF file that declares the categories in the frame's
own (unsorted) order. ``C45Tree`` fitted on the frame takes its category columns as nominal.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.api import compare, describe_model, evaluate, fit, predict
from ensemblekit.classifiers.c45 import C45Tree

pd = pytest.importorskip("pandas")

SPECIES = ("Adelie", "Chinstrap", "Gentoo")


def penguins(n: int = 60, seed: int = 3):
    """A palmerpenguins-like frame: species (str), island and sex (category), four floats."""
    rng = np.random.default_rng(seed)
    species = np.array(SPECIES)[rng.permutation(np.arange(n) % 3)]
    gentoo, chinstrap = species == "Gentoo", species == "Chinstrap"
    island = np.where(gentoo, "Biscoe", np.where(chinstrap, "Dream",
                                                 rng.choice(["Biscoe", "Dream", "Torgersen"], n)))
    frame = pd.DataFrame({
        "island": pd.Categorical(island, categories=["Biscoe", "Dream", "Torgersen"]),
        "bill_length_mm": np.round(rng.normal(39, 2.5, n) + 9 * chinstrap + 8 * gentoo, 1),
        "bill_depth_mm": np.round(rng.normal(18.3, 1.2, n) - 3.3 * gentoo, 1),
        "flipper_length_mm": np.round(rng.normal(190, 6, n) + 27 * gentoo, 0),
        "body_mass_g": np.round(rng.normal(3700, 400, n) + 1400 * gentoo, -1),
        "sex": pd.Categorical(rng.choice(["female", "male"], n), categories=["female", "male"]),
        "species": species,
    })
    frame.loc[[4, 17], "sex"] = np.nan
    frame.loc[[9], ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]] = np.nan
    frame.loc[[23], "body_mass_g"] = np.nan
    frame.loc[[41], "bill_depth_mm"] = np.nan
    return frame


def write_arff(frame, path) -> None:
    """The frame as ARFF: category columns declared with the frame's categories in order."""
    lines = ["@relation penguins"]
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            lines.append(f"@attribute {name} {{{','.join(column.cat.categories)}}}")
        elif column.dtype == float:
            lines.append(f"@attribute {name} numeric")
        else:
            lines.append(f"@attribute {name} {{{','.join(sorted(set(column)))}}}")
    lines.append("@data")
    for row in frame.itertuples(index=False):
        lines.append(",".join("?" if pd.isna(v) else repr(v) if isinstance(v, float) else str(v)
                              for v in row))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("penguins")
    frame = penguins()
    frame.to_csv(folder / "penguins.csv", index=False)
    # the ARFF file declares island's values in another order than sorted, as the frame does
    unsorted = frame.assign(island=frame["island"].cat.reorder_categories(
        ["Torgersen", "Biscoe", "Dream"]))
    write_arff(unsorted, folder / "penguins.arff")
    return frame, unsorted, folder / "penguins.csv", folder / "penguins.arff"


def _same_scores(a, b, name_a, name_b):
    """Two comparisons' long-format scores agree but for the data set's name and timings."""
    def strip(result, name):
        rows = result.to_frame().drop(columns=["seconds"])
        assert set(rows["dataset"]) == {name}
        return rows.drop(columns=["dataset"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(strip(a, name_a), strip(b, name_b))


def _tree(model) -> str:
    """The tree as J48 prints it, with the attributes' names and values."""
    shown = describe_model(model)
    return shown["estimator"].export_text(feature_names=shown["feature_names"],
                                          class_names=shown["class_values"],
                                          category_names=shown["category_names"])


@pytest.mark.parametrize("which", ["csv", "arff"])
def test_fit_on_the_frame_is_fit_on_the_file(files, which):
    frame, unsorted, csv, arff = files
    data, path = (frame, csv) if which == "csv" else (unsorted, arff)
    on_frame = fit("c45", data, target="species")
    on_file = fit("c45", str(path), target="species")
    train_frame = on_frame.metadata["training_data"]
    train_file = on_file.metadata["training_data"]
    assert train_frame["name"] == "frame" and train_file["name"] == "penguins"
    assert train_frame["fingerprint"] == train_file["fingerprint"]  # the same X and y
    assert train_frame["class_counts"] == train_file["class_counts"] == [20, 20, 20]
    schema_frame, schema_file = on_frame.metadata["schema"], on_file.metadata["schema"]
    assert schema_frame["attributes"] == schema_file["attributes"]
    assert _tree(on_frame) == _tree(on_file)
    rows = data.drop(columns="species")
    by_frame, by_file = predict(on_frame, rows, proba=True), predict(on_file, str(path), proba=True)
    assert by_frame.predictions == by_file.predictions
    np.testing.assert_array_equal(by_frame.probabilities, by_file.probabilities)


@pytest.mark.parametrize("which", ["csv", "arff"])
def test_compare_and_evaluate_on_the_frame_are_those_on_the_file(files, which):
    frame, unsorted, csv, arff = files
    data, path = (frame, csv) if which == "csv" else (unsorted, arff)
    on_frame = compare(["c45", "knn"], [data], cv=5, repeats=1, target="species")
    on_file = compare(["c45", "knn"], [str(path)], cv=5, repeats=1, target="species")
    assert list(on_frame.table("accuracy")) == ["frame"]
    assert on_frame.table("accuracy")["frame"] == on_file.table("accuracy")["penguins"]
    _same_scores(on_frame, on_file, "frame", "penguins")
    pooled_frame = evaluate("c45", data, target="species", cv=5, repeats=1)
    pooled_file = evaluate("c45", str(path), target="species", cv=5, repeats=1)
    _same_scores(pooled_frame, pooled_file, "frame", "penguins")
    assert (pooled_frame.pooled["frame", "c45"].to_dict()
            == pooled_file.pooled["penguins", "c45"].to_dict())


def test_compare_takes_the_frame_with_its_class_last_and_names_several(files):
    frame, unsorted, csv, _ = files
    result = compare(["c45"], [frame, unsorted], cv=5, repeats=1)  # species is last
    assert list(result.table("accuracy")) == ["data1", "data2"]
    named = compare(["c45"], {"penguins": frame}, cv=5, repeats=1)
    assert named.table("accuracy")["penguins"] == result.table("accuracy")["data1"]
    from_file = compare(["c45"], [str(csv)], cv=5, repeats=1)
    assert from_file.table("accuracy")["penguins"] == named.table("accuracy")["penguins"]


def test_c45tree_takes_the_category_columns_of_a_frame_as_nominal(files):
    frame, unsorted, _, _ = files
    for data in (frame, unsorted):
        X, y = data.drop(columns="species"), data["species"].to_numpy()
        tree = C45Tree().fit(X, y)
        codes = X.assign(island=X["island"].cat.codes, sex=X["sex"].cat.codes).to_numpy(float)
        codes[codes < 0] = np.nan  # pandas codes a missing category -1
        by_hand = C45Tree(nominal_features=[0, 5], n_categories=[3, 2]).fit(codes, y)
        assert tree.nominal_features_.tolist() == [0, 5] and tree.n_categories_.tolist() == [3, 2]
        assert tree.export_text() == by_hand.export_text()
        assert list(tree.feature_names_in_) == list(X.columns)
        np.testing.assert_array_equal(tree.predict_proba(X), by_hand.predict_proba(codes))
        assert tree.frame_categories_[0] == tuple(X["island"].cat.categories)
    text = tree.export_text(feature_names=list(X.columns), category_names=tree.frame_categories_)
    assert "island = Torgersen" in text or "sex = female" in text


def test_the_cli_with_nominal_reads_the_csv_as_the_frame_is_read(files, tmp_path, monkeypatch,
                                                                  capsys):
    """Acceptance 1 through the command line: a frame with a `category` column of whole
    numbers (the year), written to CSV, reads back as the same data only with --nominal;
    compare's scores on the CLI then equal the API's on the frame."""
    import json

    from ektesting.support import run_main

    frame = files[0].assign(year=pd.Categorical(2007 + np.arange(60) % 3,
                                                categories=[2007, 2008, 2009]))
    frame = frame[[c for c in frame.columns if c != "species"] + ["species"]]
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    on_frame = compare(["c45", "knn"], [frame], cv=5, repeats=1)
    args = ["compare", "c45", "knn", "--data", path, "--cv", "5", "--repeats", "1", "--format",
            "json"]
    code, out, err = run_main([*args, "--nominal", "year"], monkeypatch, capsys)
    assert code == 0, err
    rows = json.loads(out)["metrics"]["accuracy"]["rows"][0]["scores"]
    for label in ("c45", "knn"):
        assert rows[label]["mean"] == on_frame.summary[("frame", label, "accuracy")][0]
    # without --nominal the year is a number, and knn's distances (and scores) differ
    code, out, _ = run_main(["info", path, "--format", "json"], monkeypatch, capsys)
    assert next(a for a in json.loads(out)["attributes"] if a["name"] == "year")["type"] \
        == "numeric"
    code, out, _ = run_main(args, monkeypatch, capsys)
    guessed = json.loads(out)["metrics"]["accuracy"]["rows"][0]["scores"]
    assert guessed["knn"]["mean"] != on_frame.summary[("frame", "knn", "accuracy")][0]
