"""Predict the rows of a data set with a fitted model, chunk by chunk, here or on Dask (``predict``)."""

from __future__ import annotations

from collections.abc import Sequence

from ensemblekit import registry
from ensemblekit.app.common import (
    _READING,
    Progress,
    _no_progress,
    _notifier,
    _stream_bytes,
    timed,
    worker_count,
)
from ensemblekit.app.models import _as_model, _schema_of
from ensemblekit.errors import InputError, UsageError, interruption
from ensemblekit.results import FittedModel, Prediction

#: Rows given to the model at a time by :func:`predict` (one progress step).
PREDICT_CHUNK = 500

#: The words of ``columns`` (``predict --columns``) that name Weka's ``-classifications``
#: columns; any other word names an attribute of the data, copied to the output.
PREDICTION_EXTRAS = ("actual", "error", "distribution")

#: What ``unknown`` (``predict --unknown``) may be: a nominal value not seen in training is
#: read as missing, or refused.
UNKNOWN_POLICIES = ("missing", "error")


def predict(model, data, *, proba: bool = False, input_format: str | None = None,
            n_jobs: int | None = None, progress: Progress | None = None,
            chunk_rows: int | None = None, scheduler: str | None = None,
            unknown: str = "missing", columns: Sequence[str] = ()) -> Prediction:
    """Predict every row of a data set with a fitted model (``ensemblekit predict``).

    The rows of a file are read, predicted and gathered chunk by chunk (see
    :func:`predict_chunks`); the result is the same for any chunk size, and
    equals one prediction call on all the rows in file order.

    Parameters
    ----------
    model : FittedModel or path
        A path is loaded with :func:`load_model`.
    data : path, Dataset, DataFrame or stream
        Read against the model's training schema (a pandas or polars DataFrame
        by column names, as :meth:`Dataset.from_frame
        <ensemblekit.dataset.Dataset.from_frame>` reads it; a stream of ARFF or
        CSV text as a file). The class column is not read (unless ``columns``
        asks for it): its values, known or not, missing, or the column left
        out, give the same predictions.
    proba : bool
        Also give class probabilities over every class value of the schema.
    unknown : {"missing", "error"}, default "missing"
        A nominal value of ``data`` not seen in training (not declared in the
        training file) is read as missing, as Weka's InputMappedClassifier
        reads it, and one note (to the enclosing :func:`reading`'s
        ``notify``, else a warning) counts the rows and names the attributes
        once every row is predicted; ``"error"`` refuses the file instead.
    columns : sequence of str, default ()
        Columns added to the output after the probabilities, in this order
        (Weka's ``-classifications`` columns; see
        :attr:`ensemblekit.results.Prediction.extras`): ``"actual"``, the class
        value of the row (None where missing or where ``data`` has no class
        column); ``"error"``, Weka's flag ``"+"`` where the prediction differs
        from a known actual class (a regression model: the prediction minus
        the actual value); ``"distribution"``, one column
        ``distribution_<class>`` per class value with its probability as Weka
        prints it (3 decimals, trailing zeros dropped, ``*`` before the
        predicted class); any other name, that column of ``data`` as text
        (whole numbers without a decimal point).
    n_jobs : int, optional
        Workers for models that predict rows in parallel (lazy ensembles, knn);
        the output does not depend on it. Not with ``scheduler``.
    progress : callable, optional
        See :data:`Progress`; rows go to the model in chunks of
        :data:`PREDICT_CHUNK`. The result is the same for any chunk size: a
        model whose predictions depend on earlier rows (knn's ranges, which
        each test row widens, as Weka's IBk) gets them across chunks.
    chunk_rows : int, optional
        Rows read from a file at a time (default
        :data:`ensemblekit.streaming.CHUNK_ROWS`).
    scheduler : str, optional
        Address of a Dask distributed scheduler (``tcp://host:8786``): the rows
        are predicted on its workers, :data:`PREDICT_CHUNK` rows per task, each
        task on one core; the output is identical to a serial run (see
        :func:`predict_chunks`).

    Returns
    -------
    Prediction

    Raises
    ------
    UsageError
        The model cannot label new rows, has no probabilities, or refuses the
        data; both ``n_jobs`` and ``scheduler`` are given; ``unknown`` is not
        one of :data:`UNKNOWN_POLICIES`; or ``columns`` asks for what the
        model has not (a class, probabilities) or names an output column twice.
    ensemblekit.data.DataError
        The file cannot be read against the model's schema, or has no column
        named in ``columns``.
    ensemblekit.experiment.ProtocolError
        The scheduler cannot be reached, or the ``distributed`` package is missing.
    """
    import numpy as np

    parts = list(predict_chunks(model, data, proba=proba, input_format=input_format, n_jobs=n_jobs,
                                progress=progress, chunk_rows=chunk_rows, scheduler=scheduler,
                                unknown=unknown, columns=columns))
    first = parts[0]
    labels = [v for p in parts for v in p.predictions]
    probabilities = None if first.probabilities is None else np.concatenate(
        [p.probabilities for p in parts])
    extras = {name: [v for p in parts for v in p.extras[name]] for name in first.extras}
    return Prediction(first.task, labels, probabilities, first.classes, first.prediction_values,
                      extras)


