"""ensemblekit.experiment as a package: each runner owns its state, the journal round-trips
units, the analysis helpers on hand-made cases, and the one known-class test of data.py."""

import json
import os
import pickle
import threading
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from ensemblekit import experiment, registry
from ensemblekit.data import load_dataset
from ensemblekit.dataset import known_class
from ensemblekit.experiment import analysis, journal, protocol, runner
from ensemblekit.experiment.analysis import beats, grid_summary
from ensemblekit.experiment.journal import Journal, run_fingerprint, unit_key
from ensemblekit.experiment.protocol import Candidate, Protocol, ProtocolError, expand_grid, plan
from ensemblekit.experiment.runner import OneCore, Runner

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
KNN = Candidate("knn", {"n_neighbors": 3, "weights": "uniform"}, "knn")


@pytest.fixture(scope="module")
def iris():
    return load_dataset(SAMPLE / "iris.arff")


def _strip(result):
    """Scores without their wall time (the one field that may differ between runs)."""
    return [(s.dataset, s.algorithm, s.params, s.repeat, s.fold, s.metric, s.value)
            for s in result.scores]


# --------------------------------------------------------------------------- known_class
def test_known_class_on_class_codes():
    y = np.array([0, 2, -1, 1, -1], dtype=np.int64)
    np.testing.assert_array_equal(known_class(y), [True, True, False, True, False])
    # any integer width; code 0 is a class like any other
    np.testing.assert_array_equal(known_class(np.array([0, -1], dtype=np.int32)), [True, False])
    np.testing.assert_array_equal(known_class(np.array([0, 3], dtype=np.uint8)), [True, True])


def test_known_class_on_regression_targets():
    # a target is known whatever its sign: zero and negative targets are values, NaN is missing
    y = np.array([1.5, np.nan, -3.0, 0.0, -1.0])
    np.testing.assert_array_equal(known_class(y), [True, False, True, True, True])
    assert known_class(np.array([], dtype=np.float64)).dtype == bool
    assert known_class(np.array([], dtype=np.int64)).shape == (0,)


def test_known_class_refuses_other_dtypes():
    with pytest.raises(TypeError, match="integer codes or float targets"):
        known_class(np.array(["a", "b"]))


def test_known_class_agrees_with_the_files_missing_values(tmp_path):
    # '?' in the class column is the missing value, for a nominal and for a numeric class
    nominal = tmp_path / "nominal.arff"
    nominal.write_text("@relation n\n@attribute x numeric\n@attribute c {a,b}\n@data\n"
                       "1,a\n2,?\n3,b\n4,?\n")
    numeric = tmp_path / "numeric.arff"
    numeric.write_text("@relation r\n@attribute x numeric\n@attribute t numeric\n@data\n"
                       "1,-1\n2,?\n3,0\n4,2.5\n")
    np.testing.assert_array_equal(known_class(load_dataset(nominal).y), [True, False, True, False])
    np.testing.assert_array_equal(known_class(load_dataset(numeric).y), [True, False, True, True])


# --------------------------------------------------------------------------- runners
def _holds_state(name, value) -> bool:
    if name.startswith("__") or name == "DEFAULT_METRICS":  # a constant table
        return False
    return isinstance(value, (dict, set, list, threading.local, type(threading.Lock())))


def test_no_module_holds_mutable_state():
    # clients, connection failures and pins live in Runner objects, not in module globals
    for module in (protocol, runner, journal, analysis):
        held = [name for name, value in vars(module).items() if _holds_state(name, value)]
        assert held == [], (module.__name__, held)


def test_runner_validates_n_jobs_when_it_runs_locally():
    with pytest.raises(ValueError, match="n_jobs must be 1 to"):
        Runner(0)
    assert Runner(0, scheduler="tcp://192.0.2.1:8786").scheduler is not None  # ignored there
    assert Runner(1).prestart() is None  # one local worker: nothing to start


