"""Hostile model files (issues 16, 28 and 29): each is refused with exit 2 and one line, before it acts.

Every crafted file is opened in this process with :func:`ensemblekit.api.load_model`
(the fast lane), and tried with ``show`` and ``predict`` in a real process (slow: a
process per file and command). The pickle payload would write a marker file if any of
it ran. The bombs are also loaded with the decompressor watched, to show the refusal
comes before anything is inflated.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ensemblekit.api import load_model
from ensemblekit.persistence import ModelFileError
from ensemblekit.persistence import load_model as read_container

from ektesting import hostile_models as H
from ektesting.support import run_cli

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris.arff"
VOTE = ROOT / "sample_data" / "vote.arff"


def _cli(*args):
    return subprocess.run([sys.executable, "-c", "from ensemblekit.cli import main; main()",
                           *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    made = {}
    for algo, data in (("c45", VOTE), ("k2", VOTE), ("kmeans", IRIS)):
        path = folder / f"{algo}.ekm"
        result = run_cli("fit", algo, data, "-o", path, *(["-k", "3"] if algo == "kmeans" else []))
        assert result.exit_code == 0, result.output
        made[algo] = path
    return made


@pytest.fixture(scope="module")
def bombs(models, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bombs")
    return {
        "metadata bomb": H.metadata_bomb(models["c45"], folder / "mbomb.ekm"),
        "metadata bomb, lying directory": H.lying_metadata_bomb(models["c45"], folder / "mlie.ekm"),
        "array bomb": H.array_bomb(models["c45"], folder / "abomb.ekm"),
    }


def _set(index, value):
    def change(arr):
        arr[index] = value
        return arr
    return change


def _k2_cycle(source, path):
    """Node 1 a parent of node 2 and node 2 a parent of node 1, each CPT grown to the shape its
    new parent set gives it (uniform rows), so only the cycle is wrong."""
    metadata, members = H.unpack(source)
    sets = {i: H.array(members, f"model/parent_sets_/{i}.npy") for i in (1, 2)}
    card = {i: H.array(members, f"model/cpts_/{i}.npy").shape[1]
            for i in range(len(metadata["arrays"])) if f"model/cpts_/{i}.npy" in members}
    for node, other in ((1, 2), (2, 1)):
        parents = np.unique(np.append(sets[node], other))
        rows = int(np.prod([card[int(p)] for p in parents]))
        members[f"model/parent_sets_/{node}.npy"] = H.npy(parents)
        members[f"model/cpts_/{node}.npy"] = H.npy(np.full((rows, card[node]), 1 / card[node]))
    return H.pack(path, metadata, members)


def _one_cpt_short(source, path):
    """The last conditional table dropped, and the list's recorded length with it."""
    metadata, members = H.unpack(source)
    last = metadata["state"]["model"]["cpts_"] - 1
    metadata["state"]["model"]["cpts_"] = last
    del members[f"model/cpts_/{last}.npy"]
    del metadata["arrays"][f"model/cpts_/{last}.npy"]
    return H.pack(path, metadata, members)


def _format_2(source, path):
    def change(metadata):
        metadata["format_version"] = 2
        metadata["ensemblekit_version"] = "0.2.0"
    return H.edit_metadata(source, path, change)


def _unrecorded_member(source, path):
    metadata, members = H.unpack(source)
    recorded = dict(metadata)
    members["model/extra.npy"] = H.npy(np.zeros(3))
    H.pack(path, recorded, members)
    stored, _ = H.unpack(path)
    del stored["arrays"]["model/extra.npy"]
    return H.pack(path, stored, members, resize=False)


