"""``ensemblekit analyse``: a finished comparison analysed again from its journal or its
scores, fitting nothing (issue 31, acceptance 5), and the predictions the journal keeps."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import zlib

import numpy as np
import pytest

from ektesting.support import SAMPLE_DATA, run_main

DATA = ["-d", SAMPLE_DATA / "iris.arff", "-d", SAMPLE_DATA / "vote.arff"]
CV = ["--cv", "3", "--repeats", "2"]
#: The command line in a fresh interpreter.
CLI = [sys.executable, "-c", "from ensemblekit.cli import main; main()"]


def _compare(args, monkeypatch, capsys):
    code, out, err = run_main(["compare", *args], monkeypatch, capsys)
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    """A journal of c45 and knn on iris and vote, recorded with accuracy only."""
    path = tmp_path_factory.mktemp("analyse") / "run.jsonl"
    done = subprocess.run([*CLI, "compare", "c45", "knn", *map(
        str, DATA), *CV, "--resume", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return path


def _refuse_fitting(monkeypatch):
    """Make any estimator construction or unit of work fail loudly."""
    from ensemblekit import registry
    from ensemblekit.experiment import runner

    def no(*args, **kwargs):
        raise AssertionError("analyse built or fitted an estimator")

    monkeypatch.setattr(registry, "estimator_factory", no)
    monkeypatch.setattr(runner, "_score_unit", no)


@pytest.mark.parametrize("fmt", [[], ["--format", "json"]])
def test_kappa_from_an_accuracy_journal_is_a_fresh_compare(journal, fmt, monkeypatch, capsys):
    fresh = _compare(["c45", "knn", *DATA, *CV, "-m", "kappa", *fmt], monkeypatch, capsys)
    _refuse_fitting(monkeypatch)
    code, out, err = run_main(["analyse", journal, "-m", "kappa", *fmt], monkeypatch, capsys)
    assert code == 0, err
    assert out == fresh
    assert "Kappa" in out or '"kappa"' in out


def test_analyse_imports_no_estimator(journal):
    """In a fresh interpreter, analysing with a measure that was not recorded never imports
    an algorithm's module."""
    code = ("import sys\nfrom ensemblekit import cli\nsys.argv = ['ensemblekit', 'analyse', "
            f"{str(journal)!r}, '-m', 'auc', '-m', 'kappa']\n"
            "try:\n    cli.main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[:2] in (['ensemblekit', "
            "'classifiers'], ['ensemblekit', 'bayesnet'], ['ensemblekit', 'clustering'], "
            "['ensemblekit', 'rules'], ['ensemblekit', 'lazy']))\n"
            "print('LOADED', bad, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stderr


def test_recorded_measure_other_baseline_and_alpha(journal, monkeypatch, capsys):
    fresh = _compare(["c45", "knn", *DATA, *CV, "--baseline", "knn", "--alpha", "0.1",
                      "--format", "json"], monkeypatch, capsys)
    code, out, err = run_main(["analyse", journal, "--baseline", "knn", "--alpha", "0.1",
                               "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out) == json.loads(fresh)


def test_journal_predictions_are_those_of_predictions_out(journal, tmp_path, monkeypatch, capsys):
    """--predictions-out with --resume reads the finished units' predictions from the journal:
    the same file as a run that computes them."""
    fresh, kept = tmp_path / "fresh.csv", tmp_path / "kept.csv"
    _compare(["c45", "knn", *DATA, *CV, "--predictions-out", fresh], monkeypatch, capsys)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(journal.read_bytes())
    code, _, err = run_main(["compare", "c45", "knn", *DATA, *CV, "--resume", copy,
                             "--predictions-out", kept], monkeypatch, capsys)
    assert code == 0, err
    assert "0 of 24 units computed now" in err
    assert kept.read_bytes() == fresh.read_bytes()


def test_a_unit_recorded_without_predictions_is_computed_again(journal, tmp_path, monkeypatch,
                                                               capsys):
    lines = journal.read_text().splitlines(keepends=True)
    record = json.loads(lines[3])
    del record["predictions"]
    copy = tmp_path / "old.jsonl"
    copy.write_text("".join(lines[:3] + [json.dumps(record) + "\n"] + lines[4:]))
    out = tmp_path / "p.csv"
    code, _, err = run_main(["compare", "c45", "knn", *DATA, *CV, "--resume", copy,
                             "--predictions-out", out], monkeypatch, capsys)
    assert code == 0, err
    assert "1 of 24 units computed now" in err


def test_clustering_external_index_recomputed(tmp_path, monkeypatch, capsys):
    data = ["-d", SAMPLE_DATA / "iris.arff", "-d", SAMPLE_DATA / "wine.arff", "--runs", "3"]
    path = tmp_path / "c.jsonl"
    _compare(["kmeans", "iekm", *data, "-m", "purity", "--resume", path], monkeypatch, capsys)
    fresh = _compare(["kmeans", "iekm", *data, "-m", "nmi", "-m", "ari", "--format", "json"],
                     monkeypatch, capsys)
    _refuse_fitting(monkeypatch)
    code, out, err = run_main(["analyse", path, "-m", "nmi", "-m", "ari", "--format", "json"],
                              monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out) == json.loads(fresh)
    code, _, err = run_main(["analyse", path, "-m", "silhouette"], monkeypatch, capsys)
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"ensemblekit: error: silhouette cannot be computed from predictions and {path} did not "
        "record it (it records purity); run compare -m silhouette")


def test_regression_error_recomputed(tmp_path, monkeypatch, capsys):
    data = ["-d", SAMPLE_DATA / "housing.arff", "--cv", "3", "--repeats", "1", "--set",
            "n_estimators=10"]
    path = tmp_path / "r.jsonl"
    _compare(["isle-average", "tree-kernel", *data, "-m", "correlation", "--resume", path],
             monkeypatch, capsys)
    fresh = _compare(["isle-average", "tree-kernel", *data, "-m", "rmse", "-m", "rrse",
                      "--format", "json"], monkeypatch, capsys)
    code, out, err = run_main(["analyse", path, "-m", "rmse", "-m", "rrse", "--format", "json"],
                              monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out) == json.loads(fresh)


def test_run_measures_only_when_recorded(journal, monkeypatch, capsys):
    code, _, err = run_main(["analyse", journal, "-m", "fit-seconds"], monkeypatch, capsys)
    assert code == 2
    assert "fit-seconds cannot be computed from predictions" in err


# ----------------------------------------------------------------------- damaged journals
def _packed(values, dtype="<i4", shape=None, raw=None):
    data = np.ascontiguousarray(values, dtype=dtype).tobytes() if raw is None else raw
    return {"dtype": dtype, "shape": list(np.shape(values) if shape is None else shape),
            "zlib": base64.b64encode(zlib.compress(data)).decode()}


def _with(journal, tmp_path, change):
    """A copy of the journal whose second line's predictions ``change`` edits in place."""
    lines = journal.read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    change(record["predictions"])
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(lines[:1] + [json.dumps(record) + "\n"] + lines[2:]))
    return path


@pytest.mark.parametrize("change, says", [
    # 50 rows declared, a few megabytes of zeros inflated: refused before they are expanded
    (lambda p: p.update(actual=_packed(np.zeros(50), raw=bytes(8 << 20))),
     "predictions.actual does not hold [50] values of <i4"),
    (lambda p: p.update(proba=_packed(np.zeros((50, 2)), "<f8")),
     "predictions.proba has the shape [50, 2], expected [50, 3]"),
    (lambda p: p["actual"].update(dtype="<f4"), "predictions.actual has the type \"<f4\""),
    (lambda p: p.update(rows=_packed(np.arange(50) + 140)),
     "predictions.rows names rows beyond the data set's 150"),
    (lambda p: p.update(predicted=_packed(np.full(50, 3))),
     "predictions.predicted holds a class code outside 0..2"),
    (lambda p: p.update(prior=[1, 2]), "predictions.prior is not 3 class counts"),
    (lambda p: p["rows"].update(zlib="not base64!"), "predictions.rows does not hold"),
    (lambda p: p.pop("proba"), "predictions is not a record of rows, actual, predicted"),
])
def test_damaged_predictions_are_refused(journal, tmp_path, change, says, monkeypatch, capsys):
    path = _with(journal, tmp_path, change)
    code, out, err = run_main(["analyse", path, "-m", "kappa"], monkeypatch, capsys)
    assert (code, out) == (2, "")
    line = err.strip()
    assert "\n" not in line and line.startswith(f"ensemblekit: error: {path}: the record of c45 "
                                                "on iris (repeat 1, fold 1) is damaged (")
    assert says in line


def test_unfinished_old_and_foreign_files_are_refused(journal, tmp_path, monkeypatch, capsys):
    lines = journal.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-2]))
    old = tmp_path / "old.jsonl"
    head = json.loads(lines[0])
    del head["comparison"]
    old.write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\n')
    vast = tmp_path / "vast.jsonl"
    head = json.loads(lines[0])
    head["comparison"]["protocol"]["repeats"] = 10**9  # refused before any key is made
    vast.write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
    odd = tmp_path / "run.txt"
    odd.write_text("x")
    for path, says in [
        (cut, f"{cut} holds 22 of the comparison's 24 units; finish the run first"),
        (old, f"{old}, line 1: this journal was written before journals recorded their "
              "comparison and predictions"),
        (other, f"{other} is not an ensemblekit journal"),
        (vast, f"{vast}, line 1: 2 data sets x 2 algorithms x 1,000,000,000 repeats x 3 folds "
               "make 12,000,000,000 units of work, more than 1,000,000 units"),
        (odd, f"{odd}: analyse reads a journal (.jsonl, from compare --resume) or a scores file"),
    ]:
        code, out, err = run_main(["analyse", path], monkeypatch, capsys)
        assert (code, out) == (2, ""), err
        assert err.startswith(f"ensemblekit: error: {says}"), err


