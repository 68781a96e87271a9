"""Writing output files all at once or not at all, and never over what is not a file.

Every file ensemblekit writes (models, predictions, scores, labels, graphs,
plots) goes through :func:`write_atomic`. What it does depends on what the
destination is:

* a regular file, or nothing yet: the data goes to a temporary file
  ``.ensemblekit-HHHHHHHHHHHH-RRRRRRRRRRRR.tmp`` in the same folder (a short
  hash of the destination's name and random characters: 42 bytes whatever the
  name, so any name the file system accepts can be written), which is then
  renamed over the destination, so readers see the old content or the new one,
  never a part; a failed or interrupted write leaves the old file as it was
  and no temporary file;
* a symbolic link (or a chain of them): the file the link finally points to is
  written as above, in its own folder, and the link stays a link;
* a character or block device or a named pipe (``/dev/stdout``, ``/dev/null``,
  a FIFO): written in place, as a shell redirection would, with no temporary
  file and no rename, so the device entry itself is never replaced (a FIFO
  that no process reads is given up after a wait, see :mod:`ensemblekit.fifo`);
  a link to an open descriptor (``/dev/stdout`` when the shell sent it to a
  file) writes to that descriptor's file in place too;
* a folder, a socket or anything else: refused with :class:`OSError`.

:func:`destination_problem` answers, before any work, whether a path can be
written this way, and :func:`write_error_message` turns a failed write into
the one line the user reads.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import signal
import stat
import threading
from pathlib import Path

from ensemblekit.errors import interruption
from ensemblekit.fifo import open_for_writing

#: Links followed at most before giving up, like the kernel's own limit.
_MAX_LINKS = 40
#: Bytes handed to one ``write`` call when writing a device or a pipe in place.
_CHUNK = 1 << 20
#: Signals whose arrival is held back while a temporary file exists.
_DEFERRED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
#: errno values that mean the device or the user's quota is full.
_NO_SPACE = frozenset(code for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None)) if code is not None)
#: Hex digits of the hash of the destination's name in a temporary file's name.
_NAME_HASH = 12
#: Folders whose links name open descriptors rather than paths (``/dev/fd`` leads here too).
_DESCRIPTOR_FOLDER = re.compile(r"/proc/[^/]+(/task/[^/]+)?/fd\Z")
#: Why a socket (or any entry that is no file, device or pipe) is refused.
_NOT_WRITABLE_KIND = "is not a regular file, a device or a pipe"


def resolve_destination(path: str | os.PathLike) -> Path:
    """Follow ``path`` through symbolic links to the entry that would be replaced.

    Only links are followed; the result may not exist (a new file, or the
    target of a dangling link), and its folder may not exist either.

    Parameters
    ----------
    path : str or os.PathLike
        The destination as the user gave it.

    Returns
    -------
    pathlib.Path
        ``path`` itself when it is not a link; otherwise the path the last
        link of the chain points to (a relative link is taken relative to the
        folder holding it).

    Raises
    ------
    OSError
        ``ELOOP`` when more than 40 links follow each other (a loop), or any
        error of reading an entry other than its absence (e.g. a folder on
        the way that cannot be searched).
    """
    return _follow(path)[0]


def destination_problem(path: str | os.PathLike) -> str | None:
    """Say why ``path`` cannot be written by :func:`write_atomic`, or ``None`` if it can.

    Meant for checking an output option before any long work starts. The
    answer is a lower-case phrase to follow ``"<path>: "``, for example
    ``"folder out does not exist"``, ``"is a folder"``, or for a link
    ``"links to /data/x.csv, whose folder /data does not exist"``.

    Parameters
    ----------
    path : str or os.PathLike
        The destination as the user gave it.

    Returns
    -------
    str or None
        ``None`` when the destination is a writable device, pipe or open
        descriptor (``/dev/stdout``), or a regular file or a new name in an
        existing writable folder (through any links); otherwise what is wrong.
    """
    try:
        real, _ = _follow(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            refused = exc.filename if exc.filename is not None else path
            same = os.fspath(refused) == os.fspath(path)
            return ("" if same else f"links to {refused}, where ") + _too_long(refused)
        return _reason(exc).lower()
    via = f"links to {real}, " if os.fspath(real) != os.fspath(path) else ""
    try:
        kind, where, _ = _classify(path)
    except IsADirectoryError:
        return f"{via}which is a folder" if via else "is a folder"
    except OSError as exc:
        what = _NOT_WRITABLE_KIND if exc.errno == errno.EINVAL else f"cannot be reached: {_reason(exc)}"
        return f"{via}which {what}" if via else what
    if kind != "file":  # written in place: the entry must let us write
        if os.access(path, os.W_OK):
            return None
        if not os.path.lexists(real):  # a descriptor link names no path, e.g. "pipe:[1234]"
            via = ""
        return f"{via}which is not writable" if via else "is not writable"
    folder = where.parent
    whose = f"{via}whose " if via else ""
    if not folder.is_dir():
        if folder.exists():
            return f"{via}but {folder} is not a folder" if via else f"{folder} is not a folder"
        return f"{whose}folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"{whose}folder {folder} is not writable"
    return None


def write_atomic(path: str | os.PathLike, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` completely or not at all, replacing only regular files.

    Parameters
    ----------
    path : str or os.PathLike
        Destination. Symbolic links are followed to the file they point to
        (created if missing; its folder must exist), and the links are kept.
        A regular file is replaced through a temporary file in its folder and
        a rename. A character or block device or a named pipe is written in
        place (a pipe waits for a reader, as a shell redirection does). A
        link to an open descriptor (``/dev/stdout``, ``/dev/fd/N``,
        ``/proc/self/fd/N``) writes to what the descriptor is open on, in
        place; when that is a regular file, the data are appended, as they
        would be by writing to the descriptor itself.
    data : bytes
        The whole content (any bytes-like object).
    fsync : bool, default=False
        Flush the data to disk before the rename, and the folder after it
        (model files), so a crash of the machine cannot leave an empty file
        under the destination's name. Ignored when writing in place.

    Raises
    ------
    IsADirectoryError
        If the destination (after links) is a folder.
    OSError
        If it is a socket or another kind of entry that is not a regular file,
        a device or a pipe (``EINVAL``); if links loop (``ELOOP``); if the
        folder is missing or not writable; or if the write, the flush or the
        rename fails (for example ``ENOSPC`` on a full disk, or on
        ``/dev/full``). For a regular file, the temporary file is then removed
        and the destination is left as it was; a device or pipe may have
        received part of the data.

    Notes
    -----
    Permissions. A new file gets the usual ``0o666`` less the umask. A
    replaced file keeps its permission bits (without set-user-ID, set-group-ID
    and sticky bits) and, where the process may set them, its owner and
    group, so ``-o`` over an existing file changes its content only. The
    rename gives the destination a new inode: other hard links to the old
    file keep the old content.

    Signals. From the creation of the temporary file to its rename or removal,
    ``SIGINT``, ``SIGTERM`` and ``SIGHUP`` are held back (when called from the
    main thread): their handlers run right after that window, when the folder
    holds the old file or the complete new one and no temporary file. A
    ``SIGTERM`` with its default action then ends the process; a ``SIGINT``
    then raises :class:`KeyboardInterrupt`. Called from another thread, the
    window is guarded by removing the temporary file on any exception only.
    ``SIGKILL`` cannot be held back and may leave a temporary file. Writing in
    place is not held back, so a pipe that nobody reads can be interrupted.
    """
    kind, real, info = _classify(path)
    if kind != "file":
        if _write_in_place(real, data, append=kind == "descriptor"):
            return
        real, _ = _follow(path)  # the device was swapped for a regular file since we looked
        info = _stat_or_none(real)
    _replace_file(real, data, fsync=fsync, old=info)


