"""Every registry algorithm's model file: saved, read back as its model class, same output.

For each algorithm, and each parameter value that changes what its fit stores, the
model is fitted through the API, written, and read back: the rebuilt model predicts
(labels, probabilities or values) exactly what the fitted estimator predicts, the
file holds only ``metadata.json`` and ``.npy`` members, and saving twice gives the
same bytes. For every algorithm but the lazy ensembles, one fresh interpreter then runs
``predict``, ``show`` and ``evaluate MODEL DATA`` on each file in turn and has no
scikit-learn, scipy, skops or numba module loaded after any of them (issue 28, acceptance
2); ``show``
into a pipe loads no rich either, and pads no line (issue 28, acceptance 3).
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from ensemblekit import api, registry

from ektesting.support import data_path

_SMALL_ISLE = {"n_estimators": "5", "cv": "3"}
# registry algorithms with the parameter values that change what the fitted model stores
# (ensemble sizes kept small: the structure of the state does not depend on them)
CASES = [
    ("k2", {}), ("k2", {"discretize": "equal-frequency"}), ("k2", {"init": "empty"}),
    ("k2", {"max_parents": "3"}),
    ("iebn", {"n_estimators": "3"}), ("iebn", {"n_estimators": "3", "bootstrap": "true"}),
    ("bagged-k2", {"n_estimators": "3"}), ("bagged-k2", {"n_estimators": "3", "bootstrap": "false"}),
    ("knn", {}), ("c45", {}), ("iec45", {"n_estimators": "3"}),
    ("iec45", {"n_estimators": "3", "combine": "vote", "bootstrap": "true"}),
    ("cart-entropy", {}), ("bagging", {"n_estimators": "3"}),
    ("bagging", {"n_estimators": "3", "voting": "hard"}),
    ("bagging", {"n_estimators": "3", "tree": "cart-entropy"}),
    ("kmeans", {}), ("kmeans", {"scale": "minmax"}),
    ("iekm", {}), ("iekm", {"resample": "once", "bootstrap_features": "true", "scale": "zscore"}),
    ("cspa", {}), ("cspa", {"partitioner": "spectral"}), ("hgpa", {}), ("mcla", {}),
    ("mcla", {"partitioner": "spectral"}), ("hac-single", {}), ("hac-average", {}),
    ("hac-complete", {}),
    ("pam", {}), ("diana", {}),
    *(("gmm", {"covariance_type": kind}) for kind in ("auto", "full", "tied", "diag", "spherical")),
    ("gmm", {"select_k": "true"}),
    ("rf-cluster", {"n_estimators": "20"}),
    ("lazy-bagging", {}), ("lazy-bagging", {"voting": "soft"}),
    ("lazy-bagging", {"tree": "cart-entropy"}), ("lazy-stacking", {"tree": "cart-entropy"}),
    ("lazy-stacking", {}), ("lazy-stacking", {"base_estimators": "tree"}),
    ("lazy-stacking", {"base_estimators": "knn"}), ("lazy-stacking", {"base_estimators": "nb"}),
    ("lazy-stacking", {"combiner": "stacking"}),
    *((name, _SMALL_ISLE) for name in ("rule-lasso", "tree-lasso", "rule-pls", "tree-pls",
                                       "oob-weighted", "oob-weighted-top", "rule-kernel",
                                       "tree-kernel", "isle-average")),
    ("random-forest", {"n_estimators": "20"}),
    ("rule-lasso", {**_SMALL_ISLE, "linear_terms": "true"}),
    ("tree-pls", {**_SMALL_ISLE, "linear_terms": "true", "tree_size": "random"}),
    ("isca", {"n_stages": "5"}), ("isca", {"n_stages": "5", "linkage": "single"}),
    ("ss-isca", {"n_stages": "5"}), ("ss-isca", {"n_stages": "5", "similarity": "importance"}),
    ("ss-isca", {"n_stages": "5", "similarity": "importance", "postprocess": "lasso"}),
]

HEAVY = ("sklearn", "scipy", "skops", "numba")


def test_the_cases_cover_the_registry():
    assert {name for name, _ in CASES} == set(registry.ALGORITHMS)


def _data(name: str) -> str:
    spec = registry.get(name)
    if spec.task == registry.REGRESSION:
        return str(data_path("housing.arff"))
    if spec.task == registry.CLUSTERING:
        return str(data_path("iris.arff"))
    return str(data_path("labor.arff"))


def _fitted(name: str, params: dict):
    spec = registry.get(name)
    if spec.needs_targets:
        return api.cluster(name, _data(name), k=3, params=params, seed=1,
                           targets=["petallength"]).model
    if spec.task == registry.CLUSTERING:
        return api.fit(name, _data(name), params=params, seed=1, n_clusters=3)
    return api.fit(name, _data(name), params=params, seed=1)


def _outputs(pipeline, X, task):
    if task == registry.CLASSIFICATION:
        return np.asarray(pipeline.predict(X)), np.asarray(pipeline.predict_proba(X))
    return (np.asarray(pipeline.predict(X)),)


@pytest.mark.parametrize("name,params", CASES, ids=[f"{n}-{'-'.join(p.values())}" if p else n
                                                    for n, p in CASES])
def test_a_saved_model_reads_back_as_its_model_class_and_predicts_the_same(name, params,
                                                                           tmp_path):
    from ensemblekit.data import load_dataset

    spec = registry.get(name)
    fitted = _fitted(name, params)
    path, again = tmp_path / "m.ekm", tmp_path / "again.ekm"
    api.save_model(fitted, path)
    api.save_model(fitted, again)
    assert path.read_bytes() == again.read_bytes()
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    assert names[0] == "metadata.json" and all(n.endswith(".npy") for n in names[1:])
    loaded = api.load_model(path)
    assert type(loaded.estimator) is spec.model_class()
    if not spec.predicts_new_rows:
        return
    X = load_dataset(_data(name)).X
    for got, want in zip(_outputs(loaded.pipeline, X, spec.task),
                         _outputs(fitted.pipeline, X, spec.task)):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


_RUN = r"""
import json, sys
from ensemblekit.cli import main

