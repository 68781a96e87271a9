"""``--scheduler``: reaching a Dask scheduler within a deadline, and a run whose workers all die.

The peers here are small listeners on 127.0.0.1 run by a thread of the test: one that accepts
and never speaks, ones that answer with bytes that are not Dask's handshake, and one that
greets as Dask does. ``ENSEMBLEKIT_DASK_TIMEOUT`` is set to a fraction of a second, so the
refusals come quickly; the messages are compared exactly.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from unittest import mock

import pytest

from ensemblekit.experiment import ProtocolError, Runner
from ensemblekit.experiment import scheduler as sched

from ektesting import support

pytest.importorskip("distributed")
msgpack = pytest.importorskip("msgpack")  # Dask's wire format, installed with distributed

IRIS = support.data_path("iris.arff")
MORE = "ENSEMBLEKIT_DASK_TIMEOUT=30s waits longer"


@contextlib.contextmanager
def peer(answer):
    """A listener on 127.0.0.1 whose every connection is handed to ``answer(conn)``; its address.

    Connections stay open until the block ends (a peer that says nothing keeps them open).
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.02)  # closing a socket does not wake a thread blocked in accept()
    held = []
    received = []
    ended = threading.Event()

    def serve():
        while not ended.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            held.append(conn)
            received.append(answer(conn))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}", received
    finally:
        ended.set()
        thread.join()
        listener.close()
        for conn in held:
            conn.close()


def silent(conn):
    """Accept and say nothing."""


def sends(data: bytes):
    """A peer that sends ``data`` and then waits."""
    def answer(conn):
        conn.sendall(data)
    return answer


def closes(conn):
    conn.close()


def framed(*frames: bytes) -> bytes:
    """Frames as Dask's TCP comm frames a message: total length, frame count, frame lengths."""
    prelude = struct.pack(f"<Q{len(frames)}Q", len(frames), *map(len, frames))
    return struct.pack("<Q", len(prelude) + sum(map(len, frames))) + prelude + b"".join(frames)


HANDSHAKE = framed(msgpack.packb({"compression": None, "python": [3, 11, 7], "pickle-protocol": 5}))


@pytest.fixture
def quick(monkeypatch):
    """A connection timeout of 0.3 s."""
    monkeypatch.setenv("ENSEMBLEKIT_DASK_TIMEOUT", "0.3s")


def _refusal(address: str) -> str:
    with pytest.raises(ProtocolError) as caught:
        sched.connect(address)
    return str(caught.value)


# --------------------------------------------------------------------------- peers
def test_a_silent_peer_is_refused_at_the_deadline(quick):
    with peer(silent) as (address, _):
        assert _refusal(address) == (f"{address} is not a Dask scheduler: it sent no Dask "
                                     f"handshake (waited 0.3 s; {MORE})")


JUNK = {
    "random bytes": random.Random(29).randbytes(4096),
    "a length of 2**63": b"\xff" * 64,
    "an HTTP reply": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    "an SSH banner": b"SSH-2.0-OpenSSH_9.6\r\n",
    "a length too short for a frame count": struct.pack("<Q", 8) + b"\0" * 8,
    "frame lengths that do not add up": struct.pack("<QQQ", 24, 1, 99) + b"\0" * 8,
    "a frame that is not msgpack": framed(b"\xc1\xc1\xc1"),
    "a msgpack list": framed(msgpack.packb([1, 2, 3])),
    "a map without pickle-protocol": framed(msgpack.packb({"python": [3, 11, 7]})),
}


@pytest.mark.parametrize("junk", JUNK.values(), ids=JUNK.keys())
def test_a_peer_that_answers_something_else_is_not_a_scheduler(quick, junk):
    with peer(sends(junk)) as (address, _):
        assert _refusal(address) == (f"{address} is not a Dask scheduler: its first message is "
                                     "not a Dask handshake")


def test_a_peer_that_closes_at_once_is_not_a_scheduler(quick):
    with peer(closes) as (address, _):
        assert _refusal(address) == (f"{address} is not a Dask scheduler: it closed the "
                                     "connection without a Dask handshake")


def test_a_claimed_size_is_never_allocated(quick):
    # Dask's own reader allocates the size a message's first 8 bytes claim; the probe refuses
    # such a claim before reading on
    sched.require_distributed()
    sched.connect_timeout()  # imports done before memory is traced
    claim = struct.pack("<Q", 256 * 2**20) + b"\0" * 4096
    with peer(sends(claim)) as (address, _):
        tracemalloc.start()
        try:
            message = _refusal(address)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert message.endswith("its first message is not a Dask handshake")
    assert peak < 4 * 2**20