# ----------------------------------------------------------------------- scores files
@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scores")
    done = subprocess.run([*CLI, "compare", "c45", "knn", *map(
        str, DATA), *CV, "-m", "accuracy", "-m", "kappa", "-o", str(folder / "s.csv"),
        "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return folder / "s.csv", json.loads(done.stdout)


def test_scores_file_gives_the_same_means_and_ranks(scores, monkeypatch, capsys):
    path, fresh = scores
    code, out, err = run_main(["analyse", path, "-m", "kappa", "--format", "json"],
                              monkeypatch, capsys)
    assert code == 0, err
    got, want = json.loads(out)["metrics"]["kappa"], fresh["metrics"]["kappa"]
    # the per-cell t-test takes k-fold's train/test ratio (the file holds no data set sizes);
    # everything else is the compare's: means, sds, ranks, tests over data sets, effects
    for doc in (got, want):
        for row in doc["rows"]:
            for cell in row["scores"].values():
                assert cell.pop("mark") in ("", "▲", "▼")
    assert got == want


def test_scores_file_refusals(scores, tmp_path, monkeypatch, capsys):
    path, _ = scores
    code, _, err = run_main(["analyse", path, "-m", "auc"], monkeypatch, capsys)
    assert code == 2 and f"{path} records accuracy, kappa, not auc" in err
    lines = path.read_text().splitlines(keepends=True)
    for name, text, says in [
        ("short.csv", "".join(lines[:-1]), "holds 47 of the 48 scores"),
        ("twice.csv", "".join(lines + lines[-1:]), "twice"),
        ("bad.csv", "".join(lines[:5] + [lines[5].replace(",1,", ",one,", 1)] + lines[6:]),
         "row 6: repeat is 'one', not a whole number >= 1"),
        ("head.csv", "a,b\n1,2\n", "not a scores file: the header must be dataset,algorithm"),
    ]:
        bad = tmp_path / name
        bad.write_text(text)
        code, out, err = run_main(["analyse", bad], monkeypatch, capsys)
        assert (code, out) == (2, ""), err
        assert says in err and err.count("\n") == 1, err
