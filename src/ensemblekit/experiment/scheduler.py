"""Reaching a Dask scheduler within a deadline, and noticing when its workers are gone.

``--scheduler ADDRESS`` hands work to a Dask distributed cluster. Dask's own client
waits without a bound for a peer that accepts a connection and then says nothing,
and it allocates whatever size the first eight bytes of a message claim, so a
port held by some other server could hang a command or ask for exbibytes. Here,
before :class:`distributed.Client` sees the address:

* the address is checked (``tcp://HOST:PORT`` or ``HOST:PORT``; another protocol must be
  one Dask knows, such as ``tls://``, and is left to Dask within the same deadline);
* for a TCP address, a plain socket connects and reads the peer's first message,
  which a Dask scheduler sends unasked (its handshake: a length-prefixed msgpack
  map holding its pickle protocol); the length is checked against
  :data:`HANDSHAKE_LIMIT` before anything is read, and a peer that sends
  something else, closes, or stays silent is refused with one line naming it;
* every step, the client's own included, ends by one deadline: the connection
  timeout (:func:`connect_timeout`, ten seconds unless ``ENSEMBLEKIT_DASK_TIMEOUT``
  says otherwise).

During a run, :class:`WorkerWatch` asks the scheduler how many worker threads it
has; when it has had none, or has not answered, for as long as the connection
timeout, the watch closes the client, which wakes whoever waits on its futures,
and says why (:attr:`WorkerWatch.verdict`).

A peer that passes the check is trusted as Dask trusts its scheduler: what it
sends later is read by Dask, which can run code it receives. Connect only to
schedulers you trust.

Nothing here prints or touches files.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import struct
import sys
import threading
import time
from urllib.parse import urlsplit

from ensemblekit.experiment.protocol import ProtocolError

#: Seconds a client waits for a Dask scheduler (to connect and shake hands), and that a
#: run waits for a worker when the scheduler has none, unless ``ENSEMBLEKIT_DASK_TIMEOUT``
#: (:data:`TIMEOUT_VARIABLE`) gives another duration.
CONNECT_TIMEOUT = 10.0

#: The largest duration ``ENSEMBLEKIT_DASK_TIMEOUT`` may give, in seconds (one hour).
MAX_CONNECT_TIMEOUT = 3600.0

#: The environment variable that sets :data:`CONNECT_TIMEOUT`, read by :func:`connect_timeout`.
TIMEOUT_VARIABLE = "ENSEMBLEKIT_DASK_TIMEOUT"

#: The largest first message (in bytes, after its 8-byte length) accepted as a scheduler's
#: handshake. Dask's handshake is a map of three small entries, under 100 bytes.
HANDSHAKE_LIMIT = 64 * 1024

#: The most frames a handshake may announce (Dask sends one).
_HANDSHAKE_FRAMES = 16

def require_distributed() -> None:
    """Raise ProtocolError, with the command that installs it, without the distributed package."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ProtocolError("--scheduler needs the distributed package: "
                            "pip install 'ensemblekit[distributed]'") from None


def connect_timeout() -> float:
    """The connection timeout in seconds: ``ENSEMBLEKIT_DASK_TIMEOUT``, else :data:`CONNECT_TIMEOUT`.

    The variable holds a duration as Dask writes them (``30s``, ``1.5``,
    ``500ms``, ``2m``; a bare number is seconds).

    Returns
    -------
    float
        In (0, :data:`MAX_CONNECT_TIMEOUT`].

    Raises
    ------
    ProtocolError
        The variable is set to something that is not such a duration, or to a
        duration outside that range; the message names the variable.
    """
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return CONNECT_TIMEOUT
    from dask.utils import parse_timedelta

    try:
        seconds = float(parse_timedelta(text, default="seconds"))
    except (ValueError, KeyError, IndexError, OverflowError, TypeError):
        seconds = math.nan
    if not 0 < seconds <= MAX_CONNECT_TIMEOUT:  # also refuses NaN
        raise ProtocolError(f"{TIMEOUT_VARIABLE} must be a duration of more than 0 and at most "
                            f"{MAX_CONNECT_TIMEOUT:g} seconds, such as 30s; got {text[:80]!r}")
    return seconds