given, heavy_names, report_path = sys.argv[1:4]
report = []
for name, commands in json.loads(given):
    codes = []
    for args in commands:
        sys.argv = ["ensemblekit", *args]
        try:
            main()
        except SystemExit as exc:
            codes.append(exc.code)
    heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(heavy_names)))
    report.append({"name": name, "codes": codes, "heavy": heavy})
with open(report_path, "w") as fh:
    json.dump(report, fh)
"""


def _first_cases():
    seen, out = set(), []
    for name, params in CASES:
        if name not in seen and not name.startswith("lazy-"):
            seen.add(name)
            out.append((name, params))
    return out


@pytest.mark.slow  # a model of every algorithm but the lazy ones, then one fresh interpreter
def test_predict_show_and_evaluate_load_numpy_alone(tmp_path):
    # one interpreter runs every model's commands, one model after another, and reports the
    # heavy modules loaded after each: a module loaded once stays loaded, so the first model
    # reported with one is the first whose commands loaded it (one process per model cost
    # about 0.3 s of start-up each, 31 times)
    models = []
    for name, params in _first_cases():
        spec = registry.get(name)
        path = tmp_path / f"{name}.ekm"
        api.save_model(_fitted(name, params), path)
        data = _data(name)
        commands = [["show", str(path)]]
        if spec.predicts_new_rows:
            commands.append(["predict", str(path), data, "-o", str(tmp_path / "p.csv")])
            if spec.task == registry.CLASSIFICATION:
                commands.append(["predict", str(path), data, "--proba", "-o",
                                 str(tmp_path / "q.csv")])
            commands.append(["evaluate", str(path), data])
        models.append((name, commands))
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-c", _RUN, json.dumps(models), json.dumps(HEAVY),
                           str(out)], capture_output=True, text=True, timeout=600)
    report = json.loads(out.read_text())
    assert [r["name"] for r in report] == [name for name, _ in models], done.stderr
    for (name, commands), row in zip(models, report):
        assert row["codes"] == [0] * len(commands), (name, done.stderr)
        assert row["heavy"] == [], f"{name} loaded {row['heavy']}"


@pytest.mark.parametrize("params", [{}, {"unpruned": "true"}, {"confidence_factor": "0.1"}])
def test_fit_without_scikit_learn_writes_the_estimators_model_file(params, tmp_path):
    # `fit c45` grows the model class itself (C45Model.fit_coded); the scikit-learn
    # pipeline of the same estimator must give the same file, byte for byte
    from ensemblekit.data import load_dataset
    from ensemblekit.results import FittedModel

    fitted = api.fit("c45", _data("c45"), params=params, seed=1)
    assert type(fitted.pipeline).__name__ == "ModelPipeline"
    ds = load_dataset(_data("c45"))
    keep = ds.y >= 0
    values = registry.get("c45").resolve(params)
    pipeline = registry.make_estimator("c45", ds.schema, values, 1).fit(ds.X[keep], ds.y[keep])
    assert type(pipeline).__name__ == "Pipeline"
    api.save_model(fitted, tmp_path / "coded.ekm")
    api.save_model(FittedModel(pipeline, fitted.metadata), tmp_path / "estimator.ekm")
    assert (tmp_path / "coded.ekm").read_bytes() == (tmp_path / "estimator.ekm").read_bytes()


@pytest.mark.parametrize("name", ["c45", "k2", "knn", "kmeans", "cart-entropy", "bagged-k2"])
def test_a_piped_show_writes_plain_lines_without_importing_rich(name, tmp_path):
    # issue 28: off a terminal, `show` lays out its blocks itself; rich's import and
    # rendering were a fifth of the command's time, and rich padded each line to 200 columns
    from ensemblekit.description import description_text, model_description

    path = tmp_path / "m.ekm"
    api.save_model(_fitted(name, dict(_first_cases())[name]), path)
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-c", _RUN, json.dumps([[name, [["show", str(path)]]]]),
                           json.dumps(["rich"]), str(out)], capture_output=True, text=True,
                          timeout=120)
    report = json.loads(out.read_text())
    assert report == [{"name": name, "codes": [0], "heavy": []}], done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"algorithm         {name} ({registry.get(name).task})"
    assert all(line == line.rstrip() for line in lines)
    assert done.stdout == description_text(model_description(api.describe_model(path)), None)