def predict_chunks(model, data, *, proba: bool = False, input_format: str | None = None,
                   n_jobs: int | None = None, progress: Progress | None = None,
                   chunk_rows: int | None = None, scheduler: str | None = None,
                   unknown: str = "missing", columns: Sequence[str] = ()):
    """Predict a data set chunk by chunk: read some rows, predict them, yield, read on.

    Memory does not grow with the number of rows of a file, and the first
    predictions come as soon as the first chunk is read: ``ensemblekit
    predict`` writes each chunk before it reads the next.

    With a ``scheduler``, the model is sent to the cluster once and every
    :data:`PREDICT_CHUNK` rows of a chunk are one task; the tasks of at most a
    few chunks are under way at a time (the next chunks are read while the
    workers predict), and each chunk is yielded once all its tasks are back,
    in file order. A task computes exactly what a serial run computes for
    those rows, on one core, so the output is identical byte for byte: a
    model whose predictions depend on the rows before (knn's widening ranges)
    gets, with each task, what those rows changed.

    Parameters
    ----------
    model, data, proba, input_format, n_jobs, progress, chunk_rows, scheduler, unknown, columns
        As in :func:`predict`. A file is read with
        :func:`ensemblekit.streaming.iter_chunks` (CSV options and notes from
        the enclosing :func:`reading` block); a Dataset is cut into chunks.

    Yields
    ------
    Prediction
        One per chunk, each for at least one row, in file order; the rows of
        one chunk follow those of the one before. Concatenated, they are
        what :func:`predict` returns.

    Raises
    ------
    UsageError
        The model cannot label new rows, has no probabilities, or refuses the
        data (raised before anything is read), or both ``n_jobs`` and
        ``scheduler`` are given.
    ensemblekit.data.DataError
        The file cannot be read against the model's schema; raised when the
        chunk that holds the fault is read, after the chunks before it were
        yielded.
    ensemblekit.experiment.ProtocolError
        The scheduler cannot be reached (raised before anything is read).

    Notes
    -----
    The note on values not seen in training (see ``unknown`` in
    :func:`predict`) is given once, after the last chunk is yielded.
    """
    import numpy as np

    from ensemblekit.class_domain import widen_proba
    from ensemblekit.dataset import Dataset
    from ensemblekit.frames import is_frame

    source = model if not isinstance(model, FittedModel) else model.algorithm
    if n_jobs is not None and scheduler is not None:
        raise UsageError("--n-jobs and --scheduler: give one of them (with --scheduler, the "
                         "cluster's worker threads predict the rows, each on one core)")
    model = _as_model(model)
    if n_jobs is not None:
        workers = worker_count(n_jobs)
        if "n_jobs" in getattr(type(model.estimator), "_parameter_constraints", {}):
            model.pipeline.set_params(model__n_jobs=workers)
    metadata, pipeline = model.metadata, model.pipeline
    task = metadata["task"]
    schema = _schema_of(model)
    spec = registry.get(metadata["algorithm"])
    if not spec.predicts_new_rows:
        raise UsageError(f"{metadata['algorithm']} models cannot label new rows (the algorithm "
                         "has no out-of-sample rule); use 'ensemblekit cluster' on the file "
                         "instead")
    if proba and task != registry.CLASSIFICATION:
        raise UsageError(f"{metadata['algorithm']} is a {task} model; it has no class "
                         "probabilities")
    classes = schema.class_attribute.values if task == registry.CLASSIFICATION else ()
    cluster_values = ()
    if task not in (registry.CLASSIFICATION, registry.REGRESSION):
        cluster_values = tuple(str(i) for i in range(int(metadata["params"].get("n_clusters", 0))))
    columns = _check_extras(tuple(columns), unknown, task, classes, proba, metadata["algorithm"])
    copy = tuple(c for c in columns if c not in PREDICTION_EXTRAS)
    read_class = "actual" in columns or "error" in columns
    computes_proba = proba or "distribution" in columns

    def say(exc):  # the model's refusal, naming the attribute it is about
        return registry.refusal_text(exc, metadata["algorithm"], schema)

    if isinstance(data, Dataset):  # already in memory: one chunk
        chunks = iter([_with_texts(data, copy)])
    elif is_frame(data):  # coded against the training schema, the class column read if asked
        chunks = iter([_with_texts(Dataset.from_frame(data, schema=schema, read_class=read_class,
                                                      unknown=unknown), copy)])
    else:  # a generator: nothing is read yet
        chunks = timed(_read_chunks(data, schema, input_format, chunk_rows, read_class=read_class,
                                    unknown=unknown, copy=copy), "reading")
    if scheduler is not None:  # connected before anything is read: a failure is reported at once
        from ensemblekit.experiment.scheduler import connect

        outputs = _predict_on_cluster(connect(scheduler), pipeline, chunks, computes_proba,
                                      progress, source, widens=spec.widens_at_predict, say=say)
    else:
        outputs = _predict_in_order(pipeline, _read_ahead(chunks), computes_proba, progress, source,
                                    widens=spec.widens_at_predict, say=say)

    unseen = _UnseenTally(schema)
    for chunk, parts in outputs:
        codes = np.concatenate([c for c, _ in parts])
        full = None
        if computes_proba:
            full = widen_proba(np.concatenate([p for _, p in parts]), pipeline.classes_,
                               len(classes))
        extras = _extras(columns, chunk, task, classes, codes, full)
        unseen.add(chunk)
        if task == registry.REGRESSION:
            yield Prediction(task, [float(v) for v in np.asarray(codes, dtype=np.float64).ravel()],
                             extras=extras)
        elif task != registry.CLASSIFICATION:
            yield Prediction(task, [str(int(c)) for c in codes], prediction_values=cluster_values,
                             extras=extras)
        elif not proba:
            yield Prediction(task, _labels(classes, codes), prediction_values=tuple(classes),
                             extras=extras)
        else:
            yield Prediction(task, _labels(classes, codes), full, tuple(classes), tuple(classes),
                             extras)
    unseen.report()