# name -> (builder(models, folder) -> path, data file, what the one line must say)
CASES = {
    "pickle inside a .npy": (
        lambda m, f: H.pickled_array(m["c45"], f / "h.ekm", "model/threshold_.npy", f),
        VOTE, "model/threshold_.npy holds dtype object, not plain numbers"),
    "header claims 10**12 elements": (
        lambda m, f: H.lying_header(m["c45"], f / "h.ekm", "model/value_.npy",
                                    shape=(10**6, 10**6)),
        VOTE, "model/value_.npy: its header declares shape (1000000, 1000000)"),
    "header claims another dtype": (
        lambda m, f: H.lying_header(m["c45"], f / "h.ekm", "model/value_.npy", descr="<i8"),
        VOTE, "model.value_: has dtype int64, expected float64"),
    "array of another dtype": (
        lambda m, f: H.edit_array(m["c45"], f / "h.ekm", "model/feature_.npy",
                                  lambda a: a.astype(np.int32)),
        VOTE, "model.feature_: has dtype int32, expected int64"),
    "split feature 10**7": (
        lambda m, f: H.edit_array(m["c45"], f / "h.ekm", "model/feature_.npy", _set(0, 10**7)),
        VOTE, "model.feature_: holds 10000000, not below 16"),
    "child index out of range": (
        lambda m, f: H.edit_array(m["c45"], f / "h.ekm", "model/child_start_.npy",
                                  _set(0, 10**8)),
        VOTE, "model.child_start_: holds 100000000, not below"),
    "a child pointing back at the root": (
        lambda m, f: H.edit_array(m["c45"], f / "h.ekm", "model/child_start_.npy",
                                  lambda a: np.where(a > 0, 0, a)),
        VOTE, "model.child_start_: a node's children are not after it"),
    "NaN in class weights": (
        lambda m, f: H.edit_array(m["c45"], f / "h.ekm", "model/value_.npy",
                                  _set((0, 0), np.nan)),
        VOTE, "model.value_: holds NaN where none is allowed"),
    "lengths that disagree": (
        lambda m, f: H.edit_array(m["c45"], f / "h.ekm", "model/feature_.npy",
                                  lambda a: a[:-1]),
        VOTE, "model.threshold_: has shape"),
    "a cycle in a network": (lambda m, f: _k2_cycle(m["k2"], f / "h.ekm"), VOTE,
                             "directed cycle"),
    "an algorithm the registry lacks": (
        lambda m, f: H.edit_metadata(m["c45"], f / "h.ekm",
                                     lambda d: d.__setitem__("algorithm", "os.system")),
        VOTE, "unknown algorithm 'os.system'"),
    "a parameter outside its range": (
        lambda m, f: H.edit_metadata(m["c45"], f / "h.ekm",
                                     lambda d: d["params"].__setitem__("confidence_factor", 5)),
        VOTE, "bad value 5 for confidence_factor"),
    "a parameter the algorithm lacks": (
        lambda m, f: H.edit_metadata(m["c45"], f / "h.ekm",
                                     lambda d: d["params"].__setitem__("evil", 1)),
        VOTE, "has no parameter 'evil'"),
    "k-means centres of another width": (
        lambda m, f: H.edit_array(m["kmeans"], f / "h.ekm", "model/cluster_centers_.npy",
                                  lambda a: a[:, :-1]),
        IRIS, "model.cluster_centers_"),
    # issue 29 (1): a state entry named like a method, a list one member short; (2) a count
    # in the metadata that would size an allocation
    "a state entry named like a method": (
        lambda m, f: H.edit_metadata(m["k2"], f / "h.ekm",
                                     lambda d: d["state"]["model"].__setitem__("predict", 1)),
        VOTE, "model: predict is not part of a K2Model's state"),
    "a list one member short": (lambda m, f: _one_cpt_short(m["k2"], f / "h.ekm"), VOTE,
                                "model.parent_sets_: has 17 entries, expected 16"),
    "10**9 clusters in the parameters": (
        lambda m, f: H.edit_metadata(m["kmeans"], f / "h.ekm",
                                     lambda d: d["params"].__setitem__("n_clusters", 10**9)),
        IRIS, "axis 0 should be 1000000000 (n_clusters)"),
    "format 2": (lambda m, f: _format_2(m["c45"], f / "h.ekm"), VOTE,
                 "written by an earlier version (ensemblekit 0.2.0, model file format 2"),
    "a member the metadata does not record": (
        lambda m, f: _unrecorded_member(m["c45"], f / "h.ekm"), VOTE,
        "unexpected members in the archive (model/extra.npy)"),
    "edited metadata": (lambda m, f: H.edited_metadata(m["c45"], f / "h.ekm"), VOTE,
                        "modified after it was written"),
    "deep metadata": (lambda m, f: H.deep_metadata(m["c45"], f / "h.ekm"), VOTE,
                      "nested 200001 levels deep"),
    "encrypted metadata": (lambda m, f: H.encrypted_member(m["c45"], f / "h.ekm"), VOTE,
                           "metadata.json is encrypted"),
    "encrypted array": (lambda m, f: H.encrypted_member(m["c45"], f / "h.ekm",
                                                        "model/value_.npy"),
                        VOTE, "model/value_.npy is encrypted"),
}
BOMBS = {
    "metadata bomb": "metadata.json would inflate to 1073741824 bytes",
    "metadata bomb, lying directory": "metadata.json",
    "array bomb": "256 MiB limit",
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_file_is_refused_by_load_model(name, models, tmp_path):
    build, _, expected = CASES[name]
    path = build(models, tmp_path)
    with pytest.raises(ModelFileError) as caught:
        load_model(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    assert expected in message, message
    assert not (tmp_path / H.MARKER_NAME).exists()


def test_the_pickle_payload_is_a_real_exploit(models, tmp_path):
    # numpy with allow_pickle=True would run it: the marker appears
    path = H.pickled_array(models["c45"], tmp_path / "evil.ekm", "model/threshold_.npy", tmp_path)
    _, members = H.unpack(path)
    import io

    np.load(io.BytesIO(members["model/threshold_.npy"]), allow_pickle=True)
    assert (tmp_path / H.MARKER_NAME).read_text() == "ran"


@pytest.mark.slow  # one process per file and command
@pytest.mark.parametrize("command", ["show", "predict"])
@pytest.mark.parametrize("name", [*CASES, *BOMBS])
def test_hostile_file_is_refused_with_one_line(name, command, models, request, tmp_path):
    if name in BOMBS:
        path, data, expected = request.getfixturevalue("bombs")[name], VOTE, BOMBS[name]
    else:
        build, data, expected = CASES[name]
        path = build(models, tmp_path)
    args = ("show", path) if command == "show" else ("predict", path, data)
    result = _cli(*args)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ensemblekit: error: "), result.stderr
    assert expected in lines[0] and str(path) in lines[0]
    assert not (tmp_path / H.MARKER_NAME).exists()


class _WatchedDecompressor:
    """Counts what zipfile's deflate decompressors hand back."""

    inflated = 0

    def __init__(self, real):
        self._real = real

    def decompress(self, data, max_length=0):
        out = self._real.decompress(data, max_length)
        _WatchedDecompressor.inflated += len(out)
        return out

    def __getattr__(self, name):
        return getattr(self._real, name)


@pytest.mark.slow  # builds three 1 GiB decompression bombs
@pytest.mark.parametrize("name", list(BOMBS))
def test_bombs_are_refused_before_they_inflate(name, bombs, monkeypatch):
    real = zipfile._get_decompressor
    monkeypatch.setattr(zipfile, "_get_decompressor", lambda kind: _WatchedDecompressor(real(kind)))
    _WatchedDecompressor.inflated = 0
    with pytest.raises(ModelFileError, match=re.escape(BOMBS[name])):
        read_container(bombs[name])
    # at most the metadata (8 MiB at the very most) is ever inflated
    assert _WatchedDecompressor.inflated <= (8 << 20) + 65536


def test_model_size_limit_comes_from_the_environment(models, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_MODEL_MB", "0")
    with pytest.raises(ModelFileError, match="ENSEMBLEKIT_MAX_MODEL_MB='0'"):
        read_container(models["c45"])
    monkeypatch.setenv("ENSEMBLEKIT_MAX_MODEL_MB", "1")
    metadata, arrays = read_container(models["c45"])  # a c45 model of vote is far below 1 MiB
    assert sum(metadata["arrays"].values()) < 1 << 20


def test_recorded_sizes_must_match_the_directory(models, tmp_path):
    metadata, members = H.unpack(models["c45"])
    metadata["arrays"]["model/value_.npy"] += 1
    lying = H.pack(tmp_path / "lying.ekm", metadata, members, resize=False)
    with pytest.raises(ModelFileError, match="model/value_.npy is .* bytes in the zip directory but"):
        read_container(lying)


def test_digest_covers_metadata_and_every_array(models, tmp_path):
    metadata, members = H.unpack(models["c45"])
    value = H.array(members, "model/value_.npy")
    value[0, 0] += 1
    members["model/value_.npy"] = H.npy(value)  # same size, other bytes, old digest
    edited = H.pack(tmp_path / "array.ekm", metadata, members, digest=False)
    with pytest.raises(ModelFileError, match="modified after it was written"):
        read_container(edited)
    metadata, members = H.unpack(models["c45"])
    metadata["seed"] = 2
    edited = H.pack(tmp_path / "meta.ekm", metadata, members, digest=False)
    with pytest.raises(ModelFileError, match="modified after it was written"):
        read_container(edited)


def test_metadata_json_is_bounded(models, tmp_path):
    metadata, members = H.unpack(models["c45"])
    metadata["note"] = "x" * (8 << 20)
    path = H.pack(tmp_path / "big.ekm", metadata, members)
    with pytest.raises(ModelFileError, match="metadata.json would inflate to .* more than the 8388608"):
        read_container(path)
    assert json.loads(json.dumps(metadata))  # the metadata itself is ordinary JSON


def test_schema_that_disagrees_with_the_model(models, tmp_path):
    # an attribute dropped from the schema, digest recomputed: the file is intact as a
    # file, but its metadata and its model disagree
    metadata, members = H.unpack(models["c45"])
    metadata["schema"]["attributes"].pop(0)
    metadata["schema"]["class_index"] -= 1
    path = H.pack(tmp_path / "schema.ekm", metadata, members)
    with pytest.raises(ModelFileError, match="the model file is damaged"):
        load_model(path)


def test_class_codes_that_do_not_index_the_class_values(models, tmp_path):
    metadata, members = H.unpack(models["kmeans"])
    path = H.pack(tmp_path / "ok.ekm", metadata, members)
    load_model(path)  # a genuine file passes through pack unchanged in meaning
    metadata, members = H.unpack(models["c45"])
    cls = metadata["schema"]["attributes"][metadata["schema"]["class_index"]]
    cls["values"] = cls["values"][:1]  # the model predicts two classes
    metadata["training_data"]["class_counts"] = metadata["training_data"]["class_counts"][:1]
    path = H.pack(tmp_path / "classes.ekm", metadata, members)
    with pytest.raises(ModelFileError, match="damaged"):
        load_model(path)
