"""Output files: atomic replacement of regular files only; links, devices, pipes and signals.

Unit tests of :mod:`ensemblekit.atomic`, then the command line through real
subprocesses. Tests that write to a device first prove the in-place path on a
private device made with ``mknod`` in a temporary folder, so a broken write
can never replace the machine's own ``/dev/null`` or ``/dev/full``.
"""

import errno
import hashlib
import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ensemblekit import atomic
from ensemblekit.atomic import (
    destination_problem,
    resolve_destination,
    write_atomic,
    write_error_message,
)

ROOT = Path(__file__).resolve().parents[2]
IRIS = str(ROOT / "sample_data" / "iris.arff")

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links, devices and signals of POSIX systems")


def _entries(folder) -> list:
    return sorted(p.name for p in Path(folder).iterdir())


def _private_device(folder: Path, name: str, minor: int) -> Path:
    """A character device of the memory driver (1, minor) inside ``folder``: 3 is null, 7 is full."""
    path = folder / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except OSError as exc:  # not root, or a container without CAP_MKNOD
        pytest.skip(f"cannot create a private device to test on: {exc.strerror}")
    return path


def _read_fifo_in_thread(path: Path):
    """Start a thread that reads the FIFO ``path`` to its end; returns (thread, chunks)."""
    chunks: list = []

    def read():
        with open(path, "rb") as fh:
            chunks.append(fh.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, chunks


# --------------------------------------------------------------------------- regular files


def test_new_file_gets_umask_mode_and_no_temporary_file(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.csv", b"a,b\n")
    finally:
        os.umask(old)
    path = tmp_path / "new.csv"
    assert path.read_bytes() == b"a,b\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # 0o666 less the umask 0o027
    assert _entries(tmp_path) == ["new.csv"]


def test_replacing_a_file_is_a_rename_and_keeps_its_mode(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_bytes(b"old content that is longer than the new one\n")
    os.chmod(path, 0o604)
    before = path.stat()
    write_atomic(path, b"new\n")
    after = path.stat()
    assert path.read_bytes() == b"new\n"
    assert after.st_ino != before.st_ino  # a new inode renamed over the old name, not a rewrite
    assert stat.S_IMODE(after.st_mode) == 0o604
    assert _entries(tmp_path) == ["scores.csv"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root may give files away")
def test_replacing_a_file_keeps_its_owner_and_group(tmp_path):
    path = tmp_path / "theirs.csv"
    path.write_bytes(b"old\n")
    os.chown(path, 12345, 23456)
    write_atomic(path, b"new\n")
    info = path.stat()
    assert (info.st_uid, info.st_gid, path.read_bytes()) == (12345, 23456, b"new\n")


def test_set_id_bits_are_not_carried_over(tmp_path):
    path = tmp_path / "m.ekm"
    path.write_bytes(b"old")
    os.chmod(path, 0o4755)
    write_atomic(path, b"new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_large_write_to_a_file(tmp_path):
    data = os.urandom(1 << 20) * 48  # 48 MiB
    write_atomic(tmp_path / "big.bin", data, fsync=True)
    assert hashlib.sha256((tmp_path / "big.bin").read_bytes()).digest() == hashlib.sha256(data).digest()
    assert _entries(tmp_path) == ["big.bin"]


# --------------------------------------------------------------------------- symbolic links


def test_symlink_chain_writes_the_final_target_in_its_own_folder(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    target = tmp_path / "b" / "real.csv"
    target.write_bytes(b"old\n")
    os.symlink("../b/real.csv", tmp_path / "a" / "hop.csv")  # relative, from folder a
    os.symlink(tmp_path / "a" / "hop.csv", tmp_path / "out.csv")  # absolute, to the first link
    renames = []
    real_replace = os.replace

    def spy(src, dst):
        renames.append((os.path.dirname(os.path.abspath(src)), os.path.abspath(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write_atomic(tmp_path / "out.csv", b"new\n")
    # the temporary file lived beside the target, and was renamed onto it (through a/..)
    assert renames == [(str(tmp_path / "b"), os.path.abspath(tmp_path / "a" / "../b/real.csv"))]
    assert target.read_bytes() == b"new\n"
    assert os.path.islink(tmp_path / "out.csv") and os.path.islink(tmp_path / "a" / "hop.csv")
    assert os.readlink(tmp_path / "out.csv") == str(tmp_path / "a" / "hop.csv")
    assert _entries(tmp_path) == ["a", "b", "out.csv"]
    assert _entries(tmp_path / "a") == ["hop.csv"] and _entries(tmp_path / "b") == ["real.csv"]


def test_dangling_link_creates_its_target(tmp_path):
    (tmp_path / "d").mkdir()
    os.symlink("d/made.csv", tmp_path / "link.csv")
    write_atomic(tmp_path / "link.csv", b"x\n")
    assert (tmp_path / "d" / "made.csv").read_bytes() == b"x\n"
    assert os.readlink(tmp_path / "link.csv") == "d/made.csv"


def test_resolve_destination(tmp_path):
    os.symlink("second", tmp_path / "first")
    os.symlink("/nowhere/file.csv", tmp_path / "second")
    assert resolve_destination(tmp_path / "first") == Path("/nowhere/file.csv")
    assert resolve_destination(tmp_path / "plain.csv") == tmp_path / "plain.csv"
    os.symlink("loop2", tmp_path / "loop1")
    os.symlink("loop1", tmp_path / "loop2")
    with pytest.raises(OSError) as info:
        resolve_destination(tmp_path / "loop1")
    assert info.value.errno == errno.ELOOP
    with pytest.raises(OSError) as info:
        write_atomic(tmp_path / "loop1", b"x")
    assert info.value.errno == errno.ELOOP
    assert _entries(tmp_path) == ["first", "loop1", "loop2", "second"]


def test_link_into_a_missing_folder_fails_and_creates_nothing(tmp_path):
    os.symlink("gone/x.csv", tmp_path / "link.csv")
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "link.csv", b"x")
    assert _entries(tmp_path) == ["link.csv"] and os.path.islink(tmp_path / "link.csv")


# --------------------------------------------------------------------------- devices, pipes, others


def test_private_null_device_is_written_in_place(tmp_path):
    dev = _private_device(tmp_path, "null", 3)
    before = os.stat(dev)
    write_atomic(dev, b"predictions\n" * 1000, fsync=True)
    after = os.stat(dev)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev == os.makedev(1, 3)
    assert after.st_ino == before.st_ino
    assert _entries(tmp_path) == ["null"]


def test_link_to_a_private_device_keeps_both(tmp_path):
    dev = _private_device(tmp_path, "null", 3)
    os.symlink(dev, tmp_path / "out.csv")
    write_atomic(tmp_path / "out.csv", b"x\n")
    assert os.path.islink(tmp_path / "out.csv") and stat.S_ISCHR(os.stat(dev).st_mode)
    assert _entries(tmp_path) == ["null", "out.csv"]


def test_private_full_device_reports_no_space_and_stays_a_device(tmp_path):
    dev = _private_device(tmp_path, "full", 7)
    with pytest.raises(OSError) as info:
        write_atomic(dev, b"x" * 10)
    assert info.value.errno == errno.ENOSPC
    assert stat.S_ISCHR(os.stat(dev).st_mode) and _entries(tmp_path) == ["full"]
    assert write_error_message("out/full", info.value) == "no space left on device writing out/full"


def test_fifo_is_written_in_place_in_chunks(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = os.urandom(1 << 20) * 40  # far more than a pipe holds: many partial writes
    thread, chunks = _read_fifo_in_thread(fifo)
    write_atomic(fifo, data)
    thread.join(timeout=60)
    assert chunks and hashlib.sha256(chunks[0]).digest() == hashlib.sha256(data).digest()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _entries(tmp_path) == ["pipe"]


def test_descriptor_link_appends_to_the_open_file(tmp_path):
    # a private stand-in for /dev/stdout: a link to this process's descriptor
    out = tmp_path / "shell-redirect.txt"
    out.write_bytes(b"already there\n")
    with open(out, "ab") as fh:
        os.symlink(f"/proc/self/fd/{fh.fileno()}", tmp_path / "stdout")
        if not os.path.exists(tmp_path / "stdout"):
            pytest.skip("no /proc/self/fd on this system")
        write_atomic(tmp_path / "stdout", b"written through the descriptor\n")
    assert out.read_bytes() == b"already there\nwritten through the descriptor\n"
    assert os.path.islink(tmp_path / "stdout") and _entries(tmp_path) == ["shell-redirect.txt", "stdout"]


def test_folder_socket_and_their_messages(tmp_path):
    (tmp_path / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path / "dir", b"x")
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(OSError) as info:
            write_atomic(sock_path, b"x")
        assert info.value.errno == errno.EINVAL
        assert write_error_message(sock_path, info.value, "model file") == (
            f"cannot write model file {sock_path}: is not a regular file, a device or a pipe")
        assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
        assert destination_problem(sock_path) == "is not a regular file, a device or a pipe"
    assert _entries(tmp_path) == ["dir", "s.sock"]


def test_write_error_message_wording():
    assert write_error_message("m.ekm", OSError(errno.ENOSPC, "No space left on device"), "model file") == \
        "no space left on device writing m.ekm"
    assert write_error_message("m.ekm", OSError(errno.EDQUOT, "Disk quota exceeded")) == \
        "no space left on device writing m.ekm"
    assert write_error_message(Path("a/b.csv"), PermissionError(errno.EACCES, "Permission denied")) == \
        "cannot write a/b.csv: Permission denied"
    assert write_error_message("p.png", OSError("two\nlines"), "plot file") == \
        "cannot write plot file p.png: OSError: two lines"


def test_destination_problem(tmp_path):
    (tmp_path / "dir").mkdir()
    os.symlink("dir", tmp_path / "to-dir")
    os.symlink("missing/x.csv", tmp_path / "dangling-away")
    os.symlink("dir/x.csv", tmp_path / "dangling-ok")
    (tmp_path / "file").write_bytes(b"")
    os.symlink("l2", tmp_path / "l1")
    os.symlink("l1", tmp_path / "l2")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert destination_problem(tmp_path / "new.csv") is None
    assert destination_problem(tmp_path / "file") is None
    assert destination_problem(tmp_path / "dangling-ok") is None
    assert destination_problem(fifo) is None
    assert destination_problem(tmp_path / "dir") == "is a folder"
    assert destination_problem(tmp_path / "to-dir") == (
        "links to " + str(tmp_path / "dir") + ", which is a folder")
    assert destination_problem(tmp_path / "dangling-away") == (
        f"links to {tmp_path / 'missing' / 'x.csv'}, whose folder {tmp_path / 'missing'} does not exist")
    assert destination_problem(tmp_path / "nope" / "x.csv") == f"folder {tmp_path / 'nope'} does not exist"
    assert destination_problem(tmp_path / "file" / "x.csv") == f"{tmp_path / 'file'} is not a folder"
    assert destination_problem(tmp_path / "l1") == "too many levels of symbolic links"
    assert destination_problem("/dev/null") is None


# --------------------------------------------------------------------------- long names
_LONGEST = "é" * 125 + ".csv"  # 254 bytes of UTF-8 (the limit is 255), 129 characters


def _name_max(folder) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


@pytest.mark.parametrize("how", ["all at once", "piece by piece"])
def test_any_name_the_file_system_takes_can_be_written(tmp_path, how, monkeypatch):
    # issue 29: a 240-253-byte non-ASCII name was refused after the work: the temporary
    # name (".NAME.xxxx.tmp", 200 characters of NAME) ran past the 255-byte limit
    if _name_max(tmp_path) < 255:
        pytest.skip("this file system allows shorter names")
    target = tmp_path / _LONGEST
    temporary = []
    real_replace = os.replace
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: (temporary.append(Path(a).name),
                                                            real_replace(a, b)))
    for content in (b"old\n", b"new\n"):  # a new file, then one replaced
        if how == "all at once":
            write_atomic(target, content)
        else:
            with atomic.writing(target) as handle:
                handle.write(content)
    assert _entries(tmp_path) == [_LONGEST] and target.read_bytes() == b"new\n"
    # the temporary names come from a short hash of the name, the same for one destination
    assert len(temporary) == 2 and all(len(name.encode()) == 42 for name in temporary)
    prefix = ".ensemblekit-" + hashlib.sha256(_LONGEST.encode()).hexdigest()[:12] + "-"
    assert all(name.startswith(prefix) and name.endswith(".tmp") for name in temporary)


def test_a_name_past_the_limit_is_refused_with_the_bound(tmp_path):
    limit = _name_max(tmp_path)
    name = "é" * (limit // 2) + "ab.csv"  # limit + 5 or limit + 6 bytes
    size = len(name.encode())
    assert destination_problem(tmp_path / name) == (
        f"its name is {size} bytes long; the file system allows at most {limit}")
    assert destination_problem(tmp_path / name / "x.csv") == (
        f"the name of a folder on its path is {size} bytes long; the file system allows at most "
        f"{limit}")
    os.symlink(name, tmp_path / "link.csv")
    assert destination_problem(tmp_path / "link.csv") == (
        f"links to {tmp_path / name}, where its name is {size} bytes long; the file system "
        f"allows at most {limit}")
    deep = tmp_path.joinpath(*["d" * 200] * 25, "x.csv")
    assert destination_problem(deep) == (
        f"the path is {len(os.fsencode(deep))} bytes long; the system allows at most "
        f"{os.pathconf(tmp_path, 'PC_PATH_MAX')}")


# --------------------------------------------------------------------------- signals


def test_signals_are_held_back_and_then_delivered():
    assert threading.current_thread() is threading.main_thread()
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(("handler", signum)))
    try:
        with atomic._signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)  # the same signal twice is one pending signal
            seen.append("end of block")
        assert seen == ["end of block", ("handler", signal.SIGTERM)]
        reached = []
        with pytest.raises(KeyboardInterrupt):
            with atomic._signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                reached.append(True)
        assert reached == [True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        # SIGINT's KeyboardInterrupt does not swallow a SIGTERM that came after it
        seen.clear()
        with pytest.raises(KeyboardInterrupt):
            with atomic._signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                os.kill(os.getpid(), signal.SIGTERM)
        assert seen == [("handler", signal.SIGTERM)]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_signal_wrapped_in_another_error_still_removes_the_file_and_acts(tmp_path):
    # issue 29: SIGTERM's exception raised inside a numba callback reaches ``writing`` as a
    # SystemError caused by it; the temporary file goes, and the signal acts as it would have
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    try:
        with pytest.raises(KeyboardInterrupt):  # the handler returned: the block still stops
            with atomic.writing(target) as handle:
                handle.write(b"half")
                try:
                    raise atomic._Interrupted(signal.SIGTERM)
                except atomic._Interrupted as exc:
                    raise SystemError("returned a result with an exception set") from exc
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [signal.SIGTERM]
    assert _entries(tmp_path) == ["out.csv"] and target.read_text() == "old\n"


def test_handlers_come_back_after_an_error_and_ignored_signals_stay_ignored():
    before = {s: signal.getsignal(s) for s in atomic._DEFERRED}
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with pytest.raises(ValueError):
            with atomic._signals_deferred():
                assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
                assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
                raise ValueError("boom")
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert {s: signal.getsignal(s) for s in atomic._DEFERRED} == before


def test_write_from_another_thread_leaves_handlers_alone(tmp_path):
    before = {s: signal.getsignal(s) for s in atomic._DEFERRED}
    during = []

    def work():
        with atomic._signals_deferred():
            during.append({s: signal.getsignal(s) for s in atomic._DEFERRED})
        write_atomic(tmp_path / "t.csv", b"from a thread\n")

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert during == [before]
    assert (tmp_path / "t.csv").read_bytes() == b"from a thread\n" and _entries(tmp_path) == ["t.csv"]


# A process that sends itself a signal at one point of write_atomic, forking a
# fresh child per point: every call, return and C call inside ensemblekit.atomic
# is a point. The child also runs a second thread, as numpy's BLAS workers do,
# so a signal blocked only in the main thread would still end it at once.
_EVERY_POINT = r"""
import json, os, signal, sys, threading, time
from ensemblekit import atomic

folder, signame, flavour = sys.argv[1:]
sig = getattr(signal, signame)
OLD, NEW = b"old content\n" * 1000, b"new content\n" * 50000
out = os.path.join(folder, "out.bin")
real = os.path.join(folder, "real", "out.bin") if flavour == "link" else out
results = []
step = 0
while True:
    step += 1
    for root, dirs, files in os.walk(folder, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    if flavour == "link":
        os.mkdir(os.path.join(folder, "real"))
        os.symlink("real/out.bin", out)
    if flavour in ("old", "link"):
        with open(real, "wb") as fh:
            fh.write(OLD)
    pid = os.fork()
    if pid == 0:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        count = [0]

        def profile(frame, event, arg):
            if frame.f_code.co_filename == atomic.__file__:
                count[0] += 1
                if count[0] == step:
                    os.kill(os.getpid(), sig)

        sys.setprofile(profile)
        try:
            atomic.write_atomic(out, NEW, fsync=True)
        except KeyboardInterrupt:
            os._exit(130)
        sys.setprofile(None)
        os._exit(0 if count[0] < step else 3)  # 3: the signal was sent and lost
    _, status = os.waitpid(pid, 0)
    listing = sorted(os.path.relpath(os.path.join(r, n), folder)
                     for r, ds, fs in os.walk(folder) for n in fs + ds)
    content = open(real, "rb").read() if os.path.exists(real) else None
    kind = {OLD: "old", NEW: "new", None: "none"}.get(content, "partial")
    results.append([step, os.waitstatus_to_exitcode(status), listing, kind])
    if os.waitstatus_to_exitcode(status) == 0 or step > 1000:
        break
print(json.dumps(results))
"""


@pytest.mark.slow  # a child process per variant, killed at every write step
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("flavour", ["new", "old", "link"])
def test_a_signal_at_any_point_of_a_write_leaves_no_temporary_file(tmp_path, signame, flavour):
    proc = subprocess.run([sys.executable, "-c", _EVERY_POINT, str(tmp_path), signame, flavour],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    *interrupted, last = results
    expected_exit = -signal.SIGTERM if signame == "SIGTERM" else 130
    assert len(interrupted) > 40  # every point of the write was tried
    assert last[1:] == [0, ["out.bin"] if flavour != "link" else ["out.bin", "real", "real/out.bin"], "new"]
    before_rename = "none" if flavour == "new" else "old"
    final = ["out.bin"] if flavour != "link" else ["out.bin", "real", "real/out.bin"]
    for step, code, listing, kind in interrupted:
        assert code == expected_exit, (step, code)  # the signal always acted, never lost
        assert kind in (before_rename, "new"), (step, kind)  # never a partial file
        if kind == "none":
            assert listing == [], (step, listing)
        else:
            assert listing == final, (step, listing)  # no temporary file, the link kept
    kinds = [kind for _, _, _, kind in interrupted]
    # points on both sides of the rename were hit
    assert kinds[0] == before_rename and kinds[-1] == "new"
    assert "race condition" not in proc.stderr


# A writer made slow (a pause at every point inside ensemblekit.atomic), killed
# from outside at seeded random moments while it writes.
_SLOW_WRITER = r"""
import os, sys, time
from ensemblekit import atomic

target = sys.argv[1]

def profile(frame, event, arg):
    if frame.f_code.co_filename == atomic.__file__:
        time.sleep(0.002)

print("ready", flush=True)
sys.setprofile(profile)
atomic.write_atomic(target, b"new\n" * 100000)
sys.setprofile(None)
"""


@pytest.mark.slow  # twelve child processes killed mid-write
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_killed_from_outside_mid_write_leaves_old_or_new_file(tmp_path, sig):
    rng = random.Random(16)
    target = tmp_path / "out.csv"
    for _ in range(12):
        target.write_bytes(b"old\n")
        proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "ready\n"
        threading.Event().wait(rng.uniform(0.0, 0.25))
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert _entries(tmp_path) == ["out.csv"]
        assert target.read_bytes() in (b"old\n", b"new\n" * 100000)


# --------------------------------------------------------------------------- the command line


def _ensemblekit():
    exe = Path(sys.executable).parent / "ensemblekit"
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from ensemblekit.cli import main; main()"]


def _cli(*args, **kwargs):
    return subprocess.run(_ensemblekit() + [str(a) for a in args], capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "c45.ekm"
    done = _cli("fit", "c45", IRIS, "-o", path)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def expected_predictions(model):
    done = _cli("predict", model, IRIS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 151
    return done.stdout


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_predict_through_a_symlink(tmp_path, model, expected_predictions):
    (tmp_path / "store").mkdir()
    (tmp_path / "work").mkdir()
    target = tmp_path / "store" / "p.csv"
    target.write_text("stale\n")
    os.symlink("../store/p.csv", tmp_path / "work" / "p.csv")
    done = _cli("predict", model, IRIS, "-o", tmp_path / "work" / "p.csv")
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "")
    assert target.read_text() == expected_predictions
    assert os.path.islink(tmp_path / "work" / "p.csv")
    assert os.readlink(tmp_path / "work" / "p.csv") == "../store/p.csv"
    assert _entries(tmp_path / "store") == ["p.csv"] and _entries(tmp_path / "work") == ["p.csv"]


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_fit_through_a_symlink(tmp_path, model):
    (tmp_path / "models").mkdir()
    os.symlink("models/latest.ekm", tmp_path / "link.ekm")  # dangling: the model is created
    done = _cli("fit", "c45", IRIS, "-o", tmp_path / "link.ekm")
    assert done.returncode == 0, done.stderr
    assert os.path.islink(tmp_path / "link.ekm")
    assert (tmp_path / "models" / "latest.ekm").read_bytes() == model.read_bytes()  # same seed, same bytes
    assert _entries(tmp_path) == ["link.ekm", "models"] and _entries(tmp_path / "models") == ["latest.ekm"]
    # and again, now replacing the file behind the link
    done = _cli("fit", "c45", IRIS, "-o", tmp_path / "link.ekm")
    assert done.returncode == 0 and os.path.islink(tmp_path / "link.ekm")
    assert _entries(tmp_path / "models") == ["latest.ekm"]


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_long_non_ascii_names_are_written_or_refused_before_work(tmp_path, model,
                                                                     expected_predictions):
    if _name_max(tmp_path) != 255:
        pytest.skip("needs a file system with 255-byte names")
    for name in ("é" * 120 + ".csv", "€" * 83 + "ab.csv", _LONGEST):  # 244, 255, 254 bytes
        done = _cli("predict", model, IRIS, "-o", tmp_path / name)
        assert (done.returncode, done.stderr) == (0, ""), name
        assert (tmp_path / name).read_text() == expected_predictions
    done = _cli("fit", "c45", IRIS, "-o", tmp_path / ("é" * 125 + ".ekm"))
    assert done.returncode == 0, done.stderr
    # one byte more: refused before the data is even read (it does not exist)
    done = _cli("fit", "c45", tmp_path / "no-such.arff", "-o", tmp_path / ("é" * 126 + ".ekm"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"ensemblekit: error: --output {tmp_path / ('é' * 126 + '.ekm')}: its name is 256 bytes "
        "long; the file system allows at most 255"]
    assert len(_entries(tmp_path)) == 4  # three predictions and a model: no temporary file


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_link_into_a_missing_folder_is_refused_before_work(tmp_path, model):
    os.symlink("gone/p.csv", tmp_path / "p.csv")
    done = _cli("predict", model, IRIS, "-o", tmp_path / "p.csv")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"ensemblekit: error: --output {tmp_path / 'p.csv'}: links to {tmp_path / 'gone' / 'p.csv'}, "
        f"whose folder {tmp_path / 'gone'} does not exist"]
    done = _cli("fit", "c45", IRIS, "-o", tmp_path / "p.csv")
    assert (done.returncode == 2 and len(done.stderr.splitlines()) == 1
            and "gone does not exist" in done.stderr)
    assert _entries(tmp_path) == ["p.csv"]


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_predict_into_a_fifo(tmp_path, model, expected_predictions):
    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    thread, chunks = _read_fifo_in_thread(fifo)
    done = _cli("predict", model, IRIS, "-o", fifo, timeout=120)
    thread.join(timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert chunks == [expected_predictions.encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and _entries(tmp_path) == ["p.fifo"]


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_predict_to_a_descriptor_link(tmp_path, model, expected_predictions):
    # a private stand-in for /dev/stdout, so a broken write can only replace our own link
    os.symlink("/proc/self/fd/1", tmp_path / "stdout")
    if not os.path.exists(tmp_path / "stdout"):
        pytest.skip("no /proc/self/fd on this system")
    done = _cli("predict", model, IRIS, "-o", tmp_path / "stdout")  # stdout is a pipe here
    assert (done.returncode, done.stderr, done.stdout) == (0, "", expected_predictions)
    with open(tmp_path / "out.txt", "wb") as fh:  # stdout is a regular file: appended to it
        fh.write(b"header\n")
        fh.flush()
        done = subprocess.run(_ensemblekit() + ["predict", str(model), IRIS, "-o", str(tmp_path / "stdout")],
                              stdout=fh, stderr=subprocess.PIPE, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "out.txt").read_text() == "header\n" + expected_predictions
    assert os.readlink(tmp_path / "stdout") == "/proc/self/fd/1"


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_dev_null_stays_a_device(tmp_path, model):
    # First on a private null device: if the in-place path were broken, this
    # fails here and the machine's /dev/null is never handed to the code.
    private = _private_device(tmp_path, "null", 3)
    done = _cli("predict", model, IRIS, "-o", private)
    assert (done.returncode, done.stderr) == (0, "")
    assert stat.S_ISCHR(os.lstat(private).st_mode) and _entries(tmp_path) == ["null"]
    before = os.lstat("/dev/null")
    assert stat.S_ISCHR(before.st_mode)
    done = _cli("predict", model, IRIS, "-o", "/dev/null")
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "")
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_full_device_is_one_line_and_exit_2(tmp_path, model):
    private = _private_device(tmp_path, "full", 7)  # first a private /dev/full, as above
    done = _cli("predict", model, IRIS, "-o", private)
    assert done.returncode == 2 and stat.S_ISCHR(os.lstat(private).st_mode) and _entries(tmp_path) == ["full"]
    if not os.path.exists("/dev/full"):
        pytest.skip("this system has no /dev/full")
    before = os.lstat("/dev/full")
    for args in (["predict", model, IRIS, "-o", "/dev/full"], ["fit", "c45", IRIS, "-o", "/dev/full"],
                 ["cluster", "kmeans", IRIS, "-k", "3", "--labels-out", "/dev/full"]):
        done = _cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.splitlines() == [
            "ensemblekit: error: no space left on device writing /dev/full"], args
    after = os.lstat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_plot_to_a_full_device_names_it(tmp_path):
    from ensemblekit.plots import PlotError, _write_bytes_atomic

    private = _private_device(tmp_path, "full", 7)
    with pytest.raises(PlotError, match=f"^no space left on device writing {private}$"):
        _write_bytes_atomic(private, b"\x89PNG")


@pytest.mark.slow  # whole ensemblekit processes
def test_cli_output_to_a_folder_or_socket_is_refused(tmp_path, model):
    done = _cli("predict", model, IRIS, "-o", tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"ensemblekit: error: --output {tmp_path}: is a folder"]
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "s"))
        done = _cli("fit", "c45", IRIS, "-o", tmp_path / "s")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"ensemblekit: error: --output {tmp_path / 's'}: is not a regular file, a device or a pipe"]
