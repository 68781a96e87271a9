"""Checks of our own estimators' rebuilt state (issue 16, "Validate what was loaded before using it").

Every fitted model passes :func:`ensemblekit.model_types.check_model`, before and after a
save/load round trip; a targeted corruption of what ``predict``, ``show`` or
``labels_for`` reads is refused with :class:`~ensemblekit.trust.DamagedModelError`
naming the attribute; and for a few corruptions, the same model without the check
fails badly (IndexError, labels outside the clusters, ...), which is why the check
exists.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ensemblekit import model_types, registry, trust
from ensemblekit.persistence import ModelFileError, load_model, save_model

from ektesting.support import data_path, fit_registered, registry_dataset

ROOT = Path(__file__).resolve().parents[2]
LABOR = data_path("labor.arff")  # numeric and nominal attributes, missing values
HOUSING = ROOT / "sample_data" / "housing.arff"  # regression
IRIS = ROOT / "sample_data" / "iris.arff"

OWN_CLASSES = (
    "ensemblekit.bayesnet.bagging.BaggedK2Classifier",
    "ensemblekit.bayesnet.classifier.K2Classifier",
    "ensemblekit.bayesnet.inner.InnerEnsembleK2Classifier",
    "ensemblekit.classifiers.bagging.BaggedTreeClassifier",
    "ensemblekit.classifiers.c45.C45Tree",
    "ensemblekit.classifiers.cart.CartEntropyTree",
    "ensemblekit.classifiers.ibk.IBk",
    "ensemblekit.clustering.baselines.DIANA",
    "ensemblekit.clustering.baselines.GaussianMixtureBIC",
    "ensemblekit.clustering.baselines.PAM",
    "ensemblekit.clustering.baselines.RandomForestClustering",
    "ensemblekit.clustering.consensus.CSPA",
    "ensemblekit.clustering.consensus.CoAssociationHAC",
    "ensemblekit.clustering.consensus.HGPA",
    "ensemblekit.clustering.consensus.MCLA",
    "ensemblekit.clustering.inner_kmeans.InnerEnsembleKMeans",
    "ensemblekit.clustering.kmeans.KMeans",
    "ensemblekit.discretize.MDLDiscretizer",
    "ensemblekit.lazy.distance.WeightedDistance",
    "ensemblekit.lazy.lazy_bagging.LazyBaggingClassifier",
    "ensemblekit.lazy.lazy_stacking.LazyStackingClassifier",
    "ensemblekit.lazy.lazy_stacking._NaiveBayesTables",
    "ensemblekit.rules.extract.Condition",
    "ensemblekit.rules.extract.Rule",
    "ensemblekit.rules.extract.RuleSet",
    "ensemblekit.rules.isca.ISCA",
    "ensemblekit.rules.postprocess.RuleEnsembleRegressor",
)

_SMALL_ISLE = {"n_estimators": "5", "cv": "3"}
# registry algorithms with the parameter values that change what the fitted model stores
# (ensemble sizes kept small: the structure of the state does not depend on them)
CASES = [
    ("k2", {}), ("k2", {"discretize": "equal-frequency"}), ("k2", {"init": "empty"}),
    ("k2", {"max_parents": "3"}),
    ("iebn", {"n_estimators": "3"}), ("iebn", {"n_estimators": "3", "bootstrap": "true"}),
    ("bagged-k2", {"n_estimators": "3"}), ("bagged-k2", {"n_estimators": "3", "bootstrap": "false"}),
    ("knn", {}), ("c45", {}), ("cart-entropy", {}), ("bagging", {"n_estimators": "3"}),
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
_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in settings.items()) or 'default'}"
        for name, settings in CASES]
_FITTED: dict = {}


_data = registry_dataset


def _fitted(name, settings=None):
    """The fitted pipeline of a registry algorithm (cached; tests corrupt deep copies)."""
    settings = settings or {}
    key = (name, tuple(sorted(settings.items())))
    if key not in _FITTED:
        _FITTED[key] = fit_registered(name, registry.get(name).resolve(settings))
    return _FITTED[key]


def _estimator(name, settings=None):
    """A deep copy of the fitted estimator (the pipeline's ``model`` step)."""
    return copy.deepcopy(_fitted(name, settings).named_steps["model"])


def _rows(name):
    """Rows the pipeline of ``name`` predicts (the training file's attributes)."""
    return _data(name)[1].X


def _reachable_classes(model) -> set:
    """Full names of the classes of every object reachable as check_model walks."""
    found, stack, seen = set(), [model], set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, int, float, np.ndarray,
                                                                  np.generic, type)):
            continue
        seen.add(id(obj))
        if isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        else:
            found.add(f"{type(obj).__module__}.{type(obj).__qualname__}")
            stack.extend(vars(obj).values() if hasattr(obj, "__dict__") else ())
    return found


