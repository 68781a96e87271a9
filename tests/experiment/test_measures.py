"""The Experimenter's measures: fit-seconds, predict-seconds and model-size (issue 31).

Each model size is checked against a count made another way (the tree walked from its
root, the arcs of the network's DOT text, the rules ``show`` lists, the clusters asked
for); the runner's per-fold sizes against models fitted here on the same training rows;
the times for range and for leaving every other score unchanged; ranks for lower is
better; and an algorithm without a size for its refusal.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from ensemblekit import api, experiment, registry
from ensemblekit.data import load_dataset
from ensemblekit.errors import InputError
from ensemblekit.experiment import measures
from ensemblekit.experiment.protocol import Protocol
from ensemblekit.experiment.runner import Score
from ensemblekit.metrics import MEASURES, METRICS, metric_spec, model_size, refuse_unmeasured, score_model

from ektesting.support import run_cli

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _tree_nodes(tree) -> int:
    """Nodes of a fitted C4.5 tree, counted by walking its children from the root."""
    count, stack = 0, [0]
    while stack:
        node = stack.pop()
        count += 1
        start, n = int(tree.child_start_[node]), int(tree.n_children_[node])
        stack.extend(range(start, start + n))
    return count


# ---------------------------------------------------------------- the declarations
@pytest.mark.parametrize("name", ["vote.arff", "glass.arff"])
def test_c45_size_is_j48_size_of_the_tree(tmp_path, name):
    path = tmp_path / "c45.ekm"
    assert run_cli("fit", "c45", SAMPLE / name, "-o", path).exit_code == 0
    shown = run_cli("show", path)
    printed = int(re.search(r"Size of the tree : (\d+)", shown.stdout).group(1))
    leaves = int(re.search(r"Number of Leaves  : (\d+)", shown.stdout).group(1))
    tree = api.load_model(path).estimator
    assert tree.model_size() == printed == _tree_nodes(tree)
    assert printed > leaves >= 1  # the size counts the leaves and the inner nodes
    assert model_size(api.load_model(path).pipeline) == printed


def test_network_size_is_its_arc_count():
    ds = load_dataset(SAMPLE / "vote.arff")
    for algorithm in ("k2", "iebn"):
        net = api.fit(algorithm, ds, seed=3).estimator
        dot = net.to_dot()
        arcs = len(re.findall(r"->", dot))
        parents = sum(len(node["parents"]) for node in net.network())
        assert net.model_size() == arcs == parents
        assert arcs > 16  # the class's arc to each of vote's 16 attributes, and K2's own
    bag = api.fit("bagged-k2", ds, seed=3, params={"n_estimators": 3}).estimator
    assert bag.model_size() == sum(len(re.findall(r"->", m.to_dot())) for m in bag.estimators_)


def test_kmeans_and_iekm_size_is_the_number_of_clusters():
    ds = load_dataset(SAMPLE / "wine.arff")
    for algorithm in ("kmeans", "iekm"):
        for k in (2, 5):
            fitted = api.fit(algorithm, ds, seed=1, n_clusters=k)
            assert fitted.estimator.model_size() == k == fitted.estimator.cluster_centers_.shape[0]


def test_rule_ensemble_size_counts_the_rules_with_a_weight():
    ds = load_dataset(SAMPLE / "housing.arff")
    est = api.fit("rule-lasso", ds, seed=2, params={"n_estimators": 20}).estimator
    words = [t["term"] for t in est.ranked_terms()]  # the terms with a non-zero weight
    rules = [w for w in words if not w.startswith("linear:")]
    assert est.model_size() == len(rules) > 0
    assert est.model_size() < est.rules_.n_rules  # the lasso dropped some
    trees = api.fit("tree-lasso", ds, seed=2, params={"n_estimators": 20}).estimator
    assert trees.model_size() == int(np.count_nonzero(trees.coef_[:len(trees.trees_)]))
    kernel = api.fit("rule-kernel", ds, seed=2, params={"n_estimators": 10}).estimator
    assert kernel.model_size() == kernel.rules_.n_rules  # smoothing uses every rule


def test_cart_size_counts_every_node_of_its_binary_tree():
    ds = load_dataset(SAMPLE / "glass.arff")
    tree = api.fit("cart-entropy", ds).estimator
    assert tree.model_size() == 2 * tree.get_n_leaves() - 1 > 1  # each split adds two nodes


def test_knn_size_is_its_stored_instances():
    ds = load_dataset(SAMPLE / "iris.arff")
    assert api.fit("knn", ds).estimator.model_size() == 150


def test_the_capability_is_read_from_the_model_class():
    sized = {name for name, spec in registry.ALGORITHMS.items()
             if hasattr(spec.model_class(), "model_size")}
    assert {"c45", "k2", "iebn", "bagged-k2", "rule-lasso", "kmeans", "iekm", "knn"} <= sized
    assert "lazy-bagging" not in sized and "diana" not in sized


# ---------------------------------------------------------------- metric entries
def test_measures_are_declared_lower_is_better_non_negative():
    assert set(MEASURES) == {"fit-seconds", "predict-seconds", "model-size"}
    for name in MEASURES:
        spec = metric_spec(name)
        assert not spec.greater_is_better and spec.value_range == (0.0, math.inf) and spec.finite
    assert metric_spec("model-size").integer and not metric_spec("fit-seconds").integer
    assert metric_spec("fit-seconds").applies_to("clustering")
    assert not metric_spec("predict-seconds").applies_to("clustering")
    assert list(METRICS)[-3:] == ["fit-seconds", "predict-seconds", "model-size"]


@pytest.mark.parametrize("name, value, problem", [
    ("model-size", 7.0, None), ("model-size", 2.5, "not a whole number"),
    ("model-size", -1.0, "outside its range"), ("fit-seconds", 0.0, None),
    ("fit-seconds", 1e-6, None), ("fit-seconds", -0.5, "outside its range"),
    ("predict-seconds", float("nan"), "always a finite number"),
    ("fit-seconds", float("inf"), "always a finite number"),
])
def test_journal_ranges_of_the_measures(name, value, problem):
    found = metric_spec(name).value_problem(value)
    assert (found is None) if problem is None else (problem in found)


def test_score_model_reads_the_times_and_the_model():
    ds = load_dataset(SAMPLE / "iris.arff")
    fitted = api.fit("c45", ds)
    scored = score_model(["accuracy", "model-size", "predict-seconds", "fit-seconds"],
                         fitted.pipeline, ds.X, task="classification", n_classes=3,
                         truth=ds.y.astype(int), seconds={"fit": 0.25})
    assert scored.values["model-size"] == fitted.estimator.tree_size_
    assert scored.values["fit-seconds"] == 0.25
    assert 0 <= scored.values["predict-seconds"] < 60
    with pytest.raises(InputError, match="fit-seconds: no fit is timed"):
        score_model(["fit-seconds"], fitted.pipeline, ds.X, task="classification")
    with pytest.raises(InputError, match="predict-seconds: no predict is timed"):
        score_model(["predict-seconds"], predicted=np.zeros(3), truth=np.zeros(3))
    with pytest.raises(InputError, match="no natural size"):
        model_size(object())


def test_refusal_names_the_algorithms_without_a_size():
    refuse_unmeasured(["accuracy", "model-size"], [registry.get("c45"), registry.get("k2")])
    refuse_unmeasured(["fit-seconds"], [registry.get("lazy-bagging")])  # times exist for all
    with pytest.raises(InputError) as info:
        refuse_unmeasured(["model-size"], [registry.get("c45"), registry.get("lazy-bagging"),
                                           registry.get("bagging")])
    assert "lazy-bagging, bagging" in str(info.value) and "c45" not in str(info.value)


# ---------------------------------------------------------------- the runner
def test_runner_sizes_equal_models_fitted_on_the_same_training_rows():
    ds = load_dataset(SAMPLE / "breast-cancer.arff")
    cands = [experiment.expand_grid(a, registry.get(a).defaults(), {})[0] for a in ("c45", "k2")]
    protocol = Protocol("cv", folds=3, repeats=1, seed=5)
    work = experiment.plan([ds], cands, protocol)
    result = experiment.run([ds], work, protocol, ["model-size", "fit-seconds", "predict-seconds"])
    assert not result.failures
    y = ds.y.astype(np.int64)
    sizes = {(s.algorithm, s.fold): s.value for s in result.scores if s.metric == "model-size"}
    for unit in work.units:
        cand = cands[unit.candidate]
        train = np.setdiff1d(np.flatnonzero(y >= 0), unit.test)
        model = registry.make_estimator(cand.algorithm, ds.schema, cand.params, unit.random_state)
        model.fit(ds.X[train], y[train])
        assert sizes[(cand.label, unit.fold)] == model_size(model)
    for s in result.scores:
        if s.metric.endswith("-seconds"):
            assert math.isfinite(s.value) and 0 <= s.value <= s.seconds


def test_asking_for_times_leaves_every_other_score_unchanged():
    ds = load_dataset(SAMPLE / "iris.arff")
    cands = [experiment.expand_grid(a, registry.get(a).defaults(), {})[0] for a in ("k2", "knn")]
    protocol = Protocol("cv", folds=3, repeats=2, seed=2)
    work = experiment.plan([ds], cands, protocol)
    plain = experiment.run([ds], work, protocol, ["accuracy", "auc"])
    timed = experiment.run([ds], work, protocol, ["fit-seconds", "accuracy", "predict-seconds",
                                                  "auc"])
    keep = [(s.algorithm, s.repeat, s.fold, s.metric, s.value) for s in timed.scores
            if s.metric in ("accuracy", "auc")]
    assert keep == [(s.algorithm, s.repeat, s.fold, s.metric, s.value) for s in plain.scores]


def test_warm_up_runs_once_per_key_and_ignores_a_failing_fit():
    calls = []

    class Model:
        def fit(self, X, y):
            calls.append(X.shape[0])
            raise ValueError("too few rows")

    X = np.arange(200.0).reshape(100, 2)
    y = np.r_[np.zeros(90, dtype=np.int64), np.ones(10, dtype=np.int64)]
    key = ("test-warm-up", object())
    assert measures.warm_up(key, Model, X, y) is True
    assert measures.warm_up(key, Model, X, y) is False
    # the first WARM_UP_ROWS rows, and the first row of the class that starts later
    assert calls == [measures.WARM_UP_ROWS + 1]


def test_fit_timed_fits_a_new_estimator_and_times_it():
    ds = load_dataset(SAMPLE / "iris.arff")
    make = registry.estimator_factory("kmeans", ds.schema, {"n_clusters": 3})
    model, labels, seconds = measures.fit_timed(make, 4, ds.X, warm=("kmeans", "test"))
    np.testing.assert_array_equal(labels, make(4).fit_predict(ds.X))
    assert model.named_steps["model"].model_size() == 3 and 0 <= seconds < 60
    assert measures.wants_time(["nmi", "fit-seconds"]) and not measures.wants_time(["model-size"])


def test_ranks_treat_lower_as_better():
    # fast beats slow on every data set: rank 1, whatever the magnitudes
    scores = [Score(d, a, "{}", 1, f, "fit-seconds", v)
              for d, (fast, slow) in {"a": (0.1, 0.3), "b": (2.0, 9.0), "c": (0.01, 0.02)}.items()
              for f in (1, 2) for a, v in (("fast", fast), ("slow", slow))]
    datasets = [SimpleNamespace(name=n) for n in "abc"]
    an = experiment.analyse(scores, ["slow", "fast"], datasets, "fit-seconds",
                            Protocol("cv", folds=2, repeats=1, seed=1))
    assert list(an.ranks) == [2.0, 1.0]
    sizes = [Score(d, a, "{}", 1, 1, "model-size", v) for d, a, v in
             [("a", "big", 9), ("a", "small", 3), ("b", "big", 5), ("b", "small", 5)]]
    an = experiment.analyse(sizes, ["big", "small"], datasets[:2], "model-size",
                            Protocol("cv", folds=2, repeats=1, seed=1))
    assert list(an.ranks) == [1.75, 1.25]  # a tie shares the middle rank


# ---------------------------------------------------------------- the command line
def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _check_measured(rows: list[dict], algorithms: set[str]) -> None:
    assert {r["algorithm"] for r in rows} == algorithms
    for r in rows:
        value = float(r["value"])
        assert math.isfinite(value) and value >= 0
        if r["metric"] == "model-size":
            assert value == int(value) and value >= 1


def test_compare_measures_classifiers_on_sample_data(tmp_path):
    out = tmp_path / "scores.csv"
    result = run_cli("compare", "c45", "k2", "iebn", "--data", SAMPLE, "--cv", "2", "--repeats",
                     "1", "-m", "fit-seconds", "-m", "model-size", "--output", out)
    assert result.exit_code == 0, result.stderr
    assert "Fit seconds" in result.stdout and "Model size" in result.stdout
    rows = _rows(out)
    _check_measured(rows, {"c45", "k2", "iebn"})
    assert len(rows) == 5 * 2 * 3 * 2  # 5 nominal-class data sets, 2 folds, 3 algorithms, 2 metrics


@pytest.mark.parametrize("algorithms, data, protocol", [
    (("rule-lasso",), "housing.arff", ("--cv", "2", "--repeats", "1", "--set", "n_estimators=10")),
    (("kmeans", "iekm"), "iris.arff", ("--runs", "2")),
    (("c45", "k2"), "iris.arff", ("--cv", "2", "--repeats", "1")),
])
def test_compare_measures_every_task(tmp_path, algorithms, data, protocol):
    out = tmp_path / "scores.csv"
    result = run_cli("compare", *algorithms, "--data", SAMPLE / data, *protocol,
                     "-m", "fit-seconds", "-m", "model-size", "--output", out)
    assert result.exit_code == 0, result.stderr
    rows = _rows(out)
    _check_measured(rows, set(algorithms))
    if algorithms[0] == "kmeans":
        assert {r["value"] for r in rows if r["metric"] == "model-size"} == {"3.0"}


def test_compare_plots_and_writes_json_of_the_model_size(tmp_path):
    plot = tmp_path / "p.png"
    args = ("compare", "c45", "k2", "--data", SAMPLE / "iris.arff", "--data",
            SAMPLE / "wine.arff", "--cv", "2", "--repeats", "1", "-m", "model-size")
    result = run_cli(*args, "--plot", plot)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "p-model-size.png").stat().st_size > 0
    shown = json.loads(run_cli(*args, "--format", "json").stdout)
    rows = shown["metrics"]["model-size"]["rows"]
    assert [r["dataset"] for r in rows] == ["iris", "wine"]
    assert all(r["scores"][a]["mean"] >= 1 for r in rows for a in ("c45", "k2"))


@pytest.mark.parametrize("command", [
    ("compare", "c45", "lazy-bagging"),
    ("evaluate", "lazy-bagging", str(SAMPLE / "iris.arff")),
])
def test_model_size_of_an_algorithm_without_one_is_refused(command):
    data = ("--data", SAMPLE / "iris.arff") if command[0] == "compare" else ()
    result = run_cli(*command, *data, "--cv", "2", "--repeats", "1", "-m", "model-size")
    assert result.exit_code == 2
    assert "lazy-bagging" in result.stderr and "model-size" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
