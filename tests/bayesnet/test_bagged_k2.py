"""Tests of ``bagged-k2`` (BGBN), bayesnet/bagging.py.

(1) the ensemble's probabilities are the mean of its members' (class columns
mapped), and each member is K2 fitted -- discretisation included -- on its own
bag; (2) one member on the whole unshuffled data is exactly ``K2Classifier``;
(3) a seed reproduces the probabilities byte for byte; (4) a bag lacking a
class (or a nominal category) still gives probabilities over all classes
summing to one; (5) scikit-learn's estimator checks; (6) parameter and input
errors.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import arff
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit.bayesnet.bagging import BaggedK2Classifier
from ensemblekit.bayesnet.classifier import K2Classifier
from ensemblekit.discretize import MDLDiscretizer

SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"


def load_arff(name: str):
    """ARFF -> (X float with NaN, y labels as str, nominal idx, n_categories).

    Nominal attribute values become codes in declared order, ``?`` becomes
    NaN; the class (last attribute) keeps its string labels.
    """
    with (SAMPLE_DATA / f"{name}.arff").open() as fh:
        data = arff.load(fh)
    domains = [a[1] for a in data["attributes"]][:-1]
    maps = [
        {v: float(k) for k, v in enumerate(d)} if isinstance(d, list) else None
        for d in domains
    ]
    X = np.array(
        [
            [
                np.nan if v is None else (m[v] if m is not None else float(v))
                for v, m in zip(row[:-1], maps)
            ]
            for row in data["data"]
        ],
        dtype=float,
    )
    y = np.array([row[-1] for row in data["data"]], dtype=object)
    nominal = [j for j, d in enumerate(domains) if isinstance(d, list)]
    return X, y, nominal, [len(domains[j]) for j in nominal]


@pytest.fixture(scope="module")
def iris():
    X, y, _, _ = load_arff("iris")
    return X, y.astype(str)


@pytest.fixture(scope="module")
def vote():
    X, y, nominal, n_categories = load_arff("vote")
    return X, y.astype(str), nominal, n_categories


def mean_member_proba(clf: BaggedK2Classifier, X: np.ndarray) -> np.ndarray:
    """The members' probabilities, mapped to the full classes_, averaged by hand."""
    n_classes = clf.classes_.size
    per_member = []
    for member in clf.estimators_:
        p = np.zeros((X.shape[0], n_classes))
        p[:, member.classes_] = member.predict_proba(X)  # members see class indices
        per_member.append(p)
    return np.mean(per_member, axis=0)


