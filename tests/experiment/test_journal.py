"""The resume journal kept as a small database: one writer at a time, records checked when
read back, only a regular file, and a full disk that loses nothing saved (issue 29)."""

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from ensemblekit import experiment
from ensemblekit.data import load_dataset
from ensemblekit.experiment import journal as journal_module
from ensemblekit.experiment.journal import JournalLock
from ensemblekit.experiment.protocol import Candidate, Protocol, ProtocolError

from ektesting.support import run_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
IRIS = SAMPLE / "iris.arff"

CANDIDATES = [Candidate("knn", {"n_neighbors": 3, "weights": "uniform"}, "knn"),
              Candidate("cart-entropy", {"min_samples_leaf": 2, "max_depth": None}, "cart-entropy")]
PROTOCOL = Protocol("cv", folds=3, repeats=1, seed=5)
SUFFIX = "; use a new --resume file or delete this one"


@pytest.fixture(scope="module")
def iris():
    return load_dataset(IRIS)


def _run(iris, journal, metrics=("accuracy",), **kwargs):
    work = experiment.plan([iris], CANDIDATES, PROTOCOL)
    return experiment.run([iris], work, PROTOCOL, list(metrics), resume=journal, **kwargs)


def _strip(result):
    return [(s.algorithm, s.repeat, s.fold, s.metric, s.value) for s in result.scores]


@pytest.fixture(scope="module")
def uninterrupted(iris):
    """The scores of the comparison run without a journal."""
    work = experiment.plan([iris], CANDIDATES, PROTOCOL)
    return _strip(experiment.run([iris], work, PROTOCOL, ["accuracy"]))


@pytest.fixture
def written(iris, tmp_path):
    """A complete journal of 6 units: (path, its lines)."""
    path = tmp_path / "j.jsonl"
    assert _run(iris, path).computed == 6
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 7
    return path, lines


_main = run_main  # the console entry point in this process: (exit code, stdout, stderr)


def _compare_args(path):
    return ["compare", "knn", "cart-entropy", "--data", IRIS, "--cv", "3", "--repeats", "1",
            "--seed", "5", "--set", "n_neighbors=3", "--resume", path]


def _in_use(path) -> str:
    return (f"--resume {path} is in use by another ensemblekit compare (one writer at a time); "
            "wait for it to end, or give another file")


# --------------------------------------------------------------------------- one writer
def test_a_second_lock_on_the_journal_is_refused_even_within_one_process(tmp_path):
    # flock belongs to the open file description: a second open and lock conflicts
    path = tmp_path / "new.jsonl"
    first = JournalLock(path)
    try:
        for again in (path, str(path)):
            with pytest.raises(ProtocolError) as refused:
                JournalLock(again)
            assert str(refused.value) == _in_use(again)
    finally:
        first.close()
    assert not path.exists()  # created by the lock and never written: removed again
    with JournalLock(path) as lock:  # free again
        assert os.fspath(lock) == str(path) and lock.fd >= 0
    assert lock.fd == -1