def check_address(address: str) -> tuple[str, str | None, int | None]:
    """Split a scheduler address into ``(scheme, host, port)``, or refuse it.

    A TCP address (``tcp://HOST:PORT``, or ``HOST:PORT``; an IPv6 host in
    brackets, ``tcp://[::1]:8786``) is checked here, as it is probed before Dask
    connects (see :func:`connect`). An address of another protocol Dask knows
    (``tls://``, ``inproc://`` of an in-process cluster, ...) is left to Dask,
    within the same deadline.

    Parameters
    ----------
    address : str

    Returns
    -------
    tuple of (str, str or None, int or None)
        The scheme, and for TCP the host and the port in [1, 65535] (None for
        the other protocols).

    Raises
    ------
    ProtocolError
        A TCP address without a host, with a port that is not a number in that
        range, or with a path or query; a protocol Dask does not know; spaces
        or control characters. One line naming the address.
    """
    text = str(address)
    shown = text if len(text) <= 200 else text[:200] + "..."

    def refuse(problem: str) -> ProtocolError:
        return ProtocolError(f"--scheduler takes a Dask scheduler address such as "
                             f"tcp://HOST:8786, got {shown!r}: {problem}")

    if not text or any(c.isspace() or not c.isprintable() for c in text):
        raise refuse("it is empty or holds spaces or control characters")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme != "tcp":
        require_distributed()
        from distributed.comm import registry

        if scheme not in registry.backends or not rest:
            raise refuse("it names no host" if not rest else "it names no protocol before ://"
                         if not scheme else f"Dask knows no {scheme}:// protocol (tcp:// is the "
                         "usual one)")
        return scheme, None, None
    try:
        parts = urlsplit(f"tcp://{rest}")
        port = parts.port
    except ValueError:
        raise refuse("the port must be a number from 1 to 65535") from None
    if not parts.hostname:
        raise refuse("it names no host")
    if port is None or not 1 <= port <= 65535:
        raise refuse("it names no port from 1 to 65535")
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        raise refuse("it holds more than a host and a port")
    return scheme, parts.hostname, port


def connect(address: str):
    """A new client of the Dask distributed scheduler at ``address``, within the connection timeout.

    ``compare`` (through :class:`ensemblekit.experiment.Runner`) and ``predict``
    connect the same way, with the same errors. For a TCP address the peer's
    handshake is read and checked with a plain socket first (see the module's
    docstring), so a peer that is not a Dask scheduler never reaches Dask's
    reader. The caller closes the client.

    Parameters
    ----------
    address : str
        Its address, ``tcp://host:8786`` (see :func:`check_address`).

    Returns
    -------
    distributed.Client

    Raises
    ------
    ProtocolError
        Without the ``distributed`` package; for a malformed address or
        ``ENSEMBLEKIT_DASK_TIMEOUT``; when the host is unknown, nothing answers,
        the peer is not a Dask scheduler, or the client cannot finish
        connecting within the timeout. One line naming the address.
    """
    require_distributed()
    scheme, host, port = check_address(address)
    timeout = connect_timeout()
    deadline = time.monotonic() + timeout
    if scheme == "tcp":
        _probe(address, host, port, timeout, deadline)
    return _client_by(address, timeout, deadline)


# ---------------------------------------------------------------------- the probe
def _longer(timeout: float) -> str:
    """How long was waited, and how to wait longer."""
    return f"{timeout:g} s; {TIMEOUT_VARIABLE}=30s waits longer"


def _by_deadline(call, deadline: float):
    """``(finished, result or exception)`` of ``call()`` run in a daemon thread until ``deadline``.

    For calls that take no timeout of their own (name resolution, Dask's client): the
    thread is left behind if the deadline passes first.
    """
    box: dict = {}
    done = threading.Event()

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="ensemblekit-dask-connect", daemon=True).start()
    if not done.wait(max(0.0, deadline - time.monotonic())):
        return False, None
    return True, box.get("error", box.get("value"))


def _said(exc: OSError) -> str:
    """A socket error in a few words (``connection refused``, ``no answer``)."""
    if isinstance(exc, TimeoutError):
        return "no answer"
    return (exc.strerror or type(exc).__name__).lower()


def _unreachable(address: str, reason: str) -> ProtocolError:
    return ProtocolError(f"cannot reach the Dask scheduler at {address}: {reason}")


def _not_a_scheduler(address: str, reason: str) -> ProtocolError:
    return ProtocolError(f"{address} is not a Dask scheduler: {reason}")


