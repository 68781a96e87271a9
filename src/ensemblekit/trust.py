"""The generic checker of a rebuilt model's state: the checking toolkit and scikit-learn's parts.

A model file is untrusted input. After skops has rebuilt its objects and
before any of them runs, :func:`ensemblekit.model_types.check_model` visits
every object and runs the check stated for its exact class. Compiled code in
scikit-learn (``Tree.apply``, the k-d tree's queries) and in ensemblekit (the
C4.5 walk) indexes its arrays without bounds checks, so a child index of
``10**8`` or a cycle in a tree would crash or hang the process; the checks
make sure such arrays are what a fit would produce (indices in range, children
after their parent, shapes that agree with each other) and that every
attribute an estimator reads at predict time has the type and shape it needs.

This module holds what every check shares, and knows no estimator of ours:

* :class:`CheckContext` and the value checks (:func:`int_array`,
  :func:`float_array`, :func:`count_attr`, :func:`class_labels`, ...), which
  test a value's type, dtype, shape and range before anything uses it, so a
  check raises nothing but :class:`DamagedModelError` whatever the file holds;
* how a class states its own check and the helper classes its state holds
  (:func:`declared_check`, :func:`declared_parts`): each ensemblekit estimator
  declares them beside the ``fit`` that writes the state;
* the checks of the scikit-learn classes our estimators store
  (:func:`sklearn_part_checks`).

A check that fails raises :class:`DamagedModelError` naming the object and
what is wrong; :mod:`ensemblekit.persistence` turns it into
``"FILE: the model file is damaged: ..."``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ensemblekit._workers import worker_count
from ensemblekit.errors import InputError

__all__ = [
    "COUNT_MAX",
    "STATE_CHECK",
    "STATE_PARTS",
    "CheckContext",
    "Checker",
    "DamagedModelError",
    "check_bagging",
    "check_plain_state",
    "checked_array",
    "class_codes",
    "class_labels",
    "cluster_labels",
    "count_attr",
    "declared_check",
    "declared_codes",
    "declared_parts",
    "feature_count",
    "fitted_member",
    "fitted_only",
    "flag_value",
    "float_array",
    "full_name",
    "index_set",
    "instance_list",
    "int_array",
    "is_fitted",
    "n_jobs_attr",
    "nested_attr",
    "real_attr",
    "sklearn_part_checks",
]


class DamagedModelError(InputError):
    """A rebuilt model's state is not what a fit produces (one line saying what is wrong)."""


Checker = Callable[[object, "CheckContext"], None]
"""A state check: ``check(obj, ctx)`` returns None or raises through ``ctx.fail``."""

COUNT_MAX = 2**31 - 1
"""Largest count, size or seed a check accepts (numpy's and scikit-learn's compiled code hold
many of them in 32 bits; a fit never produces more)."""


