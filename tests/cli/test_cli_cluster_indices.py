"""`ensemblekit cluster`: validity indices, -k ranges, --members; `compare --metric` internal indices."""

import json
import sys
from pathlib import Path

import arff
import numpy as np
import pytest

from ensemblekit import metrics as M
from ensemblekit.scores import clustering as S

from ektesting.support import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
IRIS = str(ROOT / "sample_data" / "iris.arff")




def iris():
    with open(IRIS) as fh:
        data = arff.load(fh)
    X = np.array([row[:-1] for row in data["data"]], dtype=np.float64)
    y = np.array([row[-1] for row in data["data"]])
    return X, y


def read_labels(path):
    return np.array([int(line.split(",")[1]) for line in path.read_text().splitlines()[1:]])


def test_cluster_prints_every_index_computed_from_its_own_labels(tmp_path):
    labels_file = tmp_path / "l.csv"
    result = run("cluster", "kmeans", IRIS, "-k", "3", "--format", "json", "--labels-out", labels_file)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert list(out["external"]) == list(M.EXTERNAL_INDICES)
    assert list(out["internal"]) == list(M.INTERNAL_INDICES)
    X, y = iris()
    labels = read_labels(labels_file)
    expected = M.clustering_indices(labels, truth=y, X=X)
    for name, value in expected.items():
        section = "internal" if M.METRICS[name].internal else "external"
        # (same labels and data; BLAS may sum in another order on the pipeline's copy)
        assert out[section][name] == pytest.approx(value, rel=1e-9)
    table = run("cluster", "kmeans", IRIS, "-k", "3")
    assert table.exit_code == 0
    for heading in ("Rand", "Jaccard", "FM", "W10", "W01", "Silhouette", "Dunn", "Connectivity",
                    "Davies-Bouldin", "Calinski-Harabasz", "lower"):
        assert heading in table.stdout


