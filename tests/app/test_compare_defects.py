"""Defects of compare found in issue 31, each with the test that failed before its fix."""

from __future__ import annotations

import random
import shutil
from types import SimpleNamespace

import pytest

from ektesting.support import data_path
from ektesting.support import run_cli as run

SAMPLE = data_path("iris.arff").parent


def _rare_class_folder(tmp_path):
    """iris, vote and a file whose second class has one row: its ROC area is undefined in
    every fold that lacks that class."""
    folder = tmp_path / "d"
    folder.mkdir()
    for name in ("iris.arff", "vote.arff"):
        shutil.copy(SAMPLE / name, folder / name)
    rng = random.Random(1)
    rows = [f"{rng.random():.3f},{rng.random():.3f},{'b' if i == 0 else 'a'}" for i in range(40)]
    (folder / "rare.arff").write_text("@relation rare\n@attribute x numeric\n@attribute y numeric\n"
                                      "@attribute class {a,b}\n@data\n" + "\n".join(rows) + "\n")
    return folder


def test_two_algorithm_plot_draws_the_defined_data_sets_and_says_which_not(tmp_path):
    pytest.importorskip("matplotlib")
    folder = _rare_class_folder(tmp_path)
    done = run("compare", "c45", "knn", "--data", str(folder), "-m", "auc", "--cv", "5",
               "--repeats", "1", "--plot", str(tmp_path / "p.png"))
    assert done.exit_code == 0, done.stderr
    assert "ROC area (mean ± sd)" in done.stdout  # the table is printed
    assert "note: --plot: auc is undefined on rare; the scatter plot leaves it out" in done.stderr
    assert (tmp_path / "p-auc.png").stat().st_size > 0


def test_cd_diagram_title_names_the_test_made():
    from ensemblekit.app.plotting import _cd_title

    result = SimpleNamespace(alpha=0.05, baseline="c45")
    no = _cd_title(SimpleNamespace(posthoc=None), "accuracy", result)
    assert "Nemenyi CD at" not in no and "no post-hoc test" in no
    assert "Friedman does not reject at alpha 0.05" in no
    nemenyi = _cd_title(SimpleNamespace(posthoc="nemenyi"), "accuracy", result)
    assert nemenyi == "accuracy: Friedman rejects; Nemenyi CD at alpha 0.05"
    holm = _cd_title(SimpleNamespace(posthoc="wilcoxon-holm"), "accuracy", result)
    assert "Wilcoxon-Holm against c45" in holm


def test_output_records_the_n_clusters_each_run_used(tmp_path):
    import csv
    import json

    out = tmp_path / "scores.csv"
    done = run("compare", "kmeans", "iekm", "--data", str(SAMPLE / "iris.arff"), "--data",
               str(SAMPLE / "vote.arff"), "--runs", "2", "--output", str(out))
    assert done.exit_code == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    used = {(r["dataset"], json.loads(r["params"])["n_clusters"]) for r in rows}
    assert used == {("iris", 3), ("vote", 2)}  # the number of classes of each data set
    fixed = run("compare", "kmeans", "--data", str(SAMPLE / "vote.arff"), "--runs", "2", "--set",
                "n_clusters=4", "--output", str(out))
    assert fixed.exit_code == 0, fixed.stderr
    assert {json.loads(r["params"])["n_clusters"] for r in csv.DictReader(out.open())} == {4}


def test_folder_with_an_unreadable_a_duplicate_and_a_one_class_file(tmp_path):
    import gzip

    folder = tmp_path / "d"
    folder.mkdir()
    for name in ("iris.arff", "vote.arff"):
        shutil.copy(SAMPLE / name, folder / name)
    (folder / "iris2.arff.gz").write_bytes(gzip.compress((SAMPLE / "iris.arff").read_bytes()))
    (folder / "broken.arff").write_text("@relation broken\n@attribute x numeric\n@data\n1,2,3\n")
    (folder / "one.arff").write_text("@relation one\n@attribute x numeric\n@attribute class {a,b}"
                                     "\n@data\n1,a\n2,a\n3,a\n4,a\n")
    done = run("compare", "c45", "knn", "--data", str(folder), "--cv", "2", "--repeats", "1",
               "--format", "json")
    assert done.exit_code == 0, done.stderr
    import json

    rows = json.loads(done.stdout)["metrics"]["accuracy"]["rows"]
    assert [r["dataset"] for r in rows] == ["iris", "vote"]  # each once; one.arff not ranked
    assert "skipped" in done.stderr and "broken.arff: it cannot be read" in done.stderr
    assert "iris2.arff.gz holds the same data as" in done.stderr
    assert "one.arff is left out: it has one class present" in done.stderr
    strict = run("compare", "c45", "knn", "--data", str(folder), "--cv", "2", "--repeats", "1",
                 "--strict")
    assert strict.exit_code == 2 and "broken.arff, line 4" in strict.stderr
    assert len(strict.stderr.strip().splitlines()) == 1


def test_evaluate_of_a_clusterer_reports_every_index():
    import json

    from ensemblekit.metrics import EXTERNAL_INDICES, INTERNAL_INDICES

    done = run("evaluate", "iekm", str(SAMPLE / "iris.arff"), "--runs", "2", "--format", "json")
    assert done.exit_code == 0, done.stderr
    reported = list(json.loads(done.stdout)["metrics"])
    assert reported == [*EXTERNAL_INDICES, *INTERNAL_INDICES]
    assert {"nmi", "purity", "ari", "silhouette", "dunn", "connectivity"} <= set(reported)
