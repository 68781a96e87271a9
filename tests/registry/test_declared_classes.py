"""Declared class domain (issue 19): every class value the training schema declares.

Weka keeps a class value that the ARFF header declares but no training row holds;
ensemblekit's classifiers do too once the registry gives them the schema's class
count (``n_classes``): ``classes_`` are the codes ``0 .. n - 1``, ``predict_proba``
has ``n`` columns, the K2 family gives the empty class Weka's smoothed mass and the
other classifiers give it 0. Checked here against hand-computed CPTs, against Weka
3.9.7 on primary-tumor (class ``anus`` has no instance), and through the API, the
registry and model files.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ensemblekit import api, registry
from ensemblekit.bayesnet.bagging import BaggedK2Classifier
from ensemblekit.bayesnet.classifier import K2Classifier
from ensemblekit.bayesnet.inner import InnerEnsembleK2Classifier
from ensemblekit.classifiers.bagging import BaggedTreeClassifier
from ensemblekit.classifiers.cart import CartEntropyTree
from ensemblekit.lazy.lazy_bagging import LazyBaggingClassifier
from ensemblekit.lazy.lazy_stacking import LazyStackingClassifier

from ektesting.support import data_path
from ektesting.weka_report import parse_weka_predictions
from ektesting.weka_tools import k2_options, needs_weka, run_weka

CLASSIFIERS = sorted(name for name, spec in registry.ALGORITHMS.items()
                     if spec.task == registry.CLASSIFICATION)
K2_FAMILY = {"k2", "iebn", "bagged-k2"}
#: Our classifier classes and arguments that make them quick on a few rows.
ESTIMATORS = [
    (K2Classifier, {}),
    (InnerEnsembleK2Classifier, {"n_estimators": 3, "random_state": 0}),
    (BaggedK2Classifier, {"n_estimators": 3, "random_state": 0}),
    (CartEntropyTree, {"random_state": 0}),
    (BaggedTreeClassifier, {"n_estimators": 3, "random_state": 0}),
    (LazyBaggingClassifier, {"n_estimators": 3, "random_state": 0}),
    (LazyStackingClassifier, {"n_estimators": 3, "random_state": 0}),
]


def iris_without(tmp_path: Path, dropped: str) -> Path:
    """iris with every row of class ``dropped`` removed; the header still declares it."""
    lines = data_path("iris.arff").read_text().splitlines()
    kept = [line for line in lines if not line.rstrip().endswith("," + dropped)]
    path = tmp_path / "iris-lacking.arff"
    path.write_text("\n".join(kept) + "\n")
    return path


# --------------------------------------------------------------------------- hand-computed
def test_k2_gives_an_empty_class_the_smoothed_mass_by_hand():
    """Naive Bayes (max_parents=1), alpha 1/2, 3 declared classes, class 2 without rows.

    P(c) = (N_c + a) / (N + 3a); P(x | c) = (N_cx + a) / (N_c + 2a), so the empty
    class has P(c=2) = a / (N + 3a) and P(x | c=2) = 1/2 for both values of x.
    """
    X = np.array([[0.0], [0.0], [1.0], [1.0], [1.0]])
    y = np.array([0, 0, 1, 1, 0])
    clf = K2Classifier(max_parents=1, nominal_features=[0], n_categories=[2], n_classes=3)
    clf.fit(X, y)
    a, N = Fraction(1, 2), 5
    prior = [(Fraction(3) + a) / (N + 3 * a), (Fraction(2) + a) / (N + 3 * a), a / (N + 3 * a)]
    like = [[(2 + a) / (3 + 2 * a), (1 + a) / (3 + 2 * a)],
            [(0 + a) / (2 + 2 * a), (2 + a) / (2 + 2 * a)],
            [Fraction(1, 2), Fraction(1, 2)]]
    np.testing.assert_allclose(clf.cpts_[0], [[float(p) for p in prior]], rtol=1e-15)
    np.testing.assert_allclose(clf.cpts_[1], [[float(v) for v in row] for row in like],
                               rtol=1e-15)
    for x in (0, 1):
        joint = [prior[c] * like[c][x] for c in range(3)]
        want = [float(j / sum(joint)) for j in joint]
        np.testing.assert_allclose(clf.predict_proba([[float(x)]])[0], want, rtol=1e-12)
    assert clf.classes_.tolist() == [0, 1, 2]
    assert clf.network()[0]["n_values"] == 3


def test_without_n_classes_the_classes_are_the_labels_seen():
    """scikit-learn's rule stays the default: labels of any type, ``np.unique``."""
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    for cls, kwargs in ESTIMATORS:
        clf = cls(**kwargs).fit(X, np.array(["b", "d", "b", "d"]))
        assert clf.classes_.tolist() == ["b", "d"], cls.__name__
        assert clf.predict_proba(X).shape == (4, 2), cls.__name__


