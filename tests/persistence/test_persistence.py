"""Tests for ensemblekit.persistence: round trips, determinism, atomic writes, damaged and hostile files.

Hostile files built on the layout (bombs, bad tree arrays, the scipy exploit,
edited metadata) are in test_hostile_models.py, the allow-list itself in
test_trust.py, and the writes to links and devices in test_atomic.py.
"""

import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.special
import scipy.stats
import skops.io as sio
from scipy import sparse
from sklearn.compose import ColumnTransformer
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

import ensemblekit
from ensemblekit import registry
from ensemblekit.classifiers.cart import CartEntropyTree
from ensemblekit.data import load_dataset
from ensemblekit.persistence import (
    FORMAT_VERSION,
    ModelFileError,
    _digest,
    _zip_bytes,
    data_fingerprint,
    load_model,
    read_metadata,
    save_model,
)

from ektesting import hostile_models as H
from ektesting.support import data_path

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "sample_data" / "iris.arff"
VOTE = ROOT / "sample_data" / "vote.arff"
LABOR = data_path("labor.arff")  # numeric and nominal attributes, missing values

META = {
    "algorithm": "knn",
    "params": {"n_neighbors": 3, "weights": "distance"},
    "schema": {"relation": "toy", "attributes": [{"name": "a", "kind": "numeric", "values": []}]},
    "data": "sha256:" + "0" * 64,
    "seed": 1,
}


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.rand(40, 3)
    X[:, 2] = rng.randint(0, 3, 40)
    y = (X[:, 0] + 0.2 * X[:, 2] > 0.7).astype(int)
    return X, y


def _registry_model(name, data, settings=None):
    """(fitted ``prep -> model`` pipeline of a registered algorithm, the X it was fitted on)."""
    spec = registry.get(name)
    ds = load_dataset(str(data))
    model = registry.make_estimator(name, ds.schema, spec.resolve(settings), 1)
    if spec.task == registry.CLUSTERING:
        return model.fit(ds.X), ds.X
    return model.fit(ds.X, ds.y), ds.X


def _knn_pipeline():
    """A pipeline put together by hand from allowed scikit-learn classes."""
    X, y = _data()
    X = X.copy()
    X[0, 0] = np.nan
    pre = ColumnTransformer(
        [
            ("num", SimpleImputer(), [0, 1]),
            ("cat", OneHotEncoder(handle_unknown="ignore"), [2]),
        ]
    )
    return Pipeline([("pre", pre), ("knn", KNeighborsClassifier(3))]).fit(X, y), X


def _model(kind):
    """(fitted model, X to predict) for each kind of model the round trips cover."""
    if kind == "knn-mixed":  # IBk on nominal codes and missing values
        return _registry_model("knn", LABOR, {"n_neighbors": "3"})
    if kind == "knn-kdtree":  # scikit-learn's k-NN (knn until issue 20), which builds a k-d tree
        ds = load_dataset(str(IRIS))
        knn = KNeighborsClassifier(3, weights="distance", algorithm="kd_tree")
        return Pipeline([("prep", MinMaxScaler()), ("model", knn)]).fit(ds.X, ds.y), ds.X
    if kind == "pipeline":
        return _knn_pipeline()
    if kind == "tree":
        X, y = _data()
        return DecisionTreeClassifier(random_state=0).fit(X, y), X  # holds sklearn.tree._tree.Tree
    if kind == "c45":
        return _registry_model("c45", VOTE)  # classes defined in ensemblekit
    if kind == "k2":
        return _registry_model("k2", VOTE)
    if kind == "bagging":  # scikit-learn's BaggingClassifier over C4.5 trees
        return _registry_model("bagging", VOTE, {"n_estimators": "3"})
    if kind == "kmeans":
        return _registry_model("kmeans", IRIS, {"n_clusters": "3"})
    if kind == "iekm":
        return _registry_model("iekm", IRIS, {"n_clusters": "3"})
    raise AssertionError(kind)


ROUND_TRIP_KINDS = ["knn-mixed", "knn-kdtree", "pipeline", "tree", "c45", "k2", "bagging", "kmeans", "iekm"]


def _outputs(est, X):
    return est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)


