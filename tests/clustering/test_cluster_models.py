"""The clusterers' model classes (issue 28): rebuilt from their declared state, numpy only.

For every clusterer of the family, the declared state is stored and rebuilt as its
model class; the rebuilt model labels rows (and gives probabilities) byte for byte as
the fitted estimator does, and the estimator's numpy prediction is what the
scikit-learn objects it replaced gave (Gaussian mixtures, random-forest leaves). A
damaged state is refused with DamagedModelError naming the entry, and a restored
model predicts with neither scikit-learn, scipy nor numba loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ensemblekit.clustering import baselines_model as BM
from ensemblekit.clustering.baselines import (
    DIANA,
    PAM,
    GaussianMixtureBIC,
    RandomForestClustering,
)
from ensemblekit.clustering.consensus import CSPA, HGPA, MCLA, CoAssociationHAC
from ensemblekit.clustering.consensus_model import (
    CoAssociationHACModel,
    CSPAModel,
    HGPAModel,
    MCLAModel,
)
from ensemblekit.clustering.inner_kmeans import InnerEnsembleKMeans
from ensemblekit.clustering.inner_kmeans_model import InnerEnsembleKMeansModel
from ensemblekit.clustering.kmeans import KMeans, apply_scaling
from ensemblekit.clustering.kmeans_model import KMeansModel
from ensemblekit.errors import InputError
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip
from ektesting.support import load_numeric

_DATA: dict = {}


def _data(name):
    """Training rows and other rows of a real data set (the second half shifted and scaled)."""
    if name not in _DATA:
        X, _ = load_numeric(f"{name}.arff")
        X = X[:, ~np.isnan(X).any(axis=0)]
        rng = np.random.RandomState(0)
        other = X[rng.permutation(X.shape[0])] * rng.uniform(0.8, 1.25, X.shape) + \
            rng.normal(scale=0.1, size=X.shape)
        _DATA[name] = (X, np.vstack([X, other]))
    return _DATA[name]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def _kahypar():
    try:
        import kahypar  # noqa: F401
    except ImportError:
        return False
    return True


# (estimator, model class, data set): every family member, with the settings that change
# what it stores
CASES = [
    (KMeans(3, random_state=0), KMeansModel, "iris"),
    (KMeans(4, scale="minmax", random_state=1), KMeansModel, "wine"),
    (InnerEnsembleKMeans(3, n_estimators=5, random_state=0), InnerEnsembleKMeansModel, "glass"),
    (InnerEnsembleKMeans(3, n_estimators=4, bootstrap_features=True, resample="once",
                         scale="zscore", random_state=2), InnerEnsembleKMeansModel, "wine"),
    (CSPA(3, n_estimators=5, random_state=0), CSPAModel, "iris"),
    (CSPA(3, n_estimators=5, partitioner="spectral", random_state=0), CSPAModel, "iris"),
    (MCLA(4, n_estimators=5, scale="minmax", random_state=0), MCLAModel, "glass"),
    (MCLA(3, n_estimators=5, partitioner="spectral", random_state=0), MCLAModel, "wine"),
    *((CoAssociationHAC(3, n_estimators=6, linkage=link, random_state=0), CoAssociationHACModel,
       "iris") for link in ("single", "average", "complete")),
    (PAM(3, random_state=0), BM.PAMModel, "iris"),
    (PAM(4, scale="zscore"), BM.PAMModel, "glass"),
    *((GaussianMixtureBIC(3, covariance_type=kind, random_state=0), BM.GaussianMixtureModel,
       data) for kind in ("auto", "full", "tied", "diag", "spherical")
      for data in ("iris", "wine")),
    (GaussianMixtureBIC(4, select_k=True, scale="minmax", random_state=0),
     BM.GaussianMixtureModel, "glass"),
    (RandomForestClustering(3, n_estimators=25, random_state=0), BM.RandomForestClusteringModel,
     "iris"),
    (RandomForestClustering(4, n_estimators=15, min_samples_leaf=2, random_state=1),
     BM.RandomForestClusteringModel, "glass"),
]
if _kahypar():
    CASES.append((HGPA(3, n_estimators=5, random_state=0), HGPAModel, "iris"))

_FITTED: dict = {}


def _fitted(i):
    if i not in _FITTED:
        est, model_cls, data = CASES[i]
        _FITTED[i] = est.fit(_data(data)[0])
    return _FITTED[i]


def _id(case):
    est = case[0]
    params = est.get_params(deep=False)
    extra = [f"{k}={params[k]}" for k in ("covariance_type", "linkage", "partitioner", "scale",
                                          "select_k", "resample") if params.get(k) not in
             (None, False, "none", "auto", "each-iteration")]
    return "-".join([type(est).__name__, case[2], *extra])


@pytest.mark.parametrize("i", range(len(CASES)), ids=[_id(c) for c in CASES])
def test_the_rebuilt_model_predicts_byte_for_byte_as_the_estimator(i):
    est = _fitted(i)
    model_cls, data = CASES[i][1], CASES[i][2]
    model = roundtrip(est, model_cls)
    assert type(model) is model_cls
    X = _data(data)[1]
    _same(model.predict(X), est.predict(X))
    _same(model.labels_, est.labels_)
    if hasattr(est, "predict_proba"):
        _same(model.predict_proba(X), est.predict_proba(X))
    if hasattr(est, "cluster_centers_"):
        _same(model.cluster_centers_, est.cluster_centers_)
    if hasattr(model, "score"):
        _same(model.score(X), est.score(X))


def test_a_rebuilt_model_refuses_rows_it_cannot_label():
    est = _fitted(0)
    model = roundtrip(est, KMeansModel)
    X = _data("iris")[1][:5].copy()
    X[2, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        model.predict(X)
    with pytest.raises(ValueError, match="NaN"):
        est.predict(X)
    with pytest.raises(InputError, match="features"):
        model.predict(X[:, :3])


def test_diana_has_no_prediction_but_its_state_round_trips():
    X = _data("iris")[0]
    est = DIANA(n_clusters=4, scale="minmax").fit(X)
    model = roundtrip(est, BM.DIANAModel)
    _same(model.labels_, est.labels_)
    _same(model.split_heights_, est.split_heights_)
    assert not hasattr(model, "predict")
    single = roundtrip(DIANA(n_clusters=1).fit(X), BM.DIANAModel)
    assert single.split_heights_.shape == (0,)


# --------------------------------------------------------------------------- as before
@pytest.mark.parametrize("i", [i for i, c in enumerate(CASES) if isinstance(c[0],
                                                                             GaussianMixtureBIC)])
def test_the_gaussian_mixture_predicts_as_the_scikit_learn_mixture_it_was(i):
    est = _fitted(i)
    X = _data(CASES[i][2])[1]
    Xs = apply_scaling(X, est.scaling_offset_, est.scaling_factor_)
    _same(est.predict(X), np.asarray(est.mixture_.predict(Xs), dtype=np.intp))
    _same(est.predict_proba(X), est.mixture_.predict_proba(Xs))
    _same(BM.gaussian_log_prob(Xs, est.means_, est._factors(), est.covariance_type_),
          est.mixture_._estimate_log_prob(Xs))


def test_log_sum_exp_is_scikit_learns():
    from sklearn.utils._array_api import _logsumexp

    rng = np.random.RandomState(0)
    a = rng.normal(scale=300, size=(200, 5))
    a[0] = -np.inf
    a[1, :3] = a[1, 3]  # ties at the maximum
    a[2, 1] = np.inf
    with np.errstate(invalid="ignore"):
        _same(BM.log_sum_exp(a), _logsumexp(a, axis=1))


@pytest.mark.parametrize("i", [i for i, c in enumerate(CASES)
                               if isinstance(c[0], RandomForestClustering)])
def test_the_forest_walk_finds_the_leaves_scikit_learn_finds(i):
    est = _fitted(i)
    X = _data(CASES[i][2])[1]
    # rows on a threshold (float32 rounding decides the side), and far outside the data
    tree = est.forest_.estimators_[0].tree_
    X = np.vstack([X, np.full((1, X.shape[1]), tree.threshold[0]), X[:3] * 1e6, -X[:3] * 1e6])
    leaves = BM.forest_leaves(X, est.tree_left_, est.tree_right_, est.tree_feature_,
                              est.tree_threshold_)
    _same(leaves, est.forest_.apply(X))
    # the prediction of before: the medoid sharing most leaves, through forest_.apply
    shared = (est.forest_.apply(X)[:, None, :] == est.medoid_leaves_[None]).sum(axis=2)
    _same(est.predict(X), est.labels_[est.medoid_indices_][shared.argmax(axis=1)])


# --------------------------------------------------------------------------- damaged state
def _case(cls, **params):
    for i, (est, _, _) in enumerate(CASES):
        if type(est) is cls and all(est.get_params()[k] == v for k, v in params.items()):
            return i
    raise LookupError(cls)


def _set(name, change):
    def tamper(params, scalars, arrays):
        if name in arrays:
            arrays[name] = change(arrays[name])
        else:
            scalars[name] = change(scalars[name])
    return tamper


def _drop(name):
    def tamper(params, scalars, arrays):
        (arrays if name in arrays else scalars).pop(name)
    return tamper


def _swap_child(tree=0):
    """Tree ``tree``'s first split sends its right child back to the root (a cycle)."""
    def tamper(params, scalars, arrays):
        right = arrays[f"tree_right_/{tree}"].copy()
        right[0] = 0
        arrays[f"tree_right_/{tree}"] = right
    return tamper


