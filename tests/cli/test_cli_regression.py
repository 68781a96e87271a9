"""Regression through the command line: fit, predict, evaluate and compare on a numeric class.

The plumbing is checked with a regressor whose answers are easy to reproduce: each
test registers a scikit-learn ridge regression as ``ridge-test`` for its own duration,
and the app runs in this process (CliRunner), serially. The rule ensembles' own CLI
tests are in test_cli_rules.py. Expected values are computed by hand with
scikit-learn on the same preprocessed data.
"""

import csv
import io
import json
from pathlib import Path

import arff
import numpy as np
import pytest
from sklearn.linear_model import Ridge

from ensemblekit import registry
from ensemblekit.state import Array, Scalar

from ektesting.support import run_cli as run

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
HOUSING = SAMPLE / "housing.arff"
IRIS = SAMPLE / "iris.arff"





class DeclaredRidge(Ridge):
    """scikit-learn's ridge regression with the fitted state a model file stores declared."""

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "coef_": Array("float64", ("n_features_in_",)),
        "intercept_": Scalar("float"),
    }


@pytest.fixture(autouse=True)
def ridge(monkeypatch):
    monkeypatch.setitem(registry.ALGORITHMS, "ridge-test", registry.AlgorithmSpec(
        name="ridge-test", task=registry.REGRESSION, description="ridge regression (tests only)",
        estimator=f"{__name__}:DeclaredRidge",
        params=(registry.Param("alpha", "float", 1.0, "penalty", low=0.0),),
        preprocessing="nominal: one-hot; missing: training mean (numeric) / mode (nominal)"))
    # a registered estimator with a declared state is stored and rebuilt by its registry entry


def _housing_by_hand(path=HOUSING):
    """housing read with liac-arff and preprocessed as ensemblekit's one-hot step does:
    the numeric attributes in file order, then one indicator column per CHAS value."""
    raw = arff.load(open(path))
    names = [a[0] for a in raw["attributes"]]
    chas = names.index("CHAS")
    rows = raw["data"]
    numeric = [[float(v) for k, v in enumerate(r[:-1]) if k != chas] for r in rows]
    onehot = [[float(r[chas] == "0"), float(r[chas] == "1")] for r in rows]
    X = np.hstack([np.array(numeric), np.array(onehot)])
    y = np.array([np.nan if r[-1] is None else float(r[-1]) for r in rows])
    return X, y


def _ridge(alpha=1.0):
    from sklearn.linear_model import Ridge

    return Ridge(alpha=alpha)


