"""Clustering baselines: PAM, DIANA, Gaussian mixtures by BIC, random-forest clustering (issue 5)."""

import itertools
from pathlib import Path

import arff
import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.spatial.distance import cdist
from sklearn.datasets import make_blobs
from sklearn.mixture import GaussianMixture
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensemblekit import metrics as M
from ensemblekit.clustering.baselines import (
    DIANA,
    PAM,
    GaussianMixtureBIC,
    RandomForestClustering,
    diana,
)
from ensemblekit.scores import clustering as S

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
TABLE2 = ("silhouette", "dunn", "connectivity", "rand", "fm", "w01", "w10", "jaccard")


def iris():
    with open(SAMPLE / "iris.arff") as fh:
        data = arff.load(fh)
    X = np.array([row[:-1] for row in data["data"]], dtype=np.float64)
    y = np.array([row[-1] for row in data["data"]])
    return X, y


def table2_row(labels):
    X, y = iris()
    values = M.clustering_indices(labels, truth=y, X=X, names=TABLE2)
    return [round(values[name], 2) for name in TABLE2]


# Akdemir & Jannink 2014, Table 2 (iris, k = 3, R's cluster/mclust, raw attributes):
# silhouette, Dunn, connectivity, Rand, FM, W01, W10, Jaccard
PAPER_PAM = [0.55, 0.10, 10.09, 0.88, 0.82, 0.84, 0.81, 0.70]
PAPER_DIANA = [0.54, 0.11, 12.43, 0.86, 0.80, 0.81, 0.78, 0.66]
PAPER_MCLUST = [0.50, 0.07, 14.18, 0.96, 0.94, 0.94, 0.93, 0.88]


# ---------------------------------------------------------------------------
# PAM
# ---------------------------------------------------------------------------
def test_pam_reproduces_the_papers_iris_row():
    model = PAM(n_clusters=3).fit(iris()[0])
    assert table2_row(model.labels_) == PAPER_PAM
    assert sorted(np.bincount(model.labels_).tolist()) == [38, 50, 62]


def test_pam_finds_the_best_medoids_of_a_small_set():
    X = np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 0.0], [9.0, 9.0], [10.0, 8.0], [4.0, 1.0]])
    D = cdist(X, X)
    best = min(itertools.combinations(range(6), 2), key=lambda m: D[:, list(m)].min(axis=1).sum())
    model = PAM(n_clusters=2).fit(X)
    assert sorted(model.medoid_indices_.tolist()) == list(best)
    assert model.inertia_ == pytest.approx(D[:, list(best)].min(axis=1).sum())
    assert_array_equal(model.cluster_centers_, X[model.medoid_indices_])
    # predict: nearest medoid, training rows included
    assert_array_equal(model.predict(X), model.labels_)
    assert_array_equal(model.predict([[9.5, 9.0], [0.2, 0.1]]), model.labels_[[3, 0]])


# ---------------------------------------------------------------------------
# DIANA
# ---------------------------------------------------------------------------
def test_diana_by_hand():
    # 0 1 5 6 20. Split 1: 20 has the largest mean dissimilarity (17) and starts
    # the splinter group; 6 is nearer the rest (mean 4) than to 20 (14): stop.
    # Split 2 (diameter 6 > 0): 0 and 6 tie on mean dissimilarity (4); the first,
    # 0, starts; 1 moves (rest mean 4.5 - splinter 1 = 3.5 > 0); 5 and 6 stay.
    X = np.array([[0.0], [1.0], [5.0], [6.0], [20.0]])
    labels, heights = diana(cdist(X, X), 3)
    assert_array_equal(labels, [0, 0, 1, 1, 2])
    assert_array_equal(heights, [20.0, 6.0])
    assert_array_equal(diana(cdist(X, X), 2)[0], [0, 0, 0, 0, 1])
    assert_array_equal(diana(cdist(X, X), 5)[0], [0, 1, 2, 3, 4])
    assert_array_equal(diana(cdist(X, X), 1)[0], [0, 0, 0, 0, 0])


def test_diana_reproduces_the_papers_iris_row():
    model = DIANA(n_clusters=3).fit(iris()[0])
    assert table2_row(model.labels_) == PAPER_DIANA
    assert np.all(np.diff(model.split_heights_) <= 0)


