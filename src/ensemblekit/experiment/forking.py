"""Local worker processes forked for a run's units, and the process they are forked from (issue 30).

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
the child forever.

:class:`Zygote` is the process the workers are forked from. The command forks it as soon
as it knows the algorithms, before it reads any file: while the command reads the data
and imports the statistical tests, the zygote imports the algorithms' modules and starts
numba (about half a second, most of the time a run of ``--n-jobs 2`` spent before its
first unit). It then receives the data sets, loads the kernels the algorithms call on
them, forks the workers and passes their tasks and outcomes along. The command is left
with no compiled code to load, no worker to fork after it has started threads (the
progress display, the background import), and a second core busy from its start.

Every process forked here ends with the one that forked it, as loky's workers do
(:func:`ensemblekit._workers.die_with_parent`), and ignores Ctrl-C, which its parent
handles by killing it. What a worker computes does not depend on how it was started.
"""

from __future__ import annotations

import concurrent.futures as futures
import itertools
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool

from ensemblekit._workers import die_with_parent

__all__ = ["ForkedWorkers", "Inherited", "Zygote", "fork_available"]

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

    def submit(self, fn: Callable, *args) -> futures.Future:
        """Run ``fn(*args)`` on a free worker; its future.

        Raises
        ------
        concurrent.futures.process.BrokenProcessPool
            A worker died earlier (killed, out of memory): the pool runs nothing more.
        """
        return self._pool.submit(fn, *args)


