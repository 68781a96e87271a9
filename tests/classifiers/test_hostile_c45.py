"""Crafted ``c45`` model files: node arrays that would send the compiled tree walk out of bounds.

``C45Tree.predict_proba`` walks its node arrays in a numba kernel that does no bounds
checking, so a model file whose child or feature indices were edited must be refused
when it is opened, by ``show`` and by ``predict`` alike, with one line and exit code 2,
before any row reaches the kernel. The files are real ``fit c45`` outputs with one array
entry changed and the file's digest recomputed (as an attacker would). The commands run in
real processes (slow: a crash in the kernel must not take the test run with it); the fast
subset opens the same files with ``load_model``, which never reaches the kernel.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from ensemblekit.persistence import ModelFileError, load_model

from ektesting import hostile_models as H
from ektesting.support import SAMPLE_DATA, run_cli

VOTE = SAMPLE_DATA / "vote.arff"


def _cli(*args):
    return subprocess.run([sys.executable, "-c", "from ensemblekit.cli import main; main()",
                           *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def c45_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("c45") / "vote.ekm"
    result = run_cli("fit", "c45", VOTE, "-o", path)
    assert result.exit_code == 0, result.output
    return path


def _edited(source, path, attribute: str, index: int, value):
    """``source`` with ``C45Tree.<attribute>[index] = value``, digest recomputed."""
    metadata, members, schema = H.unpack(source)
    tree = H.nodes(schema, __class__="C45Tree")[0]
    node = tree["content"]["content"][attribute]
    arr = np.load(io.BytesIO(members[node["file"]]), allow_pickle=False)
    arr[index] = value
    buffer = io.BytesIO()
    np.save(buffer, arr, allow_pickle=False)
    members[node["file"]] = buffer.getvalue()
    return H.pack(path, metadata, members, schema)


# predict is the command whose rows would reach the kernel; show opens the file the same way
@pytest.mark.slow  # a process per command
@pytest.mark.parametrize("command, attribute, index, value", [
    ("predict", "child_start_", 0, 10**8),   # first child far past the last node
    ("show", "child_start_", 0, 10**8),
    ("predict", "child_start_", 0, -3),      # a negative child index
    ("predict", "feature_", 0, 10**7),       # a split on a column the data does not have
    ("predict", "n_children_", 0, 10**6),    # more branches than nodes
])
def test_crafted_node_arrays_are_refused_with_one_line(c45_model, tmp_path, command,
                                                        attribute, index, value):
    path = _edited(c45_model, tmp_path / "bad.ekm", attribute, index, value)
    args = (command, path) if command == "show" else (command, path, VOTE)
    result = _cli(*args)
    assert result.returncode == 2, (result.stdout[-500:], result.stderr[-2000:])
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "damaged" in lines[0] and attribute in lines[0], result.stderr


@pytest.mark.parametrize("attribute, index, value", [
    ("child_start_", 0, 10**8), ("child_start_", 0, -3), ("feature_", 0, 10**7),
    ("n_children_", 0, 10**6),
])
def test_crafted_node_arrays_are_refused_by_load_model(c45_model, tmp_path, attribute, index, value):
    path = _edited(c45_model, tmp_path / "bad.ekm", attribute, index, value)
    with pytest.raises(ModelFileError, match="damaged.*" + attribute):
        load_model(path)


@pytest.mark.slow  # a process
def test_the_untouched_file_still_predicts(c45_model):
    result = _cli("predict", c45_model, VOTE)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 436  # header and one line per row
