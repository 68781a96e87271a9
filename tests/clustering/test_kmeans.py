"""Tests of ensemblekit.clustering.kmeans (K-means baseline, initialisation, scaling)."""

from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cluster import KMeans as SkKMeans
from sklearn.cluster import kmeans_plusplus

from ensemblekit.clustering.kmeans import (
    KMeans,
    apply_scaling,
    fit_scaling,
    initial_centers,
    undo_scaling,
)

from ektesting import support
from ektesting.estimator_checks import parametrize_with_checks_per_class

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def load_numeric(name):
    """Numeric attributes of a sample ARFF file (class = last attribute, dropped) and k."""
    X, y = support.load_numeric(name)
    return X, len(set(y))


# ---------------------------------------------------------------------------
# hand-computed cases
# ---------------------------------------------------------------------------
def test_hand_computed_1d():
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    km = KMeans(n_clusters=2, init=[[0.0], [11.0]]).fit(X)
    assert_array_equal(km.labels_, [0, 0, 1, 1])
    assert_array_equal(km.cluster_centers_, [[0.5], [10.5]])
    # step 1 assigns, step 2 finds the same assignment and stops
    assert km.n_iter_ == 2
    assert km.inertia_ == pytest.approx(4 * 0.25)
    assert_array_equal(km.init_centers_, [[0.0], [11.0]])


def test_hand_computed_2d_moves_points():
    # From centres (0,0) and (11,10): (1,10) is nearer (11,10) (100 < 101) and
    # (10,0) nearer (0,0) (100 < 101); means (5,0) and (6,10) keep that split.
    X = np.array([[0.0, 0.0], [1.0, 10.0], [10.0, 0.0], [11.0, 10.0]])
    km = KMeans(n_clusters=2, init=[[0.0, 0.0], [11.0, 10.0]]).fit(X)
    assert_array_equal(km.labels_, [0, 1, 0, 1])
    assert_array_equal(km.cluster_centers_, [[5.0, 0.0], [6.0, 10.0]])
    assert km.inertia_ == pytest.approx(4 * 25.0)


def test_minmax_scaling_changes_clusters_and_reports_input_units():
    # Feature 1 has a range 100 times larger than feature 0, so raw K-means is
    # driven by feature 1; after min-max scaling both ranges are 1 and the
    # clean split on feature 0 wins (each group spans 0.45 or 0.8 on feature 1).
    X = np.array(
        [[0.0, 0.0], [0.0, 100.0], [0.0, 45.0], [1.0, 10.0], [1.0, 90.0], [1.0, 55.0]]
    )
    init = X[[0, 3]]
    raw = KMeans(n_clusters=2, init=init).fit(X)
    scaled = KMeans(n_clusters=2, init=init, scale="minmax").fit(X)
    assert_array_equal(scaled.labels_, [0, 0, 0, 1, 1, 1])
    assert not np.array_equal(raw.labels_, scaled.labels_)
    # centres in input units: means of the member rows
    assert_allclose(scaled.cluster_centers_, [[0.0, 145.0 / 3], [1.0, 155.0 / 3]])
    # scaled space: range of feature 1 is 100
    assert_allclose(scaled.scaled_centers_, [[0.0, 1.45 / 3], [1.0, 1.55 / 3]])
    # inertia in the scaled space, by hand: feature 0 is constant within each cluster; feature 1
    # is 0, 1, .45 (sum of squares about the mean .501667) and .1, .9, .55 (.321667)
    assert scaled.inertia_ == pytest.approx(247 / 300, rel=1e-12)


# ---------------------------------------------------------------------------
# scaling helpers
# ---------------------------------------------------------------------------
def test_fit_scaling_values():
    X = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [5.0, 5.0, 9.0]])
    off, fac = fit_scaling(X, "minmax")
    assert_array_equal(off, [1.0, 5.0, 2.0])
    assert_array_equal(fac, [4.0, 1.0, 7.0])  # constant column gets factor 1
    Xs = apply_scaling(X, off, fac)
    assert_allclose(Xs, [[0, 0, 0], [0.5, 0, 2 / 7], [1, 0, 1]])
    off, fac = fit_scaling(X, "zscore")
    Xs = apply_scaling(X, off, fac)
    assert_allclose(Xs.mean(axis=0), 0.0, atol=1e-15)
    assert_allclose(Xs.std(axis=0), [1.0, 0.0, 1.0])
    assert_allclose(undo_scaling(Xs, off, fac), X)
    off, fac = fit_scaling(X, "none")
    assert_array_equal(apply_scaling(X, off, fac), X)


def test_fit_scaling_bad_name():
    with pytest.raises(ValueError, match=r"'scale' parameter must be none\|minmax\|zscore;"):
        fit_scaling(np.ones((3, 2)), "log")


# ---------------------------------------------------------------------------
# initialisation
# ---------------------------------------------------------------------------
def test_initial_centers_random_distinct_rows():
    X = np.array([[0.0, 0.0]] * 5 + [[1.0, 1.0]] * 5 + [[2.0, 0.0]])
    for seed in range(20):
        c = initial_centers(X, 3, "random", random_state=seed)
        # with 3 distinct rows and k = 3, the centres are exactly those rows
        assert_array_equal(np.unique(c, axis=0), [[0, 0], [1, 1], [2, 0]])
    with pytest.raises(ValueError, match="only 3 distinct rows"):
        initial_centers(X, 4, "random", random_state=0)