def _members(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def _expected_digest(metadata, payload):
    """The digest as the format defines it, computed here independently of persistence._digest."""
    body = {k: v for k, v in metadata.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    data = b"ensemblekit model v2\n" + text.encode("ascii") + b"\n" + payload
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _with_raw_payload(path, metadata, payload):
    """A model file whose model.skops is ``payload`` verbatim, with honest sizes and digest."""
    metadata = dict(metadata)
    metadata["payload"] = {"bytes": len(payload), "members": {}}
    metadata["digest"] = _digest(metadata, payload)
    raw = json.dumps(metadata).encode()
    Path(path).write_bytes(_zip_bytes([("metadata.json", raw), ("model.skops", payload)]))


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("kind", ROUND_TRIP_KINDS)
def test_round_trip_predictions_and_metadata(tmp_path, kind):
    est, X = _model(kind)
    path = tmp_path / "m.ekm"
    save_model(path, est, META)
    loaded, meta = load_model(path)
    assert type(loaded) is type(est)
    np.testing.assert_array_equal(_outputs(loaded, X), _outputs(est, X))
    for key, value in META.items():
        assert meta[key] == value
    assert meta["format_version"] == FORMAT_VERSION == 2
    assert meta["ensemblekit_version"] == ensemblekit.__version__
    payload = _members(path)["model.skops"]
    with zipfile.ZipFile(io.BytesIO(payload)) as inner:
        sizes = {i.filename: len(inner.read(i)) for i in inner.infolist()}
    assert meta["payload"] == {"bytes": len(payload), "members": sizes}
    assert meta["digest"] == _expected_digest(meta, payload)
    assert set(meta) == set(META) | {"format_version", "ensemblekit_version", "payload", "digest"}
    assert read_metadata(str(path)) == meta


def test_skops_reports_the_types_the_policy_must_accept():
    # What skops does not trust by itself for some of the models above; they
    # all load in test_round_trip_predictions_and_metadata, so the allow-list
    # holds them (test_trust.py checks this for every registered algorithm).
    X, y = _data()
    pipe, _ = _knn_pipeline()
    assert set(sio.get_untrusted_types(data=sio.dumps(pipe))) == {
        "numpy.dtype",
        "sklearn.metrics._dist_metrics.EuclideanDistance64",
        "sklearn.neighbors._kd_tree.KDTree",
    }
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert sio.get_untrusted_types(data=sio.dumps(tree)) == ["sklearn.tree._tree.Tree"]
    c45 = CartEntropyTree(random_state=0).fit(X, y)
    assert set(sio.get_untrusted_types(data=sio.dumps(c45))) == {
        "ensemblekit.classifiers.cart.CartEntropyTree",
        "sklearn.tree._tree.Tree",
    }


def test_file_layout_and_sorted_metadata(tmp_path):
    est, _ = _model("knn-mixed")
    path = tmp_path / "m.ekm"
    save_model(path, est, {"zeta": 1, "alpha": np.int64(2), "arr": np.arange(2)})
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        assert [i.filename for i in infos] == ["metadata.json", "model.skops"]
        for info in infos:
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.compress_type == zipfile.ZIP_DEFLATED
        text = z.read("metadata.json").decode()
        with zipfile.ZipFile(io.BytesIO(z.read("model.skops"))) as inner:
            assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in inner.infolist())
            assert inner.infolist()[-1].filename == "schema.json"
    keys = list(json.loads(text))
    assert keys == sorted(keys)
    assert keys == ["alpha", "arr", "digest", "ensemblekit_version", "format_version", "payload", "zeta"]
    meta = json.loads(text)
    assert meta["alpha"] == 2 and meta["arr"] == [0, 1]  # numpy values stored as JSON numbers
    assert list(meta["payload"]) == ["bytes", "members"]
    assert list(meta["payload"]["members"]) == sorted(meta["payload"]["members"])


@pytest.mark.parametrize("key", ["format_version", "ensemblekit_version", "payload", "digest"])
def test_reserved_metadata_keys(tmp_path, key):
    est, _ = _model("knn-kdtree")
    with pytest.raises(ValueError,
                       match=rf"^metadata key\(s\) {key} are reserved for the model file itself$"):
        save_model(tmp_path / "m.ekm", est, {key: 9, "seed": 1})
    assert list(tmp_path.iterdir()) == []


def test_unserialisable_metadata(tmp_path):
    est, _ = _model("knn-kdtree")
    with pytest.raises(TypeError, match="JSON"):
        save_model(tmp_path / "m.ekm", est, {"bad": object()})
    with pytest.raises(TypeError, match="metadata must be a mapping, got list"):
        save_model(tmp_path / "m.ekm", est, [("seed", 1)])
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- determinism


def test_same_model_same_bytes_despite_addresses_and_clock(tmp_path, monkeypatch):
    # Two separately fitted (equal) models live at different memory addresses,
    # which skops uses as object ids and file names; the clock differs too,
    # which skops and numpy (the .npz of a sparse matrix) would write into zip headers.
    first, _ = _model("knn-mixed")
    second, _ = _model("knn-mixed")
    first.sparse_ = sparse.csc_matrix(np.eye(3))
    second.sparse_ = sparse.csc_matrix(np.eye(3))
    monkeypatch.setattr(time, "time", lambda: 1_000_000_000.0)
    save_model(tmp_path / "a.ekm", first, META)
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    save_model(tmp_path / "b.ekm", second, dict(reversed(list(META.items()))))
    assert (tmp_path / "a.ekm").read_bytes() == (tmp_path / "b.ekm").read_bytes()
    loaded, _ = load_model(tmp_path / "a.ekm")
    assert type(loaded.sparse_) is sparse.csc_matrix and (loaded.sparse_ != first.sparse_).nnz == 0


@pytest.mark.slow  # fits in fresh interpreters
@pytest.mark.parametrize("kind", ["knn-mixed", "c45"])
def test_same_bytes_across_processes(tmp_path, kind):
    # Addresses (skops' object ids) and string hashes differ from one process to the next.
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parents[1])!r}]
        import test_persistence as t
        est, _ = t._model({kind!r})
        t.save_model(sys.argv[1], est, t.META)
        """
    )
    outputs = []
    for seed in ("1", "2", "3"):
        out = tmp_path / f"m{seed}.ekm"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", script, str(out)], check=True, env=env)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    est, _ = _model(kind)
    save_model(tmp_path / "here.ekm", est, META)
    assert (tmp_path / "here.ekm").read_bytes() == outputs[0]


# --------------------------------------------------------------------------- atomic write


def test_failed_serialisation_leaves_existing_file_untouched(tmp_path):
    target = tmp_path / "m.ekm"
    target.write_bytes(b"old model")
    est, _ = _model("knn-kdtree")
    est.unstorable_ = 1 + 2j  # skops cannot store complex numbers
    with pytest.raises(TypeError, match="complex"):
        save_model(target, est, META)
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_failed_write_leaves_existing_file_untouched(tmp_path, monkeypatch):
    # the temporary file is opened and half written when the disk fills up
    est, _ = _model("knn-kdtree")
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
        save_model(target, est, META)
    assert written == [100]  # a partial temporary file existed
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_failed_rename_removes_temp_file(tmp_path, monkeypatch):
    est, _ = _model("knn-kdtree")
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
        save_model(target, est, META)
    assert renamed == [str(target)]
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_interrupted_write_removes_temp_file(tmp_path, monkeypatch):
    est, _ = _model("knn-kdtree")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_model(tmp_path / "m.ekm", est, META)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_destination(tmp_path):
    est, _ = _model("knn-kdtree")
    target = tmp_path / "missing" / "m.ekm"
    with pytest.raises(ModelFileError,
                       match=f"^cannot write model file {re.escape(str(target))}: No such file"):
        save_model(target, est, META)
    assert list(tmp_path.iterdir()) == []


def test_successful_save_leaves_only_the_target(tmp_path):
    first, _ = _model("knn-kdtree")
    save_model(tmp_path / "m.ekm", first, META)
    second, _ = _model("tree")
    save_model(tmp_path / "m.ekm", second, META)  # replace
    assert [p.name for p in tmp_path.iterdir()] == ["m.ekm"]
    assert type(load_model(tmp_path / "m.ekm")[0]) is DecisionTreeClassifier


# --------------------------------------------------------------------------- damaged files


def _save_fixture_model(path):
    est, _ = _model("knn-kdtree")
    save_model(path, est, META)
    return path


@pytest.fixture
def model_file(tmp_path):
    return _save_fixture_model(tmp_path / "model.ekm")


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


def test_missing_payload(tmp_path, model_file):
    meta = json.loads(_members(model_file)["metadata.json"])
    path = tmp_path / "nopayload.ekm"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", json.dumps(meta))
    assert "no model.skops" in _one_line_error(load_model, path)
    assert read_metadata(path)["algorithm"] == "knn"


def test_missing_file(tmp_path):
    message = _one_line_error(load_model, tmp_path / "nope.ekm")
    assert "cannot read model file" in message


@pytest.mark.parametrize("func", [load_model, read_metadata])
@pytest.mark.parametrize("version", [1, 3, 0])
def test_other_format_version(model_file, func, version):
    meta, members, _ = H.unpack(model_file)
    meta["format_version"] = version
    if version == 1:  # as ensemblekit 0.1 wrote it: a checksum of the payload only
        with zipfile.ZipFile(model_file) as z:
            meta["payload_sha256"] = hashlib.sha256(z.read("model.skops")).hexdigest()
        del meta["payload"], meta["digest"]
        H.pack(model_file, meta, members, redigest=False, resize=False)
        assert "payload" not in H.unpack(model_file)[0]
    else:  # otherwise a sound file: only the version is wrong
        H.pack(model_file, meta, members)
    message = _one_line_error(func, model_file)
    advice = "fit the model again" if version < FORMAT_VERSION else "upgrade ensemblekit"
    assert message == (
        f"{model_file} has model file format version {version} (written by ensemblekit "
        f"{ensemblekit.__version__}), but this ensemblekit ({ensemblekit.__version__}) reads format "
        f"version {FORMAT_VERSION}; {advice}"
    )


def test_tampered_payload(model_file):
    meta, members, _ = H.unpack(model_file)
    schema = members["schema.json"]
    k = re.search(rb'"n_neighbors": \{[^{}]*?"content": "(\d+)"', schema)
    assert k.group(1) == b"3"
    # Another k that leaves metadata.json exactly as it was: schema.json keeps
    # its length, and the compressed payload its size. Only a digest that
    # covers the payload bytes can tell.
    for digit in b"12456789":
        members["schema.json"] = schema[:k.start(1)] + bytes([digit]) + schema[k.end(1):]
        tampered = H.pack(model_file, meta, members, redigest=False)
        if H.unpack(tampered)[0] == meta:
            break
    else:
        pytest.fail("no other k keeps the payload's size")
    assert H.unpack(tampered)[1]["schema.json"] != schema
    message = _one_line_error(load_model, tampered)
    assert message == f"{model_file} was modified after it was written (the model digest does not match)"


@pytest.mark.parametrize("kind", ["knn-kdtree", "tree", "c45"])
def test_damaged_bytes_give_only_model_file_errors(tmp_path, kind):
    # Flipping a byte either breaks the file -- then the only exception is a
    # one-line ModelFileError -- or hits a field nothing reads (e.g. a header
    # date), and then the model still loads and predicts as before.
    est, X = _model(kind)
    path = tmp_path / "model.ekm"
    save_model(path, est, META)
    reference = _outputs(load_model(path)[0], X)
    data = path.read_bytes()
    rng = np.random.RandomState(0)
    positions = sorted(set(rng.randint(0, len(data), 80).tolist()) | {0, 3, len(data) - 1})
    failures = 0
    for pos in positions:
        damaged = bytearray(data)
        damaged[pos] ^= 0xFF
        path.write_bytes(bytes(damaged))
        try:
            loaded, _ = load_model(path)
        except ModelFileError as exc:
            assert "\n" not in str(exc)
            failures += 1
        else:
            np.testing.assert_array_equal(_outputs(loaded, X), reference)
    assert failures > len(positions) // 2


def test_payload_that_is_not_skops(model_file):
    meta = json.loads(_members(model_file)["metadata.json"])
    _with_raw_payload(model_file, meta, b"definitely not a zip")
    message = _one_line_error(load_model, model_file)
    assert message.startswith(f"{model_file}: the model file is damaged: model.skops is not a zip archive (")


# --------------------------------------------------------------------------- hostile files


def _skops_protocol():
    with zipfile.ZipFile(io.BytesIO(sio.dumps([]))) as z:
        return json.loads(z.read("schema.json"))["protocol"]


def _call_schema(module, name, args):
    """A skops schema asking the loader to evaluate module.name(*args)."""
    items = [
        {
            "__class__": "str",
            "__module__": "builtins",
            "__loader__": "JsonNode",
            "content": json.dumps(arg),
            "is_json": True,
            "__id__": 10 + i,
        }
        for i, arg in enumerate(args)
    ]
    return {
        "__class__": name,
        "__module__": module,
        "__loader__": "ConstructorFromReduceNode",
        "content": {
            "__class__": "tuple",
            "__module__": "builtins",
            "__loader__": "TupleNode",
            "content": items,
            "__id__": 2,
        },
        "__id__": 1,
        "protocol": _skops_protocol(),
        "_skops_version": "0.16.0",
    }


def _attacks(marker):
    """(module, name, args) that each create `marker` when skops builds them."""
    touch = f"touch {shlex.quote(str(marker))}"
    attacks = [
        ("os", "system", [touch]),
        ("builtins", "eval", [f"open({str(marker)!r}, 'w').close()"]),
        ("subprocess", "getoutput", [touch]),
        # In numpy, whose ndarray and dtype are allowed, but neither is one of
        # the listed types: a function (numpy.save) and a file-backed class (numpy.memmap).
        ("numpy", "save", [str(marker), [1, 2]]),
        ("numpy", "memmap", [str(marker), "uint8", "w+", 0, [4]]),
    ]
    if os.name == "posix":
        attacks.insert(0, ("posix", "system", [touch]))
    return attacks


ATTACK_IDS = [
    "posix.system", "os.system", "builtins.eval", "subprocess.getoutput", "numpy.save", "numpy.memmap",
]


@pytest.mark.parametrize("which", ATTACK_IDS)
def test_hostile_payload_is_refused_before_anything_runs(tmp_path, model_file, which):
    if which == "posix.system" and os.name != "posix":
        pytest.skip("posix module only on POSIX")
    marker = tmp_path / "pwned.npy"
    module, name, args = next(a for a in _attacks(marker) if f"{a[0]}.{a[1]}" == which)
    schema = _call_schema(module, name, args)

    # The payload is live: skops runs it when told to trust the type.
    sio.loads(_zip_bytes([("schema.json", json.dumps(schema).encode())]), trusted=[f"{module}.{name}"])
    assert marker.exists()
    marker.unlink()

    # Inside a model file with honest sizes and a valid digest, only the
    # allow-list stands between the payload and the loader; it must refuse
    # without running it.
    meta, _, _ = H.unpack(model_file)
    H.pack(model_file, meta, {}, schema)
    message = _one_line_error(load_model, model_file)
    assert message == (f"{model_file} names types that ensemblekit does not trust, refusing to load it: "
                       f"{module}.{name}")
    assert not marker.exists()


def test_every_refused_type_is_named(model_file):
    import functools

    meta, _, _ = H.unpack(model_file)
    with zipfile.ZipFile(io.BytesIO(sio.dumps(functools.partial(max, 1)))) as z:
        members = {n: z.read(n) for n in z.namelist()}
    H.pack(model_file, meta, members)
    message = _one_line_error(load_model, model_file)
    assert message.endswith("does not trust, refusing to load it: builtins.max, functools.partial")


class Foreign:
    """A class defined outside ensemblekit's allow-list."""


