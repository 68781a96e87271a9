"""The resume journal (``--resume``): finished units on disk, so a killed run goes on later.

A journal is a JSON-lines file. Its first line names the comparison by a
fingerprint of everything that decides the units' results (:func:`run_fingerprint`);
each further line records one finished unit under its key (:func:`unit_key`):
its scores and seconds, or its error. The runner appends each unit as soon as it
finishes and skips the units a journal already holds.

The first line also describes the comparison, and each unit's record holds its
out-of-fold predictions (:mod:`ensemblekit.experiment.records`), so that a finished
run can be analysed again without its data files (:func:`read_run`, for
``ensemblekit analyse``).

Every line is strict JSON. A score that is not finite (an RRSE of a constant
target, say) is written as the string ``"nan"``, ``"inf"`` or ``"-inf"`` and read
back as that float, so a resumed run sees exactly the scores the first run computed.

The journal is kept like a small database, not a log anyone may append to:

* **One writer at a time.** :class:`JournalLock` opens the file and takes an
  exclusive, non-blocking :func:`fcntl.flock` on it for the whole run; a second
  run on the same journal is refused at once. The kernel drops the lock when the
  holder exits, however it ends (a kill included), so no stale lock is left. On
  Linux this also holds on NFS (the kernel emulates ``flock`` with the server's
  byte-range locks); a file system that cannot lock at all is refused. Where
  :mod:`fcntl` does not exist (Windows) no lock is taken, and one writer at a
  time is the user's care.
* **Only a regular file.** A named pipe, device, folder or socket is refused
  before it is opened (and again after, on the open descriptor), so a FIFO never
  blocks the run.
* **Records are checked when read back**: types (a boolean is no number), the
  unit's key, and each score against its metric's declared range and finiteness
  (:meth:`ensemblekit.metrics.Metric.value_problem`). A last line cut short by a
  kill is dropped with a note; any other damaged line is refused, naming it.
* **A full disk loses nothing saved.** A record that cannot be written whole is
  cut off again, so the file keeps every complete record and the next run goes
  on from them.

This module is the only part of :mod:`ensemblekit.experiment` that touches files.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ensemblekit import safejson
from ensemblekit.atomic import out_of_space
from ensemblekit.errors import InputError
from ensemblekit.experiment.protocol import Candidate, Plan, Protocol, ProtocolError, Unit, task_of
from ensemblekit.experiment.records import (
    MAX_RECORDED_ROWS,
    MAX_SCORES_LINE,
    _read_score,
    _shown,
    _written_score,
    line_bound,
    pack_predictions,
)
from ensemblekit.experiment.stability import read_structure
from ensemblekit.metrics import metric_spec
from ensemblekit.registry import CLASSIFICATION, CLUSTERING, REGRESSION

try:
    import fcntl
except ImportError:  # Windows: no advisory locks (see the module notes)
    fcntl = None


def unit_key(ds_name: str, cand: Candidate, unit: Unit) -> tuple:
    """The key a unit is recorded under: ``(dataset, algorithm, params JSON, repeat, fold)``.

    Parameters
    ----------
    ds_name : str
        Name of the unit's data set.
    cand : Candidate
        The unit's candidate; its registry name and parameters (not its label)
        enter the key.
    unit : Unit

    Returns
    -------
    tuple of (str, str, str, int, int)
    """
    return (ds_name, cand.algorithm, cand.params_json, unit.repeat, unit.fold)


def run_fingerprint(datasets, work: Plan, protocol: Protocol, metrics) -> str:
    """Hash of everything that decides the units' results (not n_jobs or the scheduler).

    Parameters
    ----------
    datasets : sequence of ensemblekit.data.Dataset
    work : Plan
    protocol : Protocol
    metrics : sequence of str

    Returns
    -------
    str
        ``"sha256:"`` and the hex digest of the ensemblekit version, the
        protocol, the metrics, the candidates, the task, the data sets' names,
        class attributes and arrays.
    """
    h = hashlib.sha256()
    from ensemblekit import __version__

    head = {
        "ensemblekit": __version__,
        "protocol": [protocol.kind, protocol.folds, protocol.repeats, protocol.seed,
                     protocol.n_clusters],
        "metrics": list(metrics),
        "candidates": [[c.algorithm, c.params_json] for c in work.candidates],
        "datasets": [ds.name for ds in datasets],
        # the task picks the folds (stratified or plain k-fold); the class's kind how y is read
        "task": task_of(work.candidates),
        "classes": [None if ds.schema.class_attribute is None else
                    [ds.schema.class_attribute.name, ds.schema.class_attribute.kind]
                    for ds in datasets],
    }
    h.update(json.dumps(head, sort_keys=True).encode())
    for ds in datasets:
        h.update(np.ascontiguousarray(ds.X).tobytes())
        if ds.y is not None:
            h.update(np.ascontiguousarray(ds.y).tobytes())
    return "sha256:" + h.hexdigest()


#: The kinds of entry a journal cannot be, as the refusal names them.
_NOT_A_FILE = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISDIR, "a folder"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def _kind_problem(path: Path, mode: int) -> ProtocolError | None:
    """The refusal of an entry of ``mode`` that is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _NOT_A_FILE if test(mode)), "not a file")
    return ProtocolError(f"--resume {path} is {kind}, not a regular file; a journal must be "
                         "a regular file")