def test_without_a_class_only_internal_indices_are_printed(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n0,0\n0,1\n1,0\n9,9\n9,8\n8,9\n")
    result = run("cluster", "pam", path, "-k", "2", "--no-class", "--format", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["external"] == {} and out["internal"]["dunn"] == pytest.approx(
        S.dunn(np.array([[0, 0], [0, 1], [1, 0], [9, 9], [9, 8], [8, 9]]), [0, 0, 0, 1, 1, 1]))


def test_k_range_prints_each_internal_index_and_marks_the_best_k():
    result = run("cluster", "kmeans", IRIS, "-k", "2:5", "--format", "json", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["k"] == [2, 3, 4, 5] and list(out["internal"]) == list(M.INTERNAL_INDICES)
    for name, column in out["internal"].items():
        assert out["best_k"][name] == M.best_k(out["k"], column, name)
    # the values at k = 3 are those of a single run with -k 3 and the same seed
    single = json.loads(run("cluster", "kmeans", IRIS, "-k", "3", "--format", "json", "--seed",
                            "3").stdout)
    for name, value in single["internal"].items():
        assert out["internal"][name][1] == value
    table = run("cluster", "kmeans", IRIS, "-k", "2:5", "--seed", "3")
    assert table.exit_code == 0
    assert "best k per index" in table.stdout and " *" in table.stdout
    assert f"Silhouette: k = {out['best_k']['silhouette']}" in table.stdout


@pytest.mark.parametrize("args, message", [
    (("-k", "1:4"), "2 <= A <= B"),
    (("-k", "5:3"), "2 <= A <= B"),
    (("-k", "two"), "range A:B"),
    (("-k", "2:4", "--labels-out", "x.csv"), "single k"),
])
def test_bad_k_options_are_usage_errors(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)  # a --labels-out file, if one were written, lands here
    result = run("cluster", "kmeans", IRIS, *args)
    assert result.exit_code == 2 and message in result.stderr
    assert list(tmp_path.iterdir()) == []


def write_members(path, columns, rows=150, header=True):
    with open(path, "w") as fh:
        if header:
            fh.write(",".join(f"m{j}" for j in range(len(columns))) + "\n")
        for i in range(rows):
            fh.write(",".join(str(c[i]) for c in columns) + "\n")


def test_members_file_is_combined_by_the_consensus_algorithms(tmp_path):
    _, y = iris()
    truth = np.unique(y, return_inverse=True)[1]
    rng = np.random.RandomState(0)
    columns = [[f"g{v}" for v in np.where(rng.rand(150) < 0.8, truth, rng.randint(0, 3, 150))]
               for _ in range(7)]
    members = tmp_path / "members.csv"
    write_members(members, columns)
    labels_file = tmp_path / "l.csv"
    result = run("cluster", "hac-average", IRIS, "--members", members, "--labels-out", labels_file,
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    from ensemblekit.clustering.consensus import consensus_hac

    expected = consensus_hac(np.array(columns).T, 3, linkage="average")
    np.testing.assert_array_equal(read_labels(labels_file), expected)
    assert json.loads(result.stdout)["external"]["nmi"] > 0.8
    mcla = run("cluster", "mcla", IRIS, "--members", members)
    assert mcla.exit_code == 0 and "METIS" in mcla.stderr


def test_members_file_errors(tmp_path):
    members = tmp_path / "m.csv"
    write_members(members, [[0] * 150])
    result = run("cluster", "kmeans", IRIS, "--members", members)
    assert result.exit_code == 2 and "does not combine members" in result.stderr
    short = tmp_path / "short.csv"
    write_members(short, [[0] * 149], rows=149)
    result = run("cluster", "mcla", IRIS, "--members", short)
    assert result.exit_code == 2 and "149 rows of member labels" in result.stderr
    gap = tmp_path / "gap.csv"
    write_members(gap, [[0] * 150, [1] * 149 + ["?"]])
    result = run("cluster", "cspa", IRIS, "--members", gap)
    assert result.exit_code == 2 and "no label for row 150" in result.stderr


def test_hgpa_without_kahypar_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "kahypar", None)
    result = run("cluster", "hgpa", IRIS, "-k", "3")
    assert result.exit_code == 2
    assert "kahypar" in result.stderr and "pip install" in result.stderr
    assert result.stdout == ""


def test_cspa_says_which_partitioner_ran(monkeypatch):
    result = run("cluster", "cspa", IRIS, "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["partitioner"] == "metis"
    monkeypatch.setitem(sys.modules, "pymetis", None)
    result = run("cluster", "cspa", IRIS)
    assert result.exit_code == 0 and "spectral clustering" in result.stderr


def test_clusterer_without_prototypes_prints_sizes():
    result = run("cluster", "diana", IRIS, "-k", "3", "--format", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["prototypes"] is None and sorted(out["sizes"]) == [37, 53, 60]
    # the paper's DIANA row (Akdemir & Jannink 2014, Table 2)
    assert round(out["internal"]["connectivity"], 2) == 12.43 and round(out["external"]["w10"], 2) == 0.78
    table = run("cluster", "diana", IRIS, "-k", "3")
    assert table.exit_code == 0 and "size" in table.stdout and "3 clusters" in table.stdout


def test_compare_accepts_internal_indices():
    result = run("compare", "pam", "diana", "kmeans", "--data", IRIS, "--runs", "2", "--metric", "dunn",
                 "--metric", "connectivity", "--metric", "w01", "--format", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)["metrics"]
    pam = out["connectivity"]["rows"][0]["scores"]["pam"]
    assert pam["n"] == 2 and pam["sd"] == 0.0
    assert round(pam["mean"], 2) == 10.09  # the paper's PAM row
    assert round(out["dunn"]["rows"][0]["scores"]["diana"]["mean"], 2) == 0.11
    assert round(out["w01"]["rows"][0]["scores"]["pam"]["mean"], 2) == 0.84
    # connectivity is lower-is-better: PAM (10.09) ranks above DIANA (12.43)
    ranks = out["connectivity"]["average_rank"]
    assert ranks["pam"] < ranks["diana"]
