"""Tests for ensemblekit.persistence, the format-3 container: layout, digest, determinism,
atomic writes, damaged files.

The container is tested here with plain arrays; model classes rebuilt from it are in
test_model_files.py, hostile files in test_hostile_models.py, and writes to links and
devices in test_atomic.py.
"""

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

import ensemblekit
from ensemblekit.persistence import (
    FORMAT_VERSION,
    ModelFileError,
    data_fingerprint,
    load_model,
    read_metadata,
    save_model,
)

from ektesting import hostile_models as H

META = {
    "algorithm": "knn",
    "params": {"n_neighbors": 3},
    "schema": {"relation": "toy", "attributes": [{"name": "a", "kind": "numeric", "values": []}]},
    "seed": 1,
}
STATE = {"prep": None, "model": {"n_features_in_": 3, "estimators_": [{"depth": 2}]}}


def _arrays():
    return {"model/value_": np.array([[0.25, 0.75], [1.0, 0.0]]),
            "model/feature_": np.array([1, -1], dtype=np.int64),
            "model/is_leaf_": np.array([False, True]),
            "model/estimators_/0/codes_": np.arange(4, dtype=np.uint8)}


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.rand(40, 3)
    X[:, 2] = rng.randint(0, 3, 40)
    y = (X[:, 0] + 0.2 * X[:, 2] > 0.7).astype(int)
    return X, y


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.ekm"
    save_model(path, STATE, _arrays(), META)
    return path


# --------------------------------------------------------------------------- round trip, layout


def test_round_trip_gives_the_arrays_and_metadata_back(model_file):
    metadata, arrays = load_model(model_file)
    assert metadata["state"] == STATE and metadata["params"] == META["params"]
    assert sorted(arrays) == sorted(_arrays())
    for name, want in _arrays().items():
        stored = arrays[name]
        assert stored.shape == want.shape and stored.dtype == want.dtype
        got = stored.read()
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_file_layout_and_sorted_metadata(tmp_path):
    path = tmp_path / "m.ekm"
    save_model(path, STATE, _arrays(), {"zeta": 1, "alpha": np.int64(2), "arr": np.arange(2)})
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        assert names == ["metadata.json", *sorted(f"{n}.npy" for n in _arrays())]
        for info in infos:
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.compress_type == zipfile.ZIP_DEFLATED
        text = z.read("metadata.json").decode()
        value = np.load(io.BytesIO(z.read("model/value_.npy")), allow_pickle=False)
    assert value.tolist() == [[0.25, 0.75], [1.0, 0.0]]
    keys = list(json.loads(text))
    assert keys == sorted(keys)
    assert keys == ["alpha", "arr", "arrays", "digest", "ensemblekit_version", "format_version",
                    "state", "zeta"]
    meta = json.loads(text)
    assert meta["alpha"] == 2 and meta["arr"] == [0, 1]  # numpy values stored as JSON numbers
    assert meta["format_version"] == FORMAT_VERSION == 3
    assert list(meta["arrays"]) == names[1:]


def test_the_digest_is_what_the_format_document_says(model_file):
    # computed here from docs/model-format.md, independently of persistence._digest
    with zipfile.ZipFile(model_file) as z:
        meta = json.loads(z.read("metadata.json"))
        members = {n: z.read(n) for n in z.namelist() if n != "metadata.json"}
    body = {k: v for k, v in meta.items() if k != "digest"}
    digest = hashlib.sha256(b"ensemblekit model v3\n")
    digest.update(json.dumps(body, sort_keys=True, separators=(",", ":"),
                             ensure_ascii=True).encode("ascii"))
    for name in sorted(members):
        digest.update(f"\n{name} {len(members[name])}\n".encode())
        digest.update(members[name])
    assert meta["digest"] == "sha256:" + digest.hexdigest()


@pytest.mark.parametrize("key", ["format_version", "ensemblekit_version", "state", "arrays",
                                 "digest"])
def test_reserved_metadata_keys(tmp_path, key):
    with pytest.raises(ValueError,
                       match=rf"^metadata key\(s\) {key} are reserved for the model file itself$"):
        save_model(tmp_path / "m.ekm", STATE, _arrays(), {key: 9, "seed": 1})
    assert list(tmp_path.iterdir()) == []


def test_unstorable_metadata_and_arrays(tmp_path):
    with pytest.raises(TypeError, match="JSON"):
        save_model(tmp_path / "m.ekm", STATE, _arrays(), {"bad": object()})
    with pytest.raises(TypeError, match="metadata must be a mapping, got list"):
        save_model(tmp_path / "m.ekm", STATE, _arrays(), [("seed", 1)])
    with pytest.raises(TypeError, match="dtype object, which a model file cannot hold"):
        save_model(tmp_path / "m.ekm", STATE, {"model/x": np.array([None])}, META)
    with pytest.raises(TypeError, match="<U1"):
        save_model(tmp_path / "m.ekm", STATE, {"model/x": np.array(["a"])}, META)
    assert list(tmp_path.iterdir()) == []