# --------------------------------------------------------------------------- fitted models pass
def test_allowed_types_name_every_class_of_our_estimators():
    allowed = model_types.ALLOWED_TYPES
    missing = [name for name in OWN_CLASSES if name not in allowed]
    assert missing == []
    # rebuilt by skops as plain objects (ObjectNode), and by no other loader
    nodes = [(*name.rsplit(".", 1), "ObjectNode") for name in OWN_CLASSES]
    assert model_types.refused_nodes(nodes) == []
    assert model_types.refused_nodes([(*OWN_CLASSES[0].rsplit(".", 1), "ReduceNode")]) != []


@pytest.mark.parametrize("name, settings", CASES, ids=_IDS)
def test_a_fitted_model_passes_before_and_after_a_round_trip(name, settings, tmp_path):
    model = _fitted(name, settings)
    model_types.check_model(model)
    path = tmp_path / "model.ekm"
    save_model(path, model, {"algorithm": name})  # runs check_model on the fitted model too
    loaded, _ = load_model(path)  # refuses a model whose rebuilt state fails a check
    model_types.check_model(loaded)
    assert np.array_equal(np.asarray(loaded.predict(_rows(name)[:5]) if hasattr(loaded, "predict")
                                     else loaded.named_steps["model"].labels_),
                          np.asarray(model.predict(_rows(name)[:5]) if hasattr(model, "predict")
                                     else model.named_steps["model"].labels_))


def test_the_cases_reach_every_class_of_our_estimators():
    found = set().union(*(_reachable_classes(_fitted(name, settings)) for name, settings in CASES))
    assert set(OWN_CLASSES) <= found


def test_an_unfitted_estimator_is_a_template_but_a_partly_fitted_one_is_refused():
    from ensemblekit.bayesnet.classifier import K2Classifier

    model_types.check_model(K2Classifier(max_parents=3))  # e.g. BaggingClassifier.estimator_
    half = K2Classifier()
    half.n_features_in_ = 3
    with pytest.raises(trust.DamagedModelError, match="classes_"):
        model_types.check_model(half)


def test_the_check_comes_from_the_class_whatever_the_file_sets_on_the_instance():
    # a model file chooses instance attributes: one named like the class's declared check
    # (or scikit-learn's parameter lookup) must neither replace nor break the class's own
    est = _estimator("k2")
    est.parents_[3] = (0, 99)
    vars(est)["_check_fitted_state"] = "no check"
    vars(est)["_get_param_names"] = ["parents_"]
    assert trust.declared_check(type(est)) is type(est).__dict__["_check_fitted_state"].__func__
    with pytest.raises(trust.DamagedModelError, match=re.escape("parents_[3]")):
        model_types.check_model(est)


# --------------------------------------------------------------------------- corruptions refused
def _bad_code(X):
    """``X`` with code 99 in its first nominal column (labor's cost-of-living-adjustment)."""
    X = X.copy()
    X[0, 4] = 99.0
    return X


