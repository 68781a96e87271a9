"""Rule ensembles through the command line: fit, show and predict on housing."""

import csv
import io
import re
from pathlib import Path

import numpy as np

from ensemblekit import registry
from ensemblekit.api import load_model
from ensemblekit.data import load_dataset

from ektesting.support import run_cli as run

HOUSING = Path(__file__).resolve().parents[2] / "sample_data" / "housing.arff"
SMALL = ["--set", "n_estimators=15", "--set", "cv=3"]





def test_fit_rule_pls_and_show_prints_the_top_rules_in_words(tmp_path):
    model_file = tmp_path / "m.ekm"
    assert run("fit", "rule-pls", HOUSING, "-o", model_file, *SMALL).exit_code == 0
    shown = run("show", model_file)
    assert shown.exit_code == 0, shown.output
    estimator = load_model(model_file).estimator
    names = registry.model_feature_names("rule-pls", load_dataset(str(HOUSING)).schema)
    top = estimator.ranked_terms(names, top=3)
    assert top and all(t["term"] in shown.output for t in top)
    assert "15 ISLE trees" in shown.output and "PLS components" in shown.output
    assert "variable importances" in shown.output
    # every attribute is listed once in the variable importances, largest first, at 100
    table = shown.output.split("variable importances", 1)[1]
    rows = re.findall(r"^\W*([A-Z]+)\W+(\d+\.\d)\W*$", table, flags=re.MULTILINE)
    attributes = [a.name for a in load_dataset(str(HOUSING)).schema.features]
    assert sorted(name for name, _ in rows) == sorted(attributes)
    values = [float(v) for _, v in rows]
    assert values[0] == 100.0 and values == sorted(values, reverse=True)


def test_show_writes_a_split_on_a_nominal_attribute_as_an_equality(tmp_path):
    # the target is set by the colour alone, so the top rules must split on its one-hot columns
    rng = np.random.default_rng(0)
    colours = rng.choice(["red", "green", "blue"], size=120)
    x = rng.normal(size=120)
    y = np.where(colours == "red", 10.0, 0.0) + 0.01 * x
    data = tmp_path / "colours.csv"
    data.write_text("colour,x,y\n" + "".join(f"{c},{a:.4f},{b:.4f}\n" for c, a, b in zip(colours, x, y)))
    model_file = tmp_path / "c.ekm"
    assert run("fit", "rule-lasso", data, "-o", model_file, *SMALL).exit_code == 0
    shown = run("show", model_file)
    assert shown.exit_code == 0, shown.output
    assert "colour = red" in shown.output or "colour != red" in shown.output, shown.output
    # never a threshold on the indicator column itself
    assert "colour=red" not in shown.output, shown.output


def test_show_says_a_kernel_model_has_no_weights(tmp_path):
    model_file = tmp_path / "k.ekm"
    assert run("fit", "tree-kernel", HOUSING, "-o", model_file, *SMALL).exit_code == 0
    shown = run("show", model_file)
    assert shown.exit_code == 0, shown.output
    assert "no weights" in shown.output and "506 training rows" in shown.output


def test_predict_writes_the_models_predictions_in_row_order(tmp_path):
    model_file = tmp_path / "m.ekm"
    assert run("fit", "oob-weighted-top", HOUSING, "-o", model_file, *SMALL).exit_code == 0
    result = run("predict", model_file, HOUSING)
    assert result.exit_code == 0
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["row", "prediction"] and len(rows) == 507
    model = load_model(model_file).pipeline
    expected = model.predict(load_dataset(str(HOUSING)).X)
    np.testing.assert_array_equal([float(r[1]) for r in rows[1:]], expected)


def test_a_rule_ensemble_refuses_a_nominal_class(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    iris = HOUSING.parent / "iris.arff"
    result = run("fit", "rule-lasso", iris, "-o", "never.ekm")
    assert result.exit_code == 2
    assert "nominal" in result.output and not (tmp_path / "never.ekm").exists()


def test_show_a_model_without_weighted_terms_says_it_predicts_the_intercept(tmp_path):
    data = tmp_path / "flat.csv"
    data.write_text("a,b,y\n" + "".join(f"{i},{i % 3},2.5\n" for i in range(30)))
    model_file = tmp_path / "flat.ekm"
    assert run("fit", "rule-lasso", data, "-o", model_file, "--set", "learning_rate=0",
               *SMALL).exit_code == 0
    shown = run("show", model_file)
    assert shown.exit_code == 0, shown.output
    assert "predicts the intercept, 2.5, for every row" in shown.output