def test_initial_centers_random_seeded():
    X = np.random.RandomState(0).normal(size=(50, 3))
    a = initial_centers(X, 4, "random", random_state=7)
    b = initial_centers(X, 4, "random", random_state=7)
    assert_array_equal(a, b)
    # rows of X, all different
    assert all((X == row).all(axis=1).sum() == 1 for row in a)
    assert np.unique(a, axis=0).shape[0] == 4
    draws = {initial_centers(X, 4, "random", random_state=s).tobytes() for s in range(10)}
    assert len(draws) > 1


def test_initial_centers_kmeanspp_matches_sklearn():
    X = np.random.RandomState(1).normal(size=(40, 2))
    ours = initial_centers(X, 3, "k-means++", random_state=5)
    theirs, _ = kmeans_plusplus(X, 3, random_state=np.random.RandomState(5))
    assert_array_equal(ours, theirs)


def test_initial_centers_array_and_errors():
    X = np.zeros((5, 2)) + np.arange(5)[:, None]
    init = np.array([[0.0, 0.0], [3.0, 3.0]])
    out = initial_centers(X, 2, init)
    assert_array_equal(out, init)
    assert out is not init
    with pytest.raises(ValueError, match=r"shape \(2, 3\), expected"):
        initial_centers(X, 2, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"'init' parameter must be random\|k-means\+\+"):
        initial_centers(X, 2, "farthest")
    with pytest.raises(ValueError, match="n_samples=5 should be >= n_clusters=6"):
        initial_centers(X, 6, "random")
    with pytest.raises(ValueError, match="'n_clusters' parameter must be int >= 1;"):
        initial_centers(X, 0, "random")


# ---------------------------------------------------------------------------
# agreement with scikit-learn, determinism
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["iris.arff", "glass.arff"])
def test_matches_sklearn_lloyd_from_same_centres(name):
    X, k = load_numeric(name)
    for seed in range(3):
        ours = KMeans(k, random_state=seed).fit(X)
        ref = SkKMeans(k, init=ours.init_centers_, n_init=1, tol=0.0,
                       algorithm="lloyd").fit(X)
        assert_array_equal(ours.labels_, ref.labels_)
        assert_array_equal(ours.cluster_centers_, ref.cluster_centers_)
        assert ours.n_iter_ == ref.n_iter_
        assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)


def test_same_seed_same_result_and_init_in_input_units():
    X, k = load_numeric("iris.arff")
    for init in ("random", "k-means++"):
        a = KMeans(k, init=init, scale="minmax", random_state=3).fit(X)
        b = KMeans(k, init=init, scale="minmax", random_state=3).fit(X)
        for attr in ("labels_", "cluster_centers_", "init_centers_", "scaled_centers_"):
            assert_array_equal(getattr(a, attr), getattr(b, attr))
        assert (a.n_iter_, a.inertia_) == (b.n_iter_, b.inertia_)
        # initial centres are actual instances, given in input units
        for row in a.init_centers_:
            assert (X == row).all(axis=1).any()


def test_predict_transform_score():
    X, k = load_numeric("iris.arff")
    km = KMeans(k, scale="zscore", random_state=0).fit(X)
    Xs = apply_scaling(X, km.scaling_offset_, km.scaling_factor_)
    d = np.sqrt(((Xs[:, None, :] - km.scaled_centers_[None]) ** 2).sum(axis=2))
    assert_allclose(km.transform(X), d, atol=1e-12)
    assert_array_equal(km.predict(X), d.argmin(axis=1))
    assert_array_equal(km.predict(X), km.labels_)
    assert km.score(X) == pytest.approx(-km.inertia_)
    assert_allclose(undo_scaling(km.scaled_centers_, km.scaling_offset_,
                                 km.scaling_factor_), km.cluster_centers_)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_clusters": 0}, "'n_clusters' parameter of KMeans must be int >= 1;"),
        ({"n_clusters": 2.5}, "'n_clusters' parameter of KMeans must be int >= 1;"),
        ({"init": "kmeans"},
         r"'init' parameter of KMeans must be random\|k-means\+\+, or an array-like;"),
        ({"init": [[0.0, 0.0]]}, "init array has shape"),
        ({"scale": "unit"}, r"'scale' parameter of KMeans must be none\|minmax\|zscore;"),
        ({"max_iter": 0}, "'max_iter' parameter of KMeans must be int >= 1 and <= 100000;"),
    ],
)
def test_bad_parameters(params, message):
    X = np.arange(20, dtype=float).reshape(10, 2)
    with pytest.raises(ValueError, match=message):
        KMeans(**{"n_clusters": 2, **params}).fit(X)


def test_bad_data():
    with pytest.raises(ValueError, match="n_samples=2 should be >= n_clusters=3"):
        KMeans(3).fit(np.eye(2))
    X = np.arange(10, dtype=float).reshape(5, 2)
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KMeans(2).fit(X)
    with pytest.raises(ValueError, match="distinct rows"):
        KMeans(3).fit(np.ones((6, 2)))


@parametrize_with_checks_per_class(
    [KMeans(random_state=0)], variants=[KMeans(scale="minmax", random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
