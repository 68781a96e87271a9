"""Format 3 changes no output: every golden the format-2 code printed is printed again.

``goldens/`` holds what ensemblekit printed at commit 515ba61, the last with format-2
(skops) model files, for every registry algorithm: predictions, probabilities, cluster
labels, ``evaluate`` reports and ``show`` descriptions (``make_format2_goldens.py`` made
them and must not be run again). Here each case is fitted again with the same command
and seed, and each output must be byte for byte the golden one; ``show`` may differ
only in the line naming the file format's version.

The ``show`` goldens were rewritten once, on purpose, when a piped ``show`` stopped padding
its lines and started printing networks and prototypes as plain columns (issue 28): each
line lost its trailing spaces, and those two tables were laid out again from the very
cells the format-2 code printed (``description.description_text``'s layout). The lazy
ensembles' predictions and probabilities were printed again after issue 29 changed the
rows' seeds on purpose (see ``regenerated`` in CASES.json).

The commands run in the test's own process, through the console entry point
(``cli.main``, exit codes and all) with standard output captured as bytes, in the scratch
folder: a fresh process per command cost about 0.7 s of imports each, 130 times. Where the
environment names other OpenBLAS kernels than the goldens were printed with (this process
has loaded numpy already), each command runs in a fresh process as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ektesting.support import added_at_default, run_main

HERE = Path(__file__).resolve().parent
GOLDENS = HERE / "goldens"
ROOT = HERE.parents[1]
CASES = json.loads((GOLDENS / "CASES.json").read_text())
CLI = [sys.executable, "-c", "from ensemblekit.cli import main; main()"]


# the goldens were printed with OpenBLAS's Haswell kernels (CASES.json, "environment");
# conftest.py pins them for this process unless the environment chose others
KERNELS = CASES["environment"]["OPENBLAS_CORETYPE"]
IN_PROCESS = os.environ.get("OPENBLAS_CORETYPE") == KERNELS


def _run(command, cwd, monkeypatch, capsysbinary):
    """Standard output (bytes) of ``command`` run in ``cwd``, which must exit 0."""
    assert command[0] == "ensemblekit"
    if IN_PROCESS:
        monkeypatch.chdir(cwd)
        code, out, err = run_main(command[1:], monkeypatch, capsysbinary)
        assert code == 0, err.decode(errors="replace")
        return out
    env = {**os.environ, "OPENBLAS_CORETYPE": KERNELS}
    done = subprocess.run([*CLI, *command[1:]], cwd=cwd, capture_output=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


def _same_show(got: bytes, want: bytes) -> bool:
    """The same description but for the file format's line, and for parameters added to the
    algorithm since the golden was written, each at its default (``parameters`` line)."""
    def plain(text: bytes) -> list[bytes]:
        return [line for line in text.splitlines()
                if not line.startswith((b"file format ", b"parameters "))]

    def params(text: bytes) -> tuple[str, dict]:
        lines = text.decode().splitlines()
        algorithm = next(x for x in lines if x.startswith("algorithm ")).split()[1]
        line = next((x for x in lines if x.startswith("parameters ")), "parameters ")
        items = [p.split("=", 1) for p in line.split(None, 1)[1:][0].split(", ")] \
            if line.strip() != "parameters" else []
        return algorithm, {k: _value(v) for k, v in items}

    algorithm, got_params = params(got)
    return plain(got) == plain(want) and added_at_default(algorithm, got_params,
                                                          params(want)[1])


def _value(text: str):
    """A parameter's value as ``show`` prints it, read back (true, 0.5, none, words)."""
    import json

    try:
        return json.loads({"none": "null"}.get(text, text))
    except ValueError:
        return text


@pytest.mark.slow  # about 130 commands, some of them lazy learners over a whole file
@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_every_output_of_the_format_2_code_is_printed_again(case, tmp_path, monkeypatch,
                                                            capsysbinary):
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    if case["fit_command"] is not None:
        _run(case["fit_command"], tmp_path, monkeypatch, capsysbinary)
    done: dict[tuple, bytes] = {}
    for kind, output in case["outputs"].items():
        command = tuple(output["command"])
        if command not in done:
            done[command] = _run(list(command), tmp_path, monkeypatch, capsysbinary)
        if output["from"] == "stdout":
            got = done[command]
        else:
            got = (tmp_path / output["from"].split()[-1]).read_bytes()
        want = (GOLDENS / output["file"]).read_bytes()
        if kind == "show":
            assert _same_show(got, want), f"{case['name']} {kind}"
        else:
            assert got == want, f"{case['name']} {kind}"
