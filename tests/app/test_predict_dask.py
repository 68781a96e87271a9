"""``predict --scheduler``: rows predicted on a Dask cluster, output identical to a serial run."""

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from ensemblekit import api
from ensemblekit.app import models, predicting
from ensemblekit.writers import OUTPUT_FORMATS, format_prediction_stream

from ektesting import support

LETTER = support.data_path("letter-300.arff")
#: The task prefix of predict on a cluster (its function's name, without the leading "_").
TASK = "predict_rows_on_one_core"


def _ek() -> str:
    return str(Path(sys.executable).with_name("ensemblekit"))


def _text(chunks, fmt: str) -> str:
    """What ``predict --format fmt`` writes for these chunks."""
    return "".join(format_prediction_stream(chunks, fmt))


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of two one-thread worker processes, as test_experiment's Dask test starts."""
    distributed = pytest.importorskip("distributed")
    # the nanny writes its workers' variables (OMP_NUM_THREADS=1, ...) into this process's
    # environment; patch.dict puts it back, so later tests do not inherit them
    with mock.patch.dict(os.environ), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None) as local:
        yield local


@pytest.fixture(scope="module")
def lazy_model(tmp_path_factory):
    """lazy-bagging (soft voting: probabilities with many digits) fitted on letter-300.

    Three members, not ten: every test row still builds its own bags and trees, which is what
    a cluster must give back in order; ten only made each row take longer.
    """
    path = tmp_path_factory.mktemp("models") / "lazy.ekm"
    api.save_model(api.fit("lazy-bagging", str(LETTER), params={"voting": "soft", "n_estimators": "3"},
                           seed=3), path)
    return path


def _computed(cluster) -> float:
    prefix = cluster.scheduler.task_prefixes.get(TASK)
    return 0.0 if prefix is None else prefix.all_durations.get("compute", 0.0)


@pytest.mark.slow  # two subprocesses predict 300 rows with a lazy learner
@pytest.mark.dask
def test_cli_predict_on_a_cluster_is_byte_identical_to_a_serial_run(cluster, lazy_model):
    args = [_ek(), "predict", str(lazy_model), str(LETTER), "--proba"]
    serial = subprocess.run(args, capture_output=True, check=True).stdout
    before = _computed(cluster)
    remote = subprocess.run([*args, "--scheduler", cluster.scheduler_address], capture_output=True)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == serial
    assert serial.count(b"\n") == 301  # header and one row per instance
    assert _computed(cluster) > before  # the rows were predicted on the workers


@pytest.mark.slow  # predicts 300 rows with a lazy learner, serially and on the cluster
@pytest.mark.dask
def test_many_tasks_come_back_in_order_for_every_format(cluster, lazy_model, monkeypatch):
    serial = list(api.predict_chunks(lazy_model, str(LETTER), proba=True))
    # small chunks of small tasks: 5 chunks (70, 70, 70, 70, 20 rows) of up to 5 tasks each,
    # several chunks under way at a time on both workers
    monkeypatch.setattr(predicting, "PREDICT_CHUNK", 16)
    before = _computed(cluster)
    remote = list(api.predict_chunks(lazy_model, str(LETTER), proba=True, chunk_rows=70,
                                     scheduler=cluster.scheduler_address))
    assert [len(p.predictions) for p in remote] == [70, 70, 70, 70, 20]  # yielded as read
    assert _computed(cluster) > before
    for fmt in OUTPUT_FORMATS:
        assert _text(remote, fmt) == _text(serial, fmt), fmt


@pytest.mark.slow  # the module's LocalCluster starts two worker processes
@pytest.mark.dask
def test_labels_alone_on_a_cluster(cluster, tmp_path, monkeypatch):
    model = _c45(tmp_path)
    serial = api.predict(model, str(LETTER))
    monkeypatch.setattr(predicting, "PREDICT_CHUNK", 16)
    remote = api.predict(model, str(LETTER), chunk_rows=70, scheduler=cluster.scheduler_address)
    assert remote.predictions == serial.predictions and remote.probabilities is None


@pytest.mark.slow  # the module's LocalCluster starts two worker processes
@pytest.mark.dask
def test_a_bad_row_is_reported_after_the_rows_before_it(cluster, tmp_path):
    model = _c45(tmp_path)
    lines = LETTER.read_text().splitlines(keepends=True)
    first = next(i for i, t in enumerate(lines) if t.lower().startswith("@data")) + 1
    bad_line = first + 250  # the 251st data row, in the chunk of rows 241-280
    lines[bad_line - 1] = "x," + lines[bad_line - 1].split(",", 1)[1]  # a non-number in x-box
    bad = tmp_path / "bad.arff"
    bad.write_text("".join(lines))

    def rows_then_error(**options):
        rows = []
        with pytest.raises(Exception) as caught:
            for p in api.predict_chunks(model, str(bad), chunk_rows=40, **options):
                rows.extend(p.predictions)
        return rows, caught.value

    serial_rows, serial_error = rows_then_error()
    remote_rows, remote_error = rows_then_error(scheduler=cluster.scheduler_address)
    assert len(serial_rows) == 240
    assert remote_rows == serial_rows
    assert type(remote_error) is type(serial_error)
    assert str(remote_error) == str(serial_error)
    assert f"line {bad_line}" in str(remote_error)


@pytest.mark.slow  # the module's LocalCluster starts two worker processes
@pytest.mark.dask
def test_chunks_are_read_only_a_few_ahead(cluster, tmp_path):
    from ensemblekit.experiment.scheduler import connect
    from ensemblekit.streaming import iter_chunks

    model = api.load_model(_c45(tmp_path))
    read = []

    def chunks():
        for ds in iter_chunks(str(LETTER), models._schema_of(model), read_class=False, chunk_rows=10):
            read.append(ds.X.shape[0])
            yield ds

    outputs = predicting._predict_on_cluster(connect(cluster.scheduler_address), model.pipeline,
                                             chunks(), False, None, "c45.ekm", widens=False)
    next(outputs)
    assert 2 <= len(read) <= predicting._CHUNKS_IN_FLIGHT + 1  # of 30 chunks
    assert sum(len(parts) for _, parts in outputs) == 29  # the rest, one task each
    assert len(read) == 30


def _c45(tmp_path):
    path = tmp_path / "c45.ekm"
    api.save_model(api.fit("c45", str(LETTER)), path)
    return path


def test_n_jobs_and_scheduler_together_are_refused(tmp_path, cli):
    done = cli("predict", _c45(tmp_path), LETTER, "--n-jobs", "2", "--scheduler", "tcp://192.0.2.1:8786")
    assert done.exit_code == 2
    assert "--n-jobs and --scheduler: give one of them" in done.output


@pytest.mark.slow  # waits out Dask's 10 s connection timeout
def test_unreachable_scheduler_is_bad_input(tmp_path):
    pytest.importorskip("distributed")
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    out = tmp_path / "predictions.csv"
    done = subprocess.run([_ek(), "predict", str(_c45(tmp_path)), str(LETTER), "--scheduler", address,
                           "-o", str(out)], capture_output=True, text=True,
                          env={**os.environ, "ENSEMBLEKIT_DASK_TIMEOUT": "1s"})
    assert done.returncode == 2
    assert f"error: cannot reach the Dask scheduler at {address}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == "" and not out.exists()