class CheckContext:
    """One walk over a rebuilt model: the objects seen, and the path to the current one.

    Every check reads the object it checks through this context (or the
    functions below, which take it first), and reports what is wrong with
    :meth:`fail`, which names the path of the object being checked.

    Attributes
    ----------
    seen : set of (int, bool)
        ``(id(obj), template)`` of the objects already visited.
    path : list of str
        Where the current object is, from the model (``["model.steps[1][1]"]``).
    """

    def __init__(self):
        self.seen: set[tuple[int, bool]] = set()
        self.path: list[str] = []

    def fail(self, what: str) -> None:
        """Raise :class:`DamagedModelError` saying ``"<path>: <what>"``."""
        where = ".".join(self.path) or "model"
        raise DamagedModelError(f"{where}: {what}")

    # ---- attribute helpers used by the checks
    def attr(self, obj, name: str):
        """The stored attribute ``name`` of ``obj`` (its ``__dict__`` entry); fails if missing."""
        try:
            return obj.__dict__[name] if hasattr(obj, "__dict__") else getattr(obj, name)
        except (KeyError, AttributeError):
            self.fail(f"missing attribute {name}")

    def array(self, obj, name: str, *, ndim: int | None = None, kinds: str = "fiub",
              shape: tuple | None = None, value=None) -> np.ndarray:
        """The attribute ``name`` (or ``value``) as an ndarray of the given kind and shape.

        ``kinds`` lists the allowed ``dtype.kind`` letters; ``shape`` may hold None
        for an axis of any length.
        """
        arr = self.attr(obj, name) if value is None else value
        if type(arr) is not np.ndarray:
            self.fail(f"{name} is a {type(arr).__name__}, not an array")
        if arr.dtype.kind not in kinds:
            self.fail(f"{name} has dtype {arr.dtype}")
        if ndim is not None and arr.ndim != ndim:
            self.fail(f"{name} has {arr.ndim} dimensions, not {ndim}")
        if shape is not None and (arr.ndim != len(shape) or any(
                want is not None and got != want for got, want in zip(arr.shape, shape))):
            self.fail(f"{name} has shape {arr.shape}, expected "
                      f"({', '.join('*' if s is None else str(s) for s in shape)})")
        return arr

    def integer(self, obj, name: str, low: int = 0, high: int | None = None, value=None) -> int:
        """The attribute ``name`` (or ``value``) as an int in ``[low, high]`` (not a bool)."""
        got = self.attr(obj, name) if value is None else value
        if isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, np.integer)):
            self.fail(f"{name} is not a whole number")
        got = int(got)
        if got < low or (high is not None and got > high):
            bound = f">= {low}" if high is None else f"in [{low}, {high}]"
            self.fail(f"{name} = {got} is not {bound}")
        return got

    def indices(self, arr, n: int, name: str) -> None:
        """Every entry of the integer array ``arr`` lies in ``[0, n)``."""
        if arr.size and (arr.dtype.kind not in "iu" or int(arr.min()) < 0 or int(arr.max()) >= n):
            self.fail(f"{name} holds an index outside [0, {n})")

    def choice(self, obj, name: str, allowed) -> object:
        """The attribute ``name``, which must be one of the texts (or None) in ``allowed``."""
        got = self.attr(obj, name)
        if not isinstance(got, (str, type(None))) or got not in allowed:
            self.fail(f"{name} = {got!r} is not one of {', '.join(map(repr, allowed))}")
        return got

    def instance(self, value, name: str, allowed: tuple[type, ...]):
        """``value`` is exactly one of ``allowed`` (no subclasses); returns it."""
        if type(value) not in allowed:
            names = ", ".join(t.__name__ for t in allowed)
            self.fail(f"{name} is a {type(value).__name__}, expected {names}")
        return value


def full_name(cls: type) -> str:
    """``"module.QualifiedName"`` of a class, as model files name it."""
    return f"{cls.__module__}.{cls.__qualname__}"


# --------------------------------------------------------------------------- declared checks
STATE_CHECK = "_check_fitted_state"
"""Name of the class attribute holding a class's own state check (a staticmethod)."""

STATE_PARTS = "_state_parts"
"""Name of the class attribute listing the other ensemblekit classes its state may hold."""