def _check_extras(columns: tuple, unknown: str, task: str, classes, proba: bool,
                  algorithm: str) -> tuple:
    """``columns`` of :func:`predict`, checked against the model: a UsageError names what
    the model cannot give or a column name the output would hold twice."""
    if unknown not in UNKNOWN_POLICIES:
        raise UsageError(f"unknown must be one of {', '.join(UNKNOWN_POLICIES)}, not {unknown!r}")
    if task not in (registry.CLASSIFICATION, registry.REGRESSION):
        asked = [c for c in ("actual", "error") if c in columns]
        if asked:
            raise UsageError(f"--columns {asked[0]}: {algorithm} is a {task} model; it predicts "
                             "no class, so there is no actual class to show")
    if "distribution" in columns and task != registry.CLASSIFICATION:
        raise UsageError(f"--columns distribution: {algorithm} is a {task} model; it has no "
                         "class probabilities")
    names = ["row", "prediction", *(f"p_{c}" for c in classes if proba)]
    for c in columns:
        names += [f"distribution_{v}" for v in classes] if c == "distribution" else [c]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--columns: the output would have two columns named {twice[0]!r}; "
                         "give each once (an attribute cannot share a name with the output's "
                         "own columns)")
    return columns


def _with_texts(ds, copy: tuple):
    """A data set in memory with the columns ``copy`` (attributes of its schema) as text,
    as a file's chunks carry them (:attr:`ensemblekit.dataset.Dataset.texts`)."""
    import dataclasses

    import numpy as np

    from ensemblekit.dataset import DataError
    from ensemblekit.names import did_you_mean
    from ensemblekit.readers.table import number_text

    if not copy:
        return ds
    names = [a.name for a in ds.schema.attributes]
    texts = {}
    for name in copy:
        if name not in names:
            raise DataError(f"no attribute named {name!r} to copy to the output"
                            f"{did_you_mean(name, names)}", ds.source)
        k = names.index(name)
        if k == ds.schema.class_index:
            if ds.y is None:
                texts[name] = np.full(ds.n_instances, None, dtype=object)
                continue
            values = np.asarray(ds.y, dtype=np.float64)
        else:
            values = ds.X[:, k - (ds.schema.class_index is not None and k > ds.schema.class_index)]
        texts[name] = np.asarray(_value_text(ds.schema.attributes[k], values, number_text),
                                 dtype=object)
    return dataclasses.replace(ds, texts=texts)


