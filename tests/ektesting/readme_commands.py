"""README's commands and the files they write, for the byte-exact regression test.

``COMMANDS`` lists, in README order, every command of README's set-up line and of its
"Commands, one example each" block that runs on the shipped sample data (the two that
need a ``big/`` folder or a Dask scheduler are left out). Each runs with ``bash -c`` in
a scratch folder that holds a link to ``sample_data/``. They run in two lanes at once (the
machine has two cores; each command uses one): ``SECOND_LANE``, three commands that read
no file another command writes, beside the others, which run one after the other in README
order, so later commands see the model files earlier ones wrote.

The test runs each command on its own (:func:`run_one`, one test each, so that
pytest-xdist's workers share them out); the commands of ``READS_FIT`` get a copy of the
model file README's ``fit`` command wrote.

``python tests/ektesting/readme_commands.py`` writes the expected outputs under
``tests/golden/readme/``; they were generated from the code before the application
layer was split out of the command line (issue 17), and must not be regenerated to make
a failing test pass: a change of output is a change of behaviour. They are regenerated
only for a change made on purpose, and the commit says which files changed and why
(issue 18: ``evaluate`` prints Weka's report; ``algorithms`` points to per-algorithm help;
issue 20: ``c45`` is Weka's J48 and ``knn`` Weka's IBk; issue 21: ``random-forest`` is
Breiman's forest).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = ROOT / "tests" / "golden" / "readme"

# (name, shell command, files whose bytes are compared too)
COMMANDS: list[tuple[str, str, tuple[str, ...]]] = [
    ("main-job", "ensemblekit compare kmeans iekm --data sample_data/ --runs 10 --seed 1", ()),
    ("info", "ensemblekit info sample_data/vote.arff", ()),
    ("algorithms", "ensemblekit algorithms", ()),
    ("fit", "ensemblekit fit c45 sample_data/vote.arff -o vote.ekm", ()),
    ("predict-pipe", "cat sample_data/vote.arff | ensemblekit predict vote.ekm - | cut -d, -f2 "
     "| sort | uniq -c", ()),
    ("predict-proba", "ensemblekit predict vote.ekm sample_data/vote.arff --proba --format jsonl "
     "| head -2", ()),
    ("show", "ensemblekit show vote.ekm", ()),
    ("cluster-iekm", "ensemblekit cluster iekm sample_data/iris.arff -k 3 --set n_estimators=20 "
     "--labels-out labels.csv", ("labels.csv",)),
    ("cluster-isca", "ensemblekit cluster isca sample_data/iris.arff -k 2:10", ()),
    ("cluster-ss-isca", "ensemblekit cluster ss-isca sample_data/iris.arff -k 3 --targets "
     "petalwidth --similarity-out S.csv", ("S.csv",)),
    ("evaluate-knn", "ensemblekit evaluate knn sample_data/glass.arff --cv 10 --repeats 2 "
     "--set n_neighbors=3", ()),
    ("evaluate-model", "ensemblekit evaluate vote.ekm sample_data/vote.arff", ()),
    ("compare-cv", "ensemblekit compare knn c45 --data sample_data/ --cv 5 --repeats 10 "
     "--baseline knn --output scores.csv", ()),
    ("compare-runs", "ensemblekit compare kmeans iekm hac-average --data sample_data/ --runs 30 "
     "--baseline kmeans --plot cd.png", ()),
    ("compare-grid", "ensemblekit compare kmeans iekm --data sample_data/ --runs 10 --baseline "
     "kmeans --grid n_estimators=10:50:10 --grid max_features=0.2:1.0:0.2 --plot heat.png", ()),
    ("rules", "ensemblekit fit rule-pls sample_data/housing.arff -o housing.ekm && "
     "ensemblekit show housing.ekm", ()),
    ("compare-regression", "ensemblekit compare rule-pls rule-lasso random-forest --data "
     "sample_data/housing.arff --cv 10 --repeats 1", ()),
]


_ORDER = {name: i for i, (name, _, _) in enumerate(COMMANDS)}


def environment() -> dict[str, str]:
    """A fixed environment: no terminal width, colour or debug settings from the caller."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TERM", "ENSEMBLEKIT_DEBUG")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["TERM"] = "dumb"
    return env


#: The longest commands (about half of the time), none reading a file another command writes.
SECOND_LANE = ("compare-regression", "rules", "main-job")


#: The commands that read the model file ``fit`` writes (vote.ekm).
READS_FIT = ("predict-pipe", "predict-proba", "show", "evaluate-model")


def outputs_of(name: str) -> list[str]:
    """The files under ``EXPECTED`` that command ``name`` gives: its stdout, then a digest of
    each file it writes that is compared too."""
    files = next(files for command, _, files in COMMANDS if command == name)
    return [name, *(f"{name}.{file}.sha256" for file in files)]


def run_one(workdir: Path, name: str, fitted: Path | None = None) -> dict[str, bytes]:
    """Run command ``name`` alone in ``workdir``, beside a link to ``sample_data/`` (and a copy
    of ``fitted``/vote.ekm, for the commands of ``READS_FIT``); its outputs as :func:`run_all`'s."""
    (workdir / "sample_data").symlink_to(ROOT / "sample_data")
    if fitted is not None:
        shutil.copy(fitted / "vote.ekm", workdir / "vote.ekm")
    return _run_lane(workdir, [c for c in COMMANDS if c[0] == name], environment())


def _run_lane(workdir: Path, commands, env) -> dict[str, bytes]:
    """Run ``commands`` one after the other in ``workdir``; their stdout and file digests."""
    out: dict[str, bytes] = {}
    for name, command, files in commands:
        done = subprocess.run(["bash", "-c", "set -o pipefail; " + command], cwd=workdir,
                              env=env, capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{name}: exit {done.returncode}: {done.stderr.decode()[-2000:]}")
        out[name] = done.stdout
        for file in files:
            digest = hashlib.sha256((workdir / file).read_bytes()).hexdigest()
            out[f"{name}.{file}.sha256"] = (digest + "\n").encode()
    return out


def run_all(workdir: Path) -> dict[str, bytes]:
    """Run every command in ``workdir``; return ``{name: stdout}`` and ``{name/file: digest}``."""
    (workdir / "sample_data").symlink_to(ROOT / "sample_data")
    env = environment()
    lanes = ([c for c in COMMANDS if c[0] not in SECOND_LANE],
             [c for c in COMMANDS if c[0] in SECOND_LANE])
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = [pool.submit(_run_lane, workdir, lane, env) for lane in lanes]
        out = {name: data for lane in done for name, data in lane.result().items()}
    return dict(sorted(out.items(), key=lambda item: _ORDER[item[0].split(".", 1)[0]]))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outputs = run_all(Path(tmp))
    if EXPECTED.exists():
        shutil.rmtree(EXPECTED)
    EXPECTED.mkdir()
    for name, data in outputs.items():
        (EXPECTED / name).write_bytes(data)
    print(f"wrote {len(outputs)} files to {EXPECTED}")


if __name__ == "__main__":
    main()
