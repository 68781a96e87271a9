"""Worker processes: they end with a killed parent, and ``--n-jobs`` is bounded.

The kill tests start real commands, find their worker processes through
``/proc`` (parent links), kill the command with SIGKILL and watch the workers,
loky's resource tracker and ``/dev/shm``. ``compare`` forks its workers on Linux, from
its zygote (:mod:`ensemblekit.experiment.forking`); lazy ``predict`` starts loky's.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from joblib import cpu_count, effective_n_jobs

from ensemblekit import experiment
from ensemblekit.data import load_dataset
from ensemblekit.experiment import forking

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_data"
IRIS = str(SAMPLES / "iris.arff")
VOTE = str(SAMPLES / "vote.arff")
SHM = Path("/dev/shm")

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _ensemblekit() -> list[str]:
    exe = Path(sys.executable).parent / "ensemblekit"
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from ensemblekit.cli import main; main()"]


# --------------------------------------------------------------------------- /proc
def _stat(pid: int):
    """(parent pid, state, CPU ticks used, start time) of a process, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()  # after "pid (name)"
    return int(fields[1]), fields[0], int(fields[11]) + int(fields[12]), int(fields[19])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _descendants(root: int) -> dict[int, tuple]:
    """Every live process below ``root``: pid -> its stat (see :func:`_stat`)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            stats[int(entry)] = st
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, st in stats.items():
            if st[0] == parent and pid not in found:
                found[pid] = st
                frontier.append(pid)
    return found


def _alive(pid: int, started: int) -> bool:
    """The same process (not a reused id) still exists and is not a zombie."""
    st = _stat(pid)
    return st is not None and st[3] == started and st[1] != "Z"


def _ours_in_shm(pid: int) -> set[str]:
    """Entries of /dev/shm that joblib or loky created for process ``pid``."""
    return {name for name in os.listdir(SHM)
            if name.startswith(f"joblib_memmapping_folder_{pid}_") or name.startswith(f"sem.loky-{pid}-")}


def _is_worker(pid: int, st: tuple, command: int, kind: str) -> bool:
    """Whether process ``pid`` (its stat ``st``) is a ``kind`` worker ("loky" or "forked")
    of the command ``command``: loky's run ``popen_loky_posix``; forked ones run the
    command's own command line and are children of its zygote, the command's child."""
    if kind == "loky":
        return "popen_loky_posix" in _cmdline(pid)
    zygote = _stat(st[0])
    return (zygote is not None and zygote[0] == command
            and _cmdline(pid) == _cmdline(st[0]) == _cmdline(command))


def _kill_mid_run(args: list[str], cpu_seconds: float,
                  kind: str = "loky") -> tuple[int, dict, set, float]:
    """Start ``ensemblekit args``, wait until each of its two ``kind`` workers (see
    :func:`_is_worker`) has used ``cpu_seconds`` of CPU, SIGKILL the command and wait
    (at most 30 s) for every process it started to end.

    Returns the command's pid, the processes it had started (pid -> stat and
    command line), the /dev/shm entries it had made, and the seconds from the
    kill until the last of its processes was gone.
    """
    ticks = os.sysconf("SC_CLK_TCK")
    proc = subprocess.Popen(_ensemblekit() + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"the command ended before it was killed: {proc.stderr.read()!r}"
            assert time.monotonic() < deadline, "the workers never got to work"
            family = _descendants(proc.pid)
            workers = [st for pid, st in family.items() if _is_worker(pid, st, proc.pid, kind)]
            if len(workers) == 2 and all(st[2] >= cpu_seconds * ticks for st in workers):
                break
            time.sleep(0.05)
        # the resource trackers as well as the workers, with their command lines, and
        # whether each is a worker
        family = {pid: (*st, _cmdline(pid), _is_worker(pid, st, proc.pid, kind))
                  for pid, st in _descendants(proc.pid).items()}
        shm = _ours_in_shm(proc.pid)
        proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        proc.wait()
        while any(_alive(pid, st[3]) for pid, st in family.items()) and time.monotonic() < killed + 30:
            time.sleep(0.05)
        return proc.pid, family, shm, time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def _assert_all_gone(pid: int, family: dict, shm: set, seconds: float,
                     kind: str = "loky") -> None:
    commands = {p: st[4] for p, st in family.items()}
    assert sum(st[5] for st in family.values()) == 2
    if kind == "loky":
        assert any("resource_tracker" in c for c in commands.values())
    survivors = {p: commands[p] for p, st in family.items() if _alive(p, st[3])}
    for p, st in family.items():  # do not leave them running: once the workers are gone,
        if p in survivors and st[5]:  # the trackers clean /dev/shm and exit
            os.kill(p, signal.SIGKILL)
    assert not survivors, f"alive 30 s after the kill: {survivors}"
    print(f"last of {len(family)} processes gone {seconds:.2f} s after the SIGKILL")
    if kind == "loky":
        # the run had put its memmapping folders and loky semaphores in /dev/shm; the
        # resource tracker removes them when the last worker is gone
        assert shm, "nothing of the run was in /dev/shm: the check below could not fail"
    assert _ours_in_shm(pid) == set()


@pytest.mark.slow  # kills a parallel compare process and waits for its workers
@linux_only
def test_killed_compare_leaves_no_worker_and_nothing_in_dev_shm():
    args = ["compare", "knn", "c45", "--data", str(SAMPLES), "--cv", "5", "--repeats", "300",
            "--n-jobs", "2"]
    _assert_all_gone(*_kill_mid_run(args, cpu_seconds=1.5, kind="forked"), kind="forked")


@pytest.mark.slow  # kills a parallel predict process and waits for its workers
@linux_only
def test_killed_lazy_predict_leaves_no_worker(tmp_path):
    model = tmp_path / "lb.ekm"
    subprocess.run(_ensemblekit() + ["fit", "lazy-bagging", VOTE, "-o", str(model)], check=True,
                   capture_output=True)
    _assert_all_gone(*_kill_mid_run(["predict", str(model), VOTE, "-j", "2"], cpu_seconds=1.0))


@linux_only
@pytest.mark.slow  # starts two worker processes
def test_prestarted_workers_are_the_ones_run_uses(monkeypatch):
    # where workers are not forked: prestart starts loky's workers from a thread that
    # ends after the warm-up; they must survive it (a parent-death signal would kill
    # them with that thread), and run() must reuse them (the same joblib options), not
    # start a second pool
    monkeypatch.setattr(forking, "fork_available", lambda: False)

    def loky_children():
        return {pid for pid in _descendants(os.getpid()) if "popen_loky_posix" in _cmdline(pid)}

    iris = load_dataset(IRIS)
    candidates = [experiment.Candidate("knn", {"n_neighbors": 3, "weights": "uniform"}, "knn")]
    protocol = experiment.Protocol("cv", folds=3, repeats=2, seed=1)
    work = experiment.plan([iris], candidates, protocol)
    runner = experiment.Runner(n_jobs=2)
    runner.prestart().join()
    warmed = loky_children()
    assert len(warmed) == 2
    result = runner.run([iris], work, protocol, ["accuracy"])
    assert len(result.scores) == 6 and not result.failures
    assert loky_children() == warmed


@linux_only
@pytest.mark.slow  # forks a zygote and two worker processes
def test_prestart_forks_a_zygote_whose_workers_run_the_units():
    # prestart() forks the zygote before the data are read; start() hands it the data
    # sets without forking here; run() sends the units to the zygote's two workers and
    # ends all three when it is done
    iris = load_dataset(IRIS)
    candidates = [experiment.Candidate("c45", {}, "c45"), experiment.Candidate("knn", {}, "knn")]
    protocol = experiment.Protocol("cv", folds=3, repeats=2, seed=1)
    work = experiment.plan([iris], candidates, protocol)
    runner = experiment.Runner(n_jobs=2)

    def children(parent):  # (earlier tests may have left loky's workers in this process)
        return {pid for pid, st in _descendants(parent).items() if st[0] == parent}

    before = children(os.getpid())
    assert runner.prestart(algorithms=["c45", "knn"]) is None  # nothing to join
    zygote = children(os.getpid()) - before
    assert len(zygote) == 1 and _cmdline(min(zygote)) == _cmdline(os.getpid())
    assert runner.start([iris], work, protocol) is True
    assert children(os.getpid()) - before == zygote
    seen = []  # the zygote's children as each unit comes back: its two workers only
    result = runner.run([iris], work, protocol, ["accuracy"],
                        on_unit_done=lambda: seen.append(children(min(zygote))))
    assert len(seen) == 12 and len(seen[0]) == 2 and all(now == seen[0] for now in seen)
    assert not children(os.getpid()) & zygote and not any(map(_stat, seen[0]))  # ended by run()
    serial = experiment.Runner(n_jobs=1).run([iris], work, protocol, ["accuracy"])
    assert _values(result.scores) == _values(serial.scores) and not result.failures


def _values(scores):
    return [(s.dataset, s.algorithm, s.repeat, s.fold, s.metric, s.value) for s in scores]


@linux_only
@pytest.mark.slow  # forks workers, kills one, then starts loky's
def test_a_forked_worker_killed_mid_run_loses_no_unit():
    # the units of the dead worker's pool are run again, each alone, on loky's workers
    iris = load_dataset(IRIS)
    candidates = [experiment.Candidate("knn", {}, "knn")]
    protocol = experiment.Protocol("cv", folds=5, repeats=4, seed=3)
    work = experiment.plan([iris], candidates, protocol)
    runner = experiment.Runner(n_jobs=2)
    runner.prestart(algorithms=["knn"])
    killed = []

    def kill_a_worker():
        if not killed:
            killed.append(min(runner._forked.pids))
            os.kill(killed[0], signal.SIGKILL)

    result = runner.run([iris], work, protocol, ["accuracy"], on_unit_done=kill_a_worker)
    serial = experiment.Runner(n_jobs=1).run([iris], work, protocol, ["accuracy"])
    assert killed and _values(result.scores) == _values(serial.scores) and not result.failures


@linux_only
@pytest.mark.slow  # a command with two workers
def test_a_compare_that_fails_after_forking_its_zygote_leaves_no_process(tmp_path):
    # the zygote is forked before the files are read; the second file is malformed
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation bad\n@attribute a numeric\n@data\n1,2\n")
    proc = subprocess.Popen(_ensemblekit() + ["compare", "knn", "c45", "--data", IRIS, "--data",
                                              str(bad), "--n-jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == "" and "bad.arff, line 4" in err
    with pytest.raises(ProcessLookupError):  # its process group is empty when it has exited
        os.killpg(proc.pid, 0)


# --------------------------------------------------------------------------- --n-jobs
def test_worker_count_follows_joblib_for_negative_values():
    cores = cpu_count()
    assert [experiment.worker_count(-k) for k in range(1, cores + 1)] == list(range(cores, 0, -1))
    # the same as joblib's own reading of n_jobs, wherever that is in range
    for n_jobs in [*range(-cores, 0), *range(1, 4 * cores + 1)]:
        assert experiment.worker_count(n_jobs) == effective_n_jobs(n_jobs)


@pytest.mark.parametrize("n_jobs", [0, -cpu_count() - 1, 4 * cpu_count() + 1, 100000, True, 2.0, "2"])
def test_worker_count_refuses_out_of_range(n_jobs):
    with pytest.raises(ValueError, match=rf"n_jobs must be 1 to {4 * cpu_count()} workers .*got"):
        experiment.worker_count(n_jobs)


def _run_cli(args: list[str]) -> subprocess.CompletedProcess:
    # the timeout only guards against the hang this replaces; it is not a speed check
    return subprocess.run(_ensemblekit() + args, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # a process per value; worker_count's own refusal is tested above
@pytest.mark.parametrize("n_jobs", ["100000", "0", "-1000"])
def test_compare_refuses_n_jobs_out_of_range_in_one_line(n_jobs):
    before = set(os.listdir(SHM)) if SHM.is_dir() else set()
    proc = _run_cli(["compare", "knn", "c45", "--data", IRIS, "--cv", "2", "--repeats", "1",
                     "--n-jobs", n_jobs])
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.endswith(f", got {n_jobs}\n")
    assert proc.stderr.startswith(f"ensemblekit: error: --n-jobs must be 1 to {4 * cpu_count()} workers "
                                  "(at most 4 per core")
    if SHM.is_dir():  # nothing started, so nothing left behind
        assert not {n for n in set(os.listdir(SHM)) - before if "loky" in n or "joblib" in n}


@pytest.mark.slow  # two processes
def test_predict_refuses_n_jobs_out_of_range_in_one_line(tmp_path):
    model = tmp_path / "knn.ekm"
    subprocess.run(_ensemblekit() + ["fit", "knn", IRIS, "-o", str(model)], check=True, capture_output=True)
    proc = _run_cli(["predict", str(model), IRIS, "-j", "100000"])
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and f"--n-jobs must be 1 to {4 * cpu_count()} workers" in proc.stderr


@pytest.mark.slow  # a serial and a parallel compare process
def test_compare_with_n_jobs_minus_two_gives_the_serial_output():
    args = ["compare", "knn", "c45", "--data", IRIS, "--cv", "3", "--repeats", "2", "--format", "json"]
    serial = _run_cli(args)
    all_but_one = _run_cli(args + ["--n-jobs", "-2"])
    assert serial.returncode == 0 and all_but_one.returncode == 0, all_but_one.stderr
    assert all_but_one.stdout == serial.stdout
