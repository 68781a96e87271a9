"""Model files: data only, safe to load, byte-for-byte reproducible, written atomically.

A model file (format 3) is a zip archive of plain data, described precisely in
``docs/model-format.md``:

``metadata.json``
    A JSON object with sorted keys: ``format_version`` (:data:`FORMAT_VERSION`),
    ``ensemblekit_version``, ``state`` (the scalars of the stored state, see
    :func:`ensemblekit.state.collect`), ``arrays`` (the byte size of every
    array member, recorded at write time), ``digest`` (see below) and every
    key the caller passed to :func:`save_model` (by convention ``algorithm``,
    ``task``, ``params``, ``schema``, ``seed`` and ``training_data``).
``<name>.npy``
    One array per member, in numpy's ``.npy`` format (C order, little-endian,
    a plain numeric or boolean dtype), named after its place in the state
    (``model/feature_.npy``, ``model/estimators_/3/value_.npy``).

Nothing in a file names a class or a module: the reader of the metadata
(:mod:`ensemblekit.app.models`) chooses the class from the registry entry that
``algorithm`` names and rebuilds it with :func:`ensemblekit.state.restore`,
which checks every array and scalar against the class's declaration.

Reading a model file is reading untrusted input. :func:`load_model` goes in
this order, and nothing is decompressed beyond a size that was checked first:

1. The file is a regular file no larger than :func:`max_model_bytes`; the zip
   directory holds ``metadata.json`` and at most :data:`MAX_ARRAYS` arrays,
   none encrypted, each stored or deflated with a declared size within the
   limits (``metadata.json`` at most :data:`MAX_METADATA_BYTES`).
2. ``metadata.json`` is read through a bounded reader and parsed with a
   nesting limit (:mod:`ensemblekit.safejson`); the array members must be
   exactly those it records, with the recorded sizes, together within
   :func:`max_model_bytes`.
3. Each array member is read through a reader that stops at its recorded size,
   and the digest is checked: one SHA-256 over the metadata (every key but
   ``digest``, in a canonical JSON form) and each member's name and bytes, in
   name order, so editing any of them is noticed.
4. Each ``.npy`` header is parsed (numpy's own parser) and must describe a
   C-order array of a plain dtype whose data is exactly the rest of the
   member, so a header that lies about its shape or dtype is refused before
   anything is allocated; the data is then read with
   ``numpy.load(..., allow_pickle=False)``.

The digest is a check against damage and accidental editing, not proof of who
wrote the file: anyone can recompute it. Against a hostile file, the bounds,
the declared state and the checks of each model class are what protect.

Reproducibility: the same state and metadata give the same bytes (sorted
members, fixed dates, sorted JSON keys).

This module imports only the standard library and numpy (inside the functions
that need it), so ``predict`` and ``show`` start fast.
"""

from __future__ import annotations

import hashlib
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
    "MAX_ARRAYS",
    "MAX_METADATA_BYTES",
    "ModelFileError",
    "StoredArray",
    "save_model",
    "load_model",
    "read_metadata",
    "data_fingerprint",
    "max_model_bytes",
    "redigest",
]

FORMAT_VERSION = 3
"""Version of the model-file layout written by this module; bumped on any incompatible change.

Version 3 (ensemblekit 0.3) holds plain arrays and JSON only; versions 1 and 2
(object graphs) are refused with advice to fit the model again.
"""

METADATA_MEMBER = "metadata.json"
_RESERVED_KEYS = ("format_version", "ensemblekit_version", "state", "arrays", "digest")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # earliest date a zip entry can hold

MAX_METADATA_BYTES = 8 << 20
"""Largest ``metadata.json`` read (8 MiB: a schema of 10,000 attributes needs about 0.5 MiB,
and the scalars of an ensemble of 1,000 members a few hundred KiB)."""

MAX_ARRAYS = 200_000
"""Most array members a model file may hold (a forest of 10,000 trees of ten arrays fits)."""

_MAX_METADATA_DEPTH = 16  # metadata nests a few levels (schema -> attributes -> values; state -> members)
_DEFAULT_MAX_MODEL_MB = 256
_LIMIT_VARIABLE = "ENSEMBLEKIT_MAX_MODEL_MB"
_DIGEST_PREFIX = b"ensemblekit model v3\n"
_PLAIN_DTYPES = frozenset("?bBhHiIlLqQefd")  # numpy type characters of the dtypes a state may hold


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


