"""docs/model-format.md is exact: a reader written from it alone reproduces ``ensemblekit predict``.

The reading and predicting code here uses only ``zipfile``, ``json``, ``hashlib`` and
numpy (the data rows are read with liac-arff and coded as the document says); nothing
of it imports ensemblekit. Models are fitted and predicted through the command line,
and the document's prediction rules for ``c45``, ``k2`` and ``kmeans`` must give the
labels and the printed probabilities of ``ensemblekit predict``. The document's
generated tables must equal what ``ektesting.model_format`` makes from the current
declarations, so the document cannot drift from the code.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import zipfile

import arff
import numpy as np
import pytest

from ektesting import model_format
from ektesting.support import data_path, run_cli

# --------------------------------------------------------------------------- a reader from the doc
DIGEST_PREFIX = b"ensemblekit model v3\n"


def digest_of(metadata: dict, members: dict) -> str:
    """Section 1.6: SHA-256 over the prefix, the canonical JSON and each member by name."""
    body = {k: v for k, v in metadata.items() if k != "digest"}
    h = hashlib.sha256(DIGEST_PREFIX)
    h.update(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii"))
    for name in sorted(members):
        h.update(f"\n{name} {len(members[name])}\n".encode())
        h.update(members[name])
    return "sha256:" + h.hexdigest()


def read_model(path):
    """``(metadata, arrays)``: section 1, with the digest verified."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert names[0] == "metadata.json"
        metadata = json.loads(archive.read("metadata.json").decode("utf-8"))
        assert metadata["format_version"] == 3
        assert set(names) == {"metadata.json", *metadata["arrays"]}
        members = {name: archive.read(name) for name in metadata["arrays"]}
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_DEFLATED
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
    assert {name: len(data) for name, data in members.items()} == metadata["arrays"]
    assert digest_of(metadata, members) == metadata["digest"]
    arrays = {}
    for name, data in members.items():
        arr = np.load(io.BytesIO(data), allow_pickle=False)
        assert arr.dtype.byteorder in "<|=" and arr.dtype.kind in "biuf" and arr.flags.c_contiguous
        arrays[name[:-len(".npy")]] = arr
    return metadata, arrays


def features_of(schema: dict) -> list[dict]:
    return [a for i, a in enumerate(schema["attributes"]) if i != schema["class_index"]]


def coded_rows(path, schema: dict) -> np.ndarray:
    """Section 2.1: numbers as they are, nominal values as codes, missing as NaN."""
    with open(path, encoding="utf-8") as fh:
        data = arff.load(fh)
    position = {name: j for j, (name, _) in enumerate(data["attributes"])}
    features = features_of(schema)
    X = np.full((len(data["data"]), len(features)), np.nan)
    for i, row in enumerate(data["data"]):
        for j, attr in enumerate(features):
            value = row[position[attr["name"]]]
            if value is None:
                continue
            X[i, j] = float(value) if attr["kind"] == "numeric" else attr["values"].index(value)
    return X


def prep_rows(X, arrays, features) -> np.ndarray:
    """Section 2.2: the prep step of an ``encode="onehot"`` algorithm."""
    numeric = [j for j, a in enumerate(features) if a["kind"] == "numeric"]
    nominal = [j for j, a in enumerate(features) if a["kind"] != "numeric"]
    u = X[:, numeric].copy()
    if "prep/numeric_fill_" in arrays:
        u = np.where(np.isnan(u), arrays["prep/numeric_fill_"][None, :], u)
    if "prep/scale_" in arrays:
        u = u * arrays["prep/scale_"] + arrays["prep/min_"]
    blocks = [u]
    for j, col in enumerate(nominal):
        k = max(1, len(features[col]["values"]))
        c = np.where(np.isnan(X[:, col]), arrays["prep/nominal_fill_"][j], X[:, col])
        blocks.append((c[:, None] == np.arange(k)[None, :]).astype(np.float64))
    return np.hstack(blocks)


def c45_proba(arrays, x, laplace=False) -> np.ndarray:
    """Section 3.2, row by row, as the pseudo-code says."""
    a = {k[len("model/"):]: v for k, v in arrays.items()}
    feature, threshold = a["feature_"], a["threshold_"]
    start, count, empty = a["child_start_"], a["n_children_"], a["is_empty_"]
    value, bag = a["value_"], a["bag_value_"]
    nominal = set(a["nominal_features_"].tolist())
    small = 1e-6
    n_classes = value.shape[1]

    def total(vec):
        s = 0.0
        for v in vec.tolist():
            s += v
        return s

    def tot(i):
        if "total_" in a:
            return float(a["total_"][i])
        if count[i] == 0:
            return total(value[i])
        s = 0.0
        for j in range(count[i]):
            for v in bag[start[i] + j].tolist():
                s += v
        return s

    def btot(k):
        return float(a["bag_total_"][k]) if "bag_total_" in a else total(bag[k])

    def share(vec, t):
        return (vec + 1) / (t + n_classes) if laplace else vec / t

    zeros = np.zeros(n_classes)

    def visit(i, w):
        if feature[i] == -1:
            return w * share(value[i], tot(i)) if tot(i) > small or laplace else zeros
        v = x[feature[i]]
        if np.isnan(v):
            p = zeros
            for j in range(count[i]):
                k = start[i] + j
                if not empty[k]:
                    p = p + visit(k, w * (btot(k) / tot(i)))
            return p
        if int(feature[i]) not in nominal:
            j = 0 if v <= threshold[i] else 1
        elif np.isnan(threshold[i]):
            j = int(v)
        else:  # a binary nominal test: the value coded threshold_[i], then the others
            j = 0 if v == threshold[i] else 1
        k = start[i] + j
        if empty[k]:
            if btot(k) > small:
                return w * share(bag[k], btot(k))
            if tot(i) > small or laplace:
                return w * share(value[i], tot(i))
            return zeros
        return visit(k, w)

    return visit(0, 1.0)


