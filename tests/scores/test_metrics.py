"""Tests for ensemblekit.metrics: hand-computed cases, invariants, agreement with scikit-learn."""

import math
import subprocess
import sys

import numpy as np
import pytest
from sklearn import metrics as skm

from ensemblekit.metrics import EXTERNAL_INDICES, METRICS, Metric
from ensemblekit.scores.classification import label_accuracy as accuracy
from ensemblekit.scores.clustering import adjusted_rand, nmi, purity
from ensemblekit.scores.regression import correlation, mae, r2, rmse

CLUSTER_FUNCS = [nmi, purity, adjusted_rand]


def test_case_2x2_table_by_hand():
    # true [0,0,1,1], pred [0,0,0,1]. Contingency (rows class, columns cluster):
    #            c0  c1
    #   class 0   2   0
    #   class 1   1   1
    t, p = [0, 0, 1, 1], [0, 0, 0, 1]
    # accuracy: 3 of 4 equal.
    assert accuracy(t, p) == 0.75
    # purity: cluster c0 majority 2, cluster c1 majority 1 -> 3/4.
    assert purity(t, p) == 0.75
    # NMI (bits): H(class) = 1; H(cluster) = H(3/4, 1/4) = 0.811278;
    # H(cluster | class) = 1/2 * 0 (class 0 all in c0) + 1/2 * 1 (class 1
    # split 1:1) = 0.5, so I = H(cluster) - H(cluster | class) = 0.311278 and
    # NMI = 0.311278 / sqrt(1 * 0.811278) = 0.345592.
    h_cluster = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    mi = h_cluster - 0.5
    assert nmi(t, p) == pytest.approx(mi / math.sqrt(1.0 * h_cluster))
    assert nmi(t, p) == pytest.approx(0.3455920, abs=1e-6)
    # ARI: sum C(n_ij,2) = C(2,2) = 1; rows sum C(a,2) = 1+1 = 2;
    # columns sum C(b,2) = C(3,2)+0 = 3; C(4,2) = 6; expected = 2*3/6 = 1;
    # max = (2+3)/2 = 2.5; ARI = (1-1)/(2.5-1) = 0.
    assert adjusted_rand(t, p) == pytest.approx(0.0, abs=1e-12)


def test_case_2x3_table_by_hand():
    # true [0,0,0,1,1,1], pred [0,0,1,1,2,2]. Contingency:
    #            c0  c1  c2
    #   class 0   2   1   0
    #   class 1   0   1   2
    t, p = [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]
    # purity: (2 + 1 + 2) / 6
    assert purity(t, p) == pytest.approx(5 / 6)
    # NMI: H(class) = 1 bit, H(cluster) = log2 3; H(class|cluster) = 2/6 * 1
    # (only c1 is mixed, 1:1), so I = 1 - 1/3 = 2/3; NMI = (2/3)/sqrt(log2 3).
    assert nmi(t, p) == pytest.approx((2 / 3) / math.sqrt(math.log2(3)))
    # ARI: sum C(n_ij,2) = 1 + 1 = 2; rows: C(3,2)*2 = 6; columns: 1*3 = 3;
    # C(6,2) = 15; expected = 6*3/15 = 1.2; max = 4.5; (2-1.2)/(4.5-1.2) = 8/33.
    assert adjusted_rand(t, p) == pytest.approx(8 / 33)
    # Geometric (Strehl & Ghosh) differs from scikit-learn's default arithmetic mean.
    arithmetic = (2 / 3) / ((1 + math.log2(3)) / 2)
    assert skm.normalized_mutual_info_score(t, p) == pytest.approx(arithmetic)
    assert nmi(t, p) != pytest.approx(arithmetic)


def test_purity_is_not_symmetric():
    # Four classes in one cluster vs. one class in four clusters.
    t, p = [0, 1, 2, 3], [0, 0, 0, 0]
    assert purity(t, p) == 0.25  # one cluster, majority 1 of 4
    assert purity(p, t) == 1.0  # four singleton clusters, each pure


def test_perfect_clustering_with_renamed_clusters_scores_one():
    t = np.array([0, 0, 1, 1, 2, 2, 2])
    p = np.array([7, 7, -3, -3, 100, 100, 100])
    for f in CLUSTER_FUNCS:
        assert f(t, p) == pytest.approx(1.0)
    assert accuracy(t, t) == 1.0