# --------------------------------------------------------------------------
# (1) soft vote = mean of the members, each member = K2 on its own bag
# --------------------------------------------------------------------------
def test_proba_is_mean_of_members_iris(iris):
    X, y = iris
    clf = BaggedK2Classifier(random_state=3).fit(X, y)
    assert len(clf.estimators_) == 10
    assert all(isinstance(m, K2Classifier) for m in clf.estimators_)
    assert clf.classes_.tolist() == ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]
    assert clf.n_features_in_ == 4
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba, mean_member_proba(clf, X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(
        clf.predict(X), clf.classes_[np.argmax(proba, axis=1)]
    )


def test_proba_is_mean_of_members_vote_subsampled(vote):
    X, y, nominal, n_categories = vote
    clf = BaggedK2Classifier(
        n_estimators=7,
        max_samples=0.5,
        bootstrap=False,
        random_state=0,
        max_parents=3,
        nominal_features=nominal,
        n_categories=n_categories,
    ).fit(X, y)
    np.testing.assert_allclose(
        clf.predict_proba(X), mean_member_proba(clf, X), rtol=0, atol=1e-12
    )
    for bag in clf.estimators_samples_:
        assert bag.size == X.shape[0] // 2
        assert np.unique(bag).size == bag.size  # without replacement


def test_each_member_is_k2_fitted_on_its_own_bag(iris):
    """Members discretise on their bag (as Weka's Bagging of BayesNet), not on all data."""
    X, y = iris
    clf = BaggedK2Classifier(n_estimators=5, random_state=1).fit(X, y)
    full_cuts = MDLDiscretizer().fit(X, y).cut_points_
    y_idx = np.searchsorted(clf.classes_, y)
    differs = False
    for member, bag in zip(clf.estimators_, clf.estimators_samples_):
        assert bag.size == X.shape[0]
        assert np.unique(bag).size < bag.size  # bootstrap: repeats
        ref = K2Classifier().fit(X[bag], y_idx[bag])
        bag_cuts = MDLDiscretizer().fit(X[bag], y_idx[bag]).cut_points_
        for a, b in zip(member.discretizer_.cut_points_, bag_cuts):
            np.testing.assert_array_equal(a, b)
        assert member.parents_ == ref.parents_
        np.testing.assert_array_equal(member.predict_proba(X), ref.predict_proba(X))
        differs |= any(
            a.shape != b.shape or not np.array_equal(a, b)
            for a, b in zip(member.discretizer_.cut_points_, full_cuts)
        )
    assert differs


def test_k2_parameters_reach_every_member(vote):
    X, y, nominal, n_categories = vote
    clf = BaggedK2Classifier(
        n_estimators=3,
        random_state=0,
        max_parents=1,
        init="empty",
        scoring="loo-accuracy",
        alpha=1.0,
        nominal_features=nominal,
        n_categories=n_categories,
    ).fit(X, y)
    for m in clf.estimators_:
        assert (m.max_parents, m.init, m.scoring, m.alpha) == (
            1,
            "empty",
            "loo-accuracy",
            1.0,
        )
        assert list(m.nominal_features) == nominal
        assert list(m.n_categories) == n_categories


def test_predict_takes_first_class_on_ties(iris):
    X, y = iris
    clf = BaggedK2Classifier(n_estimators=2, random_state=0).fit(X, y)
    clf.predict_proba = lambda X: np.array(
        [[0.5, 0.5, 0.0], [0.2, 0.4, 0.4], [0.3, 0.3, 0.4]]
    )
    assert clf.predict(X[:3]).tolist() == [
        "Iris-setosa",
        "Iris-versicolor",
        "Iris-virginica",
    ]


def test_rows_without_class_are_dropped(vote):
    X, y, nominal, _ = vote
    y_missing = y.astype(object)
    y_missing[[0, 5, 9]] = None
    keep = np.ones(X.shape[0], dtype=bool)
    keep[[0, 5, 9]] = False
    params = {"n_estimators": 3, "random_state": 2, "nominal_features": nominal}
    a = BaggedK2Classifier(**params).fit(X, y_missing)
    b = BaggedK2Classifier(**params).fit(X[keep], y[keep])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


# --------------------------------------------------------------------------
# (2) one member, whole data, no resampling = K2Classifier exactly
# --------------------------------------------------------------------------
def test_single_member_without_resampling_is_k2_iris(iris):
    X, y = iris
    clf = BaggedK2Classifier(n_estimators=1, max_samples=1.0, bootstrap=False).fit(X, y)
    ref = K2Classifier().fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), ref.predict_proba(X))
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))
    assert clf.estimators_[0].parents_ == ref.parents_


def test_single_member_without_resampling_is_k2_vote(vote):
    X, y, nominal, n_categories = vote
    kw = {"max_parents": 3, "nominal_features": nominal, "n_categories": n_categories}
    clf = BaggedK2Classifier(
        n_estimators=1, max_samples=1.0, bootstrap=False, random_state=5, **kw
    ).fit(X, y)
    ref = K2Classifier(**kw).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), ref.predict_proba(X))
    assert clf.estimators_[0].parents_ == ref.parents_