def write_error_message(path: str | os.PathLike, exc: OSError, what: str = "") -> str:
    """The one line that tells the user a write failed.

    Parameters
    ----------
    path : str or os.PathLike
        The destination as the user gave it (shown as given).
    exc : OSError
        The error :func:`write_atomic` raised.
    what : str, default=""
        What was written, e.g. ``"model file"``; empty for plain outputs.

    Returns
    -------
    str
        ``"no space left on device writing PATH"`` for a full device or quota
        (``ENOSPC``, ``EDQUOT``); otherwise ``"cannot write [WHAT ]PATH: REASON"``
        with the system's reason, on one line.
    """
    shown = os.fspath(path)
    if out_of_space(exc):
        return f"no space left on device writing {shown}"
    subject = f"{what} {shown}" if what else shown
    return f"cannot write {subject}: {_reason(exc)}"


def out_of_space(exc: OSError) -> bool:
    """Whether a failed write means the device or the user's quota is full.

    Parameters
    ----------
    exc : OSError

    Returns
    -------
    bool
        True for ``ENOSPC`` and ``EDQUOT``.
    """
    return exc.errno in _NO_SPACE


# --------------------------------------------------------------------------- private helpers
def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return " ".join(str(exc.strerror).split())
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _too_long(path) -> str:
    """Why the system refused ``path`` as too long: a name or the whole path, with the bound."""
    raw = os.fsencode(path)
    folder = os.path.dirname(os.path.abspath(raw)) or b"/"
    while not os.path.isdir(folder) and folder != os.path.dirname(folder):
        folder = os.path.dirname(folder)
    limits = {}
    for key, fallback in (("PC_NAME_MAX", 255), ("PC_PATH_MAX", 4096)):
        try:
            limits[key] = os.pathconf(folder, key)
        except (OSError, ValueError):
            limits[key] = fallback
    parts = raw.rstrip(b"/").split(b"/")
    longest = max(parts, key=len)
    if len(longest) > limits["PC_NAME_MAX"]:
        what = "its name" if longest is parts[-1] else "the name of a folder on its path"
        return (f"{what} is {len(longest)} bytes long; the file system allows at most "
                f"{limits['PC_NAME_MAX']}")
    return f"the path is {len(raw)} bytes long; the system allows at most {limits['PC_PATH_MAX']}"


