"""``compare --tune``: check the tuned parameters and attach them to the candidates.

The choice inside each training fold is made by
:class:`ensemblekit.experiment.tuning.TunedEstimator` (scikit-learn's ``GridSearchCV`` with
``refit=True``; Weka's ``CVParameterSelection``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ensemblekit import registry
from ensemblekit.errors import UsageError

__all__ = ["tune_candidates"]


def tune_candidates(candidates: list, tune: Sequence[str], tune_cv: int,
                    grid: Sequence[str] = (), own: dict | None = None) -> list:
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

    Returns
    -------
    list of Candidate
        ``candidates`` unchanged when ``tune`` is empty.

    Raises
    ------
    UsageError
        A key tuned twice or also in ``--grid``, ``tune_cv < 2``, or a clustering
        algorithm (it has no accuracy to tune on).
    ProtocolError, ParameterError
        A malformed item or empty grid; a key no compared algorithm has; a value out of
        the parameter's declared range.
    """
    from ensemblekit import experiment

    own = {label: items for label, items in (own or {}).items() if items}
    if not tune and not own:
        return candidates
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
        if spec.task == registry.CLUSTERING:
            raise UsageError(f"--tune is for classifiers; {c.algorithm} is a clustering "
                             "algorithm")
        if spec.task != registry.CLASSIFICATION:
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
        out.append(replace(c, tune=values, tune_cv=tune_cv) if values else c)
    for key in keys:
        if not any(key in c.tune for c in out):
            raise registry.ParameterError(f"--tune {key}: no compared algorithm has this "
                                          "parameter")
    return out

