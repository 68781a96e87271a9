"""Local worker processes forked from this one, for a run's units (issue 30).

A worker started fresh (joblib's loky backend) begins as an empty interpreter: it imports
numpy and ensemblekit, then loads every compiled kernel its units call from numba's cache,
about a second of work that the serial run does only once. A worker *forked* from a
process that has done all that starts with it done, and with the run's data sets already
in its memory, so nothing but the units' indices and outcomes need to cross between the
processes.

:class:`ForkedWorkers` is that pool: it forks its workers at once, when it is made, and
runs tasks on them through :class:`concurrent.futures.ProcessPoolExecutor`. Fork only
where it is safe and cheap: on Linux (:func:`fork_available`), and from a process that
has no other thread at that moment, since a lock held by another thread stays held in
the child forever. The runner forks before the progress display, the background import of
the statistical tests or a Dask client start threads.

Each worker ends with this process, as loky's do (:func:`ensemblekit._workers.die_with_parent`).
What a worker computes does not depend on how it was started.
"""

from __future__ import annotations

import concurrent.futures as futures
import itertools
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence

from ensemblekit._workers import die_with_parent

__all__ = ["ForkedWorkers", "Inherited", "fork_available"]

#: What the workers forked by the current :class:`ForkedWorkers` found in memory, by index.
_INHERITED: tuple = ()


def fork_available() -> bool:
    """Whether workers are forked here: Linux with the ``fork`` start method.

    Elsewhere (macOS, where forking a process that has loaded system frameworks is
    unsafe, and Windows, which cannot fork) the runner starts workers with loky.
    """
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


class Inherited:
    """A reference to one of the objects a forked worker inherited, sent in its place.

    Pickling it sends the index alone; :meth:`get` in a worker of the pool that was given
    the objects returns the worker's own copy of the object, made by the fork.

    Parameters
    ----------
    index : int >= 0
        Position in the ``shared`` sequence given to :class:`ForkedWorkers`.
    """

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def get(self):
        """The object, as this process holds it.

        Raises
        ------
        LookupError
            If this process was not forked by a pool holding that many objects.
        """
        if not 0 <= self.index < len(_INHERITED):
            raise LookupError(f"no inherited object {self.index} in this process")
        return _INHERITED[self.index]


def _ready() -> int:
    return os.getpid()


def _worker_starts(parent: int) -> None:
    """A forked worker's initializer: leave Ctrl-C and SIGTERM to this process's parent.

    The fork copied the parent's signal handlers. A Ctrl-C reaches every process of the
    terminal's group, so a worker would stop with a traceback of its own; the parent
    instead stops the run and kills its workers (:meth:`ForkedWorkers.close`). SIGTERM
    ends a worker at once, as it would any process. Then the worker watches its parent
    (:func:`ensemblekit._workers.die_with_parent`).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)


class ForkedWorkers:
    """``n_workers`` processes forked from this one, which inherit ``shared``.

    The workers are forked when the pool is made, all at once; this process must have
    no other running thread then (see the module's docstring). :meth:`close` ends them.

    Parameters
    ----------
    n_workers : int >= 1
    shared : sequence
        Objects the workers find in their memory (:class:`Inherited` refers to them by
        index): the run's data sets.

    Raises
    ------
    OSError
        If the processes cannot be forked (no memory, the process limit).
    """

    def __init__(self, n_workers: int, shared: Sequence = ()):
        global _INHERITED
        _INHERITED = tuple(shared)
        self.n_workers = int(n_workers)
        self._pool = futures.ProcessPoolExecutor(
            self.n_workers, mp_context=multiprocessing.get_context("fork"),
            initializer=_worker_starts, initargs=(os.getpid(),))
        before = {p.pid for p in multiprocessing.active_children()}
        # the fork start method launches every worker at the first submission
        self._pool.submit(_ready).result()
        #: The workers' process ids.
        self.pids = frozenset(p.pid for p in multiprocessing.active_children()) - before

    def close(self, kill: bool = False) -> None:
        """End the workers: the tasks not started are dropped; the ones under way finish,
        or with ``kill`` (a run that stops on an error or a signal) are killed at once."""
        global _INHERITED
        if kill:
            self._pool.shutdown(wait=False, cancel_futures=True)
            for pid in self.pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:  # already gone
                    pass
        self._pool.shutdown(wait=True, cancel_futures=True)
        _INHERITED = ()

    def unordered(self, fn: Callable, tasks: Iterable[tuple], in_flight: int) -> Iterator:
        """``fn(*task)`` of every task, in the order they finish.

        At most ``in_flight`` tasks are submitted ahead of the results taken, so a lazy
        ``tasks`` iterable is read as the workers free up (its later tasks may depend on
        the results before them).

        Parameters
        ----------
        fn : callable
            A module-level function (sent by name).
        tasks : iterable of tuple
            Argument tuples, picklable.
        in_flight : int >= 1

        Yields
        ------
        object
            Each result.

        Raises
        ------
        concurrent.futures.process.BrokenProcessPool
            A worker died (killed, out of memory): the pool can run nothing more.
        Exception
            Whatever ``fn`` raised, for the task that raised it.
        """
        source = iter(tasks)
        pending = {self._pool.submit(fn, *task)
                   for task in itertools.islice(source, max(1, in_flight))}
        while pending:
            done, pending = futures.wait(pending, return_when=futures.FIRST_COMPLETED)
            for future in done:
                task = next(source, None)
                if task is not None:
                    pending.add(self._pool.submit(fn, *task))
                yield future.result()
