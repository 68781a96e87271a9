"""The fitted-state declaration: what a fit leaves in an estimator, named, typed and bounded.

Every algorithm's *model class* (the part of an estimator that predicts, imports
numpy only, and is the base of the scikit-learn estimator that fits it) declares,
beside its ``_parameter_constraints``, the state its ``fit`` writes::

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",), low=0),
        "feature_": Array("int64", ("n_nodes",), low=-1, below="n_features_in_"),
        "value_": Array("float64", ("n_nodes", "n_classes"), low=0),
        "estimators_": Members(C45Model, length="n_estimators"),
    }

and, for the rules no entry can state alone (one tree, an acyclic network, a
valid linkage), a method ``_check_state(self, ctx)`` that raises through
``ctx.fail`` (:class:`ensemblekit.trust.CheckContext`).

A model file stores exactly the declared entries: arrays as ``.npy`` members,
scalars in ``metadata.json``, members as nested groups of the same. Loading
(:func:`restore`) checks each entry against its declaration before it is set on
a fresh instance of the class the registry names, then runs ``_check_state``;
nothing in a file chooses a class. Saving (:func:`collect`) reads the same
entries from a fitted instance, so what is written and what is checked cannot
drift apart.

Shapes, bounds and lengths may name *symbols* (``"n_nodes"``). A symbol is, in
this order: an ``int`` scalar of the same declaration, an ``int`` attribute the
instance already holds (a constructor parameter such as ``n_classes``), or it is
bound by the first array whose shape names it, in declaration order; every later
use must agree. ``"*"`` in a shape is an axis of any length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ensemblekit.trust import COUNT_MAX, CheckContext, DamagedModelError

__all__ = [
    "Array",
    "ArrayList",
    "Members",
    "Scalar",
    "collect",
    "restore",
    "declared_state",
]

_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float32", "float64"})
_SCALAR_KINDS = frozenset({"int", "float", "bool", "str"})


@dataclass(frozen=True)
class Array:
    """A numpy array of one exact dtype, with a symbolic shape and a range of values.

    Parameters
    ----------
    dtype : str
        Exact numpy dtype name (``"int64"``, ``"float64"``, ``"bool"``, ...); a file
        holding any other dtype (object arrays above all) is refused.
    shape : tuple of (int or str)
        Length of each axis: a number, a symbol, or ``"*"`` for any length.
    low, high : number or str, optional
        Inclusive bounds of every value (a symbol names an int).
    below : number or str, optional
        Exclusive upper bound (indices: ``below="n_nodes"``).
    nan : bool, default=False
        A float array may hold NaN.
    inf : bool, default=False
        A float array may hold infinities.
    optional : bool, default=False
        The attribute may be None (then no array is stored).
    """

    dtype: str
    shape: tuple
    low: Any = None
    high: Any = None
    below: Any = None
    nan: bool = False
    inf: bool = False
    optional: bool = False

    def __post_init__(self):
        if self.dtype not in _DTYPES:
            raise TypeError(f"unsupported state dtype {self.dtype!r}")


@dataclass(frozen=True)
class Scalar:
    """A number, flag or text stored in ``metadata.json``.

    Parameters
    ----------
    kind : {"int", "float", "bool", "str"}
    low, high : number or str, optional
        Inclusive bounds of an ``int`` or ``float``.
    choices : tuple of str, optional
        The allowed texts of a ``str``.
    inf : bool, default=False
        A float may be +-infinity (never NaN); a model file stores it as the
        text ``"inf"`` or ``"-inf"``, JSON having no infinity.
    optional : bool, default=False
        The attribute may be None; a stored state without the entry reads it as None
        (so that a file written before the entry was declared still loads).
    """

    kind: str
    low: Any = None
    high: Any = None
    choices: tuple | None = None
    inf: bool = False
    optional: bool = False

    def __post_init__(self):
        if self.kind not in _SCALAR_KINDS:
            raise TypeError(f"unsupported scalar kind {self.kind!r}")


@dataclass(frozen=True)
class ArrayList:
    """A list of arrays of one declaration (ragged: each its own shape), e.g. one CPT per node.

    Parameters
    ----------
    item : Array
        Declaration of every entry; symbols bound inside it are bound per entry
        (``"*"`` axes are free), bounds naming outer symbols are shared.
    length : int or str, optional
        Number of entries (a symbol is bound by the stored list when not yet known).
    """

    item: Array
    length: Any = None


@dataclass(frozen=True)
class Members:
    """A list of fitted sub-models (an ensemble's members) of a class the code chooses.

    Parameters
    ----------
    model : type or callable
        The members' model class, or a function of the owning instance (its
        parameters already set) that returns it; never read from a file.
    length : int or str, optional
        Number of members.
    optional : bool, default=False
        The attribute may be None.
    """

    model: Any
    length: Any = None
    optional: bool = False


def declared_state(cls: type) -> dict:
    """The ``_fitted_state`` declaration of a model class (its own or its nearest base's).

    Raises
    ------
    TypeError
        If the class declares none (a mistake in code, not in a file).
    """
    for klass in cls.__mro__:
        if "_fitted_state" in vars(klass):
            return vars(klass)["_fitted_state"]
    raise TypeError(f"{cls.__module__}.{cls.__qualname__} declares no _fitted_state")


def _member_class(decl: Members, owner) -> type:
    model = decl.model
    return model if isinstance(model, type) else model(owner)


# --------------------------------------------------------------------------- saving
def collect(obj, prefix: str = "") -> tuple[dict, dict]:
    """The declared state of a fitted model, as scalars and arrays to store.

    Parameters
    ----------
    obj : object
        A fitted instance of a class that declares ``_fitted_state``.
    prefix : str
        Prepended to array names (``"model/"``).

    Returns
    -------
    scalars : dict
        JSON-ready: scalars by name; a member list as a list of such dicts; an
        array list as its length.
    arrays : dict
        ``"<prefix><name>"`` (``"<prefix><name>/<i>"`` for lists and members)
        -> ndarray, each of its declared dtype.

    Raises
    ------
    TypeError
        If a declared attribute is missing or of another type (a bug in the
        estimator, not bad input).
    """
    scalars: dict = {}
    arrays: dict = {}
    for name, decl in declared_state(type(obj)).items():
        value = getattr(obj, name, None)
        where = f"{type(obj).__name__}.{name}"
        if value is None:
            if not getattr(decl, "optional", False):
                raise TypeError(f"{where} is not set")
            scalars[name] = None
        elif isinstance(decl, Scalar):
            scalars[name] = _plain_scalar(decl, value, where)
        elif isinstance(decl, Array):
            arrays[prefix + name] = _exact_array(decl, value, where)
        elif isinstance(decl, ArrayList):
            scalars[name] = len(value)
            for i, item in enumerate(value):
                arrays[f"{prefix}{name}/{i}"] = _exact_array(decl.item, item, f"{where}[{i}]")
        else:
            items = []
            for i, member in enumerate(value):
                sub_scalars, sub_arrays = collect(member, f"{prefix}{name}/{i}/")
                items.append(sub_scalars)
                arrays.update(sub_arrays)
            scalars[name] = items
    return scalars, arrays


def _plain_scalar(decl: Scalar, value, where: str):
    kinds = {"int": (int, np.integer), "float": (float, int, np.floating, np.integer),
             "bool": (bool, np.bool_), "str": (str,)}[decl.kind]
    if not isinstance(value, kinds) or (decl.kind != "bool" and isinstance(value, (bool, np.bool_))):
        raise TypeError(f"{where} is a {type(value).__name__}, declared {decl.kind}")
    value = {"int": int, "float": float, "bool": bool, "str": str}[decl.kind](value)
    if decl.kind == "float" and value != value:
        raise TypeError(f"{where} is NaN, which no scalar may be")
    if decl.kind == "float" and value in (np.inf, -np.inf):
        if not decl.inf:
            raise TypeError(f"{where} is infinite, declared finite")
        return "inf" if value > 0 else "-inf"  # JSON has no infinity
    return value


def _exact_array(decl: Array, value, where: str) -> np.ndarray:
    if type(value) is not np.ndarray or value.dtype != np.dtype(decl.dtype):
        got = value.dtype if isinstance(value, np.ndarray) else type(value).__name__
        raise TypeError(f"{where} is {got}, declared {decl.dtype}")
    return np.ascontiguousarray(value)


# --------------------------------------------------------------------------- loading
def restore(cls: type, params: dict, scalars, arrays, *, name: str = "model"):
    """A fresh instance of ``cls`` holding a stored state that passed its declaration.

    Parameters
    ----------
    cls : type
        The model class, chosen by the code (the registry entry, or a
        :class:`Members` declaration), never by the file.
    params : dict
        Constructor parameters, already checked (``cls(**params)`` is called).
    scalars : object
        What :func:`collect` gave as scalars, as read back from JSON (untrusted).
    arrays : mapping
        Array name -> stored array: an ndarray, or an object with ``shape``,
        ``dtype`` (from the ``.npy`` header) and ``read()`` (the data, read
        only once its header passed). Untrusted.
    name : str
        Prefix of the array names and of the messages.

    Returns
    -------
    object
        ``cls(**params)`` with every declared attribute set, after its
        ``_check_state`` (when it has one) passed.

    Raises
    ------
    DamagedModelError
        Naming the entry and what is wrong: a missing or extra entry, a wrong
        dtype or shape, lengths that disagree, a value out of range, or a
        broken cross-array rule.
    """
    ctx = CheckContext()
    ctx.path.append(name)
    used: set[str] = set()
    obj = _restore(cls, params, scalars, arrays, name + "/", ctx, used)
    extra = sorted(set(arrays) - used)
    if extra:
        raise DamagedModelError(f"{extra[0]}: not part of a {cls.__name__}'s state")
    return obj


def _restore(cls, params, scalars, arrays, prefix, ctx, used):
    obj = cls(**params) if params is not None else cls.__new__(cls)
    if type(scalars) is not dict:
        ctx.fail("the stored state is not a mapping")
    declaration = declared_state(cls)
    unknown = sorted(set(scalars) - set(declaration))
    if unknown:
        ctx.fail(f"{unknown[0]} is not part of a {cls.__name__}'s state")
    symbols: dict[str, int] = {}
    for name, decl in declaration.items():
        ctx.path.append(name)
        # an optional scalar may be absent (a file written before it was declared): unset
        if isinstance(decl, (Scalar, ArrayList, Members)) and name not in scalars and not (
                isinstance(decl, Scalar) and decl.optional):
            ctx.fail("missing")
        if isinstance(decl, Scalar):
            value = _check_scalar(decl, scalars.get(name), obj, symbols, ctx)
            if decl.kind == "int" and value is not None:
                symbols[name] = value
        elif isinstance(decl, Array):
            key = prefix + name
            if key not in arrays:
                if not decl.optional or scalars.get(name, None) is not None:
                    ctx.fail("missing")
                value = None
            else:
                used.add(key)
                value = _check_array(decl, arrays[key], obj, symbols, ctx)
        elif isinstance(decl, ArrayList):
            value = _restore_list(decl, name, scalars[name], arrays, prefix, obj, symbols, ctx,
                                  used)
        else:
            value = _restore_members(decl, name, scalars[name], arrays, prefix, obj, symbols,
                                     ctx, used)
        setattr(obj, name, value)
        ctx.path.pop()
    check = _own_check(cls)
    if check is not None:
        check(obj, ctx)
    return obj


def _own_check(cls):
    for klass in cls.__mro__:
        if "_check_state" in vars(klass):
            return vars(klass)["_check_state"]
    return None


def _length(decl_length, got: int, obj, symbols, ctx) -> None:
    if got > COUNT_MAX:
        ctx.fail(f"{got} entries is beyond any fit")
    if decl_length is None:
        return
    if isinstance(decl_length, str) and _symbol(decl_length, obj, symbols) is None:
        symbols[decl_length] = got
    elif got != _value(decl_length, obj, symbols):
        ctx.fail(f"has {got} entries, expected {_value(decl_length, obj, symbols)}")


def _restore_list(decl, name, stored, arrays, prefix, obj, symbols, ctx, used):
    if stored is None and decl.item.optional:
        return None
    if type(stored) is not int or stored < 0:
        ctx.fail("the length of the list is not a count")
    _length(decl.length, stored, obj, symbols, ctx)
    out = []
    for i in range(stored):
        key = f"{prefix}{name}/{i}"
        if key not in arrays:
            ctx.fail(f"entry {i} is missing")
        used.add(key)
        ctx.path.append(str(i))
        out.append(_check_array(decl.item, arrays[key], obj, dict(symbols), ctx))
        ctx.path.pop()
    return out


def _restore_members(decl, name, stored, arrays, prefix, obj, symbols, ctx, used):
    if stored is None and decl.optional:
        return None
    if type(stored) is not list:
        ctx.fail("the members are not a list")
    _length(decl.length, len(stored), obj, symbols, ctx)
    model = _member_class(decl, obj)
    out = []
    for i, item in enumerate(stored):
        ctx.path.append(str(i))
        out.append(_restore(model, None, item, arrays, f"{prefix}{name}/{i}/", ctx, used))
        ctx.path.pop()
    return out


def _symbol(name: str, obj, symbols) -> int | None:
    if name in symbols:
        return symbols[name]
    value = vars(obj).get(name)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    return None


def _value(bound, obj, symbols):
    if not isinstance(bound, str):
        return bound
    value = _symbol(bound, obj, symbols)
    if value is None:
        raise TypeError(f"the bound {bound!r} names no int known before it is used")
    return value


def _check_scalar(decl: Scalar, value, obj, symbols, ctx):
    if value is None:
        if not decl.optional:
            ctx.fail("is null")
        return None
    kind = decl.kind
    if kind == "float" and decl.inf and value in ("inf", "-inf"):
        value = float(value)
    ok = {"int": type(value) is int, "float": type(value) in (int, float),
          "bool": type(value) is bool, "str": type(value) is str}[kind]
    if not ok:
        ctx.fail(f"is a {type(value).__name__}, expected {kind}")
    if kind == "float":
        value = float(value)
        if value != value or (not decl.inf and value in (np.inf, -np.inf)):
            ctx.fail("is not finite")
    if kind == "int" and not -COUNT_MAX - 1 <= value <= 2**63 - 1:
        ctx.fail(f"= {value} is beyond any fit")
    if kind in ("int", "float"):
        low, high = _value(decl.low, obj, symbols), _value(decl.high, obj, symbols)
        if (low is not None and value < low) or (high is not None and value > high):
            ctx.fail(f"= {value!r} is outside [{low}, {high}]")
    if kind == "str" and decl.choices is not None and value not in decl.choices:
        ctx.fail(f"= {value!r} is not one of {', '.join(map(repr, decl.choices))}")
    return value


def _check_array(decl: Array, stored, obj, symbols, ctx) -> np.ndarray:
    dtype, shape = stored.dtype, tuple(stored.shape)
    if dtype != np.dtype(decl.dtype):
        ctx.fail(f"has dtype {dtype}, expected {decl.dtype}")
    if len(shape) != len(decl.shape):
        ctx.fail(f"has {len(shape)} dimensions, expected {len(decl.shape)}")
    for axis, (got, want) in enumerate(zip(shape, decl.shape)):
        if got > COUNT_MAX:
            ctx.fail(f"axis {axis} of length {got} is beyond any fit")
        if want == "*":
            continue
        if isinstance(want, str) and _symbol(want, obj, symbols) is None:
            symbols[want] = got
            continue
        expected = _value(want, obj, symbols)
        if got != expected:
            named = f" ({want})" if isinstance(want, str) else ""
            ctx.fail(f"has shape {shape}: axis {axis} should be {expected}{named}, the length "
                     "the rest of the model gives it")
    arr = stored if type(stored) is np.ndarray else stored.read()
    if type(arr) is not np.ndarray or arr.dtype != dtype or arr.shape != shape:
        ctx.fail("its data does not match its header")
    if arr.size:
        _check_values(decl, arr, obj, symbols, ctx)
    arr.flags.writeable = False
    return arr


def _check_values(decl: Array, arr: np.ndarray, obj, symbols, ctx) -> None:
    values = arr
    if arr.dtype.kind == "f":
        bad = np.isnan(arr)
        if not decl.nan and bad.any():
            ctx.fail("holds NaN where none is allowed")
        if not decl.inf and np.isinf(arr).any():
            ctx.fail("holds an infinite value")
        if bad.any():
            values = arr[~bad]
            if not values.size:
                return
    elif arr.dtype.kind == "b":
        return
    low = _value(decl.low, obj, symbols)
    high = _value(decl.high, obj, symbols)
    below = _value(decl.below, obj, symbols)
    smallest, largest = values.min().item(), values.max().item()
    if low is not None and smallest < low:
        ctx.fail(f"holds {smallest!r}, below its least value {low}")
    if high is not None and largest > high:
        ctx.fail(f"holds {largest!r}, above its greatest value {high}")
    if below is not None and largest >= below:
        ctx.fail(f"holds {largest!r}, not below {below}")