class JournalLock:
    """A journal file, open for reading and writing and locked against every other writer.

    The entry is checked before it is opened: a named pipe, device, folder or
    socket is refused without opening it (a FIFO would block), and the open
    descriptor is checked again (the entry may have been replaced meanwhile).
    The lock is an exclusive :func:`fcntl.flock` taken without waiting and held
    until :meth:`close`; the kernel releases it when the process ends, however
    it ends. ``flock`` locks belong to an open file description, so a second
    :class:`JournalLock` on the same file conflicts even within one process.

    A lock is a path (:class:`os.PathLike`), so it can be given wherever the
    journal's path is (``Runner.run(resume=lock)``).

    Parameters
    ----------
    path : str or os.PathLike
        The journal; created empty when missing. A file this lock created is
        removed again by :meth:`close` if nothing was written to it.

    Attributes
    ----------
    path : pathlib.Path
    fd : int
        The open descriptor that holds the lock; -1 once closed.

    Raises
    ------
    ProtocolError
        If ``path`` is not a regular file, cannot be opened or locked, or
        another open file holds the lock: ``"--resume PATH is in use by another
        ensemblekit compare (one writer at a time)..."``.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.fd = -1
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise ProtocolError(f"cannot read --resume file {self.path}: {exc.strerror}") from None
        if info is not None and (problem := _kind_problem(self.path, info.st_mode)) is not None:
            raise problem
        self._created = info is None
        # O_NONBLOCK: should the entry turn into a FIFO after the check, opening it
        # still returns at once (and the check below refuses it)
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as exc:
            raise ProtocolError(f"cannot write --resume file {self.path}: {exc.strerror}") from None
        try:
            problem = _kind_problem(self.path, os.fstat(fd).st_mode)
            if problem is not None:
                raise problem
            os.set_blocking(fd, True)
            self._lock(fd)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def _lock(self, fd: int) -> None:
        if fcntl is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ProtocolError(
                    f"--resume {self.path} is in use by another ensemblekit compare (one writer "
                    "at a time); wait for it to end, or give another file") from None
            raise ProtocolError(
                f"cannot lock --resume file {self.path}: {exc.strerror}; keep the journal on a "
                "file system that supports locks, such as a local disk") from None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __enter__(self) -> JournalLock:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Release the lock and close the file; a file created here and left empty is removed."""
        fd, self.fd = self.fd, -1
        if fd < 0:
            return
        try:
            if self._created and os.fstat(fd).st_size == 0 and not self.path.is_symlink() \
                    and os.path.samestat(os.stat(self.path), os.fstat(fd)):
                os.unlink(self.path)  # still locked: nobody else is using it
        except OSError:
            pass  # an empty journal left behind is read as a new one
        finally:
            os.close(fd)