def test_workers_warm_up_with_the_modules_of_the_compared_algorithms_only():
    # a worker starts while the data are read; every estimator module it need not import
    # (the Bayesian networks, the rule ensembles, ...) would delay its first unit
    wanted = runner._unit_modules(["c45", "j48", "knn"])
    assert wanted[0] == "ensemblekit.classifiers.c45_model"
    assert not any(m.startswith(("ensemblekit.bayesnet", "ensemblekit.rules")) for m in wanted)
    assert "ensemblekit.preprocessing" not in wanted  # both take the coded rows as they are
    # c45 fits on coded rows (fit_coded): its workers need no scikit-learn
    assert not any(m.startswith("sklearn") for m in runner._unit_modules(["c45"]))
    # clusterers are fitted through a pipeline, one-hot first
    assert {"sklearn.pipeline", "ensemblekit.preprocessing"} <= set(runner._unit_modules(["kmeans"]))


@pytest.mark.parametrize("name", sorted(registry.ALGORITHMS))
def test_the_modules_warmed_are_those_of_the_classes_the_units_build(name, iris):
    # the warm-up's list follows registry.estimator_factory: the class a unit builds lives
    # in the first module listed (bare: cross-validation; not bare: clustering runs)
    spec = registry.get(name)
    bare = spec.task != registry.CLUSTERING
    wanted = runner._factory_modules(spec, bare)
    made = registry.estimator_factory(name, iris.schema, {}, bare=bare)(0)
    model = made.steps[-1][1] if hasattr(made, "steps") else made
    assert type(model).__module__ == wanted[0]
    assert ("sklearn.pipeline" in wanted) == hasattr(made, "steps")
    assert "ensemblekit.bayesnet.classifier" in runner._unit_modules()  # no names: every one


def test_every_compiled_kernel_module_is_declared_by_a_unit_module():
    # a zygote starts numba and imports these before it has the data; a kernel module no
    # unit module declares would be loaded late, in every worker
    import importlib

    import ensemblekit

    root = Path(ensemblekit.__file__).parent
    compiled = {".".join(("ensemblekit", *f.relative_to(root).with_suffix("").parts))
                for f in root.rglob("*.py") if "\nfrom numba import" in f.read_text()}
    declared = set()
    for module in runner._unit_modules():
        if not module.startswith("sklearn") and module != "threadpoolctl":
            declared |= set(getattr(importlib.import_module(module), "KERNEL_MODULES", ()))
    assert compiled and declared == compiled, compiled ^ declared


@pytest.mark.slow  # two fresh interpreters, one of which starts numba
@pytest.mark.parametrize(("algorithms", "numba"), [(["k2", "iebn"], False), (["c45", "knn"], True)])
def test_a_zygote_starts_numba_only_for_algorithms_with_compiled_kernels(algorithms, numba):
    import subprocess
    import sys

    code = ("import sys; from ensemblekit.experiment import runner; "
            f"runner._prepare_zygote(runner._unit_modules({algorithms!r})); "
            "print(sorted(m for m in sys.modules if m == 'numba' or m.endswith('_kernels')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = ["ensemblekit.classifiers._c45_kernels", "ensemblekit.classifiers._ibk_kernels",
                "numba"] if numba else []
    assert done.stdout.strip() == repr(expected)


def test_two_runners_do_not_share_the_one_core_pin():
    from threadpoolctl import threadpool_info

    first, second = Runner(), Runner()
    assert first._pin is not second._pin
    with first._pin.pinned():
        assert first._pin.active and not second._pin.active
        assert {pool["num_threads"] for pool in threadpool_info()} == {1}
        # re-entrant for its own runner: nested use neither unpins nor fails
        with first._pin.pinned():
            assert first._pin.active
        assert first._pin.active
        # per thread: another thread is not pinned by this block
        seen = []
        worker = threading.Thread(target=lambda: seen.append(first._pin.active))
        worker.start()
        worker.join()
        assert seen == [False]
        # a copy sent to a worker process arrives unpinned
        copy = pickle.loads(pickle.dumps(first._pin))
        assert isinstance(copy, OneCore) and not copy.active
    assert not first._pin.active


def test_a_serial_run_releases_its_pin(iris):
    proto = Protocol("cv", folds=3, repeats=1, seed=2)
    work = plan([iris], [KNN], proto)
    one = Runner()
    result = one.run([iris], work, proto, ["accuracy"])
    assert len(result.scores) == 3 and not result.failures
    assert not one._pin.active
    # the module-level run is the same thing with a runner of its own
    assert _strip(experiment.run([iris], work, proto, ["accuracy"])) == _strip(result)


