"""Worker processes that end when the process that started them is gone.

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