def _declared(cls: type, name: str):
    """The attribute ``name`` as the class or its nearest base defines it (never an instance's)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None


def declared_check(cls: type) -> Checker | None:
    """The state check a class declares, looked up on the class and its bases only.

    An estimator states what a fit leaves in its attributes next to its own
    code, as a staticmethod ``_check_fitted_state(obj, ctx)`` in the class
    body (usually ``staticmethod(fitted_only(check))``). It is found in the
    ``__dict__`` of the class or of its nearest base that defines it, never
    through an instance, whose attributes come from the model file and could
    shadow it.

    Parameters
    ----------
    cls : type
        The exact class of a rebuilt object.

    Returns
    -------
    callable or None
        The check (a :data:`Checker`), or None when no class in ``cls.__mro__``
        declares one.

    Raises
    ------
    TypeError
        If the declared attribute is not a callable (a mistake in the class, not in a file).
    """
    check = _declared(cls, STATE_CHECK)
    if isinstance(check, staticmethod):
        check = check.__func__
    if check is not None and not callable(check):
        raise TypeError(f"{full_name(cls)}.{STATE_CHECK} is not a function")
    return check


def declared_parts(cls: type) -> tuple[type, ...]:
    """The ensemblekit classes a class says its fitted state may hold (``_state_parts``).

    Found like :func:`declared_check`, on the class and its bases. Only classes
    that are neither an estimator of the registry nor a scikit-learn part
    checked here need to be listed (a nested helper object such as a rule or a
    distance), but listing those is harmless.

    Parameters
    ----------
    cls : type
        An estimator class (or a part class, whose own parts count too).

    Returns
    -------
    tuple of type
        Empty when the class declares nothing.
    """
    return tuple(_declared(cls, STATE_PARTS) or ())


def is_fitted(est) -> bool:
    """scikit-learn's rule: an estimator is fitted when it holds an attribute ending in ``_``.

    A Pipeline holds none of its own: it is fitted when every step that is not
    ``"passthrough"`` is.
    """
    from sklearn.pipeline import Pipeline

    if type(est) is Pipeline:
        steps = vars(est).get("steps")
        return type(steps) is list and all(
            type(s) is tuple and len(s) == 2 and (s[1] == "passthrough" or (
                not isinstance(s[1], str) and hasattr(s[1], "__dict__") and is_fitted(s[1])))
            for s in steps)
    return any(k.endswith("_") and not k.startswith("__") for k in vars(est))


def fitted_only(check: Checker) -> Checker:
    """Run ``check`` on a fitted estimator only.

    An unfitted one is a template a meta-estimator keeps to clone (scikit-learn's
    ``BaggingClassifier.estimator_``); it holds only parameters, and every method that
    reads fitted state refuses it with ``NotFittedError`` before reading anything.

    Parameters
    ----------
    check : callable
        A :data:`Checker`.

    Returns
    -------
    callable
        A :data:`Checker` that runs ``check`` when :func:`is_fitted` holds.
    """

    def run(est, ctx: CheckContext) -> None:
        if is_fitted(est):
            check(est, ctx)

    run.__doc__ = check.__doc__
    return run


def check_plain_state(est, ctx: CheckContext) -> None:
    """The state check of a registered estimator that declares no check of its own.

    The type walk has already limited its attributes to allowed types (arrays,
    numbers, text, containers). Here the two facts every fitted estimator's
    methods rely on are checked: ``n_features_in_``, when present, is a count of
    at least 1, and ``classes_``, when present, is a non-empty 1-d array of numbers.
    """
    state = vars(est)
    if "n_features_in_" in state:
        ctx.integer(est, "n_features_in_", low=1)
    if "classes_" in state:
        ctx.array(est, "classes_", ndim=1)
        if est.classes_.size == 0:
            ctx.fail("classes_ is empty")


# --------------------------------------------------------------------------- value checks
# A check reads everything through these helpers, which check a value's type,
# dtype, shape and range before anything uses it, so a check raises nothing but
# DamagedModelError whatever the file holds. A value read from a nested object
# (a member, the discretizer, a tree) is checked as far as its owner relies on
# it; the walk checks the nested object itself afterwards, and every check
# passes before the model is used. Each returns the value it checked; each
# raises DamagedModelError (through ``ctx.fail``) naming ``name`` otherwise.

def nested_attr(ctx: CheckContext, obj, name: str, label: str | None = None):
    """Attribute ``name`` of a nested object ``obj``; a failure names it ``label``.

    Parameters
    ----------
    ctx : CheckContext
    obj : object
        An object held by the one being checked (a member, a tree).
    name : str
        The attribute, read from ``obj.__dict__`` only.
    label : str, optional
        How a failure names it (``"bagging_.n_jobs"``); ``name`` by default.
    """
    state = getattr(obj, "__dict__", None)
    if state is None or name not in state:
        ctx.fail(f"missing attribute {label or name}")
    return state[name]


def checked_array(ctx: CheckContext, value, name: str, **kwargs) -> np.ndarray:
    """``value`` is an ndarray (not a subclass) of the ``kinds``, ``ndim`` or ``shape`` given.

    The keyword arguments are those of :meth:`CheckContext.array`.
    """
    if type(value) is not np.ndarray:
        ctx.fail(f"{name} is a {type(value).__name__}, not an array")
    return ctx.array(None, name, value=value, **kwargs)


def int_array(ctx: CheckContext, value, name: str, *, low: int = 0, high: int | None = None,
              **kwargs) -> np.ndarray:
    """An integer array whose entries lie in ``[low, high)`` (``high=None``: no upper bound).

    Other keyword arguments (``ndim``, ``shape``) are those of :meth:`CheckContext.array`.
    """
    arr = checked_array(ctx, value, name, kinds="iu", **kwargs)
    if arr.size and (int(arr.min()) < low or (high is not None and int(arr.max()) >= high)):
        ctx.fail(f"{name} holds a value outside [{low}, {'inf' if high is None else high})")
    return arr


def float_array(ctx: CheckContext, value, name: str, *, low: float | None = None,
                high: float | None = None, nan: bool = False, **kwargs) -> np.ndarray:
    """A float array of finite values (NaN allowed with ``nan``) in ``[low, high]``.

    Other keyword arguments (``ndim``, ``shape``) are those of :meth:`CheckContext.array`.
    """
    arr = checked_array(ctx, value, name, kinds="f", **kwargs)
    if arr.size:
        known = arr[~np.isnan(arr)] if nan else arr
        if not np.all(np.isfinite(known)):
            ctx.fail(f"{name} holds a value that is not finite")
        if known.size and ((low is not None and known.min() < low)
                           or (high is not None and known.max() > high)):
            ctx.fail(f"{name} holds a value outside [{low}, {high}]")
    return arr


def index_set(ctx: CheckContext, value, name: str, n: int) -> np.ndarray:
    """Distinct indices in ``[0, n)``, ascending (column lists such as ``nominal_features_``)."""
    arr = int_array(ctx, value, name, high=n, ndim=1)
    if arr.size > 1 and np.any(arr[1:] <= arr[:-1]):
        ctx.fail(f"{name} is not a list of distinct indices in ascending order")
    return arr


def count_attr(ctx: CheckContext, obj, name: str, low: int = 1, high: int = COUNT_MAX, *,
               none: bool = False) -> int | None:
    """The attribute ``name`` of ``obj`` as an int in ``[low, high]``; None allowed with ``none``."""
    value = ctx.attr(obj, name)
    if value is None and none:
        return None
    if value is None:
        ctx.fail(f"{name} is not a whole number")
    return ctx.integer(obj, name, low, high, value=value)


def real_attr(ctx: CheckContext, obj, name: str, *, low: float | None = None, none: bool = False,
              inf: bool = False) -> float | None:
    """A number attribute: finite (or +inf with ``inf``), at least ``low``; None with ``none``."""
    value = ctx.attr(obj, name)
    if value is None and none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                    np.floating)):
        ctx.fail(f"{name} is not a number")
    try:
        value = float(value)
    except OverflowError:
        ctx.fail(f"{name} is too large")
    if value != value or value == -np.inf or (value == np.inf and not inf):
        ctx.fail(f"{name} is not finite")
    if low is not None and value < low:
        ctx.fail(f"{name} = {value!r} is below {low}")
    return value


def flag_value(ctx: CheckContext, value, name: str) -> bool:
    """``value`` is True or False (Python's or numpy's); returns it as a bool."""
    if not isinstance(value, (bool, np.bool_)):
        ctx.fail(f"{name} is not True or False")
    return bool(value)


def instance_list(ctx: CheckContext, value, name: str, types: tuple[type, ...], *,
                  length: int | None = None, nonempty: bool = False) -> list:
    """A list whose items are exactly of ``types``, of ``length`` items or not empty if asked."""
    if type(value) is not list:
        ctx.fail(f"{name} is a {type(value).__name__}, not a list")
    if length is not None and len(value) != length:
        ctx.fail(f"{name} has {len(value)} entries, expected {length}")
    if nonempty and not value:
        ctx.fail(f"{name} is empty")
    for i, item in enumerate(value):
        ctx.instance(item, f"{name}[{i}]", types)
    return value


def feature_count(ctx: CheckContext, est) -> int:
    """``n_features_in_`` (and ``feature_names_in_`` when present, one name per column)."""
    d = ctx.integer(est, "n_features_in_", 1, COUNT_MAX)
    if "feature_names_in_" in vars(est):
        names = checked_array(ctx, est.feature_names_in_, "feature_names_in_", kinds="OU",
                              shape=(d,))
        if names.dtype.kind == "O" and not all(type(v) is str for v in names):
            ctx.fail("feature_names_in_ holds a name that is not text")
    return d


def class_labels(ctx: CheckContext, est, name: str = "classes_", value=None) -> np.ndarray:
    """Class labels as ``np.unique`` gives them: non-empty, distinct, ascending."""
    classes = checked_array(ctx, ctx.attr(est, name) if value is None else value, name, ndim=1,
                            kinds="biufU")
    if (not classes.size or (classes.dtype.kind == "f" and not np.all(np.isfinite(classes)))
            or np.any(classes[1:] <= classes[:-1])):
        ctx.fail(f"{name} is not a non-empty list of distinct labels in ascending order")
    return classes


def class_codes(ctx: CheckContext, value, name: str, n_classes: int) -> np.ndarray:
    """Codes into an owner's ``classes_``: distinct integers in ``[0, n_classes)``."""
    codes = index_set(ctx, value, name, n_classes)
    if not codes.size:
        ctx.fail(f"{name} is empty")
    return codes