def test_a_refused_port_cannot_be_reached(quick):
    with socket.socket() as sock:  # bound, not listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
        assert _refusal(address) == (f"cannot reach the Dask scheduler at {address}: connection "
                                     f"refused (tried for 0.3 s; {MORE})")


def test_an_unknown_host_cannot_be_reached(quick, monkeypatch):
    def unknown(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    assert _refusal("tcp://SCHEDULER-HOST:8786") == ("cannot reach the Dask scheduler at "
                                                     "tcp://SCHEDULER-HOST:8786: its host name "
                                                     "is unknown")


def test_the_probe_passes_a_dask_handshake_and_answers_with_one(quick):
    def greet(conn):
        conn.sendall(HANDSHAKE)
        conn.settimeout(5)
        reply = b""
        while len(reply) < 8 or len(reply) < 8 + struct.unpack_from("<Q", reply)[0]:
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply

    with peer(greet) as (address, received):
        _, host, port = sched.check_address(address)
        sched._probe(address, host, port, 0.3, time.monotonic() + 0.3)
    (reply,) = received
    (size,) = struct.unpack_from("<Q", reply)
    assert size == len(reply) - 8
    answer = sched._handshake(reply[8:])
    assert answer is not None and answer["pickle-protocol"] >= 4


@pytest.mark.parametrize("answer, reason", [
    (silent, f"it sent no Dask handshake (waited 0.3 s; {MORE})"),
    (sends(JUNK["random bytes"]), "its first message is not a Dask handshake"),
], ids=["silent", "random bytes"])
def test_the_cli_refuses_a_peer_that_is_not_a_scheduler_in_one_line(quick, cli, tmp_path, answer,
                                                                    reason):
    out = tmp_path / "scores.csv"
    with peer(answer) as (address, _):
        done = cli("compare", "knn", "c45", "--data", IRIS, "--cv", "3", "--repeats", "1",
                   "--scheduler", address, "--output", out)
    assert done.exit_code == 2
    assert done.output == f"ensemblekit: error: {address} is not a Dask scheduler: {reason}\n"
    assert not out.exists()


# --------------------------------------------------------------------------- addresses, timeouts
BAD_ADDRESSES = {
    "udp://h:8786": "Dask knows no udp:// protocol (tcp:// is the usual one)",
    "://h:8786": "it names no protocol before ://",
    "ucx://": "it names no host",
    "tcp://:8786": "it names no host",
    "tcp://h": "it names no port from 1 to 65535",
    "tcp://h:0": "it names no port from 1 to 65535",
    "tcp://h:99999": "the port must be a number from 1 to 65535",
    "tcp://h:87x6": "the port must be a number from 1 to 65535",
    "tcp://h:8786/path": "it holds more than a host and a port",
    "tcp://user@h:8786": "it holds more than a host and a port",
    "tcp://h:8786\n": "it is empty or holds spaces or control characters",
    "not an address": "it is empty or holds spaces or control characters",
    "": "it is empty or holds spaces or control characters",
}


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_a_malformed_address_is_refused_before_anything_connects(address):
    with pytest.raises(ProtocolError) as caught:
        Runner(scheduler=address)
    assert str(caught.value) == (f"--scheduler takes a Dask scheduler address such as "
                                 f"tcp://HOST:8786, got {address!r}: {BAD_ADDRESSES[address]}")


@pytest.mark.parametrize("address, parts", [
    ("tcp://h:8786", ("tcp", "h", 8786)),
    ("h:8786", ("tcp", "h", 8786)),
    ("tcp://[::1]:8786", ("tcp", "::1", 8786)),
    ("tls://h:8786", ("tls", None, None)),
    ("inproc://10.0.0.1/123/1", ("inproc", None, None)),
])
def test_addresses_dask_takes_are_taken(address, parts):
    assert sched.check_address(address) == parts


def test_the_cli_refuses_a_malformed_address_in_one_line(cli):
    done = cli("compare", "knn", "c45", "--data", IRIS, "--scheduler", "tcp://h:99999")
    assert done.exit_code == 2
    assert done.output == ("ensemblekit: error: --scheduler takes a Dask scheduler address such "
                           "as tcp://HOST:8786, got 'tcp://h:99999': the port must be a number "
                           "from 1 to 65535\n")


@pytest.mark.parametrize("value, seconds", [("", 10.0), ("30s", 30.0), ("1.5", 1.5),
                                            ("500ms", 0.5), ("2m", 120.0), ("3600", 3600.0)])
def test_the_timeout_variable_takes_dask_durations(monkeypatch, value, seconds):
    monkeypatch.setenv("ENSEMBLEKIT_DASK_TIMEOUT", value)
    assert sched.connect_timeout() == seconds


@pytest.mark.parametrize("value", ["abc", "5x", "-5s", "0", "0s", "nan", "inf", "1e400", "2h"])
def test_a_bad_timeout_variable_is_refused_in_one_line(monkeypatch, value):
    monkeypatch.setenv("ENSEMBLEKIT_DASK_TIMEOUT", value)
    with pytest.raises(ProtocolError) as caught:
        Runner(scheduler="tcp://192.0.2.1:8786")
    assert str(caught.value) == ("ENSEMBLEKIT_DASK_TIMEOUT must be a duration of more than 0 and "
                                 f"at most 3600 seconds, such as 30s; got {value!r}")


def test_the_cli_refuses_a_bad_timeout_variable_in_one_line(cli, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_DASK_TIMEOUT", "ten seconds")
    done = cli("compare", "knn", "c45", "--data", IRIS, "--scheduler", "tcp://192.0.2.1:8786")
    assert done.exit_code == 2
    assert done.output == ("ensemblekit: error: ENSEMBLEKIT_DASK_TIMEOUT must be a duration of "
                           "more than 0 and at most 3600 seconds, such as 30s; got 'ten "
                           "seconds'\n")


# --------------------------------------------------------------------------- the watch
class FakeClient:
    """Answers ``nthreads`` with ``threads`` (or raises when it is None); counts the questions."""

    def __init__(self, threads):
        self.threads = threads
        self.asked = 0
        self.enough = threading.Event()
        self.closed = False
        self.status = "running"

    def nthreads(self, **kwargs):
        self.asked += 1
        if self.asked >= 10:
            self.enough.set()
        if self.threads is None:
            raise OSError("no answer")
        return dict(self.threads)

    def close(self):
        self.closed = True
        self.status = "closed"


@pytest.mark.parametrize("threads, verdict", [
    ({}, "every worker of the Dask scheduler at tcp://h:1 is gone (none for 0.05 s)"),
    (None, "the Dask scheduler at tcp://h:1 stopped answering (for 0.05 s)"),
])
def test_the_watch_closes_a_client_without_workers_or_answers(threads, verdict):
    client = FakeClient(threads)
    watch = sched.WorkerWatch(client, "tcp://h:1", grace=0.05, poll=0.01)
    with watch:
        watch._thread.join(10)  # the watch ends once it has closed the client
    assert watch.verdict == verdict
    assert client.closed


def test_the_watch_leaves_a_cluster_with_workers_alone():
    client = FakeClient({"tcp://w:1": 1})
    with sched.WorkerWatch(client, "tcp://h:1", grace=0.05, poll=0.01) as watch:
        assert client.enough.wait(10)  # ten questions: twice the grace
    assert watch.verdict is None
    assert not client.closed


# --------------------------------------------------------------------------- every worker dies
def _ek() -> str:
    return str(Path(sys.executable).with_name("ensemblekit"))


def _records(journal: Path) -> int:
    return len(journal.read_text().splitlines()) - 1  # the first line is the header


@pytest.mark.slow  # a scheduler, two worker processes, three comparisons
@pytest.mark.dask
def test_a_run_whose_workers_all_die_stops_and_resumes_to_the_same_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    glass = support.data_path("glass.arff")
    args = [_ek(), "compare", "lazy-bagging", "knn", "--data", str(glass), "--cv", "5",
            "--repeats", "2", "--set", "n_estimators=5", "--seed", "3"]
    journal = tmp_path / "run.jsonl"
    dask = str(Path(sys.executable).with_name("dask"))
    with mock.patch.dict(os.environ), distributed.LocalCluster(
            n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        workers = [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-nanny",
                                     "--no-dashboard"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for _ in range(2)]
        try:
            with distributed.Client(address) as client:
                client.wait_for_workers(2, timeout=120)
            run = subprocess.Popen([*args, "--scheduler", address, "--resume", str(journal)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, "ENSEMBLEKIT_DASK_TIMEOUT": "2s"})
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and run.poll() is None:
                if journal.exists() and _records(journal) >= 3:
                    break
                time.sleep(0.05)
            for worker in workers:
                worker.send_signal(signal.SIGKILL)
            out, err = run.communicate(timeout=120)
        finally:
            for worker in workers:
                worker.kill()
                worker.wait()
    saved = _records(journal)
    assert run.returncode == 2, err
    assert 3 <= saved < 20
    assert err == (f"ensemblekit: error: every worker of the Dask scheduler at {address} is gone "
                   f"(none for 2 s): {saved} of 20 units are saved in {journal}; the same command "
                   "finishes the rest, with or without --scheduler\n")
    assert out == ""
    resumed = subprocess.run([*args, "--resume", str(journal)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{20 - saved} of 20 units computed now" in resumed.stderr
    fresh = subprocess.run(args, capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stderr
    assert resumed.stdout == fresh.stdout