@pytest.mark.parametrize("cls,kwargs", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_declared_classes_widen_classes_and_probabilities(cls, kwargs):
    """Codes 0 and 2 of 4 declared: four columns, rows summing to one, predictions seen."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    y = np.where(X[:, 0] > 0, 2, 0)
    clf = cls(nominal_features=[0, 1], **kwargs) if "nominal_features" in cls().get_params() \
        else cls(**kwargs)
    clf.set_params(n_classes=4).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2, 3]
    proba = clf.predict_proba(X)
    assert proba.shape == (40, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    if cls in (K2Classifier, InnerEnsembleK2Classifier, BaggedK2Classifier):
        assert np.all(proba[:, [1, 3]] > 0)  # smoothed mass, as Weka
    else:
        assert np.all(proba[:, [1, 3]] == 0)
    assert set(clf.predict(X).tolist()) <= {0, 2}
    np.testing.assert_array_equal(clf.predict(X), np.argmax(proba, axis=1))


@pytest.mark.parametrize("cls,kwargs", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_declared_classes_change_nothing_when_every_class_has_rows(cls, kwargs):
    """Zero-based codes covering every declared class: the same model as without n_classes."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    y = (X[:, 0] + X[:, 1]).astype(int) % 3
    plain = cls(**kwargs).fit(X, y)
    declared = cls(n_classes=3, **kwargs).fit(X, y)
    np.testing.assert_array_equal(declared.predict_proba(X), plain.predict_proba(X))


@pytest.mark.parametrize("cls,kwargs", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_labels_outside_the_declared_codes_are_refused(cls, kwargs):
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    for y in (np.array([0, 3, 0, 3]), np.array(["a", "b", "a", "b"]), np.array([0, 1.5, 0, 1])):
        with pytest.raises(ValueError):
            cls(n_classes=3, **kwargs).fit(X, y)


def test_bagged_k2_members_know_every_declared_class():
    """Weka's Bagging members share the header: a bag lacking a class still smooths it."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, size=(12, 1)).astype(float)
    y = np.array([0] * 10 + [1, 1])
    clf = BaggedK2Classifier(n_estimators=8, random_state=0, nominal_features=[0],
                             n_classes=3).fit(X, y)
    assert all(m.classes_.tolist() == [0, 1, 2] for m in clf.estimators_)
    assert any(1 not in y[s] for s in clf.estimators_samples_)  # some bag lacks class 1
    mean = np.mean([m.predict_proba(X) for m in clf.estimators_], axis=0)
    np.testing.assert_allclose(clf.predict_proba(X), mean, rtol=1e-12)
    assert np.all(clf.predict_proba(X)[:, 1:] > 0)


# --------------------------------------------------------------------------- registry, API
def test_n_classes_is_not_a_command_line_parameter():
    for name in CLASSIFIERS:
        spec = registry.get(name)
        assert "n_classes" not in spec.param_names
        with pytest.raises(registry.ParameterError):
            spec.resolve({"n_classes": "3"})


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_every_classifier_covers_the_declared_classes(name, tmp_path):
    """Fitted on iris without Iris-versicolor: three proba columns, 0 or smoothed for it."""
    path = iris_without(tmp_path, "Iris-versicolor")
    model = api.fit(name, path)
    estimator = model.pipeline[-1]
    assert estimator.classes_.tolist() == [0, 1, 2]
    proba = registry.class_probabilities(model.pipeline, api.load_data(path).X, 3)
    assert proba.shape == (100, 3)
    prediction = api.predict(model, data_path("iris.arff"), proba=True)
    assert prediction.classes == ("Iris-setosa", "Iris-versicolor", "Iris-virginica")
    assert prediction.probabilities.shape == (150, 3)
    np.testing.assert_allclose(prediction.probabilities.sum(axis=1), 1.0)
    empty = prediction.probabilities[:, 1]
    if name in K2_FAMILY:  # smoothed mass, which may even win where the features disagree
        assert np.all(empty > 0)
    elif name == "knn":  # IBk starts every declared class at 1/n: never above a neighbour's
        assert np.all(empty > 0) and "Iris-versicolor" not in prediction.predictions
    else:
        assert np.all(empty == 0) and "Iris-versicolor" not in prediction.predictions
    # model files keep the wider classes_ and load back (trust checks, class codes)
    api.save_model(model, tmp_path / "m.ekm")
    again = api.predict(api.load_model(tmp_path / "m.ekm"), data_path("iris.arff"), proba=True)
    np.testing.assert_array_equal(again.probabilities, prediction.probabilities)


@pytest.mark.filterwarnings("ignore:The least populated class:UserWarning")
def test_cv_folds_lacking_a_rare_class_keep_every_column():
    """primary-tumor's classes with one or two rows are missing from some of 10 folds."""
    from sklearn.model_selection import StratifiedKFold

    ds = api.load_data(data_path("primary-tumor.arff"))
    y = np.asarray(ds.y, dtype=np.int64)
    n_classes = len(ds.schema.class_attribute.values)
    lacking = 0
    folds = StratifiedKFold(10, shuffle=True, random_state=1).split(ds.X, np.maximum(y, 0))
    for train, test in folds:
        model = registry.make_estimator("k2", ds.schema, {}, 1).fit(ds.X[train], y[train])
        lacking += np.unique(y[train]).size < n_classes - 1  # 'anus' is empty anyway
        assert model.classes_.tolist() == list(range(n_classes))
        proba = model.predict_proba(ds.X[test])
        assert proba.shape == (test.size, n_classes)
        assert np.all(proba > 0)
    assert lacking  # the check saw folds without a rare class


# --------------------------------------------------------------------------- Weka
@needs_weka
def test_k2_on_primary_tumor_matches_weka_with_the_empty_class(tmp_path):
    """Acceptance 7: k2 probabilities on the training file equal Weka 3.9.7's to 1e-6.

    primary-tumor declares 22 classes; ``anus`` has no instance and gets Weka's
    smoothed mass (up to about 0.1) in every row.
    """
    path = data_path("primary-tumor.arff")
    saved = str(tmp_path / "k2.model")
    run_weka("weka.classifiers.bayes.BayesNet", "-t", str(path), "-no-cv", "-d", saved,
             *k2_options(2, "loo-probability"))
    listing = run_weka("weka.classifiers.bayes.BayesNet", "-l", saved, "-T", str(path),
                       "-classifications",
                       "weka.classifiers.evaluation.output.prediction.CSV -distribution "
                       "-decimals 10")
    weka = np.array(parse_weka_predictions(listing)["distribution"])
    ours = api.predict(api.fit("k2", path, params={"max_parents": 2}), path, proba=True)
    assert weka.shape == ours.probabilities.shape == (339, 22)
    anus = ours.classes.index("anus")
    assert weka[:, anus].min() > 0
    np.testing.assert_allclose(ours.probabilities, weka, rtol=0, atol=1e-6)