def test_a_lock_on_a_file_that_was_there_leaves_it(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.touch()
    JournalLock(path).close()
    assert path.exists() and path.read_bytes() == b""


def test_a_run_on_a_journal_in_use_is_refused_and_leaves_it_as_it_was(iris, written, uninterrupted):
    path, lines = written
    with JournalLock(path):
        with pytest.raises(ProtocolError) as refused:
            _run(iris, path)
        assert str(refused.value) == _in_use(path)
        assert path.read_text() == "".join(lines)
    resumed = _run(iris, path)  # released: the next run reads it
    assert resumed.computed == 0 and _strip(resumed) == uninterrupted


def test_a_run_given_a_held_lock_writes_through_it_and_leaves_it_held(iris, tmp_path, uninterrupted):
    path = tmp_path / "j.jsonl"
    with JournalLock(path) as lock:
        result = _run(iris, lock)
        assert result.computed == 6 and _strip(result) == uninterrupted
        assert lock.fd >= 0
        with pytest.raises(ProtocolError, match="in use by another ensemblekit compare"):
            JournalLock(path)
    assert len(path.read_text().splitlines()) == 7
    assert _run(iris, path).computed == 0


def test_compare_on_a_journal_in_use_exits_2_at_once_with_one_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "j.jsonl"
    with JournalLock(path):
        code, out, err = _main(_compare_args(path), monkeypatch, capsys)
    assert (code, out, err) == (2, "", f"ensemblekit: error: {_in_use(path)}\n")
    assert not path.exists()  # the holder created it and wrote nothing


@pytest.mark.slow  # starts a process
def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    path = tmp_path / "j.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from ensemblekit.experiment.journal import JournalLock\n"
         "lock = JournalLock(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(600)\n",
         str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(ProtocolError, match="in use by another ensemblekit compare"):
            JournalLock(path)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with JournalLock(path):  # the kernel released the lock with the process
        pass


def _ek() -> str:
    exe = Path(sys.executable).parent / "ensemblekit"
    if not exe.exists():
        pytest.skip("console script not installed")
    return str(exe)


@pytest.mark.slow  # three compare processes
def test_two_compare_runs_on_one_new_journal_one_runs_the_other_is_refused(tmp_path):
    args = [_ek(), "compare", "c45", "knn", "--data", str(SAMPLE / "iris.arff"), "--data",
            str(SAMPLE / "vote.arff"), "--cv", "5", "--repeats", "5"]
    path = tmp_path / "j.jsonl"
    first = subprocess.Popen(args + ["--resume", str(path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        while not (path.exists() and path.read_bytes().endswith(b"\n")):  # it holds the journal
            assert first.poll() is None, first.communicate()
            time.sleep(0.05)
        second = subprocess.run(args + ["--resume", str(path)], capture_output=True, text=True)
        out, err = first.communicate(timeout=300)
    finally:
        first.kill()
    assert (second.returncode, second.stdout) == (2, "")
    assert second.stderr == f"ensemblekit: error: {_in_use(path)}\n"
    assert first.returncode == 0, err
    plain = subprocess.run(args, capture_output=True, text=True)
    resumed = subprocess.run(args + ["--resume", str(path)], capture_output=True, text=True)
    assert resumed.returncode == 0 and "0 of 100 units computed now" in resumed.stderr
    assert resumed.stdout == plain.stdout == out
    keys = [tuple(json.loads(line)[k] for k in ("dataset", "algorithm", "repeat", "fold"))
            for line in path.read_text().splitlines()[1:]]
    assert len(keys) == len(set(keys)) == 100


# --------------------------------------------------------------------------- records checked
def _first_unit(lines, change) -> str:
    """The journal's text with its first unit record changed by ``change(record)``."""
    record = json.loads(lines[1])
    changed = change(record)
    text = changed if isinstance(changed, str) else json.dumps(record)
    return "".join([lines[0], text + "\n", *lines[2:]])


def _set(field, value):
    def change(record):
        record[field] = value
    return change


def _score(value):
    def change(record):
        record["scores"]["accuracy"] = value
    return change


def _drop(field):
    def change(record):
        del record[field]
    return change


def _raw_score(text):
    """Replace the accuracy's JSON text as written (for values json.dumps would not write)."""
    def change(record):
        record["scores"]["accuracy"] = 0.5
        return json.dumps(record).replace('"accuracy": 0.5', f'"accuracy": {text}')
    return change


@pytest.mark.parametrize("change, why", [
    (_score(7.5), "accuracy is 7.5, outside its range [0, 1]"),
    (_score(-0.25), "accuracy is -0.25, outside its range [0, 1]"),
    (_score(True), "accuracy is true, not a number"),
    (_score(None), "accuracy is null, not a number"),
    (_score("0.9"), 'accuracy is "0.9", not a number'),
    (_score([0.9]), "accuracy is [0.9], not a number"),
    (_score("nan"), "accuracy is nan, but it is always a finite number"),
    (_score("-inf"), "accuracy is -inf, but it is always a finite number"),
    (_raw_score("NaN"), "accuracy is nan, but it is always a finite number"),
    (_raw_score("1e999"), "accuracy is inf, but it is always a finite number"),
    (_raw_score("1" + "0" * 400), f"accuracy is {'1' + '0' * 39}..., beyond any float"),
    (_set("repeat", "1"), 'repeat is "1", not an integer'),
    (_set("repeat", True), "repeat is true, not an integer"),
    (_set("fold", 1.0), "fold is 1.0, not an integer"),
    (_set("fold", 99), "a unit that is not part of this comparison"),
    (_set("dataset", 5), "dataset is 5, not a string"),
    (_set("seconds", -1), "seconds is -1, not a finite number >= 0"),
    (_set("seconds", False), "seconds is false, not a number"),
    (_set("error", 5), "error is 5, not a string or null"),
    (_set("scores", [0.9]), "scores is [0.9], not an object"),
    (_set("scores", {}), "no score of accuracy"),
    (_set("scores", {"accuracy": 0.9, "kappa": 0.5}),
     'a score of "kappa", which this comparison does not measure'),
    (_drop("seconds"), "the field 'seconds' is missing"),
    (_drop("scores"), "the field 'scores' is missing"),
    (_drop("error"), "the field 'error' is missing"),
    (lambda record: "[1, 2]", "[1, 2] is not a record (a JSON object)"),
])
def test_a_bad_record_is_refused_naming_its_line(iris, written, change, why):
    path, lines = written
    path.write_text(_first_unit(lines, change))
    before = path.read_bytes()
    with pytest.raises(ProtocolError) as refused:
        _run(iris, path)
    assert str(refused.value) == f"{path}, line 2: damaged journal record ({why}){SUFFIX}"
    assert path.read_bytes() == before  # a refused journal is left as it was


def test_compare_refuses_the_journal_holding_accuracy_7_5(tmp_path, monkeypatch, capsys):
    path = tmp_path / "j.jsonl"
    code, first, err = _main(_compare_args(path), monkeypatch, capsys)
    assert code == 0, err
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[3])
    record["scores"]["accuracy"] = 7.5
    lines[3] = json.dumps(record) + "\n"
    path.write_text("".join(lines))
    code, out, err = _main(_compare_args(path), monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == (f"ensemblekit: error: {path}, line 4: damaged journal record (accuracy is 7.5, "
                   f"outside its range [0, 1]){SUFFIX}\n")


def test_scores_a_metric_may_leave_undefined_are_read_back(iris, tmp_path):
    # a ROC area is undefined in a fold of one class and a relative error can be infinite;
    # an accuracy an ulp past 1 is rounding
    path = tmp_path / "j.jsonl"
    metrics = ("accuracy", "auc", "rrse")
    _run(iris, path, metrics)
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["scores"].update(accuracy=1 + 1e-12, auc="nan", rrse="inf")
    lines[1] = json.dumps(record) + "\n"
    path.write_text("".join(lines))
    resumed = _run(iris, path, metrics)
    assert resumed.computed == 0
    first = {s.metric: s.value for s in resumed.scores
             if (s.algorithm, s.repeat, s.fold) == (record["algorithm"], 1, record["fold"])}
    assert first["accuracy"] == 1 + 1e-12 and first["rrse"] == float("inf")
    assert first["auc"] != first["auc"]  # NaN


def test_a_failed_unit_is_read_back_and_tried_again(iris, written, uninterrupted):
    path, lines = written
    record = json.loads(lines[1])
    record.update(scores={}, error="knn failed on iris (repeat 1, fold 1): boom")
    path.write_text("".join([lines[0], json.dumps(record) + "\n", *lines[2:]]))
    resumed = _run(iris, path)
    assert resumed.computed == 1 and _strip(resumed) == uninterrupted


# --------------------------------------------------------------------------- torn last line
def test_a_record_cut_short_by_a_kill_is_dropped_with_a_note(iris, written, uninterrupted):
    path, lines = written
    path.write_text("".join(lines[:4]) + lines[4][: len(lines[4]) // 2])
    resumed = _run(iris, path)
    assert resumed.notes == [f"{path}, line 5: a record cut short (by a killed run) was dropped; "
                             "its unit is computed again"]
    assert resumed.computed == 3 and _strip(resumed) == uninterrupted
    kept = path.read_text().splitlines(keepends=True)
    assert kept[:4] == lines[:4] and len(kept) == 7  # nothing else was lost
    assert _run(iris, path).notes == []


def test_compare_notes_the_dropped_record(tmp_path, monkeypatch, capsys):
    path = tmp_path / "j.jsonl"
    code, first, _ = _main(_compare_args(path), monkeypatch, capsys)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + lines[3][:40])
    code, out, err = _main(_compare_args(path), monkeypatch, capsys)
    assert code == 0 and out == first
    assert err.splitlines() == [
        f"note: {path}, line 4: a record cut short (by a killed run) was dropped; its unit is "
        "computed again",
        f"note: 4 of 6 units computed now, the rest read from {path}"]


def test_a_record_cut_short_before_the_end_is_refused(iris, written):
    path, lines = written
    path.write_text("".join(lines[:2]) + lines[2][:30] + "\n" + "".join(lines[3:]))
    with pytest.raises(ProtocolError, match=r"line 3: damaged journal record \("):
        _run(iris, path)


# --------------------------------------------------------------------------- not a regular file
def _refused_at_once(path) -> str:
    """The refusal of JournalLock(path); the call runs in a thread so that a lock that
    blocked on a FIFO would fail this test instead of hanging the suite."""
    outcome = []

    def attempt():
        try:
            JournalLock(path).close()
            outcome.append(None)
        except ProtocolError as exc:
            outcome.append(str(exc))

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, f"JournalLock({path}) blocked"
    return outcome[0]


def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "j.fifo"
    os.mkfifo(fifo)
    assert _refused_at_once(fifo) == (f"--resume {fifo} is a named pipe (FIFO), not a regular "
                                      "file; a journal must be a regular file")


def test_a_fifo_put_in_place_after_the_check_is_refused_on_the_open_descriptor(tmp_path,
                                                                            monkeypatch):
    fifo = tmp_path / "j.fifo"
    os.mkfifo(fifo)
    real_stat = os.stat

    def stat_before_the_swap(path, *args, **kwargs):  # the check sees no file yet
        if Path(path) == fifo:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(journal_module.os, "stat", stat_before_the_swap)
    assert _refused_at_once(fifo).startswith(f"--resume {fifo} is a named pipe (FIFO)")


@pytest.mark.parametrize("entry, kind", [("folder", "a folder"),
                                         ("/dev/null", "a character device")])
def test_a_folder_or_a_device_is_refused(tmp_path, entry, kind):
    path = tmp_path / entry if entry == "folder" else Path(entry)
    path.mkdir(exist_ok=True) if entry == "folder" else None
    assert _refused_at_once(path) == (f"--resume {path} is {kind}, not a regular file; a journal "
                                      "must be a regular file")


def test_compare_refuses_a_fifo_as_its_journal(tmp_path, monkeypatch, capsys):
    fifo = tmp_path / "j.fifo"
    os.mkfifo(fifo)
    code, out, err = _main(_compare_args(fifo), monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == (f"ensemblekit: error: --resume {fifo} is a named pipe (FIFO), not a regular "
                   "file; a journal must be a regular file\n")


# --------------------------------------------------------------------------- full disk
def _failing_writes(monkeypatch, *, after: int, code: int = errno.ENOSPC, cut: bool = True,
                    what: bytes = b'{"algorithm":'):
    """Make the journal's writes of records starting with ``what`` fail after ``after`` of
    them: half the record reaches the file, then ``OSError(code)``. ``cut=False`` makes
    cutting the file back fail too."""
    real_write = os.write
    seen = []

    def write(fd, data):
        if bytes(data[: len(what)]) == what:
            seen.append(1)
            if len(seen) > after:
                real_write(fd, bytes(data[: len(data) // 2]))
                raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    def ftruncate(fd, length):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(journal_module.os, "write", write)
    if not cut:
        monkeypatch.setattr(journal_module.os, "ftruncate", ftruncate)


def test_a_full_disk_keeps_every_complete_record(iris, tmp_path, monkeypatch, uninterrupted):
    path = tmp_path / "j.jsonl"
    _failing_writes(monkeypatch, after=2)
    with pytest.raises(ProtocolError) as full:
        _run(iris, path)
    assert str(full.value) == (f"no space left on the device of --resume file {path}; it keeps "
                               "the 2 units saved so far: free some space, then run the same "
                               "command again to go on")
    monkeypatch.undo()
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 3 and all(line.endswith("\n") for line in lines)  # no half record
    resumed = _run(iris, path)
    assert resumed.computed == 4 and resumed.notes == [] and _strip(resumed) == uninterrupted


def test_a_record_left_in_part_after_a_failed_write_is_dropped_on_the_next_read(
        iris, tmp_path, monkeypatch, uninterrupted):
    path = tmp_path / "j.jsonl"
    _failing_writes(monkeypatch, after=3, cut=False)
    with pytest.raises(ProtocolError, match="it keeps the 3 units saved so far"):
        _run(iris, path)
    monkeypatch.undo()
    assert not path.read_text().endswith("\n")  # a torn last line, as a kill leaves
    resumed = _run(iris, path)
    assert resumed.notes == [f"{path}, line 5: a record cut short (by a killed run) was dropped; "
                             "its unit is computed again"]
    assert resumed.computed == 3 and _strip(resumed) == uninterrupted


def test_another_write_error_says_why_and_keeps_the_records(iris, tmp_path, monkeypatch):
    path = tmp_path / "j.jsonl"
    _failing_writes(monkeypatch, after=1, code=errno.EIO)
    with pytest.raises(ProtocolError) as failed:
        _run(iris, path)
    assert str(failed.value) == (f"cannot write --resume file {path}: {os.strerror(errno.EIO)}; "
                                 "it keeps the 1 unit saved so far: run the same command again "
                                 "to go on")
    assert len(path.read_text().splitlines()) == 2


def test_a_full_disk_before_the_header_leaves_no_file(iris, tmp_path, monkeypatch):
    path = tmp_path / "j.jsonl"
    _failing_writes(monkeypatch, after=0, what=b'{"comparison":')
    with pytest.raises(ProtocolError, match="it keeps the 0 units saved so far"):
        _run(iris, path)
    assert not path.exists()


def test_compare_on_a_full_disk_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "j.jsonl"
    _failing_writes(monkeypatch, after=4)
    code, out, err = _main(_compare_args(path), monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == (f"ensemblekit: error: no space left on the device of --resume file {path}; it "
                   "keeps the 4 units saved so far: free some space, then run the same command "
                   "again to go on\n")


@pytest.mark.slow  # starts worker processes
def test_a_full_disk_in_a_parallel_run_ends_it_without_joblib_warnings(iris, tmp_path,
                                                                      monkeypatch):
    path = tmp_path / "j.jsonl"
    _failing_writes(monkeypatch, after=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ProtocolError, match="no space left on the device"):
            _run(iris, path, n_jobs=2)
    assert [str(w.message) for w in caught] == []
    assert len(path.read_text().splitlines()) == 2