def _refused_extras():
    """name -> (object a model might hold, pattern of the refused types save_model names)."""
    X, y = _data()
    return {
        "foreign class": (Foreign(), re.escape("test_persistence.Foreign")),
        "function reference": (
            SelectKBest(f_classif, k=2).fit(X, y),
            re.escape("sklearn.feature_selection._univariate_selection.SelectKBest, "
                      "sklearn.feature_selection._univariate_selection.f_classif")),
        "ufunc": (FunctionTransformer(func=scipy.special.expit).fit(X, y),
                  r"scipy\.special\.[\w.]*expit, "
                  + re.escape("sklearn.preprocessing._function_transformer.FunctionTransformer")),
        "scikit-learn estimator": (LogisticRegression().fit(X, y),
                                   re.escape("sklearn.linear_model._logistic.LogisticRegression")),
        "scipy distribution": (scipy.stats.norm, re.escape("numpy.random.mtrand.RandomState, "
                                                           "scipy.stats._continuous_distns.norm_gen")),
        "csr matrix": (sparse.csr_matrix(np.eye(2)), re.escape("scipy.sparse._csr.csr_matrix")),
        "set": ({"a", "b"}, re.escape("builtins.set")),
    }


@pytest.mark.parametrize("extra", list(_refused_extras()))
def test_save_refuses_models_that_could_not_be_loaded(tmp_path, extra):
    est, _ = _model("knn-mixed")
    obj, names = _refused_extras()[extra]
    est.named_steps["model"].extra_ = obj
    target = tmp_path / "m.ekm"
    target.write_bytes(b"old model")
    with pytest.raises(ModelFileError) as info:
        save_model(target, est, META)
    assert re.fullmatch(
        f"cannot save {re.escape(str(target))}: the model holds types that ensemblekit refuses to load: "
        f"{names}",
        str(info.value)), str(info.value)
    assert target.read_bytes() == b"old model"
    assert [p.name for p in tmp_path.iterdir()] == ["m.ekm"]


