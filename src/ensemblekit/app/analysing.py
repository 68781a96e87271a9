"""Analyse a finished comparison again from its record, without fitting (``analyse``).

A comparison leaves two records a later analysis can start from:

* its **journal** (``compare --resume RUN.jsonl``), which describes the comparison
  (task, protocol, candidates, data sets and their classes) and holds every unit's
  scores and out-of-fold predictions. Any measure that is a function of the
  predictions (accuracy, kappa, AUC, RMSE, the external clustering indices ...) is
  computed again from them, exactly as the unit computed its own scores: the same
  scorer (:func:`ensemblekit.metrics.score_model`) on the same predictions, class
  probabilities, truth and training prior. The measures of the run itself (times,
  model size) and the internal clustering indices, which need the data, are taken
  as recorded, and only when they were;
* its **scores** (``compare --output SCORES.csv`` or ``.json``), one row per data set,
  algorithm, repeat, fold and metric: only the recorded measures can be analysed,
  and the data sets' sizes are unknown, so the corrected t-test takes the train/test
  ratio of k-fold cross-validation, 1 / (k - 1).

Either way the tables, tests, verdicts and plots are those :func:`compare` draws
(:func:`ensemblekit.app.comparing.comparison_of`), under another ``--baseline``,
``--alpha`` or ``--rope`` if asked. No estimator is built or fitted here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ensemblekit import registry
from ensemblekit.app.common import Notify, _metrics_for, _notifier
from ensemblekit.app.comparing import _check_rope, comparison_of
from ensemblekit.app.configurations import parse_configuration
from ensemblekit.errors import UsageError
from ensemblekit.results import SCORE_COLUMNS, Comparison

#: What an analysis can read, by file name ending.
_JOURNAL, _SCORES = (".jsonl",), (".csv", ".json")


def analyse(path, *, metrics: Sequence[str] = (), baseline: str | None = None,
            alpha: float = 0.05, rope: float | None = None, seed: int | None = None,
            notify: Notify | None = None) -> Comparison:
    """Redraw a comparison's tables and tests from its journal or its scores, fitting nothing.

    Parameters
    ----------
    path : str or os.PathLike
        A journal (``.jsonl``, written by ``compare --resume``) or a scores file
        (``.csv`` or ``.json``, written by ``compare --output``).
    metrics : sequence of str
        The measures to analyse. Default: those the comparison recorded. From a
        journal, any measure of the task computable from predictions can be asked for;
        a measure of the run (``fit-seconds``, ``predict-seconds``, ``model-size``,
        ``structure-stability``, computed again from the recorded structures) or an
        internal clustering index only if recorded. From a scores file, only the
        recorded measures.
    baseline : str, optional
        Label of the algorithm the others are tested against (needed for a grid).
    alpha : float, default=0.05
        Significance level, in (0, 1).
    rope : float, optional
        Bayesian signed-rank test with this region of practical equivalence (see
        :func:`ensemblekit.app.comparing.compare`).
    seed : int, optional
        Seed of the bootstrap intervals and the Bayesian test's sample. Default: the
        journal's seed; 1 for a scores file, which does not record it.
    notify : callable, optional
        Takes each note (units that failed, measures undefined in some fold).

    Returns
    -------
    Comparison
        As :func:`ensemblekit.app.comparing.compare` returns it; ``units`` counts the
        recorded units and ``computed`` is 0.

    Raises
    ------
    UsageError
        An unknown file kind, a measure that cannot be computed from the record, an
        unknown baseline, an unfinished journal.
    ensemblekit.experiment.ProtocolError
        A file that is not a journal (or a scores file), or a damaged record.
    """
    notify = _notifier(notify)
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha must lie strictly between 0 and 1, got {alpha}")
    name = Path(path).name.lower()
    if name.endswith(_JOURNAL):
        recorded = _from_journal(path, metrics, notify)
    elif name.endswith(_SCORES):
        recorded = _from_scores(path, metrics)
    else:
        raise UsageError(f"{path}: analyse reads a journal (.jsonl, from compare --resume) or a "
                         "scores file (.csv or .json, from compare --output)")
    task, protocol, chosen, candidates, names, labelled, scores, failures, picks, seed_ = recorded
    labels = [c.label for c in candidates]
    if baseline is not None:
        baseline = parse_configuration(baseline).label
        if baseline not in labels:
            raise UsageError(f"--baseline {baseline} is not among the compared algorithms "
                             f"({', '.join(labels)})")
    gridded = any(c.grid for c in candidates)
    if gridded and baseline is None:
        raise UsageError("this comparison holds a --grid: give --baseline, the algorithm the "
                         "grid points are measured against")
    if rope is not None:
        _check_rope(rope, len(labels), baseline)
    for f in failures:
        notify(f"note: {f.error}")
    return comparison_of(task, protocol, chosen, candidates, names, labelled, scores, failures,
                         baseline=baseline, alpha=alpha, rope=rope,
                         seed=seed_ if seed is None else seed, gridded=gridded, notify=notify,
                         units=len(scores) // max(1, len(chosen)) + len(failures), computed=0,
                         chosen=picks)


def _recomputable(spec) -> bool:
    """Whether a measure is a function of a unit's predictions and truth alone."""
    return spec.inputs not in ("time", "model", "structure") and not spec.internal