def save_model(path, state, arrays, metadata) -> None:
    """Write a model's stored state and its metadata to a model file, atomically.

    The bytes depend only on ``state``, ``arrays`` and ``metadata`` (and the
    versions of ensemblekit, numpy and zlib): saving the same fitted model
    twice, even from different processes, gives identical files.

    Parameters
    ----------
    path : str or os.PathLike
        Destination (see :func:`ensemblekit.atomic.write_atomic`: a regular
        file is replaced atomically, a symlink's target is written, a device
        or FIFO is written in place). On any error ``path`` is left as it was.
    state : dict
        JSON-ready scalars of the stored state (what :func:`ensemblekit.state.collect`
        gives, grouped by part: ``{"prep": ..., "model": ...}``).
    arrays : mapping of str to ndarray
        Array name (``"model/feature_"``) -> array of a plain numeric or boolean dtype.
    metadata : mapping
        JSON-serialisable information to keep next to the model, e.g.
        ``{"algorithm": "c45", "params": {...}, "schema": schema.to_dict(),
        "seed": 1}``. numpy scalars and arrays are converted to Python numbers
        and lists, tuples become lists. Must not use the keys of
        ``_RESERVED_KEYS`` (``format_version``, ``ensemblekit_version``,
        ``state``, ``arrays``, ``digest``), which this function fills in.

    Raises
    ------
    ModelFileError
        If the file cannot be written (the OS error is in the message), or the
        model is larger than :func:`max_model_bytes` or holds more than
        :data:`MAX_ARRAYS` arrays -- so a model that could not be loaded back
        is never written.
    ValueError
        If ``metadata`` uses a reserved key.
    TypeError
        If ``metadata`` is not a mapping or holds a value JSON cannot store, or
        an array has a dtype a model file cannot hold.
    """
    import numpy as np

    name = os.fspath(path)
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping, got {type(metadata).__name__}")
    clash = sorted(set(metadata) & set(_RESERVED_KEYS))
    if clash:
        raise InputError(f"metadata key(s) {', '.join(clash)} are reserved for the model file itself")
    members = {}
    for key in sorted(arrays):
        arr = np.ascontiguousarray(arrays[key])
        if arr.dtype.char not in _PLAIN_DTYPES:
            raise TypeError(f"array {key} has dtype {arr.dtype}, which a model file cannot hold")
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, arr, version=(1, 0), allow_pickle=False)
        members[f"{key}.npy"] = buffer.getvalue()
    limit = max_model_bytes()
    if len(members) > MAX_ARRAYS:
        raise ModelFileError(f"cannot save {name}: the model holds {len(members)} arrays, more than "
                             f"the {MAX_ARRAYS} a model file may hold")
    if sum(map(len, members.values())) > limit:
        raise ModelFileError(f"cannot save {name}: the model is larger than {_limit_text(limit)}")

    record = dict(metadata)
    record["format_version"] = FORMAT_VERSION
    record["ensemblekit_version"] = __version__
    record["state"] = state
    record["arrays"] = {member: len(data) for member, data in members.items()}
    try:
        record = json.loads(json.dumps(record, default=_json_default, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"metadata for {name} cannot be stored as JSON: {exc}") from exc
    record["digest"] = _digest(record, members)
    text = json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False)
    raw = (text + "\n").encode("utf-8")
    if len(raw) > MAX_METADATA_BYTES or safejson.nesting_depth(text) > _MAX_METADATA_DEPTH:
        raise ModelFileError(f"cannot save {name}: the metadata is larger or deeper than a model file allows")
    archive = _zip_bytes([(METADATA_MEMBER, raw), *members.items()])
    _atomic_write(name, archive)