@pytest.mark.parametrize("func", CLUSTER_FUNCS)
def test_cluster_relabelling_leaves_index_unchanged(func):
    rng = np.random.RandomState(0)
    t = rng.randint(0, 3, 50)
    p = rng.randint(0, 4, 50)
    perm = np.array([2, 0, 3, 1])
    renamed = perm[p] * 10 + 5  # bijective renaming of cluster ids
    assert func(t, renamed) == pytest.approx(func(t, p))


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (accuracy, skm.accuracy_score),
        (nmi, lambda a, b: skm.normalized_mutual_info_score(a, b, average_method="geometric")),
        (adjusted_rand, skm.adjusted_rand_score),
    ],
)
def test_agrees_with_sklearn(ours, theirs):
    rng = np.random.RandomState(42)
    for _ in range(5):
        a = rng.randint(0, 3, 40)
        b = rng.randint(0, 3, 40)
        assert ours(a, b) == pytest.approx(theirs(a, b))


def test_purity_agrees_with_direct_count():
    rng = np.random.RandomState(1)
    t = rng.randint(0, 3, 60)
    p = rng.randint(0, 5, 60)
    total = sum(np.bincount(t[p == k]).max() for k in np.unique(p))
    assert purity(t, p) == pytest.approx(total / 60)


def test_nmi_and_ari_are_symmetric():
    rng = np.random.RandomState(2)
    a, b = rng.randint(0, 3, 30), rng.randint(0, 4, 30)
    assert nmi(a, b) == pytest.approx(nmi(b, a))
    assert adjusted_rand(a, b) == pytest.approx(adjusted_rand(b, a))


def test_single_cluster_edge_cases():
    # Both partitions trivial: they agree -> 1. Only one trivial: independent -> 0.
    assert nmi([1, 1, 1], [4, 4, 4]) == 1.0
    assert nmi([0, 1, 0, 1], [0, 0, 0, 0]) == 0.0


def test_string_and_int_labels():
    assert accuracy(["a", "b", "b"], ["a", "b", "a"]) == pytest.approx(2 / 3)
    assert purity(["x", "x", "y"], [3, 3, 3]) == pytest.approx(2 / 3)


