"""The command line end to end: CliRunner for most cases, real subprocesses for pipes."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import arff
import numpy as np
import pytest

from ektesting.support import data_path
from ektesting.support import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
IRIS = str(SAMPLE / "iris.arff")
VOTE = str(SAMPLE / "vote.arff")





def test_help_and_version():
    result = run("--help")
    assert result.exit_code == 0
    for command in ("fit", "predict", "cluster", "evaluate", "compare", "algorithms", "show", "info"):
        assert command in result.stdout
    assert run("--version").stdout.startswith("ensemblekit ")


def test_algorithms_json_lists_every_registry_entry():
    result = run("algorithms", "--format", "json")
    assert result.exit_code == 0
    entries = {e["name"]: e for e in json.loads(result.stdout)}
    assert set(entries) >= {"kmeans", "iekm", "knn", "c45"}
    iekm = {p["name"]: p["default"] for p in entries["iekm"]["parameters"]}
    assert iekm["n_estimators"] == 10 and iekm["max_features"] == 0.5
    assert "one-hot" in entries["iekm"]["preprocessing"]


def test_info_json_counts_classes_and_missing():
    result = run("info", VOTE, "--format", "json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["instances"] == 435
    assert summary["class"]["counts"] == {"democrat": 267, "republican": 168}
    # vote's missing values: count them from the file itself with liac-arff
    raw = arff.load(open(VOTE))
    first = raw["attributes"][0][0]
    expected = sum(row[0] is None for row in raw["data"])
    got = next(a for a in summary["attributes"] if a["name"] == first)["missing"]
    assert got == expected > 0


def test_info_counts_a_string_class_s_missing_values_and_names_its_type(tmp_path):
    """A string class (titanic's home.dest in OpenML 40945) has missing values like any
    other; they were counted as 0 and the JSON called the type numeric."""
    path = tmp_path / "s.arff"
    path.write_text("@relation r\n@attribute x numeric\n@attribute where string\n@data\n"
                    "1,'a b'\n2,?\n3,'c'\n4,?\n5,?\n")
    result = run("info", path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["attributes"][1] == {"name": "where", "type": "string", "role": "class",
                                        "missing": 3, "values": 2}
    assert summary["class"] == {"name": "where", "type": "string"}


OPENML = Path(__import__("sklearn").__file__).parent / "datasets" / "tests" / "data" / "openml"


@pytest.mark.skipif(not OPENML.is_dir(), reason="this scikit-learn has no bundled OpenML files")
def test_scikit_learn_s_bundled_openml_files_load_in_info():
    """Every ARFF file scikit-learn ships for its OpenML tests loads in info (issue 32,
    acceptance 2); titanic's class (home.dest) has Weka's 564 missing values."""
    files = sorted(OPENML.glob("id_*/*.arff.gz"))
    assert len(files) >= 10
    for path in files:
        result = run("info", path, "--format", "json")
        assert result.exit_code == 0, (path, result.stderr)
        json.loads(result.stdout)
    titanic = next(OPENML.glob("id_40945/*.arff.gz"))
    summary = json.loads(run("info", titanic, "--format", "json").stdout)
    assert summary["class"] == {"name": "home.dest", "type": "string"}
    assert summary["attributes"][-1]["missing"] == 564
    # with --string-to-nominal the class is nominal: 564 missing, 745 counted
    summary = json.loads(run("info", titanic, "--string-to-nominal", "--format", "json").stdout)
    assert summary["attributes"][-1]["missing"] == 564
    assert sum(summary["class"]["counts"].values()) == 1309 - 564


def test_info_table_reads_stdin():
    text = Path(IRIS).read_text()
    result = run("info", "-", input=text)
    assert result.exit_code == 0, result.stderr
    assert "Iris-setosa" in result.stdout and "150" in result.stdout


def test_fit_predict_round_trip_and_formats(tmp_path):
    model = tmp_path / "vote.ekm"
    result = run("fit", "c45", VOTE, "-o", model, "--seed", "3")
    assert result.exit_code == 0, result.stderr
    assert model.exists() and result.stdout == ""
    out = run("predict", model, VOTE)
    assert out.exit_code == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0] == ["row", "prediction"]
    assert [int(r[0]) for r in rows[1:]] == list(range(1, 436))
    predictions = [r[1] for r in rows[1:]]
    assert set(predictions) <= {"democrat", "republican"}
    truth = [row[-1] for row in arff.load(open(VOTE))["data"]]
    # an unpruned tree with min 2 instances per leaf fits its own training data closely
    assert np.mean(np.array(predictions) == np.array(truth)) > 0.95

    proba = run("predict", model, VOTE, "--proba", "--format", "jsonl")
    records = [json.loads(line) for line in proba.stdout.splitlines()]
    assert len(records) == 435
    for r in records[:20]:
        assert r["p_democrat"] + r["p_republican"] == pytest.approx(1.0, abs=2e-6)
        assert r["prediction"] == max(("democrat", "republican"), key=lambda c: r[f"p_{c}"])

    as_json = json.loads(run("predict", model, VOTE, "--format", "json").stdout)
    assert [r["prediction"] for r in as_json] == predictions
    tsv = run("predict", model, VOTE, "--format", "tsv").stdout.splitlines()
    assert tsv[1].split("\t") == ["1", predictions[0]]
    parsed = arff.loads(run("predict", model, VOTE, "--format", "arff", "--proba").stdout)
    assert [r[1] for r in parsed["data"]] == predictions

    # same seed, same model file, byte for byte
    again = tmp_path / "again.ekm"
    assert run("fit", "c45", VOTE, "-o", again, "--seed", "3").exit_code == 0
    assert again.read_bytes() == model.read_bytes()


def test_predict_output_file_and_show(tmp_path):
    model = tmp_path / "iris.ekm"
    assert run("fit", "c45", IRIS, "-o", model).exit_code == 0
    target = tmp_path / "pred.csv"
    result = run("predict", model, IRIS, "-o", target)
    assert result.exit_code == 0 and result.stdout == ""
    assert target.read_text().startswith("row,prediction\n1,Iris-setosa\n")
    shown = run("show", model)
    assert shown.exit_code == 0, shown.stderr
    assert "petalwidth" in shown.stdout or "petallength" in shown.stdout
    meta = json.loads(run("show", model, "--format", "json").stdout)
    assert meta["algorithm"] == "c45" and meta["training_data"]["instances"] == 150


def test_predict_schema_mismatch_names_the_attribute(tmp_path):
    model = tmp_path / "iris.ekm"
    assert run("fit", "c45", IRIS, "-o", model).exit_code == 0
    raw = arff.load(open(IRIS))
    raw["attributes"] = [("petal_width_cm" if n == "petalwidth" else n, t) for n, t in raw["attributes"]]
    renamed = tmp_path / "renamed.arff"
    renamed.write_text(arff.dumps(raw))
    result = run("predict", model, renamed)
    assert result.exit_code == 2
    assert "petalwidth" in result.stderr and result.stdout == ""


def test_predict_unseen_nominal_value_names_value_and_row(tmp_path):
    model = tmp_path / "vote.ekm"
    assert run("fit", "c45", VOTE, "-o", model).exit_code == 0
    raw = arff.load(open(VOTE))
    name, values = raw["attributes"][0]
    raw["attributes"][0] = (name, values + ["abstain"])
    raw["data"][4][0] = "abstain"
    changed = tmp_path / "vote2.arff"
    changed.write_text(arff.dumps(raw))
    result = run("predict", model, changed, "--unknown", "error")
    assert result.exit_code == 2
    assert "abstain" in result.stderr and name in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


@pytest.mark.parametrize(
    "args,needle",
    [
        (("fit", "nosuch", IRIS, "-o", "x.ekm"), "unknown algorithm 'nosuch'"),
        (("fit", "iekm", IRIS, "-o", "x.ekm", "--set", "trees=3"), "valid keys"),
        (("fit", "iekm", IRIS, "-o", "x.ekm", "--set", "max_features=7"), "max_features"),
        (("info", "no/such/file.arff"), "no/such/file.arff"),
        (("compare", "knn", "kmeans", "--data", IRIS), "different tasks"),
        (("compare", "knn", "--data", IRIS, "--runs", "3"), "--runs"),
        (("cluster", "knn", IRIS), "clustering algorithm"),
        (("predict", "no-model.ekm", IRIS), "no-model.ekm"),
    ],
)
def test_bad_usage_exits_2_with_one_line(tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, result.stdout
    assert needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.ekm").exists()


def test_tampered_model_is_refused(tmp_path):
    model = tmp_path / "m.ekm"
    assert run("fit", "knn", IRIS, "-o", model).exit_code == 0
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data))
    result = run("predict", model, IRIS)
    assert result.exit_code == 2 and str(model) in result.stderr


def test_cluster_reports_prototypes_and_external_indices(tmp_path):
    labels = tmp_path / "labels.csv"
    result = run("cluster", "iekm", IRIS, "-k", "3", "--format", "json", "--labels-out", labels,
                 "--seed", "5")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert sum(out["sizes"]) == 150 and len(out["prototypes"]) == 3
    assert set(out["external"]) == {"nmi", "purity", "ari", "rand", "jaccard", "fm", "w10", "w01"}
    assert set(out["internal"]) == {"silhouette", "dunn", "connectivity", "davies-bouldin",
                                    "calinski-harabasz"}
    assert 0.5 < out["external"]["purity"] <= 1.0
    rows = labels.read_text().splitlines()
    assert rows[0] == "row,cluster" and len(rows) == 151
    counts = np.bincount([int(r.split(",")[1]) for r in rows[1:]], minlength=3)
    assert counts.tolist() == out["sizes"]
    # prototypes are the means of their members (iris has no nominal features)
    data = np.array([r[:4] for r in arff.load(open(IRIS))["data"]], dtype=float)
    assign = np.array([int(r.split(",")[1]) for r in rows[1:]])
    for k, proto in enumerate(out["prototypes"]):
        np.testing.assert_allclose(list(proto.values()), data[assign == k].mean(axis=0), rtol=1e-9)
    table = run("cluster", "kmeans", IRIS, "--seed", "5")
    assert table.exit_code == 0 and "NMI" in table.stdout


def test_saved_clusterer_predicts_its_training_labels(tmp_path):
    model = tmp_path / "km.ekm"
    labels = tmp_path / "l.csv"
    assert run("cluster", "kmeans", IRIS, "--save", model, "--labels-out", labels).exit_code == 0
    pred = run("predict", model, IRIS)
    assert pred.exit_code == 0, pred.stderr
    assert pred.stdout.replace("prediction", "cluster") == labels.read_text()


def test_evaluate_algorithm_and_model(tmp_path):
    result = run("evaluate", "knn", IRIS, "--cv", "5", "--repeats", "2", "--format", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    cell = out["metrics"]["accuracy"]["rows"][0]["scores"]["knn"]
    assert cell["n"] == 10 and 0.85 < cell["mean"] <= 1.0
    model = tmp_path / "m.ekm"
    assert run("fit", "knn", IRIS, "-o", model).exit_code == 0
    scored = json.loads(run("evaluate", model, IRIS, "--format", "json").stdout)
    # 1-NN on its own training data: every instance is its own nearest neighbour,
    # except exact duplicates with different classes (none in iris)
    assert scored["scores"]["accuracy"] == 1.0


def test_compare_clusterers_is_deterministic_and_writes_long_scores(tmp_path):
    out_csv = tmp_path / "scores.csv"
    args = ("compare", "kmeans", "iekm", "--data", SAMPLE / "iris.arff", "--data", SAMPLE / "wine.arff",
            "--runs", "3", "--seed", "7", "--format", "json")
    first = run(*args, "--output", out_csv)
    assert first.exit_code == 0, first.stderr
    second = run(*args)
    assert first.stdout == second.stdout
    result = json.loads(first.stdout)
    assert set(result["metrics"]) == {"nmi", "purity"}
    ranks = result["metrics"]["nmi"]["average_rank"]
    assert sum(ranks.values()) == pytest.approx(3.0)
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert len(rows) == 2 * 2 * 3 * 2  # data sets x algorithms x runs x metrics
    assert {r["fold"] for r in rows} == {"0"}
    nmi_means = np.mean([float(r["value"]) for r in rows
                         if r["dataset"] == "iris" and r["algorithm"] == "iekm" and r["metric"] == "nmi"])
    assert nmi_means == pytest.approx(result["metrics"]["nmi"]["rows"][0]["scores"]["iekm"]["mean"])


def test_compare_folder_of_classifiers_table():
    result = run("compare", "knn", "c45", "--data", SAMPLE, "--cv", "3", "--repeats", "1")
    assert result.exit_code == 0, result.stderr
    for name in ("iris", "glass", "vote", "breast-cancer", "wine", "average rank"):
        assert name in result.stdout


def test_failed_compare_leaves_no_output_file(tmp_path):
    target = tmp_path / "scores.csv"
    result = run("compare", "knn", "--data", IRIS, "--data", tmp_path / "missing.arff", "--cv", "3",
                 "--repeats", "1", "--output", target)
    assert result.exit_code == 2
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def _ensemblekit():
    exe = Path(sys.executable).parent / "ensemblekit"
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from ensemblekit.cli import main; main()"]


@pytest.mark.slow  # whole processes over 26,000 rows
def test_predict_pipe_into_head_is_clean(tmp_path):
    model = tmp_path / "m.ekm"
    subprocess.run(_ensemblekit() + ["fit", "c45", VOTE, "-o", str(model)], check=True,
                   capture_output=True)
    # enough rows that the writer outlives `head`, so the pipe really closes early
    raw = arff.load(open(VOTE))
    raw["data"] = raw["data"] * 60
    big = tmp_path / "big.arff"
    big.write_text(arff.dumps(raw))
    cmd = " ".join(_ensemblekit()) if len(_ensemblekit()) == 1 else None
    if cmd is None:
        pytest.skip("console script not installed")
    shell = f"set -o pipefail; cat {big} | {cmd} predict {model} - | head -3"
    proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True)
    assert proc.stderr == ""
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "row,prediction" and len(lines) == 3
    assert all(line.split(",")[1] in ("democrat", "republican") for line in lines[1:])


def test_classifier_on_csv_with_numeric_labels(tmp_path):
    path = tmp_path / "two.csv"
    rows = ["x,y,label"] + [f"{i},{i % 3},{int(i >= 10)}" for i in range(20)]
    path.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.ekm"
    assert run("fit", "c45", path, "-o", model).exit_code == 0
    out = run("predict", model, path)
    assert out.exit_code == 0, out.stderr
    predicted = [line.split(",")[1] for line in out.stdout.splitlines()[1:]]
    # x alone separates the classes at 9.5, so the tree reproduces the labels
    assert predicted == ["0"] * 10 + ["1"] * 10


@pytest.mark.slow  # whole processes
def test_table_output_into_closed_pipe_is_clean(tmp_path):
    if len(_ensemblekit()) != 1:
        pytest.skip("console script not installed")
    wide = tmp_path / "wide.arff"
    names = [f"a{i}" for i in range(3000)]
    wide.write_text("@relation wide\n" + "".join(f"@attribute {n} numeric\n" for n in names)
                    + "@attribute c {x,y}\n@data\n" + ",".join(["1"] * 3000) + ",x\n")
    shell = f"set -o pipefail; {_ensemblekit()[0]} info {wide} | head -2"
    proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert len(proc.stdout.splitlines()) == 2


@pytest.mark.slow  # whole processes
def test_usage_errors_from_option_parsing_are_one_line(tmp_path):
    if len(_ensemblekit()) != 1:
        pytest.skip("console script not installed")
    for args in (["compare", "knn", "--data", IRIS, "--seed", "99999999999"], ["fit", "knn"]):
        proc = subprocess.run(_ensemblekit() + args, capture_output=True, text=True)
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("ensemblekit: error:")


def test_numeric_class_is_refused_by_classifiers(tmp_path):
    reg = tmp_path / "reg.arff"
    reg.write_text("@relation r\n@attribute a numeric\n@attribute t numeric\n@data\n"
                   + "".join(f"{i},{i * 0.5}\n" for i in range(12)))
    result = run("evaluate", "c45", reg, "--cv", "2", "--repeats", "1")
    assert result.exit_code == 2 and "nominal class" in result.stderr
    result = run("fit", "knn", reg, "-o", tmp_path / "m.ekm")
    assert result.exit_code == 2 and "numeric class attribute 't'" in result.stderr


def test_clusterer_keeps_a_numeric_last_column_as_a_feature(tmp_path):
    path = tmp_path / "num.csv"
    path.write_text("x,y,z\n1,2,3\n1,2,4\n8,9,9\n8,9,8\n")
    result = run("cluster", "kmeans", path, "-k", "2", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert "'z' is numeric" in result.stderr
    protos = sorted(json.loads(result.stdout)["prototypes"], key=lambda p: p["x"])
    assert protos == [{"x": 1.0, "y": 2.0, "z": 3.5}, {"x": 8.0, "y": 9.0, "z": 8.5}]


def test_fit_clusterer_defaults_to_the_number_of_classes(tmp_path):
    model = tmp_path / "g.ekm"
    assert run("fit", "kmeans", SAMPLE / "glass.arff", "-o", model).exit_code == 0
    meta = json.loads(run("show", model, "--format", "json").stdout)
    assert meta["params"]["n_clusters"] == 6  # glass declares 7 types; 6 occur


def test_damaged_metadata_is_a_bad_model_file(tmp_path):
    import zipfile

    model = tmp_path / "m.ekm"
    assert run("fit", "knn", IRIS, "-o", model).exit_code == 0
    with zipfile.ZipFile(model) as z:
        members = {n: z.read(n) for n in z.namelist()}
    for change in ({"task": "clustering"}, {"schema": None}, {"algorithm": "nosuch"}):
        meta = json.loads(members["metadata.json"])
        meta.update(change)
        if meta["schema"] is None:
            del meta["schema"]
        damaged = tmp_path / "damaged.ekm"
        with zipfile.ZipFile(damaged, "w") as z:
            for name, data in members.items():
                z.writestr(name, json.dumps(meta) if name == "metadata.json" else data)
        for args in (("predict", damaged, IRIS), ("show", damaged)):
            result = run(*args)
            assert result.exit_code == 2, (change, result.stderr)
            assert "damaged" in result.stderr


def test_failing_unit_is_a_clear_error():
    # lazy-bagging cannot take more neighbours than a fold's training rows (knn, as Weka's
    # IBk, then simply uses them all)
    result = run("evaluate", "lazy-bagging", IRIS, "--set", "n_neighbors=1000", "--cv", "2",
                 "--repeats", "1")
    assert result.exit_code == 2
    assert "2 of 2 units failed" in result.stderr
    assert ("lazy-bagging failed on iris (repeat 1, fold 1)" in result.stderr
            and "n_neighbors" in result.stderr)
    assert "failed" in result.stdout  # the table shows the cell as failed
    as_json = run("evaluate", "lazy-bagging", IRIS, "--set", "n_neighbors=1000", "--cv", "2",
                  "--repeats", "1", "--format", "json")
    out = json.loads(as_json.stdout)
    assert out["metrics"]["accuracy"]["rows"][0]["scores"]["lazy-bagging"] is None
    assert [(f["dataset"], f["repeat"], f["fold"]) for f in out["failures"]] == [
        ("iris", 1, 1), ("iris", 1, 2)]


def test_output_into_a_missing_folder_is_refused_before_work(tmp_path):
    result = run("compare", "knn", "--data", IRIS, "--cv", "2", "--repeats", "1",
                 "--output", tmp_path / "nope" / "s.csv")
    assert result.exit_code == 2 and "does not exist" in result.stderr and result.stdout == ""
    result = run("cluster", "kmeans", IRIS, "--labels-out", tmp_path / "l.csv",
                 "--save", tmp_path / "nope" / "m.ekm")
    assert result.exit_code == 2 and not (tmp_path / "l.csv").exists()


def test_evaluate_model_refuses_protocol_options(tmp_path):
    model = tmp_path / "m.ekm"
    assert run("fit", "knn", IRIS, "-o", model).exit_code == 0
    result = run("evaluate", model, IRIS, "--cv", "5")
    assert result.exit_code == 2 and "--cv" in result.stderr


def test_n_jobs_zero_is_refused():
    result = run("compare", "knn", "--data", IRIS, "-j", "0")
    assert result.exit_code == 2 and "--n-jobs" in result.stderr


def test_compare_grid_table_matches_the_long_scores(tmp_path):
    out_csv = tmp_path / "g.csv"
    result = run("compare", "kmeans", "iekm", "--data", IRIS, "--data", SAMPLE / "wine.arff",
                 "--runs", "3", "--seed", "2", "--baseline", "kmeans", "--grid", "n_estimators=5,20",
                 "--grid", "max_features=0.5:1.0:0.5", "--format", "json", "--metric", "nmi",
                 "--output", out_csv)
    assert result.exit_code == 0, result.stderr
    grid = json.loads(result.stdout)["grid"]["nmi"]
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    means = {}
    for r in rows:
        means.setdefault((r["dataset"], r["algorithm"]), []).append(float(r["value"]))
    means = {k: sum(v) / len(v) for k, v in means.items()}
    for row in grid:
        d = row["dataset"]
        base = means[(d, "kmeans")]
        assert row["baseline"] == pytest.approx(base)
        points = {k[1]: v for k, v in means.items() if k[0] == d and k[1].startswith("iekm[")}
        assert len(points) == 4 == row["points"]
        wins = {label: v for label, v in points.items() if v > base + 1e-12}
        assert row["percent"] == pytest.approx(100 * len(wins) / 4)
        if wins:
            assert row["average"] == pytest.approx(sum(wins.values()) / len(wins))
            assert row["best"] == pytest.approx(max(wins.values()))
    table = run("compare", "kmeans", "iekm", "--data", IRIS, "--data", SAMPLE / "wine.arff", "--runs", "2",
                "--baseline", "kmeans", "--grid", "n_estimators=5,20", "--metric", "nmi")
    assert table.exit_code == 0 and "% better" in table.stdout and "n_estimators (better)" in table.stdout


@pytest.mark.slow  # two compares and three figures
def test_compare_plots_and_refuses_unplottable_before_work(tmp_path):
    cd = tmp_path / "cd.png"
    result = run("compare", "knn", "c45", "k2", "--data", IRIS, "--data", SAMPLE / "wine.arff", "--cv",
                 "3", "--repeats", "1", "--plot", cd)
    assert result.exit_code == 0, result.stderr
    # one figure per metric, named after it; cd.png itself is not written
    assert (tmp_path / "cd-accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not cd.exists()
    heat = tmp_path / "heat.svg"
    result = run("compare", "kmeans", "iekm", "--data", IRIS, "--runs", "2", "--baseline", "kmeans",
                 "--grid", "n_estimators=5,10", "--plot", heat)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "heat-nmi.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "heat-purity.svg").read_text().lstrip().startswith("<?xml")
    scores = tmp_path / "s.csv"
    refused = run("compare", "knn", "c45", "k2", "--data", IRIS, "--cv", "3", "--repeats", "1",
                  "--plot", tmp_path / "one.png", "--output", scores)
    assert refused.exit_code == 2 and "2 data sets" in refused.stderr
    assert not scores.exists() and refused.stdout == ""


def test_max_instances_subsamples_before_the_folds(tmp_path):
    out_csv = tmp_path / "s.csv"
    result = run("compare", "knn", "--data", IRIS, "--cv", "4", "--repeats", "1", "--max-instances", "40",
                 "--output", out_csv)
    assert result.exit_code == 0, result.stderr
    values = [float(r["value"]) for r in csv.DictReader(io.StringIO(out_csv.read_text()))]
    # 40 instances in 4 folds: 10 test instances each, so every accuracy is a multiple of 0.1
    assert len(values) == 4
    assert all(abs(v * 10 - round(v * 10)) < 1e-9 for v in values)


def test_without_baseline_marks_are_against_the_first_algorithm():
    result = run("compare", "knn", "c45", "--data", IRIS, "--data", SAMPLE / "wine.arff", "--cv", "5",
                 "--repeats", "2", "--format", "json")
    out = json.loads(result.stdout)
    assert out["marks_against"] == "knn" and out["baseline"] is None
    entry = out["metrics"]["accuracy"]
    # two algorithms: the Wilcoxon test over data sets, c45 against the first column (as the marks);
    # no Friedman/Nemenyi pairs (Demšar 2006, Sect. 3.1; k >= 3 is in test_verdicts.py)
    assert (entry["wilcoxon"]["algorithm"], entry["wilcoxon"]["against"]) == ("c45", "knn")
    assert "pairs" not in entry and "friedman" not in entry and "nemenyi_cd" not in entry
    assert all(row["scores"]["knn"]["mark"] == "" for row in entry["rows"])  # the reference itself


@pytest.mark.parametrize("order, reference, other, mark", [
    (("knn", "cart-entropy"), "knn", "cart-entropy", "\u25bc"),
    (("cart-entropy", "knn"), "cart-entropy", "knn", "\u25b2")])
def test_marks_follow_the_first_algorithm(order, reference, other, mark):
    # a one-split tree (cart-entropy, max_depth=1) is far worse than knn on iris and wine:
    # every cell of the other algorithm is marked against the first one (worse or better),
    # the first one's never
    result = run("compare", *order, "--data", IRIS, "--data", SAMPLE / "wine.arff", "--cv", "5",
                 "--repeats", "2", "--set", "max_depth=1", "--format", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["marks_against"] == reference
    rows = out["metrics"]["accuracy"]["rows"]
    assert [r["scores"][reference]["mark"] for r in rows] == ["", ""]
    assert [r["scores"][other]["mark"] for r in rows] == [mark, mark]


def test_k2_fit_show_graph_and_compare(tmp_path):
    model = tmp_path / "k2.ekm"
    result = run("fit", "k2", IRIS, "-o", model)
    assert result.exit_code == 0, result.stderr
    shown = run("show", model, "--graph", tmp_path / "net.dot")
    assert shown.exit_code == 0, shown.stderr
    assert "parents of each node" in shown.stdout and "petalwidth" in shown.stdout
    dot = (tmp_path / "net.dot").read_text()
    assert dot.startswith("digraph") and dot.count("->") >= 4  # naive-Bayes arcs at least
    proba = run("predict", model, IRIS, "--proba", "--format", "jsonl")
    records = [json.loads(line) for line in proba.stdout.splitlines()]
    assert len(records) == 150
    for r in records[:10]:
        assert sum(v for k, v in r.items() if k.startswith("p_")) == pytest.approx(1.0, abs=3e-6)
    not_a_network = tmp_path / "knn.ekm"
    assert run("fit", "knn", IRIS, "-o", not_a_network).exit_code == 0
    refused = run("show", not_a_network, "--graph", tmp_path / "x.dot")
    assert refused.exit_code == 2 and not (tmp_path / "x.dot").exists()
    compared = run("compare", "k2", "knn", "--data", IRIS, "--data", VOTE, "--cv", "3", "--repeats", "1",
                   "--format", "json")
    assert compared.exit_code == 0, compared.stderr
    rows = json.loads(compared.stdout)["metrics"]["accuracy"]["rows"]
    assert all(0.8 < row["scores"]["k2"]["mean"] <= 1.0 for row in rows)


def test_bagged_k2_averages_its_members(tmp_path):
    model = tmp_path / "b.ekm"
    assert run("fit", "bagged-k2", IRIS, "-o", model, "--set", "n_estimators=4").exit_code == 0
    out = run("predict", model, IRIS, "--proba")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 150
    total = [sum(float(v) for k, v in r.items() if k.startswith("p_")) for r in rows]
    assert all(abs(t - 1.0) < 3e-6 for t in total)
    assert "bagging of 4 Bayesian networks" in run("show", model).stdout


def test_iebn_is_one_network_and_reproducible(tmp_path):
    first, second = tmp_path / "a.ekm", tmp_path / "b.ekm"
    for path in (first, second):
        assert run("fit", "iebn", VOTE, "-o", path, "--seed", "4", "--set", "n_estimators=5").exit_code == 0
    assert first.read_bytes() == second.read_bytes()
    shown = run("show", first)
    assert "parents of each node" in shown.stdout
    compared = run("compare", "k2", "iebn", "bagged-k2", "--data", IRIS, "--data", VOTE, "--cv", "3",
                   "--repeats", "1", "--set", "n_estimators=3", "--baseline", "k2", "--format", "json")
    assert compared.exit_code == 0, compared.stderr
    ranks = json.loads(compared.stdout)["metrics"]["accuracy"]["average_rank"]
    assert set(ranks) == {"k2", "iebn", "bagged-k2"} and sum(ranks.values()) == pytest.approx(6.0)


def test_predict_in_chunks_with_n_jobs_equals_one_call(tmp_path):
    # diabetes has 768 rows: two chunks of 'predict'; the CSV must hold exactly what one
    # predict_proba call on all rows gives, with and without --n-jobs
    from ensemblekit.api import load_model
    from ensemblekit.data import load_dataset

    data = str(data_path("diabetes.arff"))
    for algo in ("knn", "k2"):
        model = tmp_path / f"{algo}.ekm"
        assert run("fit", algo, data, "-o", str(model)).exit_code == 0
        plain = run("predict", str(model), data, "--proba")
        jobs = run("predict", str(model), data, "--proba", "--n-jobs", "2")
        assert plain.exit_code == jobs.exit_code == 0
        assert plain.stdout == jobs.stdout
        rows = list(csv.reader(io.StringIO(plain.stdout)))[1:]
        assert len(rows) == 768
        ds = load_dataset(data)
        expected = load_model(model).pipeline.predict_proba(ds.X)
        got = np.array([[float(v) for v in r[2:]] for r in rows])
        np.testing.assert_allclose(got, expected, atol=5e-7)  # CSV keeps 6 decimals or more
    bad = run("predict", str(model), data, "--n-jobs", "0")
    assert bad.exit_code == 2 and "--n-jobs" in bad.stderr


@pytest.mark.slow  # lazy-bagging predicts every row of vote twice
def test_lazy_predictions_do_not_depend_on_n_jobs(tmp_path):
    model = tmp_path / "lb.ekm"
    assert run("fit", "lazy-bagging", VOTE, "-o", str(model), "--seed", "3",
               "--set", "n_estimators=5").exit_code == 0
    one = run("predict", str(model), VOTE, "--proba", "-j", "1")
    two = run("predict", str(model), VOTE, "--proba", "-j", "2")
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout
    assert len(one.stdout.splitlines()) == 436  # header + every row of vote


def test_predict_with_a_clusterer_that_cannot_label_new_rows(tmp_path):
    model = tmp_path / "diana.ekm"
    assert run("fit", "diana", IRIS, "-o", str(model), "-k", "3").exit_code == 0
    result = run("predict", str(model), IRIS)
    assert result.exit_code == 2
    assert "diana models cannot label new rows" in result.stderr


def test_evaluate_saved_clusterer_with_an_internal_index(tmp_path):
    from sklearn.metrics import silhouette_score

    from ensemblekit.api import load_model
    from ensemblekit.data import load_dataset

    model = tmp_path / "km.ekm"
    assert run("fit", "kmeans", IRIS, "-o", str(model), "-k", "3", "--seed", "2").exit_code == 0
    result = run("evaluate", str(model), IRIS, "--metric", "silhouette", "--format", "json")
    assert result.exit_code == 0, result.stderr
    got = json.loads(result.stdout)
    pipe = load_model(model).pipeline
    ds = load_dataset(IRIS)
    expected = silhouette_score(pipe[:-1].transform(ds.X), pipe.predict(ds.X))
    assert got["scores"]["silhouette"] == pytest.approx(expected, rel=1e-12)


def test_compare_skips_an_algorithm_whose_package_is_missing(monkeypatch):
    import dataclasses

    from ensemblekit import registry

    spec = dataclasses.replace(registry.ALGORITHMS["hgpa"],
                               requires=(("no_such_module_ek", "pip install it"),))
    monkeypatch.setitem(registry.ALGORITHMS, "hgpa", spec)
    result = run("compare", "kmeans", "iekm", "hgpa", "--data", IRIS, "--runs", "2",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert "hgpa skipped: it needs the no_such_module_ek package (pip install it)" in result.stderr
    assert "hgpa" not in result.stdout
    alone = run("compare", "hgpa", "--data", IRIS, "--runs", "2")
    assert alone.exit_code == 2 and "needs the no_such_module_ek package" in alone.stderr


def test_names_ignore_case_and_typos_get_a_suggestion(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    typo = run("compare", "c4.5", "knn", "--data", IRIS)
    assert typo.exit_code == 2
    assert "unknown algorithm 'c4.5' (did you mean 'c45'?)" in typo.stderr
    assert len(typo.stderr.strip().splitlines()) == 1
    # J48 is j48 is c45; CLASS is the attribute class: the same model files, byte for byte
    assert run("fit", "J48", IRIS, "-o", "upper.ekm", "--target", "CLASS").exit_code == 0
    assert run("fit", "c45", IRIS, "-o", "lower.ekm", "--target", "class").exit_code == 0
    assert (tmp_path / "upper.ekm").read_bytes() == (tmp_path / "lower.ekm").read_bytes()
    wrong = run("fit", "c45", IRIS, "-o", "x.ekm", "--target", "clas")
    assert wrong.exit_code == 2
    assert "no attribute named 'clas' to use as the class (did you mean 'class'?)" in wrong.stderr
    # a name that matches two attributes but for case is ambiguous: refused, not guessed
    (tmp_path / "two.csv").write_text("Name,NAME,y\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n")
    ambiguous = run("fit", "c45", "two.csv", "-o", "x.ekm", "--target", "name")
    assert ambiguous.exit_code == 2 and "no attribute named 'name'" in ambiguous.stderr
    assert not (tmp_path / "x.ekm").exists()


def test_a_declared_question_mark_value_prints_as_question_mark(tmp_path):
    rows = ["MALE,1,a", "FEMALE,2,b", "?,3,a", "MALE,4,b", "FEMALE,5,a", "MALE,6,b"] * 2
    (tmp_path / "q.arff").write_text("@relation t\n@attribute sex {MALE,FEMALE,?}\n"
                                     "@attribute x numeric\n@attribute class {a,b}\n@data\n"
                                     + "\n".join(rows) + "\n")
    model = str(tmp_path / "q.ekm")
    fitted = run("fit", "c45", str(tmp_path / "q.arff"), "-o", model, "--set", "unpruned=true",
                 "--set", "min_samples_leaf=1")
    assert fitted.exit_code == 0, fitted.stderr
    shown = run("show", model).stdout
    assert "sex = ?: " in shown and "None" not in shown


def test_string_attributes_left_out_or_read_as_nominal(tmp_path):
    rows = [f"{i},{'alpha' if i % 2 else 'zeta'},{'ab'[i % 2]}" for i in range(12)]
    data = tmp_path / "s.arff"
    data.write_text("@relation s\n@attribute id numeric\n@attribute txt string\n"
                    "@attribute cls {a,b}\n@data\n" + "\n".join(rows) + "\n")
    left = run("fit", "c45", str(data), "-o", str(tmp_path / "a.ekm"))
    assert left.exit_code == 0
    assert "string attributes are left out" in left.stderr and "'txt'" in left.stderr
    kept = run("fit", "c45", str(data), "-o", str(tmp_path / "b.ekm"), "--string-to-nominal")
    assert kept.exit_code == 0 and "left out" not in kept.stderr
    assert "txt = alpha" in run("show", str(tmp_path / "b.ekm")).stdout  # it splits on txt
    assert "txt" not in run("show", str(tmp_path / "a.ekm")).stdout


def test_quiet_prints_only_results_and_errors(tmp_path):
    args = ("compare", "c45", "knn", "--data", str(SAMPLE), "--cv", "2", "--repeats", "1")
    loud = run(*args)
    assert loud.exit_code == 0 and "note: skipped" in loud.stderr  # housing's numeric class
    quiet = run("--quiet", *args)
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == loud.stdout
    fitted = run("-q", "fit", "c45", IRIS, "-o", str(tmp_path / "m.ekm"))
    assert fitted.exit_code == 0 and fitted.stderr == "" and (tmp_path / "m.ekm").exists()
    wrong = run("-q", "compare", "c4.5", "--data", IRIS)
    assert wrong.exit_code == 2 and "did you mean 'c45'" in wrong.stderr  # errors still print


def test_compare_and_evaluate_say_which_rows_they_leave_out(tmp_path):
    rows = [f"{i},{'ab'[i % 2] if i % 5 else '?'}" for i in range(1, 21)]  # 4 unlabelled
    data = tmp_path / "m.arff"
    data.write_text("@relation m\n@attribute x numeric\n@attribute class {a,b}\n@data\n"
                    + "\n".join(rows) + "\n")
    for args in (("compare", "c45", "knn", "--data", str(data), "--data", IRIS),
                 ("evaluate", "c45", str(data))):
        done = run(*args, "--cv", "2", "--repeats", "1")
        assert done.exit_code == 0, done.stderr
        assert f"note: {data}: 4 instances with a missing class value are left out" in done.stderr


def test_a_whole_number_last_column_taken_as_the_class_gets_a_note(tmp_path):
    data = tmp_path / "pen.csv"
    data.write_text("x,y,year\n" + "".join(f"{i},{i % 3},{2007 + i % 3}\n" for i in range(12)))
    fitted = run("fit", "c45", str(data), "-o", str(tmp_path / "m.ekm"))
    assert fitted.exit_code == 0, fitted.stderr
    assert ("the class is the last column 'year', whole numbers read as 3 nominal values "
            "(2007, 2008, 2009); --target names another") in fitted.stderr
    named = run("fit", "c45", str(data), "--target", "year", "-o", str(tmp_path / "n.ekm"))
    assert named.exit_code == 0 and "last column" not in named.stderr  # chosen on purpose
