"""The resume journal (``--resume``): finished units on disk, so a killed run goes on later.

A journal is a JSON-lines file. Its first line names the comparison by a
fingerprint of everything that decides the units' results (:func:`run_fingerprint`);
each further line records one finished unit under its key (:func:`unit_key`):
its scores and seconds, or its error. The runner appends each unit as soon as it
finishes and skips the units a journal already holds.

Every line is strict JSON. A score that is not finite (an RRSE of a constant
target, say) is written as the string ``"nan"``, ``"inf"`` or ``"-inf"`` and read
back as that float, so a resumed run sees exactly the scores the first run computed.

This module is the only part of :mod:`ensemblekit.experiment` that touches files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ensemblekit import safejson
from ensemblekit.errors import InputError
from ensemblekit.experiment.protocol import Candidate, Plan, Protocol, ProtocolError, Unit, task_of


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


class Journal:
    """Append-only JSON-lines record of finished units (``--resume``).

    The first line names the comparison (a fingerprint of data, candidates,
    protocol and metrics); each further line is one finished unit. A line cut
    short by a killed process is dropped when the journal is opened again.

    The file is read line by line with a bound: a line longer than
    :attr:`MAX_LINE` bytes, or with JSON nested deeper than :attr:`MAX_DEPTH`
    levels (measured before parsing, :mod:`ensemblekit.safejson`), is refused
    with a :class:`ProtocolError` naming the file and the line. Memory stays
    bounded by the comparison's units, whatever the file holds.

    Parameters
    ----------
    path : pathlib.Path
        The journal file; created (with its header) when it is missing, empty
        or holds only a header cut short.
    fingerprint : str
        :func:`run_fingerprint` of the comparison; a file with another one is
        refused.
    keys : set of tuple
        :func:`unit_key` of every unit of the comparison; a record of any other
        unit is refused as damaged.
    metrics : sequence of str
        A record without an error must hold a score for each (a number, or
        ``"nan"``, ``"inf"``, ``"-inf"``).

    Raises
    ------
    ProtocolError
        If the file cannot be read or written, records another comparison, or
        holds a damaged or over-long line.
    """

    VERSION = 1
    #: Longest line read back, newline included (4 MiB). The records written here
    #: take a few hundred bytes; a longer line was not written by ensemblekit.
    MAX_LINE = 4 * 2**20
    #: Deepest JSON nesting read back; a record is 2 levels deep (its scores).
    MAX_DEPTH = 8

    def __init__(self, path: Path, fingerprint: str, keys: set, metrics: Sequence[str]):
        self.path = path
        self.fingerprint = fingerprint
        self._done: dict[tuple, dict] = {}
        try:
            with open(path, "rb") as reader:
                complete, total = self._read(reader, fingerprint, keys, metrics)
        except FileNotFoundError:
            complete = total = 0
        except OSError as exc:
            raise ProtocolError(f"cannot read --resume file {path}: {exc.strerror}") from None
        if complete == 0:  # new, empty, or only a header cut short: start afresh
            try:
                self._fh = open(path, "w", encoding="utf-8")
            except OSError as exc:
                raise ProtocolError(f"cannot write --resume file {path}: {exc.strerror}") from None
            self._write({"ensemblekit_journal": self.VERSION, "run": fingerprint})
            return
        if complete != total:  # drop a half-written last line
            with open(path, "r+b") as fh:
                fh.truncate(complete)
        self._fh = open(path, "a", encoding="utf-8")

    def _read(self, reader, fingerprint: str, keys: set, metrics: Sequence[str]) -> tuple[int, int]:
        """Check the header and keep the finished units.

        Returns (bytes of complete lines, bytes read).
        """
        path = self.path
        complete = total = 0
        number = 0
        while True:
            line = reader.readline(self.MAX_LINE + 1)
            if not line:
                return complete, total
            number += 1
            total += len(line)
            if not line.endswith(b"\n"):
                if len(line) > self.MAX_LINE:
                    raise ProtocolError(
                        f"{path}, line {number}: longer than {self.MAX_LINE // 2**20} MiB, "
                        "which no journal record is; use a new --resume file or delete this one")
                return complete, total  # the end of the file: a last line cut short
            text = line.decode("utf-8", errors="replace")
            if number == 1:
                try:
                    head = safejson.loads(text, max_depth=self.MAX_DEPTH)
                except ValueError:  # not JSON, or nested too deeply
                    head = {}
                if not isinstance(head, dict) or head.get("ensemblekit_journal") != self.VERSION \
                        or head.get("run") != fingerprint:
                    raise ProtocolError(
                        f"{path} records a different comparison (other data, algorithms, "
                        "parameters, protocol, seed, metrics or ensemblekit version); use a new "
                        "--resume file or delete this one")
            else:
                key, outcome = self._record(text, number, keys, metrics)
                self._done[key] = outcome
            complete += len(line)

    def _record(self, text: str, number: int, keys: set, metrics: Sequence[str]) -> tuple:
        """One unit line as (key, outcome); ProtocolError naming the line if it is damaged."""
        try:
            rec = safejson.loads(text, max_depth=self.MAX_DEPTH)
            key = (rec["dataset"], rec["algorithm"], rec["params"], rec["repeat"], rec["fold"])
            outcome = {"scores": {m: _read_score(v) for m, v in rec["scores"].items()},
                       "seconds": float(rec["seconds"]), "error": rec.get("error")}
            if key not in keys:
                raise InputError("a unit that is not part of this comparison")
            if outcome["error"] is None and not all(
                    isinstance(outcome["scores"].get(m), (int, float)) for m in metrics):
                raise InputError("missing scores")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            # the message may quote the line
            what = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."
            raise ProtocolError(f"{self.path}, line {number}: damaged journal record ({what}); "
                                "use a new --resume file or delete this one") from None
        return key, outcome

    def done(self) -> dict[tuple, dict]:
        """Finished units read from the file: ``{key: outcome}``."""
        return dict(self._done)

    def append(self, key: tuple, outcome: dict) -> None:
        """Record one finished unit and flush it to the operating system."""
        dataset, algorithm, params, repeat, fold = key
        self._write({"dataset": dataset, "algorithm": algorithm, "params": params, "repeat": repeat,
                     "fold": fold,
                     "scores": {m: _written_score(v) for m, v in outcome["scores"].items()},
                     "seconds": outcome["seconds"],
                     "error": outcome.get("error")})

    def _write(self, record: dict) -> None:
        self._fh.write(json.dumps(record, sort_keys=True, allow_nan=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


#: How a non-finite score is written (strict JSON has no NaN or Infinity).
_NON_FINITE = ("nan", "inf", "-inf")


def _written_score(value):
    """A score as the journal writes it: a finite number, or ``"nan"``, ``"inf"``, ``"-inf"``."""
    value = float(value)
    return value if np.isfinite(value) else repr(value)


def _read_score(value):
    """Inverse of :func:`_written_score`; older journals' bare ``NaN`` is read too."""
    if isinstance(value, str):
        if value not in _NON_FINITE:
            raise InputError(f"score {value[:40]!r} is not a number")
        return float(value)
    return value