def _is_special(mode: int) -> bool:
    """Entries written in place: character and block devices, named pipes."""
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)


def _stat_or_none(path):
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _follow(path):
    """``(last entry of the link chain, whether a descriptor link was on the way)``."""
    current = os.fspath(path)
    descriptor = False
    for _ in range(_MAX_LINKS + 1):
        try:
            info = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            return Path(current), descriptor
        if not stat.S_ISLNK(info.st_mode):
            return Path(current), descriptor
        folder = os.path.dirname(current)
        descriptor = descriptor or bool(_DESCRIPTOR_FOLDER.match(os.path.realpath(folder or ".")))
        current = os.path.join(folder, os.readlink(current))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(path))


def _classify(path):
    """How ``path`` gets written: ``(kind, path to use, stat or None)``.

    ``kind`` is ``"special"`` (device or pipe, in place through ``path``),
    ``"descriptor"`` (a regular file reached through a ``/proc/.../fd/N``
    link, appended in place through ``path``) or ``"file"`` (replaced
    atomically at the returned path, the end of the link chain).
    """
    shown = os.fspath(path)
    info = _stat_or_none(shown)  # the kernel follows every link, /proc's too
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), shown)
        if _is_special(info.st_mode):
            return "special", Path(shown), info
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, _NOT_WRITABLE_KIND, shown)
    real, descriptor = _follow(shown)
    if descriptor and info is not None:
        # Such a link names an open file, not a path: reading it gives text
        # like "/x (deleted)". Writing through it reaches the open file itself.
        return "descriptor", Path(shown), info
    return "file", real, info


def _write_in_place(target: Path, data, *, append: bool) -> bool:
    """Write through an ordinary open; ``False`` if a device turned out a regular file."""
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if append:
        flags |= os.O_APPEND
    fd = open_for_writing(target, flags)  # no O_CREAT, no O_TRUNC: nothing is created or cut
    try:
        if not append and stat.S_ISREG(os.fstat(fd).st_mode):
            return False  # swapped for a file since we looked: replace it atomically instead
        view = memoryview(data).cast("B")
        while view:
            written = os.write(fd, view[:_CHUNK])
            if written <= 0:
                raise OSError(errno.EIO, os.strerror(errno.EIO), os.fspath(target))
            view = view[written:]
    finally:
        os.close(fd)
    return True


def _replace_file(real: Path, data, *, fsync: bool, old) -> None:
    """Write a temporary file beside ``real`` and rename it over ``real``."""
    folder = real.parent
    with _signals_deferred():
        tmp = None
        try:
            fd, tmp = _create_temp(folder, real.name, private=old is not None)
            try:
                if old is not None:
                    _keep_owner_and_mode(fd, old)
                handle = os.fdopen(fd, "wb")
            except BaseException:
                os.close(fd)
                raise
            with handle:
                handle.write(data)
                if fsync:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(tmp, real)
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise
    if fsync:
        _sync_folder(folder)


def _create_temp(folder: Path, name: str, *, private: bool):
    """Create a new empty temporary file in ``folder``; return its descriptor and path.

    Its name is ``.ensemblekit-HHHHHHHHHHHH-RRRRRRRRRRRR.tmp``: the first 12 hex
    digits of the SHA-256 of ``name`` (the temporary files of one destination
    share them) and 12 random ones; never longer than 42 bytes, where a name
    built from ``name`` itself could pass the file system's limit (255 bytes)
    although ``name`` does not. ``private`` creates it readable by its owner
    only (its mode is set to the replaced file's next); otherwise with
    ``0o666`` less the umask, the mode of a new file.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    prefix = f".ensemblekit-{hashlib.sha256(os.fsencode(name)).hexdigest()[:_NAME_HASH]}-"
    for _ in range(100):
        tmp = folder / f"{prefix}{os.urandom(6).hex()}.tmp"
        try:
            return os.open(tmp, flags, 0o600 if private else 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", os.fspath(folder))


def _keep_owner_and_mode(fd: int, old) -> None:
    if hasattr(os, "fchown") and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(OSError):  # only allowed to root, or to a member of the group
            os.fchown(fd, old.st_uid, old.st_gid)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(old.st_mode) & 0o777)


def _sync_folder(folder: Path) -> None:
    """Make the rename durable; some file systems cannot sync a folder, which is no error."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _run_pending_handlers() -> None:
    """Let Python run the handlers of signals that already arrived, before handlers change.

    The C-level handler only marks a signal; CPython runs the Python handler
    at its next check, for instance when a Python function starts, and
    ``pthread_sigmask`` checks before it returns. Blocking no signal at all
    is just such a check.
    """
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, ())