def declared_codes(ctx: CheckContext, est, classes: np.ndarray) -> bool:
    """Whether the classifier declares its classes (``n_classes``); then they are its codes.

    A classifier given ``n_classes`` has ``classes_ = arange(n_classes)``, also
    codes without training rows; one without it (or a model file older than the
    parameter) has the labels it saw, and the callers check them as such.
    """
    declared = vars(est).get("n_classes")
    if declared is None:
        return False
    n = ctx.integer(est, "n_classes", 1, COUNT_MAX)
    # the length first: a crafted n_classes of 2**31 - 1 must not allocate arange(n)
    if (classes.dtype.kind not in "iu" or classes.shape != (n,)
            or not np.array_equal(classes, np.arange(n))):
        ctx.fail(f"classes_ are not the codes 0..{n - 1} of the n_classes it declares")
    return True


def cluster_labels(ctx: CheckContext, est, k: int, name: str = "labels_",
                   length: int | None = None) -> np.ndarray:
    """Cluster labels of the training rows, each in ``[0, k)`` (``length`` of them if given)."""
    return int_array(ctx, ctx.attr(est, name), name, high=k, shape=(length,))


def fitted_member(ctx: CheckContext, member, name: str, d: int) -> None:
    """A nested estimator is fitted and reads the ``d`` columns its owner gives it."""
    if not is_fitted(member):
        ctx.fail(f"{name} is not fitted")
    got = ctx.integer(member, f"{name}.n_features_in_", 1, COUNT_MAX,
                      value=nested_attr(ctx, member, "n_features_in_", f"{name}.n_features_in_"))
    if got != d:
        ctx.fail(f"{name} reads {got} columns, the model {d}")