def _set(path: str, value):
    """A corruption that sets the attribute (or list item) at ``path`` of the estimator."""

    def corrupt(est):
        *head, last = re.findall(r"\w+|\[\d+\]", path)
        obj = est
        for part in head:
            obj = obj[int(part[1:-1])] if part.startswith("[") else getattr(obj, part)
        if last.startswith("["):
            obj[int(last[1:-1])] = value(obj[int(last[1:-1])]) if callable(value) else value
        else:  # object.__setattr__ also sets a frozen dataclass's field, as skops does
            object.__setattr__(obj, last, value(getattr(obj, last)) if callable(value) else value)

    return corrupt


def _drop(name: str):
    """A corruption that deletes the estimator's attribute ``name`` (an older model's state)."""

    def corrupt(est):
        delattr(est, name)

    return corrupt


def _k2_cycle(est):
    """Features 1 and 2 each a parent of the other, with CPTs of the right shapes."""
    card = [est.classes_.size, *est.cardinalities_]
    est.parents_[1], est.parents_[2] = (0, 2), (0, 1)
    for v, other in ((1, 2), (2, 1)):
        rows = card[0] * card[other]
        est.cpts_[v] = np.full((rows, card[v]), 1.0 / card[v])


def _shifted(arr, by=1):
    return np.asarray(arr) + by


