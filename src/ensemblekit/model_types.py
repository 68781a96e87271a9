"""Which types a model file may hold, and the walk that checks every object rebuilt from one.

A model file is untrusted input. :mod:`ensemblekit.persistence` reads it in
two steps, and this module states the rules of both:

1. **Before anything is built**, every object the skops payload describes is
   named by its module, class and skops loader. :func:`refused_nodes` accepts
   only the exact triples in :data:`ALLOWED_TYPES` (the classes our fitted
   estimators store, each with its loader) and :data:`PLAIN_NODES` (Python
   containers and primitives, numpy arrays, scalars and dtypes, and type
   references to a few number and text types). A package is never trusted as
   a whole: a class that merely lives in scikit-learn, scipy or numpy is
   refused unless it is listed here.

2. **After the objects are built, before any of them runs**,
   :func:`check_model` visits every object reachable from the model and runs
   the check stated for its exact type (see :mod:`ensemblekit.trust`).

The allowed classes are the scikit-learn parts :mod:`ensemblekit.trust`
checks, the estimator class of every registry entry, and the helper classes
those declare in ``_state_parts``; each of ours is checked by the
``_check_fitted_state`` its class declares beside its ``fit``.

Every class in :data:`ALLOWED_TYPES` has been read for what rebuilding it
runs: skops creates it with ``cls.__new__`` and hands its attributes to
``__setstate__`` (scikit-learn's ``BaseEstimator.__setstate__`` only stores
them), or, for the tree and the distance metric, calls the class itself with
numbers and arrays. None of them calls a function, imports a module or
evaluates text taken from the file. ``tests/persistence/test_trust.py`` checks both
properties: that every type our fitted models store is listed, and that no
listed type defines a rebuild hook outside that reviewed set.
"""

from __future__ import annotations

import numpy as np

from ensemblekit import registry
from ensemblekit.trust import (
    CheckContext,
    Checker,
    check_plain_state,
    declared_check,
    declared_parts,
    fitted_only,
    full_name,
    sklearn_part_checks,
)

__all__ = [
    "ALLOWED_TYPES",
    "PLAIN_NODES",
    "check_model",
    "refused_nodes",
    "type_checks",
]


# --------------------------------------------------------------------------- allowed nodes
#: (module, class, skops loader) of the plain values a payload may describe.
PLAIN_NODES = frozenset(
    {
        ("builtins", "dict", "DictNode"),
        ("builtins", "list", "ListNode"),
        ("builtins", "tuple", "TupleNode"),
        ("builtins", "slice", "SliceNode"),
        *(("builtins", name, "JsonNode") for name in ("str", "int", "float", "bool", "NoneType")),
        *(("builtins", name, "TypeNode") for name in ("str", "int", "float", "bool")),
        ("numpy", "ndarray", "NdArrayNode"),
        ("numpy", "dtype", "DTypeNode"),
        *(("numpy", name, loader)
          for name in ("float64", "float32", "int64", "int32", "intp", "uint8", "bool_", "bool")
          for loader in ("NdArrayNode", "TypeNode")),
    }
)


_CACHE: dict[str, tuple[str, Checker]] = {}


def type_checks() -> dict[str, tuple]:
    """Every allowed class by exact name, with its skops loader and its state check.

    Returns
    -------
    dict
        ``"module.Class"`` -> ``(skops loader, check)``, or ``(skops loader,
        check, parameters holding fitted objects)`` (see
        :func:`ensemblekit.trust.sklearn_part_checks`). Built from the registry
        as it is now, so an entry a program registers (or removes) counts at once.
    """
    if not _CACHE:
        _CACHE.update(sklearn_part_checks())
    table = dict(_CACHE)
    for cls in _own_classes():
        name = full_name(cls)
        check = declared_check(cls)
        if check is not None:
            table[name] = ("ObjectNode", check)
        elif name not in table:
            table[name] = ("ObjectNode", fitted_only(check_plain_state))
    return table