def n_jobs_attr(ctx: CheckContext, obj, label: str = "n_jobs") -> None:
    """Worker processes of a prediction: None, or a count ``--n-jobs`` would accept here."""
    value = nested_attr(ctx, obj, "n_jobs", label)
    if value is None:
        return
    try:
        worker_count(value, name=label)
    except ValueError as exc:
        ctx.fail(str(exc))


# --------------------------------------------------------------------------- scikit-learn checks
_TREE_LEAF = -1


def _check_sklearn_tree(tree, ctx: CheckContext) -> None:
    """``sklearn.tree._tree.Tree``: a tree whose compiled walks stay inside its arrays.

    Nodes are numbered so that every child comes after its parent (scikit-learn's
    depth-first builder does so), both children of a split exist, every node but
    the root has exactly one parent, split features index the input columns, and
    ``max_depth`` is the real depth (``decision_path`` sizes its buffer by it).
    """
    n = ctx.integer(tree, "node_count", 1, value=tree.node_count)
    n_features = ctx.integer(tree, "n_features", 1, value=tree.n_features)
    left = np.asarray(tree.children_left)
    right = np.asarray(tree.children_right)
    feature = np.asarray(tree.feature)
    if left.shape != (n,) or right.shape != (n,) or feature.shape != (n,):
        ctx.fail("node arrays do not have node_count entries")
    leaf = left == _TREE_LEAF
    if not np.array_equal(leaf, right == _TREE_LEAF):
        ctx.fail("a node has one child")
    order = np.arange(n)
    split = ~leaf
    if np.any((left[split] <= order[split]) | (left[split] >= n)
              | (right[split] <= order[split]) | (right[split] >= n)):
        ctx.fail("a child index is out of range or does not come after its parent")
    parents = np.bincount(np.concatenate([left[split], right[split]]), minlength=n)
    if parents[0] != 0 or np.any(parents[1:] != 1):
        ctx.fail("the nodes do not form one tree (a node has no parent or two)")
    if np.any((feature[split] < 0) | (feature[split] >= n_features)):
        ctx.fail(f"a split feature index is outside [0, {n_features})")
    depth = np.zeros(n, dtype=np.int64)
    for i in np.flatnonzero(split):  # parents come first, so one pass in order suffices
        depth[left[i]] = depth[right[i]] = depth[i] + 1
    if int(tree.max_depth) != int(depth.max()):
        ctx.fail(f"max_depth {int(tree.max_depth)} is not the depth of the nodes ({int(depth.max())})")
    n_outputs = ctx.integer(tree, "n_outputs", 1, 1, value=tree.n_outputs)
    value = np.asarray(tree.value)
    if value.shape[:2] != (n, n_outputs) or value.shape[2] != int(np.max(tree.n_classes)):
        ctx.fail(f"value has shape {value.shape}")


