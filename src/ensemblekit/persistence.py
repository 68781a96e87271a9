"""Model files: safe to load, byte-for-byte reproducible, written atomically.

A model file is a zip archive with exactly two members:

``metadata.json``
    A JSON object with sorted keys: ``format_version`` (:data:`FORMAT_VERSION`),
    ``ensemblekit_version``, ``payload`` (the byte size of ``model.skops`` and
    of every member inside it, recorded at write time), ``digest`` (see
    below) and every key the caller passed to :func:`save_model` (by
    convention ``algorithm``, ``task``, ``params``, ``schema``, ``seed`` and
    ``training_data`` with a :func:`data_fingerprint`).
``model.skops``
    The estimator in the `skops <https://skops.readthedocs.io>`_ format: a
    zip of a JSON description of the object tree (``schema.json``) plus
    ``.npy`` arrays. skops does not use :mod:`pickle`.

Reading a model file is reading untrusted input (README, "Model files are
untrusted input"). :func:`load_model` goes in this order, and nothing is
decompressed beyond a size that was checked first:

1. The file is a regular file no larger than :func:`max_model_bytes`; the zip
   directory lists exactly the two members, neither encrypted, stored or
   deflated, with declared sizes within the limits (``metadata.json`` at most
   :data:`MAX_METADATA_BYTES`).
2. ``metadata.json`` is read through a bounded reader and parsed with a
   nesting limit (:mod:`ensemblekit.safejson`).
3. ``model.skops`` is read through a reader that stops at the size the
   metadata records, and the digest is checked: one SHA-256 over the
   metadata (every key but ``digest``, in a canonical JSON form) and the
   payload bytes, so editing either is noticed.
4. Each member of the payload must have exactly the recorded size and be
   referenced by ``schema.json``; every object the schema describes must be
   one of the exact types of :mod:`ensemblekit.model_types`.
5. Only then does skops build the objects, from an uncompressed copy of the
   payload whose sizes are known; :func:`ensemblekit.model_types.check_model` then
   checks their state (tree indices, shapes) before anything runs.

The digest is a check against damage and accidental editing, not proof of who
wrote the file: anyone can recompute it. Against a hostile file, steps 1, 2,
4 and 5 are what protect.

Reproducibility: the same estimator state and metadata give the same bytes.
skops names objects and array files after memory addresses (``id()``) and
stamps zip members with the current time; :func:`save_model` renumbers the
objects and files in document order, orders set members, and rewrites both
zips (ours and skops') with the fixed date 1980-01-01 (numpy already writes
the ``.npz`` files of sparse matrices with that date).

:func:`read_metadata` only needs the standard library, so ``ensemblekit
show`` stays fast; skops (and with it scikit-learn) is imported inside
:func:`save_model` and :func:`load_model`.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import os
import stat
import sys
import zipfile
import zlib
from collections.abc import Mapping

from ensemblekit import __version__, safejson
from ensemblekit.errors import InputError

__all__ = [
    "FORMAT_VERSION",
    "MAX_METADATA_BYTES",
    "ModelFileError",
    "save_model",
    "load_model",
    "read_metadata",
    "data_fingerprint",
    "max_model_bytes",
]

FORMAT_VERSION = 2
"""Version of the model-file layout written by this module; bumped on any incompatible change.

