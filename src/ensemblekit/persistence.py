"""Model files: safe to load, byte-for-byte reproducible, written atomically.

A model file is a zip archive (``ZIP_DEFLATED``) with two members:

``metadata.json``
    A JSON object with sorted keys: ``format_version`` (:data:`FORMAT_VERSION`),
    ``ensemblekit_version``, ``payload_sha256`` (hex SHA-256 of
    ``model.skops``) and every key the caller passed to :func:`save_model`
    (by convention ``algorithm``, ``params``, ``schema``, ``data`` -- a
    :func:`data_fingerprint` -- and ``seed``).
``model.skops``
    The estimator in the `skops <https://skops.readthedocs.io>`_ format: a
    zip of a JSON description of the object tree plus ``.npy`` arrays. skops
    does not use :mod:`pickle`; loading it only imports named classes and
    fills in their attributes, and a type outside the allow-list is refused
    before any object is built (see :func:`load_model` for the policy).

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
import inspect
import io
import json
import os
import sys
import zipfile
import zlib
from collections.abc import Mapping

from ensemblekit import __version__

__all__ = [
    "FORMAT_VERSION",
    "ModelFileError",
    "save_model",
    "load_model",
    "read_metadata",
    "data_fingerprint",
    "TRUSTED_PACKAGES",
    "TRUSTED_BUILTINS",
    "DENIED_MODULES",
    "DENIED_NAMES",
]

FORMAT_VERSION = 1
"""Version of the model-file layout written by this module; bumped on any incompatible change."""

METADATA_MEMBER = "metadata.json"
PAYLOAD_MEMBER = "model.skops"
_RESERVED_KEYS = ("format_version", "ensemblekit_version", "payload_sha256")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # earliest date a zip entry can hold

# ---------------------------------------------------------------------------
# Trust policy for the types a model file may name.
#
# skops trusts a fixed set of types by itself (Python containers and
# primitives, numpy arrays and dtypes, scipy sparse matrices, numpy ufuncs;
# also scipy ufuncs and the public scikit-learn estimator classes, except
# that ensemblekit imports skops with those two lists left empty, see
# _skops_io). Every other type or
# function named in the file is reported by ``skops.io.get_untrusted_types``;
# load_model accepts such a name only when ALL of these hold:
#
# 1. it is listed in TRUSTED_BUILTINS; or
# 2. (a) its module's top-level package is in TRUSTED_PACKAGES;
#    (b) the module is not under DENIED_MODULES and no part of its dotted
#        path is "__main__", "tests", "testing" or "conftest";
#    (c) the name is not in DENIED_NAMES;
#    (d) the module imports and the name resolves to an object in it;
#    (e) the object is a class -- or, only where the file uses the name as a
#        plain function reference (skops' FunctionNode, never called while
#        loading), any callable that is not a module;
#    (f) the module the object says it is defined in (``__module__``) also
#        passes (a)-(c), as does ``<that module>.<its __qualname__>``; a
#        numpy ufunc (scipy.special's functions are ufuncs) has no
#        ``__module__`` and is judged by the module it was found in.
# Anything else -- builtins.eval, os.system, posix.system, subprocess.*,
# functools.partial, a class from an unknown package -- is refused.
#
# Why more than a module-prefix check: skops' ConstructorFromReduceNode calls
# the named object with arguments taken from the file, so a *function* such as
# numpy.save or a class such as numpy.memmap would run with an attacker's
# arguments; (e) and DENIED_NAMES close that. (f) stops re-exports such as a
# trusted module that imported ``system`` from ``os``.
# ---------------------------------------------------------------------------

TRUSTED_PACKAGES = frozenset({"ensemblekit", "sklearn", "numpy", "scipy"})
"""Top-level packages whose classes a model file may name (policy rule 2a)."""

TRUSTED_BUILTINS = frozenset({"builtins.frozenset"})
"""Names outside TRUSTED_PACKAGES that are trusted as is (policy rule 1).