def test_diana_splits_identical_points_and_refuses_bad_input():
    labels, heights = diana(np.zeros((3, 3)), 2)
    assert sorted(np.bincount(labels).tolist()) == [1, 2] and heights.tolist() == [0.0]
    with pytest.raises(ValueError, match="square"):
        diana(np.zeros((3, 2)), 2)
    with pytest.raises(ValueError, match="n_clusters"):
        diana(np.zeros((3, 3)), 4)


# ---------------------------------------------------------------------------
# Gaussian mixtures chosen by BIC (the Mclust stand-in)
# ---------------------------------------------------------------------------
def test_gmm_matches_the_papers_mclust_iris_row():
    model = GaussianMixtureBIC(n_clusters=3, random_state=0).fit(iris()[0])
    assert model.covariance_type_ == "full"
    assert table2_row(model.labels_) == PAPER_MCLUST


def test_gmm_keeps_the_lowest_bic_of_the_fits_it_tried():
    X, _ = make_blobs(n_samples=150, centers=[[0, 0], [6, 0], [0, 6]], cluster_std=[0.5, 1.5, 0.5],
                      random_state=0)
    model = GaussianMixtureBIC(n_clusters=4, select_k=True, random_state=0).fit(X)
    tried = {(k, c): v for k, row in model.bic_.items() for c, v in row.items()}
    assert set(tried) == {(k, c) for k in range(1, 5) for c in ("full", "tied", "diag", "spherical")}
    best = min(tried, key=tried.get)
    assert (model.n_components_, model.covariance_type_) == best
    seed = np.random.RandomState(0).randint(np.iinfo(np.int32).max)
    again = GaussianMixture(best[0], covariance_type=best[1], random_state=int(seed)).fit(X)
    assert again.bic(X) == pytest.approx(tried[best], rel=1e-12)
    assert model.n_components_ == 3
    assert_array_equal(model.predict(X), model.labels_)
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    fixed = GaussianMixtureBIC(n_clusters=3, covariance_type="diag", random_state=0).fit(X)
    reference = GaussianMixture(3, covariance_type="diag", random_state=int(seed)).fit(X).bic(X)
    assert fixed.bic_ == {3: {"diag": pytest.approx(reference, rel=1e-12)}}


def test_gmm_refuses_bad_parameters():
    X = np.random.RandomState(0).normal(size=(20, 2))
    for model, message in ((GaussianMixtureBIC(covariance_type="VVV"), "covariance_type"),
                           (GaussianMixtureBIC(n_init=0), "n_init"),
                           (GaussianMixtureBIC(select_k="yes"), "select_k")):
        with pytest.raises(ValueError, match=message):
            model.fit(X)


# ---------------------------------------------------------------------------
# random-forest clustering
# ---------------------------------------------------------------------------
def test_forest_proximity_by_hand():
    # tree 0: rows 0, 1 share leaf 1; tree 1: rows 1, 2 share leaf 6
    leaves = np.array([[1, 5], [1, 6], [2, 6]])
    expected = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]])
    assert_array_equal(RandomForestClustering._proximity(leaves), expected)


def test_rf_cluster_separates_blobs_and_predicts_by_shared_leaves():
    # (with only 2 attributes, axis-parallel splits separate blobs poorly)
    X, y = make_blobs(n_samples=90, centers=3, n_features=4, cluster_std=0.6, random_state=1)
    model = RandomForestClustering(n_clusters=3, n_estimators=60, random_state=0).fit(X)
    assert S.adjusted_rand(y, model.labels_) > 0.9
    # a medoid shares every leaf with itself: predicted into its own cluster
    assert_array_equal(model.predict(X[model.medoid_indices_]), model.labels_[model.medoid_indices_])
    assert model.medoid_leaves_.shape == (3, 60)
    again = RandomForestClustering(n_clusters=3, n_estimators=60, random_state=0).fit(X)
    assert_array_equal(again.labels_, model.labels_)


def test_rf_cluster_refuses_bad_parameters():
    X = np.random.RandomState(0).normal(size=(20, 2))
    for model, message in ((RandomForestClustering(n_estimators=0), "n_estimators"),
                           (RandomForestClustering(max_features="all"), "max_features"),
                           (RandomForestClustering(n_clusters=21), "n_samples=20")):
        with pytest.raises(ValueError, match=message):
            model.fit(X)


# ---------------------------------------------------------------------------
# scikit-learn compatibility
# ---------------------------------------------------------------------------
@parametrize_with_checks([
    PAM(random_state=0),
    DIANA(scale="minmax"),
    GaussianMixtureBIC(covariance_type="diag", random_state=0),  # one EM fit per check, for speed
    RandomForestClustering(n_estimators=10, random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)