def _raise_each(signals) -> None:
    """Raise every signal in turn, even when a handler raises (SIGINT's KeyboardInterrupt)."""
    if signals:
        try:
            signal.raise_signal(signals[0])
        finally:
            _raise_each(signals[1:])


@contextlib.contextmanager
def _signals_deferred():
    """Hold back SIGINT, SIGTERM and SIGHUP in the block; deliver them when it ends.

    While the block runs, these signals only get recorded (whatever thread the
    kernel hands them to: blocking them in the main thread alone would not do,
    since a signal with its default action kills the process from any thread
    that does not block it, e.g. a BLAS worker). Afterwards the previous
    handlers are put back and each recorded signal is raised again, so it acts
    as it would have, only later. Ignored signals stay ignored; signals whose
    handler was not installed from Python are left alone. Outside the main
    thread Python cannot change handlers, and the block runs unguarded.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def record(signum, frame):  # noqa: ARG001 - signal handler signature
        if signum not in caught:
            caught.append(signum)

    previous = {}
    try:
        _install(record, previous)
        yield
    finally:
        _run_pending_handlers()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _raise_each(caught)


def _install(handler, previous: dict) -> None:
    """Make ``handler`` handle each signal of ``_DEFERRED`` that is not ignored, recording the
    handler it replaces in ``previous`` (signals that cannot be set here are left alone)."""
    for signum in _DEFERRED:
        current = signal.getsignal(signum)
        if current is None or current == signal.SIG_IGN:
            continue
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError):  # not the main interpreter, or not allowed
            continue
        previous[signum] = current


class _Interrupted(BaseException):
    """A signal arrived while :func:`writing` streamed into its temporary file."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_interrupt():
    """Turn SIGINT, SIGTERM and SIGHUP into :class:`_Interrupted` in the block (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):  # noqa: ARG001 - signal handler signature
        raise _Interrupted(signum)

    previous = {}
    try:
        _install(interrupt, previous)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def writing(path: str | os.PathLike):
    """Write ``path`` piece by piece, completely or not at all, as :func:`write_atomic` does.

    For output too large to hold in memory (``predict`` on a large file): the
    block receives a binary file to write to. A regular file (or nothing yet)
    is written through a temporary file in its folder, renamed over the
    destination only when the block ends without an exception; on an
    exception, or on ``SIGINT``, ``SIGTERM`` or ``SIGHUP`` during the block,
    the temporary file is removed and the destination is left as it was (the
    signal then acts as it would have). Devices, named pipes and links to
    open descriptors are written in place, as by :func:`write_atomic`.

    Raises
    ------
    OSError
        As :func:`write_atomic`.
    """
    kind, real, info = _classify(path)
    if kind != "file":
        flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
        if kind == "descriptor":
            flags |= os.O_APPEND
        fd = open_for_writing(real, flags)
        if kind == "descriptor" or not stat.S_ISREG(os.fstat(fd).st_mode):
            with os.fdopen(fd, "wb") as handle:
                yield handle
            return
        os.close(fd)  # a device swapped for a regular file since we looked: replace it
        real, _ = _follow(path)
        info = _stat_or_none(real)
    tmp = None
    try:
        with _signals_interrupt():
            fd, tmp = _create_temp(real.parent, real.name, private=info is not None)
            try:
                if info is not None:
                    _keep_owner_and_mode(fd, info)
                handle = os.fdopen(fd, "wb")
            except BaseException:
                os.close(fd)
                raise
            with handle:
                yield handle
        with _signals_deferred():
            os.replace(tmp, real)
            tmp = None
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        stop = interruption(exc)  # the signal, or a SystemError numba raised from it
        if isinstance(stop, _Interrupted):
            signal.raise_signal(stop.signum)
            raise KeyboardInterrupt from None  # a handler that returned: stop here all the same
        raise