# --------------------------------------------------------------------------- the zygote
def _zygote(conn, parent: int, n_workers: int, prepare: Callable[[], None]) -> None:
    """The zygote's life (see :class:`Zygote`): prepare, receive the data sets and the
    warm-up, fork the workers, then pass tasks to them until told to close or until the
    parent's end of ``conn`` closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        prepare()
    except Exception:  # noqa: BLE001 - a head start only: the warm-up and units load what they need
        pass
    message = _received(conn)
    if message is None or message[0] != "start":
        return
    _, shared, warm = message
    warm()
    workers = ForkedWorkers(n_workers, shared)
    die_with_parent(parent)  # a thread: only now that the workers are forked
    lock = threading.Lock()  # replies leave from the pool's thread, "ready" from this one

    def reply(message) -> None:
        with lock:
            try:
                conn.send(message)
            except OSError:  # the parent is gone; the watch ends this process
                pass

    def done(future: futures.Future) -> None:
        try:
            value, error = future.result(), None
        except BaseException as exc:  # noqa: BLE001 - passed on to the parent, which raises it
            value, error = None, exc
        try:
            reply(("done", value, error))
        except Exception as exc:  # noqa: BLE001 - an outcome or error that does not pickle
            reply(("done", None, RuntimeError(f"a worker's reply could not be sent: "
                                              f"{type(exc).__name__}: {exc}")))

    kill = True
    try:
        reply(("ready", sorted(workers.pids)))
        while (message := _received(conn)) is not None and message[0] == "task":
            _, fn, args = message
            try:
                workers.submit(fn, *args).add_done_callback(done)
            except BrokenProcessPool as exc:
                reply(("done", None, exc))
        kill = message is None  # the parent is gone; else it said "close"
    finally:
        workers.close(kill=kill)


def _received(conn):
    """The next message on ``conn``, or None once the other end is closed."""
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


class Zygote:
    """A process forked now, which forks ``n_workers`` workers once it has the data sets.

    The zygote runs ``prepare()`` at once (imports, numba's start-up), so make it before
    reading the data: its work then overlaps the reading. :meth:`start` sends it the
    data sets and a warm-up to run on them; it then forks the workers
    (:class:`ForkedWorkers`, with the data sets in their memory), and :meth:`unordered`
    runs tasks on them, through it. :meth:`close` ends it and its workers. The zygote
    ends by itself when this process closes its end of the pipe (exits), and its
    workers end with it.

    Fork it while this process has no other thread (see the module's docstring); after
    that, this process never forks again and may start threads.

    Parameters
    ----------
    n_workers : int >= 1
    prepare : callable
        Called with no argument in the zygote before anything else; what it raises is
        ignored.

    Raises
    ------
    OSError
        If the process cannot be forked (no memory, the process limit).
    """

    def __init__(self, n_workers: int, prepare: Callable[[], None]):
        self.n_workers = int(n_workers)
        ours, theirs = multiprocessing.Pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the zygote: never returns into the caller's code
            code = 1
            try:
                ours.close()
                _zygote(theirs, parent, self.n_workers, prepare)
                code = 0
            finally:
                os._exit(code)  # not the parent's exit handlers, nor its buffered output
        theirs.close()
        self._conn = ours
        #: The zygote's process id.
        self.pid = pid
        #: The workers' process ids, known once :meth:`unordered` has started.
        self.pids: frozenset[int] = frozenset()
        self._sender: threading.Thread | None = None
        self._ready = False
        self._closed = False

    def start(self, shared: Sequence, warm: Callable[[], None]) -> None:
        """Send the zygote the data sets and the warm-up, without waiting for it.

        Parameters
        ----------
        shared : sequence
            Objects the workers find in their memory (see :class:`ForkedWorkers`).
        warm : callable
            Run in the zygote before it forks the workers (it loads the kernels the
            units will call); picklable, as are ``shared``.
        """
        if self.started:
            raise RuntimeError("the zygote was started already")
        # the zygote takes the message once prepared: a thread waits on the pipe meanwhile
        self._sender = threading.Thread(target=self._send_start, args=(tuple(shared), warm),
                                        name="ensemblekit-zygote-start", daemon=True)
        self._sender.start()

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has been called."""
        return self._sender is not None

    def _send_start(self, shared: tuple, warm) -> None:
        try:
            self._conn.send(("start", shared, warm))
        except BaseException:  # noqa: BLE001 - not sent: the zygote would wait for ever
            self._kill()

    def unordered(self, fn: Callable, tasks: Iterable[tuple], in_flight: int) -> Iterator:
        """``fn(*task)`` of every task, run on the workers, in the order they finish.

        Waits for the workers first, if there is any task. At most ``in_flight`` tasks are sent ahead of the
        results taken, so a lazy ``tasks`` iterable is read as the workers free up (its
        later tasks may depend on the results before them).

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
            The zygote or a worker died (killed, out of memory): nothing more runs.
        RuntimeError
            If :meth:`start` was not called.
        Exception
            Whatever ``fn`` raised, for the task that raised it.
        """
        source = iter(tasks)
        first = list(itertools.islice(source, max(1, in_flight)))
        if first and not self._ready:
            if not self.started:
                raise RuntimeError("start() the zygote before running tasks")
            self._sender.join()
            self.pids = frozenset(self._reply()[1])
            self._ready = True
        for task in first:
            self._conn.send(("task", fn, task))
        pending = len(first)
        while pending:
            _, value, error = self._reply()
            pending -= 1
            task = next(source, None)
            if task is not None:
                self._conn.send(("task", fn, task))
                pending += 1
            if error is not None:
                raise error
            yield value

    def _reply(self):
        message = _received(self._conn)
        if message is None:
            raise BrokenProcessPool("the process the workers are forked from has ended")
        return message

    def _kill(self) -> None:
        for pid in (self.pid, *self.pids):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # already gone
                pass

    def close(self, kill: bool = False) -> None:
        """End the zygote and its workers; a second call does nothing.

        Tasks not started are dropped; the ones under way finish, or with ``kill`` (a
        run that stops on an error or a signal) are killed at once, as is a zygote whose
        workers never ran anything."""
        if self._closed:
            return
        self._closed = True
        if kill or not self._ready:
            self._kill()
        else:
            try:
                self._conn.send(("close",))
            except OSError:  # it is gone already
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:  # pragma: no cover - reaped elsewhere
            pass
        if self._sender is not None:  # its send fails now, if it had not ended
            self._sender.join()
        self._conn.close()
