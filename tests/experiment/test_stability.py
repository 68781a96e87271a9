"""``-m structure-stability`` (issue 34): declarations, values, journal, analyse, workers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ensemblekit import api
from ensemblekit.data import load_dataset
from ensemblekit.errors import InputError
from ensemblekit.experiment import derive_seed
from ensemblekit.experiment.protocol import ProtocolError
from ensemblekit.experiment.stability import fill_stability, read_structure, structure_record
from ensemblekit.metrics import model_structure
from ensemblekit.scores.structure import partition_similarity, stability_shares

from ektesting.support import run_cli

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _one_split(tmp_path) -> Path:
    """30 rows: a = x -> p, a = y -> n; b carries nothing (the same values in both classes)."""
    rows = [f"{'x' if i % 2 else 'y'},{i % 7},{'p' if i % 2 else 'n'}" for i in range(30)]
    path = tmp_path / "two.arff"
    path.write_text("@relation two\n@attribute a {x,y}\n@attribute b numeric\n"
                    "@attribute class {p,n}\n@data\n" + "\n".join(rows) + "\n")
    return path


def _printed_splits(text: str, names: list[str]) -> list[tuple[int, int]]:
    """(attribute, depth) of every inner node of a tree as J48 prints it: a node's branch
    lines share a depth and an attribute, with only deeper lines between them."""
    found, open_at = [], {}
    for line in text.splitlines():
        body = line.lstrip("| ")
        depth = (len(line) - len(body)) // 4
        name = body.split(" ")[0]
        if name not in names or not any(op in body for op in (" = ", " <= ", " > ")):
            continue
        for deeper in [d for d in open_at if d > depth]:
            del open_at[deeper]
        if open_at.get(depth) != name:
            found.append((names.index(name), depth))
            open_at[depth] = name
    return found


def _values(result) -> list[tuple]:
    """Every score of a comparison without its seconds (the one field a seed does not fix)."""
    return [(s.dataset, s.algorithm, s.repeat, s.fold, s.metric, s.value) for s in result.scores]


def _stability(result, dataset: str, label: str) -> float:
    return result.table("structure-stability")[dataset][label]


# ---------------------------------------------------------------- what the models declare
def test_c45_and_cart_splits_are_attribute_and_depth(tmp_path):
    path = _one_split(tmp_path)
    tree = api.fit("c45", path).estimator
    assert tree.structure() == [(0, 0)]  # a at the root, two leaves
    assert model_structure(tree) == {"kind": "splits", "items": [[0, 0]]}
    # CART splits the pipeline's columns (a one-hot column of a): one split, at the root
    assert [depth for _, depth in api.fit("cart-entropy", path).estimator.structure()] == [0]
    ds = load_dataset(SAMPLE / "vote.arff")
    names = [a.name for a in ds.schema.features]
    for data in (ds, ds.take(np.arange(0, ds.n_instances, 2))):
        tree = api.fit("c45", data).estimator
        splits = tree.structure()
        assert sorted(splits) == sorted(_printed_splits(tree.export_text(names), names))
        assert len(splits) == tree.model_size() - tree.get_n_leaves() > 1


def test_k2_arcs_are_its_parent_sets():
    ds = load_dataset(SAMPLE / "vote.arff")
    net = api.fit("k2", ds, seed=3).estimator
    arcs = net.structure()
    assert len(arcs) == net.model_size() == len(set(arcs))
    assert set(arcs) == {(p, v) for v, ps in enumerate(net.parents_) for p in ps}
    class_node = len(net.parents_) - 1 if not net.parents_[-1] else 0
    assert all((class_node, v) in arcs for v in range(len(net.parents_)) if v != class_node)


def test_a_model_without_a_structure_is_refused_in_one_line():
    with pytest.raises(InputError) as caught:
        api.compare(["k2", "bagged-k2"], SAMPLE / "iris.arff", metrics=["structure-stability"],
                    cv=2, repeats=1)
    assert str(caught.value) == (
        "metric 'structure-stability' is not defined for bagged-k2: its model declares no "
        "structure to compare (no structure_kind); leave out the metric or the algorithm")
    shown = run_cli("compare", "knn", "c45", "-d", SAMPLE / "iris.arff", "-m",
                    "structure-stability", "--cv", "2", "--repeats", "1")
    assert shown.exit_code == 2
    assert "not defined for knn" in shown.output and "Traceback" not in shown.output


# ---------------------------------------------------------------- values
def test_a_learner_whose_model_does_not_change_scores_exactly_one(tmp_path):
    result = api.compare(["c45"], _one_split(tmp_path), metrics=["structure-stability"], cv=3,
                         repeats=2)
    assert _stability(result, "two", "c45") == 1.0
    assert {s.value for s in result.scores} == {1.0}


def test_different_training_folds_score_below_one_and_as_the_pairs_say():
    result = api.compare(["c45"], SAMPLE / "iris.arff", metrics=["structure-stability"], cv=3,
                         repeats=1)
    ds = load_dataset(SAMPLE / "iris.arff")
    values = [s.value for s in result.scores]
    assert len(values) == 3 and 0 <= min(values) and np.mean(values) < 1
    # the trees of the three training folds, fitted here, compared pair by pair
    from ensemblekit.experiment.folds import stratified_test_folds

    y = np.asarray(ds.y, dtype=np.int64)
    trees = []
    for test in stratified_test_folds(y, 3, 1, 1):
        train = np.setdiff1d(np.arange(y.size), test)
        tree = api.fit("c45", ds.take(train)).estimator
        trees.append(tree.structure())
    from ensemblekit.scores.structure import multiset_jaccard

    assert values == pytest.approx(stability_shares(trees, multiset_jaccard), abs=0)


def test_clustering_runs_compare_their_partitions_by_ari():
    ds = load_dataset(SAMPLE / "iris.arff")
    result = api.compare(["kmeans"], {"iris": ds}, metrics=["structure-stability"], runs=3)
    labels = [api.fit("kmeans", ds, seed=derive_seed(1, run), n_clusters=3).estimator.labels_
              for run in (1, 2, 3)]
    assert [s.value for s in result.scores] == pytest.approx(
        stability_shares(labels, partition_similarity), abs=1e-15)
    one = api.compare(["kmeans"], {"iris": ds}, metrics=["structure-stability"], runs=1)
    assert np.isnan(one.scores[0].value)  # one run: no pair to compare


def test_a_deterministic_learner_on_identical_folds_scores_exactly_one():
    ds = load_dataset(SAMPLE / "vote.arff")
    keys = [("vote", "c45", "{}", 1, f) for f in (1, 2, 3)]
    outcomes = {k: {"scores": {}, "error": None,
                    "structure": structure_record(model_structure(api.fit("c45", ds).estimator))}
                for k in keys}
    fill_stability(keys, outcomes, ["structure-stability"])
    assert [outcomes[k]["scores"]["structure-stability"] for k in keys] == [1.0, 1.0, 1.0]


def test_fill_stability_groups_by_repeat_and_skips_failed_units():
    def unit(items, error=None):
        return {"scores": {}, "error": error,
                "structure": structure_record({"kind": "arcs", "items": items})}

    keys = [("d", "k2", "{}", r, f) for r in (1, 2) for f in (1, 2, 3)]
    outcomes = dict(zip(keys, [unit([(0, 1)]), unit([(0, 1)]), unit([(0, 1), (1, 2)]),
                               unit([(0, 1)]), unit([(2, 1)]), unit([], error="boom")]))
    fill_stability(keys, outcomes, ["accuracy", "structure-stability"])
    got = [outcomes[k]["scores"].get("structure-stability") for k in keys]
    # repeat 1: pairs 1, 1/2, 1/2; repeat 2: one pair of similarity 0, the failed unit left out
    assert got[:5] == pytest.approx([0.75, 0.75, 0.5, 0.0, 0.0], abs=1e-15)
    assert got[5] is None


@pytest.mark.parametrize("bad, message", [
    ({"kind": "trees", "items": []}, "is not an object with a kind"),
    ({"kind": "arcs", "items": [[0, -1]]}, "is not a pair of integers"),
    ({"kind": "arcs", "items": [[0, True]]}, "is not a pair of integers"),
    ({"kind": "splits", "items": [[0, 1]], "more": 1}, "holds its kind and a list"),
    ({"kind": "partition", "labels": [0, 1]}, "is not a packed array"),
])
def test_a_damaged_structure_is_refused(bad, message):
    with pytest.raises(InputError, match=message):
        read_structure(bad)


# ---------------------------------------------------------------- journal, resume, analyse
def test_the_journal_records_structures_and_resume_and_analyse_agree(tmp_path):
    path = tmp_path / "run.jsonl"
    args = dict(metrics=["accuracy", "structure-stability"], cv=3, repeats=2)
    data = [SAMPLE / "iris.arff", SAMPLE / "vote.arff"]
    plain = api.compare(["c45", "k2"], data, **args)
    first = api.compare(["c45", "k2"], data, resume=path, **args)
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert all("structure-stability" not in r["scores"] and r["structure"]["kind"] in
               ("splits", "arcs") for r in records)
    again = api.compare(["c45", "k2"], data, resume=path, **args)
    analysed = api.analyse(path)
    assert again.computed == 0
    for other in (first, again, analysed):
        assert _values(other) == _values(plain)
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    del record["structure"]
    path.write_text(lines[0] + json.dumps(record) + "\n" + "".join(lines[2:]))
    with pytest.raises(ProtocolError, match="line 2: damaged journal record .*no structure"):
        api.analyse(path)


@pytest.mark.slow  # starts worker processes
def test_two_workers_give_the_serial_values():
    data = [SAMPLE / "iris.arff", SAMPLE / "vote.arff"]
    serial = api.compare(["c45", "k2"], data, metrics=["structure-stability"], cv=3, repeats=2)
    parallel = api.compare(["c45", "k2"], data, metrics=["structure-stability"], cv=3, repeats=2,
                           n_jobs=2)
    assert _values(parallel) == _values(serial)
