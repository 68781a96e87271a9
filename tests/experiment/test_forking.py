"""The zygote of forked workers (:class:`ensemblekit.experiment.forking.Zygote`).

Each test forks a zygote from the test process, which forks two workers: the tasks
are module-level functions of this file, sent by name.
"""

import os
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pytest

from ensemblekit.experiment import forking

pytestmark = [
    pytest.mark.slow,  # forks processes
    pytest.mark.skipif(not forking.fork_available(), reason="workers are forked on Linux only"),
]


def _prepared():
    os.environ["EK_TEST_PREPARED"] = str(os.getpid())


def _warmed(value):
    os.environ["EK_TEST_WARMED"] = str(value)


def _sum_of(ref, scale):
    """A task: the sum of the inherited array ``ref`` refers to, times ``scale``, and what
    this process inherited from the zygote's preparation and warm-up."""
    return (float(ref.get().sum()) * scale, os.getpid(), os.getppid(),
            os.environ.get("EK_TEST_PREPARED"), os.environ.get("EK_TEST_WARMED"))


def _raise(text):
    raise ValueError(text)


def _unpicklable():
    return lambda: None


class _PicklesOnce:
    """Pickles as a call of :func:`_unpicklable`: it leaves a worker, but what the
    zygote unpickles from it cannot be sent on."""

    def __reduce__(self):
        return (_unpicklable, ())


def _pickles_once():
    return _PicklesOnce()


def _started(n_workers=2):
    zygote = forking.Zygote(n_workers, _prepared)
    zygote.start((np.arange(10.0), np.ones(3)), _Warm(7))
    return zygote


class _Warm:
    """A picklable warm-up that leaves a mark in the zygote's environment."""

    def __init__(self, value):
        self.value = value

    def __call__(self):
        _warmed(self.value)


def _waited(pid, seconds=10.0):
    """Whether process ``pid`` is gone (or a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def test_tasks_run_on_the_zygotes_workers_with_the_inherited_data():
    zygote = _started()
    try:
        tasks = [(forking.Inherited(i % 2), i) for i in range(12)]
        results = list(zygote.unordered(_sum_of, tasks, in_flight=4))
    finally:
        zygote.close()
    assert sorted(r[0] for r in results) == sorted(
        (45.0 if i % 2 == 0 else 3.0) * i for i in range(12))
    workers = {r[1] for r in results}
    assert workers <= zygote.pids and len(zygote.pids) == 2
    assert {r[2] for r in results} == {zygote.pid} != {os.getpid()}
    # the workers were forked after the zygote had prepared and run the warm-up
    assert {r[3] for r in results} == {str(zygote.pid)} and {r[4] for r in results} == {"7"}
    assert "EK_TEST_PREPARED" not in os.environ  # that happened in the zygote only
    assert all(_waited(pid) for pid in (zygote.pid, *zygote.pids))


def test_a_tasks_error_is_raised_here_and_the_pool_goes_on():
    zygote = _started()
    try:
        with pytest.raises(ValueError, match="from a worker"):
            list(zygote.unordered(_raise, [("from a worker",)], in_flight=2))
        assert [r[0] for r in zygote.unordered(_sum_of, [(forking.Inherited(1), 2)], 1)] == [6.0]
    finally:
        zygote.close()


def test_a_reply_that_does_not_pickle_is_an_error_not_a_hang():
    zygote = _started()
    try:
        with pytest.raises(AttributeError, match="pickle"):  # the worker's pool says so
            list(zygote.unordered(_unpicklable, [()], in_flight=1))
        with pytest.raises(RuntimeError, match="a worker's reply could not be sent: "
                                               "AttributeError: Can't pickle local object"):
            list(zygote.unordered(_pickles_once, [()], in_flight=1))
    finally:
        zygote.close()


@pytest.mark.parametrize("victim", ["zygote", "worker"])
def test_a_killed_zygote_or_worker_breaks_the_pool(victim):
    zygote = _started()
    try:
        results = zygote.unordered(_sum_of, [(forking.Inherited(0), 1)] * 50, in_flight=2)
        next(results)
        os.kill(zygote.pid if victim == "zygote" else min(zygote.pids), signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            for _ in results:
                time.sleep(0.01)
    finally:
        zygote.close(kill=True)
    assert all(_waited(pid) for pid in (zygote.pid, *zygote.pids))


def test_closing_a_zygote_that_never_started_kills_it_at_once():
    zygote = forking.Zygote(2, lambda: time.sleep(60))  # preparing for a minute
    assert list(zygote.unordered(_sum_of, [], in_flight=2)) == []  # no task: no wait
    zygote.close()  # returns at once: a zygote without workers has nothing to finish
    assert _waited(zygote.pid, seconds=0.0)
    with pytest.raises(RuntimeError, match="start"):
        list(forking.Zygote(1, _prepared).unordered(_sum_of, [(forking.Inherited(0), 1)], 1))


def test_a_zygote_whose_parent_is_gone_ends_with_its_workers():
    # a child of this test makes a zygote and is killed: the zygote and its workers end
    script = (
        "import os, sys, time\n"
        f"sys.path[:0] = {[os.path.dirname(__file__)]!r}\n"
        "import test_forking as t\n"
        "z = t._started()\n"
        "list(z.unordered(t._pids, [()], 1))\n"
        "print(z.pid, *sorted(z.pids), flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 3
        proc.kill()
        proc.wait()
        assert all(_waited(pid) for pid in pids)
    finally:
        proc.kill()
        proc.stdout.close()


def _pids():
    return os.getpid()
