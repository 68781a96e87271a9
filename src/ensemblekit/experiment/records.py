"""The records of a journal that serve analysis: the comparison described, and each unit's
predictions packed.

A journal (:mod:`ensemblekit.experiment.journal`) opens with a description of its
comparison (:func:`describe_comparison`): the task, the protocol, every candidate, and
per data set its size and class values. That, with each unit's out-of-fold predictions
(:func:`pack_predictions`), is enough to compute any measure of the predictions again
without the data files (``ensemblekit analyse``), or to write ``--predictions-out`` from a
resumed run.

Arrays are packed exactly, not as decimal text: little-endian bytes (class codes and row
numbers as 32-bit integers, probabilities and targets as 64-bit floats), compressed by
zlib and encoded in base64, beside their type and shape. Reading them back
(:func:`unpack_predictions`) trusts nothing: the type must be one of the two, the shape
what the comparison implies, the inflated bytes exactly that many (inflation stops one
byte past, so a small record cannot expand into a large one), and every row number and
class code in range.
"""

from __future__ import annotations

import base64
import json
import zlib

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.experiment.protocol import Plan, Protocol, ProtocolError, Unit, task_of
from ensemblekit.registry import CLASSIFICATION, CLUSTERING, REGRESSION

#: Longest journal line for the scores alone (4 MiB); :func:`line_bound` adds the room the
#: predictions of the comparison's largest data set need.
MAX_SCORES_LINE = 4 * 2**20

#: How a non-finite score is written (strict JSON has no NaN or Infinity).
_NON_FINITE = ("nan", "inf", "-inf")