def _value_text(attribute, values, number_text) -> list:
    """Coded values of one attribute as text: a nominal value's name, a number's
    :func:`ensemblekit.readers.table.number_text`; None where missing."""
    if attribute.kind == "numeric":
        return [number_text(v) for v in values.tolist()]
    names = attribute.values
    return [None if v != v or v < 0 else names[int(v)] for v in values.tolist()]


def _extras(columns: tuple, chunk, task: str, classes, codes, full) -> dict:
    """The columns ``columns`` of :func:`predict` for one chunk: name -> text of each row
    (None where empty), in order. ``codes``: the chunk's predicted class codes (or
    values); ``full``: its probabilities over every class value, or None."""
    import numpy as np

    from ensemblekit.classifiers._java_numbers import weka_number
    from ensemblekit.readers.table import number_text

    extras: dict = {}
    if not columns:
        return extras
    n = len(codes)
    regression = task == registry.REGRESSION
    y = chunk.y if chunk.y is not None else np.full(n, np.nan if regression else -1)
    if regression:
        actual = [number_text(v) for v in np.asarray(y, dtype=np.float64).tolist()]
    else:
        actual = [None if v < 0 else classes[v] for v in np.asarray(y, dtype=np.int64).tolist()]
    for c in columns:
        if c == "actual":
            extras["actual"] = actual
        elif c == "error" and regression:
            diff = np.asarray(codes, dtype=np.float64).ravel() - np.asarray(y, dtype=np.float64)
            extras["error"] = [number_text(v) for v in diff.tolist()]
        elif c == "error":
            wrong = (np.asarray(y) >= 0) & (np.asarray(y) != np.asarray(codes))
            extras["error"] = np.where(wrong, "+", None).tolist()
        elif c == "distribution":
            text = {v: weka_number(v, 3) for v in np.unique(full).tolist()}
            predicted = np.asarray(codes).astype(np.int64)
            for k, value in enumerate(classes):
                cells = [text[v] for v in full[:, k].tolist()]
                for i in np.flatnonzero(predicted == k).tolist():
                    cells[i] = "*" + cells[i]
                extras[f"distribution_{value}"] = cells
        else:
            extras[c] = chunk.texts[c].tolist()
    return extras


