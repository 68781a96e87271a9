"""Running the units of a plan: in this process, on local worker processes, or on a Dask cluster.

A :class:`Runner` runs the units that :func:`ensemblekit.experiment.protocol.plan`
cut a protocol into, and turns their outcomes into long-format :class:`Score`
rows (or a :class:`Failure` for a unit that raised). Units are independent and
fully seeded, so a run gives the same scores whatever runs it:

* serially, in this process (``n_jobs=1``);
* on local worker processes (``n_jobs`` > 1), which end when this process ends
  (:mod:`ensemblekit._workers`): on Linux forked, with the data sets and the algorithms'
  compiled kernels in memory, from a process forked from this one at the start
  (:class:`ensemblekit.experiment.forking.Zygote`), elsewhere started through joblib's
  loky backend;
* on the workers of a Dask distributed cluster through joblib's dask backend
  (``scheduler="tcp://host:8786"``).

Every unit runs on one core (:class:`OneCore`): BLAS/OpenMP reductions then add
up in the same order everywhere, so results are identical bit for bit.

A runner is made for one comparison and holds what that comparison needs
between :meth:`Runner.prestart`, :meth:`Runner.start` and :meth:`Runner.run`: the
connection to the Dask scheduler, a connection failure to report, the zygote of the forked workers,
and the one-core pin of the thread that runs units serially. Two runners share none of it.

Nothing here prints; the resume journal's file is handled by
:mod:`ensemblekit.experiment.journal`; progress is reported through a callback.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ensemblekit import registry
from ensemblekit._workers import worker_count
from ensemblekit.dataset import known_class
from ensemblekit.errors import InputError, interruption
from ensemblekit.experiment import forking
from ensemblekit.experiment.batching import (
    _JOURNAL_TASK_SECONDS,
    _batches,
    _timed_batches,
    _UnitCosts,
)
from ensemblekit.experiment.journal import Journal, JournalLock, run_fingerprint, unit_key
from ensemblekit.experiment.noise import noised_rows
from ensemblekit.experiment.onecore import OneCore
from ensemblekit.experiment.protocol import Candidate, Plan, Protocol, ProtocolError, Unit
from ensemblekit.experiment.records import (
    clusters_used,
    describe_comparison,
    judged_truth,
    unpack_outcomes,
)
from ensemblekit.experiment.scheduler import (
    WorkerWatch,
    check_address,
    close_lost,
    connect,
    connect_timeout,
    quiet_dask_logs,
    require_distributed,
    wait_for_worker,
)
from ensemblekit.experiment.stability import fill_stability, unit_structure


@dataclass(frozen=True)
class Score:
    """One metric value of one unit of work (the long format of ``--output``).

    Attributes
    ----------
    dataset : str
        Data set name (file stem).
    algorithm : str
        Display label: the registry name, with the grid parameters in brackets
        for a grid point (``iekm[max_features=0.3]``).
    params : str
        The algorithm's resolved parameters as compact JSON with sorted keys.
    repeat : int
        Repeat (CV) or run (clustering) number, from 1.
    fold : int
        Fold number from 1; 0 for clustering runs.
    metric : str
        Metric name (see :data:`ensemblekit.metrics.METRICS`); NaN value when
        the unit failed.
    value : float
        The score.
    seconds : float
        Wall time of the unit (fit and score), the only field that differs
        between two runs with the same seed (with the values of the time
        metrics, ``fit-seconds`` and ``predict-seconds``).
    """

    dataset: str
    algorithm: str
    params: str
    repeat: int
    fold: int
    metric: str
    value: float
    seconds: float = 0.0


@dataclass(frozen=True)
class Failure:
    """A unit that raised: where, the error in one line, and whether it was an
    :class:`~ensemblekit.errors.InputError` (bad data or parameters for the estimator)
    rather than a failure of the algorithm (any other exception)."""

    dataset: str
    algorithm: str
    params: str
    repeat: int
    fold: int
    error: str
    bad_input: bool = False


@dataclass(frozen=True)
class RunResult:
    """Everything a protocol produced.

    Attributes
    ----------
    scores : list of Score
        In plan order (data set, repeat, fold, candidate, metric); failed units
        are absent.
    failures : list of Failure
        Units that raised, in plan order.
    computed : int
        Units computed by this call (the others came from the resume journal).
    predictions : list of UnitPredictions
        With ``keep_predictions``: each test unit's predictions, in plan order
        (failed units absent); empty otherwise.
    notes : list of str
        What reading the resume journal did that the user should know (a
        record cut short by a killed run, dropped).
    """

    scores: list
    failures: list
    computed: int
    predictions: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    chosen: dict = field(default_factory=dict)  # (data set, label, repeat, fold) -> --tune pick


@dataclass(frozen=True)
class UnitPredictions:
    """What one cross-validation fold predicted, for a report over all folds.

    Attributes
    ----------
    dataset, algorithm : str
    repeat, fold : int
    test : ndarray of shape (n_test,)
        Row indices of the fold's test instances in the data set.
    predicted : ndarray of shape (n_test,)
        Predicted class codes (the first arg-max of ``proba``) or values.
    proba : ndarray of shape (n_test, n_classes) or None
        Class probabilities (classification).
    prior : ndarray of shape (n_classes,) or float
        The fold's training class counts, or its training targets' mean.
    """

    dataset: str
    algorithm: str
    repeat: int
    fold: int
    test: np.ndarray
    predicted: np.ndarray
    proba: np.ndarray | None
    prior: np.ndarray | float


class _ClusterLost(Exception):
    """The Dask cluster of a run has no worker left, or no scheduler (the message says which)."""


class Runner:
    """Runs the units of a plan serially, on local worker processes, or on a Dask cluster.

    Make one runner per comparison: call :meth:`prestart` before reading the
    data and :meth:`start` after (both optional), then :meth:`run`. The runner
    holds the Dask client that :meth:`prestart` connects and :meth:`run` uses and
    closes, a connection failure of :meth:`prestart` for :meth:`run` to report, the
    zygote :meth:`prestart` forks and :meth:`run` ends, and the one-core pin
    (:class:`OneCore`) of the thread it runs units in; nothing is shared with another
    runner. :meth:`close` ends what a run that never came leaves.

    Parameters
    ----------
    n_jobs : int, default=1
        Worker processes, with joblib's meaning of negative values: -1 all cores,
        -2 all but one, ... (see :func:`worker_count` for the range): forked on Linux
        (:mod:`ensemblekit.experiment.forking`), joblib's loky workers elsewhere.
        Results do not depend on it. The workers end when this process ends, even
        when it is killed (see :mod:`ensemblekit._workers`). Ignored with
        ``scheduler``.
    scheduler : str, optional
        Address of a Dask distributed scheduler (``tcp://host:8786``); the units
        then run on its workers through joblib's dask backend (needs the
        ``distributed`` package). Results are identical to a serial run. The
        connection, and each wait for a worker when the scheduler has none, end
        after the connection timeout (see
        :func:`ensemblekit.experiment.scheduler.connect_timeout`).

    Raises
    ------
    ValueError
        If ``n_jobs`` is out of range (see :func:`worker_count`) and no
        scheduler is given.
    ProtocolError
        With ``scheduler``: a malformed address, a bad ``ENSEMBLEKIT_DASK_TIMEOUT``,
        or no ``distributed`` package (before anything connects).
    """

    def __init__(self, n_jobs: int = 1, scheduler: str | None = None):
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self._local_workers = worker_count(n_jobs) if scheduler is None else None
        #: Seconds a run waits for a worker when the scheduler has none (the connection timeout).
        self._grace = None
        if scheduler is not None:  # refused at once, before any data is read
            check_address(scheduler)
            require_distributed()
            self._grace = connect_timeout()
        self._pin = OneCore()
        #: Local workers are forked (from a :class:`forking.Zygote`), not started by loky.
        self._fork = self._local_workers not in (None, 1) and forking.fork_available()
        self._forked: forking.Zygote | None = None
        self._keep = False  # set by run(keep_predictions=...)
        self._client = None
        #: A connection that :meth:`prestart` could not make: the :meth:`run` that
        #: follows reports it at once instead of waiting out a second connection timeout.
        self._unreachable: BaseException | None = None
        self._client_lock = threading.Lock()
        #: The watch of the cluster's workers while :meth:`run` uses a Dask client.
        self._watch: WorkerWatch | None = None

    # ------------------------------------------------------------------ public
    def prestart(self, wait: float = 2.0, algorithms: Sequence[str] | None = None):
        """Start the workers and their imports in the background (a joinable thread, or None).

        Called before the data sets are read, so that the worker processes start
        and import scikit-learn while the main process parses files. Where workers
        are forked, it forks their zygote (:class:`forking.Zygote`), which imports
        the algorithms' modules and starts numba meanwhile: call it while this
        process has no other thread. Otherwise it returns
        once joblib has dispatched the warm-up, or once the Dask client is
        connected and about to send it (or after ``wait`` seconds): importing
        joblib or distributed and connecting to the scheduler hold the
        interpreter lock, so doing them while the main thread parses files would
        delay both, and the workers would start their imports later. Failures are
        ignored here: :meth:`run` reports them.

        Parameters
        ----------
        wait : float, default=2.0
            At most this many seconds to wait for the hand-over (connecting to a
            reachable scheduler takes well under one here); past it, reading the
            data goes ahead.
        algorithms : sequence of str, optional
            Registry names of the algorithms the run will fit: the workers import
            their modules only (each worker starts on one core while the data are
            read, so every module it need not import shortens the start). Default:
            every registered algorithm's.

        Returns
        -------
        threading.Thread or None
            The warm-up, None when there is nothing to join (one local worker, or
            forked workers).
            Join it before :meth:`run`: if the scheduler could not be reached,
            ``run`` then reports that failure at once instead of trying to
            connect again.
        """
        workers = self._local_workers
        if self._fork:
            if self._forked is None:
                self._forked = forking.Zygote(workers, functools.partial(
                    _prepare_zygote, _unit_modules(algorithms)))
            return None
        if workers == 1:
            return None
        scheduler = self.scheduler
        self._unreachable = None  # a failure from an earlier prestart is stale now
        modules = _unit_modules(algorithms)
        handed_over = threading.Event()

        def warm():
            try:
                if scheduler is not None:
                    try:
                        client = self._dask_client()
                    except (ProtocolError, OSError) as exc:
                        self._unreachable = exc  # run() reports it rather than trying again
                        return
                    handed_over.set()  # the request is small: it leaves while the files are read
                    client.run(_warm_worker, modules)
                else:
                    from joblib import Parallel, delayed

                    from ensemblekit._workers import parallel_options

                    # a generator: the call dispatches the tasks and returns; the same
                    # options as run() passes, so that run() reuses these workers
                    replies = Parallel(n_jobs=workers, return_as="generator", **parallel_options())(
                        delayed(_warm_worker)(modules) for _ in range(workers))
                    handed_over.set()
                    for _ in replies:
                        pass
            except Exception:  # noqa: BLE001 - only an optimisation
                pass
            finally:
                handed_over.set()

        thread = threading.Thread(target=warm, name="ensemblekit-prestart", daemon=True)
        thread.start()
        handed_over.wait(wait)
        return thread

    def start(self, datasets: Sequence, work: Plan, protocol: Protocol) -> bool:
        """Hand the data sets to the zygote of forked workers; say whether units run elsewhere.

        The zygote (:class:`forking.Zygote`, forked by :meth:`prestart`, or now if it
        was not) fits every algorithm of ``work`` once on a few rows of the first data
        set it runs on, untimed, so that its compiled kernels are loaded before the
        workers are forked from it with ``datasets`` in their memory. This returns at
        once. Call it after reading the data; if :meth:`prestart` was not called, while
        this process has no other thread. :meth:`run` calls it if it was not.

        Parameters
        ----------
        datasets, work, protocol
            As :meth:`run` will take them.

        Returns
        -------
        bool
            True if :meth:`run` sends the units to other processes (forked, loky or Dask
            workers), False if it runs them in this process.

        Raises
        ------
        OSError
            If the zygote cannot be forked.
        """
        if self._fork and (self._forked is None or not self._forked.started):
            if self._forked is None:
                self.prestart(algorithms=[c.algorithm for c in work.candidates])
            self._forked.start(datasets, functools.partial(
                _warm_kernels, datasets, _warm_picks(work), protocol.n_clusters, self._pin))
        return self.scheduler is not None or self._local_workers != 1

    def run(
        self,
        datasets: Sequence,
        work: Plan,
        protocol: Protocol,
        metrics: Sequence[str],
        *,
        resume: str | os.PathLike | None = None,
        on_unit_done: Callable[[], None] | None = None,
        keep_predictions: bool = False,
    ) -> RunResult:
        """Run a protocol; record every unit's scores, or its error.

        Parameters
        ----------
        datasets : sequence of ensemblekit.data.Dataset
        work : Plan
            From :func:`ensemblekit.experiment.protocol.plan` on the same data
            sets and protocol.
        protocol : Protocol
        metrics : sequence of str
            Metric names (keys of :data:`ensemblekit.metrics.METRICS`).
        resume : path or JournalLock, optional
            JSON-lines journal (:class:`ensemblekit.experiment.journal.Journal`),
            locked against any other writer for the run (or already locked by
            the caller: :class:`ensemblekit.experiment.journal.JournalLock`):
            finished units found there are not computed again; each unit
            computed now is appended and flushed as soon as it finishes (in a
            parallel run, as soon as its task returns: units whose measured
            cost is small share a task of about half a second of work), so a
            killed run loses at most the work under way. Failed units are tried
            again.
        on_unit_done : callable, optional
            Called with no argument after each unit finishes (for a progress bar).
        keep_predictions : bool, default=False
            Return every cross-validation unit's predictions too (see
            :class:`UnitPredictions`). With ``resume``, a finished unit's predictions are
            read from the journal, and a unit recorded without them is computed again.

        Returns
        -------
        RunResult

        Raises
        ------
        ProtocolError
            If the journal is not a regular file, is in use by another run,
            belongs to another comparison, holds a damaged record or cannot be
            written (a full disk: what it holds is kept); if the scheduler cannot be
            reached or is not a Dask scheduler; or when the scheduler has had no
            worker (or no answer) for the connection timeout during the run: the
            units finished by then stay in the journal, and the message says how
            many.
        """
        # a journal records every unit's predictions, for `ensemblekit analyse`
        self._keep = keep_predictions or resume is not None
        units = work.units
        names = [ds.name for ds in datasets]
        keys = [unit_key(names[u.data_index], work.candidates[u.candidate], u) for u in units]
        outcomes: dict[tuple, dict] = {}
        journal = None
        if resume is not None:
            fingerprint = run_fingerprint(datasets, work, protocol, metrics)
            comparison = describe_comparison(datasets, work, protocol, metrics)
            journal = Journal(resume if isinstance(resume, JournalLock) else Path(resume),
                              fingerprint, set(keys), metrics, comparison)
            outcomes.update({k: v for k, v in journal.done().items() if v.get("error") is None})
            if keep_predictions:
                unpack_outcomes(outcomes, comparison, journal.path)
        todo = [i for i, k in enumerate(keys) if k not in outcomes]
        finished = False
        try:  # the journal (and its lock) and forked workers are closed however the run ends
            if todo:
                self.start(datasets, work, protocol)
            for _ in range(len(units) - len(todo)):
                if on_unit_done is not None:
                    on_unit_done()
            with self._backend() as (n_workers, options):
                self._execute(datasets, work, protocol, metrics, todo, keys, outcomes, journal,
                              self._local_workers if n_workers is None else n_workers,
                              on_unit_done, options)
            finished = True
        except _ClusterLost as lost:
            done = sum(1 for k in keys if outcomes.get(k, {}).get("error", "") is None)
            if journal is None:
                kept = "the run stops (--resume FILE keeps finished units for a later run)"
            else:
                kept = (f"{done} of {len(units)} units are saved in {journal.path}; the same command "
                        "finishes the rest, with or without --scheduler")
            raise ProtocolError(f"{lost}: {kept}") from None
        finally:
            if journal is not None:
                journal.close()
            self._close_forked(killed=not finished)
        fill_stability(keys, outcomes, metrics)  # over the structures of each repeat's units
        scores: list[Score] = []
        failures: list[Failure] = []
        kept: list[UnitPredictions] = []
        chosen: dict[tuple, dict] = {}
        used: dict[int, int] = {}  # a clustering run's n_clusters, by data set (as _score_unit)
        for u, key in zip(units, keys):
            cand = work.candidates[u.candidate]
            outcome = outcomes[key]
            if u.test is None and u.data_index not in used:
                used[u.data_index] = clusters_used(datasets[u.data_index], protocol)
            params_json = cand.params_json_used(used.get(u.data_index) if u.test is None else None)
            if outcome.get("error") is not None:
                failures.append(Failure(key[0], cand.label, params_json, u.repeat, u.fold,
                                        outcome["error"], bool(outcome.get("bad_input"))))
                continue
            for metric in metrics:
                scores.append(Score(key[0], cand.label, params_json, u.repeat, u.fold, metric,
                                    float(outcome["scores"][metric]), float(outcome["seconds"])))
            if outcome.get("chosen") is not None:
                chosen[(key[0], cand.label, u.repeat, u.fold)] = outcome["chosen"]
            if keep_predictions and u.test is not None and outcome.get("predictions") is not None:
                kept.append(UnitPredictions(key[0], cand.label, u.repeat, u.fold,
                                            *outcome["predictions"]))
        return RunResult(scores, failures, len(todo), kept,
                         [] if journal is None else list(journal.notes), chosen)

    def close(self) -> None:
        """Close the Dask client still held (one :meth:`prestart` connected and no
        :meth:`run` used), and end the workers :meth:`start` forked and no :meth:`run`
        used; does nothing otherwise."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        self._close_forked(killed=True)

    def _close_forked(self, killed: bool) -> None:
        """End the forked workers, at once if ``killed`` (the run stopped on an error)."""
        forked, self._forked = self._forked, None
        if forked is not None:
            forked.close(kill=killed)

    # ------------------------------------------------------------------ backends
    @contextlib.contextmanager
    def _backend(self):
        """joblib's default backend, or the dask backend on a distributed cluster.

        Yields ``(workers, options)``: the cluster's thread count (None for the
        default backend, which takes ``n_jobs``) and keyword arguments for
        ``joblib.Parallel``. ``pre_dispatch`` is how many tasks joblib keeps under
        way: loky workers share one queue, where a second task per worker waits
        for whichever worker is free first; the Dask scheduler assigns a task to a
        worker at once, so a second one could wait behind a long task while
        another worker idles at the end of a run: one per worker there. Local
        workers also get :func:`ensemblekit._workers.parallel_options`, so that
        they end with this process; a cluster's workers are the user's and are
        left alone. The Dask client is closed on the way out.
        """
        if self.scheduler is None:
            from ensemblekit._workers import parallel_options

            yield None, {"pre_dispatch": "2*n_jobs", **parallel_options()}
            return
        require_distributed()  # the dask backend of joblib needs it
        from joblib import parallel_config

        try:
            failed, self._unreachable = self._unreachable, None
            if failed is not None:
                raise failed
            client = self._dask_client()
        except OSError as exc:
            raise ProtocolError(f"cannot reach the Dask scheduler at {self.scheduler}: "
                                f"{exc}") from None
        try:
            wait_for_worker(client, self.scheduler, self._grace)
            workers = max(1, sum(client.nthreads().values()))
            # a worker that dies makes Dask's client and comms log warnings and tracebacks
            # ("Couldn't gather ... rescheduling", CommClosedError); the run reports a lost
            # cluster in one line of its own instead
            import logging

            with quiet_dask_logs(logging.CRITICAL + 1), \
                    WorkerWatch(client, self.scheduler, self._grace) as watch:
                self._watch = watch
                with parallel_config(backend="dask", client=client):
                    yield workers, {"pre_dispatch": "n_jobs"}
        finally:
            lost = self._cluster_lost()
            self._watch = None
            with self._client_lock:
                if self._client is client:
                    self._client = None
            if lost is None:
                client.close()
            else:
                close_lost(client)

    def _dask_client(self):
        """This runner's client of its scheduler (shared by :meth:`prestart` and :meth:`run`)."""
        with self._client_lock:
            client = self._client
            if client is None or client.status in ("closing", "closed"):
                client = connect(self.scheduler)
                self._client = client
            return client

    def _cluster_lost(self) -> str | None:
        """Why the cluster of this run can no longer run units (see :class:`WorkerWatch`), or None."""
        watch = self._watch
        if watch is None:
            return None
        if watch.verdict is None and watch.client.status != "running":  # reconnecting or closed
            return f"the connection to the Dask scheduler at {self.scheduler} was lost"
        return watch.verdict

    # ------------------------------------------------------------------ execution
    def _execute(self, datasets, work, protocol, metrics, todo, keys, outcomes, journal, workers,
                 on_unit_done, options):
        """Run the units ``todo`` on ``workers`` workers; a unit lost with a dead worker is tried
        once more on its own.

        ``options`` are keyword arguments of ``joblib.Parallel`` for the backend (see
        :meth:`_backend`).
        """
        metrics = tuple(metrics)
        costs = None
        if journal is None:
            batches = _batches(todo, work.units, workers)
        elif workers == 1:
            batches = [[i] for i in todo]  # in this process: each unit is recorded as it finishes
        else:
            # workers return whole tasks: cheap units share one (see _timed_batches), so that
            # the journal still gets every unit within about a second of its finishing
            costs = _UnitCosts()
            batches = _timed_batches(todo, work.units, costs, _JOURNAL_TASK_SECONDS)
        lost = self._dispatch(datasets, work, protocol, metrics, batches, todo, keys, outcomes,
                              journal, workers, on_unit_done, costs, options)
        if lost:
            # a worker died (killed, out of memory, crashed): give every unfinished unit a
            # second chance alone, so one bad unit cannot take its neighbours down with it
            retry = sorted(lost)
            lost = self._dispatch(datasets, work, protocol, metrics, [[i] for i in retry], retry,
                                  keys, outcomes, journal, workers, on_unit_done, None, options)
        for i, reason in lost.items():
            outcomes[keys[i]] = {"scores": {}, "seconds": 0.0,
                                 "error": f"{_where(work, datasets, i)}: {reason}"}
            if on_unit_done is not None:
                on_unit_done()

    def _dispatch(self, datasets, work, protocol, metrics, batches, todo, keys, outcomes, journal,
                  workers, on_unit_done, costs, options) -> dict[int, str]:
        """Run batches (a list or a lazy iterable) through joblib; return ``{unit: reason}`` for
        units lost with a worker. ``costs`` (optional) learns each finished unit's seconds;
        ``options`` are more keyword arguments of ``joblib.Parallel`` (see :meth:`_backend`)."""
        # A task is one tuple that carries its data set. joblib's dask backend would
        # otherwise scatter the data set to a single worker (or broadcast it, which Dask's
        # Active Memory Manager undoes within seconds), tie every task of that data set
        # to that worker, and leave the others idle until work stealing moves tasks over.
        # Data sent with each task costs little: a task holds many units (see _batches).
        # The pin goes with each task: in this thread (serial) it is the pin already
        # held, so units do not pin again; sent to a worker it arrives unpinned.
        pin = self._pin
        forked = self._forked
        # forked workers hold the data sets already: a task names its data set by index
        tasks = (
            ((batch, forking.Inherited(work.units[batch[0]].data_index) if forked is not None
              else datasets[work.units[batch[0]].data_index],
              [work.candidates[work.units[i].candidate] for i in batch],
              [work.units[i] for i in batch]), protocol.n_clusters, metrics, pin, self._keep)
            for batch in batches
        )
        pending = set(todo)
        if forked is not None:
            # a worker that finishes gets the next task; two per worker are under way
            results = forked.unordered(_run_batch, tasks, 2 * forked.n_workers)
        elif workers == 1 and self.scheduler is None:
            # one task after the other in this thread, as joblib runs them with one worker
            # (without importing joblib: a tenth of a second of a serial run)
            results = (_run_batch(*args) for args in tasks)
        else:
            from joblib import Parallel, delayed

            # units are already grouped in batches: joblib passes them on one by one and
            # keeps ``pre_dispatch`` of them under way (see _backend), so a worker that
            # finishes gets the next one (balanced by cost, not by count)
            parallel = Parallel(n_jobs=workers, return_as="generator_unordered", batch_size=1,
                                **options)
            results = parallel(delayed(_run_batch)(*args) for args in tasks)
        with pin.pinned() if workers == 1 else contextlib.nullcontext():  # serial: pin once
            try:
                iterator = iter(results)
            except Exception:
                why = self._cluster_lost()
                if why is None:
                    raise
                raise _ClusterLost(why) from None
            while True:
                try:
                    results = next(iterator)
                except StopIteration:
                    break
                except Exception as exc:  # noqa: BLE001 - a worker died; its units are retried
                    if interruption(exc) is not None:
                        raise
                    why = self._cluster_lost()
                    if why is not None:  # no worker is left to retry them on
                        raise _ClusterLost(why) from None
                    text = " ".join(str(exc).split())[:200]
                    reason = f"worker lost: {type(exc).__name__}: {text}"
                    # a pool that lost a worker runs nothing more: the retry starts loky's
                    # workers (forking now would copy the locks of this process's threads)
                    self._close_forked(killed=True)
                    return {i: reason for i in sorted(pending)}
                try:
                    for i, outcome in results:
                        outcomes[keys[i]] = outcome
                        pending.discard(i)
                        if costs is not None:
                            costs.add(work.units[i], float(outcome.get("seconds", 0.0)))
                        if journal is not None:
                            unit = work.units[i]
                            journal.append(keys[i], outcome,  # a full disk raises
                                           work.candidates[unit.candidate].configuration,
                                           judged_truth(datasets[unit.data_index], unit, outcome))
                        if on_unit_done is not None:
                            on_unit_done()
                except BaseException:
                    _abandon(iterator)
                    raise
        return {}