def test_same_state_same_bytes_despite_order_and_clock(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "time", lambda: 1_000_000_000.0)
    save_model(tmp_path / "a.ekm", STATE, _arrays(), META)
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    backwards = dict(reversed(list(_arrays().items())))
    save_model(tmp_path / "b.ekm", STATE, backwards, dict(reversed(list(META.items()))))
    assert (tmp_path / "a.ekm").read_bytes() == (tmp_path / "b.ekm").read_bytes()


def test_fortran_order_and_big_endian_arrays_are_stored_as_c_little_endian(tmp_path):
    arrays = {"model/a": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
              "model/b": np.arange(3, dtype=">i8")}
    save_model(tmp_path / "m.ekm", STATE, arrays, META)
    _, stored = load_model(tmp_path / "m.ekm")
    assert stored["model/a"].read().flags.c_contiguous
    assert stored["model/b"].dtype == np.dtype("<i8")
    assert stored["model/b"].read().tolist() == [0, 1, 2]


# --------------------------------------------------------------------------- atomic writes


def test_failed_serialisation_leaves_existing_file_untouched(tmp_path):
    target = tmp_path / "m.ekm"
    target.write_bytes(b"old model")
    with pytest.raises(TypeError, match="complex128"):
        save_model(target, STATE, {"model/x": np.array([1 + 2j])}, META)
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_failed_write_leaves_existing_file_untouched(tmp_path, monkeypatch):
    # the temporary file is opened and half written when the disk fills up
    target = tmp_path / "m.ekm"
    target.write_bytes(b"old model")
    real_fdopen = os.fdopen
    written = []

    class Full(io.BufferedWriter):
        def write(self, data):
            super().write(bytes(data)[:100])
            self.flush()
            written.append(os.path.getsize(self.name))
            raise OSError(28, "No space left on device")

    def fdopen(fd, mode="r", *args, **kwargs):
        assert mode == "wb"
        return Full(real_fdopen(fd, "wb", buffering=0, closefd=True))

    monkeypatch.setattr("ensemblekit.atomic.os.fdopen", fdopen)
    with pytest.raises(ModelFileError, match=f"^no space left on device writing {re.escape(str(target))}$"):
        save_model(target, STATE, _arrays(), META)
    assert written == [100]  # a partial temporary file existed
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_failed_rename_removes_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "m.ekm"
    target.write_bytes(b"old model")
    renamed = []

    def broken_replace(src, dst):
        assert os.path.dirname(os.path.abspath(src)) == str(tmp_path)  # temp file in the same directory
        assert os.path.exists(src)
        renamed.append(os.fspath(dst))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ModelFileError, match=f"^no space left on device writing {re.escape(str(target))}$"):
        save_model(target, STATE, _arrays(), META)
    assert renamed == [str(target)]
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_interrupted_write_removes_temp_file(tmp_path, monkeypatch):

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_model(tmp_path / "m.ekm", STATE, _arrays(), META)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_destination(tmp_path):
    target = tmp_path / "missing" / "m.ekm"
    with pytest.raises(ModelFileError,
                       match=f"^cannot write model file {re.escape(str(target))}: No such file"):
        save_model(target, STATE, _arrays(), META)
    assert list(tmp_path.iterdir()) == []


def test_successful_save_leaves_only_the_target(tmp_path):
    save_model(tmp_path / "m.ekm", STATE, _arrays(), META)
    save_model(tmp_path / "m.ekm", STATE, {"model/x": np.zeros(2)}, META)  # replace
    assert [p.name for p in tmp_path.iterdir()] == ["m.ekm"]
    assert sorted(load_model(tmp_path / "m.ekm")[1]) == ["model/x"]


# --------------------------------------------------------------------------- damaged files


