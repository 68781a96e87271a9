"""``knn`` (IBk) predicted in parts: the ranges its test rows widen carry across chunks.

With ``range_update="cumulative"`` (Weka's rule) each test row widens the numeric ranges
for itself and every row after it, so a file predicted in chunks (``ensemblekit predict``
reads ``CHUNK_ROWS`` at a time and gives the model ``PREDICT_CHUNK`` rows at a time; the
Dask path sends each ``PREDICT_CHUNK`` rows to a worker) must hand each part the ranges the
rows before it left. The data: segment (19 numeric attributes), its first 600 rows to
train and the other 1710 to test; test values fall outside the training ranges, and
predicting the test rows in separate 500-row calls changes two predictions.
"""

from __future__ import annotations

import os
from unittest import mock

import numpy as np
import pytest

from ensemblekit import api, streaming
from ensemblekit.app import predicting
from ensemblekit.classifiers.ibk import IBk
from ensemblekit.data import load_dataset
from ensemblekit.writers import format_prediction_stream

from ektesting.support import data_path, run_cli
from ektesting.weka_tools import needs_weka, run_weka

N_TRAIN = 600


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """segment cut in file order: (train.arff, test.arff) under the file's own header."""
    folder = tmp_path_factory.mktemp("segment")
    lines = data_path("segment.arff").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("@data"))
    rows = [line for line in lines[at + 1:] if line.strip() and not line.lstrip().startswith("%")]
    train, test = folder / "train.arff", folder / "test.arff"
    train.write_text("\n".join(lines[:at + 1] + rows[:N_TRAIN]) + "\n", encoding="utf-8")
    test.write_text("\n".join(lines[:at + 1] + rows[N_TRAIN:]) + "\n", encoding="utf-8")
    return train, test


@pytest.fixture(scope="module")
def model(split):
    return api.fit("knn", split[0])


@pytest.fixture(scope="module")
def whole(model, split):
    """One predict_proba call on every test row, in file order."""
    return model.pipeline.predict_proba(load_dataset(split[1]).X)


# --------------------------------------------------------------------------- IBk.widened
def _three_rows():
    # ranges [0, 10] on both columns; (3, 0) is nearest to (4, 1) (class 1): squared
    # distance 0.1^2 + 0.1^2 = 0.02 against 0.3^2 = 0.09 to (0, 0). Once a row (100, 5)
    # has widened column 0 to [0, 100]: 0.01^2 + 0.1^2 = 0.0101 against 0.03^2 = 0.0009,
    # so (0, 0) (class 0) is nearest.
    return IBk().fit([[0.0, 0.0], [4.0, 1.0], [10.0, 10.0]], [0, 1, 2])


def test_widened_carries_the_ranges_of_earlier_rows():
    clf = _three_rows()
    assert clf.predict([[3.0, 0.0]]).tolist() == [1]
    assert clf.predict([[100.0, 5.0], [3.0, 0.0]]).tolist()[1] == 0
    wide = clf.widened([[100.0, 5.0]])
    assert wide.predict([[3.0, 0.0]]).tolist() == [0]
    assert wide.feature_min_.tolist() == [0.0, 0.0] and wide.feature_max_.tolist() == [100.0, 10.0]


def test_widened_leaves_the_classifier_alone_and_shares_its_training_rows():
    clf = _three_rows()
    wide = clf.widened([[-5.0, np.nan], [2.0, 30.0]])
    assert clf.feature_min_.tolist() == [0.0, 0.0] and clf.feature_max_.tolist() == [10.0, 10.0]
    assert wide.feature_min_.tolist() == [-5.0, 0.0] and wide.feature_max_.tolist() == [10.0, 30.0]
    assert wide is not clf and wide.X_train_ is clf.X_train_ and wide.y_train_ is clf.y_train_
    assert wide.get_params() == clf.get_params()


