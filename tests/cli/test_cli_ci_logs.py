"""The command line in CI logs and shells (issue 32): progress lines, --quiet, --verbose,
help without Python types, and shell completion."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import typer.main

from ensemblekit import cli, cli_io

from ektesting.support import data_path, run_main

#: One progress line, as a CI log shows it.
LINE = re.compile(r"^compare: (\d+)/(\d+) units \((\d+)%\), (\d+:\d\d) elapsed(, ETA \d+:\d\d)?$")


class FakeClock:
    """Seconds that move only when a test says so."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# --------------------------------------------------------------------------- progress lines
def test_a_line_at_most_every_interval_with_done_total_percent_elapsed_and_eta():
    clock, lines = FakeClock(), []
    bar = cli_io.ProgressLines(400, "units", "compare", lines.append, clock=clock, interval=5)
    clock.now = 4.0
    bar.advance(119)          # 4 s after the start: too soon
    assert lines == []
    clock.now = 12.0
    bar.advance()             # 120 done in 12 s: 280 left at 0.1 s each
    assert lines == ["compare: 120/400 units (30%), 0:12 elapsed, ETA 0:28"]
    clock.now = 16.9
    bar.advance(80)           # 4.9 s after that line: too soon, though much was done
    assert len(lines) == 1
    clock.now = 17.0
    bar.advance(100)          # 300 done in 17 s: 100 left take 17 * 100 / 300 = 5.67 s
    assert lines[1] == "compare: 300/400 units (75%), 0:17 elapsed, ETA 0:06"
    clock.now = 20.0
    bar.advance(100)          # the last step writes nothing: finish() says it is over
    assert len(lines) == 2
    bar.finish()
    assert lines[2] == "compare: 400/400 units (100%), 0:20 elapsed"


def test_a_run_shorter_than_the_interval_writes_no_line():
    clock, lines = FakeClock(), []
    bar = cli_io.ProgressLines(3, "units", "evaluate", lines.append, clock=clock, interval=5)
    for t in (1.0, 2.0, 4.9):
        clock.now = t
        bar.advance()
    bar.finish()
    assert lines == []


def test_the_interval_is_the_constant_by_default(monkeypatch):
    clock, lines = FakeClock(), []
    bar = cli_io.ProgressLines(10, "units", "compare", lines.append, clock=clock)
    assert bar.interval == cli_io.PROGRESS_INTERVAL >= 2
    clock.now = cli_io.PROGRESS_INTERVAL - 0.01
    bar.advance()
    assert lines == []
    clock.now = cli_io.PROGRESS_INTERVAL
    bar.advance()
    assert lines == [f"compare: 2/10 units (20%), 0:0{int(cli_io.PROGRESS_INTERVAL)} elapsed, "
                     f"ETA 0:{4 * int(cli_io.PROGRESS_INTERVAL):02d}"]


@pytest.mark.parametrize("seconds, text", [(0, "0:00"), (59.4, "0:59"), (59.6, "1:00"),
                                           (754, "12:34"), (3725, "1:02:05")])
def test_clock_text(seconds, text):
    assert cli_io.clock_text(seconds) == text


@pytest.mark.parametrize("mode, quiet, lines", [("auto", False, True), ("lines", False, True),
                                                ("auto", True, False), ("lines", True, True),
                                                ("none", False, False)])
def test_progress_mode_where_stderr_is_no_terminal(monkeypatch, mode, quiet, lines):
    monkeypatch.setattr(sys, "stderr", open(__file__))  # noqa: SIM115 - a file: no terminal
    monkeypatch.setitem(cli_io._QUIET, "on", quiet)
    monkeypatch.setitem(cli_io._RUN, "progress", mode)
    with cli_io.progress(10, "units") as advance:
        assert (advance is not None) == lines
    with cli_io.bar_progress(10, "rows") as advance:
        assert advance is None  # predict: a bar or nothing
    sys.stderr.close()


def _ensemblekit(args, **env):
    """Run ensemblekit in a subprocess with pipes for stdout and stderr, progress lines
    written at every step (no waiting in tests)."""
    code = ("import sys; from ensemblekit import cli, cli_io; cli_io.PROGRESS_INTERVAL = 0; "
            "sys.argv = ['ensemblekit', *sys.argv[1:]]; cli.console_main()")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=300)


COMPARE = ["compare", "knn", "c45", "--data", data_path("iris.arff"), "--cv", "3", "--repeats", "2"]


