"""One registry entry adds an algorithm (issue 17, acceptance 4).

A toy classifier, defined here and registered with a single ``AlgorithmSpec``, goes
through ``fit``, ``predict``, ``evaluate``, ``compare`` and ``show`` with no other file
edited: its parameters come from its own ``_parameter_constraints``, model files
allow its class because the registry names it, and ``show`` describes it by the
entry's ``model_summary``. Without a state check of its own, a loaded model of it gets
the plain one; a subclass that declares one, as README's Development section says, is
checked by it.

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
from ensemblekit.trust import class_labels, fitted_only, float_array

from ektesting.support import run_cli as run

VOTE = str(Path(__file__).resolve().parents[2] / "sample_data" / "vote.arff")


class PriorClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the smoothed training class frequencies for every row (a test double)."""

    _parameter_constraints = {
        "smoothing": Constraint("float", low=0.0, high=100.0,
                                help="pseudo-count added to each class count"),
    }

    def __init__(self, smoothing=1.0):
        self.smoothing = smoothing

    def fit(self, X, y):
        validate_params(self)
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan")
        self.classes_, counts = np.unique(y, return_counts=True)
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


def test_a_registered_class_is_allowed_in_model_files_only_while_registered(tmp_path,
                                                                            monkeypatch):
    from ensemblekit import model_types

    name = f"{__name__}.PriorClassifier"
    assert name in model_types.ALLOWED_TYPES
    model = api.fit("prior", VOTE)
    path = tmp_path / "prior.ekm"
    api.save_model(model, path)
    monkeypatch.delitem(registry.ALGORITHMS, "prior")
    assert name not in model_types.ALLOWED_TYPES
    refused = run("show", path)
    assert refused.exit_code == 2


def test_an_estimator_without_a_check_of_its_own_gets_the_plain_one():
    from ensemblekit import model_types, trust

    assert trust.declared_check(PriorClassifier) is None
    pipeline = api.fit("prior", VOTE).pipeline
    model_types.check_model(pipeline)  # n_features_in_ and classes_ are checked
    pipeline.named_steps["model"].classes_ = np.array([])
    with pytest.raises(trust.DamagedModelError, match="classes_ is empty"):
        model_types.check_model(pipeline)


def test_shipped_estimators_declare_their_own_state_checks():
    # each states its fitted state beside its fit: a check its class declares, and so do
    # the helper classes it lists as parts of that state
    from ensemblekit import trust

    for spec in registry.ALGORITHMS.values():
        if spec.name == "prior":
            continue
        cls = spec.estimator_class()
        for part in (cls, *trust.declared_parts(cls)):
            assert trust.declared_check(part) is not None, (spec.name, part)


def _check_prior(est, ctx):
    """What PriorClassifier's fit leaves: one probability per class."""
    classes = class_labels(ctx, est)
    float_array(ctx, ctx.attr(est, "prior_"), "prior_", low=0, high=1, shape=classes.shape)


class CheckedPrior(PriorClassifier):
    """The toy with its state check declared as README's Development section says."""

    _check_fitted_state = staticmethod(fitted_only(_check_prior))


def test_a_state_check_declared_as_readme_says_guards_the_model(monkeypatch):
    from ensemblekit import model_types, trust

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    steps = readme[readme.index("**Adding an algorithm**"):readme.index("**Tests.**")]
    assert "one estimator module and one registry entry" in steps
    assert "_check_fitted_state = staticmethod(fitted_only(check))" in steps
    monkeypatch.setitem(registry.ALGORITHMS, "checked-prior", registry.AlgorithmSpec(
        name="checked-prior", task=registry.CLASSIFICATION, description="tests only",
        estimator=f"{__name__}:CheckedPrior", exposed=("smoothing",),
        preprocessing="nominal: one-hot; missing: training mean (numeric) / mode (nominal)"))
    assert model_types.type_checks()[f"{__name__}.CheckedPrior"][1] is trust.declared_check(CheckedPrior)
    pipeline = api.fit("checked-prior", VOTE).pipeline
    model_types.check_model(pipeline)
    pipeline.named_steps["model"].prior_ = np.array([0.5, 0.5, 0.5])
    with pytest.raises(trust.DamagedModelError, match=r"prior_ has shape \(3,\), expected \(2\)"):
        model_types.check_model(pipeline)
