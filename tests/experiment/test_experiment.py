"""Protocols, grids, subsampling, the resume journal and scale-out."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from ensemblekit import experiment
from ensemblekit.data import load_dataset
from ensemblekit.experiment.protocol import Candidate, Protocol, ProtocolError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"


@pytest.fixture(scope="module")
def iris():
    return load_dataset(SAMPLE / "iris.arff")


@pytest.fixture(scope="module")
def wine():
    return load_dataset(SAMPLE / "wine.arff")


def test_parse_grid_ranges_and_lists():
    assert experiment.parse_grid("max_features=0.1:0.9:0.1") == (
        "max_features", ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"])
    assert experiment.parse_grid("n_estimators=10:100:10")[1] == [str(v) for v in range(10, 101, 10)]
    assert experiment.parse_grid("n_estimators=5:12:5")[1] == ["5", "10"]  # stop off the step
    assert experiment.parse_grid("init=random,k-means++") == ("init", ["random", "k-means++"])


@pytest.mark.parametrize("bad", ["n_estimators", "x=", "x=1:2", "x=a:b:c", "x=1:5:0", "x=5:1:1",
                                 "x=0:100000:1"])
def test_parse_grid_rejects(bad):
    with pytest.raises(ProtocolError):
        experiment.parse_grid(bad)


def test_expand_grid_is_a_cartesian_product_first_key_slowest():
    cands = experiment.expand_grid("iekm", {"n_estimators": 10, "max_features": 0.5},
                                   {"n_estimators": [5, 10], "max_features": [0.3, 0.6, 0.9]})
    assert [c.grid for c in cands][:3] == [{"n_estimators": 5, "max_features": v} for v in (0.3, 0.6, 0.9)]
    assert len(cands) == 6 and len({c.label for c in cands}) == 6
    assert cands[0].label == "iekm[n_estimators=5,max_features=0.3]"
    assert cands[4].params == {"n_estimators": 10, "max_features": 0.6}
    assert experiment.expand_grid("knn", {"n_neighbors": 1}, {}) == [
        Candidate("knn", {"n_neighbors": 1}, "knn")]


def test_subsample_is_seeded_sorted_and_per_data_set(iris, wine):
    small = experiment.subsample(iris, 40, seed=3)
    assert small.n_instances == 40
    rows = [int(np.flatnonzero(iris.lines == line)[0]) for line in small.lines]
    assert rows == sorted(rows) and len(set(rows)) == 40
    np.testing.assert_array_equal(small.X, iris.X[rows])
    np.testing.assert_array_equal(small.y, iris.y[rows])
    again = experiment.subsample(iris, 40, seed=3)
    np.testing.assert_array_equal(again.lines, small.lines)
    assert not np.array_equal(experiment.subsample(iris, 40, seed=4).lines, small.lines)
    assert experiment.subsample(iris, 500, seed=3) is iris
    with pytest.raises(ProtocolError):
        experiment.subsample(iris, 0, seed=3)


def test_cv_plan_shares_folds_and_seeds_across_algorithms(iris):
    cands = [Candidate("knn", {"n_neighbors": 1, "weights": "uniform"}, "knn"),
             Candidate("cart-entropy", {"min_samples_leaf": 2, "max_depth": None}, "cart-entropy")]
    work = experiment.plan([iris], cands, Protocol("cv", folds=5, repeats=2, seed=7))
    assert len(work.units) == 2 * 5 * 2
    for a, b in zip(work.units[0::2], work.units[1::2]):
        assert (a.candidate, b.candidate) == (0, 1)
        np.testing.assert_array_equal(a.test, b.test)
        assert a.random_state == b.random_state
    # every instance is tested exactly once per repeat, and folds are stratified (10 per class)
    assert all(u.test.dtype == np.int32 for u in work.units)
    for repeat in (1, 2):
        tests = [u.test for u in work.units if u.repeat == repeat and u.candidate == 0]
        assert sorted(np.concatenate(tests).tolist()) == list(range(150))
        for t in tests:
            assert np.bincount(iris.y[t]).tolist() == [10, 10, 10]


def test_runs_share_the_initial_centres_of_kmeans_and_iekm(iris):
    from ensemblekit import registry

    cands = experiment.expand_grid("kmeans", registry.get("kmeans").defaults(), {}) + \
        experiment.expand_grid("iekm", registry.get("iekm").defaults(), {})
    work = experiment.plan([iris], cands, Protocol("runs", repeats=3, seed=2))
    for run in (1, 2, 3):
        a, b = [u for u in work.units if u.repeat == run]
        ka = registry.make_estimator("kmeans", iris.schema, {"n_clusters": 3}, a.random_state).fit(iris.X)
        kb = registry.make_estimator("iekm", iris.schema, {"n_clusters": 3}, b.random_state).fit(iris.X)
        np.testing.assert_array_equal(ka.named_steps["model"].init_centers_,
                                      kb.named_steps["model"].init_centers_)


def _knn_tree_run(iris, **kwargs):
    cands = [Candidate("knn", {"n_neighbors": 3, "weights": "uniform"}, "knn"),
             Candidate("cart-entropy", {"min_samples_leaf": 2, "max_depth": None}, "cart-entropy")]
    protocol = Protocol("cv", folds=3, repeats=2, seed=5)
    work = experiment.plan([iris], cands, protocol)
    return experiment.run([iris], work, protocol, ["accuracy"], **kwargs)


@pytest.mark.slow  # starts two worker processes
def test_parallel_run_equals_serial_run(iris):
    serial = _knn_tree_run(iris)
    parallel = _knn_tree_run(iris, n_jobs=2)
    strip = lambda scores: [(s.dataset, s.algorithm, s.repeat, s.fold, s.value) for s in scores]  # noqa: E731
    assert strip(parallel.scores) == strip(serial.scores)
    assert len(serial.scores) == 12 and not serial.failures


def test_journal_resumes_and_drops_a_half_written_line(iris, tmp_path):
    journal = tmp_path / "j.jsonl"
    first = _knn_tree_run(iris, resume=journal)
    assert first.computed == 12
    lines = journal.read_text().splitlines()
    assert len(lines) == 13 and json.loads(lines[0])["ensemblekit_journal"] == 1
    # simulate a kill: keep the header, 4 units and half of the fifth
    journal.write_text("\n".join(lines[:5]) + "\n" + lines[5][: len(lines[5]) // 2])
    second = _knn_tree_run(iris, resume=journal)
    assert second.computed == 8
    strip = lambda scores: [(s.algorithm, s.repeat, s.fold, s.value) for s in scores]  # noqa: E731
    assert strip(second.scores) == strip(first.scores)
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    keys = [(r["algorithm"], r["repeat"], r["fold"]) for r in records]
    assert len(keys) == len(set(keys)) == 12
    assert _knn_tree_run(iris, resume=journal).computed == 0


@pytest.mark.slow  # starts two worker processes
def test_parallel_journaled_run_records_every_unit_once_and_equals_the_serial_run(iris, tmp_path):
    journal = tmp_path / "j.jsonl"
    serial = _knn_tree_run(iris)
    parallel = _knn_tree_run(iris, n_jobs=2, resume=journal)
    strip = lambda scores: [(s.dataset, s.algorithm, s.repeat, s.fold, s.value) for s in scores]  # noqa: E731
    assert strip(parallel.scores) == strip(serial.scores)
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    keys = [(r["dataset"], r["algorithm"], r["repeat"], r["fold"]) for r in records]
    assert len(keys) == len(set(keys)) == 12


def test_timed_batches_group_cheap_units_of_one_data_set_and_send_unknown_ones_alone():
    from ensemblekit.experiment.protocol import Unit
    from ensemblekit.experiment.runner import _timed_batches, _UnitCosts

    units = [Unit(d, c, 1, 0, None, 0) for d, c in
             [(0, 0), (0, 0), (0, 0), (0, 1), (0, 1), (1, 0), (1, 0), (0, 0)]]
    costs = _UnitCosts()
    # nothing measured yet: every unit is its own task
    assert list(_timed_batches(list(range(8)), units, costs, 0.5)) == [[i] for i in range(8)]
    costs.add(units[0], 0.1)   # (data 0, cand 0): 0.1 s
    costs.add(units[3], 0.3)   # (data 0, cand 1): 0.3 s
    costs.add(units[5], 2.0)   # (data 1, cand 0): over the budget
    batches = list(_timed_batches(list(range(8)), units, costs, 0.5))
    # 0.1 + 0.1 + 0.1 then 0.3 would pass 0.5; a new data set starts a new task;
    # an expensive unit goes alone
    assert batches == [[0, 1, 2], [3], [4], [5], [6], [7]]
    assert sorted(i for b in batches for i in b) == list(range(8))


def test_journal_of_another_comparison_is_refused(iris, wine, tmp_path):
    journal = tmp_path / "j.jsonl"
    _knn_tree_run(iris, resume=journal)
    cands = [Candidate("knn", {"n_neighbors": 3, "weights": "uniform"}, "knn")]
    protocol = Protocol("cv", folds=3, repeats=2, seed=6)
    with pytest.raises(ProtocolError, match="different comparison"):
        experiment.run([iris], experiment.plan([iris], cands, protocol), protocol, ["accuracy"],
                       resume=journal)


def test_a_failing_unit_is_recorded_and_the_rest_completes(iris):
    cands = [Candidate("lazy-bagging", {"n_neighbors": 120}, "lazy-bagging"),
             Candidate("cart-entropy", {"min_samples_leaf": 2, "max_depth": None}, "cart-entropy")]
    protocol = Protocol("cv", folds=2, repeats=1, seed=1)
    result = experiment.run([iris], experiment.plan([iris], cands, protocol), protocol, ["accuracy"])
    # 75 training rows per fold: lazy-bagging cannot find 120 neighbours (knn, as Weka's
    # IBk, would use them all)
    assert len(result.failures) == 2 and all(f.bad_input for f in result.failures)
    assert "n_neighbors" in result.failures[0].error
    assert [s.algorithm for s in result.scores] == ["cart-entropy", "cart-entropy"]


def test_analyse_marks_and_friedman_on_hand_made_scores(iris, wine):
    # three candidates on two data sets; per-fold accuracies made up so the
    # means and ranks are known: a > b > c on both data sets.
    scores = []
    for d in ("iris", "wine"):
        for fold in range(1, 6):
            for label, base in (("a", 0.9), ("b", 0.8), ("c", 0.5)):
                scores.append(experiment.Score(d, label, "{}", 1, fold, "accuracy",
                                               base + 0.01 * fold))
    an = experiment.analyse(scores, ["a", "b", "c"], [iris, wine], "accuracy",
                            Protocol("cv", folds=5, repeats=1), baseline="b")
    np.testing.assert_allclose(an.ranks, [1, 2, 3])
    np.testing.assert_allclose(an.means[:, 0], [0.93, 0.93])
    # constant differences: the corrected t-test is infinite, so both marks are significant
    assert an.marks[("iris", "a")] == "▲" and an.marks[("iris", "c")] == "▼"
    assert an.marks[("iris", "b")] == ""
    # Friedman with N=2, k=3 and identical rankings: chi2 = 12*2/(3*4) * (1+4+9 - 12) = 4
    assert an.friedman.chi2 == pytest.approx(4.0)


def _ek():
    exe = Path(sys.executable).parent / "ensemblekit"
    if not exe.exists():
        pytest.skip("console script not installed")
    return str(exe)


@pytest.mark.slow  # a compare process killed, then resumed
def test_killed_resume_run_completes_without_recomputing(tmp_path):
    args = [_ek(), "compare", "kmeans", "iekm", "--data", str(SAMPLE / "glass.arff"),
            "--data", str(SAMPLE / "iris.arff"), "--runs", "25", "--seed", "4", "--format", "json",
            "--set", "n_estimators=40"]
    journal = tmp_path / "j.jsonl"
    proc = subprocess.Popen(args + ["--resume", str(journal)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 12:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(journal.read_text().splitlines()) - 1
    assert 0 < done_before < 100, "the run should be killed part-way"
    resumed = subprocess.run(args + ["--resume", str(journal)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{100 - done_before} of 100 units computed now" in resumed.stderr
    fresh = subprocess.run(args, capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stderr
    assert resumed.stdout == fresh.stdout
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    keys = [(r["dataset"], r["algorithm"], r["repeat"]) for r in records]
    assert len(keys) == len(set(keys)) == 100


@pytest.mark.slow  # starts a LocalCluster
@pytest.mark.dask
def test_dask_cluster_gives_the_serial_result():
    distributed = pytest.importorskip("distributed")
    args = ["compare", "knn", "c45", "--data", str(SAMPLE / "iris.arff"), "--data",
            str(SAMPLE / "wine.arff"), "--cv", "3", "--repeats", "2", "--seed", "9", "--format", "json",
            "--baseline", "knn"]
    serial = subprocess.run([_ek(), *args], capture_output=True, text=True, check=True).stdout
    # the nanny writes its workers' variables (MALLOC_TRIM_THRESHOLD_, OMP_NUM_THREADS=1, ...)
    # into this process's environment; patch.dict puts it back, so later tests do not inherit them
    with mock.patch.dict(os.environ), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None) as cluster:
        remote = subprocess.run([_ek(), *args, "--scheduler", cluster.scheduler_address],
                                capture_output=True, text=True)
        # the units ran as tasks on the cluster (the warm-up is not a task)
        computed = sum(p.all_durations.get("compute", 0.0)
                       for p in cluster.scheduler.task_prefixes.values())
    assert remote.returncode == 0, remote.stderr
    assert computed > 0
    assert remote.stdout == serial


@pytest.mark.slow  # waits out Dask's 10 s connection timeout
def test_unreachable_scheduler_is_bad_input(tmp_path):
    pytest.importorskip("distributed")
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    out = tmp_path / "scores.csv"
    done = subprocess.run([_ek(), "compare", "knn", "c45", "--data", str(SAMPLE / "iris.arff"), "--cv", "3",
                           "--repeats", "1", "--scheduler", address, "--output", str(out)],
                          capture_output=True, text=True,
                          env={**os.environ, "ENSEMBLEKIT_DASK_TIMEOUT": "1s"})
    assert done.returncode == 2
    assert f"cannot reach the Dask scheduler at {address}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == "" and not out.exists()


def test_run_does_not_retry_a_scheduler_prestart_could_not_reach(monkeypatch):
    pytest.importorskip("distributed")
    attempts = []
    address = "tcp://192.0.2.1:8786"

    def refuse():
        attempts.append(address)
        raise OSError(f"Timed out trying to connect to {address}")

    runner = experiment.Runner(scheduler=address)
    monkeypatch.setattr(runner, "_dask_client", refuse)
    runner.prestart().join()
    with pytest.raises(ProtocolError, match="cannot reach the Dask scheduler at tcp://192.0.2.1:8786"):
        with runner._backend():
            pass
    assert attempts == [address]
    # the failure is reported once: a later run connects again
    with pytest.raises(ProtocolError):
        with runner._backend():
            pass
    assert attempts == [address, address]


def test_corrected_t_test_decides_the_marks(iris, wine):
    # baseline "b" and "a" on 5 folds of iris (150 rows: folds of 30, training sets of 120);
    # differences a - b = .02 .04 .03 .05 .01: mean .03, sample variance .00025.
    # Nadeau-Bengio: t = .03 / sqrt((1/5 + 30/120) * .00025) = .03 / sqrt(.0001125) = 2.828,
    # two-sided p with 4 df = 0.0474 < 0.05, so "a" is marked better. With the ratio the
    # wrong way round (120/30) t would be 0.93 and there would be no mark.
    from scipy.stats import t as student

    diffs = [0.02, 0.04, 0.03, 0.05, 0.01]
    scores = []
    for fold, d in enumerate(diffs, start=1):
        scores.append(experiment.Score("iris", "b", "{}", 1, fold, "accuracy", 0.8))
        scores.append(experiment.Score("iris", "a", "{}", 1, fold, "accuracy", 0.8 + d))
    t = 0.03 / np.sqrt((1 / 5 + 30 / 120) * 0.00025)
    assert 2 * student.sf(t, 4) == pytest.approx(0.0474, abs=1e-4)
    an = experiment.analyse(scores, ["b", "a"], [iris], "accuracy", Protocol("cv", folds=5, repeats=1),
                            baseline="b")
    assert an.marks[("iris", "a")] == "▲"
    # the same differences judged at alpha 0.01 are not significant
    strict = experiment.analyse(scores, ["b", "a"], [iris], "accuracy",
                                Protocol("cv", folds=5, repeats=1), baseline="b", alpha=0.01)
    assert strict.marks[("iris", "a")] == ""


def test_runs_marks_use_the_wilcoxon_direction(iris):
    # 8 paired runs; "a" beats the reference in 7 runs by 0.01..0.07 and loses one by 0.5:
    # R+ = 2+...+7+1 (ranks of the wins) vs R- = 8, so "a" is better although its mean is lower
    gains = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, -0.5]
    scores = []
    for run, g in enumerate(gains, start=1):
        scores.append(experiment.Score("iris", "ref", "{}", run, 0, "nmi", 0.6))
        scores.append(experiment.Score("iris", "a", "{}", run, 0, "nmi", 0.6 + g))
    an = experiment.analyse(scores, ["ref", "a"], [iris], "nmi", Protocol("runs", repeats=8),
                            reference="ref", alpha=0.5)
    assert an.marks[("iris", "a")] == "▲"


@pytest.mark.slow  # starts two worker processes
def test_parallel_batches_of_several_units_equal_serial(iris):
    from ensemblekit import registry
    from ensemblekit.experiment.runner import _batches

    cands = [Candidate("kmeans", registry.get("kmeans").defaults(), "kmeans"),
             Candidate("iekm", registry.get("iekm").defaults(), "iekm")]
    protocol = Protocol("runs", repeats=20, seed=3)
    work = experiment.plan([iris], cands, protocol)
    # 40 units on 2 workers: batches of 3 units
    assert max(len(b) for b in _batches(list(range(40)), work.units, 2)) == 3
    serial = experiment.run([iris], work, protocol, ["nmi", "purity"])
    parallel = experiment.run([iris], work, protocol, ["nmi", "purity"], n_jobs=2)
    strip = lambda scores: [(s.algorithm, s.repeat, s.metric, s.value) for s in scores]  # noqa: E731
    assert strip(parallel.scores) == strip(serial.scores)


def test_damaged_journal_record_is_refused(iris, tmp_path):
    journal = tmp_path / "j.jsonl"
    _knn_tree_run(iris, resume=journal)
    lines = journal.read_text().splitlines()
    record = json.loads(lines[3])
    record["scores"] = {}
    lines[3] = json.dumps(record)
    journal.write_text("\n".join(lines) + "\n")
    with pytest.raises(ProtocolError, match="line 4: damaged journal record"):
        _knn_tree_run(iris, resume=journal)


def test_header_cut_short_starts_afresh(iris, tmp_path):
    journal = tmp_path / "j.jsonl"
    journal.write_text('{"ensemblekit_jour')
    assert _knn_tree_run(iris, resume=journal).computed == 12


@pytest.mark.slow  # a fresh interpreter
def test_one_core_limits_openmp_loaded_after_it_starts():
    # threadpoolctl only limits libraries already loaded: scikit-learn's OpenMP runtime
    # must be limited too when the first unit imports it inside the pinned block
    import subprocess
    import sys

    code = (
        "from ensemblekit.experiment.runner import OneCore\n"
        "with OneCore().pinned():\n"
        "    from sklearn.neighbors import KNeighborsClassifier\n"
        "    from threadpoolctl import threadpool_info\n"
        "    apis = {i['user_api'] for i in threadpool_info()}\n"
        "    assert 'openmp' in apis, apis\n"
        "    print(sorted({i['num_threads'] for i in threadpool_info()}))\n"
    )
    # three threads asked of every library, so that only the limit can bring them to one,
    # whatever the caller's environment says (a Dask nanny leaves OMP_NUM_THREADS=1 behind)
    env = dict(os.environ, OMP_NUM_THREADS="3", OPENBLAS_NUM_THREADS="3", MKL_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1]"


# --------------------------------------------------------------------------- regression
def _ridge_spec():
    from ensemblekit import registry

    return registry.AlgorithmSpec(
        name="ridge-test", task=registry.REGRESSION, description="ridge regression (tests only)",
        estimator="sklearn.linear_model:Ridge",
        params=(registry.Param("alpha", "float", 1.0, "penalty", low=0.0),),
        preprocessing="missing: training mean")


@pytest.fixture
def ridge(monkeypatch):
    """A regression algorithm in the registry for the length of one test (serial runs only:
    worker processes would not see it)."""
    from ensemblekit import registry

    monkeypatch.setitem(registry.ALGORITHMS, "ridge-test", _ridge_spec())
    return [Candidate("ridge-test", {"alpha": 1.0}, "ridge-test"),
            Candidate("ridge-test", {"alpha": 30.0}, "ridge-test[alpha=30]", {"alpha": 30.0})]


def _numeric_data(tmp_path, name="tiny", n=23, missing=(4, 17), seed=0):
    """A small numeric data set with a numeric class, some targets negative and some missing."""
    rng = np.random.RandomState(seed)
    X = np.round(rng.uniform(-3, 3, size=(n, 2)), 3)
    y = np.round(2 * X[:, 0] - X[:, 1] + rng.normal(0, 0.5, n), 3)
    lines = ["@relation " + name, "@attribute x1 numeric", "@attribute x2 numeric",
             "@attribute target numeric", "@data"]
    for i in range(n):
        # a row with a missing target has wild features: were it used in training, the fit would show it
        row = [1e6, -1e6, "?"] if i in missing else [X[i, 0], X[i, 1], y[i]]
        lines.append(",".join(str(v) for v in row))
    path = tmp_path / f"{name}.arff"
    path.write_text("\n".join(lines) + "\n")
    return load_dataset(path)


def test_regression_plan_is_repeated_kfold_over_known_targets(tmp_path, ridge):
    from sklearn.model_selection import RepeatedKFold

    ds = _numeric_data(tmp_path)
    known = np.flatnonzero(~np.isnan(ds.y))
    assert known.size == 21 and (ds.y[known] < 0).any()
    protocol = Protocol("cv", folds=4, repeats=3, seed=11)
    work = experiment.plan([ds], ridge, protocol)
    assert len(work.units) == 3 * 4 * 2 and work.notes == []
    # folds and estimator seeds are shared by both candidates
    for a, b in zip(work.units[0::2], work.units[1::2]):
        assert (a.candidate, b.candidate) == (0, 1) and (a.repeat, a.fold) == (b.repeat, b.fold)
        np.testing.assert_array_equal(a.test, b.test)
        assert a.random_state == b.random_state
    # each repeat's test folds partition the rows with a known target
    for repeat in (1, 2, 3):
        tests = [u.test for u in work.units if u.repeat == repeat and u.candidate == 0]
        assert sorted(np.concatenate(tests).tolist()) == known.tolist()
    # the folds are RepeatedKFold's over the known rows
    by_hand = RepeatedKFold(n_splits=4, n_repeats=3, random_state=11).split(np.zeros((21, 1)))
    for unit, (_, test) in zip(work.units[0::2], by_hand):
        np.testing.assert_array_equal(unit.test, known[test])
    # same seed, same plan; another seed, other folds
    again = experiment.plan([ds], ridge, protocol)
    assert all(np.array_equal(u.test, v.test) and u.random_state == v.random_state
               for u, v in zip(work.units, again.units))
    other = experiment.plan([ds], ridge, Protocol("cv", folds=4, repeats=3, seed=12))
    assert not all(np.array_equal(u.test, v.test) for u, v in zip(work.units, other.units))


def test_regression_run_equals_kfold_by_hand(tmp_path, ridge):
    from scipy.stats import pearsonr
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold

    ds = _numeric_data(tmp_path)
    protocol = Protocol("cv", folds=3, repeats=2, seed=5)
    result = experiment.run([ds], experiment.plan([ds], ridge, protocol), protocol,
                            ["correlation", "rmse", "mae"])
    assert not result.failures and len(result.scores) == 2 * 3 * 2 * 3
    got = {(s.algorithm, s.repeat, s.fold, s.metric): s.value for s in result.scores}
    # RepeatedKFold draws each repeat's shuffled KFold from one RandomState(seed)
    known = np.flatnonzero(~np.isnan(ds.y))
    rng = np.random.RandomState(5)
    for repeat in (1, 2):
        folds = KFold(n_splits=3, shuffle=True, random_state=rng).split(np.zeros((known.size, 1)))
        for fold, (train, test) in enumerate(folds, start=1):
            train, test = known[train], known[test]
            for label, alpha in (("ridge-test", 1.0), ("ridge-test[alpha=30]", 30.0)):
                # the features are complete and numeric, so preprocessing changes nothing
                pred = Ridge(alpha=alpha).fit(ds.X[train], ds.y[train]).predict(ds.X[test])
                truth = ds.y[test]
                assert got[(label, repeat, fold, "correlation")] == pytest.approx(pearsonr(truth, pred)[0])
                assert got[(label, repeat, fold, "rmse")] == pytest.approx(
                    np.sqrt(np.mean((truth - pred) ** 2)))
                assert got[(label, repeat, fold, "mae")] == pytest.approx(np.mean(np.abs(truth - pred)))


def test_regression_protocol_mismatches_are_refused(tmp_path, ridge, iris):
    numeric = _numeric_data(tmp_path)
    cv = Protocol("cv", folds=3, repeats=1)
    with pytest.raises(ProtocolError, match="class 'class' is nominal.*numeric class"):
        experiment.plan([iris], ridge, cv)
    knn = [Candidate("knn", {"n_neighbors": 1, "weights": "uniform"}, "knn")]
    with pytest.raises(ProtocolError, match="class 'target' is numeric.*nominal class"):
        experiment.plan([numeric], knn, cv)
    kmeans = [Candidate("kmeans", {"n_clusters": 2}, "kmeans")]
    with pytest.raises(ProtocolError, match="class 'target' is numeric"):
        experiment.plan([numeric], kmeans, Protocol("runs", repeats=2))
    with pytest.raises(ProtocolError, match="different tasks"):
        experiment.plan([numeric], ridge + knn, cv)
    with pytest.raises(ProtocolError, match="cross-validation"):
        experiment.plan([numeric], ridge, Protocol("runs", repeats=2))
    with pytest.raises(ProtocolError, match="21 instances with a known target, fewer than 25 folds"):
        experiment.plan([numeric], ridge, Protocol("cv", folds=25, repeats=1))


def test_rmse_ranks_and_marks_lower_as_better(tmp_path):
    # per-fold RMSEs made up so that a < b < c (a best) on both data sets
    first, second = _numeric_data(tmp_path, "one"), _numeric_data(tmp_path, "two", seed=1)
    scores = []
    for d in ("one", "two"):
        for fold in range(1, 6):
            for label, base in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
                scores.append(experiment.Score(d, label, "{}", 1, fold, "rmse", base + 0.1 * fold))
    an = experiment.analyse(scores, ["c", "b", "a"], [first, second], "rmse",
                            Protocol("cv", folds=5, repeats=1), baseline="b")
    np.testing.assert_allclose(an.ranks, [3, 2, 1])
    assert an.marks[("one", "a")] == "▲" and an.marks[("one", "c")] == "▼"
    assert an.pairwise[0][:2] == ("a", "b")  # the better-ranked first
    # Friedman with N=2, k=3 and identical rankings: chi2 = 12*2/(3*4) * (1+4+9 - 12) = 4
    assert an.friedman.chi2 == pytest.approx(4.0)
    # the same numbers read as correlations (higher is better) rank the other way round
    as_corr = [experiment.Score(s.dataset, s.algorithm, s.params, s.repeat, s.fold, "correlation",
                                s.value) for s in scores]
    flipped = experiment.analyse(as_corr, ["c", "b", "a"], [first, second], "correlation",
                                 Protocol("cv", folds=5, repeats=1), baseline="b")
    np.testing.assert_allclose(flipped.ranks, [1, 2, 3])


def test_regression_journal_resumes(tmp_path, ridge):
    ds = _numeric_data(tmp_path)
    protocol = Protocol("cv", folds=3, repeats=2, seed=5)
    work = experiment.plan([ds], ridge, protocol)
    journal = tmp_path / "j.jsonl"
    first = experiment.run([ds], work, protocol, ["correlation", "rmse"], resume=journal)
    assert first.computed == 12
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:6]) + "\n")  # 5 units kept
    second = experiment.run([ds], work, protocol, ["correlation", "rmse"], resume=journal)
    assert second.computed == 7
    strip = lambda scores: [(s.algorithm, s.repeat, s.fold, s.metric, s.value) for s in scores]  # noqa: E731
    assert strip(second.scores) == strip(first.scores)
    # another seed is another comparison
    other = Protocol("cv", folds=3, repeats=2, seed=6)
    with pytest.raises(ProtocolError, match="different comparison"):
        experiment.run([ds], experiment.plan([ds], ridge, other), other, ["correlation", "rmse"],
                       resume=journal)