def test_compare_in_a_pipe_writes_progress_lines_on_stderr_and_quiet_writes_none():
    run = _ensemblekit(COMPARE)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 12  # 2 algorithms x 3 folds x 2 repeats, the last without ETA
    for done, line in enumerate(lines, start=1):
        match = LINE.match(line)
        assert match, line
        assert (int(match[1]), int(match[2]), int(match[3])) == (done, 12, 100 * done // 12)
        assert (match[5] is None) == (done == 12)
    assert "compare" not in run.stdout and "iris" in run.stdout
    quiet = _ensemblekit(["--quiet", *COMPARE])
    assert quiet.returncode == 0
    assert quiet.stderr == ""
    assert quiet.stdout == run.stdout


def test_progress_none_and_a_bad_mode(monkeypatch, capsys):
    run = _ensemblekit(["--progress", "none", *COMPARE])
    assert run.returncode == 0 and run.stderr == ""
    code, out, err = run_main(["--progress", "often", "info", data_path("iris.arff")],
                              monkeypatch, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "'often'" in err and "auto, bar, lines, none" in err


# --------------------------------------------------------------------------- --verbose
def test_verbose_prints_the_time_of_each_stage_and_the_total(monkeypatch, capsys, tmp_path):
    code, _, err = run_main(["--verbose", "fit", "c45", data_path("vote.arff"), "-o",
                             tmp_path / "m.ekm"], monkeypatch, capsys)
    assert code == 0
    timing = err.splitlines()[-1]
    assert re.fullmatch(r"timings: reading \d+\.\d{3} s, fitting \d+\.\d{3} s, "
                        r"total \d+\.\d{3} s", timing), timing
    seconds = [float(s) for s in re.findall(r"(\d+\.\d{3}) s", timing)]
    assert seconds[-1] >= sum(seconds[:-1])
    code, out, err = run_main(["-v", "--progress", "none", *COMPARE], monkeypatch, capsys)
    assert code == 0 and "timings" not in out
    assert re.fullmatch(r"timings: reading \S+ s, units \S+ s, statistics \S+ s, total \S+ s",
                        err.splitlines()[-1])


def test_verbose_and_quiet_are_refused_together(monkeypatch, capsys):
    code, out, err = run_main(["--quiet", "--verbose", "info", data_path("iris.arff")],
                              monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == ("ensemblekit: error: --quiet and --verbose contradict each other: give one "
                   "of them\n")


# --------------------------------------------------------------------------- help and completion
TYPE_NOISE = re.compile(r"<(str|int|float|path|bool|boolean|list\[str\]|text)>", re.IGNORECASE)


def _every_command():
    command = typer.main.get_command(cli.app)
    return [command, *command.commands.values()]


@pytest.mark.parametrize("name", [None, "algorithms", "info", "fit", "predict", "cluster",
                                  "evaluate", "compare", "analyse", "show"])
def test_help_names_values_not_python_types(monkeypatch, capsys, name):
    code, out, _ = run_main([*([name] if name else []), "--help"], monkeypatch, capsys)
    assert code == 0
    assert not TYPE_NOISE.search(out), TYPE_NOISE.search(out)[0]


def test_flags_show_no_value_and_options_a_named_one():
    for command in _every_command():
        for param in command.params:
            if param.param_type_name == "argument":
                assert param.metavar[:3].isupper(), param.name  # DATA, ALGO..., RUN.jsonl|...
            elif param.is_flag:
                assert param.metavar is None, param.opts
            else:
                assert param.metavar and "<" not in param.metavar, param.opts
    predict = typer.main.get_command(cli.app).commands["predict"]
    named = {p.opts[0]: p.metavar for p in predict.params if p.param_type_name == "option"}
    assert named["--proba"] is None and named["--output"] == "FILE" and named["--n-jobs"] == "N"


def test_shell_completion_is_offered(monkeypatch, capsys):
    code, out, _ = run_main(["--help"], monkeypatch, capsys)
    assert code == 0 and "--install-completion" in out and "--show-completion" in out
    code, out, _ = run_main(["--show-completion", "bash"], monkeypatch, capsys)
    assert code == 0 and "_ENSEMBLEKIT_COMPLETE=complete_bash" in out
    done = subprocess.run([sys.executable, "-c", "from ensemblekit.cli import console_main; "
                           "console_main()"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "_ENSEMBLEKIT_COMPLETE": "complete_bash",
                               "COMP_WORDS": "ensemblekit compare --da", "COMP_CWORD": "2"})
    assert done.stdout.split() == ["--data", "--date"]
    done = subprocess.run([sys.executable, "-c", "from ensemblekit.cli import console_main; "
                           "console_main()"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "_ENSEMBLEKIT_COMPLETE": "complete_bash",
                               "COMP_WORDS": "ensemblekit compare knn rule-l", "COMP_CWORD": "3"})
    assert done.stdout.split() == ["rule-lasso"]