def _predictions(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["row", "prediction"]
    assert [int(r[0]) for r in rows[1:]] == list(range(1, len(rows)))
    return [r[1] for r in rows[1:]]


def test_housing_sample_loads_with_a_numeric_class():
    result = run("info", HOUSING, "--format", "json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["instances"] == 506
    assert summary["class"] == {"name": "MEDV", "type": "numeric"}
    attributes = summary["attributes"]
    assert len(attributes) == 14 and attributes[-1]["name"] == "MEDV"
    assert [a["name"] for a in attributes if a["role"] == "class"] == ["MEDV"]
    assert attributes[-1]["min"] == 5.0 and attributes[-1]["max"] == 50.0
    assert sum(a["missing"] for a in attributes) == 0
    lines = HOUSING.read_text().splitlines()
    assert lines[0].startswith("% Source: ") and "Harrison & Rubinfeld 1978" in lines[0]
    assert not any(line.startswith("%") for line in lines[1:])  # one comment line only


def test_fit_predict_equals_sklearn_by_hand(tmp_path):
    model = tmp_path / "h.ekm"
    fitted = run("fit", "ridge-test", HOUSING, "-o", model, "--set", "alpha=0.5")
    assert fitted.exit_code == 0, fitted.stderr
    assert "506 instances" in fitted.stderr and fitted.stdout == ""
    meta = json.loads(run("show", model, "--format", "json").stdout)
    assert meta["task"] == "regression" and meta["params"] == {"alpha": 0.5}
    out = run("predict", model, HOUSING)
    assert out.exit_code == 0, out.stderr
    tokens = _predictions(out.stdout)
    assert len(tokens) == 506
    # written in Python's shortest round-trip form
    assert all(t == repr(float(t)) for t in tokens)
    X, y = _housing_by_hand()
    expected = _ridge(0.5).fit(X, y).predict(X)
    np.testing.assert_allclose([float(t) for t in tokens], expected, rtol=1e-9)
    # the class column is not needed to predict
    raw = arff.load(open(HOUSING))
    no_class = tmp_path / "no_class.arff"
    no_class.write_text(arff.dumps({"relation": "h", "attributes": raw["attributes"][:-1],
                                    "data": [r[:-1] for r in raw["data"]]}))
    assert _predictions(run("predict", model, no_class).stdout) == tokens


@pytest.mark.slow  # two fits and sixteen predictions of housing
def test_predictions_are_byte_identical_in_every_format(tmp_path):
    first, second = tmp_path / "a.ekm", tmp_path / "b.ekm"
    assert run("fit", "ridge-test", HOUSING, "-o", first).exit_code == 0
    assert run("fit", "ridge-test", HOUSING, "-o", second).exit_code == 0
    csv_text = run("predict", first, HOUSING).stdout
    values = [float(t) for t in _predictions(csv_text)]
    for fmt in ("csv", "tsv", "json", "jsonl", "arff"):
        a = run("predict", first, HOUSING, "--format", fmt)
        b = run("predict", second, HOUSING, "--format", fmt)
        assert a.exit_code == 0, a.stderr
        assert a.stdout == b.stdout == run("predict", first, HOUSING, "--format", fmt).stdout
        if fmt == "tsv":
            got = [float(line.split("\t")[1]) for line in a.stdout.splitlines()[1:]]
        elif fmt == "json":
            got = [r["prediction"] for r in json.loads(a.stdout)]
        elif fmt == "jsonl":
            got = [json.loads(line)["prediction"] for line in a.stdout.splitlines()]
        elif fmt == "arff":
            doc = arff.loads(a.stdout)
            assert doc["attributes"][1] == ("prediction", "NUMERIC")
            got = [r[1] for r in doc["data"]]
        else:  # --format csv is the default
            assert a.stdout == csv_text
            got = [float(t) for t in _predictions(a.stdout)]
        assert got == values  # exactly: every format carries the shortest round-trip repr
    written = tmp_path / "p.csv"
    assert run("predict", first, HOUSING, "-o", written).exit_code == 0
    assert written.read_text() == csv_text


def test_proba_on_a_regression_model_is_a_usage_error(tmp_path):
    model = tmp_path / "h.ekm"
    assert run("fit", "ridge-test", HOUSING, "-o", model).exit_code == 0
    result = run("predict", model, HOUSING, "--proba")
    assert result.exit_code == 2 and result.stdout == ""
    assert "ridge-test is a regression model; it has no class probabilities" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_nominal_class_is_refused_and_target_picks_a_numeric_one(tmp_path):
    result = run("fit", "ridge-test", IRIS, "-o", tmp_path / "m.ekm")
    assert result.exit_code == 2
    assert ("ridge-test is a regression algorithm and the class 'class' is nominal; name a numeric "
            "target with --target") in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "m.ekm").exists()
    # --target petallength: a numeric class, the nominal 'class' becomes a one-hot feature
    model = tmp_path / "p.ekm"
    assert run("fit", "ridge-test", IRIS, "--target", "petallength", "-o", model).exit_code == 0
    tokens = _predictions(run("predict", model, IRIS).stdout)
    raw = arff.load(open(IRIS))["data"]
    species = sorted({r[4] for r in raw})
    X = np.array([[r[0], r[1], r[3]] + [float(r[4] == s) for s in species] for r in raw], dtype=float)
    y = np.array([r[2] for r in raw], dtype=float)
    np.testing.assert_allclose([float(t) for t in tokens], _ridge().fit(X, y).predict(X), rtol=1e-9)


def test_rows_with_a_missing_target_are_left_out_with_a_note(tmp_path):
    lines = HOUSING.read_text().splitlines()
    start = lines.index("@data") + 1
    gaps = (0, 10, 200)  # data rows whose MEDV becomes missing
    for i in gaps:
        lines[start + i] = lines[start + i].rsplit(",", 1)[0] + ",?"
    holes = tmp_path / "holes.arff"
    holes.write_text("\n".join(lines) + "\n")
    model = tmp_path / "h.ekm"
    result = run("fit", "ridge-test", holes, "-o", model)
    assert result.exit_code == 0, result.stderr
    assert "note: 3 instances with a missing target value were left out" in result.stderr
    assert "503 instances" in result.stderr
    meta = json.loads(run("show", model, "--format", "json").stdout)
    assert meta["training_data"]["instances"] == 503
    # every row is predicted, from a model fitted on the 503 others
    X, y = _housing_by_hand(holes)
    keep = ~np.isnan(y)
    assert keep.sum() == 503
    tokens = _predictions(run("predict", model, holes).stdout)
    np.testing.assert_allclose([float(t) for t in tokens],
                               _ridge().fit(X[keep], y[keep]).predict(X), rtol=1e-9)
    # evaluating the model scores the 503 rows with a target
    scored = json.loads(run("evaluate", model, holes, "--format", "json", "--metric", "mae").stdout)
    pred = np.array([float(t) for t in tokens])
    assert scored["instances"] == 503
    assert scored["scores"]["mae"] == pytest.approx(np.mean(np.abs(pred[keep] - y[keep])))


def test_evaluate_algorithm_equals_a_kfold_run_by_hand(tmp_path):
    from scipy.stats import pearsonr
    from sklearn.model_selection import KFold

    scores = tmp_path / "scores.csv"
    result = run("evaluate", "ridge-test", HOUSING, "--cv", "4", "--repeats", "2", "--seed", "3",
                 "--format", "json", "--output", scores)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    # evaluate reports every regression measure Weka prints
    assert set(out["metrics"]) == {"correlation", "mae", "rmse", "rae", "rrse"}
    got = {(int(r["repeat"]), int(r["fold"]), r["metric"]): float(r["value"])
           for r in csv.DictReader(io.StringIO(scores.read_text()))}
    assert len(got) == 5 * 4 * 2
    X, y = _housing_by_hand()
    rng = np.random.RandomState(3)  # RepeatedKFold: one shuffled KFold per repeat from one RandomState
    by_hand = {"correlation": [], "rmse": []}
    for repeat in (1, 2):
        for fold, (train, test) in enumerate(
                KFold(4, shuffle=True, random_state=rng).split(X), start=1):
            pred = _ridge().fit(X[train], y[train]).predict(X[test])
            corr = pearsonr(y[test], pred)[0]
            error = np.sqrt(np.mean((y[test] - pred) ** 2))
            assert got[(repeat, fold, "correlation")] == pytest.approx(corr, rel=1e-9)
            assert got[(repeat, fold, "rmse")] == pytest.approx(error, rel=1e-9)
            # Weka's relative errors: against predicting the training fold's mean, in percent
            mean = y[train].mean()
            rae = 100 * np.abs(y[test] - pred).sum() / np.abs(y[test] - mean).sum()
            rrse = 100 * np.sqrt(((y[test] - pred) ** 2).sum() / ((y[test] - mean) ** 2).sum())
            assert got[(repeat, fold, "rae")] == pytest.approx(rae, rel=1e-9)
            assert got[(repeat, fold, "rrse")] == pytest.approx(rrse, rel=1e-9)
            by_hand["correlation"].append(corr)
            by_hand["rmse"].append(error)
    for metric, values in by_hand.items():
        cell = out["metrics"][metric]["rows"][0]["scores"]["ridge-test"]
        assert cell["n"] == 8
        assert cell["mean"] == pytest.approx(np.mean(values), rel=1e-9)
        assert cell["sd"] == pytest.approx(np.std(values, ddof=1), rel=1e-9)
    table = run("evaluate", "ridge-test", HOUSING, "--cv", "4", "--repeats", "2", "--seed", "3",
                "--metric", "r2", "--metric", "mae")
    assert table.exit_code == 0, table.stderr
    assert "2x4-fold CV, seed 3" in table.stdout and "stratified" not in table.stdout
    assert "R²" in table.stdout and "MAE" in table.stdout


def test_evaluate_model_scores_its_predictions(tmp_path):
    from scipy.stats import pearsonr

    model = tmp_path / "h.ekm"
    assert run("fit", "ridge-test", HOUSING, "-o", model).exit_code == 0
    result = run("evaluate", model, HOUSING, "--format", "json", "--metric", "correlation",
                 "--metric", "rmse", "--metric", "r2")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    X, y = _housing_by_hand()
    pred = _ridge().fit(X, y).predict(X)
    assert out["scores"]["correlation"] == pytest.approx(pearsonr(y, pred)[0], rel=1e-9)
    assert out["scores"]["rmse"] == pytest.approx(np.sqrt(np.mean((y - pred) ** 2)), rel=1e-9)
    assert out["scores"]["r2"] == pytest.approx(1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2),
                                                rel=1e-9)
    wrong = run("evaluate", model, HOUSING, "--metric", "accuracy")
    assert wrong.exit_code == 2
    assert "valid metrics for regression: correlation, mae, rmse, rae, rrse, r2" in wrong.stderr


