"""The CLI's stdout/stderr/output-file destinations: closed streams, pipes, atomic files.

Everything the ``ensemblekit`` command needs to write safely: one-line messages
on stderr with control characters escaped, standard output that may be closed,
full or piped into ``head``, rich consoles for tables, and output files written
atomically after checking, before any work, that they can be. Only the command
line uses this module; what the text says is :mod:`ensemblekit.report`'s (for
people) or :mod:`ensemblekit.writers`'s (for programs).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
from pathlib import Path

import typer

from ensemblekit.api import UsageError


def err(message: str) -> None:
    """One line on stderr, ``ensemblekit: MESSAGE``, with control characters escaped.

    A message may quote a name from a file; :func:`ensemblekit.report.printable`
    keeps its escape sequences from reaching the terminal.
    """
    from ensemblekit.report import printable

    typer.echo(f"ensemblekit: {printable(message)}", err=True)


def one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` for the command line: ``ensemblekit: warning: MESSAGE`` on one
    line of stderr (white space folded, control characters escaped), nothing else."""
    from ensemblekit.report import printable

    if sys.stderr is None:
        return
    text = " ".join(str(message).split())
    sys.stderr.write(f"ensemblekit: warning: {printable(text)}\n")


#: ``ensemblekit --quiet``: notes are not printed (errors still are).
_QUIET = {"on": False}


def set_quiet(quiet: bool) -> None:
    """Silence (or not) every later :func:`note` of this process (``--quiet``)."""
    _QUIET["on"] = bool(quiet)


#: The values of ``--progress``: a bar on a terminal and lines elsewhere, always a bar,
#: always lines, or nothing.
PROGRESS_MODES = ("auto", "bar", "lines", "none")

#: Least number of seconds between two progress lines (``--progress lines``).
PROGRESS_INTERVAL = 5.0

#: How this process shows progress (set once by the root options): the mode, the command
#: that names the lines, the timings recorded for ``--verbose`` (None: not asked for)
#: and when the command started.
_RUN = {"progress": "auto", "command": "ensemblekit", "timings": None, "started": None}


def set_progress(mode: str, command: str | None) -> None:
    """Show the progress of the later work of ``command`` as ``mode`` (one of
    :data:`PROGRESS_MODES`; ``auto`` shows nothing with ``--quiet``)."""
    _RUN["progress"] = mode
    _RUN["command"] = command or "ensemblekit"


