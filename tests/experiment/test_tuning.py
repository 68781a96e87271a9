"""``compare --tune``: the choice inside a training fold agrees with scikit-learn's
GridSearchCV, is recorded per fold, and does not depend on workers or a resume."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from ensemblekit import experiment, registry
from ensemblekit.app.common import resolve_params
from ensemblekit.classifiers.ibk import IBk
from ensemblekit.data import load_dataset
from ensemblekit.experiment.protocol import Candidate, Protocol
from ensemblekit.experiment.tuning import TunedEstimator, grid_points, tuned_factory
from ensemblekit.results import most_chosen

from ektesting.support import run_main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
GRID = {"n_neighbors": [1, 3, 5, 7, 9]}


def _knn(tune=GRID):
    _, params = resolve_params("knn", {})
    return Candidate("knn", params, "knn", tune=tune, tune_cv=5)


@pytest.mark.parametrize("name", ["glass", "iris"])
def test_the_choice_in_a_training_fold_equals_grid_search_cv(name):
    ds = load_dataset(SAMPLE / f"{name}.arff")
    cand = _knn()
    protocol = Protocol("cv", folds=5, repeats=2, seed=1)
    work = experiment.plan([ds], [cand], protocol)
    y = np.asarray(ds.y, dtype=np.int64)
    for unit in work.units[:3]:
        train = np.setdiff1d(np.arange(y.size), unit.test)
        maker = lambda c, p, bare: registry.estimator_factory(c.algorithm, ds.schema, p, bare=bare)  # noqa: E731
        ours = tuned_factory(cand, dict(cand.params), maker)(unit.random_state)
        ours.fit(ds.X[train], y[train])
        inner = StratifiedKFold(5, shuffle=True, random_state=unit.random_state)
        reference = GridSearchCV(IBk(), GRID, cv=inner).fit(ds.X[train], y[train])
        assert ours.best_params_ == reference.best_params_
        np.testing.assert_allclose(ours.cv_scores_, reference.cv_results_["mean_test_score"],
                                   rtol=0, atol=1e-12)
        np.testing.assert_array_equal(ours.predict(ds.X[unit.test]),
                                      reference.predict(ds.X[unit.test]))


def test_ties_go_to_the_first_point_in_grid_order():
    X = np.array([[0.0], [0.1], [0.2], [0.3], [0.4], [5.0], [5.1], [5.2], [5.3], [5.4]])
    y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    maker = lambda p: lambda rs: IBk(**p)  # noqa: E731
    est = TunedEstimator(maker, {"n_neighbors": [3, 1]}, tune_cv=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.cv_scores_, [1.0, 1.0])  # both separate the two groups
    assert est.best_params_ == {"n_neighbors": 3}


def test_grid_points_follow_parameter_grid_order():
    from sklearn.model_selection import ParameterGrid

    grid = {"b": [1, 2], "a": ["x", "y", "z"]}
    assert grid_points(grid) == list(ParameterGrid(grid))


def test_too_few_rows_of_a_class_for_the_inner_folds_is_refused():
    X, y = np.arange(6.0).reshape(-1, 1), np.array([0, 0, 0, 0, 1, 1])
    est = TunedEstimator(lambda p: lambda rs: IBk(**p), GRID, tune_cv=3, random_state=0)
    with pytest.raises(ValueError, match="only 2 training rows"):
        est.fit(X, y)


def test_most_chosen_counts_per_data_set_and_breaks_ties_by_first_fold():
    chosen = {("d", "knn", 1, 1): {"k": 3}, ("d", "knn", 1, 2): {"k": 5},
              ("d", "knn", 2, 1): {"k": 5}, ("e", "knn", 1, 1): {"k": 1},
              ("e", "knn", 1, 2): {"k": 9}}
    assert most_chosen(chosen) == [("d", "knn", {"k": 5}, 2, 3), ("e", "knn", {"k": 1}, 1, 2)]


def test_runner_records_one_choice_per_outer_fold_serial_and_parallel():
    ds = load_dataset(SAMPLE / "iris.arff")
    protocol = Protocol("cv", folds=5, repeats=2, seed=3)
    work = experiment.plan([ds], [_knn()], protocol)
    serial = experiment.run([ds], work, protocol, ["accuracy"])
    assert sorted(serial.chosen) == [("iris", "knn", r, f) for r in (1, 2) for f in range(1, 6)]
    assert all(p["n_neighbors"] in GRID["n_neighbors"] for p in serial.chosen.values())
    parallel = experiment.run([ds], work, protocol, ["accuracy"], n_jobs=2)
    assert parallel.chosen == serial.chosen
    assert [s.value for s in parallel.scores] == [s.value for s in serial.scores]


# --------------------------------------------------------------------------- command line
def _args(*extra):
    return ["compare", "knn", "--data", SAMPLE / "iris.arff", "--cv", "3", "--repeats", "1",
            *extra]


@pytest.mark.parametrize("extra, message", [
    (["--tune", "weight=1:3:1"], "--tune weight: no compared algorithm has this parameter"),
    (["--tune", "n_neighbors=0:4:2"], "--tune n_neighbors: "),
    (["--tune", "n_neighbors="], "--grid expects key=start:stop:step"),
    (["--tune", "n_neighbors=1:3:1", "--grid", "n_neighbors=1,3", "c45", "--baseline",
      "c45"],
     "--tune n_neighbors: also given to --grid"),
    (["--tune", "n_neighbors=1:3:1", "--tune", "n_neighbors=5"], "given twice"),
    (["--tune", "n_neighbors=1:3:1", "--tune-cv", "1"], "--tune-cv must be >= 2"),
])
def test_bad_tune_values_exit_2_with_one_line(extra, message, monkeypatch, capsys):
    code, out, err = run_main(_args(*extra), monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("extra, message", [
    ([], "kmeans is a clustering algorithm: its runs hold out no rows, so an internal index "
         "chooses: give --tune-by INDEX (silhouette, dunn, connectivity, davies-bouldin, "
         "calinski-harabasz)"),
    (["--tune-by", "nmi"], "--tune-by nmi: not an internal index"),
])
def test_tuning_a_clusterer_needs_an_internal_index(extra, message, monkeypatch, capsys):
    code, out, err = run_main(["compare", "kmeans", "--data", SAMPLE / "iris.arff", "--runs", "2",
                               "--tune", "n_clusters=2:4:1", *extra], monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err


def test_tune_by_is_refused_for_classifiers_and_without_tune(monkeypatch, capsys):
    code, _, err = run_main(_args("--tune", "n_neighbors=1:3:1", "--tune-by", "silhouette"),
                            monkeypatch, capsys)
    assert code == 2 and "--tune-by is for clusterers; knn's inner folds choose by accuracy" in err
    code, _, err = run_main(_args("--tune-by", "silhouette"), monkeypatch, capsys)
    assert code == 2 and "--tune-by names the index that chooses --tune's values" in err


def test_a_clusterer_keeps_the_partition_its_index_rates_best():
    """Each grid point's silhouette equals scikit-learn's silhouette_score of that point's own
    partition, in the space the pipeline clustered; the best one (the first on a tie) is kept."""
    from sklearn.metrics import silhouette_score

    from ensemblekit.experiment.tuning import TunedClusterer

    ds = load_dataset(SAMPLE / "iris.arff")
    _, params = resolve_params("kmeans", {})
    cand = Candidate("kmeans", params, "kmeans", tune={"n_clusters": [2, 3, 4, 5]},
                     tune_by="silhouette")
    maker = lambda c, p, bare: registry.estimator_factory(c.algorithm, ds.schema, p, bare=bare)  # noqa: E731
    ours = tuned_factory(cand, dict(params), maker)(7)
    assert isinstance(ours, TunedClusterer)
    labels = ours.fit_predict(ds.X)
    expected = []
    for k in (2, 3, 4, 5):
        pipe = maker(cand, params | {"n_clusters": k}, False)(7)
        own = pipe.fit_predict(ds.X)
        expected.append(silhouette_score(np.asarray(pipe[:-1].transform(ds.X)), own))
        if k == ours.best_params_["n_clusters"]:
            np.testing.assert_array_equal(labels, own)
    np.testing.assert_allclose(ours.index_values_, expected, rtol=0, atol=1e-12)
    assert ours.best_params_ == {"n_clusters": 2 + int(np.argmax(expected))}
    assert ours.steps[-1][1].model_size() == ours.best_params_["n_clusters"]


def test_a_tuned_clustering_run_resumes_and_is_analysed_again(tmp_path, monkeypatch, capsys):
    args = ["compare", "kmeans", "iekm", "--data", SAMPLE / "iris.arff", "--runs", "3", "--tune",
            "n_clusters=2:4:1", "--tune-by", "davies-bouldin", "-m", "nmi", "--format", "json"]
    journal = tmp_path / "t.jsonl"
    code, first, err = run_main([*args, "--resume", journal], monkeypatch, capsys)
    assert code == 0, err
    code, again, err = run_main([*args, "--resume", journal], monkeypatch, capsys)
    assert code == 0 and "0 of 6 units computed now" in err and again == first
    code, plain, _ = run_main(args, monkeypatch, capsys)
    assert plain == first
    chosen = json.loads(first)["chosen"]
    assert len(chosen) == 6 and {c["values"]["n_clusters"] for c in chosen} <= {2, 3, 4}
    code, analysed, err = run_main(["analyse", journal, "-m", "nmi", "-m", "ari", "--format",
                                    "json"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(analysed)["chosen"] == chosen


def test_output_carries_the_choice_of_every_fold(tmp_path, monkeypatch, capsys):
    out_csv = tmp_path / "s.csv"
    code, out, _ = run_main(_args("--tune", "n_neighbors=1:9:2", "-o", out_csv), monkeypatch,
                            capsys)
    assert code == 0
    rows = out_csv.read_text().splitlines()
    assert rows[0].endswith(",error,chosen")
    picks = [r.rsplit(",", 1)[1] for r in rows[1:]]
    assert len(picks) == 3 and all(p.startswith("n_neighbors=") for p in picks)
    top = max(set(picks), key=lambda p: (picks.count(p), -picks.index(p)))
    assert f"tuned knn on iris: {top} in {picks.count(top)} of 3 folds" in out


def _ek() -> str:
    exe = Path(sys.executable).parent / "ensemblekit"
    if not exe.exists():
        pytest.skip("console script not installed")
    return str(exe)


@pytest.mark.slow  # several compare processes
def test_tuned_output_is_identical_serial_parallel_and_after_a_kill_and_resume(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    base = [_ek(), "compare", "knn", "--tune", "n_neighbors=1:9:2", "--data", str(SAMPLE),
            "--cv", "5", "--repeats", "2"]

    def run(*extra, name):
        out = tmp_path / f"{name}.json"
        done = subprocess.run(base + ["-o", str(out), *extra], capture_output=True, text=True,
                              env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout, [{k: v for k, v in r.items() if k != "seconds"}
                             for r in json.loads(out.read_text())]

    serial = run(name="serial")
    assert run("-j", "2", name="parallel") == serial
    journal = tmp_path / "j.jsonl"
    first = subprocess.Popen(base + ["--resume", str(journal)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    try:
        while not (journal.exists() and journal.read_text().count("\n") >= 4):
            assert first.poll() is None, first.communicate()
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        first.kill()
    written = journal.read_text().splitlines()[1:]
    assert len(written) < 50  # killed before the 5 x 2 x 5 units were done
    assert all("chosen" in json.loads(line) for line in written if line.endswith("}"))
    assert run("--resume", str(journal), name="resumed") == serial


# --------------------------------------------------------------------------- one configuration
def test_a_configuration_tunes_for_itself_what_tune_does_for_all(monkeypatch, capsys):
    """knn:tune.n_neighbors=1:9:2 is the column `--tune n_neighbors=1:9:2` makes of knn, beside an
    untuned knn column (the plain column equals a comparison without the configuration)."""
    code, out, err = run_main(["compare", "knn", "knn:tune.n_neighbors=1:9:2", "--data",
                               SAMPLE / "iris.arff", "--data", SAMPLE / "vote.arff", "--cv", "3",
                               "--repeats", "1", "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    mixed = json.loads(out)["metrics"]["accuracy"]["rows"]
    code, out, _ = run_main(_args("--data", SAMPLE / "vote.arff", "--tune", "n_neighbors=1:9:2",
                                  "--format", "json"), monkeypatch, capsys)
    tuned = json.loads(out)["metrics"]["accuracy"]["rows"]
    code, out, _ = run_main(_args("--data", SAMPLE / "vote.arff", "--format", "json"),
                            monkeypatch, capsys)
    plain = json.loads(out)["metrics"]["accuracy"]["rows"]
    for m, t, p in zip(mixed, tuned, plain):
        assert m["scores"]["knn:tune.n_neighbors=1:9:2"]["mean"] == t["scores"]["knn"]["mean"]
        assert m["scores"]["knn"]["mean"] == p["scores"]["knn"]["mean"]


@pytest.mark.parametrize("algos, message", [
    (["knn:tune.weight=1:3:1"], "knn:tune.weight=1:3:1: tune.weight: knn has no such parameter"),
    (["knn:tune.n_neighbors=0:4:2"], "knn:tune.n_neighbors=0:4:2: tune.n_neighbors: "),
    (["knn:tune.n_neighbors=1:3:1+n_neighbors=3"], "n_neighbors is set twice"),
    (["knn", "knn:tune.n_neighbors=1:1:1"], None),
    (["kmeans:tune.n_clusters=2:4:1"], "kmeans is a clustering algorithm: its runs hold out"),
])
def test_bad_configuration_tuning_exits_2_with_one_line(algos, message, monkeypatch, capsys):
    code, out, err = run_main(["compare", *algos, "--data", SAMPLE / "iris.arff", "--cv", "3"],
                              monkeypatch, capsys)
    if message is None:  # a one-point grid is a legal, if useless, tuning: its own column
        assert code == 0, err
        return
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err


def test_evaluate_tunes_in_every_training_fold(tmp_path, monkeypatch, capsys):
    """evaluate ALGO DATA --tune is the one-algorithm compare --tune: the same folds, the
    same choices, and the pooled report of the tuned model's predictions."""
    scores = tmp_path / "e.csv"
    code, out, err = run_main(["evaluate", "knn", SAMPLE / "iris.arff", "--cv", "3", "--repeats",
                               "1", "--tune", "n_neighbors=1:9:2", "-o", scores], monkeypatch,
                              capsys)
    assert code == 0, err
    assert "tuned knn on iris: n_neighbors=" in out
    picks = [r.rsplit(",", 1)[1] for r in scores.read_text().splitlines()[1:]]
    compared = tmp_path / "c.csv"
    code, _, _ = run_main(_args("--tune", "n_neighbors=1:9:2", "-o", compared), monkeypatch,
                          capsys)
    assert [r.rsplit(",", 1)[1] for r in compared.read_text().splitlines()[1:]
            if ",accuracy," in r] == [p for r, p in zip(scores.read_text().splitlines()[1:], picks)
                                      if ",accuracy," in r]
    code, _, err = run_main(["evaluate", "knn", SAMPLE / "iris.arff", "--split-percentage", "66",
                             "--tune", "n_neighbors=1:9:2"], monkeypatch, capsys)
    assert code == 2 and "--tune cannot be used with one train/test split" in err