skops reports no builtins for ordinary scikit-learn models (checked for
pipelines with ColumnTransformer/SimpleImputer/OneHotEncoder/KNN, trees,
forests, boosting, bagging, stacking, voting, MLP, SVC, GMM, KMeans, ...).
``frozenset`` is the one immutable builtin container skops does not trust by
itself; building one from a list runs no code of the file's choosing.
"""

DENIED_MODULES = (
    # numpy: file and network input/output, compilers, C pointers, test helpers
    "numpy.f2py",
    "numpy.distutils",
    "numpy.ctypeslib",
    "numpy.lib.format",
    "numpy.lib.npyio",
    "numpy.lib._npyio_impl",
    "numpy.lib._datasource",
    "numpy.lib._utils_impl",
    "numpy._pytesttester",
    # scipy: file input/output, low-level callbacks, data downloads
    "scipy.io",
    "scipy.datasets",
    "scipy.misc",
    "scipy._lib._ccallback",
    "scipy._lib._testutils",
    # scikit-learn: data loaders/downloaders, vendored code, test helpers
    "sklearn.datasets",
    "sklearn.externals",
    "sklearn.utils._testing",
    "sklearn.utils._show_versions",
    # ensemblekit: the parts that read, write or print
    "ensemblekit.persistence",
    "ensemblekit.data",
    "ensemblekit.cli",
    "ensemblekit.experiment",
    "ensemblekit.report",
)
"""Modules (and their submodules) inside TRUSTED_PACKAGES that are refused (rule 2b)."""

_DENIED_PARTS = frozenset({"__main__", "tests", "testing", "conftest"})

DENIED_NAMES = frozenset(
    {
        "numpy.load",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "numpy.savetxt",
        "numpy.loadtxt",
        "numpy.genfromtxt",
        "numpy.fromfile",
        "numpy.fromregex",
        "numpy.memmap",
        "numpy.DataSource",
        "numpy.info",
        "numpy.show_config",
        "numpy.show_runtime",
        "numpy.rec.fromfile",
        "numpy.lib.recfunctions.recfromcsv",
        "scipy.LowLevelCallable",
    }
)
"""Names inside TRUSTED_PACKAGES that read or write files, print, or call C pointers (rule 2c)."""


class ModelFileError(ValueError):
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
        Destination file; an existing file is replaced. The file is first
        written to a temporary file in the same directory and then renamed
        over ``path`` (``os.replace``), so readers see the old file or the
        new one, never a partial one; on any error the temporary file is
        removed and ``path`` is left as it was.
    estimator : object
        A fitted estimator (anything skops can store).
    metadata : mapping
        JSON-serialisable information to keep next to the model, e.g.
        ``{"algorithm": "c45", "params": {...}, "schema": schema.to_dict(),
        "data": data_fingerprint(X, y), "seed": 1}``. numpy scalars and
        arrays are converted to Python numbers and lists, tuples become
        lists. Must not use the keys ``format_version``,
        ``ensemblekit_version`` or ``payload_sha256``, which this function
        fills in.

    Raises
    ------
    ModelFileError
        If the file cannot be written (the OS error is in the message), or if
        the estimator holds a type that :func:`load_model` would refuse, so a
        model that could not be loaded back is never written.
    ValueError
        If ``metadata`` uses a reserved key.
    TypeError
        If ``metadata`` is not a mapping or holds a value JSON cannot store,
        or if skops cannot store the estimator (skops' own error).
    """
    name = os.fspath(path)
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping, got {type(metadata).__name__}")
    clash = sorted(set(metadata) & set(_RESERVED_KEYS))
    if clash:
        raise ValueError(f"metadata key(s) {', '.join(clash)} are reserved for the model file itself")

    sio = _skops_io()
    payload = _canonical_skops(sio.dumps(estimator, compression=zipfile.ZIP_DEFLATED))
    _, refused = _audit_types(payload, sio, name)
    if refused:
        raise ModelFileError(
            f"cannot save {name}: the model holds types that ensemblekit refuses to load: {'; '.join(refused)}"
        )

    record = dict(metadata)
    record["format_version"] = FORMAT_VERSION
    record["ensemblekit_version"] = __version__
    record["payload_sha256"] = hashlib.sha256(payload).hexdigest()
    try:
        text = json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"metadata for {name} cannot be stored as JSON: {exc}") from exc

    archive = _zip_bytes([(METADATA_MEMBER, (text + "\n").encode("utf-8")), (PAYLOAD_MEMBER, payload)])
    _atomic_write(name, archive)