def test_compare_regression_is_deterministic(tmp_path):
    args = ("compare", "ridge-test", "--data", HOUSING, "--cv", "3", "--repeats", "2", "--seed", "4",
            "--format", "json", "--set", "alpha=2")
    first, second = run(*args), run(*args)
    assert first.exit_code == 0, first.stderr
    assert first.stdout == second.stdout
    out = json.loads(first.stdout)
    assert out["protocol"]["folds"] == 3 and set(out["metrics"]) == {"correlation", "rmse"}
    assert out["metrics"]["rmse"]["rows"][0]["scores"]["ridge-test"]["n"] == 6


def test_folder_files_that_do_not_fit_are_skipped_with_one_note():
    # classifiers: housing's numeric class does not fit
    result = run("compare", "knn", "c45", "--data", SAMPLE, "--cv", "2", "--repeats", "1",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = [r["dataset"] for r in json.loads(result.stdout)["metrics"]["accuracy"]["rows"]]
    assert rows == ["breast-cancer", "glass", "iris", "vote", "wine"]
    notes = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert len(notes) == 1 and "housing.arff" in notes[0] and "class 'MEDV' is numeric" in notes[0]
    # clusterers are scored against the classes: housing is skipped too
    result = run("compare", "kmeans", "--data", SAMPLE, "--runs", "1", "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = [r["dataset"] for r in json.loads(result.stdout)["metrics"]["nmi"]["rows"]]
    assert "housing" not in rows and len(rows) == 5
    assert "housing.arff (class 'MEDV' is numeric)" in result.stderr
    # a regression algorithm keeps housing and skips the five classification files, in one note
    result = run("compare", "ridge-test", "--data", SAMPLE, "--cv", "2", "--repeats", "1",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = [r["dataset"] for r in json.loads(result.stdout)["metrics"]["rmse"]["rows"]]
    assert rows == ["housing"]
    notes = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert len(notes) == 1 and notes[0].count("is nominal") == 5
    assert "regression algorithms need a numeric class" in notes[0]


@pytest.mark.parametrize(
    "args,needle",
    [
        # a file named on its own whose class does not fit the task
        (("compare", "knn", "--data", HOUSING), "class 'MEDV' is numeric, but classifiers need a "
                                                "nominal class"),
        (("compare", "kmeans", "--data", HOUSING, "--runs", "2"), "class 'MEDV' is numeric"),
        (("compare", "ridge-test", "--data", IRIS), "class 'class' is nominal, but regression "
                                                    "algorithms need a numeric class"),
        (("evaluate", "ridge-test", IRIS), "regression algorithms need a numeric class"),
        (("evaluate", "c45", HOUSING), "nominal class"),
        # metrics of another task
        (("evaluate", "knn", IRIS, "--metric", "nmi"), "valid metrics for classification: accuracy"),
        (("compare", "ridge-test", "--data", HOUSING, "--metric", "nmi"),
         "valid metrics for regression: correlation, mae, rmse, rae, rrse, r2"),
        # protocols and tasks
        (("compare", "ridge-test", "--data", HOUSING, "--runs", "3"), "--runs is for clustering"),
        (("evaluate", "ridge-test", HOUSING, "--runs", "3"), "--runs is for clustering"),
        (("compare", "ridge-test", "knn", "--data", SAMPLE), "different tasks"),
        (("compare", "kmeans", "ridge-test", "--data", SAMPLE), "different tasks"),
        (("fit", "ridge-test", HOUSING, "-o", "x.ekm", "--no-class"), "no class attribute"),
    ],
)
def test_regression_usage_errors_exit_2_with_one_line(tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == "" and not (tmp_path / "x.ekm").exists()


def test_model_with_a_nominal_class_schema_is_refused_as_damaged(tmp_path):
    from ensemblekit import state
    from ensemblekit.data import load_dataset
    from ensemblekit.persistence import data_fingerprint, save_model

    ds = load_dataset(IRIS)
    model = registry.make_estimator("ridge-test", ds.schema, {"alpha": 1.0}, 1)
    model.fit(ds.X, ds.y.astype(float))
    path = tmp_path / "bad.ekm"
    prep, prep_arrays = state.collect(model[0], "prep/")
    fitted, arrays = state.collect(model[-1], "model/")
    # written below the app's save, which would refuse it as it stands
    parts = {"prep": prep, "model": fitted}
    metadata = {"algorithm": "ridge-test", "task": "regression", "params": {"alpha": 1.0},
                "seed": 1, "schema": ds.schema.to_dict(),
                "training_data": {"name": "iris", "instances": 150,
                                  "fingerprint": data_fingerprint(ds.X, ds.y)}}
    save_model(path, parts, {**prep_arrays, **arrays}, metadata)
    result = run("predict", path, IRIS)
    assert result.exit_code == 2
    assert "metadata is damaged (a regression model's schema needs a numeric class)" in result.stderr


def test_numeric_predictions_round_trip_and_missing_values_in_every_format():
    from ensemblekit.results import prediction_rows
    from ensemblekit.writers import format_predictions

    values = [0.1, -2.5e-300, 1e22, 24.0, float("nan"), float("inf")]
    rows = prediction_rows(values)
    columns = ["row", "prediction"]
    text = format_predictions(rows, columns, "csv", numeric_prediction=True)
    assert text.splitlines() == ["row,prediction", "1,0.1", "2,-2.5e-300", "3,1e+22", "4,24.0",
                                 "5,", "6,"]
    assert format_predictions(rows, columns, "tsv", numeric_prediction=True) == text.replace(",", "\t")
    records = [json.loads(line) for line in
               format_predictions(rows, columns, "jsonl", numeric_prediction=True).splitlines()]
    assert [r["prediction"] for r in records] == [0.1, -2.5e-300, 1e22, 24.0, None, None]
    assert json.loads(format_predictions(rows, columns, "json", numeric_prediction=True)) == records
    doc = arff.loads(format_predictions(rows, columns, "arff", numeric_prediction=True))
    assert doc["attributes"] == [("row", "NUMERIC"), ("prediction", "NUMERIC")]
    assert [r[1] for r in doc["data"]] == [0.1, -2.5e-300, 1e22, 24.0, None, None]


def test_columns_actual_and_error_of_a_regression_model(tmp_path):
    # Weka's -classifications for a numeric class: error is predicted - actual
    model = tmp_path / "h.ekm"
    assert run("fit", "ridge-test", HOUSING, "-o", model).exit_code == 0
    result = run("predict", model, HOUSING, "--columns", "actual,error,CHAS")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["row", "prediction", "actual", "error", "CHAS"]
    _, y = _housing_by_hand()
    raw = arff.load(open(HOUSING))
    chas = [a[0] for a in raw["attributes"]].index("CHAS")
    for row, target, data in zip(rows[1:], y.tolist(), raw["data"]):
        assert float(row[2]) == target
        assert row[2] == (str(int(target)) if target.is_integer() else repr(target))
        assert float(row[3]) == float(row[1]) - target
        assert row[4] == data[chas]
    refused = run("predict", model, HOUSING, "--columns", "distribution")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "ridge-test is a regression model; it has no class probabilities" in refused.stderr