def _check_decision_tree(est, ctx: CheckContext, *, classifier: bool) -> None:
    from sklearn.tree._tree import Tree

    tree = ctx.instance(ctx.attr(est, "tree_"), "tree_", (Tree,))
    n_features = ctx.integer(est, "n_features_in_", 1)
    if tree.n_features != n_features:
        ctx.fail(f"tree_ has {tree.n_features} features, the estimator {n_features}")
    ctx.integer(est, "n_outputs_", 1, 1)
    if classifier:
        classes = ctx.array(est, "classes_", ndim=1)
        n_classes = ctx.integer(est, "n_classes_", 1)
        if classes.shape[0] != n_classes or int(tree.n_classes[0]) != n_classes:
            ctx.fail("classes_, n_classes_ and the tree's class count disagree")
    elif int(tree.n_classes[0]) != 1:
        ctx.fail("a regression tree has more than one value per node")


def _check_nearest(est, ctx: CheckContext, *, classifier: bool) -> None:
    """``NearestNeighbors`` / ``KNeighborsClassifier``: stored points and, if any, their k-d tree."""
    from sklearn.neighbors import KDTree

    fit_x = ctx.array(est, "_fit_X", ndim=2, kinds="f")
    n, d = fit_x.shape
    if n < 1 or d != ctx.integer(est, "n_features_in_", 1):
        ctx.fail("_fit_X does not match n_features_in_")
    if ctx.integer(est, "n_samples_fit_", 1) != n:
        ctx.fail("n_samples_fit_ is not the number of stored points")
    method = ctx.choice(est, "_fit_method", ("brute", "kd_tree"))
    ctx.choice(est, "effective_metric_", ("euclidean", "minkowski"))
    n_jobs_attr(ctx, est)
    if est.effective_metric_ == "minkowski" and ctx.attr(est, "effective_metric_params_").get("p") != 2:
        ctx.fail("only the Euclidean metric is stored by ensemblekit")
    tree = ctx.attr(est, "_tree")
    if method == "kd_tree":
        ctx.instance(tree, "_tree", (KDTree,))
        if not np.array_equal(np.asarray(tree.data), fit_x):
            ctx.fail("the k-d tree holds other points than _fit_X")
    elif tree is not None:
        ctx.fail("a brute-force search holds a tree")
    if classifier:
        classes = ctx.array(est, "classes_", ndim=1)
        y = ctx.array(est, "_y", shape=(n,), kinds="iu")
        ctx.indices(y, classes.shape[0], "_y")
        ctx.integer(est, "n_neighbors", 1, n)
        if ctx.attr(est, "outputs_2d_") is not False:
            ctx.fail("multi-output neighbours are not stored by ensemblekit")


def _check_kd_tree(tree, ctx: CheckContext) -> None:
    """``KDTree``: equal, array for array, to the tree scikit-learn builds from its points.

    A k-d tree is a deterministic function of its points and leaf size, so it is
    rebuilt and compared; the compiled queries then only ever see arrays that
    scikit-learn made itself.
    """
    from sklearn.metrics._dist_metrics import EuclideanDistance64
    from sklearn.neighbors import KDTree

    data = np.asarray(tree.data)
    if data.ndim != 2 or data.dtype != np.float64 or data.shape[0] < 1:
        ctx.fail("the k-d tree's points are not a non-empty float matrix")
    state = tree.__getstate__()
    _check_euclidean(ctx.instance(state[11], "dist_metric", (EuclideanDistance64,)), ctx)
    if state[12] is not None:
        ctx.fail("a weighted k-d tree is not stored by ensemblekit")
    leaf_size = ctx.integer(tree, "leaf_size", 1, value=state[4])
    fresh = KDTree(data, leaf_size=leaf_size)
    for got, want, what in zip(tree.get_arrays(), fresh.get_arrays(),
                               ("data", "idx_array", "node_data", "node_bounds")):
        if np.asarray(got).shape != np.asarray(want).shape or not np.array_equal(
                np.asarray(got), np.asarray(want), equal_nan=np.asarray(want).dtype.kind == "f"):
            ctx.fail(f"the k-d tree's {what} is not the one its points give")
    if state[5:7] != fresh.__getstate__()[5:7]:
        ctx.fail("the k-d tree's level or node count is not the one its points give")


def _check_euclidean(metric, ctx: CheckContext) -> None:
    """The Euclidean distance object keeps no data the file could choose but its size fields."""
    state = metric.__getstate__()
    if not isinstance(state, tuple) or float(state[0]) != 2.0:
        ctx.fail("the Euclidean distance has a power other than 2")


