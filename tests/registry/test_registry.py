
import numpy as np
import pytest

from ensemblekit import registry
from ensemblekit.registry import Param, ParameterError

from ektesting.support import data_path


def test_every_entry_has_a_known_task_and_unique_params():
    for spec in registry.ALGORITHMS.values():
        assert spec.task in (registry.CLASSIFICATION, registry.CLUSTERING, registry.REGRESSION)
        assert len(set(spec.param_names)) == len(spec.param_names)
        assert spec.preprocessing
        for p in spec.params:
            # every default must pass its own check
            assert p.check(p.default) == p.default


def test_resolve_parses_and_merges_defaults():
    spec = registry.get("iekm")
    params = spec.resolve({"n_estimators": "25", "bootstrap_features": "true", "max_features": "0.3"})
    assert params["n_estimators"] == 25
    assert params["bootstrap_features"] is True
    assert params["max_features"] == pytest.approx(0.3)
    assert params["init"] == "random"


def test_unknown_key_lists_the_valid_keys():
    with pytest.raises(ParameterError, match="unknown parameter 'n_trees'.*valid keys: n_clusters"):
        registry.get("kmeans").resolve({"n_trees": "3"})


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("max_features", "1.5", "expected float >= 0.1 and <= 1"),
        ("max_features", "abc", "expected float"),
        ("n_estimators", "0", "expected int >= 1"),
        ("n_estimators", "2.5", "expected int"),
        ("init", "forgy", "expected one of random, k-means\\+\\+"),
        ("bootstrap_features", "maybe", "expected true or false"),
        ("max_features", "nan", "must be finite"),
    ],
)
def test_bad_values_are_refused_with_a_reason(key, value, message):
    with pytest.raises(ParameterError, match=message):
        registry.get("iekm").resolve({key: value})


def test_none_is_accepted_only_where_declared():
    assert registry.get("cart-entropy").resolve({"max_depth": "none"})["max_depth"] is None
    assert registry.get("cart-entropy").resolve({"max_depth": "4"})["max_depth"] == 4
    with pytest.raises(ParameterError):
        registry.get("knn").resolve({"n_neighbors": "none"})


def test_unknown_algorithm_lists_known_names():
    with pytest.raises(registry.UnknownAlgorithmError,
                       match="unknown algorithm 'kmedoids'; known: bagged-k2, bagging, c45"):
        registry.get("kmedoids")  # nothing close enough (difflib ratio 0.57): no hint
    with pytest.raises(registry.UnknownAlgorithmError,
                       match=r"unknown algorithm 'kmean' \(did you mean 'kmeans'\?\); known: "
                             "bagged-k2, bagging, c45"):
        registry.get("kmean")


def test_algorithm_names_ignore_case_and_suggest_the_closest():
    assert registry.canonical_name("J48") == "c45"
    assert registry.canonical_name("KNN") == "knn"
    assert registry.get("Lazy-Bagging").name == "lazy-bagging"
    assert registry.canonical_name("c4.5") == "c4.5"  # not a name: left for get() to refuse
    with pytest.raises(registry.UnknownAlgorithmError, match=r"'c4\.5' \(did you mean 'c45'\?\)"):
        registry.get("c4.5")


def test_unknown_parameter_suggests_the_closest_key():
    with pytest.raises(ParameterError, match=r"unknown parameter 'min_sample_leaf' for c45 "
                                             r"\(did you mean 'min_samples_leaf'\?\); valid keys"):
        registry.get("c45").resolve({"min_sample_leaf": "3"})


def test_parse_settings():
    assert registry.parse_settings(["a=1", "b=x=y", "a=2"]) == {"a": "2", "b": "x=y"}
    with pytest.raises(ParameterError, match="key=value"):
        registry.parse_settings(["novalue"])


def test_param_describe_range():
    assert Param("x", "int", 1, "", low=1).describe_range() == "int >= 1"
    assert Param("x", "float", 0.5, "", low=0.1, high=1.0).describe_range() == "float >= 0.1 and <= 1"


def test_registry_import_does_not_import_sklearn():
    import subprocess
    import sys

    code = "import sys, ensemblekit.registry, ensemblekit.cli; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", sorted(n for n, s in registry.ALGORITHMS.items()
                                        if s.task == registry.CLASSIFICATION))
def test_classifiers_predict_the_first_most_probable_class(name):
    # 'predict --proba' takes the labels from predict_proba (one pass over the rows),
    # which is right only if every classifier's predict is that arg-max
    from ensemblekit.data import load_dataset

    ds = load_dataset(data_path("labor.arff"))
    keep = ds.y >= 0
    X, y = ds.X[keep], ds.y[keep]
    model = registry.make_estimator(name, ds.schema, {}, 0).fit(X, y)
    proba = model.predict_proba(X)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize("name", ["c45", "knn", "bagging", "kmeans"])
def test_an_estimator_factory_builds_what_make_estimator_builds(name):
    # the runner builds one estimator per fold from a factory: same parameters, the
    # seed of the call, lists of its own; bare only drops a pass-through first step
    from sklearn.pipeline import Pipeline

    from ensemblekit.data import load_dataset

    ds = load_dataset(data_path("labor.arff"))
    spec = registry.get(name)
    make = registry.estimator_factory(name, ds.schema, {})
    for seed in (0, 7):
        built, direct = make(seed), registry.make_estimator(name, ds.schema, {}, seed)
        assert isinstance(built, Pipeline)
        assert repr(built.get_params()) == repr(direct.get_params())
    first, second = make(1)[-1], make(1)[-1]
    for key, value in first.get_params(deep=False).items():
        if isinstance(value, list):
            assert value is not second.get_params(deep=False)[key]
    bare = registry.estimator_factory(name, ds.schema, {}, bare=True)(3)
    direct = registry.make_estimator(name, ds.schema, {}, 3)[-1]
    if spec.encode == "codes" and hasattr(spec.model_class(), "fit_coded"):
        # C4.5: the model class a model file rebuilds, with the estimator's arguments;
        # fitted on coded rows, it grows the estimator's tree
        assert type(bare) is spec.model_class() and not isinstance(bare, Pipeline)
        assert all(getattr(bare, k) == v for k, v in direct.get_params(deep=False).items())
        X, y = ds.X, np.asarray(ds.y, dtype=np.int64)
        known = y >= 0
        bare.fit_coded(X[known], y[known])
        direct.fit(X[known], y[known])
        np.testing.assert_array_equal(bare.predict_proba(X), direct.predict_proba(X))
    elif spec.encode == "codes":
        assert not isinstance(bare, Pipeline)
        assert repr(bare.get_params()) == repr(direct.get_params())
    else:
        assert isinstance(bare, Pipeline)


def test_an_estimator_factory_refuses_a_bad_value_when_made():
    from ensemblekit.data import load_dataset

    ds = load_dataset(data_path("labor.arff"))
    with pytest.raises(ParameterError, match="n_neighbors"):
        registry.estimator_factory("knn", ds.schema, {"n_neighbors": 0})
