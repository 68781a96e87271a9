"""How a run's units are grouped into tasks for the workers (see :mod:`ensemblekit.experiment.runner`).

A task carries its data set to the worker that runs it, so units of one data set share
tasks: :func:`_batches` cuts a plan into about 8 tasks per worker, and a journaled
parallel run forms its tasks lazily by the units' measured costs (:func:`_timed_batches`
with :class:`_UnitCosts`), so that each finished unit reaches the journal soon.
"""

from __future__ import annotations


def _batches(todo: list[int], units: list, n_workers: int) -> list[list[int]]:
    """Group units into tasks: consecutive units of one data set, about 8 tasks per worker.

    Shipping a data set to a worker costs about as much as a small unit, so a
    parallel run sends each data set once per batch rather than once per unit.
    A serial run keeps one unit per task (finest resume granularity).
    """
    if n_workers == 1:
        return [[i] for i in todo]
    size = max(1, -(-len(todo) // (8 * n_workers)))
    batches: list[list[int]] = []
    for i in todo:
        last = batches[-1] if batches else None
        if last and len(last) < size and units[last[0]].data_index == units[i].data_index:
            last.append(i)
        else:
            batches.append([i])
    # largest data sets first (stable), so no worker is left with a long batch at the end
    return sorted(batches, key=lambda b: -units[b[0]].data_size)


#: Expected seconds of work per task of a journaled parallel run: units of one data set
#: and candidate whose measured cost is small share a task, so dispatching tiny units
#: costs little, and a killed run loses at most about this much work per task under way.
_JOURNAL_TASK_SECONDS = 0.5


class _UnitCosts:
    """Mean seconds per unit of each (data set, candidate), learnt from finished units."""

    def __init__(self):
        self._sums: dict[tuple[int, int], list[float]] = {}

    def add(self, unit, seconds: float) -> None:
        entry = self._sums.setdefault((unit.data_index, unit.candidate), [0.0, 0])
        entry[0] += seconds
        entry[1] += 1

    def estimate(self, unit) -> float:
        """Mean seconds so far; infinity while no unit of the pair has finished."""
        entry = self._sums.get((unit.data_index, unit.candidate))
        return entry[0] / entry[1] if entry else float("inf")


def _timed_batches(todo: list[int], units: list, costs: _UnitCosts, budget: float):
    """Yield tasks lazily: consecutive units of one data set whose estimated seconds add up
    to at most ``budget``; a unit of unknown or large cost goes alone.

    The estimates are read when each task is formed, so they improve as the run goes.
    """
    batch: list[int] = []
    spent = 0.0
    for i in todo:
        cost = costs.estimate(units[i])
        if batch and (units[batch[0]].data_index != units[i].data_index or spent + cost > budget):
            yield batch
            batch, spent = [], 0.0
        batch.append(i)
        spent += cost
        if spent >= budget:
            yield batch
            batch, spent = [], 0.0
    if batch:
        yield batch