def _open(address: str, host: str, port: int, timeout: float, deadline: float) -> socket.socket:
    """A connected socket to ``host:port``; tried again, as Dask does, until the deadline."""
    finished, found = _by_deadline(lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM),
                                   deadline)
    if not finished:
        raise _unreachable(address, f"its host name was not resolved ({_longer(timeout)})")
    if isinstance(found, BaseException):
        raise _unreachable(address, "its host name is unknown")
    last: OSError | None = None
    pause = 0.05
    while True:
        for family, kind, proto, _, where in found:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock = socket.socket(family, kind, proto)
            sock.settimeout(left)
            try:
                sock.connect(where)
                return sock
            except OSError as exc:
                sock.close()
                last = exc
        left = deadline - time.monotonic()
        if left <= 0:
            reason = "no connection" if last is None else _said(last)
            raise _unreachable(address, f"{reason} (tried for {_longer(timeout)})")
        time.sleep(min(pause, left))  # a scheduler that is starting up opens its port soon
        pause = min(2 * pause, 1.0)


def _read_exactly(sock: socket.socket, n: int, deadline: float) -> bytes | None:
    """``n`` bytes from ``sock``, or None if the peer closes first; TimeoutError at the deadline."""
    parts = []
    got = 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(min(n - got, 65536))
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _handshake(body: bytes) -> dict | None:
    """The map a Dask handshake carries in ``body`` (the bytes after its length), or None.

    Dask frames a message as a count of frames, each frame's length, then the frames
    (all 8-byte little-endian counts); the handshake's first frame is a msgpack map
    with the peer's ``pickle-protocol``.
    """
    import msgpack

    if len(body) < 16:
        return None
    (count,) = struct.unpack_from("<Q", body)
    if not 1 <= count <= _HANDSHAKE_FRAMES or 8 * (1 + count) > len(body):
        return None
    lengths = struct.unpack_from(f"<{count}Q", body, 8)
    start = 8 * (1 + count)
    if start + sum(lengths) != len(body):
        return None
    try:
        # limits on lengths are derived from the frame's size: nothing larger is allocated
        message = msgpack.unpackb(body[start:start + lengths[0]], raw=False, strict_map_key=False)
    except Exception:  # noqa: BLE001 - any malformed frame means "not a handshake"
        return None
    if not isinstance(message, dict) or not isinstance(message.get("pickle-protocol"), int):
        return None
    return message


def _answer() -> bytes:
    """This side's handshake, framed as Dask frames it, so the scheduler logs no broken one."""
    import pickle

    import msgpack

    message = msgpack.packb({"compression": None, "python": list(sys.version_info[:3]),
                             "pickle-protocol": pickle.HIGHEST_PROTOCOL})
    prelude = struct.pack("<QQ", 1, len(message))
    return struct.pack("<Q", len(prelude) + len(message)) + prelude + message


def _probe(address: str, host: str, port: int, timeout: float, deadline: float) -> None:
    """Check, with a plain socket, that the peer at ``host:port`` greets as a Dask scheduler."""
    sock = _open(address, host, port, timeout, deadline)
    try:
        try:
            head = _read_exactly(sock, 8, deadline)
            if head is None:
                raise _not_a_scheduler(address, "it closed the connection without a Dask handshake")
            (size,) = struct.unpack("<Q", head)
            if not 16 <= size <= HANDSHAKE_LIMIT:  # checked before anything of that size is read
                raise _not_a_scheduler(address, "its first message is not a Dask handshake")
            body = _read_exactly(sock, size, deadline)
            if body is None or _handshake(body) is None:
                raise _not_a_scheduler(address, "its first message is not a Dask handshake")
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            sock.sendall(_answer())
        except TimeoutError:
            raise _not_a_scheduler(address, "it sent no Dask handshake (waited "
                                   f"{_longer(timeout)})") from None
        except OSError as exc:
            raise _unreachable(address, _said(exc)) from None
    finally:
        sock.close()


def _client_by(address: str, timeout: float, deadline: float):
    """Dask's client of ``address``, made by the deadline (its own timeout does not cover
    every step of its handshake); a client that arrives after the deadline is closed."""
    from distributed import Client

    late = threading.Event()
    lock = threading.Lock()

    def make():
        client = Client(address, timeout=timeout)
        with lock:
            if late.is_set():
                client.close()
        return client

    finished, outcome = _by_deadline(make, deadline)
    if not finished:
        with lock:
            late.set()
        raise ProtocolError(f"the Dask scheduler at {address} did not finish connecting "
                            f"(waited {_longer(timeout)})")
    if isinstance(outcome, BaseException):
        text = " ".join(str(outcome).split())[:200]
        what = f"{type(outcome).__name__}: {text}" if text else type(outcome).__name__
        if isinstance(outcome, OSError):  # refused, timed out, closed: Dask's own comm errors
            raise _unreachable(address, what)
        # anything else is a reply Dask could not make sense of (or a size it could not hold)
        raise _not_a_scheduler(address, f"it greeted as one but did not answer as one ({what})")
    return outcome


