"""``compare --noise LEVEL`` (issue 34): which attributes, which values, which rows, groups."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ensemblekit import api, metrics
from ensemblekit.data import load_dataset
from ensemblekit.experiment.noise import add_noise, check_levels, noised_attributes, ranking
from ensemblekit.experiment.protocol import ProtocolError

from ektesting.support import run_cli

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


# ---------------------------------------------------------------- which attributes
def test_gain_ratio_ranks_by_hand_computed_values():
    y = np.array([0, 0, 1, 1])
    X = np.array([[0, 0, 0, 5.0],   # a: the class itself: gain 1 bit, split 1 bit -> 1
                  [0, 1, 1, 5.0],   # b: independent of the class -> 0
                  [1, 0, 2, 5.0],   # c: four values, gain 1 bit, split 2 bits -> 0.5
                  [1, 1, 3, 5.0]])  # d: numeric constant: no cut, no split -> 0
    nominal = np.array([True, True, True, False])
    assert ranking(X, nominal, y, 2) == pytest.approx([1.0, 0.0, 0.5, 0.0], abs=1e-15)
    # a numeric attribute is cut by MDL first: 1, 2 | 8, 9 separates the classes perfectly
    numeric = np.array([[1.0], [2.0], [8.0], [9.0]] * 3)
    assert ranking(numeric, np.array([False]), np.tile(y, 3), 2) == pytest.approx([1.0])


def test_variance_ranks_scaled_numeric_and_gini_nominal_attributes():
    X = np.array([[0.0, 0, 100.0], [1.0, 0, 100.0], [2.0, 1, 100.0], [3.0, 1, np.nan]])
    # 0, 1/3, 2/3, 1 -> variance 5/36; two values of half each -> 1 - 1/2; constant -> 0
    assert ranking(X, np.array([False, True, False])) == pytest.approx([5 / 36, 0.5, 0.0])


def test_the_most_significant_half_is_noised_ties_in_file_order():
    assert noised_attributes(np.array([0.1, 0.5, 0.5, 0.0, 0.2])).tolist() == [1, 2, 4]
    assert noised_attributes(np.array([0.3, 0.3, 0.3, 0.3])).tolist() == [0, 1]
    assert noised_attributes(np.array([0.0])).tolist() == [0]


# ---------------------------------------------------------------- which values
def test_noise_replaces_that_share_of_the_chosen_columns_from_their_training_values():
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.rand(40), rng.randint(0, 3, 40).astype(float), rng.rand(40),
                         rng.rand(40)])
    X[3, 0] = np.nan
    y = (X[:, 0] > 0.5).astype(np.int64)  # the class follows column 0, then column 2 is noise
    y[3] = 1
    nominal = np.array([False, True, False, False])
    before = X.copy()
    noisy = add_noise(X, 0.25, 7, nominal, y, 2)
    assert np.array_equal(X, before, equal_nan=True)  # the input is not changed
    chosen = noised_attributes(ranking(X, nominal, y, 2))
    assert 0 in chosen and len(chosen) == 2
    for j in range(4):
        changed = ~((noisy[:, j] == X[:, j]) | (np.isnan(X[:, j]) & np.isnan(noisy[:, j])))
        if j in chosen:
            assert 0 < changed.sum() <= 10  # round(0.25 * 40) cells drawn; a draw may repeat
            assert set(noisy[:, j][~np.isnan(noisy[:, j])]) <= set(X[:, j][~np.isnan(X[:, j])])
        else:
            assert not changed.any()
    assert np.array_equal(add_noise(X, 0.25, 7, nominal, y, 2), noisy, equal_nan=True)
    assert not np.array_equal(add_noise(X, 0.25, 8, nominal, y, 2), noisy, equal_nan=True)
    assert add_noise(X, 0.0, 7, nominal, y, 2) is X


@pytest.mark.parametrize("levels, message", [
    ([1.0], "at least 0 and below 1"), ([-0.1], "at least 0 and below 1"),
    ([float("nan")], "at least 0 and below 1"), ([0.2, 0.2], "given twice"),
])
def test_bad_levels_are_refused(levels, message):
    with pytest.raises(ProtocolError, match=message):
        check_levels(levels)


# ---------------------------------------------------------------- in a comparison
def _values(result) -> list[tuple]:
    return [(s.dataset, s.algorithm, s.repeat, s.fold, s.metric, s.value) for s in result.scores]


def test_each_level_is_a_column_group_and_level_zero_is_the_clean_run():
    iris = SAMPLE / "iris.arff"
    clean = api.compare(["c45", "knn"], iris, cv=3, repeats=1)
    noisy = api.compare(["c45", "knn"], iris, cv=3, repeats=1, noise=[0, 0.4])
    assert noisy.labels == ["c45@noise=0", "knn@noise=0", "c45@noise=0.4", "knn@noise=0.4"]
    assert noisy.to_dict()["protocol"]["noise"] == [0.0, 0.4]
    at_zero = [v for v in _values(noisy) if v[1].endswith("@noise=0")]
    assert [v[:1] + (v[1].split("@")[0],) + v[2:] for v in at_zero] == _values(clean)
    table = noisy.table("accuracy")["iris"]
    assert table["c45@noise=0.4"] < table["c45@noise=0"]  # 40 % noise costs accuracy
    params = {s.algorithm: json.loads(s.params) for s in noisy.scores}
    assert params["c45@noise=0.4"]["noise"] == 0.4 and "noise" not in params["c45@noise=0"]


def test_the_test_folds_stay_clean(monkeypatch):
    ds = load_dataset(SAMPLE / "iris.arff")
    seen = []
    original = metrics.model_predictions

    def spy(model, X, **kwargs):
        seen.append(np.array(X))
        return original(model, X, **kwargs)

    monkeypatch.setattr(metrics, "model_predictions", spy)
    result = api.compare(["c45"], {"iris": ds}, cv=3, repeats=1, noise=[0.6])
    from ensemblekit.experiment.folds import stratified_test_folds

    tests = stratified_test_folds(np.asarray(ds.y, dtype=np.int64), 3, 1, 1)
    assert len(seen) == 3 and result.units == 3
    for X, test in zip(seen, tests):
        assert np.array_equal(X, ds.X[np.sort(test)])


def test_noise_with_a_grid_is_refused_in_one_line():
    with pytest.raises(Exception, match="--noise and --grid cannot be combined"):
        api.compare(["c45", "knn"], SAMPLE / "iris.arff", cv=2, repeats=1, noise=[0.2],
                    baseline="c45", grid=["n_neighbors=1,3"])
    shown = run_cli("compare", "c45", "-d", SAMPLE / "iris.arff", "--noise", "1.5")
    assert shown.exit_code == 2 and "at least 0 and below 1" in shown.output


def test_clusterers_are_noised_by_variance_and_resume_and_analyse_agree(tmp_path):
    path = tmp_path / "run.jsonl"
    args = dict(runs=2, noise=[0.2], metrics=["nmi"])
    plain = api.compare(["kmeans"], SAMPLE / "iris.arff", **args)
    first = api.compare(["kmeans"], SAMPLE / "iris.arff", resume=path, **args)
    head = json.loads(path.read_text().splitlines()[0])
    assert [c["noise"] for c in head["comparison"]["candidates"]] == [0.2]
    assert _values(first) == _values(plain) == _values(api.analyse(path))
    clean = api.compare(["kmeans"], SAMPLE / "iris.arff", runs=2, metrics=["nmi"])
    assert [v[-1] for v in _values(clean)] != [v[-1] for v in _values(plain)]


def _ek() -> list[str]:
    return [sys.executable, "-c", "from ensemblekit.cli import main; main()"]


@pytest.mark.slow  # compare processes: serial, two workers, killed and resumed
def test_noise_levels_are_identical_serial_parallel_and_resumed(tmp_path):
    args = _ek() + ["compare", "c45", "knn", "--noise", "0.2", "--noise", "0.4", "--data",
                    str(SAMPLE / "iris.arff"), "--data", str(SAMPLE / "wine.arff"), "--cv", "5",
                    "--repeats", "2"]
    serial = subprocess.run(args, capture_output=True, text=True)
    assert serial.returncode == 0, serial.stderr
    assert serial.stdout.count("noise 0.2") == 2 and serial.stdout.count("noise 0.4") == 2
    parallel = subprocess.run(args + ["-j", "2"], capture_output=True, text=True)
    path = tmp_path / "run.jsonl"
    first = subprocess.Popen(args + ["--resume", str(path)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        while not (path.exists() and len(path.read_bytes().splitlines()) > 10):
            assert first.poll() is None
            time.sleep(0.02)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    resumed = subprocess.run(args + ["--resume", str(path)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "computed now" in resumed.stderr and "of 80 units computed now" in resumed.stderr
    assert "80 of 80 units computed now" not in resumed.stderr  # the killed run left some
    assert parallel.stdout == serial.stdout == resumed.stdout
    analysed = subprocess.run(_ek() + ["analyse", str(path)], capture_output=True, text=True)
    assert analysed.stdout == serial.stdout
