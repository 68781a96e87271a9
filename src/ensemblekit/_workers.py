"""Local worker processes: how many ``n_jobs`` asks for, and ending them with their parent.

:func:`worker_count` turns an ``n_jobs`` value into a number of workers, with
joblib's meaning and a bound per core; the command line, the experiment runner
and the checks of a loaded model's ``n_jobs`` all apply it.

The rest of this module makes workers end when the process that started them is gone:
joblib's default backend (loky) keeps its worker processes for reuse, and a
worker only leaves when it is told to or after minutes without work. When the
process that started them is killed outright (``kill -9``, the out-of-memory
killer, a cancelled CI job), nobody tells them: they finish the tasks already
queued, then wait, for more than ten minutes, holding memory, and their open
pipes keep loky's resource tracker alive, which in turn keeps the semaphores
and ``joblib_memmapping_folder_*`` entries in ``/dev/shm``. Neither joblib
nor loky watches the parent on POSIX systems (loky passes no parent sentinel
to its workers there).

Every ``joblib.Parallel`` call of ensemblekit passes :func:`parallel_options`,
which gives each worker :func:`die_with_parent` as its initializer: a daemon
thread in the worker checks twice a second whether the worker has been
re-parented (``os.getppid()`` changes when the parent dies) and then ends the
worker with SIGKILL. Once the parent and its workers are gone, loky's
resource tracker sees its pipe close, removes what was registered with it
(the memmapping folders, the semaphores) and exits.

Why not Linux's ``prctl(PR_SET_PDEATHSIG)``: the kernel sends that signal when
the *thread* that started the worker ends, not the process. loky starts
workers from whichever thread first calls ``Parallel`` (ensemblekit warms them
up from a short-lived thread, :meth:`ensemblekit.experiment.Runner.prestart`), so
the signal would kill healthy workers as soon as that thread returned.

The watch is a no-op on Windows, where a process keeps its parent's id after
the parent dies. Nothing here changes what a worker computes. Backends that
do not start processes (sequential, threading, dask) ignore the initializer,
so a Dask cluster's own workers are never watched or killed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from ensemblekit.errors import InputError

#: Seconds between two checks of a worker's parent.
POLL_SECONDS = 0.5


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGKILL)


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this process when its parent process ends.

    Starts a daemon thread that polls :func:`os.getppid` every
    :data:`POLL_SECONDS` seconds and sends SIGKILL to this process once the
    parent has changed (the parent died and the process was re-parented to
    init or a subreaper). Does nothing on Windows.

    Parameters
    ----------
    parent : int
        Process id of the process that asked for workers (its
        :func:`os.getpid` when it called ``Parallel``). If that is no longer
        this process's parent and no longer exists, the parent died before
        the worker started: the worker ends at once. If it still exists but
        is not the direct parent (workers started through an intermediate
        process, such as multiprocessing's forkserver), the direct parent is
        watched instead; such an intermediate ends with the process it serves.
    """
    if sys.platform == "win32":
        return
    watched = os.getppid()
    if watched != parent:
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os.kill(os.getpid(), signal.SIGKILL)
        except PermissionError:  # pragma: no cover - another user's process took the id
            pass
    threading.Thread(target=_watch, args=(watched,), name="ensemblekit-parent-watch",
                     daemon=True).start()


def parallel_options() -> dict:
    """Keyword arguments for ``joblib.Parallel`` that make its workers die with this process.

    The same options are returned on every call in one process, so loky keeps
    reusing one pool of workers across calls (it starts a new pool when the
    initializer or its arguments change).

    Returns
    -------
    dict
        ``{"initializer": die_with_parent, "initargs": (os.getpid(),)}``.
        joblib hands them to process-based backends (loky, multiprocessing);
        the sequential, threading and dask backends ignore them.
    """
    return {"initializer": die_with_parent, "initargs": (os.getpid(),)}


#: The most worker processes ``n_jobs`` may ask for, per core. Units are CPU-bound and
#: run on one core each (see :class:`ensemblekit.experiment.onecore.OneCore`), so workers
#: beyond the core count only share cores; a few times the count still allows
#: deliberate oversubscription (a script written for a larger machine, a container
#: whose CPU quota hides idle cores), while each worker holds about 140 MB of imported
#: scikit-learn, so a four- or five-digit count would start processes until memory or
#: the process limit ran out.
MAX_WORKERS_PER_CORE = 4


def worker_count(n_jobs: int, name: str = "n_jobs") -> int:
    """The number of worker processes ``n_jobs`` stands for, with joblib's meaning.

    A positive value is that many workers; a negative one counts back from the
    number of cores *C*: -1 is all *C*, -2 all but one, ..., -*C* one worker
    (joblib's ``cpu_count() + 1 + n_jobs``). Cores are counted as joblib
    counts them (:func:`joblib.cpu_count`: the CPUs this process may run on,
    within a container's CPU quota).

    Parameters
    ----------
    n_jobs : int
        From 1 to ``MAX_WORKERS_PER_CORE * C``, or from -1 to -*C*.
    name : str, default="n_jobs"
        How the error message names the value (the command line passes
        ``"--n-jobs"``).

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    ValueError
        If ``n_jobs`` is not an integer, is 0, is below -*C* (no worker would
        be left) or above ``MAX_WORKERS_PER_CORE * C``; the message states the
        valid range on this machine.
    """
    import numbers

    integral = isinstance(n_jobs, numbers.Integral) and not isinstance(n_jobs, bool)
    if integral and 1 <= n_jobs <= MAX_WORKERS_PER_CORE:
        # within the bound whatever the number of cores: a serial run need not import joblib
        return int(n_jobs)
    from joblib import cpu_count

    cores = max(1, cpu_count())
    most = MAX_WORKERS_PER_CORE * cores
    if integral:
        workers = cores + 1 + int(n_jobs) if n_jobs < 0 else int(n_jobs)
        if 1 <= workers <= most:
            return workers
    back = ("-1 (all cores)" if cores == 1
            else f"-1 to -{cores} (-1 = all cores, -2 = all but one, ...)")
    raise InputError(f"{name} must be 1 to {most} workers (at most {MAX_WORKERS_PER_CORE} per "
                     f"core, {cores} {'core' if cores == 1 else 'cores'} here) or {back}, "
                     f"got {n_jobs!r}")