class Journal:
    """Append-only JSON-lines record of finished units (``--resume``).

    The first line names the comparison (a fingerprint of data, candidates,
    protocol and metrics); each further line is one finished unit. A line cut
    short by a killed process is dropped when the journal is opened again, with
    a note in :attr:`notes`.

    The file is read line by line with a bound: a line longer than
    :attr:`MAX_LINE` bytes, or with JSON nested deeper than :attr:`MAX_DEPTH`
    levels (measured before parsing, :mod:`ensemblekit.safejson`), is refused
    with a :class:`ProtocolError` naming the file and the line. Memory stays
    bounded by the comparison's units, whatever the file holds.

    Every record read back is checked: the JSON types of its fields (a boolean
    is not a number, a repeat is an integer), its key among the comparison's
    units, its seconds a finite number >= 0, and each score a number (or
    ``"nan"``, ``"inf"``, ``"-inf"``) that its metric can take
    (:meth:`ensemblekit.metrics.Metric.value_problem`: ``"accuracy": 7.5``,
    ``true`` or ``NaN`` is refused).

    Each record is written with one ``write`` call straight to the operating
    system. A write that fails (no space left on the device) is cut off again,
    so the file still holds every complete record, and raises
    :class:`ProtocolError` saying so.

    Parameters
    ----------
    path : pathlib.Path or JournalLock
        The journal file, or a :class:`JournalLock` already held on it (which
        the caller closes); a path is locked here until :meth:`close`. The file
        is started afresh (with its header) when it is missing, empty or holds
        only a header cut short.
    fingerprint : str
        :func:`run_fingerprint` of the comparison; a file with another one is
        refused.
    keys : set of tuple
        :func:`unit_key` of every unit of the comparison; a record of any other
        unit is refused as damaged.
    metrics : sequence of str
        The comparison's metrics: a record without an error holds a score of
        each, and of no other.

    Attributes
    ----------
    notes : list of str
        What the reader did that the user should know (a record cut short that
        was dropped).

    Raises
    ------
    ProtocolError
        If the file is not a regular file, is in use by another writer, cannot
        be read or written, records another comparison, or holds a damaged or
        over-long line.
    """

    VERSION = 1
    #: Longest line read back, newline included (4 MiB). The records written here
    #: take a few hundred bytes; a longer line was not written by ensemblekit.
    MAX_LINE = MAX_SCORES_LINE
    #: Deepest JSON nesting read back; a record is 2 levels deep (its scores).
    MAX_DEPTH = 8

    def __init__(self, path: Path | JournalLock, fingerprint: str, keys: set,
                 metrics: Sequence[str], comparison: dict | None = None):
        self._own = not isinstance(path, JournalLock)
        self._lock = JournalLock(path) if self._own else path
        self.path = self._lock.path
        self.fingerprint = fingerprint
        self.comparison = comparison
        self.max_line = line_bound(comparison)
        self.notes: list[str] = []
        self._done: dict[tuple, dict] = {}
        self._end = 0  # bytes of complete lines: where the next record goes
        try:
            self._open(fingerprint, keys, {m: metric_spec(m) for m in metrics})
        except BaseException:
            self.close()
            raise

    def _open(self, fingerprint: str, keys: set, specs: dict) -> None:
        """Read the file, cut off a last line cut short, and write the header of a new one."""
        fd = self._lock.fd
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            with open(fd, "rb", closefd=False) as reader:
                complete, total = self._read(reader, fingerprint, keys, specs)
        except OSError as exc:
            raise ProtocolError(f"cannot read --resume file {self.path}: {exc.strerror}") from None
        self._saved = set(self._done)
        self._end = complete
        if complete != total:  # drop a half-written last line (or a header cut short)
            self._cut_back()
        os.lseek(fd, complete, os.SEEK_SET)
        if complete == 0:  # new, empty, or only a header cut short: start afresh
            head = {"ensemblekit_journal": self.VERSION, "run": fingerprint}
            if self.comparison is not None:
                head["comparison"] = self.comparison
            self._write(head)

    def _read(self, reader, fingerprint: str, keys: set, specs: dict) -> tuple[int, int]:
        """Check the header and keep the finished units.

        Returns (bytes of complete lines, bytes read).
        """
        complete = 0
        lines = _CompleteLines(reader, self.path, self.max_line, self.notes)
        for number, line in lines:
            text = line.decode("utf-8", errors="replace")
            if number == 1:
                head = _header(text)
                if head.get("run") != fingerprint:
                    raise ProtocolError(
                        f"{self.path} records a different comparison (other data, algorithms, "
                        "parameters, protocol, seed, metrics or ensemblekit version); use a new "
                        "--resume file or delete this one")
            else:
                key, outcome = self._record(text, number, keys, specs)
                self._done[key] = outcome
            complete += len(line)
        return complete, complete + lines.cut_short

    def _record(self, text: str, number: int, keys: set, specs: dict) -> tuple:
        """One unit line as (key, outcome); ProtocolError naming the line if it is damaged."""
        try:
            return _unit_record(safejson.loads(text, max_depth=self.MAX_DEPTH), keys, specs)
        except ValueError as exc:  # JSON errors and InputError are ValueErrors
            # the message may quote the line
            what = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."
            raise ProtocolError(f"{self.path}, line {number}: damaged journal record ({what}); "
                                "use a new --resume file or delete this one") from None

    def done(self) -> dict[tuple, dict]:
        """Finished units read from the file: ``{key: outcome}``."""
        return dict(self._done)

    def append(self, key: tuple, outcome: dict, label: str = "", actual=None) -> None:
        """Record one finished unit, handed to the operating system at once.

        Parameters
        ----------
        key : tuple
            From :func:`unit_key`.
        outcome : dict
            ``scores``, ``seconds`` and ``error`` of the unit.
        label : str
            The label of the unit's named configuration (``Candidate.configuration``),
            written as the record's ``label`` for the reader of the file; empty for a
            plain algorithm, whose record has no ``label`` (so it is the record written
            before configurations). Reading ignores it: the key decides the unit.
        actual : ndarray, optional
            The classes or targets of the rows the unit's ``outcome["predictions"]``
            judged (a test fold's rows; every row of a clustering run, -1 where the class
            is missing). With it, the predictions are recorded too (see
            :func:`pack_predictions`), for ``ensemblekit analyse``.

        Raises
        ------
        ProtocolError
            If the record cannot be written (no space left on the device); the
            file is left with every complete record it held.
        """
        dataset, algorithm, params, repeat, fold = key
        record = {"dataset": dataset, "algorithm": algorithm, "params": params, "repeat": repeat,
                  "fold": fold,
                  "scores": {m: _written_score(v) for m, v in outcome["scores"].items()},
                  "seconds": outcome["seconds"],
                  "error": outcome.get("error")}
        if outcome.get("chosen") is not None:
            record["chosen"] = outcome["chosen"]
        if outcome.get("structure") is not None:  # -m structure-stability compares them
            record["structure"] = outcome["structure"]
        if actual is not None and outcome.get("predictions") is not None:
            record["predictions"] = pack_predictions(
                outcome["predictions"], actual,
                (self.comparison or {}).get("task") == REGRESSION)
        if label:
            record["label"] = label
        self._write(record)
        self._saved.add(key)

    def _write(self, record: dict) -> None:
        data = memoryview((json.dumps(record, sort_keys=True, allow_nan=False) + "\n").encode())
        size = len(data)
        try:
            while data:
                written = os.write(self._lock.fd, data)
                if written == 0:  # a regular file takes at least one byte, or says why not
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                data = data[written:]
        except OSError as exc:
            self._cut_back()
            saved = len(self._saved)
            kept = (f"it keeps the {saved} unit{'s' if saved != 1 else ''} saved so far: "
                    f"{'free some space, then ' if out_of_space(exc) else ''}run the same command "
                    "again to go on")
            if out_of_space(exc):
                raise ProtocolError(f"no space left on the device of --resume file {self.path}; "
                                    f"{kept}") from None
            raise ProtocolError(f"cannot write --resume file {self.path}: {exc.strerror}; "
                                f"{kept}") from None
        self._end += size

    def _cut_back(self) -> None:
        """Cut the file back to its complete lines (a record written in part is removed)."""
        try:
            os.ftruncate(self._lock.fd, self._end)
            os.lseek(self._lock.fd, self._end, os.SEEK_SET)
        except OSError:
            pass  # a last line cut short is dropped when the journal is read again

    def close(self) -> None:
        """Close the file and release its lock (unless the caller gave a held :class:`JournalLock`)."""
        if self._own:
            self._lock.close()