def _from_journal(path, metrics: Sequence[str], notify: Notify) -> tuple:
    """The scores of ``metrics`` over a journal's units, recomputed from their predictions
    where they were not recorded."""
    from ensemblekit.errors import InputError
    from ensemblekit.experiment import Failure, Score
    from ensemblekit.experiment.journal import read_run
    from ensemblekit.experiment.protocol import ProtocolError
    from ensemblekit.experiment.records import unpack_predictions
    from ensemblekit.experiment.stability import fill_stability
    from ensemblekit.metrics import metric_spec, score_model

    run = read_run(path)
    for note in run.notes:
        notify(f"note: {note}")
    doc, protocol, candidates = run.comparison, run.protocol, run.candidates
    task, recorded = doc["task"], list(doc["metrics"])
    chosen = _metrics_for(task, metrics or recorded)
    wanted = [m for m in chosen if m not in recorded]
    for m in wanted:
        if not _recomputable(metric_spec(m)):
            raise UsageError(f"{m} cannot be computed from predictions and {path} did not record "
                             f"it (it records {', '.join(recorded)}); run compare -m {m}")
    datasets = doc["datasets"]
    folds = range(1, protocol.folds + 1) if protocol.kind == "cv" else (0,)
    keys = [(d, r, f, c) for d in datasets for r in range(1, protocol.repeats + 1)
            for f in folds for c in candidates]
    missing = sum((d["name"], c.algorithm, c.params_json, r, f) not in run.records
                  for d, r, f, c in keys)
    if missing:
        raise UsageError(f"{path} holds {len(keys) - missing} of the comparison's {len(keys)} "
                         "units; finish the run first (the same compare with --resume goes on)")
    scores, failures, picks = [], [], {}
    try:  # the recorded structures, compared over each repeat's units as compare compares them
        fill_stability([(d["name"], c.algorithm, c.params_json, r, f) for d, r, f, c in keys],
                       run.records, chosen)
    except InputError as exc:
        raise ProtocolError(f"{path}: {exc}") from None
    for d, r, f, c in keys:
        outcome = run.records[(d["name"], c.algorithm, c.params_json, r, f)]
        params = c.params_json_used(d["n_clusters"])
        if outcome["error"] is not None:
            failures.append(Failure(d["name"], c.label, params, r, f, outcome["error"]))
            continue
        values = dict(outcome["scores"])
        if wanted:
            if outcome.get("packed") is None:
                raise UsageError(f"{path}: the unit of {c.label} on {d['name']} (repeat {r}, fold "
                                 f"{f}) holds no predictions; run the compare again with a new "
                                 "--resume file")
            try:
                _, actual, predicted, proba, prior = unpack_predictions(outcome["packed"], task, d)
            except InputError as exc:
                raise ProtocolError(f"{path}: the record of {c.label} on {d['name']} (repeat {r}, "
                                    f"fold {f}) is damaged ({exc})") from None
            if task == registry.CLUSTERING:
                known = actual >= 0
                values.update(score_model(wanted, truth=actual[known], known=known,
                                          predicted=predicted).values)
            else:
                values.update(score_model(wanted, predicted=predicted, proba=proba, truth=actual,
                                          prior=prior).values)
        for m in chosen:
            scores.append(Score(d["name"], c.label, params, r, f, m, float(values[m]),
                                outcome["seconds"]))
        if outcome.get("chosen") is not None:
            picks[(d["name"], c.label, r, f)] = outcome["chosen"]
    labelled = {d["name"]: d["labelled"] for d in datasets}
    return (task, protocol, chosen, candidates, [d["name"] for d in datasets], labelled, scores,
            failures, picks, protocol.seed)


