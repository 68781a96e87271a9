"""The Python API gives what the command line prints (issue 17, acceptance 1).

Each test runs the same job twice, once through ``ensemblekit.api`` and once through
the command line with ``--format json`` (or CSV for predictions), and compares the
numbers: the CLI is a thin layer over the API, so they must be equal, not close.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ensemblekit
from ensemblekit import api
from ensemblekit.cli import app
from ensemblekit.results import Clustering, Comparison, FittedModel, ModelEvaluation
from ensemblekit.writers import to_json

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
IRIS = str(SAMPLE / "iris.arff")
VOTE = str(SAMPLE / "vote.arff")


def cli_json(*args) -> dict:
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# README's example (every sample file, 10 runs) is slow; the fast subset compares on iris alone
@pytest.mark.parametrize("data, n_data, runs", [
    pytest.param(SAMPLE, 5, 10, marks=pytest.mark.slow, id="readme"),
    pytest.param(Path(IRIS), 1, 2, id="iris"),
])
def test_readme_notebook_example_gives_the_cli_numbers(data, n_data, runs):
    from ensemblekit import compare

    result = compare(["kmeans", "iekm"], [str(data)], runs=runs, seed=1)
    table = result.table("nmi")
    printed = cli_json("compare", "kmeans", "iekm", "--data", str(data), "--runs", str(runs),
                       "--seed", "1")
    rows = printed["metrics"]["nmi"]["rows"]
    assert [r["dataset"] for r in rows] == list(table)
    for row in rows:
        for algorithm, cell in row["scores"].items():
            assert table[row["dataset"]][algorithm] == cell["mean"]
    # the whole document, not only the means
    assert json.loads(to_json(result.to_dict())) == printed
    assert isinstance(result, Comparison) and result.labels == ["kmeans", "iekm"]
    records = result.to_records()
    assert len(records) == len(result.scores) == n_data * 2 * runs * 2  # data sets x algos x runs x metrics
    assert {r["metric"] for r in records} == {"nmi", "purity"}


def test_evaluate_algorithm_equals_cli():
    result = api.evaluate("knn", IRIS, cv=5, repeats=2, seed=3, params={"n_neighbors": "3"})
    printed = cli_json("evaluate", "knn", IRIS, "--cv", "5", "--repeats", "2", "--seed", "3",
                       "--set", "n_neighbors=3")
    assert json.loads(to_json(result.to_dict())) == printed
    # the mean is the mean of the ten fold accuracies
    folds = [s.value for s in result.scores if s.metric == "accuracy"]
    assert len(folds) == 10
    assert result.table("accuracy")["iris"]["knn"] == pytest.approx(np.mean(folds), abs=1e-15)


def test_evaluate_model_equals_cli(tmp_path):
    model = api.fit("c45", VOTE, seed=2)
    path = tmp_path / "vote.ekm"
    api.save_model(model, path)
    result = api.evaluate(str(path), VOTE)
    assert isinstance(result, ModelEvaluation)
    assert result.to_dict() == cli_json("evaluate", str(path), VOTE)
    # the fitted object scores the same as the file
    again = api.evaluate(model, VOTE)
    assert again.scores == result.scores and again.instances == 435


def test_cluster_equals_cli():
    result = api.cluster("iekm", IRIS, k=3, params={"n_estimators": 20}, seed=4)
    printed = cli_json("cluster", "iekm", IRIS, "-k", "3", "--set", "n_estimators=20",
                       "--seed", "4")
    assert result.to_dict() == printed
    assert isinstance(result, Clustering)
    assert sum(result.sizes) == 150 == len(result.labels)
    assert np.bincount(result.labels).tolist() == result.sizes
    assert [r["cluster"] for r in result.to_records()] == result.labels.tolist()


def test_select_k_equals_cli():
    result = api.select_k("kmeans", IRIS, [2, 3, 4], seed=1)
    printed = cli_json("cluster", "kmeans", IRIS, "-k", "2:4", "--seed", "1")
    assert result.to_dict() == printed
    assert [r["k"] for r in result.to_records()] == [2, 3, 4]


def test_predict_equals_cli(tmp_path):
    model = api.fit("knn", IRIS, params={"n_neighbors": 5})
    path = tmp_path / "iris.ekm"
    api.save_model(model, path)
    from_file = api.predict(str(path), IRIS, proba=True)
    from_object = api.predict(model, IRIS, proba=True)
    assert from_file.predictions == from_object.predictions
    np.testing.assert_array_equal(from_file.probabilities, from_object.probabilities)
    printed = CliRunner().invoke(app, ["predict", str(path), IRIS, "--proba", "--format", "json"])
    assert printed.exit_code == 0, printed.output
    document = json.loads(printed.stdout)
    records = from_file.to_records()
    assert len(records) == 150
    # the JSON output gives probabilities to 6 decimals
    assert document == [{k: round(v, 6) if isinstance(v, float) else v for k, v in r.items()}
                        for r in records]
    assert list(records[0]) == ["row", "prediction", *(f"p_{c}" for c in from_file.classes)]
    # probabilities over the declared classes sum to one, and the label is their arg-max
    assert np.allclose(from_file.probabilities.sum(axis=1), 1.0)
    best = np.asarray(from_file.classes)[from_file.probabilities.argmax(axis=1)]
    assert list(best) == from_file.predictions


def test_fit_returns_model_and_metadata():
    model = api.fit("k2", VOTE, params={"max_parents": "1"}, seed=7)
    assert isinstance(model, FittedModel)
    assert model.algorithm == "k2" and model.metadata["params"]["max_parents"] == 1
    assert model.metadata["training_data"]["instances"] == 435
    assert type(model.estimator).__name__ == "K2Classifier"


def test_notes_become_warnings_without_a_callback(tmp_path):
    data = tmp_path / "gaps.csv"
    data.write_text("a,b,cls\n1,2,x\n2,3,y\n3,1,\n4,4,x\n5,0,y\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="1 instances with a missing class value were left out"):
        api.fit("c45", str(data))
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        api.fit("c45", str(data), notify=seen.append)
    assert seen == ["note: 1 instances with a missing class value were left out"]


def test_bad_requests_raise_usage_error():
    with pytest.raises(api.UsageError, match="an algorithm is named twice"):
        api.compare(["knn", "knn"], [IRIS])
    with pytest.raises(api.UsageError, match="--runs is for clustering algorithms"):
        api.compare(["knn"], [IRIS], runs=3)
    with pytest.raises(api.UsageError, match="knn is a classification algorithm"):
        api.cluster("knn", IRIS)
    with pytest.raises(api.UsageError, match="ss-isca needs target columns"):
        api.cluster("ss-isca", IRIS, k=3)


def test_input_errors_cover_every_bad_input_error():
    from ensemblekit.data import DataError
    from ensemblekit.errors import InputError, UsageError
    from ensemblekit.experiment.protocol import ProtocolError
    from ensemblekit.persistence import ModelFileError
    from ensemblekit.plots import PlotError
    from ensemblekit.registry import ParameterError, UnknownAlgorithmError

    assert api.UsageError is UsageError and api.input_errors() == (InputError,)
    for error in (DataError, ParameterError, UnknownAlgorithmError, UsageError, ModelFileError,
                  ProtocolError, PlotError):
        assert issubclass(error, api.input_errors()), error


@pytest.mark.slow  # a fresh interpreter
def test_public_names_load_lazily():
    import subprocess
    import sys

    code = ("import sys, ensemblekit; before = 'numpy' in sys.modules; "
            "from ensemblekit import compare, ISCA; "
            "print(before, 'numpy' in sys.modules, compare.__module__, ISCA.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "ensemblekit.app.comparing", "ensemblekit.rules.isca"]
    for name in ensemblekit.__all__:
        assert getattr(ensemblekit, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ensemblekit.nope  # noqa: B018


def test_comparison_table_refuses_unknown_metric():
    result = api.compare(["kmeans"], [IRIS], runs=2, seed=1)
    with pytest.raises(KeyError, match="'accuracy' was not computed"):
        result.table("accuracy")
    assert all(not math.isnan(v["kmeans"]) for v in result.table("purity").values())