def clock_text(seconds: float) -> str:
    """``M:SS`` (``H:MM:SS`` from one hour on), as rich's progress bar writes a time."""
    minutes, secs = divmod(max(0, round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressLines:
    """Progress of ``total`` steps as lines of text, at most one every ``interval`` seconds.

    ``compare: 120/400 units (30%), 0:12 elapsed, ETA 0:28``: what a CI log or a file can
    hold, where a bar that redraws itself cannot be read. A line is written when a step is
    done at least ``interval`` seconds after the previous line (or the start), so a run
    shorter than ``interval`` writes none; one that wrote any ends with a line of the whole
    total, without an ETA. The ETA assumes the steps left take as long as those done.

    Parameters
    ----------
    total : int
        Steps of the work (>= 1).
    unit : str
        What a step is, plural (``"units"``).
    label : str
        What the line starts with (the command's name).
    write : callable
        Receives each line, without its newline.
    clock : callable, default=time.monotonic
        Seconds from an arbitrary origin; tests give a fake one.
    interval : float, optional
        Default: :data:`PROGRESS_INTERVAL` as it is when the object is made.
    """

    def __init__(self, total: int, unit: str, label: str, write, *, clock=None,
                 interval: float | None = None):
        import time

        self.total, self.unit, self.label, self.write = max(1, total), unit, label, write
        self.clock = clock or time.monotonic
        self.interval = PROGRESS_INTERVAL if interval is None else interval
        self.done = 0
        self.written = 0
        self._start = self._last = self.clock()
        self._lock = threading.Lock()

    def advance(self, steps: int = 1) -> None:
        """``steps`` more steps are done; write a line if ``interval`` seconds have passed."""
        with self._lock:
            self.done = min(self.total, self.done + steps)
            now = self.clock()
            if now - self._last >= self.interval and self.done < self.total:
                self._say(now)

    def finish(self) -> None:
        """The work is over: a last line of the whole total, if any line was written."""
        with self._lock:
            if self.written:
                self.done = self.total
                self._say(self.clock())

    def line(self, now: float) -> str:
        """The line that tells, at ``now``, how far the work is."""
        elapsed = now - self._start
        text = (f"{self.label}: {self.done}/{self.total} {self.unit} "
                f"({100 * self.done // self.total}%), {clock_text(elapsed)} elapsed")
        if 0 < self.done < self.total:
            text += f", ETA {clock_text(elapsed * (self.total - self.done) / self.done)}"
        return text

    def _say(self, now: float) -> None:
        self._last = now
        self.written += 1
        self.write(self.line(now))


def progress(total: int, description: str):
    """How the command shows the progress of ``total`` steps of ``description`` (the
    ``progress`` argument of the API): a context manager yielding ``advance(steps=1)``, or
    None for nothing to show.

    As ``--progress`` says: a rich bar on stderr (``bar``, and ``auto`` when stderr is a
    terminal), lines on stderr (``lines``, and ``auto`` elsewhere; see
    :class:`ProgressLines`) or nothing (``none``, ``auto`` with ``--quiet``, and work of one
    step).
    """
    mode = _progress_mode()
    if mode == "none" or total <= 1:
        return contextlib.nullcontext(None)
    if mode == "bar":
        return _bar(total, description)
    reporter = ProgressLines(total, description, _RUN["command"],
                             lambda line: typer.echo(line, err=True))

    @contextlib.contextmanager
    def lines():
        yield reporter.advance
        reporter.finish()

    return lines()


def bar_progress(total: int, description: str):
    """As :func:`progress`, but never lines: for work whose steps are not the whole job
    (``predict`` reports each chunk of rows on its own)."""
    if _progress_mode() != "bar" or total <= 1:
        return contextlib.nullcontext(None)
    return _bar(total, description)


def _progress_mode() -> str:
    """``--progress`` with ``auto`` decided: by ``--quiet`` and whether stderr is a terminal."""
    mode = _RUN["progress"]
    if mode != "auto":
        return mode
    if _QUIET["on"] or sys.stderr is None:
        return "none"
    return "bar" if sys.stderr.isatty() else "lines"


@contextlib.contextmanager
def _bar(total: int, description: str):
    """A rich progress bar on stderr (drawn as on a terminal even when it is none)."""
    from rich import progress as rp
    from rich.console import Console

    console = Console(stderr=True, force_terminal=True if not sys.stderr.isatty() else None)
    bar = rp.Progress(rp.TextColumn("{task.description}"), rp.BarColumn(),
                      rp.MofNCompleteColumn(), rp.TimeElapsedColumn(), rp.TextColumn("ETA"),
                      rp.TimeRemainingColumn(), console=console, transient=True)
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda steps=1: bar.advance(task, steps)


def start_clock() -> None:
    """The command starts now: the origin of the total that :func:`say_timings` prints."""
    import time

    _RUN["started"] = time.perf_counter()


def keep_timings(timings: dict | None) -> None:
    """``--verbose``: ``timings`` is the dict the API fills with the seconds of each stage
    of the command (see :func:`ensemblekit.api.timings`), printed by :func:`say_timings`."""
    _RUN["timings"] = timings


def say_timings() -> None:
    """``--verbose``: one line on stderr with the seconds of each stage of the command and
    its total wall time, ``timings: reading 0.02 s, fitting 1.30 s, total 1.45 s``."""
    import time

    spent = _RUN["timings"]
    if spent is None or _RUN["started"] is None:
        return
    parts = [f"{stage} {seconds:.3f} s" for stage, seconds in spent.items()]
    parts.append(f"total {time.perf_counter() - _RUN['started']:.3f} s")
    typer.echo(f"timings: {', '.join(parts)}", err=True)


def note(message: str) -> None:
    """A note on stderr (control characters escaped, as in :func:`err`); nothing with
    ``--quiet`` (:func:`set_quiet`)."""
    if _QUIET["on"]:
        return
    from ensemblekit.report import printable

    typer.echo(printable(message), err=True)


class ClosedStdout(io.TextIOBase):
    """Stands in for ``sys.stdout`` when file descriptor 1 was closed before we started.

    Python leaves ``sys.stdout`` as None then. This object makes any attempt to
    write output a usage error ("standard output is closed", exit code 2) instead
    of an ``AttributeError``, including the help and version text that click and
    rich print themselves. It reads as no terminal.
    """

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text) -> int:
        raise UsageError("standard output is closed")


class GuardedStdout(io.FileIO):
    """File descriptor 1 under ``sys.stdout``, turning a failed write into one usage error.

    A write that fails for any reason but a closed pipe (``ENOSPC`` on ``/dev/full`` or
    a full disk, ``EDQUOT``, ``EIO``, ``EFBIG``) raises :class:`UsageError` with the line
    the user reads, ``no space left on device writing standard output`` or ``cannot
    write standard output: REASON``, for every writer alike (our rows and tables, rich,
    click's help and version text). Descriptor 1 then points at ``/dev/null``, so what
    is still buffered is dropped and the interpreter's last flush cannot fail again. A
    closed pipe stays a :class:`BrokenPipeError` (the reader left: exit code 0).
    """

    def write(self, data) -> int:
        try:
            return super().write(data)
        except (BrokenPipeError, BlockingIOError, InterruptedError):
            raise
        except OSError as exc:
            from ensemblekit.atomic import write_error_message

            stdout_to_devnull()
            raise UsageError(write_error_message("standard output", exc)) from None


def guard_standard_streams() -> None:
    """Make closed or failing standard streams harmless; called first by :func:`main`.

    A descriptor 0, 1 or 2 that was closed when the process started gets
    ``/dev/null``, so no file this process opens later can take its number (and
    so be written by a child process or a C library that prints). Then:
    ``sys.stdout`` becomes a :class:`ClosedStdout`, ``sys.stderr`` writes to
    ``/dev/null`` (messages are lost; exit codes still tell), and ``sys.stdin``
    stays None, which :func:`ensemblekit.api.load_data` reports only when a command reads ``'-'``.
    Open ones are written through :class:`GuardedStdout` and :class:`GuardedStderr`:
    a failed write to stdout is one usage error, one to stderr loses the message.
    """
    closed = [fd for fd in (0, 1, 2) if not fd_is_open(fd)]
    for fd in closed:
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        os.set_inheritable(fd, True)
    if sys.stdout is None:
        sys.stdout = ClosedStdout()
    else:
        _guard_writes("stdout", 1, GuardedStdout)
    if sys.stderr is None and 2 in closed:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    else:
        _guard_writes("stderr", 2, GuardedStderr)


class GuardedStderr(io.FileIO):
    """File descriptor 2 under ``sys.stderr``: a message that cannot be written is dropped.

    When stderr fails (a full disk, ``/dev/full``, a reader that left), descriptor 2
    then points at ``/dev/null`` and every later message is lost too, as when stderr
    is closed; the exit code still tells what happened.
    """

    def write(self, data) -> int:
        try:
            return super().write(data)
        except (BlockingIOError, InterruptedError):
            raise
        except OSError:
            _point_at_devnull(2)
            return len(memoryview(data).cast("B"))


def _guard_writes(name: str, fd: int, raw_class: type[io.FileIO]) -> None:
    """Put ``raw_class`` under the interpreter's own ``sys.NAME`` (same encoding, error
    handler and buffering); a stream put there by someone else is left alone."""
    out = getattr(sys, name)
    if out is not getattr(sys, f"__{name}__") or not isinstance(out, io.TextIOWrapper):
        return
    try:
        if out.fileno() != fd:
            return
        out.flush()
    except (OSError, ValueError):
        return
    raw = raw_class(fd, "w", closefd=False)
    setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(raw), encoding=out.encoding,
                                        errors=out.errors, newline="\n",
                                        line_buffering=out.line_buffering,
                                        write_through=out.write_through))