# --------------------------------------------------------------------------
# (3) reproducibility
# --------------------------------------------------------------------------
@pytest.mark.parametrize("bootstrap", [True, False])
def test_same_seed_same_bytes(iris, bootstrap):
    X, y = iris
    kw = {"n_estimators": 6, "max_samples": 0.6, "bootstrap": bootstrap}
    p1 = BaggedK2Classifier(random_state=42, **kw).fit(X, y).predict_proba(X)
    p2 = BaggedK2Classifier(random_state=42, **kw).fit(X, y).predict_proba(X)
    assert p1.tobytes() == p2.tobytes()
    rs = np.random.RandomState(7)
    p3 = BaggedK2Classifier(random_state=rs, **kw).fit(X, y).predict_proba(X)
    p4 = (
        BaggedK2Classifier(random_state=np.random.RandomState(7), **kw)
        .fit(X, y)
        .predict_proba(X)
    )
    assert p3.tobytes() == p4.tobytes()
    p5 = BaggedK2Classifier(random_state=43, **kw).fit(X, y).predict_proba(X)
    assert p1.tobytes() != p5.tobytes()


# --------------------------------------------------------------------------
# (4) bags lacking a class or a category
# --------------------------------------------------------------------------
def test_bag_missing_a_class(iris):
    X, y = iris
    # keep only 3 rows of Iris-virginica: small bags often miss it
    keep = np.r_[np.arange(100), [100, 120, 140]]
    X, y = X[keep], y[keep]
    clf = BaggedK2Classifier(n_estimators=10, max_samples=0.1, random_state=0).fit(X, y)
    lacking = [m for m in clf.estimators_ if m.classes_.size < 3]
    assert lacking, "the test needs a bag without Iris-virginica"
    assert any(m.classes_.size == 3 for m in clf.estimators_)
    proba = clf.predict_proba(X)
    assert proba.shape == (X.shape[0], 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(proba >= 0)
    np.testing.assert_allclose(proba, mean_member_proba(clf, X), rtol=0, atol=1e-12)
    # a member without virginica gives it probability 0; the others do not
    m = lacking[0]
    assert 2 not in m.classes_
    assert set(clf.predict(X)) <= set(clf.classes_)


def test_bag_with_a_single_class():
    X = np.array([[0.0], [1.0], [2.0], [3.0]] * 3)
    y = np.array(["a"] * 11 + ["b"])
    clf = BaggedK2Classifier(n_estimators=8, max_samples=0.25, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no advice about integer max_samples
        clf.fit(X, y)
    assert any(m.classes_.size == 1 for m in clf.estimators_)
    proba = clf.predict_proba(X)
    assert proba.shape == (12, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_bag_missing_a_nominal_category_still_predicts():
    # x0 nominal: code 3 appears once; bags that miss it must still accept it
    X = np.array([[0.0], [1.0], [2.0], [0.0], [1.0], [2.0]] * 5 + [[3.0]])
    y = np.array(["p", "q", "p", "q", "p", "q"] * 5 + ["p"])
    clf = BaggedK2Classifier(n_estimators=10, random_state=0, nominal_features=[0]).fit(
        X, y
    )
    assert any(3 not in np.unique(X[bag, 0]) for bag in clf.estimators_samples_)
    assert all(int(m.cardinalities_[0]) == 4 for m in clf.estimators_)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------
# (5) scikit-learn's estimator checks
# --------------------------------------------------------------------------
def test_defaults_follow_weka_and_the_paper():
    p = BaggedK2Classifier().get_params()
    assert (
        p["n_estimators"] == 10 and p["max_samples"] == 1.0 and p["bootstrap"] is True
    )
    assert (p["max_parents"], p["scoring"], p["alpha"]) == (2, "loo-probability", 0.5)


@parametrize_with_checks([BaggedK2Classifier(n_estimators=3)])  # the API does not depend on the size
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------
# (6) errors
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_estimators": 0}, "'n_estimators' parameter of BaggedK2Classifier must be int >= 1"),
        ({"n_estimators": 2.5}, "'n_estimators' parameter of BaggedK2Classifier must be int >= 1"),
        ({"n_estimators": True}, "'n_estimators' parameter of BaggedK2Classifier must be int >= 1"),
        ({"max_samples": 0},
         "'max_samples' parameter of BaggedK2Classifier must be float > 0 and <= 1"),
        ({"max_samples": 0.0},
         "'max_samples' parameter of BaggedK2Classifier must be float > 0 and <= 1"),
        ({"max_samples": 1.5},
         "'max_samples' parameter of BaggedK2Classifier must be float > 0 and <= 1"),
        ({"max_samples": -0.2},
         "'max_samples' parameter of BaggedK2Classifier must be float > 0 and <= 1"),
        ({"max_samples": float("nan")},
         "'max_samples' parameter of BaggedK2Classifier must be float > 0 and <= 1"),
        ({"max_samples": 50},
         "'max_samples' parameter of BaggedK2Classifier must be float > 0 and <= 1"),
        ({"max_samples": "all"},
         "'max_samples' parameter of BaggedK2Classifier must be float > 0 and <= 1"),
        ({"bootstrap": "yes"}, r"'bootstrap' parameter of BaggedK2Classifier must be true\|false"),
        ({"max_parents": -1},
         "'max_parents' parameter of BaggedK2Classifier must be int >= 0, or none"),
        ({"init": "random"}, r"'init' parameter of BaggedK2Classifier must be naive-bayes\|empty"),
        ({"scoring": "bdeu"},
         r"'scoring' parameter of BaggedK2Classifier must be loo-probability\|loo-accuracy"),
        ({"alpha": 0}, "'alpha' parameter of BaggedK2Classifier must be float > 0"),
        ({"discretize": "kmeans"},
         r"'discretize' parameter of BaggedK2Classifier must be mdl\|equal-frequency"),
        ({"n_bins": 0}, "'n_bins' parameter of BaggedK2Classifier must be int >= 1"),
        ({"nominal_features": [7]}, "nominal_features holds an index outside"),
        (
            {"nominal_features": [1], "n_categories": [2, 2]},
            "n_categories has 2 entries",
        ),
    ],
)
def test_bad_parameters(iris, params, match):
    X, y = iris
    X = X.copy()
    X[:, 1] = (
        np.arange(X.shape[0]) % 3
    )  # a valid nominal column for the n_categories case
    with pytest.raises(ValueError, match=match):
        BaggedK2Classifier(**params).fit(X, y)


def test_bad_nominal_code_is_caught_even_outside_every_bag(iris):
    X, y = iris
    X = X.copy()
    X[:, 0] = np.arange(X.shape[0]) % 3
    X[149, 0] = 1.5  # one fractional code; small bags rarely draw row 149
    clf = BaggedK2Classifier(
        n_estimators=2, max_samples=0.1, random_state=0, nominal_features=[0]
    )
    with pytest.raises(ValueError, match="non-negative integer codes"):
        clf.fit(X, y)
    X[149, 0] = 1.0
    # the same seed on valid data draws the same bags: none holds row 149, so the error
    # above came from the check on the whole data, not from a member's own
    bags = clf.fit(X, y).estimators_samples_
    assert len(bags) == 2 and all(149 not in bag for bag in bags)
    clf.set_params(n_categories=[2])
    with pytest.raises(ValueError, match="n_categories gives 2 categories"):
        clf.fit(X, y)


def test_input_errors(iris):
    X, y = iris
    with pytest.raises(ValueError, match="requires y to be passed"):
        BaggedK2Classifier().fit(X, None)
    with pytest.raises(ValueError, match="NaN only"):
        BaggedK2Classifier().fit(X, np.full(X.shape[0], np.nan))
    with pytest.raises(ValueError, match="Unknown label type"):
        BaggedK2Classifier().fit(X, np.linspace(0, 1, X.shape[0]))
    clf = BaggedK2Classifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict_proba(X[:, :3])
    with pytest.raises(ValueError, match="infinity"):
        clf.predict_proba(np.full((1, 4), np.inf))