class _UnseenTally:
    """The rows whose nominal values were not seen in training, over the chunks of a
    prediction (:attr:`ensemblekit.dataset.Dataset.unseen`), and the one note about them."""

    def __init__(self, schema):
        self.order = [a.name for a in schema.attributes]
        self.rows = 0
        self.names: set[str] = set()
        self.source = ""  # the input as its chunks name it in messages

    def add(self, chunk) -> None:
        import numpy as np

        if chunk.unseen:
            self.source = chunk.source
            self.rows += int(np.logical_or.reduce(list(chunk.unseen.values())).sum())
            self.names.update(chunk.unseen)

    def report(self) -> None:
        if not self.rows:
            return
        from ensemblekit.dataset import quote_names

        context = _READING.get() or {}
        names = [n for n in self.order if n in self.names]
        rows = f"{self.rows} rows hold" if self.rows != 1 else "1 row holds"
        _notifier(context.get("notify"))(
            f"{self.source}: {rows} a nominal value not seen in training, read as missing "
            f"(attribute{'s' if len(names) != 1 else ''} {quote_names(names)}); "
            "--unknown error refuses such values")


def _read_ahead(chunks, depth: int = 1):
    """The items of ``chunks``, in order, read by a thread up to ``depth`` items ahead.

    While the model predicts one chunk and its predictions are written, the next chunk
    is read: pyarrow and numpy parse without the interpreter's lock, so on two cores
    reading and predicting overlap (issue 30). An error raised while reading is raised
    here at the point the chunk it stopped would have come, after the chunks before it,
    as a plain generator would. When the consumer stops early (an error, a closed pipe,
    an interrupt), the thread stops at its next item and closes ``chunks``.
    """
    import queue
    import threading

    items: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def offer(item) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read():
        try:
            for chunk in chunks:
                if not offer((chunk, None)):
                    break
            else:
                offer((done, None))
        except BaseException as exc:  # handed to the consumer, raised there
            offer((None, exc))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    reader = threading.Thread(target=read, name="ensemblekit-read-ahead", daemon=True)
    reader.start()
    try:
        while True:
            chunk, exc = items.get()
            if exc is not None:
                raise exc
            if chunk is done:
                return
            yield chunk
    finally:
        stop.set()


def _labels(classes, codes) -> list[str]:
    """The class value of each code, a chunk at a time (no Python loop per row)."""
    import numpy as np

    return np.asarray(classes, dtype=object)[np.asarray(codes).astype(np.int64)].tolist()


def _predict_rows(pipeline, X, proba: bool):
    """Predict the rows ``X`` in one call of the model: ``(codes or values, probabilities or None)``.

    With ``proba``, one pass: every classifier here predicts the arg-max of its
    probabilities (the first on ties).
    """
    import numpy as np

    if proba:
        known = pipeline.predict_proba(X)
        return np.asarray(pipeline.classes_)[np.argmax(known, axis=1)], known
    return np.asarray(pipeline.predict(X)), None


def _predict_rows_on_one_core(pipeline, X, proba: bool, pin, before=None):
    """:func:`_predict_rows` in a Dask worker, on one core (``pin``, an
    :class:`ensemblekit.experiment.onecore.OneCore`): the model's own joblib calls
    stay sequential in the worker. ``before``: the :func:`_extremes` of the rows before
    ``X``, which the pipeline is widened by first (None: nothing to widen)."""
    if before is not None:
        pipeline = _with_final(pipeline, pipeline[-1].widened(before))
    with pin.pinned():
        return _predict_rows(pipeline, X, proba)


def _advanced(pipeline, X):
    """The pipeline of a model that widens at predict, as it stands after predicting the rows
    ``X`` (the same object if nothing changed).

    Every estimator here predicts a row from the fitted model alone, except those whose
    registry entry declares ``widens_at_predict``: their prediction of a row also depends on
    the rows before it in the same call (knn's IBk, whose numeric ranges each row widens,
    ``range_update="cumulative"``, as Weka). Such a final estimator has a ``widened(Xt)``
    method (``Xt``: the rows after the pipeline's preprocessing) that returns a copy carrying
    that state over, so rows given in later calls are predicted as one call on all the rows
    would predict them; this is the pipeline with that copy as its final step. ``widened``
    may depend on the rows only through each column's smallest and largest known value (see
    :func:`_extremes`).
    """
    if X.shape[0] == 0:
        return pipeline
    return _with_final(pipeline, pipeline[-1].widened(pipeline[:-1].transform(X)))


