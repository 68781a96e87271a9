"""Hostile model files (issue 16): each is refused with exit 2 and one line, before it can act.

Every crafted file is tried with ``show`` and ``predict`` in a real process (slow: a process
per file and command); the scipy payload would write a marker file if any of its code ran.
The fast subset opens the same files with ``load_model`` in this process. The bombs are
also loaded in-process with the decompressor watched, to show the refusal comes before
anything is inflated.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ensemblekit.persistence import ModelFileError, _skops_io, load_model

from ektesting import hostile_models as H
from ektesting.support import run_cli

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris.arff"
VOTE = ROOT / "sample_data" / "vote.arff"


def _cli(*args):
    return subprocess.run([sys.executable, "-c", "from ensemblekit.cli import main; main()", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    made = {}
    for algo, data in (("knn", IRIS), ("cart-entropy", VOTE)):
        path = folder / f"{algo}.ekm"
        result = run_cli("fit", algo, data, "-o", path)
        assert result.exit_code == 0, result.output
        made[algo] = path
    return made


@pytest.fixture(scope="module")
def bombs(models, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bombs")
    return {
        "metadata bomb": H.metadata_bomb(models["knn"], folder / "mbomb.ekm"),
        "metadata bomb, lying directory": H.lying_metadata_bomb(models["knn"], folder / "mlie.ekm"),
        "payload bomb, valid digest": H.payload_bomb(models["knn"], folder / "pbomb.ekm"),
    }


def _hostile(name, models, bombs, folder):
    """Build the named hostile file in ``folder``; return (path, data file it is run on)."""
    knn, cart = models["knn"], models["cart-entropy"]
    if name in bombs:
        return bombs[name], IRIS
    build = {
        "scipy distribution": lambda p: H.scipy_distribution(knn, p, folder),
        "tree child 1e8": lambda p: H.tree_arrays(cart, p, "left_child", 10**8),
        "tree feature 1e7": lambda p: H.tree_arrays(cart, p, "feature", 10**7),
        "tree child -5": lambda p: H.tree_arrays(cart, p, "right_child", -5),
        "edited metadata": lambda p: H.edited_metadata(knn, p),
        "deep metadata": lambda p: H.deep_metadata(knn, p),
        "deep schema": lambda p: H.deep_schema(knn, p),
        "encrypted metadata": lambda p: H.encrypted_member(knn, p, "metadata.json"),
        "encrypted payload": lambda p: H.encrypted_member(knn, p, "model.skops"),
    }[name]
    data = VOTE if name.startswith("tree") else IRIS
    return build(folder / "hostile.ekm"), data


HOSTILE = ["scipy distribution", "tree child 1e8", "tree feature 1e7", "tree child -5",
           "metadata bomb", "metadata bomb, lying directory", "payload bomb, valid digest",
           "edited metadata", "deep metadata", "deep schema", "encrypted metadata", "encrypted payload"]

EXPECTED = {
    "scipy distribution": "does not trust",
    "tree child 1e8": "child index is out of range",
    "tree feature 1e7": "split feature index",
    "tree child -5": "child index is out of range",
    "metadata bomb": "metadata.json would inflate to 1073741824 bytes",
    "metadata bomb, lying directory": "metadata.json",
    "payload bomb, valid digest": "256 MiB limit",
    "edited metadata": "modified after it was written",
    "deep metadata": "nested 200001 levels deep",
    "deep schema": "nested 200000 levels deep",
    "encrypted metadata": "metadata.json is encrypted",
    "encrypted payload": "model.skops is encrypted",
}


@pytest.mark.slow  # one process per file and command, and three 1 GiB bombs to build
@pytest.mark.parametrize("command", ["show", "predict"])
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_is_refused_with_one_line(name, command, models, request, tmp_path):
    bombs = request.getfixturevalue("bombs") if "bomb" in name else {}  # built only when needed
    path, data = _hostile(name, models, bombs, tmp_path)
    args = ("show", path) if command == "show" else ("predict", path, data)
    result = _cli(*args)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ensemblekit: error: "), result.stderr
    assert EXPECTED[name] in lines[0]
    assert str(path) in lines[0]
    assert not (tmp_path / H.MARKER_NAME).exists()


@pytest.mark.parametrize("name", [n for n in HOSTILE if "bomb" not in n])
def test_hostile_file_is_refused_by_load_model(name, models, tmp_path):
    # the files of the test above, opened in this process (the bombs: test_bombs_are_refused...)
    path, _ = _hostile(name, models, {}, tmp_path)
    with pytest.raises(ModelFileError, match=re.escape(EXPECTED[name])):
        load_model(path)
    assert not (tmp_path / H.MARKER_NAME).exists()


def test_the_scipy_payload_is_a_real_exploit(models, tmp_path):
    # Trusting what skops reports (as the old package-wide policy did for
    # scipy) runs the file's code while rebuilding: the marker appears.
    path = H.scipy_distribution(models["knn"], tmp_path / "evil.ekm", tmp_path)
    _, members, _ = H.unpack(path)
    sio = _skops_io()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    payload = buffer.getvalue()
    untrusted = sio.get_untrusted_types(data=payload)
    assert "scipy.stats._continuous_distns.norm_gen" in untrusted
    with pytest.raises(KeyError):  # scipy then misses the parser functions the code did not define
        sio.loads(payload, trusted=untrusted)
    assert (tmp_path / H.MARKER_NAME).read_text() == "ran"


@pytest.mark.parametrize("field, value", [("left_child", 10**8), ("feature", 10**7), ("right_child", -5)])
def test_bad_tree_arrays_would_reach_compiled_code(models, tmp_path, field, value):
    # Without the check the loaded tree holds the crafted index: predict
    # would read far outside its arrays (the crash itself is not run here).
    import ensemblekit.model_types as model_types

    path = H.tree_arrays(models["cart-entropy"], tmp_path / "bad.ekm", field, value)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(model_types, "check_model", lambda model: None)
        model, _ = load_model(path)
    nodes = model.named_steps["model"].tree_.tree_.__getstate__()["nodes"]
    assert nodes[field][0] == value
    with pytest.raises(ModelFileError, match="the model file is damaged"):
        load_model(path)


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
@pytest.mark.parametrize("name, bound", [("metadata bomb", 0), ("payload bomb, valid digest", 1 << 20),
                                         ("metadata bomb, lying directory", 1 << 20)])
def test_bombs_are_refused_before_they_inflate(name, bound, bombs, monkeypatch):
    real = zipfile._get_decompressor
    monkeypatch.setattr(zipfile, "_get_decompressor", lambda kind: _WatchedDecompressor(real(kind)))
    _WatchedDecompressor.inflated = 0
    with pytest.raises(ModelFileError):
        load_model(bombs[name])
    # at most the metadata (one MiB at the very most) is ever inflated
    assert _WatchedDecompressor.inflated <= bound + 65536


def test_model_size_limit_comes_from_the_environment(models, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_MODEL_MB", "0")
    with pytest.raises(ModelFileError, match="ENSEMBLEKIT_MAX_MODEL_MB='0'"):
        load_model(models["knn"])
    monkeypatch.setenv("ENSEMBLEKIT_MAX_MODEL_MB", "1")
    model, metadata = load_model(models["knn"])  # a knn model on iris is far below 1 MiB
    assert metadata["payload"]["bytes"] < 1 << 20


def test_unused_payload_member_is_refused(models, tmp_path):
    metadata, members, schema = H.unpack(models["knn"])
    members["extra.npy"] = b"\x93NUMPY" + bytes(64)  # bytes no object of the schema refers to
    path = H.pack(tmp_path / "extra.ekm", metadata, members)
    with pytest.raises(ModelFileError, match="holds members no object uses"):
        load_model(path)


def test_recorded_sizes_must_match_the_directory(models, tmp_path):
    metadata, members, schema = H.unpack(models["knn"])
    path = H.pack(tmp_path / "sizes.ekm", metadata, members)
    metadata, _, _ = H.unpack(path)
    metadata["payload"]["members"]["schema.json"] += 1
    lying = H.pack(tmp_path / "lying.ekm", metadata, members, resize=False)
    with pytest.raises(ModelFileError, match="schema.json is .* bytes in the zip directory but"):
        load_model(lying)


def test_digest_covers_metadata_and_payload(models, tmp_path):
    metadata, members, schema = H.unpack(models["knn"])
    # a payload edit with the metadata's old digest
    (schema_node,) = H.nodes(schema, __class__="IBk")
    schema_node["content"]["content"]["n_neighbors"]["content"] = "3"
    edited = H.pack(tmp_path / "payload.ekm", metadata, members, schema, redigest=False)
    with pytest.raises(ModelFileError, match="modified after it was written"):
        load_model(edited)
    # a metadata edit alone
    metadata["seed"] = 2
    edited = H.pack(tmp_path / "meta.ekm", metadata, members, redigest=False)
    with pytest.raises(ModelFileError, match="modified after it was written"):
        load_model(edited)


def test_metadata_json_is_bounded(models, tmp_path):
    metadata, members, _ = H.unpack(models["knn"])
    metadata["note"] = "x" * (1 << 20)
    path = H.pack(tmp_path / "big.ekm", metadata, members)
    with pytest.raises(ModelFileError, match="metadata.json would inflate to .* more than the 1048576"):
        load_model(path)
    assert json.loads(json.dumps(metadata))  # the metadata itself is ordinary JSON


@pytest.mark.slow  # a process per command
@pytest.mark.parametrize("command", ["show", "predict"])
def test_schema_that_disagrees_with_the_estimator(models, tmp_path, command):
    # an attribute dropped from the schema, digest recomputed: the file is
    # intact as a file, but its metadata and its estimator disagree
    metadata, members, _ = H.unpack(models["knn"])
    metadata["schema"]["attributes"].pop(0)
    metadata["schema"]["class_index"] -= 1
    path = H.pack(tmp_path / "schema.ekm", metadata, members)
    args = ("show", path) if command == "show" else ("predict", path, IRIS)
    result = _cli(*args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert ("the model file is damaged: its schema has 3 attributes but the estimator reads 4"
            in result.stderr) or (command == "predict" and "sepallength" in result.stderr)


@pytest.mark.slow  # a process
def test_class_codes_that_do_not_index_the_class_values(models, tmp_path):
    metadata, members, _ = H.unpack(models["knn"])
    cls = metadata["schema"]["attributes"][metadata["schema"]["class_index"]]
    cls["values"] = cls["values"][:2]  # the model predicts three classes
    counts = metadata["training_data"]["class_counts"]
    metadata["training_data"]["class_counts"] = counts[:2]  # consistent with the 2 values
    path = H.pack(tmp_path / "classes.ekm", metadata, members)
    result = _cli("show", path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "its classes do not index the 2 values of class 'class'" in result.stderr