CORRUPTIONS = [
    # (algorithm, settings, corruption, attribute named in the message)
    ("k2", {}, _set("parents_[3]", (0, 99)), "parents_[3]"),
    ("k2", {}, _set("parents_[3]", (3,)), "parents_[3]"),
    ("k2", {}, _set("parents_[2]", [0.5]), "parents_[2]"),
    ("k2", {}, _set("cpts_[4]", lambda t: t[:, :-1].copy()), "cpts_[4]"),
    ("k2", {}, _set("cpts_[0]", lambda t: np.vstack([t, t])), "cpts_[0]"),
    ("k2", {}, _set("cpts_[1]", lambda t: -t), "cpts_[1]"),
    ("k2", {}, _set("cpts_", lambda c: c[:-1]), "cpts_"),
    ("k2", {}, _k2_cycle, "parents_"),
    ("k2", {}, _set("cardinalities_", lambda c: c + 1), "cardinalities_"),
    ("k2", {}, _set("modes_", lambda m: m + 50), "modes_"),
    ("k2", {}, _set("discretizer_", "mdl"), "discretizer_"),
    ("k2", {}, _set("discretizer_.cut_points_[0]", lambda c: np.r_[c, -1.0]), "cut_points_[0]"),
    ("k2", {}, _set("discretizer_.cut_points_[4]", np.array([0.5])), "cut_points_[4]"),
    ("k2", {}, _set("discretizer_.n_bins_", lambda b: b[:-1]), "n_bins_"),
    ("iebn", {"n_estimators": "3"}, _set("cpts_[0]", lambda t: t.T.copy()), "cpts_[0]"),
    ("bagged-k2", {"n_estimators": "3"}, _set("estimators_[0].classes_", np.array([0, 5])),
     "estimators_[0].classes_"),
    ("bagged-k2", {"n_estimators": "3"},
     _set("bagging_.estimators_features_[1]", lambda f: f[::-1].copy()), "estimators_features_"),
    ("bagged-k2", {"n_estimators": "3"}, _set("bagging_._max_samples", 10**12), "_max_samples"),
    ("bagged-k2", {"n_estimators": "3"}, _set("bagging_.n_jobs", 10**6), "bagging_.n_jobs"),
    ("cart-entropy", {}, _set("classes_", np.array([0, 1, 2])), "classes_"),
    ("cart-entropy", {}, _set("n_features_in_", 3), "tree_"),
    ("bagging", {"n_estimators": "3"}, _set("classes_", np.array([0, 1, 2])), "classes_"),
    ("bagging", {"n_estimators": "3"}, _set("voting", "all"), "voting"),
    ("bagging", {"n_estimators": "3"}, _set("tree", "j48"), "tree"),
    ("bagging", {"n_estimators": "3"}, _drop("tree"), "written by ensemblekit 0.1"),
    ("lazy-bagging", {}, _drop("tree"), "written by ensemblekit 0.1"),
    ("bagging", {"n_estimators": "3"}, _set("modes_", lambda m: m + 50), "modes_"),
    ("bagging", {"n_estimators": "3"}, _set("estimators_[1].unpruned", False), "estimators_[1]"),
    ("bagging", {"n_estimators": "3", "tree": "cart-entropy"},
     _set("n_categories_", lambda r: r * 10**6), "estimators_[0]"),
    ("bagging", {"n_estimators": "3", "tree": "cart-entropy"},
     _set("numeric_features_", lambda f: f[:-1].copy()), "numeric_features_"),
    ("kmeans", {}, _set("scaled_centers_", lambda c: c[:, :-1].copy()), "scaled_centers_"),
    ("kmeans", {}, _set("scaled_centers_", lambda c: np.vstack([c, c[:1]])), "scaled_centers_"),
    ("kmeans", {}, _set("labels_", lambda lab: _shifted(lab, 10**9)), "labels_"),
    ("kmeans", {}, _set("scaling_factor_", lambda f: f * 0), "scaling_factor_"),
    ("iekm", {}, _set("cluster_centers_", lambda c: c[:, :3].copy()), "cluster_centers_"),
    ("iekm", {}, _set("n_subset_features_", 10**6), "n_subset_features_"),
    ("cspa", {}, _set("members_", lambda m: m + 1000), "members_"),
    ("hgpa", {}, _set("labels_", lambda lab: lab[:-1].copy()), "labels_"),
    ("mcla", {}, _set("feature_weights_", None), "feature_weights_"),
    ("hac-average", {}, _set("scaled_centers_", lambda c: np.vstack([c] * 2)), "scaled_centers_"),
    ("pam", {}, _set("medoid_indices_", lambda m: m + 1000), "medoid_indices_"),
    ("diana", {}, _set("split_heights_", np.zeros(7)), "split_heights_"),
    ("diana", {}, _set("labels_", lambda lab: lab.astype(float)), "labels_"),
    ("gmm", {}, _set("mixture_.means_", lambda m: m[:, :-1].copy()), "mixture_.means_"),
    ("gmm", {}, _set("covariance_type_", "full"), "covariance_type_"),
    ("rf-cluster", {"n_estimators": "20"}, _set("medoid_leaves_", lambda m: m[:, :-1].copy()),
     "medoid_leaves_"),
    ("rf-cluster", {"n_estimators": "20"}, _set("medoid_indices_", lambda m: m - 10**6),
     "medoid_indices_"),
    ("lazy-bagging", {}, _set("y_codes_", lambda y: y + 1), "y_codes_"),
    ("lazy-bagging", {}, _set("k_", 10**6), "k_"),
    ("lazy-bagging", {}, _set("X_tree_", lambda x: x[:, :-1].copy()), "X_tree_"),
    ("lazy-bagging", {}, _set("_tree_nan_free", True), "_tree_nan_free"),
    ("lazy-bagging", {}, _set("tree", "j48"), "tree"),
    ("lazy-bagging", {}, _set("max_depth", 3), "max_depth"),
    ("lazy-bagging", {}, _set("X_tree_", lambda x: x.astype(np.float32)), "X_tree_"),
    ("lazy-bagging", {}, _set("X_tree_", _bad_code), "X_tree_ column"),
    ("lazy-bagging", {"tree": "cart-entropy"}, _set("X_tree_", lambda x: x.astype(np.float64)),
     "X_tree_"),
    ("lazy-bagging", {}, _set("n_estimators", 10**9), "n_estimators"),
    ("lazy-bagging", {}, _set("n_jobs", 10**5), "n_jobs"),
    ("lazy-bagging", {}, _set("min_samples_leaf", 0), "min_samples_leaf"),
    ("lazy-bagging", {}, _set("distance_.X_", lambda x: x[:-1].copy()), "distance_"),
    ("lazy-bagging", {}, _set("distance_.weights_", lambda w: w[:-1].copy()), "weights_"),
    ("lazy-bagging", {}, _set("distance_.n_categories_", lambda r: r * 10**6), "n_categories_"),
    ("lazy-stacking", {}, _set("knn_distance_", None), "knn_distance_"),
    ("lazy-stacking", {}, _set("_nb.rows", lambda r: r[::-1]), "_nb.rows"),
    ("lazy-stacking", {}, _set("_nb.offsets", lambda o: o + 1), "offsets"),
    ("lazy-stacking", {}, _set("learner_types_", ("tree", "svm")), "learner_types_"),
    ("lazy-stacking", {"base_estimators": "knn"}, _set("knn_distance_.complete_",
                                                       lambda c: c[:0].copy()), "complete_"),
    ("rule-lasso", _SMALL_ISLE, _set("coef_", lambda c: c[:-1].copy()), "coef_"),
    ("rule-lasso", _SMALL_ISLE, _set("rules_.nodes[0]", lambda n: n + 1000), "nodes[0]"),
    ("rule-lasso", _SMALL_ISLE, _set("rules_.rules[0].node", 0), "node"),
    ("rule-lasso", _SMALL_ISLE,
     _set("rules_.rules[1]", lambda r: type(r)(r.tree, r.node + 1, r.conditions)), "rules[1]"),
    ("rule-lasso", _SMALL_ISLE, _set("rules_.rules[0].conditions[0].threshold", float("nan")),
     "threshold"),
    ("rule-lasso", _SMALL_ISLE, _set("rules_.rules[0].conditions[0].feature", 14), "feature"),
    ("rule-lasso", _SMALL_ISLE, _set("alpha_", "big"), "alpha_"),
    ("tree-pls", _SMALL_ISLE, _set("linear_scale_", np.ones(14)), "linear_"),
    ("rule-kernel", _SMALL_ISLE, _set("train_target_", lambda t: t[:-1].copy()), "train_basis_"),
    ("tree-kernel", _SMALL_ISLE, _set("bandwidth_", 0.0), "bandwidth_"),
    ("oob-weighted", _SMALL_ISLE, _set("bandwidth_", None), "bandwidth_"),
    ("random-forest", {"n_estimators": "20"}, _set("trees_[0].n_features_in_", 3), "trees_[0]"),
    ("isca", {"n_stages": "5"}, _set("linkage_matrix_", lambda z: z[::-1].copy()), "linkage_matrix_"),
    ("isca", {"n_stages": "5"}, _set("labels_", lambda lab: lab + 3), "labels_"),
    ("isca", {"n_stages": "5"}, _set("n_rules_", 10**6), "n_rules_"),
    ("isca", {"n_stages": "5"}, _set("rule_stages_", lambda s: s + 5), "rule_stages_"),
    ("isca", {"n_stages": "5"}, _set("rule_matrix_", lambda s: s[:, :-1].copy()), "rule_matrix_"),
]


