"""Crafted ``c45``, ``iec45`` and ``bagging`` model files: node arrays that would mislead the walk.

The tree walk indexes its node arrays by the values they hold, so a model file whose child
or feature indices were edited must be refused when it is opened, by ``show`` and by
``predict`` alike, with one line naming the array and exit code 2, before any row reaches
the walk. The files are real ``fit`` outputs with one array entry changed and the file's
digest recomputed (as an attacker would). The commands run in real processes (slow); the
fast subset opens the same files with ``ensemblekit.app.models.load_model``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ensemblekit.app.models import load_model
from ensemblekit.persistence import ModelFileError

from ektesting import hostile_models as H
from ektesting.support import SAMPLE_DATA, run_cli

VOTE = SAMPLE_DATA / "vote.arff"


def _cli(*args):
    return subprocess.run([sys.executable, "-c", "from ensemblekit.cli import main; main()",
                           *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trees")
    out = {}
    for name, args in (("c45", ()), ("iec45", ("--set", "n_estimators=3")),
                       ("bagging", ("--set", "n_estimators=3")),
                       ("bagging-cart", ("--set", "n_estimators=3", "--set", "tree=cart-entropy"))):
        path = folder / f"{name}.ekm"
        result = run_cli("fit", name.split("-")[0], VOTE, "-o", path, *args)
        assert result.exit_code == 0, result.output
        out[name] = path
    return out


def _edited(source, path, attribute: str, index: int, value):
    """``source`` with ``<attribute>[index] = value`` (``attribute`` names the array member,
    ``"child_start_"`` or ``"estimators_/2/child_start_"``), digest recomputed."""

    def change(arr):
        arr[index] = value
        return arr

    return H.edit_array(source, path, f"model/{attribute}.npy", change)


# predict is the command whose rows would reach the walk; show opens the file the same way
@pytest.mark.slow  # a process per command
@pytest.mark.parametrize("command, model, attribute, index, value", [
    ("predict", "c45", "child_start_", 0, 10**8),   # first child far past the last node
    ("show", "c45", "child_start_", 0, 10**8),
    ("predict", "c45", "child_start_", 0, -3),      # a negative child index
    ("predict", "c45", "feature_", 0, 10**7),       # a split on a column the data does not have
    ("predict", "c45", "n_children_", 0, 10**6),    # more branches than nodes
    ("predict", "iec45", "child_start_", 0, -3),    # the same tree arrays in iec45's model
    ("predict", "bagging", "estimators_/2/child_start_", 0, 0),  # the root its own child
    ("show", "bagging-cart", "estimators_/1/children_right_", 0, 10**8),
    ("predict", "c45", "total_", 0, 1e-3),          # a total far from its class weights
])
def test_crafted_node_arrays_are_refused_with_one_line(models, tmp_path, command, model,
                                                        attribute, index, value):
    path = _edited(models[model], tmp_path / "bad.ekm", attribute, index, value)
    args = (command, path) if command == "show" else (command, path, VOTE)
    result = _cli(*args)
    assert result.returncode == 2, (result.stdout[-500:], result.stderr[-2000:])
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "damaged" in lines[0], result.stderr
    assert attribute.replace("/", ".") in lines[0], result.stderr


@pytest.mark.parametrize("model, attribute, index, value", [
    ("c45", "child_start_", 0, 10**8), ("c45", "child_start_", 0, -3),
    ("c45", "feature_", 0, 10**7), ("c45", "n_children_", 0, 10**6),
    ("iec45", "child_start_", 0, 10**8), ("iec45", "feature_", 0, 10**7),
    ("bagging", "estimators_/0/feature_", 0, 10**7),
    ("bagging", "estimators_/1/n_children_", 0, 1),
    ("bagging", "nominal_features_", 0, 10**3),
    ("bagging-cart", "estimators_/2/feature_", 0, 10**7),
    # J48's totals the walk divides by: a tiny one would blow a probability up
    ("c45", "total_", 0, -1.0), ("c45", "total_", 2, 1e-3), ("c45", "bag_total_", 1, 1e9),
    ("c45", "bag_total_", 1, float("nan")),
])
def test_crafted_node_arrays_are_refused_by_load_model(models, tmp_path, model, attribute,
                                                       index, value):
    path = _edited(models[model], tmp_path / "bad.ekm", attribute, index, value)
    with pytest.raises(ModelFileError, match="damaged.*" + attribute.replace("/", r"\.")):
        load_model(path)


def _without(source, path, members, state_keys=()):
    """``source`` without the array ``members`` (and those keys of its state)."""
    metadata, parts = H.unpack(source)
    for member in members:
        del parts[member]
    for key in state_keys:
        metadata["state"]["model"].pop(key, None)
    return H.pack(path, metadata, parts)


def test_a_c45_file_with_one_of_its_totals_is_refused(models, tmp_path):
    path = _without(models["c45"], tmp_path / "half.ekm", ["model/bag_total_.npy"])
    with pytest.raises(ModelFileError, match="damaged.*total_.*together"):
        load_model(path)


def test_a_c45_file_from_before_the_totals_loads_and_predicts(models, tmp_path):
    """Files written before the trees kept J48's totals (and ``laplace``) still open: the
    walk adds the class weights instead, within rounding of the stored totals' result."""
    path = _without(models["c45"], tmp_path / "old.ekm",
                    ["model/total_.npy", "model/bag_total_.npy"])
    metadata, parts = H.unpack(path)
    del metadata["params"]["laplace"]
    H.pack(path, metadata, parts)
    old, new = run_cli("predict", path, VOTE, "--proba"), run_cli("predict", models["c45"],
                                                                   VOTE, "--proba")
    assert old.exit_code == 0 and new.exit_code == 0, old.output
    assert old.stdout == new.stdout  # the same to the printed 6 decimals


@pytest.mark.slow  # a process per model
@pytest.mark.parametrize("model", ["c45", "iec45", "bagging", "bagging-cart"])
def test_the_untouched_files_still_predict(models, model):
    result = _cli("predict", models[model], VOTE)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 436  # header and one line per row