def _check_column_transformer(ct, ctx: CheckContext) -> None:
    n = ctx.integer(ct, "n_features_in_", 1)
    fitted = ctx.attr(ct, "transformers_")
    if type(fitted) is not list:
        ctx.fail("transformers_ is not a list")
    for item in fitted:
        if type(item) is not tuple or len(item) != 3 or not isinstance(item[0], str):
            ctx.fail("transformers_ holds an entry that is not (name, transformer, columns)")
        name, transformer, columns = item
        if isinstance(transformer, str) and transformer not in ("drop", "passthrough"):
            ctx.fail(f"transformers_[{name}] is the text {transformer!r}")
        if not isinstance(transformer, str) and not is_fitted(transformer):
            ctx.fail(f"transformers_[{name}] is not fitted")
        cols = np.asarray(columns)
        if cols.ndim != 1:
            ctx.fail(f"the columns of {name} are not a list")
        if cols.size:
            ctx.indices(cols, n, f"the columns of {name}")
    ctx.choice(ct, "remainder", ("drop",))
    if ctx.attr(ct, "sparse_output_") is not False:
        ctx.fail("a sparse column transformer is not stored by ensemblekit")


def _check_pipeline(pipe, ctx: CheckContext) -> None:
    steps = ctx.attr(pipe, "steps")
    if type(steps) is not list or not steps or any(
            type(s) is not tuple or len(s) != 2 or not isinstance(s[0], str) for s in steps):
        ctx.fail("steps is not a list of (name, estimator) pairs")
    if ctx.attr(pipe, "memory") is not None:
        ctx.fail("a pipeline with a cache folder is not stored by ensemblekit")
    for name, step in steps:
        if isinstance(step, str) and step != "passthrough":
            ctx.fail(f"step {name} is the text {step!r}")
        if step is None or (not isinstance(step, str) and not is_fitted(step)):
            ctx.fail(f"step {name} is {'empty' if step is None else 'not fitted'}")


def _check_simple_imputer(imp, ctx: CheckContext) -> None:
    n = ctx.integer(imp, "n_features_in_", 1)
    ctx.array(imp, "statistics_", shape=(n,), kinds="f")
    ctx.choice(imp, "strategy", ("mean", "most_frequent"))
    if ctx.attr(imp, "indicator_") is not None:
        ctx.fail("a missing-value indicator is not stored by ensemblekit")


def _check_min_max(scaler, ctx: CheckContext) -> None:
    n = ctx.integer(scaler, "n_features_in_", 1)
    for name in ("scale_", "min_", "data_min_", "data_max_", "data_range_"):
        ctx.array(scaler, name, shape=(n,), kinds="f")


def _check_one_hot(enc, ctx: CheckContext) -> None:
    n = ctx.integer(enc, "n_features_in_", 1)
    categories = ctx.attr(enc, "categories_")
    if type(categories) is not list or len(categories) != n:
        ctx.fail("categories_ does not hold one array per column")
    for i, values in enumerate(categories):
        ctx.array(enc, f"categories_[{i}]", ndim=1, kinds="f", value=values)
    outs = ctx.attr(enc, "_n_features_outs")
    if type(outs) is not list or [int(v) for v in outs] != [len(c) for c in categories]:
        ctx.fail("_n_features_outs does not match categories_")
    if ctx.attr(enc, "drop_idx_") is not None or ctx.attr(enc, "_infrequent_enabled") is not False:
        ctx.fail("dropped or infrequent categories are not stored by ensemblekit")
    ctx.choice(enc, "handle_unknown", ("ignore",))


def _check_ensemble_members(est, ctx: CheckContext, member_types: tuple[type, ...]) -> None:
    members = ctx.attr(est, "estimators_")
    if type(members) is not list or not members:
        ctx.fail("estimators_ is not a non-empty list")
    n = ctx.integer(est, "n_features_in_", 1)
    for i, member in enumerate(members):
        ctx.instance(member, f"estimators_[{i}]", member_types)
        if not is_fitted(member) or getattr(member, "n_features_in_", n) != n:
            ctx.fail(f"estimators_[{i}] is not fitted to the ensemble's {n} columns")
    n_jobs_attr(ctx, est)


def check_bagging(est, ctx: CheckContext) -> None:
    """``BaggingClassifier``: members fitted to the columns each one draws, one per estimator.

    Used for scikit-learn's class and for subclasses that keep its state.
    """
    members = ctx.attr(est, "estimators_")
    n = ctx.integer(est, "n_features_in_", 1)
    features = ctx.attr(est, "estimators_features_")
    if type(members) is not list or type(features) is not list or len(members) != len(features):
        ctx.fail("estimators_ and estimators_features_ do not pair up")
    for i, (member, cols) in enumerate(zip(members, features)):
        cols = ctx.array(est, f"estimators_features_[{i}]", ndim=1, kinds="iu", value=cols)
        ctx.indices(cols, n, f"estimators_features_[{i}]")
        if not is_fitted(member) or getattr(member, "n_features_in_", None) != cols.shape[0]:
            ctx.fail(f"estimators_[{i}] is not fitted to its {cols.shape[0]} columns")
    if ctx.integer(est, "n_estimators", 1) != len(members):
        ctx.fail("n_estimators is not the number of members")
    n_jobs_attr(ctx, est)
    ctx.array(est, "classes_", ndim=1)
    ctx.integer(est, "n_classes_", 1)