def _own_classes() -> list[type]:
    """The estimator class of every registry entry, and the classes their state holds.

    A registry entry is code that ships with the package (or that a program
    registers in its own process), never something a model file can add, so the
    class it names is as trusted as our own; so are the helper classes it lists
    in ``_state_parts`` (:func:`~ensemblekit.trust.declared_parts`), and theirs
    in turn. :func:`type_checks` allows each as an exact type with the check it
    declares (:func:`~ensemblekit.trust.declared_check`), or, when it declares
    none, the scikit-learn check of its class, else
    :func:`~ensemblekit.trust.check_plain_state`. The classes ensemblekit ships
    all declare their own (``tests/test_extension.py`` asserts it).
    """
    found: dict[str, type] = {}
    stack = [spec.estimator_class() for spec in registry.ALGORITHMS.values()]
    while stack:
        cls = stack.pop()
        if full_name(cls) not in found:
            found[full_name(cls)] = cls
            stack.extend(declared_parts(cls))
    return list(found.values())


def __getattr__(name):  # ALLOWED_TYPES is built on first use: it imports scikit-learn
    if name == "ALLOWED_TYPES":
        return frozenset(type_checks())
    raise AttributeError(name)


def refused_nodes(nodes) -> list[str]:
    """The object descriptions of a payload that are not allowed, as readable names.

    Parameters
    ----------
    nodes : iterable of (str, str, str)
        ``(module, class, loader)`` of every object a skops payload describes.

    Returns
    -------
    list of str
        ``"module.Class"`` (with the loader when only the loader is wrong) for
        every triple that is neither in :data:`PLAIN_NODES` nor an allowed
        class with its loader; empty when everything is allowed.
    """
    allowed = type_checks()
    refused = []
    for module, cls, loader in sorted(set(nodes)):
        if (module, cls, loader) in PLAIN_NODES:
            continue
        entry = allowed.get(f"{module}.{cls}")
        if entry is None:
            refused.append(f"{module}.{cls}")
        elif entry[0] != loader:
            refused.append(f"{module}.{cls} (as {loader})")
    return refused


def check_model(model) -> None:
    """Check every object reachable from a rebuilt model before it is used.

    Walks attributes (``__dict__``), lists, tuples and dicts from ``model``;
    every object of a class in :data:`ALLOWED_TYPES` gets its declared check,
    once. Plain values (numbers, text, arrays) are checked by the check of the
    object that holds them.

    An estimator reached through one of its owner's constructor parameters
    (``BaggingClassifier(estimator=...)``, a ColumnTransformer's
    ``transformers``) is a template: scikit-learn and ensemblekit only ever
    ``clone`` it, which keeps its parameters and drops any fitted state, so
    its state is not checked (its type is, like every object's). The
    exception is a parameter that holds fitted objects, which an entry
    declares (a Pipeline's ``steps``).

    Parameters
    ----------
    model : object
        What :func:`skops.io.loads` returned.

    Raises
    ------
    ensemblekit.trust.DamagedModelError
        If an object's state is not one a fit produces, or an object of a
        class outside the allowed list is found (it cannot be, since the
        payload was screened by :func:`refused_nodes`, but the walk does not
        rely on that).
    """
    ctx = CheckContext()
    allowed = type_checks()
    stack = [(model, "model", False)]
    while stack:
        obj, where, template = stack.pop()
        if obj is None or isinstance(obj, _PLAIN_VALUES) or (id(obj), template) in ctx.seen:
            continue
        ctx.seen.add((id(obj), template))
        ctx.path = [where]
        if isinstance(obj, (list, tuple)):
            stack.extend((v, f"{where}[{i}]", template) for i, v in enumerate(obj))
            continue
        if isinstance(obj, dict):
            stack.extend((v, f"{where}[{k!r}]", template) for k, v in obj.items())
            continue
        entry = allowed.get(full_name(type(obj)))
        if entry is None:
            ctx.fail(f"holds a {full_name(type(obj))}, which a model file may not hold")
        if not template:
            entry[1](obj, ctx)
        if not hasattr(obj, "__dict__"):
            continue
        params = set(type(obj)._get_param_names()) if hasattr(type(obj), "_get_param_names") else set()
        params -= set(entry[2] if len(entry) > 2 else ())
        stack.extend((v, f"{where}.{k}", template or k in params) for k, v in vars(obj).items())


_PLAIN_VALUES = (str, bytes, int, float, bool, slice, np.ndarray, np.generic, np.dtype, type)