def k2_proba(metadata, arrays, x) -> np.ndarray:
    """Section 3.3: bin, fill, configurations, log-sum, softmax."""
    model = metadata["state"]["model"]
    d = model["n_features_in_"]
    classes = arrays["model/classes_"]
    nominal = set(arrays["model/nominal_features_"].tolist())
    card = [classes.size, *arrays["model/cardinalities_"].tolist()]
    codes = []
    for f in range(d):
        if np.isnan(x[f]):
            codes.append(int(arrays["model/modes_"][f]))
        elif f in nominal:
            codes.append(int(x[f]))
        else:
            cuts = arrays[f"model/cut_points_/{f}"]
            codes.append(int(np.sum(cuts < x[f])))
    n_nodes = model["cpts_"]
    assert n_nodes == d + 1 == model["parent_sets_"]
    L = np.zeros(classes.size)
    for c in range(classes.size):
        val = [c, *codes]
        for v in range(n_nodes):
            parents = arrays[f"model/parent_sets_/{v}"].tolist()
            if v != 0 and 0 not in parents:
                continue
            J = 0
            for q in parents:
                J = J * card[q] + val[q]
            L[c] += np.log(arrays[f"model/cpts_/{v}"][J, val[v]])
    e = np.exp(L - L.max())
    return e / e.sum()


def kmeans_label(arrays, z) -> int:
    """Section 3.4: scale, then the centre minimising ||C||^2 - 2 s.C (first on ties)."""
    s = (z - arrays["model/scaling_offset_"]) / arrays["model/scaling_factor_"]
    C = arrays["model/scaled_centers_"]
    score = np.einsum("ij,ij->i", C, C) - 2.0 * (C @ s)
    return int(np.argmin(score))