def test_widened_with_fixed_ranges_or_no_rows_is_the_classifier_itself():
    fixed = IBk(range_update="none").fit([[0.0], [1.0]], [0, 1])
    assert fixed.widened([[7.0]]) is fixed
    clf = _three_rows()
    assert clf.widened(np.empty((0, 2))) is clf


def test_rows_in_parts_equal_one_call():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    X[:, 3] = rng.integers(0, 3, 40)
    clf = IBk(n_neighbors=3, nominal_features=[3]).fit(X, rng.integers(0, 3, 40))
    T = rng.normal(scale=3.0, size=(200, 4))  # many rows out of the training ranges
    T[:, 3] = rng.integers(0, 3, 200)
    T[rng.random(T.shape) < 0.1] = np.nan
    one = clf.predict_proba(T)
    step, parts = clf, []
    for s in range(0, 200, 7):
        parts.append(step.predict_proba(T[s:s + 7]))
        step = step.widened(T[s:s + 7])
    np.testing.assert_array_equal(np.vstack(parts), one)
    # only each column's extremes count: two summary rows widen as all the rows do
    extremes = np.vstack([np.fmin.reduce(T[:100], axis=0), np.fmax.reduce(T[:100], axis=0)])
    np.testing.assert_array_equal(clf.widened(extremes).predict_proba(T[100:]),
                                  clf.widened(T[:100]).predict_proba(T[100:]))
    assert not np.array_equal(clf.predict_proba(T[100:]), one[100:])  # the widening matters


# --------------------------------------------------------------------------- api.predict
def test_the_file_is_one_that_separate_calls_get_wrong(model, split, whole):
    X = load_dataset(split[1]).X
    assert X.shape[0] > 3 * predicting.PREDICT_CHUNK
    apart = np.vstack([model.pipeline.predict_proba(X[s:s + predicting.PREDICT_CHUNK])
                       for s in range(0, X.shape[0], predicting.PREDICT_CHUNK)])
    assert (apart.argmax(axis=1) != whole.argmax(axis=1)).any()


# one row per chunk reads and predicts 1,710 chunks: slow
@pytest.mark.parametrize("chunk_rows", [pytest.param(1, marks=pytest.mark.slow), 7, 500, None])
def test_predict_is_the_same_for_any_chunk_size(model, split, whole, chunk_rows):
    got = api.predict(model, split[1], proba=True, chunk_rows=chunk_rows)
    np.testing.assert_array_equal(got.probabilities, whole)
    classes = model.pipeline.classes_
    names = list(load_dataset(split[0]).schema.class_attribute.values)
    assert [names.index(v) for v in got.predictions] == classes[whole.argmax(axis=1)].tolist()


@pytest.mark.slow  # 1,710 rows, three at a time
def test_small_model_calls_inside_chunks(model, split, whole, monkeypatch):
    monkeypatch.setattr(predicting, "PREDICT_CHUNK", 3)
    got = api.predict(model, split[1], proba=True, chunk_rows=50)
    np.testing.assert_array_equal(got.probabilities, whole)


@pytest.mark.slow  # 1,710 rows predicted twice, the second time in 245 chunks
def test_cli_output_does_not_depend_on_the_chunk_size(split, tmp_path, monkeypatch):
    path = tmp_path / "knn.ekm"
    assert run_cli("fit", "knn", split[0], "-o", path).exit_code == 0
    default = run_cli("predict", path, split[1], "--proba")
    assert default.exit_code == 0, default.output
    monkeypatch.setattr(streaming, "CHUNK_ROWS", 7)
    monkeypatch.setattr(streaming, "FIRST_CHUNK_ROWS", 7)
    monkeypatch.setattr(predicting, "PREDICT_CHUNK", 3)
    small = run_cli("predict", path, split[1], "--proba")
    assert small.exit_code == 0, small.output
    assert small.stdout == default.stdout
    assert small.stdout.count("\n") == 1 + 2310 - N_TRAIN


