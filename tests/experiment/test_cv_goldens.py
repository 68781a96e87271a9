"""Speeding up ``compare`` leaves every cross-validation score as it was (issue 30).

``golden/cv_scores.json`` holds the accuracy of every fold of 2 x 10-fold stratified CV
(seed 1) of c45 and knn (compared together, as the benchmark of the main job runs them),
k2 and bagging on three sample files, computed by the code at the commit it names,
before the kernels, the runner and the readers were made faster. Here each comparison
is run again and every score must be the same float, bit for bit.

Regenerate only when a change of accuracy is intended, and say why in the commit::

    .venv/bin/python tests/experiment/test_cv_goldens.py --write

(it refuses while ``src/`` has uncommitted changes, and records the commit).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ektesting.support import added_at_default

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOLDEN = HERE / "golden" / "cv_scores.json"
FILES = ("breast-cancer.arff", "glass.arff", "vote.arff")  # nominal + missing, numeric, both
GROUPS = (("c45", "knn"), ("k2",), ("bagging",))  # each group is one compare call
PROTOCOL = {"cv": 10, "repeats": 2, "seed": 1}


def cv_scores(group: tuple[str, ...]) -> list[list]:
    """Every score of ``compare(group, FILES, **PROTOCOL)``, as JSON-ready rows.

    Each row is ``[dataset, algorithm, params, repeat, fold, metric, value]`` in the
    order the comparison reports them (data set, repeat, fold, algorithm).
    """
    from ensemblekit import api

    notes: list[str] = []  # glass's smallest class has fewer rows than folds: a note, kept quiet
    result = api.compare(list(group), [ROOT / "sample_data" / f for f in FILES], **PROTOCOL,
                         notify=notes.append)
    assert not result.failures
    return [[s.dataset, s.algorithm, s.params, s.repeat, s.fold, s.metric, s.value]
            for s in result.scores]


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


def test_the_golden_file_covers_every_fold_of_every_group(golden):
    assert golden["files"] == list(FILES) and golden["protocol"] == PROTOCOL
    for group in GROUPS:
        rows = golden["scores"][" ".join(group)]
        expected = len(FILES) * PROTOCOL["repeats"] * PROTOCOL["cv"] * len(group)
        assert len(rows) == expected
        assert {(r[0], r[1]) for r in rows} == {(f.removesuffix(".arff"), a)
                                                for f in FILES for a in group}
        assert all(r[5] == "accuracy" and 0.0 <= r[6] <= 1.0 for r in rows)


@pytest.mark.slow  # about 2.5 s on an idle machine, more when the kernels compile afresh
@pytest.mark.parametrize("group", GROUPS, ids=[" ".join(g) for g in GROUPS])
def test_compare_gives_the_same_cv_scores_as_before(group, golden):
    got = cv_scores(group)
    want = golden["scores"][" ".join(group)]
    assert [r[:2] + r[3:6] for r in got] == [r[:2] + r[3:6] for r in want]
    for g, r in zip(got, want):  # a parameter added since, at its default, is the same fit
        assert added_at_default(g[1], json.loads(g[2]), json.loads(r[2])), (g[2], r[2])
    # floats compared by their repr: equal to the last bit
    changed = [(r[:5], repr(g[6]), repr(r[6])) for g, r in zip(got, want)
               if repr(g[6]) != repr(r[6])]
    assert not changed, f"{len(changed)} scores changed, e.g. {changed[:5]}"


def _write() -> None:
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    if dirty:
        sys.exit("src/ has uncommitted changes; commit them before writing the goldens")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    head = {"commit": commit, "files": list(FILES), "protocol": PROTOCOL,
            "environment": {"OPENBLAS_CORETYPE": os.environ["OPENBLAS_CORETYPE"]}}
    # one score a line; json writes floats with repr, so reading them back gives the same bits
    groups = ",\n".join(json.dumps(" ".join(g)) + ": [\n"
                        + ",\n".join(json.dumps(row) for row in cv_scores(g)) + "\n]"
                        for g in GROUPS)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(head)[:-1] + ',\n"scores": {\n' + groups + "\n}}\n")
    print(f"wrote {GOLDEN} from commit {commit}")


if __name__ == "__main__":
    # as tests/conftest.py does, before numpy loads OpenBLAS
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write")
    _write()
