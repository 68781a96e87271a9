"""Tests for ensemblekit.persistence: round trips, determinism, atomic writes, damaged and hostile files."""

import hashlib
import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import skops.io as sio
import scipy.special
from scipy import sparse
from sklearn.compose import ColumnTransformer
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.impute import SimpleImputer
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

import ensemblekit
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.persistence import (
    FORMAT_VERSION,
    ModelFileError,
    data_fingerprint,
    load_model,
    read_metadata,
    save_model,
)

META = {
    "algorithm": "c45",
    "params": {"min_samples_leaf": 2, "max_depth": None},
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


def _knn_pipeline():
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


def _members(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def _write_outer(path, metadata_obj, payload, *, fix_hash=True):
    """Write a model file by hand (our layout), optionally recomputing the payload hash."""
    meta = dict(metadata_obj)
    if fix_hash:
        meta["payload_sha256"] = hashlib.sha256(payload).hexdigest()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("metadata.json", json.dumps(meta))
        z.writestr("model.skops", payload)


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("kind", ["pipeline", "tree", "c45", "kbest", "ufunc"])
def test_round_trip_predictions_and_metadata(tmp_path, kind):
    X, y = _data()
    if kind == "pipeline":
        est, X = _knn_pipeline()
    elif kind == "tree":
        est = DecisionTreeClassifier(random_state=0).fit(X, y)  # needs sklearn.tree._tree.Tree
    elif kind == "c45":
        est = C45Tree(random_state=0).fit(X, y)  # a class defined in ensemblekit
    elif kind == "ufunc":  # a scipy ufunc: a compiled function that has no __module__
        est = FunctionTransformer(func=scipy.special.expit).fit(X, y)
    else:
        est = SelectKBest(f_classif, k=2).fit(X, y)  # a plain sklearn function reference
    path = tmp_path / "m.ekm"
    save_model(path, est, META)
    loaded, meta = load_model(path)
    assert type(loaded) is type(est)
    if hasattr(est, "predict_proba"):
        np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    else:
        np.testing.assert_array_equal(loaded.transform(X), est.transform(X))
    for key, value in META.items():
        assert meta[key] == value
    assert meta["format_version"] == FORMAT_VERSION == 1
    assert meta["ensemblekit_version"] == ensemblekit.__version__
    assert meta["payload_sha256"] == hashlib.sha256(_members(path)["model.skops"]).hexdigest()
    assert read_metadata(str(path)) == meta


def test_skops_reports_the_types_the_policy_must_accept():
    # What skops does not trust by itself for the models above; all of them load
    # in test_round_trip_predictions_and_metadata, so the policy accepts them.
    X, y = _data()
    pipe, _ = _knn_pipeline()
    assert set(sio.get_untrusted_types(data=sio.dumps(pipe))) == {
        "numpy.dtype",
        "sklearn.metrics._dist_metrics.EuclideanDistance64",
        "sklearn.neighbors._kd_tree.KDTree",
    }
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert sio.get_untrusted_types(data=sio.dumps(tree)) == ["sklearn.tree._tree.Tree"]
    c45 = C45Tree(random_state=0).fit(X, y)
    assert set(sio.get_untrusted_types(data=sio.dumps(c45))) == {
        "ensemblekit.classifiers.c45.C45Tree",
        "sklearn.tree._tree.Tree",
    }


def test_file_layout_and_sorted_metadata(tmp_path):
    X, y = _data()
    path = tmp_path / "m.ekm"
    save_model(path, C45Tree(random_state=0).fit(X, y), {"zeta": 1, "alpha": np.int64(2), "arr": np.arange(2)})
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
    meta = json.loads(text)
    assert meta["alpha"] == 2 and meta["arr"] == [0, 1]  # numpy values stored as JSON numbers


def test_reserved_and_unserialisable_metadata(tmp_path):
    X, y = _data()
    est = C45Tree().fit(X, y)
    with pytest.raises(ValueError, match="format_version"):
        save_model(tmp_path / "m.ekm", est, {"format_version": 9})
    with pytest.raises(TypeError, match="JSON"):
        save_model(tmp_path / "m.ekm", est, {"bad": object()})
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- determinism


def test_same_model_same_bytes_despite_addresses_and_clock(tmp_path, monkeypatch):
    # Two separately fitted (equal) models live at different memory addresses,
    # which skops uses as object ids and file names; the clock differs too,
    # which skops and numpy would write into zip headers.
    X, y = _data()
    first = Pipeline([("tree", DecisionTreeClassifier(random_state=3))]).fit(X, y)
    second = Pipeline([("tree", DecisionTreeClassifier(random_state=3))]).fit(X, y)
    first.sparse_ = sparse.csr_matrix(np.eye(3))
    second.sparse_ = sparse.csr_matrix(np.eye(3))
    monkeypatch.setattr(time, "time", lambda: 1_000_000_000.0)
    save_model(tmp_path / "a.ekm", first, META)
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    save_model(tmp_path / "b.ekm", second, dict(reversed(list(META.items()))))
    assert (tmp_path / "a.ekm").read_bytes() == (tmp_path / "b.ekm").read_bytes()
    loaded, _ = load_model(tmp_path / "a.ekm")
    assert (loaded.sparse_ != first.sparse_).nnz == 0


def test_same_bytes_across_processes_with_sets_of_strings(tmp_path):
    # Set iteration order of strings changes with PYTHONHASHSEED.
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        from sklearn.tree import DecisionTreeClassifier
        from ensemblekit.persistence import save_model
        est = DecisionTreeClassifier(random_state=0).fit(np.arange(8.0).reshape(-1, 1), [0, 1] * 4)
        words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
        est.tags_ = set(words)
        est.frozen_ = frozenset(words)
        save_model(sys.argv[1], est, {"seed": 0})
        """
    )
    outputs = []
    for seed in ("1", "2", "3"):
        out = tmp_path / f"m{seed}.ekm"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", script, str(out)], check=True, env=env)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    loaded, _ = load_model(tmp_path / "m1.ekm")
    assert loaded.tags_ == {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"}
    assert isinstance(loaded.frozen_, frozenset) and loaded.frozen_ == frozenset(loaded.tags_)


# --------------------------------------------------------------------------- atomic write


def test_failed_serialisation_leaves_existing_file_untouched(tmp_path):
    target = tmp_path / "m.ekm"
    target.write_bytes(b"old model")
    est = C45Tree()
    est.unstorable_ = 1 + 2j  # skops cannot store complex numbers
    with pytest.raises(TypeError, match="complex"):
        save_model(target, est, META)
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_failed_write_leaves_existing_file_untouched(tmp_path, monkeypatch):
    # the temporary file is opened and half written when the disk fills up
    X, y = _data()
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
    with pytest.raises(ModelFileError, match="cannot write model file .*: No space left on device"):
        save_model(target, C45Tree().fit(X, y), META)
    assert written == [100]  # a partial temporary file existed
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_failed_rename_removes_temp_file(tmp_path, monkeypatch):
    X, y = _data()
    target = tmp_path / "m.ekm"
    target.write_bytes(b"old model")

    def broken_replace(src, dst):
        assert os.path.dirname(os.path.abspath(src)) == str(tmp_path)  # temp file in the same directory
        assert os.path.exists(src)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ModelFileError, match="m.ekm.*No space left"):
        save_model(target, C45Tree().fit(X, y), META)
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ekm"]


def test_interrupted_write_removes_temp_file(tmp_path, monkeypatch):
    X, y = _data()

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_model(tmp_path / "m.ekm", C45Tree().fit(X, y), META)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_destination(tmp_path):
    X, y = _data()
    with pytest.raises(ModelFileError, match="cannot write model file .*missing"):
        save_model(tmp_path / "missing" / "m.ekm", C45Tree().fit(X, y), META)


def test_successful_save_leaves_only_the_target(tmp_path):
    X, y = _data()
    save_model(tmp_path / "m.ekm", C45Tree().fit(X, y), META)
    save_model(tmp_path / "m.ekm", C45Tree().fit(X, y), META)  # replace
    assert [p.name for p in tmp_path.iterdir()] == ["m.ekm"]


# --------------------------------------------------------------------------- damaged files


@pytest.fixture
def model_file(tmp_path):
    X, y = _data()
    path = tmp_path / "model.ekm"
    save_model(path, DecisionTreeClassifier(random_state=0).fit(X, y), META)
    return path


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
    assert read_metadata(path)["algorithm"] == "c45"


def test_missing_file(tmp_path):
    message = _one_line_error(load_model, tmp_path / "nope.ekm")
    assert "cannot read model file" in message


@pytest.mark.parametrize("func", [load_model, read_metadata])
@pytest.mark.parametrize("version", [2, 0])
def test_other_format_version(model_file, func, version):
    members = _members(model_file)
    meta = json.loads(members["metadata.json"])
    meta["format_version"] = version
    _write_outer(model_file, meta, members["model.skops"], fix_hash=False)
    message = _one_line_error(func, model_file)
    assert f"format version {version}" in message
    assert f"reads format version {FORMAT_VERSION}" in message


def test_tampered_payload(model_file):
    members = _members(model_file)
    meta = json.loads(members["metadata.json"])
    with zipfile.ZipFile(io.BytesIO(members["model.skops"])) as inner:
        schema = inner.read("schema.json").replace(b'"max_depth"', b'"max_depts"')
        others = {i.filename: inner.read(i) for i in inner.infolist() if i.filename != "schema.json"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as inner:
        for name, data in others.items():
            inner.writestr(name, data)
        inner.writestr("schema.json", schema)
    _write_outer(model_file, meta, buf.getvalue(), fix_hash=False)
    message = _one_line_error(load_model, model_file)
    assert "was modified after it was written" in message


def test_damaged_bytes_give_only_model_file_errors(model_file):
    # Flipping a byte either breaks the file -- then the only exception is a
    # one-line ModelFileError -- or hits a field nothing reads (e.g. a header
    # date), and then the model still loads and predicts as before.
    X, _ = _data()
    reference = load_model(model_file)[0].predict_proba(X)
    data = model_file.read_bytes()
    rng = np.random.RandomState(0)
    positions = sorted(set(rng.randint(0, len(data), 80).tolist()) | {0, 3, len(data) - 1})
    failures = 0
    for pos in positions:
        damaged = bytearray(data)
        damaged[pos] ^= 0xFF
        model_file.write_bytes(bytes(damaged))
        try:
            est, _ = load_model(model_file)
        except ModelFileError as exc:
            assert "\n" not in str(exc)
            failures += 1
        else:
            np.testing.assert_array_equal(est.predict_proba(X), reference)
    assert failures > len(positions) // 2


def test_payload_that_is_not_skops(model_file):
    meta = json.loads(_members(model_file)["metadata.json"])
    _write_outer(model_file, meta, b"definitely not a zip")
    assert "is not an ensemblekit model file" in _one_line_error(load_model, model_file)


# --------------------------------------------------------------------------- hostile files


def _skops_protocol():
    with zipfile.ZipFile(io.BytesIO(sio.dumps([]))) as z:
        return json.loads(z.read("schema.json"))["protocol"]


def _call_payload(module, name, args):
    """A skops archive asking the loader to evaluate module.name(*args)."""
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
    schema = {
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
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("schema.json", json.dumps(schema))
    return buf.getvalue()


def _attacks(marker):
    """(module, name, args) that each create `marker` when skops builds them."""
    touch = f"touch {shlex.quote(str(marker))}"
    attacks = [
        ("os", "system", [touch]),
        ("builtins", "eval", [f"open({str(marker)!r}, 'w').close()"]),
        ("subprocess", "getoutput", [touch]),
        # Inside a trusted package, but a function (numpy.save) or a file-backed
        # class (numpy.memmap): a module-prefix check alone would let these run.
        ("numpy", "save", [str(marker), [1, 2]]),
        ("numpy", "memmap", [str(marker), "uint8", "w+", 0, [4]]),
    ]
    if os.name == "posix":
        attacks.insert(0, ("posix", "system", [touch]))
    return attacks


ATTACK_IDS = ["posix.system", "os.system", "builtins.eval", "subprocess.getoutput", "numpy.save", "numpy.memmap"]


@pytest.mark.parametrize("which", ATTACK_IDS)
def test_hostile_payload_is_refused_before_anything_runs(tmp_path, model_file, which):
    if which == "posix.system" and os.name != "posix":
        pytest.skip("posix module only on POSIX")
    marker = tmp_path / "pwned.npy"
    module, name, args = next(a for a in _attacks(marker) if f"{a[0]}.{a[1]}" == which)
    payload = _call_payload(module, name, args)

    # The payload is live: skops runs it when told to trust the type.
    sio.loads(payload, trusted=[f"{module}.{name}"])
    assert marker.exists()
    marker.unlink()

    # Inside a model file with a correct checksum, only the trust check stands
    # between the payload and the loader; it must refuse without running it.
    meta = json.loads(_members(model_file)["metadata.json"])
    _write_outer(model_file, meta, payload)
    message = _one_line_error(load_model, model_file)
    assert "does not trust" in message
    assert f"{module}.{name}" in message
    assert not marker.exists()


def test_function_of_a_trusted_package_is_not_called(model_file):
    # numpy.seterr is in a trusted package and in no deny list, but it is a
    # function: a file must not be able to call it (here: change numpy's global
    # error handling). Only classes may be built from a file.
    payload = _call_payload("numpy", "seterr", ["raise"])
    before = np.geterr()
    try:
        sio.loads(payload, trusted=["numpy.seterr"])
        assert np.geterr()["divide"] == "raise"  # the payload is live
    finally:
        np.seterr(**before)
    meta = json.loads(_members(model_file)["metadata.json"])
    _write_outer(model_file, meta, payload)
    message = _one_line_error(load_model, model_file)
    assert "numpy.seterr (not a class)" in message
    assert np.geterr() == before


def test_untrusted_class_from_another_package_is_refused(tmp_path, model_file):
    import functools

    meta = json.loads(_members(model_file)["metadata.json"])
    _write_outer(model_file, meta, sio.dumps(functools.partial(max, 1)))
    message = _one_line_error(load_model, model_file)
    assert "builtins.max" in message and "functools.partial" in message


class Foreign:
    """A class outside the trusted packages."""


def test_save_refuses_models_that_could_not_be_loaded(tmp_path):
    X, y = _data()
    est = C45Tree().fit(X, y)
    est.extra_ = Foreign()
    with pytest.raises(ModelFileError, match=r"cannot save .*m.ekm.*test_persistence.Foreign"):
        save_model(tmp_path / "m.ekm", est, META)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- light imports


def test_read_metadata_does_not_import_skops_or_sklearn(model_file):
    code = (
        "import sys; from ensemblekit.persistence import read_metadata; "
        f"m = read_metadata({str(model_file)!r}); "
        "print(m['algorithm'], 'skops' in sys.modules, 'sklearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["c45", "False", "False"]


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


def test_skops_imported_without_the_estimator_scan_keeps_the_policy(tmp_path):
    # ensemblekit imports skops with its default lists of trusted scikit-learn
    # estimators and scipy ufuncs left empty (persistence._skops_io). Then the policy judges
    # scikit-learn classes too: every round trip above must still load, and
    # every hostile payload must still be refused before it runs.
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
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_persistence as t
        from sklearn.tree import DecisionTreeClassifier
        root = pathlib.Path({str(tmp_path)!r})
        for kind in ("pipeline", "tree", "c45", "kbest", "ufunc"):
            (root / kind).mkdir()
            t.test_round_trip_predictions_and_metadata(root / kind, kind)
        for which in t.ATTACK_IDS:
            where = root / which
            where.mkdir()
            X, y = t._data()
            model = where / "model.ekm"
            t.save_model(model, DecisionTreeClassifier(random_state=0).fit(X, y), t.META)
            t.test_hostile_payload_is_refused_before_anything_runs(where, model, which)
        print("checked")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "checked"