def _abandon(iterator) -> None:
    """Stop joblib's result generator on purpose, without its warning that the tasks still
    under way were cancelled (the run is ending with an error of its own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


def run(
    datasets: Sequence,
    work: Plan,
    protocol: Protocol,
    metrics: Sequence[str],
    *,
    n_jobs: int = 1,
    scheduler: str | None = None,
    resume: str | os.PathLike | None = None,
    on_unit_done: Callable[[], None] | None = None,
) -> RunResult:
    """Run a protocol with a runner of its own (no :meth:`Runner.prestart`).

    ``Runner(n_jobs, scheduler).run(datasets, work, protocol, metrics, resume=resume,
    on_unit_done=on_unit_done)``: see :class:`Runner` and :meth:`Runner.run` for the
    parameters.

    Returns
    -------
    RunResult

    Raises
    ------
    ProtocolError
        If the journal cannot be used (see :meth:`Runner.run`), or the scheduler
        cannot be reached.
    ValueError
        If ``n_jobs`` is out of range (see :func:`worker_count`), before any work.
    """
    return Runner(n_jobs, scheduler).run(datasets, work, protocol, metrics, resume=resume,
                                         on_unit_done=on_unit_done)


# ---------------------------------------------------------------------- tasks
def _where(work, datasets, i) -> str:
    u = work.units[i]
    place = f"repeat {u.repeat}, fold {u.fold}" if u.fold else f"run {u.repeat}"
    return f"{work.candidates[u.candidate].label} on {datasets[u.data_index].name} ({place})"


# ---------------------------------------------------------------------- in a worker
def _run_batch(task, n_clusters, metrics, pin: OneCore, keep: bool = False):
    """Run one task's units, on one core (see :class:`OneCore`), in the process that got it.

    The task's data set is the object, or in a forked worker its index
    (:class:`ensemblekit.experiment.forking.Inherited`)."""
    indices, ds, cands, units = task
    if isinstance(ds, forking.Inherited):
        ds = ds.get()
    shared = _Shared.of(ds)
    with pin.pinned():
        return [_run_unit(i, ds, c, u, n_clusters, metrics, keep, shared)
                for i, c, u in zip(indices, cands, units)]


class _Shared:
    """What the units of one task on one data set have in common, derived once per task:
    the class vector in the form the estimators take, its known rows, and each
    candidate's estimator factory (:func:`ensemblekit.registry.estimator_factory`)."""

    #: the live instances by ``id`` of their data set, with a weak reference to it
    _known: dict[int, tuple[weakref.ref, _Shared]] = {}

    def __init__(self, ds):
        self._ds = weakref.ref(ds)  # kept by its caller; the cache above must not keep it
        self._classes: dict[bool, tuple[np.ndarray, np.ndarray]] = {}
        self._makers: dict[tuple, Callable] = {}

    @classmethod
    def of(cls, ds) -> _Shared:
        """The instance of ``ds`` in this process, made on first use: a serial run sends
        one unit per task, and its units of one data set then share their estimator
        factories instead of deriving them again for every fold (issue 30)."""
        found = cls._known.get(id(ds))
        if found is not None and found[0]() is ds:
            return found[1]
        for key in [k for k, (ref, _) in cls._known.items() if ref() is None]:
            del cls._known[key]  # a data set gone: its id may be reused
        shared = cls(ds)
        cls._known[id(ds)] = (weakref.ref(ds), shared)
        return shared

    @property
    def ds(self):
        return self._ds()

    def classes(self, regression: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(y, known)``: float targets with NaN = missing (regression) or int64 class
        codes with -1 = missing, and the mask of the rows whose class is known."""
        found = self._classes.get(regression)
        if found is None:
            y = np.asarray(self.ds.y, dtype=np.float64 if regression else np.int64)
            found = self._classes[regression] = (y, known_class(y))
        return found

    def maker(self, cand: Candidate, params: dict, bare: bool) -> Callable:
        """The estimator factory of ``cand`` with ``params`` (built on first use; a
        failure to build is raised again for every unit that asks, as each would)."""
        key = (cand.algorithm, repr(sorted(params.items())), bare)
        found = self._makers.get(key)
        if found is None:
            found = self._makers[key] = registry.estimator_factory(
                cand.algorithm, self.ds.schema, params, bare=bare)
        return found


def _unit_modules(algorithms: Sequence[str] | None = None) -> tuple[str, ...]:
    """The modules a worker imports before its first unit: what the estimator factories of
    ``algorithms`` (registry names; every registered one when None) import, as the units of
    their task build them (bare for cross-validation), and what every unit uses. scikit-learn is
    not among them when no algorithm needs it."""
    names = registry.ALGORITHMS if algorithms is None else algorithms
    modules: dict[str, None] = {}
    for name in names:
        spec = registry.get(name)
        modules.update(dict.fromkeys(_factory_modules(spec, spec.task != registry.CLUSTERING)))
    return (*modules, "ensemblekit.metrics", "threadpoolctl")


def _factory_modules(spec, bare: bool) -> tuple[str, ...]:
    """The modules :func:`ensemblekit.registry.estimator_factory` imports for ``spec``: the
    model class's when the estimator goes bare on coded rows (``fit_coded``), else the
    estimator's, with the pipeline's and the preprocessing's unless it goes bare."""
    if bare and spec.encode == "codes" and spec.model and hasattr(spec.model_class(), "fit_coded"):
        return (spec.model.split(":")[0],)
    modules = (spec.estimator.split(":")[0],)
    if spec.encode == "codes" and bare:
        return modules
    return (*modules, "sklearn.pipeline", "ensemblekit.preprocessing")


def _warm_worker(modules: Sequence[str] = ()) -> None:
    """Import ``modules``, so a worker's first unit does not pay for them.

    A worker process runs only units, which never read scipy's docstrings, so
    it imports scipy as the command line does (see
    :func:`ensemblekit._imports.plain_scipy_docstrings`): about 0.2 s sooner.
    """
    import importlib

    from ensemblekit._imports import plain_scipy_docstrings

    plain_scipy_docstrings()
    for module in modules or _unit_modules():
        importlib.import_module(module)


def _prepare_zygote(modules: Sequence[str]) -> None:
    """What a :class:`forking.Zygote` does before it has the data sets: import ``modules``
    (:func:`_warm_worker`) and the compiled kernels they declare (``KERNEL_MODULES``), and
    if there are any, start numba's compiler, whose first load of a cached kernel would
    otherwise import and register its lowering modules (numpy's, scipy.linalg's BLAS)."""
    import importlib
    import sys

    _warm_worker(modules)
    kernels = {k: None for m in modules for k in getattr(sys.modules.get(m), "KERNEL_MODULES", ())}
    for module in kernels:
        importlib.import_module(module)
    if kernels:
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()  # what numba's first cache load calls


def _warm_picks(work: Plan) -> list[tuple[Candidate, Unit]]:
    """The first unit of each algorithm of ``work``: what :func:`_warm_kernels` fits."""
    picks: dict[str, tuple[Candidate, Unit]] = {}
    for unit in work.units:
        cand = work.candidates[unit.candidate]
        picks.setdefault(cand.algorithm, (cand, unit))
    return list(picks.values())


def _warm_kernels(datasets, picks, n_clusters: int | None, pin: OneCore) -> None:
    """Fit each algorithm of ``picks`` (:func:`_warm_picks`) once, untimed, on a few rows of
    the data set of its unit (:func:`ensemblekit.experiment.measures.warm_up`), pinned to
    one core, so that its compiled kernels are loaded in this process before workers are
    forked from it.

    A fit that fails is ignored (the units report their own errors); the fits' timing
    warm-ups (``fit_seconds``) are left to the units, under their own keys."""
    with pin.pinned():
        for cand, unit in picks:
            _warm_one(datasets[unit.data_index], cand, unit, n_clusters)


def _warm_one(ds, cand: Candidate, unit: Unit, n_clusters: int | None) -> None:
    """:func:`_warm_kernels` for one algorithm, on the rows ``unit`` would fit."""
    from ensemblekit.experiment.measures import warm_up

    shared = _Shared.of(ds)
    spec = registry.get(cand.algorithm)
    params = dict(cand.params)
    try:
        if unit.test is None:  # a clustering run: every row, no class
            if "n_clusters" in spec.param_names:
                params["n_clusters"] = n_clusters or 2
            make = functools.partial(shared.maker(cand, params, False), unit.random_state)
            warm_up(("fork", cand.algorithm), make, ds.X)
            return
        y, known = shared.classes(spec.task == registry.REGRESSION)
        make = functools.partial(shared.maker(cand, params, True), unit.random_state)
        warm_up(("fork", cand.algorithm), make, ds.X[known], y[known])
    except Exception as exc:  # noqa: BLE001 - an estimator that cannot be built: its units say so
        if interruption(exc) is not None:
            raise


def _run_unit(index: int, ds, cand: Candidate, unit: Unit, n_clusters: int | None,
              metrics: tuple[str, ...], keep: bool = False, shared: _Shared | None = None):
    start = time.perf_counter()
    try:
        values, predictions, chosen, structure = _score_unit(
            ds, cand, unit, n_clusters, metrics, keep, shared or _Shared(ds))
    except Exception as exc:  # recorded per unit; the rest of the run goes on
        if interruption(exc) is not None:  # Ctrl-C inside compiled code: stop, as for any other
            raise
        where = f"repeat {unit.repeat}, fold {unit.fold}" if unit.fold else f"run {unit.repeat}"
        text = " ".join(registry.refusal_text(exc, cand.algorithm, ds.schema).split())
        return index, {"scores": {}, "seconds": time.perf_counter() - start,
                       "error": f"{cand.label} failed on {ds.name} ({where}): "
                                f"{type(exc).__name__}: {text}",
                       "bad_input": isinstance(exc, InputError)}
    outcome = {"scores": values, "seconds": time.perf_counter() - start, "error": None}
    if predictions is not None:
        outcome["predictions"] = predictions
    if chosen is not None:
        outcome["chosen"] = chosen
    if structure is not None:
        outcome["structure"] = structure
    return index, outcome


def _score_unit(ds, cand: Candidate, unit: Unit, n_clusters: int | None, metrics: tuple[str, ...],
                keep: bool, shared: _Shared):
    """Fit and score one unit: ``({metric: value}, predictions or None, --tune pick or None,
    structure or None)`` (:mod:`ensemblekit.experiment.stability`), on training rows noised
    at ``cand.noise`` (:mod:`ensemblekit.experiment.noise`; never the test rows).

    A test unit's predictions are ``(test rows, predicted, proba, prior)`` when
    ``keep`` is true. A score of class probabilities (or a relative error) gets
    the probabilities of every declared class and the training fold's class
    counts (the training fold's mean for a regression); an internal index of a
    clustering run judges every row (see :func:`ensemblekit.metrics.score_model`).
    A test unit fits the estimator alone when its algorithm has no preprocessing
    step (the same fit as through a pipeline that passes the rows on).
    """
    from ensemblekit.experiment.measures import fit_timed, wants_time
    from ensemblekit.experiment.tuning import tuned_factory
    from ensemblekit.metrics import score_model

    params = dict(cand.params)
    warm = (cand.algorithm, repr(sorted(params.items()))) if wants_time(metrics) else None
    spec = registry.get(cand.algorithm)
    regression = spec.task == registry.REGRESSION
    # regression: float targets, NaN = missing; otherwise class codes, -1 = missing
    y, known = shared.classes(regression)
    if unit.test is not None:
        test = unit.test.astype(np.intp)
        in_test = np.zeros(y.shape[0], dtype=bool)
        in_test[test] = True
        train = np.flatnonzero(known & ~in_test)  # ascending, as the splitter gives it
        X_train = noised_rows(ds, cand.noise, unit.random_state, ds.X[train],
                              None if regression else y[train])
        model, _, fit_seconds = fit_timed(tuned_factory(cand, params, shared.maker) if cand.tune
                                          else shared.maker(cand, params, True),
                                          unit.random_state, X_train, y[train], warm=warm)
        if regression:
            n_classes, prior = None, float(np.mean(y[train]))
        else:
            n_classes = len(ds.schema.class_attribute.values)
            prior = np.bincount(y[train], minlength=n_classes)
        values, predicted, proba = score_model(metrics, model, ds.X[test], task=spec.task,
                                               n_classes=n_classes, truth=y[test], prior=prior,
                                               with_proba=keep, seconds={"fit": fit_seconds})
        return (values, ((test, predicted, proba, prior) if keep else None),
                getattr(model, "best_params_", None), unit_structure(model, None, metrics))
    if "n_clusters" in spec.param_names:
        params["n_clusters"] = n_clusters or len(np.unique(y[known]))
    X = noised_rows(ds, cand.noise, unit.random_state, ds.X, None)
    model, labels, fit_seconds = fit_timed(tuned_factory(cand, params, shared.maker) if cand.tune
                                           else shared.maker(cand, params, False),
                                           unit.random_state, X, warm=warm)
    values = score_model(metrics, model, X, truth=y[known], known=known, predicted=labels,
                         seconds={"fit": fit_seconds}).values
    return (values, ((None, np.asarray(labels), None, None) if keep else None),
            getattr(model, "best_params_", None), unit_structure(model, labels, metrics))