def _from_scores(path, metrics: Sequence[str]) -> tuple:
    """The scores of a ``--output`` file, checked, as a comparison of their own."""
    from ensemblekit.experiment import Candidate, Failure, Protocol, Score
    from ensemblekit.metrics import metric_spec
    from ensemblekit.readers.scores import read_scores

    rows = read_scores(path, SCORE_COLUMNS)
    recorded = list(dict.fromkeys(r["metric"] for r in rows if r["error"] is None))
    tasks = None
    for m in recorded:
        applies = set(metric_spec(m).tasks)
        tasks = applies if tasks is None else tasks & applies
    if not tasks:
        raise UsageError(f"{path}: its measures ({', '.join(recorded)}) belong to no one task")
    task = next(t for t in (registry.CLASSIFICATION, registry.REGRESSION, registry.CLUSTERING)
                if t in tasks)
    chosen = _metrics_for(task, metrics or recorded)
    for m in chosen:
        if m not in recorded:
            raise UsageError(f"{path} records {', '.join(recorded)}, not {m}; a scores file holds "
                             "no predictions (analyse the compare's --resume journal instead)")
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    labels = list(dict.fromkeys(r["algorithm"] for r in rows))
    params = {}
    for r in rows:
        params.setdefault(r["algorithm"], r["params"])
    cv = any(r["fold"] > 0 for r in rows)
    repeats = max(r["repeat"] for r in rows)
    folds = max(r["fold"] for r in rows) if cv else 10
    if cv and folds < 2:
        raise UsageError(f"{path}: cross-validation rows name fold 1 only")
    protocol = Protocol("cv" if cv else "runs", folds=folds, repeats=repeats)
    candidates = [Candidate(label.split("[")[0].split(":")[0].split("@")[0], {}, label)
                  for label in labels]
    scores, failures, picks = [], [], {}
    for r in rows:
        if r["error"] is not None:
            failures.append(Failure(r["dataset"], r["algorithm"], r["params"], r["repeat"],
                                    r["fold"], r["error"]))
        elif r["metric"] in chosen:
            scores.append(Score(r["dataset"], r["algorithm"], r["params"], r["repeat"], r["fold"],
                                r["metric"], r["value"],
                                0.0 if r["seconds"] is None else r["seconds"]))
        if r.get("chosen"):
            picks[(r["dataset"], r["algorithm"], r["repeat"], r["fold"])] = r["chosen"]
    order = {m: i for i, m in enumerate(chosen)}
    scores.sort(key=lambda s: (names.index(s.dataset), s.repeat, s.fold,
                               labels.index(s.algorithm), order[s.metric]))
    _check_complete(path, scores, failures, names, labels, chosen, protocol)
    return task, protocol, chosen, candidates, names, None, scores, failures, picks, 1


def _check_complete(path, scores, failures, names, labels, metrics, protocol) -> None:
    """Refuse a scores file that lacks some unit's score (a run cut short, a file edited)."""
    folds = range(1, protocol.folds + 1) if protocol.kind == "cv" else (0,)
    have = [(s.dataset, s.algorithm, s.repeat, s.fold, s.metric) for s in scores]
    have += [(f.dataset, f.algorithm, f.repeat, f.fold, m) for f in failures for m in metrics]
    if len(set(have)) != len(have):
        twice = next(k for k in have if have.count(k) > 1)
        raise UsageError(f"{path} holds the score of {twice[1]} on {twice[0]} (repeat {twice[2]}, "
                         f"fold {twice[3]}, {twice[4]}) twice")
    want = len(names) * len(labels) * protocol.repeats * len(folds) * len(metrics)
    if len(have) != want:
        raise UsageError(f"{path} holds {len(have)} of the {want} scores its data sets, "
                         "algorithms, repeats and folds make; analyse needs every one")