# --------------------------------------------------------------------------- the command line
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Fitted model files, and an iris file with missing values."""
    folder = tmp_path_factory.mktemp("model-format")
    iris = data_path("iris.arff").read_text(encoding="utf-8")
    head = iris[:iris.upper().index("@DATA")] + "@DATA\n"
    holes = folder / "iris-holes.arff"
    holes.write_text(head + "6.0,2.9,5.0,?,?\n?,?,?,?,?\n5.0,?,1.5,0.3,Iris-setosa\n"
                     "7.7,3.0,?,2.4,?\n0.0,100.0,-3.0,9.0,?\n", encoding="utf-8")
    out = {"iris-holes.arff": holes}
    for algo, data, extra in (("c45", "vote.arff", ()), ("c45", "iris.arff", ()),
                              ("c45", "colic.arff", ("--set", "binary_splits=true")),
                              ("k2", "vote.arff", ()), ("k2", "iris.arff", ()),
                              ("kmeans", "iris.arff", ("-k", "3"))):
        path = folder / f"{algo}-{data[:-5]}.ekm"
        result = run_cli("fit", algo, data_path(data), "-o", path, *extra)
        assert result.exit_code == 0, result.output
        out[(algo, data)] = path
    return out


def predicted(model, data, *options) -> list[list[str]]:
    result = run_cli("predict", model, data, *options)
    assert result.exit_code == 0, result.output
    return list(csv.reader(io.StringIO(result.stdout)))


CLASSIFIERS = [("c45", "vote.arff", "vote.arff"), ("c45", "iris.arff", "iris.arff"),
               ("c45", "colic.arff", "colic.arff"),
               ("c45", "iris.arff", "iris-holes.arff"), ("k2", "vote.arff", "vote.arff"),
               ("k2", "iris.arff", "iris.arff"), ("k2", "iris.arff", "iris-holes.arff")]


@pytest.mark.parametrize(("algo", "train", "test"), CLASSIFIERS)
def test_classifier_predictions_follow_the_document(files, algo, train, test):
    metadata, arrays = read_model(files[(algo, train)])
    assert metadata["algorithm"] == algo and metadata["state"]["prep"] is None
    assert not any(name.startswith("prep/") for name in arrays)  # encode="codes"
    schema = metadata["schema"]
    values = schema["attributes"][schema["class_index"]]["values"]
    data = files.get(test) or data_path(test)
    X = coded_rows(data, schema)
    rows = predicted(files[(algo, train)], data, "--proba")
    assert rows[0] == ["row", "prediction", *(f"p_{v}" for v in values)]
    assert len(rows) == X.shape[0] + 1
    classes = arrays["model/classes_"]
    for i, x in enumerate(X):
        p = c45_proba(arrays, x) if algo == "c45" else k2_proba(metadata, arrays, x)
        label = values[int(classes[int(np.argmax(p))])]
        assert rows[i + 1] == [str(i + 1), label, *(f"{q:.6f}" for q in p)], f"row {i + 1}"


@pytest.mark.parametrize("laplace", [False, True])
def test_the_c45_rules_give_predict_s_doubles(tmp_path, laplace):
    """Section 3.2 with ``total_`` and ``bag_total_`` gives ``predict``'s probabilities to
    the last bit, Laplace-corrected too, on a tree grown on rows with missing values (vote:
    fractional weights, so the totals are J48's running sums)."""
    from ensemblekit import api

    path = tmp_path / "vote.ekm"
    vote = data_path("vote.arff")
    result = run_cli("fit", "c45", vote, "-o", path, "--set", f"laplace={str(laplace).lower()}")
    assert result.exit_code == 0, result.output
    metadata, arrays = read_model(path)
    assert metadata["params"]["laplace"] is laplace
    assert {"model/total_", "model/bag_total_"} <= set(arrays)
    X = coded_rows(vote, metadata["schema"])
    want = api.predict(str(path), str(vote), proba=True).probabilities
    got = np.array([c45_proba(arrays, x, laplace) for x in X])
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("test", ["iris.arff", "iris-holes.arff"])
def test_kmeans_labels_follow_the_document(files, test):
    metadata, arrays = read_model(files[("kmeans", "iris.arff")])
    assert metadata["algorithm"] == "kmeans" and metadata["params"]["n_clusters"] == 3
    features = features_of(metadata["schema"])
    data = files.get(test) or data_path(test)
    Z = prep_rows(coded_rows(data, metadata["schema"]), arrays, features)
    rows = predicted(files[("kmeans", "iris.arff")], data)
    assert rows[0] == ["row", "prediction"]
    assert rows[1:] == [[str(i + 1), str(kmeans_label(arrays, z))] for i, z in enumerate(Z)]
    # the training rows' clusters are the stored labels_
    if test == "iris.arff":
        assert [int(r[1]) for r in rows[1:]] == arrays["model/labels_"].tolist()


def test_the_digest_recipe_is_ensemblekit_s(files, tmp_path):
    """A file edited and re-digested by the document's recipe loads; without it, it is refused."""
    source = files[("c45", "iris.arff")]
    with zipfile.ZipFile(source) as archive:
        members = {i.filename: archive.read(i.filename) for i in archive.infolist()}
    metadata = json.loads(members.pop("metadata.json"))
    metadata["training_data"]["name"] = "renamed iris"

    def write(path, meta):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("metadata.json", json.dumps(meta, sort_keys=True, indent=1))
            for name, data in members.items():
                archive.writestr(name, data)

    stale, fresh = tmp_path / "stale.ekm", tmp_path / "fresh.ekm"
    write(stale, metadata)
    write(fresh, {**metadata, "digest": digest_of(metadata, members)})
    refused = run_cli("show", stale)
    assert refused.exit_code == 2 and "modified after it was written" in refused.output
    shown = run_cli("show", fresh)
    assert shown.exit_code == 0, shown.output
    assert "renamed iris" in shown.output


def test_the_worked_example_is_what_predict_prints(files):
    """Section 4's CSV is the output of ``predict`` for its row."""
    text = model_format.DOC.read_text(encoding="utf-8")
    example = text[text.index("## 4. A worked example"):]
    block = re.search(r"```\n(row,prediction,p_Iris-setosa.*?)```", example, re.DOTALL).group(1)
    rows = predicted(files[("c45", "iris.arff")], files["iris-holes.arff"], "--proba")
    assert block.splitlines() == [",".join(r) for r in rows[:2]]


def test_generated_tables_match_the_declarations():
    """Every generated block of the document is what the generator makes now."""
    text = model_format.DOC.read_text(encoding="utf-8")
    have, want = model_format.document_blocks(text), model_format.blocks()
    assert sorted(have) == sorted(want), "blocks missing or unknown; run " \
        "`cd tests && python -m ektesting.model_format --update`"
    for key in want:
        assert have[key] == want[key], f"block {key!r} is stale; run " \
            "`cd tests && python -m ektesting.model_format --update`"


def test_every_registry_entry_has_a_state_table():
    from ensemblekit import registry

    text = model_format.DOC.read_text(encoding="utf-8")
    blocks = model_format.document_blocks(text)
    for spec in registry.ALGORITHMS.values():
        assert f"state {spec.model_class().__name__}" in blocks, spec.name
        assert f"`{spec.name}`" in blocks["algorithms"], spec.name