def _with_final(pipeline, estimator):
    """``pipeline`` with ``estimator`` as its final step (a shallow copy; itself if unchanged)."""
    import copy

    if estimator is pipeline[-1]:
        return pipeline
    out = copy.copy(pipeline)
    out.steps = [*pipeline.steps[:-1], (pipeline.steps[-1][0], estimator)]
    return out


def _extremes(pipeline, X, before=None):
    """Two rows: the smallest and the largest known value of each column of the prepared rows
    ``X`` and of the rows ``before`` (the same two rows of earlier rows, or None).

    They widen the final estimator as all those rows would (:func:`_advanced`), so a Dask
    task gets two rows instead of every row before it. NaN where a column has no known value.
    """
    import numpy as np

    if X.shape[0] == 0:
        return before
    Xt = np.asarray(pipeline[:-1].transform(X), dtype=np.float64)
    rows = Xt if before is None else np.vstack([before, Xt])
    return np.vstack([np.fmin.reduce(rows, axis=0), np.fmax.reduce(rows, axis=0)])


def _predict_in_order(pipeline, chunks, proba: bool, progress, source, *, widens: bool,
                      say=str):
    """Predict chunks in this process: yield ``(chunk, parts)`` in order (see :func:`_predict_chunk`),
    each chunk predicted by the pipeline as the chunks before it left it (:func:`_advanced`, when
    ``widens``: the model's entry declares ``widens_at_predict``)."""
    for ds in chunks:
        parts, pipeline = _predict_chunk(pipeline, ds, proba, progress, source, widens=widens,
                                         say=say)
        yield ds, parts


def _predict_chunk(pipeline, ds, proba: bool, progress, source, *, widens: bool, say=str):
    """Predict one chunk in this process, :data:`PREDICT_CHUNK` rows at a time: a list of
    :func:`_predict_rows` results, and the pipeline as those rows left it (:func:`_advanced`,
    when ``widens``; else the pipeline itself). ``say`` words the model's refusal.

    With no progress bar to move and no ranges to widen, the whole chunk is one call: a
    model's fixed cost per call (a C4.5 tree is walked a level at a time over all the rows)
    is then paid per chunk, not per :data:`PREDICT_CHUNK` rows. Predictions do not depend
    on how the rows are grouped, so the output is the same (issue 30)."""
    n = ds.X.shape[0]
    parts = []
    try:
        with (progress or _no_progress)(n if n > PREDICT_CHUNK else 0, "rows") as advance:
            step = PREDICT_CHUNK if widens or advance is not None else max(n, 1)
            for start in range(0, max(n, 1), step):
                X = ds.X[start:start + step]
                parts.append(_predict_rows(pipeline, X, proba))
                if widens:
                    pipeline = _advanced(pipeline, X)
                if advance is not None:
                    advance(X.shape[0])
    except InputError as exc:
        raise UsageError(f"{source}: the model cannot predict {ds.source}: {say(exc)}") from None
    return parts, pipeline


#: Chunks whose tasks may be under way on a Dask cluster at a time, at most (at least two
#: are, so that the workers predict one while the next is read).
_CHUNKS_IN_FLIGHT = 4