def _one_line_error(func, path):
    with pytest.raises(ModelFileError) as info:
        func(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    return message


@pytest.mark.parametrize("func", [load_model, read_metadata])
def test_truncated_file(model_file, func):
    data = model_file.read_bytes()
    model_file.write_bytes(data[: len(data) // 2])
    message = _one_line_error(func, model_file)
    assert "is not an ensemblekit model file" in message
    assert "truncated" in message


@pytest.mark.parametrize("func", [load_model, read_metadata])
def test_not_a_zip(tmp_path, func):
    path = tmp_path / "iris.arff"
    path.write_text("@relation iris\n")
    assert "is not an ensemblekit model file (not a zip archive)" in _one_line_error(func, path)


def test_zip_without_metadata_or_with_bad_json(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", "hello")
    assert "no metadata.json" in _one_line_error(load_model, path)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", "{not json")
    assert "not valid JSON" in _one_line_error(read_metadata, path)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", "[1, 2]")
    assert "not a JSON object" in _one_line_error(read_metadata, path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "model.ekm"
    os.mkfifo(fifo)
    code = ("import sys\nfrom ensemblekit.persistence import ModelFileError, read_metadata\n"
            "try:\n    read_metadata(sys.argv[1])\nexcept ModelFileError as exc:\n"
            "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == f"cannot read model file {fifo}: not a regular file"


def test_missing_file(tmp_path):
    message = _one_line_error(load_model, tmp_path / "nope.ekm")
    assert "cannot read model file" in message


@pytest.mark.parametrize("func", [load_model, read_metadata])
@pytest.mark.parametrize("version", [1, 2, 4, 0])
def test_other_format_version(model_file, func, version):
    meta, members = H.unpack(model_file)
    meta["format_version"] = version
    meta["ensemblekit_version"] = "0.2.0"
    H.pack(model_file, meta, members)  # otherwise a sound file: only the version is wrong
    message = _one_line_error(func, model_file)
    if version < FORMAT_VERSION:
        assert message == (
            f"{model_file}: written by an earlier version (ensemblekit 0.2.0, model file format "
            f"{version}; this ensemblekit {ensemblekit.__version__} reads format 3); fit it again")
    else:
        assert message.endswith("reads format version 3; upgrade ensemblekit")


def test_a_format_2_file_as_skops_wrote_it_is_refused(tmp_path):
    path = tmp_path / "old.ekm"
    meta = {**META, "format_version": 2, "ensemblekit_version": "0.2.0",
            "payload": {"bytes": 4, "members": {}}, "digest": "sha256:" + "0" * 64}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", json.dumps(meta))
        z.writestr("model.skops", b"PK\x05\x06")
    assert "written by an earlier version" in _one_line_error(load_model, path)
    assert "fit it again" in _one_line_error(read_metadata, path)


def test_damaged_bytes_give_only_model_file_errors(tmp_path):
    # Flipping a byte either breaks the file -- then the only exception is a one-line
    # ModelFileError -- or hits a field nothing reads (e.g. a header date), and then
    # the arrays read back as before.
    path = tmp_path / "model.ekm"
    save_model(path, STATE, _arrays(), META)
    data = path.read_bytes()
    rng = np.random.RandomState(0)
    positions = sorted(set(rng.randint(0, len(data), 120).tolist()) | {0, 3, len(data) - 1})
    failures = 0
    for pos in positions:
        damaged = bytearray(data)
        damaged[pos] ^= 0xFF
        path.write_bytes(bytes(damaged))
        try:
            _, arrays = load_model(path)
            got = {name: stored.read().tobytes() for name, stored in arrays.items()}
        except ModelFileError as exc:
            assert "\n" not in str(exc)
            failures += 1
        else:
            assert got == {name: a.tobytes() for name, a in _arrays().items()}
    assert failures > len(positions) // 2


def test_read_metadata_does_not_import_numpy_or_sklearn(model_file):
    code = (
        "import sys; from ensemblekit.persistence import read_metadata; "
        f"m = read_metadata({str(model_file)!r}); "
        "print(m['algorithm'], m['format_version'], "
        "*(n in sys.modules for n in ('sklearn', 'numpy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["knn", "3", "False", "False"]


# --------------------------------------------------------------------------- data fingerprint


def test_data_fingerprint():
    X, y = _data()
    fp = data_fingerprint(X, y)
    assert fp.startswith("sha256:") and len(fp) == len("sha256:") + 64
    assert int(fp[7:], 16) >= 0
    assert data_fingerprint(X.copy(), y.copy()) == fp  # deterministic
    assert data_fingerprint(np.asfortranarray(X), y) == fp  # layout does not matter
    assert data_fingerprint(X.astype(">f8"), y) == fp  # nor byte order
    X2 = X.copy()
    X2[5, 1] += 1e-12
    assert data_fingerprint(X2, y) != fp  # a value
    assert data_fingerprint(X.reshape(20, 6), y) != fp  # the shape
    assert data_fingerprint(X, y.astype(np.int32)) != fp  # the dtype
    assert data_fingerprint(X, None) != fp
    assert data_fingerprint(X) == data_fingerprint(X, None)
    assert data_fingerprint([[1.0, 2.0]], [0]) == data_fingerprint(np.array([[1.0, 2.0]]), np.array([0]))
    with pytest.raises(ValueError, match="dtype object"):
        data_fingerprint(np.array([[1, "a"]], dtype=object))