#: The fields of a unit record, the Python type of the JSON value each must have (float: any
#: number), and how a refusal names it.
_FIELDS = (("dataset", str, "a string"), ("algorithm", str, "a string"),
           ("params", str, "a string"), ("repeat", int, "an integer"), ("fold", int, "an integer"),
           ("scores", dict, "an object"), ("seconds", float, "a number"),
           ("error", (str, type(None)), "a string or null"))


def _unit_record(rec, keys: set, specs: dict) -> tuple[tuple, dict]:
    """A parsed unit record as ``(key, outcome)``; :class:`InputError` saying what is wrong."""
    if not isinstance(rec, dict):
        raise InputError(f"{_shown(rec)} is not a record (a JSON object)")
    for name, kind, kind_name in _FIELDS:
        if name not in rec:
            raise InputError(f"the field {name!r} is missing")
        value = rec[name]
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            raise InputError(f"{name} is {_shown(value)}, not {kind_name}")
    seconds = float(rec["seconds"])
    if not (math.isfinite(seconds) and seconds >= 0):
        raise InputError(f"seconds is {_shown(rec['seconds'])}, not a finite number >= 0")
    key = (rec["dataset"], rec["algorithm"], rec["params"], rec["repeat"], rec["fold"])
    if key not in keys:
        raise InputError("a unit that is not part of this comparison")
    scores = {}
    for metric, value in rec["scores"].items():
        spec = specs.get(metric)
        if spec is None:
            raise InputError(f"a score of {_shown(metric)}, which this comparison does not measure")
        score = _read_score(metric, value)
        problem = spec.value_problem(score)
        if problem is not None:
            raise InputError(problem)
        scores[metric] = score
    compared = [m for m, spec in specs.items() if spec.inputs == "structure"]
    if rec["error"] is None:
        # a measure over several units' structures is computed when they are all read
        missing = [m for m in specs if m not in scores and m not in compared]
        if missing:
            raise InputError(f"no score of {missing[0]}")
        if compared and rec.get("structure") is None:
            raise InputError(f"no structure of the model, which {compared[0]} compares")
    chosen = rec.get("chosen")  # --tune's values (absent from older journals and untuned units)
    if chosen is not None and not isinstance(chosen, dict):
        raise InputError(f"chosen is {_shown(chosen)}, not an object")
    outcome = {"scores": scores, "seconds": seconds, "error": rec["error"]}
    if chosen is not None:
        outcome["chosen"] = chosen
    if rec.get("predictions") is not None:  # checked when unpacked (unpack_predictions)
        outcome["packed"] = rec["predictions"]
    if rec.get("structure") is not None:
        read_structure(rec["structure"])  # checked now: a damaged one names its line
        outcome["structure"] = rec["structure"]
    return key, outcome