def _predict_on_cluster(client, pipeline, chunks, proba: bool, progress, source, *, widens: bool,
                        say=str):
    """Predict chunks on the Dask cluster of ``client``: yield ``(chunk, parts)`` in order, as
    :func:`_predict_chunk` would, and close the client at the end.

    The model is scattered once to every worker; each :data:`PREDICT_CHUNK` rows of a chunk
    are one task. A model that carries state from row to row (``widens``: its entry declares
    ``widens_at_predict``; see :func:`_advanced`) gets with each task the :func:`_extremes` of
    every row before it, computed here, so each task predicts what a serial run predicts.
    Chunks are read ahead while the workers predict: at least two, and up to
    :data:`_CHUNKS_IN_FLIGHT` while fewer than two tasks per worker thread are under way. An
    error reading a chunk is raised once the chunks before it were yielded.
    """
    from collections import deque

    from ensemblekit.experiment.onecore import OneCore

    pending: deque = deque()  # (chunk, futures), in file order
    try:
        threads = max(1, sum(client.nthreads().values()))
        [model] = client.scatter([pipeline], broadcast=True, hash=False)
        pin = OneCore()
        chunks, tasks, failed, done = iter(chunks), 0, None, False
        before = None  # with widens: the extremes of the rows so far
        while True:
            while not done and (len(pending) < 2 or (tasks < 2 * threads
                                                     and len(pending) < _CHUNKS_IN_FLIGHT)):
                try:
                    ds = next(chunks)
                except StopIteration:
                    done = True
                    break
                except Exception as exc:  # noqa: BLE001 - raised after the chunks before it
                    if interruption(exc) is not None:  # Ctrl-C: at once
                        raise
                    failed, done = exc, True
                    break
                n, futures = ds.X.shape[0], []
                for start in range(0, max(n, 1), PREDICT_CHUNK):
                    X = ds.X[start:start + PREDICT_CHUNK]
                    futures.append(client.submit(_predict_rows_on_one_core, model, X, proba, pin,
                                                 before, pure=False))
                    if widens:
                        try:
                            before = _extremes(pipeline, X, before)
                        except ValueError:  # the task reports it, as a serial run would
                            widens = False
                pending.append((ds, futures))
                tasks += len(futures)
            if not pending:
                break
            ds, futures = pending.popleft()
            tasks -= len(futures)
            n, parts = ds.X.shape[0], []
            with (progress or _no_progress)(n if n > PREDICT_CHUNK else 0, "rows") as advance:
                for start, future in zip(range(0, max(n, 1), PREDICT_CHUNK), futures):
                    try:
                        parts.append(future.result())
                    except InputError as exc:
                        raise UsageError(f"{source}: the model cannot predict {ds.source}: "
                                         f"{say(exc)}") from None
                    if advance is not None:
                        advance(min(n, start + PREDICT_CHUNK) - start)
            del futures
            yield ds, parts
        if failed is not None:
            raise failed
    finally:
        for _, futures in pending:
            client.cancel(futures)
        client.close()


def _read_chunks(data, schema, input_format: str | None, chunk_rows: int | None, *,
                 read_class: bool = False, unknown: str = "error", copy: tuple = ()):
    """The chunks of a prediction file, read with the options of the enclosing :func:`reading`
    (the class column only if ``read_class``; ``unknown`` and ``copy`` as
    :func:`ensemblekit.streaming.iter_chunks` takes them)."""
    import sys

    from ensemblekit.streaming import iter_chunks

    stream = _stream_bytes(data)  # an open stream of text is read as standard input is
    if stream is None and isinstance(data, str) and data == "-" and sys.stdin is None:
        raise UsageError("cannot read '-': standard input is closed")
    context = _READING.get() or {}
    types = context.get("types", {})
    refused = [f"--{kind}" for kind in ("nominal", "numeric", "string") if types.get(kind)]
    if refused:
        raise UsageError(f"predict does not take {' or '.join(refused)}: it reads each column as "
                         "the model's training data declared it (give the option to fit); "
                         "--date applies, to read dates into the model's numbers")
    return iter_chunks("-" if stream is not None else data, schema, fmt=input_format,
                       read_class=read_class, chunk_rows=chunk_rows, stdin=stream,
                       unknown=unknown, copy=copy,
                       notify=_notifier(context.get("notify")), decimal=context.get("decimal"),
                       missing_values=context.get("missing_values", ()), header=context.get("header"),
                       date=types.get("date", ()))