@pytest.mark.dask
def test_two_runners_hold_their_own_dask_clients(iris, monkeypatch):
    distributed = pytest.importorskip("distributed")
    proto = Protocol("cv", folds=3, repeats=2, seed=5)
    work = plan([iris], [KNN], proto)
    serial = Runner().run([iris], work, proto, ["accuracy"])
    with mock.patch.dict(os.environ), distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False,
            dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        first, second = Runner(scheduler=address), Runner(scheduler=address)
        one, two = first._dask_client(), second._dask_client()
        assert one is not two
        assert first._dask_client() is one  # kept from prestart to run
        first.close()
        assert one.status == "closed" and two.status == "running"
        assert first._client is None
        # a runner that could not connect does not stop another from connecting
        failing = Runner(scheduler=address)

        def refuse():
            raise OSError("refused for the test")

        monkeypatch.setattr(failing, "_dask_client", refuse)
        failing.prestart().join()
        assert failing._unreachable is not None and second._unreachable is None
        with pytest.raises(ProtocolError, match="refused for the test"):
            failing.run([iris], work, proto, ["accuracy"])
        remote = second.run([iris], work, proto, ["accuracy"])
        # run() closes the client it used
        assert two.status == "closed" and second._client is None
    assert _strip(remote) == _strip(serial)


# --------------------------------------------------------------------------- journal
def test_journal_round_trips_units(iris, tmp_path):
    proto = Protocol("cv", folds=3, repeats=1, seed=1)
    work = plan([iris], [KNN], proto)
    keys = [unit_key("iris", KNN, u) for u in work.units]
    assert keys[0] == ("iris", "knn", KNN.params_json, 1, 1)
    fingerprint = run_fingerprint([iris], work, proto, ["accuracy"])
    assert fingerprint == run_fingerprint([iris], work, proto, ["accuracy"])
    path = tmp_path / "j.jsonl"
    new = Journal(path, fingerprint, set(keys), ["accuracy"])
    assert new.done() == {}
    ok = {"scores": {"accuracy": 0.96}, "seconds": 0.25, "error": None}
    failed = {"scores": {}, "seconds": 0.5, "error": "knn failed on iris (repeat 1, fold 2): x",
              "bad_input": True}
    new.append(keys[0], ok)
    new.append(keys[1], failed)
    new.close()
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"ensemblekit_journal": 1, "run": fingerprint}
    assert len(lines) == 3
    again = Journal(path, fingerprint, set(keys), ["accuracy"])
    # what comes back is what a run needs: scores, seconds, error (not bad_input)
    assert again.done() == {keys[0]: ok,
                            keys[1]: {k: failed[k] for k in ("scores", "seconds", "error")}}
    again.append(keys[2], ok)
    again.close()
    # a killed run leaves its last line cut short: it is dropped, and the file cut back
    text = path.read_text()
    path.write_text(text[: len(text) - 20])
    cut = Journal(path, fingerprint, set(keys), ["accuracy"])
    cut.close()
    assert set(cut.done()) == {keys[0], keys[1]}
    assert path.read_text() == "".join(line + "\n" for line in lines)


def test_journal_refuses_another_comparison_and_foreign_units(iris, tmp_path):
    proto = Protocol("cv", folds=3, repeats=1, seed=1)
    work = plan([iris], [KNN], proto)
    keys = [unit_key("iris", KNN, u) for u in work.units]
    fingerprint = run_fingerprint([iris], work, proto, ["accuracy"])
    other_seed = Protocol("cv", folds=3, repeats=1, seed=2)
    other = run_fingerprint([iris], plan([iris], [KNN], other_seed), other_seed, ["accuracy"])
    assert other != fingerprint
    path = tmp_path / "j.jsonl"
    first = Journal(path, fingerprint, set(keys), ["accuracy"])
    first.append(keys[0], {"scores": {"accuracy": 0.9}, "seconds": 0.1, "error": None})
    first.close()
    with pytest.raises(ProtocolError, match="records a different comparison"):
        Journal(path, other, set(keys), ["accuracy"])
    with pytest.raises(ProtocolError, match="line 2: damaged journal record"):
        Journal(path, fingerprint, set(keys[1:]), ["accuracy"])
    with pytest.raises(ProtocolError, match="line 2: damaged journal record"):
        Journal(path, fingerprint, set(keys), ["accuracy", "kappa"])  # a score is missing


