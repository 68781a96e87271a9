"""Opening a named pipe (FIFO) without waiting forever for the process at its other end.

Opening a FIFO for writing blocks until some process opens it for reading, and reading one
blocks until some process writes to it: given as ``-o`` with nobody reading, or as data with
nobody writing, it would hang a command for ever. A FIFO with a partner works as a shell
redirection does; without one, these functions wait at most :data:`WAIT_SECONDS` (raised
with ``ENSEMBLEKIT_FIFO_WAIT``) and then raise :class:`TimeoutError` with the one line the
user reads. Regular files, devices and other entries are opened as usual.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time

from ensemblekit.errors import InputError

__all__ = ["WAIT_SECONDS", "WAIT_VARIABLE", "is_fifo", "open_for_reading", "open_for_writing",
           "wait_seconds"]

#: Seconds a FIFO may keep its other end closed (no reader for an output, nothing written
#: for an input) before the command gives up.
WAIT_SECONDS = 10
#: The environment variable that sets another wait: a whole number of seconds >= 1.
WAIT_VARIABLE = "ENSEMBLEKIT_FIFO_WAIT"
#: Seconds between two attempts to open a FIFO that nobody reads yet.
_RETRY = 0.05


def wait_seconds() -> int:
    """The wait in force: ``ENSEMBLEKIT_FIFO_WAIT`` when set, else :data:`WAIT_SECONDS`.

    Raises
    ------
    InputError
        The variable is set but is not a whole number >= 1.
    """
    text = os.environ.get(WAIT_VARIABLE)
    if text is None:
        return WAIT_SECONDS
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{WAIT_VARIABLE}={text!r}: expected a whole number of seconds >= 1")
    return value


def is_fifo(path: str | os.PathLike) -> bool:
    """Whether ``path`` (after links) is a named pipe; False when it cannot be examined."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _timeout(path, what: str, seconds: int) -> TimeoutError:
    return TimeoutError(errno.ETIMEDOUT, f"{what} within {seconds} s, the wait for a named pipe "
                                         f"(set {WAIT_VARIABLE} to wait longer)", os.fspath(path))


def _blocking(fd: int) -> int:
    os.set_blocking(fd, True)
    return fd


def open_for_writing(path: str | os.PathLike, flags: int) -> int:
    """Open ``path`` with ``flags`` (``os.O_WRONLY`` and more) as :func:`os.open` does, waiting
    at most :func:`wait_seconds` for a reader when it is a FIFO.

    Parameters
    ----------
    path : str or os.PathLike
        The destination (a FIFO, a device, a regular file ...).
    flags : int
        Flags of :func:`os.open`, without ``O_NONBLOCK``.

    Returns
    -------
    int
        A descriptor in blocking mode.

    Raises
    ------
    TimeoutError
        A FIFO that no process opened for reading in time ("no process opened the named
        pipe for reading within 10 s, ...").
    OSError
        As :func:`os.open`.
    """
    if not is_fifo(path):
        return os.open(path, flags)
    seconds = wait_seconds()
    deadline = time.monotonic() + seconds
    while True:
        try:
            return _blocking(os.open(path, flags | os.O_NONBLOCK))
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: nobody has it open for reading yet
                raise
        if time.monotonic() >= deadline:
            raise _timeout(path, "no process opened the named pipe for reading", seconds)
        time.sleep(_RETRY)


def open_for_reading(path: str | os.PathLike) -> int:
    """Open the FIFO ``path`` for reading, waiting at most :func:`wait_seconds` for its first
    bytes (or for its writer to close it).

    Parameters
    ----------
    path : str or os.PathLike
        A named pipe.

    Returns
    -------
    int
        A descriptor in blocking mode, with bytes to read (or at its end).

    Raises
    ------
    TimeoutError
        Nothing was written and no writer closed the FIFO in time ("nothing was written to
        the named pipe within 10 s, ...").
    OSError
        As :func:`os.open`.
    """
    seconds = wait_seconds()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(seconds * 1000):
            raise _timeout(path, "nothing was written to the named pipe", seconds)
        return _blocking(fd)
    except BaseException:
        os.close(fd)
        raise