@pytest.mark.parametrize("name, settings, corrupt, attribute", CORRUPTIONS,
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CORRUPTIONS)])
def test_a_corruption_of_what_the_model_reads_is_refused_naming_it(name, settings, corrupt,
                                                                   attribute):
    model = copy.deepcopy(_fitted(name, settings))
    corrupt(model.named_steps["model"])
    with pytest.raises(trust.DamagedModelError, match=re.escape(attribute)):
        model_types.check_model(model)


def test_a_corrupted_condition_is_refused_even_outside_a_rule_set():
    from ensemblekit.rules.extract import Condition, Rule

    with pytest.raises(trust.DamagedModelError, match="greater"):
        model_types.check_model(Condition(1, "yes", 0.5))
    with pytest.raises(trust.DamagedModelError, match="conditions"):
        model_types.check_model(Rule(0, 1, [Condition(1, True, 0.5)]))


# --------------------------------------------------------------------------- without the checks
def test_without_the_check_a_bad_parent_index_breaks_the_network_drawing():
    est = _estimator("k2")
    est.parents_[3] = (0, 99)
    with pytest.raises(IndexError):
        est.to_dot()
    with pytest.raises(trust.DamagedModelError, match=re.escape("parents_[3]")):
        model_types.check_model(est)


def test_without_the_check_an_extra_centre_makes_kmeans_predict_a_cluster_that_is_not_there():
    model = copy.deepcopy(_fitted("kmeans"))
    est = model.named_steps["model"]
    X = _rows("kmeans")[:1]
    row = (model[:-1].transform(X) - est.scaling_offset_) / est.scaling_factor_
    est.scaled_centers_ = np.vstack([est.scaled_centers_, row])  # a 4th centre on the first row
    assert model.predict(X).tolist() == [3]  # cluster 3 of a 3-cluster model
    with pytest.raises(trust.DamagedModelError, match="scaled_centers_"):
        model_types.check_model(model)


