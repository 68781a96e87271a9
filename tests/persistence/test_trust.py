"""The exact-type allow-list of model files (issue 16, "Trust exact types, never packages")."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from ensemblekit import model_types, registry, trust
from ensemblekit.persistence import _nodes, _skops_io

from ektesting.support import data_path, fit_registered

ROOT = Path(__file__).resolve().parents[2]
# mixed numeric and nominal attributes with missing values: every preprocessing path is stored
LABOR = data_path("labor.arff")
HOUSING = ROOT / "sample_data" / "housing.arff"
IRIS = ROOT / "sample_data" / "iris.arff"


def _variants(spec):
    """Default parameters, then each other value of every choice and boolean parameter."""
    yield {}
    for p in spec.params:
        if p.kind == "choice":
            yield from ({p.name: c} for c in p.choices if c != p.default)
        elif p.kind == "bool":
            yield {p.name: "false" if p.default else "true"}


def _small(name, spec):
    """Ensemble sizes that keep the fit quick (the sizes of test_trust_estimators' cases).

    The types a model stores depend on its settings, not on how many members it has; the full
    registry defaults (200 ISLE trees with 10-fold inner CV, 500 forest trees, 50 ISCA stages)
    stored the same node types, case for case, when this was changed (issue 27).
    """
    names = {p.name for p in spec.params}
    if name in ("isca", "ss-isca"):
        return {"n_stages": "5"}
    if "cv" in names:  # the ISLE family
        return {"n_estimators": "5", "cv": "3"}
    if name in ("random-forest", "rf-cluster"):
        return {"n_estimators": "20"}
    return {"n_estimators": "3"} if "n_estimators" in names else {}


def _fitted(name, settings):
    spec = registry.get(name)
    return fit_registered(name, spec.resolve({**_small(name, spec), **settings}))


CASES = [(name, settings) for name, spec in registry.ALGORITHMS.items() if spec.missing_requirement() is None
         for settings in _variants(spec)]


# every setting of every algorithm (about 130 fits); the fast subset keeps test_trust_estimators'
# round trip of every algorithm
@pytest.mark.slow
@pytest.mark.parametrize("name, settings", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_every_type_a_fitted_model_stores_is_allowed_and_its_state_passes(name, settings):
    model = _fitted(name, settings)
    sio = _skops_io()
    payload = sio.dumps(model)
    with zipfile.ZipFile(io.BytesIO(payload)) as z:
        schema = json.loads(z.read("schema.json"))
    assert model_types.refused_nodes(_nodes(schema)) == []
    # what skops itself calls untrusted is inside the list (or a plain node)
    plain = {f"{m}.{c}" for m, c, _ in model_types.PLAIN_NODES}
    assert set(sio.get_untrusted_types(data=payload)) <= model_types.ALLOWED_TYPES | plain
    model_types.check_model(model)
    model_types.check_model(sio.loads(payload, trusted=sio.get_untrusted_types(data=payload)))


def _class(full_name):
    import importlib

    module, _, qualname = full_name.rpartition(".")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _reviewed_rebuild_hooks():
    """The ``__setstate__`` functions read and found to only store what they are given."""
    from sklearn.base import BaseEstimator
    from sklearn.metrics._dist_metrics import DistanceMetric64
    from sklearn.neighbors import KDTree
    from sklearn.tree._tree import Tree

    return {BaseEstimator.__setstate__, Tree.__setstate__, KDTree.__setstate__,
            DistanceMetric64.__setstate__}


@pytest.mark.parametrize("full_name", sorted(model_types.ALLOWED_TYPES))
def test_no_allowed_type_runs_code_when_rebuilt(full_name):
    import scipy.stats
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.preprocessing import FunctionTransformer

    cls = _class(full_name)
    assert isinstance(cls, type), f"{full_name} is not a class"
    assert f"{cls.__module__}.{cls.__qualname__}" == full_name  # no alias or re-export
    # scipy distributions exec text from their state; these call a stored callable
    forbidden = (scipy.stats.rv_continuous, scipy.stats.rv_discrete,
                 scipy.stats._distn_infrastructure.rv_frozen, FunctionTransformer,
                 TransformedTargetRegressor)
    assert not issubclass(cls, forbidden)
    hook = getattr(cls, "__setstate__", None)
    if hook is not None and getattr(hook, "__objclass__", None) is not object:
        assert hook in _reviewed_rebuild_hooks() or full_name == "scipy.sparse._csc.csc_matrix", (
            f"{full_name} has an unreviewed __setstate__")


def test_no_callable_can_be_described():
    # Functions, bound methods, partials and reduce calls have no loader in the
    # list, so no object can be handed a callable from the file (a metric=,
    # func= or score_func= parameter); the only type references are number
    # and text types, which compute nothing when called on arrays.
    loaders = {loader for _, _, loader in model_types.PLAIN_NODES}
    loaders |= {loader for loader, *_ in model_types.type_checks().values()}
    assert loaders.isdisjoint({"FunctionNode", "MethodNode", "PartialNode", "ReduceNode", "OperatorFuncNode"})
    types = {(m, c) for m, c, loader in model_types.PLAIN_NODES if loader == "TypeNode"}
    assert all(m in ("builtins", "numpy") and (c in ("str", "int", "float", "bool") or m == "numpy")
               for m, c in types)


@pytest.mark.parametrize("node", [
    ("sklearn.preprocessing._function_transformer", "FunctionTransformer", "ObjectNode"),
    ("sklearn.linear_model._logistic", "LogisticRegression", "ObjectNode"),  # a package trusted before
    ("scipy.stats._continuous_distns", "norm_gen", "ObjectNode"),
    ("numpy.random.mtrand", "RandomState", "RandomStateNode"),
    ("builtins", "eval", "FunctionNode"),
    ("os", "system", "FunctionNode"),
    ("functools", "partial", "PartialNode"),
    ("operator", "methodcaller", "ReduceNode"),
    ("numpy", "load", "FunctionNode"),
    ("builtins", "object", "TypeNode"),
    ("sklearn.tree._tree", "Tree", "ObjectNode"),  # an allowed class through another loader
    ("sklearn.pipeline", "Pipeline", "ReduceNode"),
])
def test_anything_else_is_refused(node):
    assert model_types.refused_nodes([node]) != []


def test_template_estimators_are_not_checked_but_fitted_ones_are():
    model = _fitted("bagging", {})
    model_types.check_model(model)
    tree = model.named_steps["model"].estimators_[0]
    tree.n_features_in_ = 10**6  # a fitted member that disagrees with its tree
    with pytest.raises(trust.DamagedModelError, match=r"estimators_\[0\]"):
        model_types.check_model(model)