# ------------------------------------------------------------------ lines, header, analysis
class _CompleteLines:
    """The complete lines of a journal, read with a bound: ``(number, bytes)`` from 1.

    A line longer than ``max_line`` bytes is refused. A last line without its newline (a
    record cut short by a killed run) ends the reading with a note when it is not the
    header; :attr:`cut_short` then holds its length in bytes.
    """

    def __init__(self, reader, path: Path, max_line: int, notes: list, read: int = 0):
        self._reader, self._path, self._max, self._notes = reader, path, max_line, notes
        self._number = read  # lines already read before this reader's first
        self.cut_short = 0

    def __iter__(self):
        return self

    def __next__(self) -> tuple[int, bytes]:
        line = self._reader.readline(self._max + 1)
        if not line:
            raise StopIteration
        self._number += 1
        if not line.endswith(b"\n"):
            if len(line) > self._max:
                raise ProtocolError(
                    f"{self._path}, line {self._number}: longer than {self._max // 2**20} MiB, "
                    "which no journal record is; use a new --resume file or delete this one")
            if self._number > 1:
                self._notes.append(f"{self._path}, line {self._number}: a record cut short (by "
                                   "a killed run) was dropped; its unit is computed again")
            self.cut_short = len(line)
            raise StopIteration
        return self._number, line