Version 2 (ensemblekit 0.2) added the recorded sizes and one digest over
metadata and payload; version 1 files are refused with advice to fit again.
"""

METADATA_MEMBER = "metadata.json"
PAYLOAD_MEMBER = "model.skops"
SCHEMA_MEMBER = "schema.json"
_RESERVED_KEYS = ("format_version", "ensemblekit_version", "payload", "digest")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # earliest date a zip entry can hold

MAX_METADATA_BYTES = 1 << 20
"""Largest ``metadata.json`` read (1 MiB; a model's schema of 10,000 attributes needs about 0.5 MiB)."""

_MAX_METADATA_DEPTH = 16  # metadata nests a few levels (schema -> attributes -> values)
_MAX_SCHEMA_DEPTH = 400  # skops nests ~3 levels per object level; loading recurses once per level
_DEFAULT_MAX_MODEL_MB = 256
_LIMIT_VARIABLE = "ENSEMBLEKIT_MAX_MODEL_MB"
_DIGEST_PREFIX = b"ensemblekit model v2\n"


def max_model_bytes() -> int:
    """The largest model accepted, in bytes (file size, and payload once uncompressed).

    256 MiB unless the environment variable ``ENSEMBLEKIT_MAX_MODEL_MB`` gives
    another whole number of MiB (at least 1). The limit is checked against the
    sizes in the zip directory and in the metadata before anything is
    decompressed, so a small file that would inflate to gigabytes is refused
    at once.

    Raises
    ------
    ModelFileError
        If the environment variable is set but is not a whole number >= 1.
    """
    text = os.environ.get(_LIMIT_VARIABLE)
    if text is None:
        return _DEFAULT_MAX_MODEL_MB << 20
    try:
        value = int(text)
        if value < 1:
            raise InputError
    except ValueError:
        raise ModelFileError(f"{_LIMIT_VARIABLE}={text!r}: expected a whole number of MiB >= 1") from None
    return value << 20


def _limit_text(limit: int) -> str:
    return f"the {limit >> 20} MiB limit for model files (set {_LIMIT_VARIABLE} to allow more)"


class ModelFileError(InputError):
    """A model file cannot be read, is damaged, or must not be trusted.

    ``str(error)`` is one line naming the file and what is wrong with it.
    Also raised by :func:`save_model` when the file cannot be written.
    """


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------


def save_model(path, estimator, metadata) -> None:
    """Write an estimator and its metadata to a model file, atomically.

    The bytes depend only on the estimator's state, the metadata and the
    versions of ensemblekit/skops/numpy/zlib: saving the same fitted model
    twice (even from different processes) gives identical files.

    Parameters
    ----------
    path : str or os.PathLike
        Destination (see :func:`ensemblekit.atomic.write_atomic`: a regular
        file is replaced atomically, a symlink's target is written, a device
        or FIFO is written in place). On any error ``path`` is left as it was.
    estimator : object
        A fitted estimator whose every object is of a type
        :mod:`ensemblekit.model_types` allows.
    metadata : mapping
        JSON-serialisable information to keep next to the model, e.g.
        ``{"algorithm": "c45", "params": {...}, "schema": schema.to_dict(),
        "seed": 1}``. numpy scalars and arrays are converted to Python numbers
        and lists, tuples become lists. Must not use the keys
        ``format_version``, ``ensemblekit_version``, ``payload`` or
        ``digest``, which this function fills in.

    Raises
    ------
    ModelFileError
        If the file cannot be written (the OS error is in the message); if
        the estimator holds a type that :func:`load_model` refuses, or its
        state fails the checks of :func:`ensemblekit.model_types.check_model`, or
        it is larger than :func:`max_model_bytes` -- so a model that could
        not be loaded back is never written.
    ValueError
        If ``metadata`` uses a reserved key.
    TypeError
        If ``metadata`` is not a mapping or holds a value JSON cannot store,
        or if skops cannot store the estimator (skops' own error).
    """
    from ensemblekit import model_types
    from ensemblekit.trust import DamagedModelError

    name = os.fspath(path)
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping, got {type(metadata).__name__}")
    clash = sorted(set(metadata) & set(_RESERVED_KEYS))
    if clash:
        raise InputError(f"metadata key(s) {', '.join(clash)} are reserved for the model file itself")

    sio = _skops_io()
    payload = _canonical_skops(sio.dumps(estimator, compression=zipfile.ZIP_DEFLATED))
    members = _member_sizes(payload)
    limit = max_model_bytes()
    if max(len(payload), sum(members.values())) > limit:
        raise ModelFileError(f"cannot save {name}: the model is larger than {_limit_text(limit)}")
    with zipfile.ZipFile(io.BytesIO(payload)) as inner:
        schema = json.loads(inner.read(SCHEMA_MEMBER))
    refused = model_types.refused_nodes(_nodes(schema))
    if refused:
        raise ModelFileError(
            f"cannot save {name}: the model holds types that ensemblekit refuses to load: "
            f"{', '.join(refused)}"
        )
    try:
        model_types.check_model(estimator)
    except DamagedModelError as exc:
        raise ModelFileError(
            f"cannot save {name}: the model's state would be refused on loading: {exc}") from None

    record = dict(metadata)
    record["format_version"] = FORMAT_VERSION
    record["ensemblekit_version"] = __version__
    record["payload"] = {"bytes": len(payload), "members": members}
    try:
        record = json.loads(json.dumps(record, default=_json_default, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"metadata for {name} cannot be stored as JSON: {exc}") from exc
    record["digest"] = _digest(record, payload)
    text = json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False)
    raw = (text + "\n").encode("utf-8")
    if len(raw) > MAX_METADATA_BYTES or safejson.nesting_depth(text) > _MAX_METADATA_DEPTH:
        raise ModelFileError(f"cannot save {name}: the metadata is larger or deeper than a model file allows")
    archive = _zip_bytes([(METADATA_MEMBER, raw), (PAYLOAD_MEMBER, payload)])
    _atomic_write(name, archive)


def load_model(path):
    """Read a model file written by :func:`save_model`, refusing untrusted or damaged content.

    The checks, in order, are those of the module docstring: sizes and zip
    flags before reading, bounded reads, the nesting of both JSON documents,
    the digest over metadata and payload, the payload's recorded member
    sizes, the exact types of every described object
    (:func:`ensemblekit.model_types.refused_nodes`), and, once built, the state of
    every object (:func:`ensemblekit.model_types.check_model`). No code named by
    the file runs: only the allowed classes are created, and none of them
    calls or evaluates anything from the file while being rebuilt.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    estimator : object
        The rebuilt estimator.
    metadata : dict
        The full content of ``metadata.json``: the caller's keys plus
        ``format_version``, ``ensemblekit_version``, ``payload`` and
        ``digest``.

    Raises
    ------
    ModelFileError
        One line naming the file, when: it cannot be read or is not a regular
        file; it is not a zip, is truncated or damaged, or lacks a valid
        ``metadata.json`` / payload ("... is not an ensemblekit model file
        (...)"); it is larger than :func:`max_model_bytes` or a member is
        encrypted; its format version differs from this ensemblekit's (both
        versions named); it was edited or damaged after saving ("... was
        modified after it was written"); it names a type that is not allowed
        (the types named); the objects cannot be rebuilt; or their state is
        not one a fit produces ("... the model file is damaged: ...").
    """
    from ensemblekit import model_types
    from ensemblekit.trust import DamagedModelError

    name = os.fspath(path)
    metadata, payload = _read_archive(name, with_payload=True)
    if _digest(metadata, payload) != metadata["digest"]:
        raise ModelFileError(f"{name} was modified after it was written (the model digest does not match)")
    members, schema = _read_payload(name, payload, metadata["payload"]["members"])
    refused = model_types.refused_nodes(_nodes(schema))
    if refused:
        raise ModelFileError(
            f"{name} names types that ensemblekit does not trust, refusing to load it: {', '.join(refused)}"
        )
    sio = _skops_io()
    stored = _zip_bytes([(member, data, zipfile.ZIP_STORED) for member, data in members.items()])
    del members
    try:
        estimator = sio.loads(stored, trusted=sio.get_untrusted_types(data=stored))
    except Exception as exc:
        raise ModelFileError(
            f"{name}: the model could not be rebuilt ({_one_line(exc)}); it was written by "
            f"ensemblekit {metadata.get('ensemblekit_version', '?')}, possibly with other library versions"
        ) from exc
    try:
        model_types.check_model(estimator)
    except DamagedModelError as exc:
        raise ModelFileError(f"{name}: the model file is damaged: {exc}") from None
    return estimator, metadata


def read_metadata(path) -> dict:
    """Read only the metadata of a model file, without loading the model.

    Imports neither skops nor scikit-learn (nor numpy), so it is fast; it
    checks the zip directory and the metadata's own form, but not the digest
    or the payload (:func:`load_model` does).

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    dict
        The content of ``metadata.json`` (see :func:`load_model`).

    Raises
    ------
    ModelFileError
        If the file cannot be read, is not an ensemblekit model file (not a
        zip, truncated, no or invalid ``metadata.json``, too large, an
        encrypted member), or has another format version (both versions
        named).
    """
    metadata, _ = _read_archive(os.fspath(path), with_payload=False)
    return metadata


def data_fingerprint(X, y=None) -> str:
    """A SHA-256 fingerprint of training data, to record which data a model saw.

    The hash covers, for ``X`` then ``y``: the dtype (as little-endian), the
    shape and the values in C order. Memory layout (C/Fortran order, byte
    order, strides) does not change it; any change of a value, shape or
    dtype does. ``-0.0`` and ``0.0`` differ; all NaNs produced by numpy or
    the data reader have the same bits and hash alike.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features (numeric, boolean or fixed-width string dtype).
    y : array-like of shape (n_samples,) or None, default=None
        Targets; ``None`` (no class) hashes differently from any array.

    Returns
    -------
    str
        ``"sha256:"`` followed by 64 lower-case hex digits.

    Raises
    ------
    ValueError
        If an array has dtype object (or another dtype without a stable byte
        representation).
    """
    import numpy as np

    digest = hashlib.sha256(b"ensemblekit data_fingerprint v1\n")
    for label, values in (("X", X), ("y", y)):
        if values is None:
            digest.update(f"{label} none\n".encode("ascii"))
            continue
        arr = np.asarray(values)
        if arr.dtype.kind not in "biufcSU":
            raise InputError(
                f"data_fingerprint needs numeric, boolean or string arrays; {label} has dtype {arr.dtype}"
            )
        if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        arr = np.ascontiguousarray(arr)
        digest.update(f"{label} {arr.dtype.str} {arr.shape}\n".encode("ascii"))
        digest.update(arr.tobytes(order="C"))
    return "sha256:" + digest.hexdigest()


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _not_a_model(name, why):
    return ModelFileError(f"{name} is not an ensemblekit model file ({why})")


def _damaged(name, why):
    return ModelFileError(f"{name}: the model file is damaged: {why}")


def _read_archive(name, *, with_payload):
    """Open and validate the outer zip; return (metadata, payload bytes or None)."""
    limit = max_model_bytes()
    try:
        with open(name, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ModelFileError(f"cannot read model file {name}: not a regular file")
            if info.st_size > limit:
                raise ModelFileError(f"{name} is larger than {_limit_text(limit)}")
            head = fh.read(4)
            fh.seek(0)
            try:
                archive = zipfile.ZipFile(fh)
            except (zipfile.BadZipFile, EOFError, ValueError, OverflowError, NotImplementedError):
                if head == b"PK\x03\x04":
                    raise _not_a_model(
                        name, "the zip archive is incomplete or damaged; the file looks truncated"
                    ) from None
                raise _not_a_model(name, "not a zip archive") from None
            with archive:
                entries = {i.filename: i for i in archive.infolist()}
                if METADATA_MEMBER not in entries:
                    raise _not_a_model(name, f"no {METADATA_MEMBER} inside")
                if with_payload and PAYLOAD_MEMBER not in entries:
                    raise _not_a_model(name, f"no {PAYLOAD_MEMBER} inside")
                extra = sorted(set(entries) - {METADATA_MEMBER, PAYLOAD_MEMBER})
                if extra or len(archive.infolist()) != len(entries):
                    raise _damaged(name,
                                   f"unexpected members in the archive ({', '.join(extra) or 'duplicates'})")
                bounds = {METADATA_MEMBER: MAX_METADATA_BYTES, PAYLOAD_MEMBER: limit}
                for member, entry in entries.items():
                    _check_entry(name, entry, bounds[member])
                raw = _read_bounded(name, archive, entries[METADATA_MEMBER], MAX_METADATA_BYTES)
                try:
                    metadata = safejson.loads(raw.decode("utf-8"), max_depth=_MAX_METADATA_DEPTH)
                except (UnicodeDecodeError, ValueError) as exc:
                    raise _not_a_model(name,
                                       f"{METADATA_MEMBER} is not valid JSON: {_one_line(exc)}") from None
                _check_metadata(name, metadata)
                payload = None
                if with_payload:
                    size = metadata["payload"]["bytes"]
                    if entries[PAYLOAD_MEMBER].file_size != size:
                        raise _damaged(name, f"{PAYLOAD_MEMBER} is {entries[PAYLOAD_MEMBER].file_size} bytes "
                                             f"in the zip directory but {size} in the metadata")
                    payload = _read_bounded(name, archive, entries[PAYLOAD_MEMBER], size)
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {name}: {exc.strerror or _one_line(exc)}") from exc
    return metadata, payload


def _check_entry(name, entry: zipfile.ZipInfo, bound: int) -> None:
    """Refuse a zip member before reading it: encrypted, an odd method, or declared too large."""
    if entry.flag_bits & 0x1:
        raise _damaged(name, f"{entry.filename} is encrypted")
    if entry.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _damaged(name, f"{entry.filename} uses compression method {entry.compress_type}")
    if entry.file_size > bound:
        allowed = _limit_text(bound) if entry.filename == PAYLOAD_MEMBER else f"the {bound} bytes allowed"
        raise _damaged(name,
                       f"{entry.filename} would inflate to {entry.file_size} bytes, more than {allowed}")


def _read_bounded(name, archive, entry: zipfile.ZipInfo, size: int) -> bytes:
    """Exactly ``size`` bytes of a member: never asks the decompressor for more than ``size + 1``."""
    try:
        with archive.open(entry) as fh:
            data = fh.read(size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise _damaged(name, f"{entry.filename}: {_one_line(exc)}") from None
    if len(data) != size and not (entry.filename == METADATA_MEMBER and len(data) <= size):
        raise _damaged(name, f"{entry.filename} holds {'more' if len(data) > size else 'fewer'} bytes "
                             f"than recorded ({size})")
    return data


def _check_metadata(name, metadata):
    if not isinstance(metadata, dict):
        raise _not_a_model(name, f"{METADATA_MEMBER} is not a JSON object")
    version = metadata.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _not_a_model(name, f"{METADATA_MEMBER} has no valid format_version")
    if version != FORMAT_VERSION:
        advice = "upgrade ensemblekit" if version > FORMAT_VERSION else "fit the model again"
        written_by = metadata.get("ensemblekit_version", "an unknown version")
        raise ModelFileError(
            f"{name} has model file format version {version} (written by ensemblekit {written_by}), "
            f"but this ensemblekit ({__version__}) reads format version {FORMAT_VERSION}; {advice}"
        )
    digest = metadata.get("digest")
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        raise _damaged(name, f"{METADATA_MEMBER} has no digest")
    record = metadata.get("payload")
    limit = max_model_bytes()
    if not isinstance(record, dict) or not _is_size(record.get("bytes")) or not isinstance(
            record.get("members"), dict) or not all(
            isinstance(k, str) and _is_size(v) for k, v in record["members"].items()):
        raise _damaged(name, f"{METADATA_MEMBER} does not record the payload's sizes")
    total = sum(record["members"].values())
    if record["bytes"] > limit or total > limit:
        raise _damaged(name, f"its payload would take {max(total, record['bytes'])} bytes, more than "
                             f"{_limit_text(limit)}")


def _is_size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _digest(metadata: dict, payload: bytes) -> str:
    """SHA-256 over the metadata without ``digest`` (canonical JSON) and the payload bytes."""
    body = {k: v for k, v in metadata.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(_DIGEST_PREFIX)
    digest.update(text.encode("ascii"))
    digest.update(b"\n")
    digest.update(payload)
    return "sha256:" + digest.hexdigest()


def _member_sizes(payload: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(payload)) as inner:
        return {i.filename: i.file_size for i in inner.infolist()}


def _read_payload(name, payload: bytes, recorded: dict):
    """The skops payload's members (bounded by the recorded sizes) and its parsed schema."""
    try:
        inner = zipfile.ZipFile(io.BytesIO(payload))
    except (zipfile.BadZipFile, EOFError, ValueError, OverflowError, NotImplementedError) as exc:
        raise _damaged(name, f"{PAYLOAD_MEMBER} is not a zip archive ({_one_line(exc)})") from None
    with inner:
        entries = {i.filename: i for i in inner.infolist()}
        if len(entries) != len(inner.infolist()) or set(entries) != set(recorded):
            raise _damaged(name, f"the members of {PAYLOAD_MEMBER} are not the recorded ones")
        if SCHEMA_MEMBER not in entries:
            raise _damaged(name, f"{PAYLOAD_MEMBER} has no {SCHEMA_MEMBER}")
        for member, entry in entries.items():
            _check_entry(name, entry, recorded[member])
            if entry.file_size != recorded[member]:
                raise _damaged(name, f"{member} is {entry.file_size} bytes in the zip directory but "
                                     f"{recorded[member]} in the metadata")
        members = {member: _read_bounded(name, inner, entry, recorded[member])
                   for member, entry in entries.items()}
    try:
        schema = safejson.loads(members[SCHEMA_MEMBER].decode("utf-8"), max_depth=_MAX_SCHEMA_DEPTH)
    except (UnicodeDecodeError, ValueError) as exc:
        raise _damaged(name, f"{SCHEMA_MEMBER}: {_one_line(exc)}") from None
    files = _referenced_files(schema)
    unused = sorted(set(members) - files - {SCHEMA_MEMBER})
    missing = sorted(files - set(members))
    if unused or missing:
        raise _damaged(name, f"{PAYLOAD_MEMBER} " + (f"holds members no object uses ({', '.join(unused[:3])})"
                                                     if unused else f"lacks {', '.join(missing[:3])}"))
    return members, schema


def _referenced_files(schema) -> set:
    files = set()
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if _is_node(value) and isinstance(value.get("file"), str):
                files.add(value["file"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return files


# ---------------------------------------------------------------------------
# what a payload describes
# ---------------------------------------------------------------------------


def _is_node(value) -> bool:
    """True for a dict describing one object in skops' schema."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("__loader__"), str)
        and isinstance(value.get("__module__"), str)
        and isinstance(value.get("__class__"), str)
    )


def _nodes(schema):
    """Every (module, class, loader) the schema describes.

    A dict carrying any of skops' three keys counts, whatever their values,
    so a node skops would read cannot hide from :func:`ensemblekit.model_types.refused_nodes`
    by a malformed key.
    """
    found = set()
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if {"__loader__", "__module__", "__class__"} & value.keys():
                found.add(tuple(str(value.get(key)) for key in ("__module__", "__class__", "__loader__")))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _skops_io():
    """Import and return ``skops.io``, skipping its scans for default trusted types.

    When ``skops.io`` is first imported it builds its default list of
    trusted types: every scikit-learn estimator, found with
    ``sklearn.utils.all_estimators()`` (which imports every module of
    scikit-learn, about half a second), and every scipy ufunc, each looked
    up in every loaded module (about 0.1 s). ensemblekit never relies on
    skops' list: :func:`load_model` screens every object the payload
    describes against the exact types of :mod:`ensemblekit.model_types` before
    skops sees it, so the import runs with ``all_estimators`` answering an
    empty list and the ufunc lookup answering none for ``scipy.special``.
    If skops was already imported elsewhere, it is returned as it is.
    """
    if "skops.io" in sys.modules:
        return sys.modules["skops.io"]
    from ensemblekit._imports import around_import

    # both scans run in the body of skops.io._trusted_types
    finder = around_import("skops.io._trusted_types", before=_skip_default_scans,
                           after=_restore_default_scans)
    try:
        import skops.io
    finally:
        if finder is not None:
            finder.remove()
    return skops.io


def _skip_default_scans():
    """Make ``all_estimators`` answer no classes and skops' public-type scan no
    names for ``scipy.special``; return the two real functions."""
    import scipy.special
    import sklearn.utils

    utils = importlib.import_module("skops.io._utils")
    real_estimators = sklearn.utils.all_estimators
    real_names = getattr(utils, "get_public_type_names", None)
    sklearn.utils.all_estimators = lambda *args, **kwargs: []
    if real_names is not None:
        def public_type_names(module, oftype):
            return [] if module is scipy.special else real_names(module=module, oftype=oftype)

        utils.get_public_type_names = public_type_names
    return real_estimators, real_names


def _restore_default_scans(module, reals) -> None:
    import sklearn.utils

    real_estimators, real_names = reals
    sklearn.utils.all_estimators = real_estimators
    if real_names is not None:
        sys.modules["skops.io._utils"].get_public_type_names = real_names


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def _json_default(value):
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} value {value!r} is not JSON-serialisable")


def _zip_bytes(members) -> bytes:
    """A zip of (name, bytes, [compress_type]) with fixed dates and attributes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member in members:
            member_name, data = member[0], member[1]
            compress = member[2] if len(member) > 2 else zipfile.ZIP_DEFLATED
            info = zipfile.ZipInfo(member_name, date_time=_ZIP_DATE)
            info.compress_type = compress
            info.create_system = 3  # same header on every platform
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def _canonical_skops(data) -> bytes:
    """Make a skops archive independent of memory addresses and the clock.

    (Sets, whose saved order follows hashing, cannot occur: no allowed type is a set.)
    """
    with zipfile.ZipFile(io.BytesIO(data)) as src:
        schema = json.loads(src.read("schema.json"))
        stored = {i.filename: (src.read(i), i.compress_type) for i in src.infolist()}

    new_ids = {}
    new_files = {}

    def renumber(value):
        if isinstance(value, dict):
            if _is_node(value):
                old = value.get("__id__")
                if isinstance(old, int) and not isinstance(old, bool):
                    value["__id__"] = new_ids.setdefault(old, len(new_ids) + 1)  # skops skips id 0
                old_file = value.get("file")
                if isinstance(old_file, str):
                    if old_file not in new_files:
                        new_files[old_file] = f"{len(new_files) + 1}{os.path.splitext(old_file)[1]}"
                    value["file"] = new_files[old_file]
            for child in value.values():
                renumber(child)
        elif isinstance(value, list):
            for child in value:
                renumber(child)

    renumber(schema)
    members = []
    for old_file, new_file in new_files.items():
        content, compress = stored[old_file]
        members.append((new_file, content, compress))
    members.append(("schema.json", json.dumps(schema, indent=2).encode("utf-8"), zipfile.ZIP_DEFLATED))
    return _zip_bytes(members)


def _atomic_write(name, data) -> None:
    from ensemblekit.atomic import write_atomic, write_error_message

    try:
        write_atomic(name, data, fsync=True)
    except OSError as exc:  # one line; a full disk reads "no space left on device writing NAME"
        raise ModelFileError(write_error_message(name, exc, "model file")) from exc