class StoredArray:
    """One array member of a model file: its header read and checked, its data not yet.

    Attributes
    ----------
    name : str
        The member's name without ``.npy`` (``"model/feature_"``).
    shape : tuple of int
        As the header declares it; the member holds exactly that many items.
    dtype : numpy.dtype
        A plain numeric or boolean dtype.
    """

    def __init__(self, source: str, name: str, data: bytes):
        import numpy as np

        self.name, self._source, self._data = name, source, data
        buffer = io.BytesIO(data)
        try:
            version = np.lib.format.read_magic(buffer)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(buffer)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(buffer)
            else:
                raise ValueError(f"npy version {version}")
        except (ValueError, SyntaxError, TypeError, OverflowError, MemoryError) as exc:
            raise _damaged(source, f"{name}.npy: not a .npy array ({_one_line(exc)})") from None
        if dtype.hasobject or dtype.char not in _PLAIN_DTYPES or dtype.byteorder == ">":
            raise _damaged(source, f"{name}.npy holds dtype {dtype}, not plain numbers")
        if fortran:
            raise _damaged(source, f"{name}.npy is in Fortran order; model files hold C order")
        count = 1
        for axis in shape:
            count *= axis
        if count * dtype.itemsize != len(data) - buffer.tell():
            raise _damaged(source, f"{name}.npy: its header declares shape {shape} of {dtype}, "
                                   f"{count * dtype.itemsize} bytes, but the member holds "
                                   f"{len(data) - buffer.tell()}")
        self.shape, self.dtype = tuple(shape), dtype

    def read(self):
        """The array (read with ``numpy.load(..., allow_pickle=False)``)."""
        import numpy as np

        try:
            return np.load(io.BytesIO(self._data), allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise _damaged(self._source, f"{self.name}.npy: {_one_line(exc)}") from None


def load_model(path) -> tuple[dict, dict]:
    """Read a model file written by :func:`save_model`, refusing damaged or hostile content.

    The checks, in order, are those of the module docstring: sizes and zip
    flags before reading, bounded reads, the nesting of the JSON, the members
    against the recorded ones, the digest, and every ``.npy`` header against
    its member's size. Nothing in the file is executed or names code.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    metadata : dict
        The full content of ``metadata.json``: the caller's keys plus
        ``format_version``, ``ensemblekit_version``, ``state``, ``arrays`` and
        ``digest``.
    arrays : dict of str to StoredArray
        Array name (without ``.npy``) -> its checked header and data. The
        caller checks them against a declaration
        (:func:`ensemblekit.state.restore`) before reading them.

    Raises
    ------
    ModelFileError
        One line naming the file, when: it cannot be read or is not a regular
        file; it is not a zip, is truncated or damaged, or lacks a valid
        ``metadata.json`` ("... is not an ensemblekit model file (...)"); it is
        larger than :func:`max_model_bytes`, holds too many members or an
        encrypted one; its format version differs from this ensemblekit's
        (earlier: "written by an earlier version; fit it again"); it was edited
        or damaged after saving ("... was modified after it was written"); or
        an array member is not a plain ``.npy`` array of the size it declares
        ("... the model file is damaged: ...").
    """
    name = os.fspath(path)
    metadata, members = _read_archive(name, with_arrays=True)
    if _digest(metadata, members) != metadata["digest"]:
        raise ModelFileError(f"{name} was modified after it was written (the model digest does not match)")
    arrays = {member[:-4]: StoredArray(name, member[:-4], data) for member, data in members.items()}
    return metadata, arrays


def read_metadata(path) -> dict:
    """Read only the metadata of a model file, without its arrays.

    Imports neither numpy nor anything else outside the standard library, so
    it is fast; it checks the zip directory and the metadata's own form, but
    not the digest or the arrays (:func:`load_model` does).

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
    metadata, _ = _read_archive(os.fspath(path), with_arrays=False)
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


def _read_archive(name, *, with_arrays):
    """Open and validate the zip; return (metadata, {member: bytes} or None)."""
    limit = max_model_bytes()
    try:
        # a FIFO or device is refused before it is opened: opening a FIFO blocks until a writer
        # comes, and the check after opening would never run
        if not stat.S_ISREG(os.stat(name).st_mode):
            raise ModelFileError(f"cannot read model file {name}: not a regular file")
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
                listed = archive.infolist()
                if len(listed) > MAX_ARRAYS + 1:
                    raise _damaged(name, f"it holds {len(listed)} members, more than a model file may")
                entries = {i.filename: i for i in listed}
                if METADATA_MEMBER not in entries:
                    raise _not_a_model(name, f"no {METADATA_MEMBER} inside")
                if len(listed) != len(entries):
                    raise _damaged(name, "a member appears twice in the archive")
                _check_entry(name, entries[METADATA_MEMBER], MAX_METADATA_BYTES)
                raw = _read_bounded(name, archive, entries[METADATA_MEMBER], MAX_METADATA_BYTES)
                try:
                    metadata = safejson.loads(raw.decode("utf-8"), max_depth=_MAX_METADATA_DEPTH)
                except (UnicodeDecodeError, ValueError) as exc:
                    raise _not_a_model(name,
                                       f"{METADATA_MEMBER} is not valid JSON: {_one_line(exc)}") from None
                _check_metadata(name, metadata)
                recorded = metadata["arrays"]
                extra = sorted(set(entries) - set(recorded) - {METADATA_MEMBER})
                missing = sorted(set(recorded) - set(entries))
                if extra or missing:
                    what = (f"unexpected members in the archive ({', '.join(extra[:3])})" if extra
                            else f"recorded members missing from the archive ({', '.join(missing[:3])})")
                    raise _damaged(name, what)
                members = None
                if with_arrays:
                    members = {}
                    for member in sorted(recorded):
                        entry = entries[member]
                        _check_entry(name, entry, recorded[member])
                        if entry.file_size != recorded[member]:
                            raise _damaged(name, f"{member} is {entry.file_size} bytes in the zip "
                                                 f"directory but {recorded[member]} in the metadata")
                        members[member] = _read_bounded(name, archive, entry, recorded[member])
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {name}: {exc.strerror or _one_line(exc)}") from exc
    return metadata, members


def _check_entry(name, entry: zipfile.ZipInfo, bound: int) -> None:
    """Refuse a zip member before reading it: encrypted, an odd method, or declared too large."""
    if entry.flag_bits & 0x1:
        raise _damaged(name, f"{entry.filename} is encrypted")
    if entry.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _damaged(name, f"{entry.filename} uses compression method {entry.compress_type}")
    if entry.file_size > bound:
        raise _damaged(name, f"{entry.filename} would inflate to {entry.file_size} bytes, more than "
                             f"the {bound} bytes allowed")


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
    if version < FORMAT_VERSION:
        written_by = metadata.get("ensemblekit_version", "an unknown version")
        raise ModelFileError(
            f"{name}: written by an earlier version (ensemblekit {written_by}, model file format "
            f"{version}; this ensemblekit {__version__} reads format {FORMAT_VERSION}); fit it again")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{name} has model file format version {version}, but this ensemblekit ({__version__}) "
            f"reads format version {FORMAT_VERSION}; upgrade ensemblekit")
    digest = metadata.get("digest")
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        raise _damaged(name, f"{METADATA_MEMBER} has no digest")
    record = metadata.get("arrays")
    limit = max_model_bytes()
    if not isinstance(record, dict) or not all(
            isinstance(k, str) and k.endswith(".npy") and _is_size(v) for k, v in record.items()):
        raise _damaged(name, f"{METADATA_MEMBER} does not record the arrays' sizes")
    if len(record) > MAX_ARRAYS:
        raise _damaged(name, f"it records {len(record)} arrays, more than the {MAX_ARRAYS} allowed")
    total = sum(record.values())
    if total > limit:
        raise _damaged(name, f"its arrays would take {total} bytes, more than {_limit_text(limit)}")
    if not isinstance(metadata.get("state"), dict):
        raise _damaged(name, f"{METADATA_MEMBER} holds no state")


def _is_size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _digest(metadata: dict, members: Mapping) -> str:
    """SHA-256 over the metadata without ``digest`` (canonical JSON) and each member, by name."""
    body = {k: v for k, v in metadata.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(_DIGEST_PREFIX)
    digest.update(text.encode("ascii"))
    for member in sorted(members):
        data = members[member]
        digest.update(f"\n{member} {len(data)}\n".encode())
        digest.update(data)
    return "sha256:" + digest.hexdigest()


def redigest(metadata: dict, members: Mapping) -> str:
    """The digest :func:`save_model` would record for ``metadata`` and ``members`` (bytes by
    member name, ``.npy`` included); for tools and tests that build model files by hand."""
    return _digest(metadata, members)


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
    """A zip of (name, bytes) with fixed dates and attributes, deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member_name, data in members:
            info = zipfile.ZipInfo(member_name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # same header on every platform
            info.external_attr = 0o644 << 16
            archive.writestr(info, data, compresslevel=6)
    return buffer.getvalue()


def _atomic_write(name, data) -> None:
    from ensemblekit.atomic import write_atomic, write_error_message

    try:
        write_atomic(name, data, fsync=True)
    except OSError as exc:  # one line; a full disk reads "no space left on device writing NAME"
        raise ModelFileError(write_error_message(name, exc, "model file")) from exc

