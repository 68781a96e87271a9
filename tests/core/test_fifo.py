"""A named pipe (FIFO) as an output or as data: used with a partner, given up without one.

Issue 29 (everyday faults): a FIFO that nobody reads, given as ``-o``, ``--graph`` or
``--output``, or that nobody writes, given as data, blocked the command for ever. Now it
works as a shell redirection does when the other end is open, and otherwise ends with
one line after ``ENSEMBLEKIT_FIFO_WAIT`` seconds (1 here, so that the tests stay short).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ensemblekit import fifo
from ensemblekit.atomic import write_atomic, writing
from ensemblekit.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
IRIS = str(ROOT / "sample_data" / "iris.arff")

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")

NO_READER = ("no process opened the named pipe for reading within 1 s, the wait for a named pipe "
             "(set ENSEMBLEKIT_FIFO_WAIT to wait longer)")
NO_WRITER = ("nothing was written to the named pipe within 1 s, the wait for a named pipe "
             "(set ENSEMBLEKIT_FIFO_WAIT to wait longer)")


@pytest.fixture
def pipe(tmp_path, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_FIFO_WAIT", "1")
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def _read_all(path, into: list) -> threading.Thread:
    """A reader of ``path`` in a thread; what it read goes to ``into``."""
    def read():
        with open(path, "rb") as fh:
            into.append(fh.read())
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_the_wait_is_a_bound_with_a_variable(monkeypatch):
    monkeypatch.delenv("ENSEMBLEKIT_FIFO_WAIT", raising=False)
    assert fifo.wait_seconds() == fifo.WAIT_SECONDS == 10
    monkeypatch.setenv("ENSEMBLEKIT_FIFO_WAIT", "3")
    assert fifo.wait_seconds() == 3
    for bad in ("0", "-1", "ten", "1.5"):
        monkeypatch.setenv("ENSEMBLEKIT_FIFO_WAIT", bad)
        with pytest.raises(InputError, match=f"^ENSEMBLEKIT_FIFO_WAIT='{bad}': expected a whole "
                                             "number of seconds >= 1$"):
            fifo.wait_seconds()


@pytest.mark.slow  # waits out the pipe's deadline
def test_an_output_fifo_nobody_reads_is_given_up(pipe, tmp_path):
    with pytest.raises(TimeoutError) as info:
        write_atomic(pipe, b"rows\n")
    assert (info.value.strerror, info.value.filename) == (NO_READER, str(pipe))
    with pytest.raises(TimeoutError):
        with writing(pipe) as handle:
            handle.write(b"rows\n")
    assert sorted(os.listdir(tmp_path)) == ["pipe"]  # still the FIFO, nothing else


@pytest.mark.parametrize("how", ["all at once", "piece by piece"])
def test_an_output_fifo_with_a_reader_gets_everything(pipe, how):
    got: list = []
    reader = _read_all(pipe, got)
    data = b"row\n" * 100_000  # more than a pipe holds: the writes block while it reads
    if how == "all at once":
        write_atomic(pipe, data)
    else:
        with writing(pipe) as handle:
            for start in range(0, len(data), 4096):
                handle.write(data[start:start + 4096])
    reader.join(10)
    assert got == [data]


@pytest.mark.slow  # waits out the pipe's deadline
def test_data_in_a_fifo_nobody_writes_is_given_up(pipe):
    from ensemblekit.dataset import DataError
    from ensemblekit.readers.text import open_input

    with pytest.raises(TimeoutError) as info:
        fifo.open_for_reading(pipe)
    assert info.value.strerror == NO_WRITER
    with pytest.raises(DataError) as refused:
        open_input(str(pipe), None)
    assert str(refused.value) == f"{pipe}: {NO_WRITER}"


def _cli(*args, env_wait="1", **kwargs):
    exe = Path(sys.executable).parent / "ensemblekit"
    command = [str(exe)] if exe.exists() else [sys.executable, "-c",
                                               "from ensemblekit.cli import main; main()"]
    env = dict(os.environ, ENSEMBLEKIT_FIFO_WAIT=env_wait)
    return subprocess.run(command + [str(a) for a in args], capture_output=True, text=True,
                          env=env, timeout=120, **kwargs)


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_fifos_without_a_partner_are_one_line_and_exit_2(tmp_path):
    os.mkfifo(tmp_path / "out.csv")
    model = tmp_path / "m.ekm"
    assert _cli("fit", "c45", IRIS, "-o", model).returncode == 0
    for args, line in (
        (["predict", model, IRIS, "-o", tmp_path / "out.csv"],
         f"cannot write {tmp_path / 'out.csv'}: {NO_READER}"),
        (["fit", "c45", IRIS, "-o", tmp_path / "out.csv"],
         f"cannot write model file {tmp_path / 'out.csv'}: {NO_READER}"),
        (["compare", "c45", "--data", IRIS, "--cv", "2", "--repeats", "1", "--output",
          tmp_path / "out.csv"], f"cannot write {tmp_path / 'out.csv'}: {NO_READER}"),
        (["info", tmp_path / "out.csv"], f"{tmp_path / 'out.csv'}: {NO_WRITER}"),
        (["predict", model, tmp_path / "out.csv"], f"{tmp_path / 'out.csv'}: {NO_WRITER}"),
    ):
        done = _cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.splitlines() == [f"ensemblekit: error: {line}"], args
    assert sorted(os.listdir(tmp_path)) == ["m.ekm", "out.csv"]
    done = _cli("predict", model, IRIS, "-o", tmp_path / "out.csv", env_wait="soon")
    assert done.returncode == 2 and done.stderr == (
        "ensemblekit: error: ENSEMBLEKIT_FIFO_WAIT='soon': expected a whole number of seconds "
        ">= 1\n")


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_fifos_with_a_partner_work_as_redirections(tmp_path):
    model = tmp_path / "m.ekm"
    assert _cli("fit", "c45", IRIS, "-o", model).returncode == 0
    expected = _cli("predict", model, IRIS)
    assert expected.returncode == 0
    os.mkfifo(tmp_path / "out.csv")
    got: list = []
    reader = _read_all(tmp_path / "out.csv", got)
    done = _cli("predict", model, IRIS, "-o", tmp_path / "out.csv")
    reader.join(10)
    assert (done.returncode, done.stderr) == (0, "") and got == [expected.stdout.encode()]
    os.mkfifo(tmp_path / "in.arff")
    writer = threading.Thread(target=lambda: (tmp_path / "in.arff").write_bytes(Path(IRIS).read_bytes()),
                              daemon=True)
    writer.start()
    done = _cli("predict", model, tmp_path / "in.arff")
    writer.join(10)
    assert (done.returncode, done.stdout) == (0, expected.stdout)