# --------------------------------------------------------------------------- analysis
def test_beats_on_hand_cases():
    assert beats(0.81, 0.80) and not beats(0.79, 0.80)
    assert not beats(0.80, 0.80)  # a tie is not a win
    # the same scores summed in another order differ in the last bit: still a tie
    ascending, descending = (0.1 + 0.2 + 0.3) / 3, (0.3 + 0.2 + 0.1) / 3
    assert ascending != descending
    assert not beats(ascending, descending) and not beats(descending, ascending)
    assert not beats(ascending, descending, greater_is_better=False)
    assert not beats(descending, ascending, greater_is_better=False)
    # the margin is relative to the baseline beyond 1: 1e-12 * 1e6 = 1e-6
    assert not beats(1e6 + 1e-7, 1e6) and beats(1e6 + 1e-5, 1e6)
    assert beats(0.8 + 3e-12, 0.8)  # below 1 the margin is 1e-12 absolute
    # losses: the lower mean wins
    assert beats(0.5, 0.6, greater_is_better=False)
    assert not beats(0.6, 0.5, greater_is_better=False)
    assert not beats(0.5, 0.5, greater_is_better=False)


def _grid_case():
    kmeans = Candidate("kmeans", {}, "kmeans")
    points = expand_grid("iekm", {"n_estimators": 10, "max_features": 0.5},
                         {"max_features": [0.1, 0.2, 0.3], "n_estimators": [10, 20]})
    means = {(0.1, 10): 0.55, (0.2, 10): 0.50, (0.3, 10): 0.45,
             (0.1, 20): 0.60, (0.2, 20): 0.52, (0.3, 20): 0.70}
    summary = {("d", "kmeans", "nmi"): (0.50, 0.0, 10)}
    for c in points:
        summary[("d", c.label, "nmi")] = (means[(c.grid["max_features"], c.grid["n_estimators"])],
                                          0.0, 10)
    failed = {("d", next(c.label for c in points if c.grid == {"max_features": 0.3,
                                                                "n_estimators": 20}))}
    return [kmeans, *points], summary, failed


def test_grid_summary_on_a_hand_made_grid():
    cands, summary, failed = _grid_case()
    (row,) = grid_summary(summary, cands, "kmeans", ["d"], "nmi", True, failed)
    # 5 points (one failed); 0.55, 0.60, 0.52 beat 0.50, the tie 0.50 does not
    assert row["dataset"] == "d" and row["algorithm"] == "iekm" and row["baseline"] == 0.50
    assert row["points"] == 5 and row["percent"] == pytest.approx(60.0)
    assert row["ranges"] == {"max_features": [0.1, 0.2], "n_estimators": [10, 20]}
    assert row["average"] == pytest.approx((0.55 + 0.60 + 0.52) / 3)
    assert row["best"] == 0.60 and row["best_point"] == {"max_features": 0.1, "n_estimators": 20}


def test_grid_summary_for_a_loss_and_a_missing_baseline():
    cands, summary, failed = _grid_case()
    # lower is better: only 0.45 beats 0.50 (the failed 0.70 is left out either way)
    (row,) = grid_summary(summary, cands, "kmeans", ["d"], "nmi", False, failed)
    assert row["points"] == 5 and row["percent"] == pytest.approx(20.0)
    assert row["ranges"] == {"max_features": [0.3, 0.3], "n_estimators": [10, 10]}
    assert row["average"] == row["best"] == 0.45
    # no winning point: no ranges, average or best
    flat = {k: ((0.5, 0.0, 10) if k[1] != "kmeans" else v) for k, v in summary.items()}
    (row,) = grid_summary(flat, cands, "kmeans", ["d"], "nmi", True, failed)
    assert row["percent"] == 0.0 and row["ranges"] is row["best"] is row["average"] is None
    # a data set whose baseline failed, or has no score, gives no row
    assert grid_summary(summary, cands, "kmeans", ["d"], "nmi", True, {("d", "kmeans")}) == []
    assert grid_summary(summary, cands, "kmeans", ["other"], "nmi") == []


def test_package_names_are_the_submodules_own():
    assert experiment.beats is beats and experiment.grid_summary is grid_summary
    assert experiment.Runner is Runner and experiment.plan is plan
    assert experiment.analyse is analysis.analyse and experiment.Score is runner.Score
