"""`ensemblekit cluster isca|ss-isca`: indices, -k ranges, --targets, --similarity-out (issue 7)."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from ensemblekit import metrics as M
from ensemblekit import registry
from ensemblekit.data import load_dataset
from ensemblekit.scores import clustering as S

from ektesting.support import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
IRIS = str(ROOT / "sample_data" / "iris.arff")
TABLE2 = ("silhouette", "dunn", "connectivity", "rand", "fm", "w01", "w10", "jaccard")




def read_labels(path):
    return np.array([int(line.split(",")[1]) for line in path.read_text().splitlines()[1:]])


def read_similarity(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    assert header == ["row"] + [str(j) for j in range(1, len(body) + 1)]
    assert [int(r[0]) for r in body] == list(range(1, len(body) + 1))
    return np.array([[float(v) for v in r[1:]] for r in body])


def fitted(algo, ds, params, seed, y=None):
    model = registry.make_estimator(algo, ds.schema, params, seed)
    model.fit(ds.X, y)
    return model.named_steps["model"]


@pytest.mark.slow  # isca at its default 50 stages, fitted three times
def test_isca_on_iris_prints_the_table2_indices_of_its_own_labels(tmp_path):
    labels_file = tmp_path / "l.csv"
    result = run("cluster", "isca", IRIS, "-k", "3", "--format", "json", "--labels-out",
                 labels_file)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    ds = load_dataset(IRIS)
    labels = read_labels(labels_file)
    assert set(TABLE2) <= set(out["external"]) | set(out["internal"])
    expected = M.clustering_indices(labels, truth=ds.y, X=ds.X, names=TABLE2)
    for name, value in expected.items():
        section = "internal" if M.METRICS[name].internal else "external"
        assert out[section][name] == pytest.approx(value, rel=1e-9)
    # the labels are the registry pipeline's, fitted with --seed's default (1)
    model = fitted("isca", ds, {"n_clusters": 3}, 1)
    assert_array_equal(labels, model.labels_)
    assert out["rules"] == model.n_rules_ == 1000
    table = run("cluster", "isca", IRIS, "-k", "3")
    assert table.exit_code == 0
    for heading in ("Silhouette", "Dunn", "Connectivity", "Rand", "FM", "W01", "W10", "Jaccard",
                    "1000 rules"):
        assert heading in table.stdout


def test_k_range_cuts_one_tree_and_agrees_with_single_runs(tmp_path):
    result = run("cluster", "isca", IRIS, "-k", "2:10", "--format", "json", "-s", "n_stages=10",
                 "--seed", "5")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["k"] == list(range(2, 11))
    for name, column in out["internal"].items():
        assert out["best_k"][name] == M.best_k(out["k"], column, name)
    for k in (3, 7):
        single = json.loads(run("cluster", "isca", IRIS, "-k", k, "--format", "json", "-s",
                                "n_stages=10", "--seed", "5").stdout)
        for name, value in single["internal"].items():
            assert out["internal"][name][k - 2] == value
    table = run("cluster", "isca", IRIS, "-k", "2:10", "-s", "n_stages=10", "--seed", "5")
    assert table.exit_code == 0 and "best k per index" in table.stdout
    assert f"Silhouette: k = {out['best_k']['silhouette']}" in table.stdout


def test_similarity_out_is_the_estimators_similarity(tmp_path):
    path = tmp_path / "S.csv"
    result = run("cluster", "isca", IRIS, "-k", "3", "-s", "n_stages=6", "--seed", "2",
                 "--similarity-out", path)
    assert result.exit_code == 0, result.stderr
    S = read_similarity(path)
    model = fitted("isca", load_dataset(IRIS), {"n_clusters": 3, "n_stages": 6}, 2)
    assert S.tobytes() == model.similarity_.tobytes()  # repr floats read back exactly
    # the same similarity from a -k range (one fit), byte for byte the same file
    again = tmp_path / "S2.csv"
    assert run("cluster", "isca", IRIS, "-k", "2:4", "-s", "n_stages=6", "--seed", "2",
               "--similarity-out", again).exit_code == 0
    assert again.read_bytes() == path.read_bytes()


def test_targets_are_taken_out_of_the_features_and_given_as_y(tmp_path):
    labels_file, path = tmp_path / "l.csv", tmp_path / "S.csv"
    result = run("cluster", "ss-isca", IRIS, "-k", "3", "--targets", "petalwidth, petallength",
                 "-s", "n_stages=8", "--format", "json", "--labels-out", labels_file,
                 "--similarity-out", path)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["targets"] == ["petalwidth", "petallength"]
    ds = load_dataset(IRIS)
    Y = ds.X[:, [3, 2]]
    reduced, _, _ = ds.split_targets(["petalwidth", "petallength"])
    model = fitted("ss-isca", reduced, {"n_clusters": 3, "n_stages": 8}, 1, Y)
    assert_array_equal(read_labels(labels_file), model.labels_)
    assert read_similarity(path).tobytes() == model.similarity_.tobytes()
    # the internal indices judge the attributes that were clustered: the two sepal ones
    assert out["internal"]["silhouette"] == pytest.approx(
        S.silhouette(ds.X[:, :2], model.labels_), rel=1e-9)
    # every rule tests a sepal attribute only
    assert all(set(rule.features) <= {0, 1} for rule in model.rules_.rules)
    heading = run("cluster", "ss-isca", IRIS, "--targets", "petalwidth", "-s", "n_stages=4")
    assert heading.exit_code == 0 and "targets petalwidth" in heading.stdout


def test_saved_model_loads_back_with_its_rules_and_targets(tmp_path):
    from ensemblekit.api import load_model

    path = tmp_path / "m.ekm"
    result = run("cluster", "ss-isca", IRIS, "--targets", "petalwidth", "-s", "n_stages=3",
                 "--save", path)
    assert result.exit_code == 0, result.stderr
    loaded = load_model(path)
    metadata = loaded.metadata
    assert metadata["targets"] == ["petalwidth"]
    assert [a["name"] for a in metadata["schema"]["attributes"]] == [
        "sepallength", "sepalwidth", "petallength", "class"]
    ds = load_dataset(IRIS)
    reduced, Y, _ = ds.split_targets(["petalwidth"])
    again = fitted("ss-isca", reduced, {"n_clusters": 3, "n_stages": 3}, 1, Y)
    estimator = loaded.estimator
    assert_array_equal(estimator.labels_, again.labels_)
    assert estimator.describe_rules() == again.describe_rules()
    # the loaded model computes its rules from their conditions, as a dense 0/1 matrix
    assert_array_equal(estimator.rules_.transform(reduced.X),
                       again.rules_.transform(reduced.X).toarray())


def test_importance_similarity_through_the_cli(tmp_path):
    path = tmp_path / "S.csv"
    result = run("cluster", "ss-isca", IRIS, "--targets", "petalwidth", "-s", "n_stages=5", "-s",
                 "similarity=importance", "-s", "postprocess=lasso", "--format", "json",
                 "--similarity-out", path)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["params"]["similarity"] == "importance"
    reduced, Y, _ = load_dataset(IRIS).split_targets(["petalwidth"])
    params = {"n_clusters": 3, "n_stages": 5, "similarity": "importance", "postprocess": "lasso"}
    model = fitted("ss-isca", reduced, params, 1, Y)
    assert read_similarity(path).tobytes() == model.similarity_.tobytes()
    # rules the lasso dropped weigh nothing: not the plain agreement
    assert (model.rule_weights_ == 0).any()
    plain = fitted("ss-isca", reduced, {**params, "similarity": "agreement"}, 1, Y)
    assert not np.array_equal(plain.similarity_, model.similarity_)


@pytest.mark.parametrize("args, message", [
    (("isca", "--targets", "petalwidth"),
     "--targets gives target columns to ss-isca; isca takes none"),
    (("pam", "--targets", "petalwidth"), "pam takes none"),
    (("ss-isca",), "ss-isca needs target columns (--targets NAME,...)"),
    (("ss-isca", "--targets", "petalwidth,,sepallength"), "comma-separated attribute names"),
    (("ss-isca", "--targets", "petalsize"),
     ("no attribute 'petalsize' to use as a target; "
      "attributes: 'sepallength', 'sepalwidth', 'petallength', 'petalwidth'")),
    (("ss-isca", "--targets", "class"), "'class' is the class attribute"),
    (("ss-isca", "--targets", "sepallength,sepalwidth,petallength,petalwidth"),
     "no attributes left to cluster"),
    (("ss-isca", "--targets", "petalwidth,petallength", "-s", "similarity=importance"),
     "exactly one target column, got 2"),
    (("isca", "-s", "similarity=importance"), "unknown parameter 'similarity' for isca"),
    (("isca", "-s", "learning_rate=2"), "bad value 2 for learning_rate"),
    (("isca", "-k", "151"), "n_samples=150 should be >= n_clusters=151"),
    (("isca", "-k", "149:151", "-s", "n_stages=2"), "n_samples=150 should be >= n_clusters=151"),
    (("pam", "--similarity-out", "S.csv"),
     "--similarity-out writes the rule similarity of isca and ss-isca; pam has none"),
])
def test_usage_errors_exit_2(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    algo, *rest = args
    result = run("cluster", algo, IRIS, *rest)
    assert result.exit_code == 2, result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("ensemblekit: ")]
    assert len(errors) == 1 and message in errors[0]
    assert not (tmp_path / "S.csv").exists()


def test_a_failed_fit_writes_no_similarity_file(tmp_path):
    path = tmp_path / "S.csv"
    result = run("cluster", "ss-isca", IRIS, "--targets", "petalwidth,petallength", "-s",
                 "similarity=importance", "--similarity-out", path)
    assert result.exit_code == 2 and not path.exists()
    missing_folder = tmp_path / "no" / "S.csv"
    result = run("cluster", "isca", IRIS, "--similarity-out", missing_folder)
    assert result.exit_code == 2 and "does not exist" in result.stderr


@pytest.mark.parametrize("args", [
    ("fit", "ss-isca", IRIS, "-o", "never.ekm"),
    ("evaluate", "ss-isca", IRIS, "--runs", "2"),
    ("compare", "kmeans", "ss-isca", "--data", IRIS, "--runs", "2"),
])
def test_ss_isca_outside_cluster_is_a_usage_error_naming_cluster_targets(args, tmp_path,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2
    assert "--targets" in result.output and "ensemblekit cluster ss-isca" in result.output
    assert not (tmp_path / "never.ekm").exists()


def test_show_a_saved_isca_model_lists_cluster_sizes_and_rules_in_words(tmp_path):
    model_file = tmp_path / "i.ekm"
    saved = run("cluster", "isca", IRIS, "-k", "3", "--set", "n_stages=4", "--save", model_file)
    assert saved.exit_code == 0, saved.output
    shown = run("show", model_file)
    assert shown.exit_code == 0, shown.output
    from ensemblekit.api import load_model

    estimator = load_model(model_file).estimator
    names = registry.model_feature_names("isca", load_dataset(str(IRIS)).schema)
    first = estimator.describe_rules(names)[0]
    assert f"{estimator.n_rules_} rules from 4 stages" in shown.output
    assert f"1. {first}" in shown.output
    sizes = np.bincount(estimator.labels_)
    assert all(f"│ {size:>4} │" in shown.output for size in sizes)