def load_model(path):
    """Read a model file written by :func:`save_model`, refusing untrusted content.

    Checks, in order: the file is a zip with a JSON ``metadata.json``; its
    format version is :data:`FORMAT_VERSION`; the SHA-256 of ``model.skops``
    matches the one recorded at save time; every type the payload names
    passes the trust policy (below). Only then are objects built. The
    checksum catches accidental damage and careless edits; it is not a
    signature (anyone can recompute it), so against a hostile file the trust
    policy is what protects.

    Trust policy. skops trusts by itself Python primitives and containers,
    numpy arrays/dtypes, scipy sparse matrices and numpy ufuncs (ensemblekit
    leaves its lists of scikit-learn estimators and scipy ufuncs empty, so
    those go through the policy too). Any other name is accepted only if it is
    in :data:`TRUSTED_BUILTINS`, or if its top-level package is in
    :data:`TRUSTED_PACKAGES` (ensemblekit, sklearn, numpy, scipy), it is not
    under :data:`DENIED_MODULES` nor in :data:`DENIED_NAMES`, and it resolves
    to a class defined in those packages (a plain function reference, which
    skops never calls while loading, may also be a function, or a ufunc found
    in such a module). Everything
    else -- e.g. ``builtins.eval``, ``os.system``, ``posix.system``,
    ``subprocess.*`` -- is refused before anything is built. Checking a name
    imports its module, which only happens for modules inside the trusted
    packages.

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
        ``format_version``, ``ensemblekit_version`` and ``payload_sha256``.

    Raises
    ------
    ModelFileError
        One line naming the file, when: it cannot be read; it is not a zip,
        is truncated or damaged, or lacks a valid ``metadata.json`` / payload
        ("... is not an ensemblekit model file (...)"); its format version
        differs from this ensemblekit's (both versions named); the payload
        was changed after saving ("... was modified after it was written");
        it names an untrusted type (the types named); or the trusted objects
        cannot be rebuilt (e.g. written with incompatible library versions).
    """
    name = os.fspath(path)
    metadata, payload = _read_archive(name, with_payload=True)
    if hashlib.sha256(payload).hexdigest() != metadata.get("payload_sha256"):
        raise ModelFileError(f"{name} was modified after it was written (the model checksum does not match)")

    sio = _skops_io()
    trusted, refused = _audit_types(payload, sio, name)
    if refused:
        raise ModelFileError(
            f"{name} names types that ensemblekit does not trust, refusing to load it: {'; '.join(refused)}"
        )
    try:
        estimator = sio.loads(payload, trusted=trusted)
    except Exception as exc:
        raise ModelFileError(
            f"{name}: the model could not be rebuilt ({_one_line(exc)}); it was written by "
            f"ensemblekit {metadata.get('ensemblekit_version', '?')}, possibly with other library versions"
        ) from exc
    return estimator, metadata


def read_metadata(path) -> dict:
    """Read only the metadata of a model file, without loading the model.

    Imports neither skops nor scikit-learn (nor numpy), so it is fast; it
    does not verify the payload checksum or its types (:func:`load_model`
    does).

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
        zip, truncated, no or invalid ``metadata.json``), or has another
        format version (both versions named).
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
            raise ValueError(
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


def _read_archive(name, *, with_payload):
    """Open and validate the outer zip; return (metadata, payload bytes or None)."""
    try:
        with open(name, "rb") as fh:
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
                members = set(archive.namelist())
                if METADATA_MEMBER not in members:
                    raise _not_a_model(name, f"no {METADATA_MEMBER} inside")
                raw = _read_member(name, archive, METADATA_MEMBER)
                try:
                    metadata = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as exc:
                    raise _not_a_model(name, f"{METADATA_MEMBER} is not valid JSON: {_one_line(exc)}") from None
                _check_metadata(name, metadata)
                payload = None
                if with_payload:
                    if PAYLOAD_MEMBER not in members:
                        raise _not_a_model(name, f"no {PAYLOAD_MEMBER} inside")
                    payload = _read_member(name, archive, PAYLOAD_MEMBER)
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {name}: {exc.strerror or _one_line(exc)}") from exc
    return metadata, payload


def _read_member(name, archive, member):
    try:
        return archive.read(member)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError) as exc:
        raise _not_a_model(name, f"{member} is damaged: {_one_line(exc)}") from None


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


# ---------------------------------------------------------------------------
# trust policy
# ---------------------------------------------------------------------------


def _is_node(value) -> bool:
    """True for a dict describing one object in skops' schema."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("__loader__"), str)
        and isinstance(value.get("__module__"), str)
        and isinstance(value.get("__class__"), str)
    )


def _name_uses(schema):
    """Map 'module.name' -> set of (module, name, loader) as the schema uses them."""
    uses = {}
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if _is_node(value):
                module, attr = value["__module__"], value["__class__"]
                uses.setdefault(f"{module}.{attr}", set()).add((module, attr, value["__loader__"]))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return uses


def _module_problem(module):
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return "malformed module name"
    if parts[0] not in TRUSTED_PACKAGES:
        return "outside the trusted packages"
    if _DENIED_PARTS.intersection(parts) or any(
        module == denied or module.startswith(denied + ".") for denied in DENIED_MODULES
    ):
        return "in a module that is never trusted"
    return None