# ---------------------------------------------------------------------- during a run
def wait_for_worker(client, address: str, grace: float) -> None:
    """Return once the scheduler has a worker; refuse after ``grace`` seconds without one.

    Raises
    ------
    ProtocolError
        No worker joined within ``grace`` seconds (or the scheduler went away).
    """
    try:
        client.wait_for_workers(1, timeout=grace)
    except (TimeoutError, OSError):
        raise ProtocolError(f"the Dask scheduler at {address} has no worker: none came within "
                            f"{_longer(grace)}") from None


@contextlib.contextmanager
def quiet_dask_logs(level: int):
    """Raise every ``distributed`` logger to at least ``level`` while the block runs.

    Dask's own loggers (the client's, its connection pools', its comms') report
    a lost worker or scheduler as warnings and errors with tracebacks on
    stderr, from the client's threads, while the run itself reports such a
    fault in one line of its own. Loggers that the dask configuration set up
    carry levels of their own, so each one is raised, not only the parent;
    the levels are put back afterwards.

    Parameters
    ----------
    level : int
        A :mod:`logging` level; ``logging.CRITICAL + 1`` silences them.
    """
    import logging

    names = ["distributed", *(n for n in list(logging.root.manager.loggerDict)
                              if n.startswith("distributed."))]
    loggers = [logging.getLogger(n) for n in names]
    before = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(max(lg.level, level))
    try:
        yield
    finally:
        for lg, was in zip(loggers, before):
            lg.setLevel(was)


def close_lost(client) -> None:
    """Close the client of a lost cluster without Dask's logged tracebacks on stderr.

    When the scheduler is gone, Dask's client tries to reconnect and logs the
    cancelled attempt (or its failure) as an error with a traceback; the run is
    reported in one line instead. Dask's loggers are silenced only while this
    client closes.
    """
    import logging

    with quiet_dask_logs(logging.CRITICAL + 1):
        try:
            client.close()
        except Exception:  # noqa: BLE001 - closed already, or the connection is gone
            pass


class WorkerWatch:
    """Closes a Dask client whose scheduler has had no worker, or no answer, for ``grace`` seconds.

    A run on a cluster waits on futures; when every worker is gone the scheduler
    keeps the tasks until a worker comes, so the run would wait for ever. The
    watch asks the scheduler for its worker threads every ``poll`` seconds from a
    daemon thread. A worker restarted by its nanny is back within a few seconds,
    well inside the default grace.

    Parameters
    ----------
    client : distributed.Client
    address : str
        The scheduler's address, for the verdict.
    grace : float
        Seconds, > 0, without a worker (or an answer) before the client is closed.
    poll : float, optional
        Seconds between two questions; default ``min(1, grace / 4)``.

    Attributes
    ----------
    verdict : str or None
        Why the client was closed, in words for an error message; None while the
        cluster is fine.
    """

    def __init__(self, client, address: str, grace: float, poll: float | None = None):
        self.client = client
        self.address = address
        self.grace = float(grace)
        self.poll = min(1.0, self.grace / 4) if poll is None else float(poll)
        self.verdict: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="ensemblekit-dask-watch",
                                        daemon=True)

    def __enter__(self) -> WorkerWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()

    def _threads(self) -> int | None:
        """The scheduler's worker threads, or None when it does not answer within a poll."""
        try:
            return sum(self.client.nthreads(callback_timeout=max(self.poll, 0.5)).values())
        except Exception:  # noqa: BLE001 - a closed client, a lost scheduler, a timeout
            return None

    def _watch(self) -> None:
        fine = time.monotonic()
        while not self._stop.wait(self.poll):
            threads = self._threads()
            if threads:
                fine = time.monotonic()
                continue
            if time.monotonic() - fine < self.grace or self._stop.is_set():
                continue
            self.verdict = (f"every worker of the Dask scheduler at {self.address} is gone (none "
                            f"for {self.grace:g} s)" if threads == 0 else
                            f"the Dask scheduler at {self.address} stopped answering (for "
                            f"{self.grace:g} s)")
            close_lost(self.client)  # wakes whoever waits on its futures
            return