@pytest.mark.parametrize("func", [accuracy, *CLUSTER_FUNCS])
def test_bad_input(func):
    with pytest.raises(ValueError, match="different lengths \\(3 and 2\\)"):
        func([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        func([], [])
    with pytest.raises(ValueError, match="1-D"):
        func([[0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="NaN"):
        func([0.0, np.nan], [0, 1])


def test_registry():
    assert list(METRICS)[:4] == ["accuracy", "balanced-accuracy", "kappa", "mcc"]
    losses = ("connectivity", "davies-bouldin", "rmse", "mae", "rae", "rrse", "log-loss", "brier",
              "fit-seconds", "predict-seconds", "model-size")
    for name, m in METRICS.items():
        assert isinstance(m, Metric)
        assert m.name == name
        # smaller is better only for two internal indices (Handl et al.; Davies-Bouldin),
        # the error measures, the two proper scoring losses and the measures of the run
        assert m.greater_is_better is (name not in losses)
        assert set(m.tasks) <= {"classification", "clustering", "regression"}
        assert m.internal is (name in ("silhouette", "dunn", "connectivity", "davies-bouldin",
                                       "calinski-harabasz"))
    assert METRICS["accuracy"].task == "classification"
    assert METRICS["ari"].func is adjusted_rand
    assert METRICS["nmi"]([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert METRICS["nmi"].display_name == "NMI"
    assert Metric("x", accuracy, "classification").display_name == "x"


def test_import_does_not_load_sklearn():
    code = "import sys, ensemblekit.metrics; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- regression
REGRESSION_FUNCS = [correlation, rmse, mae, r2]


def test_regression_scores_by_hand():
    # truth [1,2,3,4], prediction [2,2,4,5]: errors -1, 0, -1, -1
    t, p = [1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 4.0, 5.0]
    # squared errors 1+0+1+1 = 3 over 4 instances; absolute errors 3 over 4
    assert rmse(t, p) == pytest.approx(math.sqrt(0.75))
    assert mae(t, p) == pytest.approx(0.75)
    # mean of t is 2.5, total sum of squares 2.25+0.25+0.25+2.25 = 5: R² = 1 - 3/5
    assert r2(t, p) == pytest.approx(0.4)
    # centred: t -> -1.5 -.5 .5 1.5, p (mean 3.25) -> -1.25 -1.25 .75 1.75;
    # cross products 1.875+.625+.375+2.625 = 5.5; sums of squares 5 and 6.75
    assert correlation(t, p) == pytest.approx(5.5 / math.sqrt(5 * 6.75))
    assert correlation(t, p) == pytest.approx(0.9467293, abs=1e-7)


def test_regression_scores_of_perfect_and_reversed_predictions():
    t = np.array([3.0, -1.0, 2.5, 7.0, 0.0])
    assert rmse(t, t) == 0.0 and mae(t, t) == 0.0 and r2(t, t) == 1.0
    assert correlation(t, t) == pytest.approx(1.0)
    # correlation ignores a positive affine change of the predictions, and flips with the sign
    assert correlation(t, 4 * t + 10) == pytest.approx(1.0)
    assert correlation(t, -t) == pytest.approx(-1.0)
    # predicting the mean of the truth explains nothing
    assert r2(t, np.full(5, t.mean())) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_scores_agree_with_scipy_and_sklearn(seed):
    from scipy.stats import pearsonr

    rng = np.random.RandomState(seed)
    t = rng.normal(20, 9, size=50)
    p = t + rng.normal(-3, 6, size=50)  # biased and noisy
    assert correlation(t, p) == pytest.approx(pearsonr(t, p)[0], rel=1e-12)
    assert rmse(t, p) == pytest.approx(math.sqrt(skm.mean_squared_error(t, p)), rel=1e-12)
    assert mae(t, p) == pytest.approx(skm.mean_absolute_error(t, p), rel=1e-12)
    assert r2(t, p) == pytest.approx(skm.r2_score(t, p), rel=1e-12)
    # R² is not symmetric; the others are
    assert r2(p, t) == pytest.approx(skm.r2_score(p, t), rel=1e-12)
    assert r2(p, t) != pytest.approx(r2(t, p))
    for f in (correlation, rmse, mae):
        assert f(p, t) == pytest.approx(f(t, p), rel=1e-12)
    assert rmse(t, p) >= mae(t, p)


def test_constant_vectors():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either
        # correlation is undefined when either side is constant: 0.0
        assert correlation([3.0, 3.0, 3.0], [1.0, 2.0, 3.0]) == 0.0
        assert correlation([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) == 0.0
        assert correlation([0.1, 0.1, 0.1], [0.1, 0.1, 0.1]) == 0.0  # mean 0.1 is not exact
        assert correlation([7.0], [2.0]) == 0.0  # a single instance is constant
        # R² with constant truth: 1 for perfect predictions, else 0 (scikit-learn's convention)
        assert r2([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]) == 1.0
        assert r2([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == 0.0
        assert r2([0.1, 0.1, 0.1], [0.2, 0.1, 0.1]) == 0.0
        assert r2([5.0], [5.0]) == 1.0 and r2([5.0], [4.0]) == 0.0
        # constant predictions of varying truth are an ordinary case for R², RMSE and MAE
        assert r2([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) == pytest.approx(1 - (16 + 9 + 4) / 2)
        assert rmse([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) == pytest.approx(math.sqrt(29 / 3))
    assert r2([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]) == skm.r2_score([2.0, 2.0, 2.0], [2.0, 2.0, 2.0])
    assert r2([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == skm.r2_score([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("func", REGRESSION_FUNCS)
def test_regression_bad_input(func):
    with pytest.raises(ValueError, match="different lengths \\(3 and 2\\)"):
        func([0.0, 1.0, 1.5], [0.0, 1.0])
    with pytest.raises(ValueError, match="empty"):
        func([], [])
    with pytest.raises(ValueError, match="1-D"):
        func([[0.0, 1.0]], [[0.0, 1.0]])
    with pytest.raises(ValueError, match="NaN"):
        func([0.0, 1.0], [np.nan, 1.0])
    with pytest.raises(ValueError, match="y_true.*NaN"):
        func([np.nan, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="infinite"):
        func([0.0, np.inf], [0.0, 1.0])
    with pytest.raises(ValueError, match="numbers"):
        func(["a", "b"], [0.0, 1.0])


def test_regression_metrics_are_registered():
    expected = {"correlation": (correlation, True, "Correlation"), "mae": (mae, False, "MAE"),
                "rmse": (rmse, False, "RMSE"), "r2": (r2, True, "R²")}
    assert [n for n, m in METRICS.items() if m.applies_to("regression")] == [
        "correlation", "mae", "rmse", "rae", "rrse", "r2", "fit-seconds", "predict-seconds",
        "model-size"]
    # mae and rmse are Weka's measures for both tasks: of the values for a regression
    assert METRICS["mae"].tasks == ("classification", "regression")
    for name, (func, greater, label) in expected.items():
        m = METRICS[name]
        assert (m.greater_is_better, m.display_name, m.internal) == (greater, label, False)
        assert m.score([1.0, 2.0, 4.0], truth=[1.0, 2.0, 3.0]) == pytest.approx(func([1.0, 2.0, 3.0],
                                                                                     [1.0, 2.0, 4.0]))
    # the external clustering indices are still the clustering ones only
    assert EXTERNAL_INDICES == ("nmi", "purity", "ari", "rand", "jaccard", "fm", "w10", "w01")


# --------------------------------------------------------------------------- accessors and the scorer
def test_metric_spec_and_default_metrics():
    from ensemblekit.errors import InputError
    from ensemblekit.metrics import UnknownMetricError, default_metrics, metric_spec

    assert metric_spec("nmi") is METRICS["nmi"]
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'nope'; known: accuracy, ari, auc"):
        metric_spec("nope")
    assert issubclass(UnknownMetricError, InputError)
    assert default_metrics("classification") == ("accuracy",)
    assert default_metrics("clustering") == ("nmi", "purity")
    assert default_metrics("regression", report=True) == ("correlation", "mae", "rmse", "rae", "rrse")
    # evaluate of a clusterer reports every external, then every internal index (issue 31)
    assert default_metrics("clustering", report=True) == (
        "nmi", "purity", "ari", "rand", "jaccard", "fm", "w10", "w01",
        "silhouette", "dunn", "connectivity", "davies-bouldin", "calinski-harabasz")
    with pytest.raises(InputError, match="'forecasting'"):
        default_metrics("forecasting", report=True)


def test_registry_functions_are_the_pure_scores_themselves():
    from ensemblekit.scores import classification, clustering, regression

    homes = {classification.__name__, clustering.__name__, regression.__name__}
    for name in ("accuracy", "nmi", "ari", "dunn", "silhouette", "correlation", "r2"):
        assert METRICS[name].func.__module__ in homes
    # the adapters hold the function objects, not names to look up
    assert METRICS["kappa"].func.args == (classification.kappa,)
    assert METRICS["mcc"].func.keywords == {"average": "weighted"}


def _classifier_pipeline():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X[::2], y[::2]), X, y


def test_score_model_predicts_what_the_metrics_need():
    from ensemblekit import registry
    from ensemblekit.metrics import score_model

    model, X, y = _classifier_pipeline()
    test, truth = X[1::2], y[1::2]
    prior = np.bincount(y[::2], minlength=3)
    proba = registry.class_probabilities(model, test, 3)
    predicted = np.argmax(proba, axis=1)
    names = ["accuracy", "auc", "rae"]
    values, got_predicted, got_proba = score_model(names, model, test, task="classification",
                                                   n_classes=3, truth=truth, prior=prior)
    np.testing.assert_array_equal(got_predicted, predicted)
    np.testing.assert_array_equal(got_proba, proba)
    assert values == {m: METRICS[m].score(predicted, truth=truth, proba=proba, prior=prior) for m in names}
    # labels alone: no probabilities unless asked for
    scored = score_model(["accuracy"], model, test, task="classification", n_classes=3, truth=truth)
    assert scored.proba is None and scored.values["accuracy"] == accuracy(truth, model.predict(test))
    kept = score_model(["accuracy"], model, test, task="classification", n_classes=3, truth=truth,
                       with_proba=True)
    np.testing.assert_array_equal(kept.proba, proba)
    # given predictions are scored as they are
    given = score_model(names, truth=truth, predicted=predicted, proba=proba, prior=prior)
    assert given.values == values
    with pytest.raises(ValueError, match="predictions, or a fitted model"):
        score_model(names, truth=truth)
    with pytest.raises(ValueError, match="number of declared classes"):
        score_model(["auc"], model, test, task="classification", truth=truth)


def test_score_model_of_a_clustering_reads_known_rows_and_the_clustered_space():
    from sklearn.cluster import KMeans
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ensemblekit.metrics import score_model
    from ensemblekit.scores import clustering as S

    _, X, y = _classifier_pipeline()
    model = make_pipeline(StandardScaler(), KMeans(3, n_init=3, random_state=0))
    labels = model.fit_predict(X)
    known = np.arange(X.shape[0]) % 5 != 0
    values = score_model(["nmi", "silhouette"], model, X, truth=y[known], known=known,
                         predicted=labels).values
    assert values["nmi"] == S.nmi(y[known], labels[known])
    assert values["silhouette"] == S.silhouette(model[:-1].transform(X), labels)
    assert values["silhouette"] != S.silhouette(X, labels)
    with pytest.raises(ValueError, match="compares with the classes"):
        score_model(["nmi"], predicted=labels)


# ----------------------------------------------------------------------------- declared ranges
def test_every_metric_declares_its_range():
    for name, spec in METRICS.items():
        low, high = spec.value_range
        assert low < high and (math.isfinite(low) or math.isfinite(high)), name
    assert METRICS["accuracy"].value_range == (0.0, 1.0) and METRICS["accuracy"].finite
    assert METRICS["rrse"].value_range == (0.0, math.inf) and not METRICS["rrse"].finite
    assert Metric("x", accuracy, "classification").value_range == (-math.inf, math.inf)


def test_value_problem_names_what_is_wrong():
    acc, auc, rrse, r2_ = (METRICS[m] for m in ("accuracy", "auc", "rrse", "r2"))
    for fine in (0.0, 0.5, 1.0, 1.0 + 1e-12, -1e-12):  # an ulp past an end is rounding
        assert acc.value_problem(fine) is None
    assert acc.value_problem(7.5) == "accuracy is 7.5, outside its range [0, 1]"
    assert acc.value_problem(-0.25) == "accuracy is -0.25, outside its range [0, 1]"
    assert acc.value_problem(1.000001) == "accuracy is 1.000001, outside its range [0, 1]"
    assert acc.value_problem(math.nan) == "accuracy is nan, but it is always a finite number"
    assert acc.value_problem(math.inf) == "accuracy is inf, but it is always a finite number"
    assert auc.value_problem(math.nan) is None  # a fold of one class: undefined
    assert auc.value_problem(math.inf) == "auc is inf, outside its range [0, 1]"
    assert rrse.value_problem(math.inf) is None and rrse.value_problem(math.nan) is None
    assert rrse.value_problem(-math.inf) == "rrse is -inf, outside its range [0, inf)"
    assert rrse.value_problem(-1.0) == "rrse is -1.0, outside its range [0, inf)"
    assert r2_.value_problem(-1e300) is None and r2_.value_problem(-math.inf) is None
    assert r2_.value_problem(2.0) == "r2 is 2.0, outside its range (-inf, 1]"


@pytest.mark.parametrize("seed", range(6))
def test_declared_ranges_hold_for_the_scores_computed(seed):
    # every score the code computes on random predictions (folds of one class and
    # constant targets included) is one its declaration admits
    rng = np.random.default_rng(seed)
    n, k = 12, 3
    truth = rng.integers(0, k, n) if seed else np.zeros(n, dtype=int)  # seed 0: one class
    proba = rng.dirichlet(np.ones(k), n)
    proba[: n // 2] = np.eye(k)[rng.integers(0, k, n // 2)]  # some certain (and wrong) rows
    predicted = proba.argmax(axis=1)
    counts = np.bincount(rng.integers(0, k, 30), minlength=k)
    # even seeds: a constant target, which the relative errors divide by 0 (inf or NaN)
    target = rng.normal(size=n) if seed % 2 else np.full(n, 5.0)
    values = rng.normal(size=n)
    X = rng.normal(size=(n, 2))
    labels = rng.integers(0, 3, n)
    for name, spec in METRICS.items():
        if spec.inputs in ("model", "time", "structure"):
            continue  # measures of the run, not of predictions: tests/experiment/test_measures.py
            # and test_stability.py
        if spec.task == "clustering":
            got = (spec.score(labels, X=X) if spec.internal else spec.score(labels, truth=truth))
        elif spec.applies_to("classification"):
            got = spec.score(predicted, truth=truth, proba=proba, prior=counts)
        else:
            got = spec.score(values, truth=target, prior=float(target.mean()))
        assert spec.value_problem(got) is None, (name, got)
