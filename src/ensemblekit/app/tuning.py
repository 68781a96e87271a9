"""``compare --tune``: check the tuned parameters and attach them to the candidates.

The choice inside each training fold is made by
:class:`ensemblekit.experiment.tuning.TunedEstimator` (scikit-learn's ``GridSearchCV`` with
``refit=True``; Weka's ``CVParameterSelection``); in each clustering run, by
:class:`ensemblekit.experiment.tuning.TunedClusterer` on the internal index ``--tune-by``
names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ensemblekit import registry
from ensemblekit.errors import UsageError

__all__ = ["tune_candidates"]


def tune_candidates(candidates: list, tune: Sequence[str], tune_cv: int,
                    grid: Sequence[str] = (), own: dict | None = None,
                    tune_by: str | None = None) -> list:
    """Give every candidate whose algorithm has a ``--tune`` key that key's values.

    Parameters
    ----------
    candidates : list of ensemblekit.experiment.Candidate
    tune : sequence of str
        ``--tune`` items, parsed as ``--grid`` items
        (:func:`ensemblekit.experiment.parse_grid`).
    tune_cv : int
        Inner folds, >= 2.
    grid : sequence of str
        The ``--grid`` items (a key may not be both gridded and tuned).
    own : dict, optional
        ``{configuration label: {key: range text}}``: the ``tune.KEY=RANGE`` settings of
        a named configuration (:mod:`ensemblekit.app.configurations`), for its candidates
        alone; they win over ``tune`` for the same key, and the key must be one of the
        algorithm's parameters.
    tune_by : str, optional
        The internal index that chooses a clusterer's values in each run
        (:class:`ensemblekit.experiment.tuning.TunedClusterer`); needed to tune clusterers,
        refused for classifiers (their inner folds score accuracy).

    Returns
    -------
    list of Candidate
        ``candidates`` unchanged when ``tune`` is empty.

    Raises
    ------
    UsageError
        A key tuned twice or also in ``--grid``, ``tune_cv < 2``, a clusterer without
        ``tune_by`` (or ``tune_by`` not an internal index), ``tune_by`` for a classifier,
        or a regression algorithm.
    ProtocolError, ParameterError
        A malformed item or empty grid; a key no compared algorithm has; a value out of
        the parameter's declared range.
    """
    from ensemblekit import experiment

    own = {label: items for label, items in (own or {}).items() if items}
    if not tune and not own:
        if tune_by is not None:
            raise UsageError("--tune-by names the index that chooses --tune's values; give --tune")
        return candidates
    if tune_by is not None:
        _check_index(tune_by)
    if tune_cv < 2:
        raise UsageError(f"--tune-cv must be >= 2, got {tune_cv}")
    items = [experiment.parse_grid(item) for item in tune]
    keys = [k for k, _ in items]
    if len(set(keys)) != len(keys):
        raise UsageError("a --tune parameter is given twice")
    both = sorted(set(keys) & {experiment.parse_grid(g)[0] for g in grid})
    if both:
        raise UsageError(f"--tune {both[0]}: also given to --grid; tune it or grid it")
    out = []
    for c in candidates:
        spec = registry.get(c.algorithm)
        mine = [experiment.parse_grid(f"{k}={v}") for k, v in own.get(c.configuration, {}).items()]
        if not items and not mine:
            out.append(c)
            continue
        if spec.task == registry.CLUSTERING and tune_by is None:
            raise UsageError(f"{c.algorithm} is a clustering algorithm: its runs hold out no "
                             "rows, so an internal index chooses: give --tune-by INDEX ("
                             + ", ".join(_internal_indices()) + ")")
        if spec.task == registry.CLASSIFICATION and tune_by is not None:
            raise UsageError(f"--tune-by is for clusterers; {c.algorithm}'s inner folds choose "
                             "by accuracy")
        if spec.task == registry.REGRESSION:
            raise UsageError(f"--tune is for classifiers; {c.algorithm} is a regression "
                             "algorithm (its inner folds score accuracy)")
        values = {}
        for key, texts in [*items, *mine]:
            where = f"{c.configuration}: tune.{key}" if (key, texts) in mine else f"--tune {key}"
            if key not in spec.param_names:
                if (key, texts) in mine:
                    raise registry.ParameterError(f"{where}: {spec.name} has no such parameter; "
                                                  f"valid keys: {', '.join(spec.param_names)}")
                continue
            if key in c.grid:
                raise UsageError(f"{where}: also given to --grid; tune it or grid it")
            param = spec.params[spec.param_names.index(key)]
            try:
                values[key] = [param.parse(t) for t in texts]
            except registry.ParameterError as exc:
                raise registry.ParameterError(f"{where}: {exc}") from None
        out.append(replace(c, tune=values, tune_cv=tune_cv, tune_by=tune_by or "") if values
                   else c)
    for key in keys:
        if not any(key in c.tune for c in out):
            raise registry.ParameterError(f"--tune {key}: no compared algorithm has this "
                                          "parameter")
    return out


def _internal_indices() -> list[str]:
    from ensemblekit.metrics import METRICS

    return [name for name, spec in METRICS.items() if spec.internal]


def _check_index(name: str) -> None:
    """Refuse a ``--tune-by`` that is not an internal clustering index."""
    if name not in _internal_indices():
        raise UsageError(f"--tune-by {name}: not an internal index; choose one of "
                         f"{', '.join(_internal_indices())}")
