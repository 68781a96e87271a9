"""``-m structure-stability``: how alike the models are that one learner builds on one repeat.

Each unit of a comparison that asks for the measure records its model's structure
(:func:`ensemblekit.metrics.model_structure`: arcs, splits or a partition, as the model
class declares). Once every unit of a group has finished, the structures of the group
are compared pairwise (:mod:`ensemblekit.scores.structure`), and each unit gets its
model's mean similarity to the others of its group as its score. The mean of those
scores over a group is the group's mean pairwise similarity, so the comparison's tables
(the mean over every unit of a cell) show the mean over the repeats of each repeat's
mean pairwise similarity. The groups are:

* cross-validation: the k models of one repeat, which were trained on training folds
  that share (k - 2) / (k - 1) of their rows;
* clustering runs: every run of the data set, each of which clustered every row from a
  seed of its own, so their partitions are compared on all rows (one run alone leaves
  the measure undefined: NaN).

The structures, not the scores, are what the resume journal records for this measure
(:func:`structure_record`, :func:`read_structure`), so a resumed run, a parallel one and
``ensemblekit analyse`` compute the same values from the same structures, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.experiment.records import _pack, _shown, _unpack
from ensemblekit.metrics import metric_spec
from ensemblekit.scores.structure import SIMILARITIES, stability_shares

__all__ = ["STRUCTURE_METRICS", "wants_structure", "structure_record", "unit_structure",
           "read_structure", "fill_stability"]

#: The measures computed over the structures of several units.
STRUCTURE_METRICS = ("structure-stability",)

#: Most items (arcs, splits) a recorded structure may hold.
MAX_ITEMS = 10_000_000


def wants_structure(metrics: Iterable[str]) -> bool:
    """Whether any of ``metrics`` compares the structures of several units' models."""
    return any(metric_spec(m).inputs == "structure" for m in metrics)


def structure_record(structure: dict) -> dict:
    """A structure (:func:`ensemblekit.metrics.model_structure`) as plain JSON data: a
    partition's labels packed exactly (see :mod:`ensemblekit.experiment.records`)."""
    if structure["kind"] == "partition":
        return {"kind": "partition", "labels": _pack(structure["labels"], "<i4")}
    return {"kind": structure["kind"], "items": [[int(a), int(b)] for a, b in structure["items"]]}


def unit_structure(model, labels, metrics: Iterable[str]) -> dict | None:
    """What a unit records of its fitted ``model`` (a clusterer: with its fit ``labels``):
    :func:`structure_record` of :func:`ensemblekit.metrics.model_structure` when one of
    ``metrics`` compares structures, else None.

    Raises
    ------
    InputError
        From :func:`ensemblekit.metrics.model_structure` (no structure declared).
    """
    if not wants_structure(metrics):
        return None
    from ensemblekit.metrics import model_structure

    return structure_record(model_structure(model, labels))


def read_structure(record) -> dict:
    """Check a recorded structure and return it in the form :func:`fill_stability` takes.

    Parameters
    ----------
    record : object
        What :func:`structure_record` wrote, read back from JSON.

    Returns
    -------
    dict
        ``{"kind", "items"}`` (a list of (int, int) tuples) or ``{"kind", "labels"}``
        (ndarray of int32).

    Raises
    ------
    InputError
        Naming what is wrong: not an object, an unknown kind, an item that is not a pair
        of integers, labels that are not a packed array of int32.
    """
    if not isinstance(record, dict) or record.get("kind") not in SIMILARITIES:
        raise InputError(f"structure {_shown(record)} is not an object with a kind among "
                         f"{', '.join(SIMILARITIES)}")
    kind = record["kind"]
    if kind == "partition":
        if set(record) != {"kind", "labels"}:
            raise InputError("a partition structure holds its kind and labels only")
        labels = _unpack(record["labels"], "structure labels", (-1,))
        if labels.dtype != np.int32:
            raise InputError("structure labels are not 32-bit integers")
        return {"kind": kind, "labels": labels}
    items = record.get("items")
    if set(record) != {"kind", "items"} or not isinstance(items, list) or len(items) > MAX_ITEMS:
        raise InputError(f"a {kind} structure holds its kind and a list of items only")
    for item in items:
        if not (isinstance(item, list) and len(item) == 2
                and all(type(v) is int and 0 <= v < 2**31 for v in item)):
            raise InputError(f"structure item {_shown(item)} is not a pair of integers >= 0")
    return {"kind": kind, "items": [tuple(item) for item in items]}


def _group(key: tuple) -> tuple:
    """The group of a unit key ``(dataset, algorithm, params, repeat, fold)``: its repeat's
    folds under cross-validation (fold > 0), every run of its data set (fold 0)."""
    dataset, algorithm, params, repeat, fold = key
    return (dataset, algorithm, params, repeat) if fold else (dataset, algorithm, params)


def fill_stability(keys: Iterable[tuple], outcomes: dict, metrics: Iterable[str]) -> None:
    """Give every finished unit its ``structure-stability`` score, from its group's structures.

    Parameters
    ----------
    keys : iterable of tuple
        Unit keys (:func:`ensemblekit.experiment.journal.unit_key`), in plan order: the
        order of a group's structures, which decides the order of the sums.
    outcomes : dict
        ``{key: outcome}``; each finished outcome (``"error"`` None) holds its
        ``"structure"`` as :func:`structure_record` gives it (checked here again). Its
        ``"scores"`` gain the measure, in place: its model's mean similarity to the other
        finished models of its group (NaN when it is alone).
    metrics : iterable of str
        The comparison's metrics; nothing is done unless one compares structures.

    Raises
    ------
    InputError
        A finished unit without a structure, a damaged one, or a group whose units
        recorded structures of different kinds.
    """
    names = [m for m in metrics if metric_spec(m).inputs == "structure"]
    if not names:
        return
    groups: dict[tuple, list[tuple]] = {}
    for key in keys:
        outcome = outcomes.get(key)
        if outcome is not None and outcome.get("error") is None:
            groups.setdefault(_group(key), []).append(key)
    for members in groups.values():
        structures = [read_structure(outcomes[k].get("structure")) for k in members]
        kinds = {s["kind"] for s in structures}
        if len(kinds) != 1:
            raise InputError(f"the units of {members[0][1]} on {members[0][0]} recorded "
                             f"structures of different kinds ({', '.join(sorted(kinds))})")
        kind = kinds.pop()
        field = "labels" if kind == "partition" else "items"
        shares = stability_shares([s[field] for s in structures], SIMILARITIES[kind])
        for key, share in zip(members, shares):
            for name in names:
                outcomes[key]["scores"][name] = share