def _second_parent(params, scalars, arrays):
    left, right = arrays["tree_left_/1"].copy(), arrays["tree_right_/1"].copy()
    inner = np.flatnonzero(left != -1)
    a, b = inner[0], inner[1]
    right[b] = right[a]  # node right[a] now has two parents
    arrays["tree_left_/1"], arrays["tree_right_/1"] = left, right


def _leaf_split(params, scalars, arrays):
    left = arrays["tree_left_/0"].copy()
    left[0] = -1  # the root keeps its right child only
    arrays["tree_left_/0"] = left


def _non_leaf_medoid(params, scalars, arrays):
    leaves = arrays["medoid_leaves_"].copy()
    leaves[0, 0] = 0  # the root of tree 0 is not a leaf
    arrays["medoid_leaves_"] = leaves


def _one_tree_less(params, scalars, arrays):
    for name in ("tree_left_", "tree_right_", "tree_feature_", "tree_threshold_"):
        last = scalars[name] - 1
        scalars[name] = last
        arrays.pop(f"{name}/{last}")


def _negative_factor(params, scalars, arrays):
    factors = arrays["precision_factors_"].copy()
    factors[0] = -factors[0]
    arrays["precision_factors_"] = factors


def _empty_cluster(params, scalars, arrays):
    labels = arrays["labels_"].copy()
    labels[labels == labels.max()] = 0
    arrays["labels_"] = labels