def _shown(value) -> str:
    """A JSON value as the file spells it, cut to 40 characters."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _written_score(value):
    """A score as the journal writes it: a finite number, or ``"nan"``, ``"inf"``, ``"-inf"``."""
    value = float(value)
    return value if np.isfinite(value) else repr(value)


def _read_score(metric: str, value) -> float:
    """Inverse of :func:`_written_score`; older journals' bare ``NaN`` is read too (and
    then checked as any other score). A boolean is not a number."""
    if isinstance(value, str) and value in _NON_FINITE:
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{metric} is {_shown(value)}, not a number")
    try:
        return float(value)
    except OverflowError:  # an integer of hundreds of digits
        raise InputError(f"{metric} is {_shown(value)}, beyond any float") from None


#: Largest data set a journal header may declare, in rows (the bound of its records' arrays).
MAX_RECORDED_ROWS = 2**31 - 1


def line_bound(comparison: dict | None) -> int:
    """Longest journal line accepted, in bytes: :data:`MAX_SCORES_LINE` for the scores,
    plus room for the largest unit's packed predictions (rows, classes, predictions and a
    probability per class, 8 bytes each, base64 after zlib), in whole MiB.

    Parameters
    ----------
    comparison : dict or None
        :func:`describe_comparison`'s document (its ``datasets``); None: no predictions.

    Returns
    -------
    int
    """
    if comparison is None:
        return MAX_SCORES_LINE
    room = 0
    for ds in comparison.get("datasets", ()):
        classes = ds.get("classes") or ()
        room = max(room, int(ds["rows"]) * (len(classes) + 3) * 8)
    room = (room * 4) // 3 + 4096  # base64; zlib adds at most a few bytes per block
    return MAX_SCORES_LINE + -(-room // 2**20) * 2**20


def clusters_used(ds, protocol: Protocol) -> int | None:
    """The number of clusters a clustering run on ``ds`` uses: the protocol's, else the number
    of classes present in ``ds`` (None when it has neither)."""
    from ensemblekit.dataset import known_class

    if protocol.n_clusters:
        return int(protocol.n_clusters)
    if ds.y is None:
        return None
    y = np.asarray(ds.y, dtype=np.int64)
    return int(np.unique(y[known_class(y)]).size)


def describe_comparison(datasets, work: Plan, protocol: Protocol, metrics) -> dict:
    """What ``ensemblekit analyse`` needs to redraw a comparison without its data files.

    Parameters
    ----------
    datasets : sequence of ensemblekit.data.Dataset
    work : Plan
    protocol : Protocol
    metrics : sequence of str

    Returns
    -------
    dict
        Plain JSON data: ``task``, ``protocol`` (kind, folds, repeats, seed, n_clusters),
        ``metrics``, ``candidates`` (every field of :class:`Candidate`, its ``--noise``
        level included, in column order)
        and ``datasets``: per data set its ``name``, ``rows``, ``labelled`` (rows with a
        known class, which size the corrected t-test's folds), ``classes`` (declared class
        values; None for a numeric class) and ``n_clusters`` (what a clustering run used;
        None under cross-validation).
    """
    from ensemblekit.dataset import known_class

    task = task_of(work.candidates)
    described = []
    for ds in datasets:
        ca = ds.schema.class_attribute
        nominal = ca is not None and ca.kind != "numeric"
        y = None if ds.y is None else np.asarray(ds.y, dtype=np.int64 if nominal else np.float64)
        known = None if y is None else known_class(y)
        used = clusters_used(ds, protocol) if protocol.kind == "runs" else None
        described.append({"name": ds.name, "rows": int(ds.X.shape[0]),
                          "labelled": int(ds.X.shape[0] if known is None else known.sum()),
                          "classes": list(ca.values) if nominal else None,
                          "n_clusters": None if used is None else int(used)})
    return {"task": task,
            "protocol": {"kind": protocol.kind, "folds": protocol.folds,
                         "repeats": protocol.repeats, "seed": protocol.seed,
                         "n_clusters": protocol.n_clusters},
            "metrics": list(metrics),
            "candidates": [{"algorithm": c.algorithm, "params": c.params, "label": c.label,
                            "grid": c.grid, "tune": c.tune, "tune_cv": c.tune_cv,
                            "configuration": c.configuration, "tune_by": c.tune_by,
                            "noise": c.noise}
                           for c in work.candidates],
            "datasets": described}


#: The element types a packed array may have: class codes and row numbers, and floats.
_PACKED = {"<i4": np.int32, "<f8": np.float64}


def _pack(values, dtype) -> dict:
    """An array as a JSON object: its dtype, its shape, and its bytes, zlib-compressed and
    base64-encoded (exact: a float comes back bit for bit)."""
    data = np.ascontiguousarray(values, dtype=dtype)
    return {"dtype": data.dtype.str, "shape": list(data.shape),
            "zlib": base64.b64encode(zlib.compress(data.tobytes(), 6)).decode("ascii")}


def _unpack(obj, name: str, shape: tuple) -> np.ndarray:
    """Inverse of :func:`_pack`, checked against the expected ``shape`` (``-1``: any length up
    to :data:`MAX_RECORDED_ROWS`): InputError naming ``name`` when anything differs. The
    bytes are inflated with a bound, so a small record cannot expand beyond its shape."""
    if not isinstance(obj, dict) or set(obj) != {"dtype", "shape", "zlib"}:
        raise InputError(f"{name} is not a packed array (dtype, shape, zlib)")
    dtype = _PACKED.get(obj["dtype"]) if isinstance(obj["dtype"], str) else None
    got = obj["shape"]
    if dtype is None:
        raise InputError(f"{name} has the type {_shown(obj['dtype'])}, not one of {list(_PACKED)}")
    if not (isinstance(got, list) and len(got) == len(shape)
            and all(type(n) is int and 0 <= n <= MAX_RECORDED_ROWS for n in got)
            and all(want in (-1, n) for want, n in zip(shape, got))):
        raise InputError(f"{name} has the shape {_shown(got)}, expected {list(shape)}")
    size = int(np.prod(got, dtype=np.int64)) * np.dtype(dtype).itemsize
    try:
        raw = base64.b64decode(obj["zlib"], validate=True) if isinstance(obj["zlib"], str) else None
        inflate = zlib.decompressobj()
        data = None if raw is None else inflate.decompress(raw, size + 1)
    except (ValueError, zlib.error):
        data = None
    if data is None or len(data) != size or not inflate.eof or inflate.unconsumed_tail:
        raise InputError(f"{name} does not hold {got} values of {obj['dtype']}")
    return np.frombuffer(data, dtype=dtype).reshape(got).copy()


def pack_predictions(predictions: tuple, actual, regression: bool = False) -> dict:
    """A unit's predictions as its journal record holds them.

    Parameters
    ----------
    predictions : tuple
        ``(rows, predicted, proba, prior)``: a test fold's row numbers (None for a
        clustering run, which judges every row), the predicted class codes, targets or
        cluster ids, the class probabilities of shape (n, n_classes) or None, and the
        training fold's class counts (a list) or target mean (a float), None for a run.
    actual : ndarray of shape (n,)
        The truth of the same rows (-1 or NaN where missing).
    regression : bool, default=False
        The predictions and the truth are targets (floats), not class codes or cluster ids.

    Returns
    -------
    dict
        ``rows``, ``actual``, ``predicted``, ``proba`` (packed arrays or null) and ``prior``.
    """
    rows, predicted, proba, prior = predictions
    kind = "<f8" if regression else "<i4"
    if prior is not None and not regression:
        prior = [int(n) for n in np.asarray(prior).ravel()]
    elif prior is not None:
        prior = _written_score(prior)
    return {"rows": None if rows is None else _pack(rows, "<i4"),
            "actual": _pack(actual, kind), "predicted": _pack(predicted, kind),
            "proba": None if proba is None else _pack(proba, "<f8"), "prior": prior}


def unpack_predictions(packed, task: str, dataset: dict) -> tuple:
    """Inverse of :func:`pack_predictions`, checked against the data set it was recorded on.

    Parameters
    ----------
    packed : object
        A record's ``predictions`` as parsed from the file (untrusted).
    task : str
        The comparison's task.
    dataset : dict
        The data set's entry of :func:`describe_comparison`.

    Returns
    -------
    tuple
        ``(rows, actual, predicted, proba, prior)``: rows an int array (None for a run),
        proba of shape (n, n_classes) or None, prior an int array, a float or None.

    Raises
    ------
    InputError
        Naming the field that is not what the comparison implies (a wrong shape, type,
        a row or class code out of range, a missing field).
    """
    if not isinstance(packed, dict) or set(packed) != {"rows", "actual", "predicted", "proba",
                                                       "prior"}:
        raise InputError("predictions is not a record of rows, actual, predicted, proba, prior")
    rows_n, classes = dataset["rows"], dataset["classes"]
    rows = None
    if task == CLUSTERING:
        n = rows_n
        if packed["rows"] is not None:
            raise InputError("predictions.rows of a clustering run must be null")
    else:
        if packed["rows"] is None:
            raise InputError("predictions.rows is missing")
        rows = _unpack(packed["rows"], "predictions.rows", (-1,)).astype(np.intp)
        n = rows.size
        if n > rows_n or (n and (rows.min() < 0 or rows.max() >= rows_n)):
            raise InputError(f"predictions.rows names rows beyond the data set's {rows_n}")
    kind = (-1,) if task == CLUSTERING else (n,)
    actual = _unpack(packed["actual"], "predictions.actual", (n,))
    predicted = _unpack(packed["predicted"], "predictions.predicted", kind)
    if predicted.shape[0] != n:
        raise InputError(f"predictions.predicted has {predicted.shape[0]} values for {n} rows")
    floats = task == REGRESSION
    if (actual.dtype.kind == "f") != floats or (predicted.dtype.kind == "f") != floats:
        raise InputError("predictions hold " + ("class codes" if floats else "floats")
                         + f" where a {task} comparison records "
                         + ("targets" if floats else "codes"))
    proba, prior = None, packed["prior"]
    if task == CLASSIFICATION:
        k = len(classes or ())
        for name, codes, low in (("actual", actual, 0), ("predicted", predicted, 0)):
            if codes.size and (codes.min() < low or codes.max() >= k):
                raise InputError(f"predictions.{name} holds a class code outside 0..{k - 1}")
        if packed["proba"] is None:
            raise InputError("predictions.proba is missing")
        proba = _unpack(packed["proba"], "predictions.proba", (n, k))
        if not (isinstance(prior, list) and len(prior) == k
                and all(type(c) is int and 0 <= c <= rows_n for c in prior)):
            raise InputError(f"predictions.prior is not {k} class counts")
        prior = np.asarray(prior, dtype=np.int64)
    elif task == REGRESSION:
        if packed["proba"] is not None:
            raise InputError("predictions.proba of a regression must be null")
        prior = _read_score("predictions.prior", prior)
    else:
        if packed["proba"] is not None or prior is not None:
            raise InputError("predictions.proba and prior of a clustering run must be null")
        if actual.size and actual.max() >= len(classes or ()):
            raise InputError("predictions.actual holds a class code beyond the declared classes")
    return rows, actual, predicted, proba, prior


def judged_truth(ds, unit: Unit, outcome: dict):
    """The truth of the rows a finished unit's predictions judged (its test fold, or every
    row of a clustering run, -1 where the class is missing); None without predictions."""
    if outcome.get("predictions") is None or ds.y is None:
        return None
    y = np.asarray(ds.y)
    return y if unit.test is None else y[outcome["predictions"][0]]


def unpack_outcomes(outcomes: dict, comparison: dict, path) -> None:
    """Unpack the predictions of the units read from the journal at ``path``; a unit
    recorded without them (by an older ensemblekit) is dropped, to be computed again."""
    described = {d["name"]: d for d in comparison["datasets"]}
    for key in list(outcomes):
        packed = outcomes[key].pop("packed", None)
        if packed is None:
            del outcomes[key]
            continue
        try:
            rows, _, predicted, proba, prior = unpack_predictions(packed, comparison["task"],
                                                                  described[key[0]])
        except InputError as exc:
            raise ProtocolError(f"{path}: the record of {key[1]} on {key[0]} (repeat {key[3]}, "
                                f"fold {key[4]}) is damaged ({exc}); use a new --resume file "
                                "or delete this one") from None
        outcomes[key]["predictions"] = (rows, predicted, proba, prior)
