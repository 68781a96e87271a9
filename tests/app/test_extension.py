"""One estimator module and one registry entry add an algorithm (issues 17 and 28).

A toy classifier, defined here with its parameter constraints and its fitted-state
declaration, and registered with a single ``AlgorithmSpec``, goes through ``fit``,
``predict``, ``evaluate``, ``compare`` and ``show`` with no other file edited: its
parameters come from its own ``_parameter_constraints``, its model file holds exactly
the state it declares in ``_fitted_state`` (rebuilt as the class the registry names,
and checked by its ``_check_state``), and ``show`` describes it by the entry's
``model_summary``.

The toy predicts the training class frequencies, smoothed by a pseudo-count, for
every row, so each figure below can be checked by hand on vote (267 democrat,
168 republican).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ensemblekit import api, registry
from ensemblekit.constraints import Constraint, validate_params
from ensemblekit.state import Array, Scalar

from ektesting.support import run_cli as run

VOTE = str(Path(__file__).resolve().parents[2] / "sample_data" / "vote.arff")


class PriorClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the smoothed training class frequencies for every row (a test double)."""

    _parameter_constraints = {
        "smoothing": Constraint("float", low=0.0, high=100.0,
                                help="pseudo-count added to each class count"),
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",), low=0),
        "prior_": Array("float64", ("n_classes",), low=0, high=1),
    }

    def __init__(self, smoothing=1.0):
        self.smoothing = smoothing

    def _check_state(self, ctx):
        if abs(self.prior_.sum() - 1) > 1e-9:
            ctx.fail("prior_ does not sum to 1")

    def fit(self, X, y):
        validate_params(self)
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan")
        classes, counts = np.unique(y, return_counts=True)
        self.classes_ = classes.astype(np.int64)
        self.prior_ = (counts + self.smoothing) / (counts.sum() + self.smoothing * counts.size)
        return self

    def predict_proba(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        return np.tile(self.prior_, (X.shape[0], 1))

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


@pytest.fixture(autouse=True)
def prior_entry(monkeypatch):
    monkeypatch.setitem(registry.ALGORITHMS, "prior", registry.AlgorithmSpec(
        name="prior", task=registry.CLASSIFICATION, description="class frequencies (tests only)",
        estimator=f"{__name__}:PriorClassifier", exposed=("smoothing",),
        preprocessing="nominal: one-hot; missing: training mean (numeric) / mode (nominal)"))




def test_parameters_come_from_the_declaration():
    spec = registry.get("prior")
    (param,) = spec.params
    assert (param.name, param.default) == ("smoothing", 1.0)
    assert spec.resolve({"smoothing": "2.5"}) == {"smoothing": 2.5}
    with pytest.raises(registry.ParameterError, match="smoothing"):
        spec.resolve({"smoothing": "-1"})
    listed = run("algorithms", "--format", "json")
    entry = next(e for e in json.loads(listed.stdout) if e["name"] == "prior")
    assert "pseudo-count" in json.dumps(entry)


def test_fit_predict_show_and_evaluate_the_model(tmp_path):
    model = tmp_path / "prior.ekm"
    fitted = run("fit", "prior", VOTE, "-o", model, "--set", "smoothing=1")
    assert fitted.exit_code == 0, fitted.output
    predicted = run("predict", model, VOTE, "--proba")
    assert predicted.exit_code == 0, predicted.output
    lines = predicted.stdout.splitlines()
    assert lines[0] == "row,prediction,p_democrat,p_republican"
    assert len(lines) == 436
    # (267 + 1) / (435 + 2) and (168 + 1) / (435 + 2) for every row
    row, label, p_dem, p_rep = lines[1].split(",")
    assert (row, label) == ("1", "democrat")
    assert float(p_dem) == pytest.approx(268 / 437, abs=5e-7)  # printed to 6 decimals
    assert float(p_rep) == pytest.approx(169 / 437, abs=5e-7)
    shown = run("show", model)
    assert shown.exit_code == 0, shown.output
    assert "prior (classification)" in shown.stdout and "smoothing=1.0" in shown.stdout
    scored = run("evaluate", model, VOTE, "--format", "json")
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["scores"]["accuracy"] == pytest.approx(267 / 435)


def test_compare_and_evaluate_by_cross_validation():
    compared = run("compare", "prior", "c45", "--data", VOTE, "--cv", "5", "--repeats", "1",
                   "--format", "json")
    assert compared.exit_code == 0, compared.output
    cell = json.loads(compared.stdout)["metrics"]["accuracy"]["rows"][0]["scores"]["prior"]
    # stratified folds: each test fold's majority share is democrat's, within one row
    assert cell["mean"] == pytest.approx(267 / 435, abs=1 / 87)
    result = api.evaluate("prior", VOTE, cv=5, repeats=1, seed=1)
    assert result.table("accuracy")["vote"]["prior"] == cell["mean"]


def test_the_model_file_holds_the_declared_state_and_its_check_guards_it(tmp_path):
    import io
    import zipfile

    from ensemblekit.persistence import redigest

    path = tmp_path / "prior.ekm"
    api.save_model(api.fit("prior", VOTE), path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    assert sorted(members) == ["metadata.json", "model/classes_.npy", "model/prior_.npy",
                               "prep/nominal_fill_.npy", "prep/numeric_fill_.npy"]
    metadata = json.loads(members.pop("metadata.json"))
    assert metadata["state"]["model"] == {"n_features_in_": 32}
    assert np.load(io.BytesIO(members["model/prior_.npy"])).tolist() == [268 / 437, 169 / 437]
    # a prior that is not a distribution passes the declaration ([0, 1]) but not the check
    buffer = io.BytesIO()
    np.save(buffer, np.array([0.5, 0.6]))
    members["model/prior_.npy"] = buffer.getvalue()
    metadata["arrays"]["model/prior_.npy"] = len(buffer.getvalue())
    metadata["digest"] = redigest(metadata, members)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata.json", json.dumps(metadata))
        for name, data in members.items():
            archive.writestr(name, data)
    refused = run("predict", path, VOTE)
    assert refused.exit_code == 2
    assert f"{path}: the model file is damaged: model: prior_ does not sum to 1" in refused.stderr


def test_shipped_estimators_declare_their_fitted_state():
    # each states its fitted state beside its parameters, in its model class; every algorithm
    # that predicts without refitting has a model class apart from its estimator
    from ensemblekit.state import declared_state

    for spec in registry.ALGORITHMS.values():
        if spec.name == "prior":
            continue
        cls = spec.model_class()
        assert declared_state(cls), spec.name
        assert "_parameter_constraints" in {k for c in cls.__mro__ for k in vars(c)}, spec.name
        if not spec.name.startswith("lazy-"):
            assert spec.model is not None, spec.name
            assert issubclass(spec.estimator_class(), cls), spec.name


def test_the_development_section_says_how(monkeypatch):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    steps = readme[readme.index("**Adding an algorithm**"):readme.index("**Tests.**")]
    assert "one estimator module" in steps and "one registry entry" in steps
    assert "_fitted_state" in steps and "_check_state" in steps