class Terminated(BaseException):
    """SIGTERM arrived (see :func:`sigterm_stops_the_command`): the command stops as on Ctrl-C."""


def _terminate(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise Terminated(signum)


@contextlib.contextmanager
def sigterm_stops_the_command():
    """In the block, SIGTERM stops the command as Ctrl-C does (used by :func:`main`).

    The signal raises :class:`Terminated` in the main thread, so what is under way unwinds:
    a temporary output file is removed (:mod:`ensemblekit.atomic` holds the signal back
    while one is renamed), worker processes are ended by joblib, and the command exits
    with code 143 (:func:`signal_exit_code`) rather than dying by the signal, which would
    leave loky's shared-memory folders to its resource tracker. A SIGTERM that the
    process was started with ignored stays ignored; the handler before is put back after.
    """
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def signal_exit_code(exc: BaseException) -> int | None:
    """The exit code of a command that ``exc`` stopped because of a signal, after saying so.

    Parameters
    ----------
    exc : BaseException
        What escaped the command.

    Returns
    -------
    int or None
        130 after ``ensemblekit: interrupted`` for Ctrl-C (:class:`KeyboardInterrupt`),
        143 after ``ensemblekit: terminated`` for SIGTERM (:class:`Terminated`), also when
        they come wrapped in another error (see :func:`ensemblekit.errors.interruption`);
        None for anything else. Warnings are silenced from then on: the pools and files
        torn down on the way out have nothing to say that the user needs.
    """
    import warnings

    from ensemblekit.errors import interruption

    stop = interruption(exc)
    if not isinstance(stop, (KeyboardInterrupt, Terminated)):
        return None
    err("interrupted" if isinstance(stop, KeyboardInterrupt) else "terminated")
    # what joblib says while its pool is torn down (a folder its workers still held) is noise
    warnings.simplefilter("ignore")
    return 130 if isinstance(stop, KeyboardInterrupt) else 128 + signal.SIGTERM


def fd_is_open(fd: int) -> bool:
    """Whether file descriptor ``fd`` is open in this process."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def require_stdout() -> None:
    """Refuse, before any work, a command whose output would go to a closed standard output."""
    if sys.stdout is None or isinstance(sys.stdout, ClosedStdout):
        raise UsageError("standard output is closed")


def quiet_exit_on_closed_pipe() -> None:
    """The reader (e.g. ``head``) closed stdout: stop quietly with exit code 0."""
    stdout_to_devnull()
    raise typer.Exit(0)


def stdout_to_devnull() -> None:
    """Point file descriptor 1 at ``/dev/null``, so flushing what is left at exit cannot fail."""
    _point_at_devnull(1)


def _point_at_devnull(fd: int) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def stdout_console():
    """A rich console on stdout: no markup guessing, no emoji codes, quiet exit on a closed pipe."""
    from rich.console import Console

    require_stdout()

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            quiet_exit_on_closed_pipe()

    if sys.stdout.isatty():
        return _PipeConsole(file=sys.stdout, soft_wrap=False, highlight=False, emoji=False)
    return _PipeConsole(file=TrimmedLines(sys.stdout), width=pipe_width(), soft_wrap=False,
                        force_terminal=False, highlight=False, emoji=False)


#: Width of the tables written to a pipe or a file when ``COLUMNS`` does not say one: wide
#: enough that a comparison of many algorithms keeps one line per row, which a file or a
#: CI log can hold.
PIPE_WIDTH = 200


def pipe_width(environ=None) -> int:
    """How wide tables are where stdout is no terminal: ``COLUMNS`` when it is a whole
    number >= 1 (as rich and click read it), else :data:`PIPE_WIDTH`."""
    value = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) >= 1 else PIPE_WIDTH


class TrimmedLines(io.TextIOBase):
    """A text stream writing to ``out`` without the spaces at the end of each line.

    Rich pads every line of a table, and of text beside one, to the console's width; on a
    terminal that cannot be seen, in a file or a pipe it is noise that ``diff`` and
    editors show. Spaces are held back until the line goes on (and then written) or ends
    (and then dropped), so a line split over several writes is trimmed alike.
    """

    def __init__(self, out):
        super().__init__()
        self._out = out
        self._spaces = ""

    def write(self, text: str) -> int:
        kept = []
        for index, piece in enumerate(text.split("\n")):
            if index:
                kept.append("\n")
                self._spaces = ""
            body = piece.rstrip(" ")
            if body:
                kept.append(self._spaces + body)
                self._spaces = ""
            self._spaces += piece[len(body):]
        self._out.write("".join(kept))
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self._out, "encoding", None) or "utf-8"


def rich_text(renderable) -> str:
    """What ``renderable`` prints on a stdout that is no terminal, no line padded at its end."""
    console = stdout_console()
    with console.capture() as captured:
        console.print(renderable)
    return "".join(f"{line.rstrip()}\n" for line in captured.get().splitlines())


def write_stdout(text: str) -> None:
    """Write to stdout; a reader that closed the pipe early (``| head``) ends us quietly."""
    require_stdout()
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_exit_on_closed_pipe()


def check_destination(path: Path | None, option: str) -> None:
    """Refuse, before any work, an output path that cannot be written.

    Judged after following symbolic links (see
    :func:`ensemblekit.atomic.destination_problem`): the folder of the file a
    link points to must exist and be writable; a device or a named pipe is
    fine; a folder or a socket is refused.
    """
    if path is None:
        return
    from ensemblekit.atomic import destination_problem

    problem = destination_problem(path)
    if problem is not None:
        raise UsageError(f"{option} {path}: {problem}")


def write_file(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` all at once (see :func:`ensemblekit.atomic.write_atomic`).

    A regular file is replaced atomically, a symbolic link's target is written
    and the link kept, a device or named pipe is written in place.

    Raises
    ------
    UsageError
        If the destination is a folder or a socket, its folder is missing or
        not writable, or the write fails (no space left on the device); no
        temporary file is left behind and an existing file is left as it was.
    """
    from ensemblekit.atomic import write_atomic, write_error_message

    try:
        write_atomic(path, text.encode("utf-8"))
    except OSError as exc:  # a full disk reads "no space left on device writing PATH"
        raise UsageError(write_error_message(path, exc)) from None


def emit(text: str, output: Path | None) -> None:
    """Send machine output to ``output`` (atomically) or to stdout."""
    if output is None:
        write_stdout(text)
    else:
        write_file(output, text)


def emit_parts(parts, output: Path | None) -> None:
    """Send machine output made of pieces (an iterable of str) to ``output`` or stdout, piece by piece.

    To stdout, each piece is written and flushed before the next is made, so a
    reader sees the first rows at once (rows written before an error stay
    written). To a file, the pieces go to a temporary file that replaces
    ``output`` only when the last piece is written; an error on the way leaves
    ``output`` as it was (see :func:`ensemblekit.atomic.writing`).
    """
    if output is None:
        for text in parts:
            write_stdout(text)
        return
    from ensemblekit.atomic import write_error_message, writing

    try:
        with writing(output) as handle:
            for text in parts:
                handle.write(text.encode("utf-8"))
    except OSError as exc:
        raise UsageError(write_error_message(output, exc)) from None


def left_by_reader(exc: SystemExit) -> bool:
    """Whether ``exc`` is rich's exit after the reader of stdout closed the pipe: rich (typer's
    ``--help``) points stdout at /dev/null and raises ``SystemExit(1)`` from the BrokenPipeError."""
    return exc.code == 1 and isinstance(exc.__context__, BrokenPipeError)


def commands_for(app, args: list[str]) -> list:
    """The registered commands to build for ``args``: only the one it names, when it names one.

    Typer builds every registered command's parameters before it runs one: a fifth of a
    ``predict`` run. The command behaves exactly as among all of them; anything else (no
    command, ``--help``, a misspelt name) keeps the whole list and the root's messages.
    """
    rest = [a for a in args if a not in ("--debug",)]
    if not rest or rest[0].startswith("-"):
        return app.registered_commands
    chosen = [c for c in app.registered_commands
              if (c.name or c.callback.__name__.replace("_", "-")) == rest[0]]
    return chosen if len(chosen) == 1 else app.registered_commands