def _header(text: str) -> dict:
    """The journal's first line as a dict; ``{}`` when it is not a journal header of
    :attr:`Journal.VERSION`."""
    try:
        head = safejson.loads(text, max_depth=Journal.MAX_DEPTH)
    except ValueError:  # not JSON, or nested too deeply
        return {}
    if not isinstance(head, dict) or head.get("ensemblekit_journal") != Journal.VERSION:
        return {}
    return head


@dataclass(frozen=True)
class RecordedRun:
    """A journal read back for analysis (:func:`read_run`).

    Attributes
    ----------
    comparison : dict
        The header's :func:`describe_comparison` document, checked.
    candidates : list of Candidate
    protocol : Protocol
    records : dict
        ``{unit key: outcome}`` as :meth:`Journal.done` gives them (the last record of a
        unit wins, as on resume), a recorded unit's predictions still packed
        (``outcome["packed"]``; see :func:`unpack_predictions`).
    notes : list of str
    """

    comparison: dict
    candidates: list
    protocol: Protocol
    records: dict
    notes: list


def read_run(path: str | os.PathLike) -> RecordedRun:
    """Read a journal for ``ensemblekit analyse``: its comparison and every unit's record.

    The file is opened for reading only (no lock: a run still writing it is read up to
    its last complete record), with the bounds of :class:`Journal`; the header's
    description is checked before any record is read, and each record as on resume.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    RecordedRun

    Raises
    ------
    ProtocolError
        If the file is not a regular file or cannot be read, is not a journal, was
        written before journals described their comparison, or holds a damaged record.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ProtocolError(f"cannot read {path}: {exc.strerror}") from None
    if (problem := _kind_problem(path, info.st_mode)) is not None:
        raise ProtocolError(str(problem).replace("--resume ", ""))
    notes: list[str] = []
    try:
        with open(path, "rb") as reader:
            first = _CompleteLines(reader, path, Journal.MAX_LINE, notes)
            _, line = next(first, (0, b""))
            head = _header(line.decode("utf-8", errors="replace"))
            if not head:
                raise ProtocolError(f"{path} is not an ensemblekit journal (compare --resume "
                                    "FILE writes one)")
            try:
                comparison, candidates, protocol = _described(head.get("comparison"))
                keys = _expected_keys(comparison, candidates, protocol)
            except (InputError, KeyError, TypeError, ValueError) as exc:
                raise ProtocolError(f"{path}, line 1: {exc}") from None
            specs = {m: metric_spec(m) for m in comparison["metrics"]}
            records: dict = {}
            # the records, after the header on line 1, may hold predictions: a larger bound
            for number, line in _CompleteLines(reader, path, line_bound(comparison), notes,
                                               read=1):
                try:
                    text = line.decode("utf-8", errors="replace")
                    key, outcome = _unit_record(
                        safejson.loads(text, max_depth=Journal.MAX_DEPTH), keys, specs)
                except ValueError as exc:
                    what = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."
                    raise ProtocolError(f"{path}, line {number}: damaged journal record "
                                        f"({what})") from None
                records[key] = outcome
    except OSError as exc:
        raise ProtocolError(f"cannot read {path}: {exc.strerror}") from None
    return RecordedRun(comparison, candidates, protocol, records, notes)


def _described(doc) -> tuple[dict, list, Protocol]:
    """The header's comparison checked: (document, candidates, protocol)."""
    if doc is None:
        raise InputError("this journal was written before journals recorded their comparison "
                         "and predictions; run the compare again with a new --resume file")
    if not isinstance(doc, dict):
        raise InputError("comparison is not an object")
    if doc.get("task") not in (CLASSIFICATION, REGRESSION, CLUSTERING):
        raise InputError(f"task is {_shown(doc.get('task'))}")
    p = doc["protocol"]
    fields = ("kind", "folds", "repeats", "seed", "n_clusters")
    if not isinstance(p, dict) or not all(
            type(p.get(f)) is int or (f == "kind" and isinstance(p.get(f), str))
            or (f == "n_clusters" and p.get(f) is None) for f in fields):
        raise InputError("protocol is not kind, folds, repeats, seed and n_clusters")
    protocol = Protocol(p["kind"], p["folds"], p["repeats"], p["seed"], p["n_clusters"])
    metrics = doc["metrics"]
    if not (isinstance(metrics, list) and metrics and all(isinstance(m, str) for m in metrics)):
        raise InputError("metrics is not a list of names")
    for m in metrics:
        metric_spec(m)  # an unknown name is refused
    candidates = []
    for c in doc["candidates"]:
        if not (isinstance(c, dict) and isinstance(c.get("algorithm"), str)
                and isinstance(c.get("label"), str) and isinstance(c.get("params"), dict)
                and isinstance(c.get("grid"), dict) and isinstance(c.get("tune"), dict)
                and type(c.get("tune_cv")) is int and isinstance(c.get("configuration"), str)):
            raise InputError(f"candidate {_shown(c)} is not algorithm, label, params, grid, "
                             "tune, tune_cv and configuration")
        tune_by = c.get("tune_by", "")
        if not isinstance(tune_by, str):
            raise InputError(f"candidate {_shown(c)}: tune_by is not a string")
        noise = c.get("noise", 0.0)  # absent from journals written before --noise
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) \
                or not 0 <= noise < 1:
            raise InputError(f"candidate {_shown(c)}: noise is not a level in [0, 1)")
        candidates.append(Candidate(c["algorithm"], c["params"], c["label"], c["grid"],
                                    c["tune"], c["tune_cv"], c["configuration"], tune_by,
                                    float(noise)))
    if not candidates or len({c.label for c in candidates}) != len(candidates):
        raise InputError("candidates are missing or share a label")
    names = set()
    for d in doc["datasets"]:
        if not (isinstance(d, dict) and isinstance(d.get("name"), str)
                and all(type(d.get(f)) is int and 0 <= d[f] <= MAX_RECORDED_ROWS
                        for f in ("rows", "labelled"))
                and (d.get("classes") is None or (isinstance(d["classes"], list) and all(
                    isinstance(v, str) for v in d["classes"])))
                and (d.get("n_clusters") is None or type(d["n_clusters"]) is int)):
            raise InputError(f"data set {_shown(d)} is not name, rows, labelled, classes and "
                             "n_clusters")
        if d["name"] in names:
            raise InputError(f"the data set {d['name']!r} is named twice")
        names.add(d["name"])
    if not names:
        raise InputError("no data set is named")
    return doc, candidates, protocol


def _expected_keys(comparison: dict, candidates, protocol: Protocol) -> set:
    """Every unit key of the described comparison (see :func:`unit_key`)."""
    from ensemblekit.experiment.protocol import check_size

    check_size(len(comparison["datasets"]), len(candidates), protocol)
    folds = range(1, protocol.folds + 1) if protocol.kind == "cv" else (0,)
    return {(d["name"], c.algorithm, c.params_json, r, f)
            for d in comparison["datasets"] for c in candidates
            for r in range(1, protocol.repeats + 1) for f in folds}