def _check_random_forest(est, ctx: CheckContext) -> None:
    from sklearn.tree import DecisionTreeClassifier

    _check_ensemble_members(est, ctx, (DecisionTreeClassifier,))
    classes = ctx.array(est, "classes_", ndim=1)
    if ctx.integer(est, "n_classes_", 1) != classes.shape[0]:
        ctx.fail("n_classes_ is not the number of classes")


def _check_gaussian_mixture(gm, ctx: CheckContext) -> None:
    kind = ctx.choice(gm, "covariance_type", ("full", "tied", "diag", "spherical"))
    weights = ctx.array(gm, "weights_", ndim=1, kinds="f")
    k = weights.shape[0]
    means = ctx.array(gm, "means_", shape=(k, None), kinds="f")
    d = means.shape[1]
    shapes = {"full": (k, d, d), "tied": (d, d), "diag": (k, d), "spherical": (k,)}
    for name in ("covariances_", "precisions_cholesky_", "precisions_"):
        ctx.array(gm, name, shape=shapes[kind], kinds="f")


def _check_sparse(matrix, ctx: CheckContext) -> None:
    try:
        matrix.check_format(full_check=True)
    except (ValueError, TypeError) as exc:
        ctx.fail(f"sparse matrix: {exc}")


def sklearn_part_checks() -> dict[str, tuple]:
    """The scikit-learn (and scipy) classes our estimators store, with their checks.

    Imports scikit-learn, so :mod:`ensemblekit.model_types` calls it on first use.

    Returns
    -------
    dict
        Exact class name (``"sklearn.tree._tree.Tree"``) -> ``(skops loader,
        check)``, or ``(skops loader, check, parameters holding fitted
        objects)`` for a class whose constructor parameters hold fitted
        estimators rather than templates (a Pipeline's ``steps``).
    """
    return {
        "sklearn.pipeline.Pipeline": ("ObjectNode", _check_pipeline, ("steps",)),
        "sklearn.compose._column_transformer.ColumnTransformer": ("ObjectNode", _check_column_transformer),
        "sklearn.impute._base.SimpleImputer": ("ObjectNode", fitted_only(_check_simple_imputer)),
        "sklearn.preprocessing._data.MinMaxScaler": ("ObjectNode", fitted_only(_check_min_max)),
        "sklearn.preprocessing._encoders.OneHotEncoder": ("ObjectNode", fitted_only(_check_one_hot)),
        "sklearn.tree._tree.Tree": ("TreeNode", _check_sklearn_tree),
        "sklearn.tree._classes.DecisionTreeClassifier": (
            "ObjectNode", fitted_only(lambda e, c: _check_decision_tree(e, c, classifier=True))),
        "sklearn.tree._classes.DecisionTreeRegressor": (
            "ObjectNode", fitted_only(lambda e, c: _check_decision_tree(e, c, classifier=False))),
        "sklearn.ensemble._forest.RandomForestClassifier": ("ObjectNode", fitted_only(_check_random_forest)),
        "sklearn.ensemble._bagging.BaggingClassifier": ("ObjectNode", fitted_only(check_bagging)),
        "sklearn.neighbors._classification.KNeighborsClassifier": (
            "ObjectNode", fitted_only(lambda e, c: _check_nearest(e, c, classifier=True))),
        "sklearn.neighbors._unsupervised.NearestNeighbors": (
            "ObjectNode", fitted_only(lambda e, c: _check_nearest(e, c, classifier=False))),
        "sklearn.neighbors._kd_tree.KDTree": ("ObjectNode", _check_kd_tree),
        "sklearn.metrics._dist_metrics.EuclideanDistance64": ("ObjectNode", _check_euclidean),
        "sklearn.mixture._gaussian_mixture.GaussianMixture": (
            "ObjectNode", fitted_only(_check_gaussian_mixture)),
        "scipy.sparse._csc.csc_matrix": ("SparseMatrixNode", _check_sparse),
    }