# --------------------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of two one-thread worker processes, as tests/app/test_predict_dask.py starts."""
    distributed = pytest.importorskip("distributed")
    with mock.patch.dict(os.environ), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None) as local:
        yield local


@pytest.mark.slow  # starts a LocalCluster of two worker processes
@pytest.mark.dask
def test_a_cluster_gives_the_serial_bytes(cluster, model, split, whole, monkeypatch):
    serial = list(api.predict_chunks(model, split[1], proba=True))
    # many small tasks of many chunks, several under way at a time on both workers
    monkeypatch.setattr(predicting, "PREDICT_CHUNK", 40)
    remote = list(api.predict_chunks(model, split[1], proba=True, chunk_rows=300,
                                     scheduler=cluster.scheduler_address))
    assert len(remote) == 6
    for fmt in ("csv", "json"):
        assert "".join(format_prediction_stream(remote, fmt)) == \
            "".join(format_prediction_stream(serial, fmt))
    np.testing.assert_array_equal(np.vstack([p.probabilities for p in remote]), whole)


# --------------------------------------------------------------------------- Weka
@needs_weka
def test_predict_of_a_large_file_equals_weka_ibk(model, split):
    train, test = split
    out = run_weka("weka.classifiers.lazy.IBk", "-t", str(train), "-T", str(test),
                   "-classifications",
                   "weka.classifiers.evaluation.output.prediction.CSV -distribution -decimals 12")
    want, want_dist = [], []
    for line in out.splitlines():
        parts = line.split(",")
        if len(parts) > 4 and parts[0].isdigit():
            want.append(int(parts[2].split(":")[0]) - 1)
            want_dist.append([float(p.lstrip("*")) for p in parts[4:]])
    assert len(want) == 2310 - N_TRAIN
    names = list(load_dataset(train).schema.class_attribute.values)
    for chunk_rows in (None, 7):
        got = api.predict(model, test, proba=True, chunk_rows=chunk_rows)
        assert [names.index(v) for v in got.predictions] == want
        np.testing.assert_allclose(got.probabilities, np.array(want_dist), rtol=0, atol=1e-9)


# --------------------------------------------------------------------------- evaluate
@pytest.fixture(scope="module")
def unlabelled_first(split, tmp_path_factory):
    """The test file with its first row far out of the training ranges and its class missing."""
    lines = split[1].read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("@data"))
    cells = lines[at + 1].split(",")
    lines[at + 1] = ",".join([repr(float(c) * 50) for c in cells[:-1]] + ["?"])
    path = tmp_path_factory.mktemp("unlabelled") / "test.arff"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_evaluate_predicts_the_unlabelled_rows_too(model, unlabelled_first):
    # as Weka's evaluation: every test row is predicted in file order (the unlabelled one
    # widens the ranges for the rest), and the labelled rows are scored
    ds = load_dataset(unlabelled_first)
    proba = model.pipeline.predict_proba(ds.X)
    want = float(np.mean(proba[1:].argmax(axis=1) == ds.y[1:]))
    assert want != float(np.mean(model.pipeline.predict(ds.X[1:]) == ds.y[1:]))  # it matters
    got = api.evaluate_model(model, unlabelled_first, metrics=["accuracy"])
    assert got.instances == ds.n_instances - 1
    assert got.scores["accuracy"] == want


@needs_weka
def test_evaluate_split_equals_weka_with_an_unlabelled_test_row(split, unlabelled_first):
    out = run_weka("weka.classifiers.lazy.IBk", "-t", str(split[0]), "-T", str(unlabelled_first))
    test_block = out[out.index("=== Error on test data ==="):]
    correct = int(next(line for line in test_block.splitlines()
                       if line.startswith("Correctly Classified Instances")).split()[3])
    got = api.evaluate_split("knn", split[0], test=unlabelled_first, metrics=["accuracy"])
    assert round(got.scores["accuracy"] * got.instances) == correct