def _both_centres(change):
    def tamper(params, scalars, arrays):
        for name in ("scaled_centers_", "cluster_centers_"):
            arrays[name] = change(arrays[name])
    return tamper


def _nan_at(name, where=0):
    def change(a):
        a = a.astype(np.float64)
        a.flat[where] = np.nan
        return a
    return _set(name, change)


DAMAGE = [
    (_case(KMeans), _set("labels_", lambda lab: lab + 10**9), "labels_"),
    (_case(KMeans), _set("labels_", lambda lab: lab.astype(np.float64)), "labels_: has dtype"),
    (_case(KMeans), _set("scaled_centers_", lambda c: c[:, :-1].copy()), "scaled_centers_"),
    (_case(KMeans), _set("scaled_centers_", lambda c: np.vstack([c, c[:1]])), "scaled_centers_"),
    # a centre no fit leaves, whose squared distances overflow to NaN labels (issue 29)
    (_case(KMeans), _set("scaled_centers_", lambda c: np.where(c > 0, 1e308, c)),
     "scaled_centers_: holds 1e"),
    (_case(KMeans), _set("scaling_factor_", lambda f: f * 0), "scaling_factor_"),
    (_case(KMeans), _nan_at("cluster_centers_"), "cluster_centers_: holds NaN"),
    (_case(KMeans), _drop("scaled_centers_"), "scaled_centers_: missing"),
    (_case(KMeans), _drop("n_features_in_"), "n_features_in_: missing"),
    (_case(KMeans), _set("n_features_in_", lambda n: n + 1), "scaling_offset_"),
    (_case(KMeans), _set("inertia_", lambda v: -1.0), "inertia_"),
    (_case(InnerEnsembleKMeans), _set("n_subset_features_", lambda n: 10**6), "n_subset_features_"),
    (_case(CSPA), _both_centres(lambda c: np.vstack([c] * 2)), "holds 6 centroids for n_clusters = 3"),
    (_case(CSPA), _set("scaled_centers_", lambda c: np.vstack([c] * 2)), "cluster_centers_: has shape"),
    (_case(CSPA), _empty_cluster, "labels_ leaves a consensus cluster"),
    (_case(CSPA), _set("partitioner_", lambda p: "hmetis"), "partitioner_"),
    (_case(MCLA), _set("labels_", lambda lab: lab[:, None].copy()), "labels_: has 2 dimensions"),
    (_case(CoAssociationHAC), _nan_at("scaling_offset_", 1), "scaling_offset_"),
    (_case(PAM), _set("medoid_indices_", lambda m: m + 1000), "medoid_indices_"),
    (_case(PAM), _set("medoid_indices_", lambda m: np.repeat(m[:1], m.size)), "repeats a row"),
    (_case(GaussianMixtureBIC, covariance_type="full"),
     _set("precision_factors_", lambda f: f[:-1].copy()), "precision_factors_"),
    (_case(GaussianMixtureBIC, covariance_type="diag"), _negative_factor, "precision_factors_"),
    (_case(GaussianMixtureBIC, covariance_type="tied"),
     _set("covariance_type_", lambda c: "VVV"), "covariance_type_"),
    (_case(GaussianMixtureBIC, covariance_type="spherical"),
     _set("covariance_type_", lambda c: "full"), "precision_factors_"),
    (_case(GaussianMixtureBIC, covariance_type="full"), _nan_at("means_", 3), "means_: holds NaN"),
    (_case(GaussianMixtureBIC, covariance_type="full"),
     _set("weights_", lambda w: w + 1), "weights_"),
    (_case(GaussianMixtureBIC, covariance_type="full"),
     _set("n_components_", lambda k: 10**6), "n_components_"),
    (_case(RandomForestClustering), _swap_child(), "tree 0: a child does not come after"),
    (_case(RandomForestClustering), _second_parent, "tree 1:"),
    (_case(RandomForestClustering), _leaf_split, "tree 0: a node has one child"),
    (_case(RandomForestClustering), _set("tree_left_/2", lambda a: a + 10**6), "tree_left_.2"),
    (_case(RandomForestClustering), _set("tree_feature_/0", lambda a: a + 50), "tree_feature_.0"),
    (_case(RandomForestClustering), _set("tree_threshold_/0", lambda a: a[:-1].copy()),
     "tree 0: its node arrays have different lengths"),
    (_case(RandomForestClustering), _nan_at("tree_threshold_/0"), "tree_threshold_.0"),
    (_case(RandomForestClustering), _non_leaf_medoid, "medoid_leaves_"),
    (_case(RandomForestClustering), _one_tree_less, "tree_left_: has 24 entries"),
    (_case(RandomForestClustering), _set("medoid_indices_", lambda m: m - 10**6),
     "medoid_indices_"),
]