def test_save_refuses_a_state_that_load_would_refuse(tmp_path):
    est, _ = _model("knn-kdtree")
    est.named_steps["model"].n_samples_fit_ = 10**6  # not the number of stored points
    with pytest.raises(ModelFileError,
                       match=r"^cannot save .*m\.ekm: the model's state would be refused on "
                             r"loading: .*n_samples_fit_ is not the number of stored points$"):
        save_model(tmp_path / "m.ekm", est, META)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- light imports


def test_read_metadata_does_not_import_skops_sklearn_or_numpy(model_file):
    code = (
        "import sys; from ensemblekit.persistence import read_metadata; "
        f"m = read_metadata({str(model_file)!r}); "
        "print(m['algorithm'], m['format_version'], "
        "*(n in sys.modules for n in ('skops', 'sklearn', 'numpy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["knn", "2", "False", "False", "False"]


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


@pytest.mark.slow  # a fresh interpreter runs the round trips and the attacks
def test_skops_imported_without_the_estimator_scan_keeps_the_policy(tmp_path):
    # ensemblekit imports skops with its default lists of trusted scikit-learn
    # estimators and scipy ufuncs left empty (persistence._skops_io). Every
    # round trip above must still load that way, and every hostile payload
    # must still be refused before it runs.
    code = textwrap.dedent(
        f"""
        import pathlib, sys
        from ensemblekit.persistence import _skops_io
        _skops_io()
        import skops.io._trusted_types as trusted
        assert trusted.SKLEARN_ESTIMATOR_TYPE_NAMES == [], "the scan ran"
        assert trusted.SCIPY_UFUNC_TYPE_NAMES == [], "the ufunc scan ran"
        import numpy as np, scipy.special, skops.io._utils as utils
        names = utils.get_public_type_names(module=scipy.special, oftype=np.ufunc)
        assert any(n.endswith(".gammaln") for n in names), "the real ufunc scan was not put back"
        assert not any(type(f).__module__ == "ensemblekit._imports" for f in sys.meta_path)
        sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parents[1])!r}]
        import test_persistence as t
        root = pathlib.Path({str(tmp_path)!r})
        for kind in t.ROUND_TRIP_KINDS:
            (root / kind).mkdir()
            t.test_round_trip_predictions_and_metadata(root / kind, kind)
        for which in t.ATTACK_IDS:
            where = root / which
            where.mkdir()
            model = t._save_fixture_model(where / "model.ekm")
            t.test_hostile_payload_is_refused_before_anything_runs(where, model, which)
        print("checked")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "checked"
