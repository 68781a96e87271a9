"""The command line under hostile conditions (issue 16, items 5, 9, 11 and 12).

Closed standard streams (real processes: only a real process can start with a
file descriptor closed), exit code 2 with one line for usage mistakes, bounded
reading of a ``--resume`` journal, and names from files shown escaped.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ensemblekit import cli
from ensemblekit.report import printable, safe_text

from ektesting.support import run_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
IRIS = str(SAMPLE / "iris.arff")

ESC, BEL = "\x1b", "\x07"


def _ensemblekit() -> list[str]:
    exe = Path(sys.executable).parent / "ensemblekit"
    return [str(exe)] if exe.exists() else [sys.executable, "-c",
                                            "from ensemblekit.cli import main; main()"]


def _shell(args, redirect: str) -> subprocess.CompletedProcess:
    """Run ensemblekit ARGS under ``sh`` with ``redirect`` (e.g. ``>&-``) applied before exec."""
    script = f'exec "$@" {redirect}'
    return subprocess.run(["sh", "-c", script, "sh", *_ensemblekit(), *map(str, args)],
                          capture_output=True, text=True,
                          cwd=str(ROOT))


_main = run_main  # the console entry point in this process: (exit code, stdout, stderr)


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    assert lines[0].startswith("ensemblekit: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("model") / "iris.ekm"
    result = CliRunner().invoke(cli.app, ["fit", "c45", IRIS, "-o", str(path)])
    assert result.exit_code == 0, result.stderr
    return str(path)


# --------------------------------------------------------------------------- closed streams
_WRITES_STDOUT = [
    ["--help"],
    ["--version"],
    [],  # no arguments: the help text
    ["fit", "--help"],
    ["algorithms"],
    ["info", IRIS],
    ["predict", "MODEL", IRIS],
    ["cluster", "kmeans", IRIS],
    ["evaluate", "c45", IRIS, "--cv", "2", "--repeats", "1"],
    ["evaluate", "MODEL", IRIS],
    ["compare", "c45", "knn", "--data", IRIS, "--cv", "2", "--repeats", "1"],
    ["show", "MODEL"],
]


def _with_model(args, model):
    return [model if a == "MODEL" else a for a in args]


def _slow_unless(cases, light):
    """``cases`` with the ``slow`` marker on all but ``light`` (one process each, a second or so
    for a command that loads the numeric libraries)."""
    return [args if args in light else pytest.param(args, marks=pytest.mark.slow) for args in cases]


@pytest.mark.parametrize("args", _slow_unless(_WRITES_STDOUT, [["--help"], ["--version"], []]),
                         ids=lambda a: " ".join(a)[:40] or "no args")
def test_closed_stdout_is_one_usage_error(args, iris_model):
    proc = _shell(_with_model(args, iris_model), ">&-")
    assert proc.returncode == 2, proc.stderr
    assert _one_error_line(proc.stderr) == "ensemblekit: error: standard output is closed"


@pytest.mark.slow  # one process per command
@pytest.mark.parametrize("args", _WRITES_STDOUT, ids=lambda a: " ".join(a)[:40] or "no args")
def test_closed_stdout_and_stderr_exit_2_without_a_traceback(args, iris_model):
    # nothing can be said, but the exit code still tells (a traceback would mean 1)
    assert _shell(_with_model(args, iris_model), ">&- 2>&-").returncode == 2


@pytest.mark.slow  # one process per command
def test_commands_that_write_no_stdout_run_with_it_closed(iris_model, tmp_path):
    model = tmp_path / "m.ekm"
    proc = _shell(["fit", "c45", IRIS, "-o", model], ">&-")
    assert (proc.returncode, proc.stderr) == (0, f"fitted c45 on iris (150 instances) -> {model}\n")
    assert model.stat().st_size > 0
    out = tmp_path / "p.csv"
    proc = _shell(["predict", iris_model, IRIS, "-o", out], ">&-")
    assert (proc.returncode, proc.stderr) == (0, "")
    expected = _shell(["predict", iris_model, IRIS], "")
    assert expected.returncode == 0 and out.read_text() == expected.stdout


_READS_STDIN = [
    ["info", "-"],
    ["fit", "c45", "-", "-o", "OUT"],
    ["predict", "MODEL", "-"],
    ["cluster", "kmeans", "-"],
    ["evaluate", "c45", "-", "--cv", "2", "--repeats", "1"],
    ["evaluate", "MODEL", "-"],
    ["compare", "c45", "knn", "--data", "-", "--cv", "2", "--repeats", "1"],
]


@pytest.mark.parametrize("args", _slow_unless(_READS_STDIN, [["info", "-"]]), ids=lambda a: " ".join(a)[:40])
def test_closed_stdin_is_one_usage_error_when_data_is_dash(args, iris_model, tmp_path):
    out = tmp_path / "m.ekm"
    args = [str(out) if a == "OUT" else a for a in _with_model(args, iris_model)]
    proc = _shell(args, "<&-")
    assert proc.returncode == 2, proc.stderr
    assert _one_error_line(proc.stderr) == ("ensemblekit: error: cannot read '-': standard input "
                                            "is closed")
    assert proc.stdout == "" and not out.exists()


@pytest.mark.slow  # one process per command
def test_closed_stdin_does_not_matter_when_no_command_reads_it(iris_model):
    for args in (["info", IRIS], ["show", iris_model], ["predict", iris_model, IRIS]):
        closed, normal = _shell(args, "<&-"), _shell(args, "</dev/null")
        assert (closed.returncode, closed.stderr) == (0, "")
        assert closed.stdout == normal.stdout != ""


@pytest.mark.slow  # three processes
def test_closed_stderr_alone_changes_nothing_but_the_messages():
    ok, normal = _shell(["info", IRIS], "2>&-"), _shell(["info", IRIS], "")
    assert ok.returncode == 0 and ok.stdout == normal.stdout != ""
    assert _shell(["info", "no-such-file.arff"], "2>&-").returncode == 2


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_closed_descriptors_get_dev_null_so_no_file_takes_their_number():
    code = ("import os, sys\n"
            "from ensemblekit.cli_io import guard_standard_streams\n"
            "guard_standard_streams()\n"
            "fd = os.open(os.devnull, os.O_RDONLY)\n"  # the next file opened: not 0, 1 or 2
            "sys.stderr.write(' '.join(os.readlink(f'/proc/self/fd/{n}') for n in (0, 1)))\n"
            "sys.stderr.write(f' {fd > 2} {type(sys.stdout).__name__} {sys.stdin}')\n")
    proc = subprocess.run(["sh", "-c", 'exec "$@" >&- <&-', "sh", sys.executable, "-c", code],
                          stderr=subprocess.PIPE, text=True)
    assert (proc.returncode, proc.stderr) == (0, "/dev/null /dev/null True ClosedStdout None")


_PIPED = [["--help"], ["fit", "--help"], [], ["--version"], ["algorithms"], ["info", IRIS],
          ["predict", "MODEL", IRIS], ["show", "MODEL"]]


@pytest.mark.slow  # one shell pipeline per command
@pytest.mark.parametrize("args", _PIPED, ids=lambda a: " ".join(a)[:40] or "no args")
def test_a_reader_that_left_gives_exit_0(args, iris_model):
    # the read end is closed before the process starts: every write fails with EPIPE,
    # which is what `ensemblekit ... | head -1` meets once head has exited
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(_ensemblekit() + _with_model(args, iris_model), stdout=write_end,
                              stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_help_into_head_exits_0():
    proc = subprocess.run(["bash", "-c", 'set -o pipefail; "$@" --help | head -1', "bash",
                           *_ensemblekit()], capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert len(proc.stdout.splitlines()) == 1


# --------------------------------------------------------------------------- full streams
_FULL = "ensemblekit: error: no space left on device writing standard output"
needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")

_WRITES_STDOUT_FULL = _WRITES_STDOUT + [
    ["algorithms", "--format", "json"], ["algorithms", "c45"], ["info", IRIS, "--format", "json"],
    ["predict", "MODEL", IRIS, "--format", "json"], ["show", "MODEL", "--format", "json"],
    ["cluster", "kmeans", IRIS, "-k", "2:3"], ["predict", "--help"],
    ["compare", "c45", "knn", "--data", IRIS, "--cv", "2", "--repeats", "1", "--format", "json"],
]


@needs_dev_full
@pytest.mark.parametrize("args", _slow_unless(_WRITES_STDOUT_FULL, [["--help"], ["--version"], []]),
                         ids=lambda a: " ".join(a)[:40] or "no args")
def test_stdout_on_a_full_device_is_one_usage_error(args, iris_model):
    # issue 29: ENOSPC on stdout was an unexpected failure (exit 1) for 22 commands
    proc = _shell(_with_model(args, iris_model), ">/dev/full")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[-1] == _FULL, proc.stderr
    assert all(line.startswith("note: ") for line in lines[:-1]), proc.stderr  # evaluate MODEL


@needs_dev_full
def test_full_stdout_and_stderr_still_exit_2():
    # nothing can be said, but the exit code still tells (not 1 from a failed message)
    for args in (["--help"], ["--version"], ["info", "no-such-file.arff"]):
        proc = _shell(args, ">/dev/full 2>/dev/full")
        assert (proc.returncode, proc.stderr) == (2, ""), args


@needs_dev_full
@pytest.mark.slow  # two processes that load the numeric libraries
def test_a_full_stderr_loses_the_messages_only(tmp_path):
    model = tmp_path / "m.ekm"
    assert _shell(["fit", "c45", IRIS, "-o", model], "2>/dev/full").returncode == 0
    assert model.stat().st_size > 0
    full, normal = _shell(["show", model], "2>/dev/full"), _shell(["show", model], "")
    assert full.returncode == 0 and full.stdout == normal.stdout != ""


@needs_dev_full
def test_full_stdout_under_the_entry_point_keeps_every_writer_guarded():
    # every writer (print, sys.stdout.buffer, a text wrapper of its own) meets one usage error,
    # and the interpreter's last flush of what was buffered cannot fail again
    code = ("import sys\n"
            "from ensemblekit.cli_io import guard_standard_streams\n"
            "guard_standard_streams()\n"
            "try:\n"
            "    sys.stdout.buffer.write(b'x' * 100000)\n"
            "    sys.stdout.flush()\n"
            "except Exception as exc:\n"
            "    sys.stderr.write(f'{type(exc).__name__}: {exc}\\n')\n"
            "print('still buffered')\n")
    proc = subprocess.run(["sh", "-c", 'exec "$@" >/dev/full', "sh", sys.executable, "-c", code],
                          stderr=subprocess.PIPE, text=True)
    assert (proc.returncode, proc.stderr) == (
        0, "UsageError: no space left on device writing standard output\n")


# --------------------------------------------------------------------------- signals
@pytest.fixture(scope="module")
def lazy_work(tmp_path_factory):
    """A lazy-bagging model of iris and iris 40 times over (6,000 rows: 20 s of lazy prediction
    or more, far more than a test waits before its signal)."""
    folder = tmp_path_factory.mktemp("lazy")
    model = folder / "lb.ekm"
    done = subprocess.run(_ensemblekit() + ["fit", "lazy-bagging", IRIS, "-o", str(model)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = Path(IRIS).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    rows = [line for line in lines[start:] if line.strip() and not line.startswith("%")]
    data = folder / "iris40.arff"
    data.write_text("\n".join(lines[:start] + rows * 40) + "\n")
    return str(model), str(data)


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _signalled_when_busy(args, sig, *, group: bool, cwd) -> tuple[subprocess.CompletedProcess, int]:
    """Run ensemblekit ARGS in a session of its own; once it has used 2 s of CPU, or run 6 s
    with its workers (predicting by then), send ``sig`` to it (or, as Ctrl-C does, to its
    whole group); wait for it to end. Returns the finished process and how many of its group
    were alive 3 s after it ended."""
    proc = subprocess.Popen(_ensemblekit() + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, start_new_session=True)
    started = time.monotonic()
    while proc.poll() is None and _cpu_seconds(proc.pid) < 2.0 and time.monotonic() - started < 6:
        threading.Event().wait(0.05)
    assert proc.poll() is None, "ended before the signal"
    (os.killpg if group else os.kill)(proc.pid, sig)
    out, err = proc.communicate(timeout=120)
    for _ in range(30):  # worker processes must not outlive the command
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return subprocess.CompletedProcess(args, proc.returncode, out, err), 0
        threading.Event().wait(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(args, proc.returncode, out, err), 1


def test_an_error_raised_from_a_signal_ends_as_the_signal(capsys):
    from ensemblekit.cli_io import Terminated, signal_exit_code

    def wrapped(stop):
        try:
            try:
                raise stop
            except BaseException as exc:  # noqa: BLE001
                raise SystemError("CPUDispatcher(f) returned a result with an exception set") from exc
        except SystemError as exc:
            return exc

    with warnings.catch_warnings():  # the function silences warnings for the way out
        assert signal_exit_code(wrapped(KeyboardInterrupt())) == 130
        assert signal_exit_code(wrapped(Terminated(signal.SIGTERM))) == 143
        assert signal_exit_code(Terminated(signal.SIGTERM)) == 143
        assert signal_exit_code(ValueError("a bug")) is None
    assert capsys.readouterr().err == "ensemblekit: interrupted\nensemblekit: terminated\n" \
                                      "ensemblekit: terminated\n"


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs /proc")


@pytest.mark.slow  # lazy prediction stopped after 2 s of CPU (or 6 s with workers)
@needs_proc
@pytest.mark.parametrize("sig, group, jobs, to_file", [
    (signal.SIGINT, True, 1, False), (signal.SIGTERM, False, 1, False),
    (signal.SIGINT, True, 1, True), (signal.SIGTERM, False, 1, True),
    (signal.SIGTERM, False, 2, True), (signal.SIGINT, True, 2, False),
], ids=["int-stdout", "term-stdout", "int-file", "term-file", "term-j2-file", "int-j2-stdout"])
def test_a_signal_during_lazy_prediction_exits_130_or_143(lazy_work, tmp_path, sig, group, jobs,
                                                          to_file):
    # issue 29: Ctrl-C or SIGTERM during lazy-bagging predict gave SystemError (exit 1): the
    # signal's exception was raised inside a numba callback
    model, data = lazy_work
    args = ["predict", model, data, "-j", str(jobs)] + (["-o", "pred.csv"] if to_file else [])
    proc, left = _signalled_when_busy(args, sig, group=group, cwd=tmp_path)
    said = {signal.SIGINT: ["ensemblekit: interrupted"], signal.SIGTERM: ["ensemblekit: terminated"]}
    assert proc.returncode == 128 + sig, proc.stderr
    assert proc.stderr.splitlines() in ([], said[sig]), proc.stderr  # typer says nothing on ^C
    assert os.listdir(tmp_path) == [] and left == 0  # no output, temporary file or worker left


# --------------------------------------------------------------------------- exit code 2
@pytest.fixture
def unlabelled(tmp_path) -> str:
    """An ARFF file whose nominal class is missing ('?') on every row."""
    rows = "".join(f"{i * 0.5:.1f},{(i % 3) * 1.0},?\n" for i in range(12))
    path = tmp_path / "unlabelled.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute b numeric\n"
                    "@attribute class {x,y}\n@data\n" + rows)
    return str(path)


@pytest.mark.parametrize("args, says", [
    (["cluster", "kmeans", "DATA"], "every instance's class value is missing (class 'class')"),
    (["cluster", "kmeans", "DATA", "-k", "2"], "every instance's class value is missing"),
    (["fit", "kmeans", "DATA", "-o", "OUT"], "every instance's class value is missing"),
    (["fit", "c45", "DATA", "-o", "OUT"], "every instance's class value is missing"),
    (["evaluate", "kmeans", "DATA", "--runs", "2"], "every class value of 'class' is missing"),
    (["evaluate", "c45", "DATA", "--cv", "2", "--repeats", "1"],
     "every class value of 'class' is missing"),
    (["compare", "kmeans", "pam", "--data", "DATA", "--runs", "2"],
     "every class value of 'class' is missing"),
    (["compare", "c45", "knn", "--data", "DATA", "--cv", "2", "--repeats", "1"],
     "every class value of 'class' is missing"),
])
def test_a_class_missing_on_every_row_is_one_usage_error(args, says, unlabelled, tmp_path,
                                                         monkeypatch, capsys):
    out = tmp_path / "m.ekm"
    args = [unlabelled if a == "DATA" else str(out) if a == "OUT" else a for a in args]
    code, stdout, err = _main(args, monkeypatch, capsys)
    assert code == 2
    line = _one_error_line(err)
    assert line.startswith(f"ensemblekit: error: {unlabelled}: ") and says in line
    assert stdout == "" and not out.exists()


def test_a_numeric_target_missing_on_every_row_is_one_usage_error(tmp_path, monkeypatch, capsys):
    path = tmp_path / "untargeted.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute y numeric\n"
                    "@data\n" + "".join(f"{i},{i % 3},?\n" for i in range(12)))
    code, _, err = _main(["compare", "rule-lasso", "random-forest", "--data", path, "--cv", "2",
                          "--repeats", "1"], monkeypatch, capsys)
    assert code == 2
    assert _one_error_line(err) == (
        f"ensemblekit: error: {path}: every class value of 'y' is missing, but regression "
        "algorithms need a numeric class with known values; name a numeric class with --target")


def test_unlabelled_rows_are_still_fine_to_describe_predict_and_skip(unlabelled, iris_model, tmp_path,
                                                                     monkeypatch, capsys):
    code, out, _ = _main(["info", unlabelled, "--format", "json"], monkeypatch, capsys)
    assert code == 0 and json.loads(out)["class"]["counts"] == {"x": 0, "y": 0}
    # predicting unlabelled rows is what a model is for (the file needs iris's attributes)
    iris_rows = Path(IRIS).read_text().replace("Iris-setosa\n", "?\n")
    iris_rows = iris_rows.replace("Iris-versicolor\n", "?\n").replace("Iris-virginica\n", "?\n")
    blind = tmp_path / "blind.arff"
    blind.write_text(iris_rows)
    code, out, _ = _main(["predict", iris_model, blind], monkeypatch, capsys)
    assert code == 0 and len(out.splitlines()) == 151
    # in a folder, such a file is skipped with a note instead of stopping the comparison
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "unlabelled.arff").write_text(Path(unlabelled).read_text())
    (folder / "iris.arff").write_text(Path(IRIS).read_text())
    code, out, err = _main(["compare", "kmeans", "pam", "--data", folder, "--runs", "2",
                            "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert (f"note: skipped {folder / 'unlabelled.arff'} (every class value of 'class' is "
            "missing)") in err


_ALL_COMMANDS_ON_DATA = [
    ["info", IRIS],
    ["fit", "kmeans", IRIS, "-o", "OUT"],
    ["cluster", "kmeans", IRIS],
    ["evaluate", "c45", IRIS, "--cv", "2", "--repeats", "1"],
    ["evaluate", "MODEL", IRIS],
    ["compare", "c45", "knn", "--data", IRIS, "--cv", "2", "--repeats", "1"],
    ["predict", "MODEL", IRIS],
]


@pytest.mark.parametrize("args", _ALL_COMMANDS_ON_DATA, ids=lambda a: " ".join(a[:2]))
def test_input_format_must_be_arff_or_csv(args, iris_model, tmp_path, monkeypatch, capsys):
    out = tmp_path / "m.ekm"
    args = [str(out) if a == "OUT" else a for a in _with_model(args, iris_model)]
    code, stdout, err = _main([*args, "--input-format", "xml"], monkeypatch, capsys)
    assert code == 2 and stdout == "" and not out.exists()
    assert "'--input-format': must be arff or csv, got 'xml'" in _one_error_line(err)


def test_input_format_is_read_in_any_case(monkeypatch, capsys):
    code, out, _ = _main(["info", IRIS, "--input-format", "ARFF", "--format", "json"],
                         monkeypatch, capsys)
    assert code == 0 and json.loads(out)["instances"] == 150


@pytest.mark.parametrize("args", _ALL_COMMANDS_ON_DATA, ids=lambda a: " ".join(a[:2]))
def test_target_and_no_class_together_is_one_usage_error(args, iris_model, tmp_path, monkeypatch,
                                                         capsys):
    out = tmp_path / "m.ekm"
    args = [str(out) if a == "OUT" else a for a in _with_model(args, iris_model)]
    code, stdout, err = _main([*args, "--target", "class", "--no-class"], monkeypatch, capsys)
    assert code == 2 and stdout == "" and not out.exists()
    line = _one_error_line(err)
    if args[0] in ("fit", "cluster"):  # the commands that take --no-class
        assert "--target class and --no-class contradict each other" in line
    else:  # predict takes neither option, the others no --no-class
        assert "No such option: --" in line


# --------------------------------------------------------------------------- --resume journal
@pytest.fixture
def journal(tmp_path, monkeypatch, capsys):
    """A complete journal of a small comparison, and the command that reads it."""
    path = tmp_path / "j.jsonl"
    args = ["compare", "c45", "knn", "--data", IRIS, "--cv", "2", "--repeats", "1",
            "--format", "json", "--resume", str(path)]
    code, _, err = _main(args, monkeypatch, capsys)
    assert code == 0, err
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 5  # the header and 2 algorithms x 2 folds
    return path, args, lines


def _refused(journal, text, monkeypatch, capsys) -> str:
    path, args, _ = journal
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    before = path.read_bytes()
    code, out, err = _main(args, monkeypatch, capsys)
    assert code == 2 and out == ""
    assert path.read_bytes() == before  # a refused journal is left as it was
    return _one_error_line(err)


def test_journal_line_nested_200000_deep_is_refused(journal, monkeypatch, capsys):
    path, _, lines = journal
    deep = "[" * 200_000 + "]" * 200_000 + "\n"
    line = _refused(journal, "".join(lines[:2] + [deep] + lines[2:]), monkeypatch, capsys)
    assert line == (f"ensemblekit: error: {path}, line 3: damaged journal record (JSON nested "
                    "200000 levels deep (at most 8 accepted)); use a new --resume file or delete "
                    "this one")


def test_journal_header_nested_deep_is_another_comparison(journal, monkeypatch, capsys):
    path, _, lines = journal
    deep = "{\"a\":" * 100_000 + "1" + "}" * 100_000 + "\n"
    line = _refused(journal, "".join([deep] + lines[1:]), monkeypatch, capsys)
    assert line.startswith(f"ensemblekit: error: {path} records a different comparison")


def test_journal_line_longer_than_the_bound_is_refused(journal, monkeypatch, capsys):
    from ensemblekit.experiment.records import line_bound

    path, _, lines = journal
    # the bound: 4 MiB for the scores, and room for the predictions of the largest data set
    bound = line_bound(json.loads(lines[0])["comparison"])
    assert bound == 5 * 2**20
    huge = '"' + "x" * bound + '"\n'
    line = _refused(journal, "".join(lines[:3] + [huge] + lines[3:]), monkeypatch, capsys)
    assert line == (f"ensemblekit: error: {path}, line 4: longer than 5 MiB, which no journal "
                    "record is; use a new --resume file or delete this one")
    # a last line cut short is dropped (a killed run), but not one longer than the bound
    cut = "".join(lines) + "y" * (bound + 1)
    assert "line 6: longer than 5 MiB" in _refused(journal, cut, monkeypatch, capsys)


def test_journal_reader_never_asks_for_more_than_the_bound(journal, monkeypatch, capsys):
    from ensemblekit.experiment.journal import Journal

    path, args, lines = journal
    asked = []
    real_read = Journal._read

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def readline(self, size=-1):
            asked.append(size)
            return self.fh.readline(size)

    def spying_read(self, reader, *a, **k):  # the reader of the locked journal file
        return real_read(self, Spy(reader), *a, **k)

    monkeypatch.setattr(Journal, "_read", spying_read)
    path.write_text("".join(lines))
    code, _, err = _main(args, monkeypatch, capsys)
    assert code == 0, err
    assert asked and all(0 < size <= 5 * 2**20 + 1 for size in asked)


def test_damaged_record_message_stays_short(journal, monkeypatch, capsys):
    path, _, lines = journal
    record = json.loads(lines[1])
    record["seconds"] = "z" * 100_000
    line = _refused(journal, "".join(lines[:1] + [json.dumps(record) + "\n"] + lines[2:]),
                    monkeypatch, capsys)
    assert line == (f"ensemblekit: error: {path}, line 2: damaged journal record (seconds is "
                    f'"{"z" * 39}..., not a number); use a new --resume file or delete this one')
    assert len(line) < 400


# --------------------------------------------------------------------------- escaped names
def test_printable_escapes_what_a_terminal_would_act_on():
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("bell\x07") == "bell\\x07"
    assert printable("\r\n\t\x00\x7f") == "\\x0d\\x0a\\x09\\x00\\x7f"
    assert printable("csi\x9b2J") == "csi\\x9b2J"  # C1 control: an 8-bit escape sequence
    assert printable("abc\u202edef") == "abc\\u202edef"  # right-to-left override
    assert printable("tag\U000e0041") == "tag\\U000e0041"  # an invisible tag character
    assert printable("no\u00a0break") == "no\\xa0break"
    for kept in ("plain", "with space", "é, ü, 中文, ±", "[red]x[/red]", "back\\slash", ""):
        assert printable(kept) == kept
    nasty = "a\x1b[31m\x07\u2028z"
    assert printable(printable(nasty)) == printable(nasty)  # idempotent
    assert printable(3.5) == "3.5"


def test_safe_text_is_never_read_as_markup():
    from rich.console import Console

    console = Console(record=True, width=80, force_terminal=True, color_system="truecolor")
    console.print(safe_text("[bold red]x[/bold red] \x1b[2J"))
    assert console.export_text() == "[bold red]x[/bold red] \\x1b[2J\n"


@pytest.fixture
def evil(tmp_path) -> Path:
    """An ARFF file whose relation, attribute name and class values hold escapes and markup."""
    good, bad = "'v\x1b[2J'", "'w\x07[red]x[/red]'"
    rows = "".join(f"{0.5 + 2 * (i % 2) + 0.01 * i:.2f},{0.1 * i:.1f},{bad if i % 2 else good}\n"
                   for i in range(20))
    path = tmp_path / "evil.arff"
    path.write_text("@relation 'rel\x1b[2J[red]x[/red]'\n"
                    "@attribute 'a\x1b[31m\x07[bold red]b' numeric\n"
                    "@attribute b numeric\n"
                    f"@attribute class {{{good}, {bad}}}\n@data\n" + rows)
    return path


def _no_raw_controls(text: str) -> None:
    assert ESC not in text and BEL not in text and "\r" not in text


def test_info_table_escapes_names_values_and_relation(evil, monkeypatch, capsys):
    code, out, err = _main(["info", evil], monkeypatch, capsys)
    assert code == 0, err
    _no_raw_controls(out)
    assert "rel\\x1b[2J[red]x[/red]" in out  # relation: escaped, markup shown as text
    assert "a\\x1b[31m\\x07[bold red]b" in out  # attribute name
    assert "v\\x1b[2J" in out and "w\\x07[red]x[/red]" in out  # class values


def test_info_json_keeps_the_names_as_data(evil, monkeypatch, capsys):
    code, out, _ = _main(["info", evil, "--format", "json"], monkeypatch, capsys)
    assert code == 0
    _no_raw_controls(out)  # JSON escapes control characters itself
    summary = json.loads(out)
    assert summary["relation"] == "rel\x1b[2J[red]x[/red]"
    assert summary["attributes"][0]["name"] == "a\x1b[31m\x07[bold red]b"
    assert summary["class"]["counts"] == {"v\x1b[2J": 10, "w\x07[red]x[/red]": 10}


def test_show_escapes_the_tree_of_a_model_fitted_on_such_names(evil, tmp_path, monkeypatch,
                                                                capsys):
    model = tmp_path / "evil.ekm"
    code, _, err = _main(["fit", "c45", evil, "-o", model], monkeypatch, capsys)
    assert code == 0, err
    _no_raw_controls(err)
    code, out, err = _main(["show", model], monkeypatch, capsys)
    assert code == 0, err
    _no_raw_controls(out)
    # the attribute separates the classes: the tree (printed as J48 does) splits on it once
    assert "\na\\x1b[31m\\x07[bold red]b <= " in out and "\na\\x1b[31m\\x07[bold red]b > " in out
    assert ": v\\x1b[2J (10.0)" in out and ": w\\x07[red]x[/red] (10.0)" in out


def test_cluster_and_evaluate_tables_escape_names(evil, tmp_path, monkeypatch, capsys):
    code, out, err = _main(["cluster", "kmeans", evil, "-k", "2"], monkeypatch, capsys)
    assert code == 0, err
    _no_raw_controls(out)
    assert "a\\x1b[31m\\x07[bold red]b" in out  # a prototype row
    renamed = tmp_path / "e\x1b[2Jvil[red].arff"
    renamed.write_text(evil.read_text())
    code, out, err = _main(["evaluate", "c45", renamed, "--cv", "2", "--repeats", "1"],
                           monkeypatch, capsys)
    assert code == 0, err
    _no_raw_controls(out)
    assert "e\\x1b[2Jvil[red]" in out  # the data set's name, from the file name


def test_error_lines_escape_the_names_they_quote(evil, tmp_path, monkeypatch, capsys):
    # the message quotes the --target value as given, control characters and all
    code, out, err = _main(["fit", "kmeans", evil, "-o", tmp_path / "m.ekm", "--no-class",
                            "--target", "t\x1b[2J\x07\r"], monkeypatch, capsys)
    assert code == 2
    line = _one_error_line(err)
    _no_raw_controls(err)
    assert line == ("ensemblekit: error: --target t\\x1b[2J\\x07\\x0d and --no-class contradict "
                    "each other: --no-class makes every attribute a feature; give one of them")