@pytest.mark.parametrize("i, tamper, message", DAMAGE,
                         ids=[f"{_id(CASES[d[0]])}-{d[2][:30]}" for d in DAMAGE])
def test_a_damaged_state_is_refused_naming_the_entry(i, tamper, message):
    with pytest.raises(DamagedModelError, match=message.replace(".", r"\.")):
        roundtrip(_fitted(i), CASES[i][1], tamper=tamper)


def test_diana_refuses_heights_that_do_not_match_its_splits():
    est = DIANA(n_clusters=3).fit(_data("iris")[0])
    with pytest.raises(DamagedModelError, match="split_heights_ holds 7 heights"):
        roundtrip(est, BM.DIANAModel, tamper=_set("split_heights_", lambda h: np.zeros(7)))
    with pytest.raises(DamagedModelError, match="split_heights_ is not non-increasing"):
        roundtrip(est, BM.DIANAModel, tamper=_set("split_heights_", lambda h: h[::-1].copy()))
    with pytest.raises(DamagedModelError, match="labels_"):
        roundtrip(est, BM.DIANAModel, tamper=_set("labels_", lambda lab: lab + 3))


# --------------------------------------------------------------------------- numpy alone
_NUMPY_ALONE = """
import json, sys
import numpy as np
from ensemblekit import state
from ensemblekit.clustering import (baselines_model, consensus_model, inner_kmeans_model,
                                    kmeans_model)

classes = {c.__name__: c for m in (baselines_model, consensus_model, inner_kmeans_model,
                                    kmeans_model) for c in vars(m).values() if isinstance(c, type)}
X = np.asarray(json.loads(sys.argv[2]))
out = []
for name, params, scalars, arrays in json.loads(sys.argv[1]):
    arrays = {"model/" + k: np.asarray(v, dtype=dtype) for k, (v, dtype) in arrays.items()}
    model = state.restore(classes[name], params, scalars, arrays)
    out.append(model.predict(X).tolist() if hasattr(model, "predict") else model.labels_.tolist())
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"sklearn", "scipy", "numba", "skops"})
print(json.dumps({"out": out, "heavy": heavy}))
"""


def test_restored_models_predict_with_numpy_alone():
    from ektesting.state_roundtrip import stored

    X = _data("iris")[1][::7]
    cases, want = [], []
    for i, (_, model_cls, data) in enumerate(CASES):
        if data != "iris":
            continue
        params, scalars, arrays = stored(_fitted(i))
        params = {k: v for k, v in params.items() if k != "memory"}
        cases.append((model_cls.__name__, params, scalars,
                      {k: (v.tolist(), str(v.dtype)) for k, v in arrays.items()}))
        want.append(_fitted(i).predict(X).tolist())
    diana = DIANA(3).fit(_data("iris")[0])
    params, scalars, arrays = stored(diana)
    cases.append(("DIANAModel", params, scalars,
                  {k: (v.tolist(), str(v.dtype)) for k, v in arrays.items()}))
    want.append(diana.labels_.tolist())
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_NUMPY_ALONE), json.dumps(cases),
                           json.dumps(X.tolist())], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["heavy"] == []
    assert report["out"] == want