def test_without_the_check_a_forward_merge_breaks_isca_labels_for():
    est = _estimator("isca", {"n_stages": "5"})
    n = est.similarity_.shape[0]
    est.linkage_matrix_[0, 0] = 2 * n + 5  # a cluster that is never formed
    with pytest.raises(IndexError):
        est.labels_for(2)
    with pytest.raises(trust.DamagedModelError, match="linkage_matrix_"):
        model_types.check_model(est)


def test_without_the_check_a_bad_node_id_breaks_the_rule_matrix():
    model = copy.deepcopy(_fitted("rule-lasso", _SMALL_ISLE))
    est = model.named_steps["model"]
    est.rules_.nodes[0] = est.rules_.nodes[0] + 1000
    with pytest.raises(IndexError):
        model.predict(_rows("rule-lasso")[:5])
    with pytest.raises(trust.DamagedModelError, match=re.escape("nodes[0]")):
        model_types.check_model(model)


# --------------------------------------------------------------------------- end to end
def test_a_damaged_model_file_is_refused_by_load_model_and_predict(tmp_path, monkeypatch):
    from ensemblekit.cli import app

    runner = CliRunner()
    good = tmp_path / "k2.ekm"
    fitted = runner.invoke(app, ["fit", "k2", str(LABOR), "-o", str(good)])
    assert fitted.exit_code == 0, fitted.stderr
    model, metadata = load_model(good)
    model.named_steps["model"].cpts_[2] = model.named_steps["model"].cpts_[2][:1].copy()
    bad = tmp_path / "bad.ekm"
    with monkeypatch.context() as patch:  # write what save_model would refuse
        patch.setattr(model_types, "check_model", lambda model: None)
        save_model(bad, model, {k: v for k, v in metadata.items()
                                if k not in ("format_version", "ensemblekit_version", "payload",
                                             "digest")})
    with pytest.raises(ModelFileError, match=re.escape("the model file is damaged:") + ".*cpts_"):
        load_model(bad)
    result = runner.invoke(app, ["predict", str(bad), str(LABOR)])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "the model file is damaged" in lines[0] and "cpts_[2]" in lines[0]


@pytest.mark.slow  # a fresh interpreter under a memory limit
def test_a_crafted_huge_n_classes_is_refused_without_allocating_it():
    # the check compares classes_ with arange(n_classes): with n_classes = 2**31 - 1 that
    # array alone is 16 GiB, so the length must be compared first; run under a 2 GiB
    # address-space limit, allocating it would fail with MemoryError instead of the refusal
    import subprocess
    import sys

    code = (
        "import copy, resource, sys\n"
        "sys.path[:0] = ['tests/persistence', 'tests']\n"
        "from test_trust_estimators import _fitted\n"
        "from ensemblekit import model_types\n"
        "model = copy.deepcopy(_fitted('k2'))\n"
        "model[-1].n_classes = 2**31 - 1\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    model_types.check_model(model)\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.stdout.startswith("DamagedModelError"), (done.stdout, done.stderr)
    assert "n_classes it declares" in done.stdout