def _name_problem(module, attr, loader):
    """Why (module, attr) used by a node with this loader is untrusted; None if trusted."""
    if not attr.isidentifier():
        return "malformed name"
    problem = _module_problem(module)
    if problem:
        return problem
    if f"{module}.{attr}" in DENIED_NAMES:
        return "reads or writes files or calls native code"
    try:
        obj = getattr(importlib.import_module(module), attr)
    except Exception:
        return "not found in the installed packages"
    if isinstance(obj, type):
        pass
    elif loader == "FunctionNode" and callable(obj) and not inspect.ismodule(obj):
        pass
    else:
        return "not a class" if loader != "FunctionNode" else "not a function or class"
    import numpy as np

    if isinstance(obj, np.ufunc):
        # a compiled elementwise function (numpy's, or scipy.special's) carries no
        # __module__; it is judged by the module it was found in, which passed above
        return None
    origin = getattr(obj, "__module__", None)
    if not isinstance(origin, str):
        return "its defining module is unknown"
    problem = _module_problem(origin)
    if problem:
        return f"defined in {origin}, {problem}"
    if f"{origin}.{getattr(obj, '__qualname__', attr)}" in DENIED_NAMES:
        return "reads or writes files or calls native code"
    return None


def _skops_io():
    """Import and return ``skops.io``, skipping its scans for default trusted types.

    When ``skops.io`` is first imported it builds its default list of
    trusted types: every scikit-learn estimator, found with
    ``sklearn.utils.all_estimators()`` (which imports every module of
    scikit-learn, about half a second), and every scipy ufunc, each looked
    up in every loaded module (about 0.1 s). ensemblekit never relies on
    that default list (:func:`load_model` gives skops an explicit
    ``trusted`` list decided by the policy above, which skops adds to its
    default list), so the import runs with ``all_estimators`` answering an
    empty list and the ufunc lookup answering none for ``scipy.special``.
    skops then reports those classes and ufuncs as untrusted like any other
    name, and the policy judges them: scikit-learn classes by rules (a)-(f),
    scipy ufuncs by the module they are found in (rule f). Both are kinds
    of object skops' default list trusts, and every model ensemblekit or
    scikit-learn writes loads as before (the tests save and load a pipeline,
    trees, a function reference and a scipy ufunc this way). If skops was
    already imported elsewhere, it is returned as it is.
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


def _audit_types(payload, sio, name):
    """Apply the trust policy to a skops payload without building anything.

    Returns the names skops does not trust by itself and, of those, the ones
    the policy refuses, as 'type (reason)' strings.
    """
    try:
        reported = sio.get_untrusted_types(data=payload)
        with zipfile.ZipFile(io.BytesIO(payload)) as inner:
            schema = json.loads(inner.read("schema.json"))
    except Exception as exc:
        raise _not_a_model(name, f"its {PAYLOAD_MEMBER} cannot be read: {_one_line(exc)}") from exc
    uses = _name_uses(schema)
    refused = []
    for full in reported:
        if full in TRUSTED_BUILTINS:
            continue
        found = uses.get(full)
        if not found:
            refused.append(f"{full} (not an object the file describes)")
            continue
        for module, attr, loader in sorted(found):
            problem = _name_problem(module, attr, loader)
            if problem:
                refused.append(f"{full} ({problem})")
                break
    return reported, refused


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


def _without_ids(value):
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items() if k != "__id__"}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def _sort_unordered(value):
    """Order the members of sets and frozensets (their saved order follows hashing)."""
    if isinstance(value, dict):
        for child in value.values():
            _sort_unordered(child)
        items = None
        if _is_node(value) and value["__loader__"] == "SetNode":
            items = value.get("content")
        elif _is_node(value) and (value["__module__"], value["__class__"]) == ("builtins", "frozenset"):
            args = value.get("content")
            if _is_node(args) and isinstance(args.get("content"), list) and len(args["content"]) == 1:
                inner = args["content"][0]
                if _is_node(inner) and inner["__loader__"] == "ListNode":
                    items = inner.get("content")
        if isinstance(items, list):
            items.sort(key=lambda item: json.dumps(_without_ids(item), sort_keys=True))
    elif isinstance(value, list):
        for child in value:
            _sort_unordered(child)


def _canonical_skops(data) -> bytes:
    """Make a skops archive independent of memory addresses, hash order and the clock."""
    with zipfile.ZipFile(io.BytesIO(data)) as src:
        schema = json.loads(src.read("schema.json"))
        stored = {i.filename: (src.read(i), i.compress_type) for i in src.infolist()}
    _sort_unordered(schema)

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
    from ensemblekit.atomic import write_atomic

    try:
        write_atomic(name, data, fsync=True)
    except OSError as exc:
        raise ModelFileError(f"cannot write model file {name}: {exc.strerror or _one_line(exc)}") from exc
