"""Builders of hostile model files (format 3), shared by the tests and the hostile benchmark.

Each builder takes a genuine model file written by ``ensemblekit fit`` and
writes a crafted one the way an attacker who knows the format would: the
digest and the recorded sizes are recomputed (with
:func:`ensemblekit.persistence.redigest`) unless the attack is on them. The
marker file named by :data:`MARKER_NAME` is what a pickle payload would create;
its absence after loading shows nothing ran.
"""

from __future__ import annotations

import copy
import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np

from ensemblekit.persistence import redigest

MARKER_NAME = "pwned.txt"
GIB = 1 << 30
_DATE = (1980, 1, 1, 0, 0, 0)


# --------------------------------------------------------------------------- reading and writing
def unpack(path):
    """(metadata dict, {member: bytes} of every array member) of a model file."""
    with zipfile.ZipFile(path) as archive:
        metadata = json.loads(archive.read("metadata.json"))
        members = {n: archive.read(n) for n in archive.namelist() if n != "metadata.json"}
    return metadata, members


def pack(path, metadata, members, *, digest=True, resize=True):
    """Write a model file from parts; by default with honest sizes and a valid digest."""
    metadata = copy.deepcopy(metadata)
    if resize:
        metadata["arrays"] = {name: len(data) for name, data in members.items()}
    if digest:
        metadata["digest"] = redigest(metadata, members)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("metadata.json", _DATE), json.dumps(metadata, indent=1),
                         compress_type=zipfile.ZIP_DEFLATED)
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, _DATE), data, compress_type=zipfile.ZIP_DEFLATED)
    return Path(path)


def npy(arr) -> bytes:
    """``arr`` in numpy's .npy format."""
    buffer = io.BytesIO()
    np.save(buffer, arr, allow_pickle=arr.dtype.hasobject)
    return buffer.getvalue()


def array(members, member):
    """The array stored in ``member`` (``"model/feature_.npy"``)."""
    return np.load(io.BytesIO(members[member]), allow_pickle=False)


def edit_array(source, path, member, change):
    """A model file whose array ``member`` is replaced by ``change(array)`` (honest digest)."""
    metadata, members = unpack(source)
    members[member] = npy(change(array(members, member).copy()))
    return pack(path, metadata, members)


def edit_metadata(source, path, change):
    """A model file whose metadata is ``change``d in place (honest digest)."""
    metadata, members = unpack(source)
    change(metadata)
    return pack(path, metadata, members)


def _bomb_archive(path) -> zipfile.ZipFile:
    """A new zip file whose members are deflated at level 1: a bomb of zeros then takes a
    second of CPU per GiB to build instead of nearly three, and inflates just the same."""
    return zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1)


def _deflated_zeros(archive: zipfile.ZipFile, name: str, size: int) -> None:
    """Stream ``size`` zero bytes into a deflated member (about 4.5 MB per GiB on disk).

    The member takes the archive's compression and zipfile's default date, ``_DATE``.
    """
    chunk = bytes(1 << 24)
    with archive.open(name, "w") as fh:
        written = 0
        while written < size:
            part = chunk[: min(len(chunk), size - written)]
            fh.write(part)
            written += len(part)


# --------------------------------------------------------------------------- the attacks
class _Marker:
    """Unpickling this writes the marker file: what a pickle inside a .npy could do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (Path(self.path).write_text, ("ran",))


def pickled_array(source, path, member, marker_dir):
    """``member`` replaced by an object array whose pickle writes the marker when loaded."""
    metadata, members = unpack(source)
    evil = np.empty(1, dtype=object)
    evil[0] = _Marker(Path(marker_dir) / MARKER_NAME)
    members[member] = npy(evil)
    assert b"write_text" in members[member] and pickle  # the payload is really in the member
    return pack(path, metadata, members)


def lying_header(source, path, member, *, shape=None, descr=None):
    """``member``'s .npy header claims another ``shape`` or dtype ``descr``; the data is kept."""
    metadata, members = unpack(source)
    raw = members[member]
    header_len = int.from_bytes(raw[8:10], "little")
    header = raw[10:10 + header_len].decode("latin1")
    fields = eval(header)  # noqa: S307 - our own test file's header, a dict literal
    if shape is not None:
        fields["shape"] = shape
    if descr is not None:
        fields["descr"] = descr
    text = repr(fields)
    text = text + " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    members[member] = raw[:8] + len(text).to_bytes(2, "little") + text.encode("latin1") + \
        raw[10 + header_len:]
    return pack(path, metadata, members)


def metadata_bomb(source, path, size=GIB):
    """metadata.json declared (honestly) to inflate to ``size`` bytes."""
    _, members = unpack(source)
    with _bomb_archive(path) as archive:
        _deflated_zeros(archive, "metadata.json", size)
        for name, data in members.items():
            archive.writestr(name, data)
    return Path(path)


def lying_metadata_bomb(source, path, size=GIB):
    """Like :func:`metadata_bomb`, but the zip directory claims 100 bytes."""
    metadata_bomb(source, path, size)
    data = bytearray(Path(path).read_bytes())
    pos = data.find(b"PK\x01\x02")
    while pos != -1:
        name_len = int.from_bytes(data[pos + 28:pos + 30], "little")
        if bytes(data[pos + 46:pos + 46 + name_len]) == b"metadata.json":
            data[pos + 24:pos + 28] = (100).to_bytes(4, "little")
        pos = data.find(b"PK\x01\x02", pos + 4)
    Path(path).write_bytes(bytes(data))
    return Path(path)


def array_bomb(source, path, size=GIB):
    """An extra array member that inflates to ``size`` bytes, recorded honestly (valid digest
    cannot be computed without inflating it, so the attacker records the size and hopes)."""
    metadata, members = unpack(source)
    metadata = copy.deepcopy(metadata)
    metadata["arrays"] = {**{n: len(d) for n, d in members.items()}, "model/bomb.npy": size}
    metadata["digest"] = redigest(metadata, members)
    with _bomb_archive(path) as archive:
        archive.writestr("metadata.json", json.dumps(metadata))
        for name, data in members.items():
            archive.writestr(name, data)
        _deflated_zeros(archive, "model/bomb.npy", size)
    return Path(path)


def edited_metadata(source, path):
    """The class values reversed in metadata.json, digest left as it was (a careless edit)."""
    metadata, members = unpack(source)
    values = metadata["schema"]["attributes"][metadata["schema"]["class_index"]]["values"]
    values.reverse()
    return pack(path, metadata, members, digest=False)


def deep_metadata(source, path, depth=200_000):
    """metadata.json nested ``depth`` levels deep."""
    _, members = unpack(source)
    raw = '{"format_version": 3, "x": ' + "[" * depth + "]" * depth + "}"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("metadata.json", raw)
        for name, data in members.items():
            archive.writestr(name, data)
    return Path(path)


def encrypted_member(source, path, member="metadata.json"):
    """The encryption flag set on one member, in its local header and in the directory."""
    data = bytearray(Path(source).read_bytes())
    for signature, flag_at, name_len_at, name_at in ((b"PK\x03\x04", 6, 26, 30),
                                                     (b"PK\x01\x02", 8, 28, 46)):
        pos = data.find(signature)
        while pos != -1:
            name_len = int.from_bytes(data[pos + name_len_at:pos + name_len_at + 2], "little")
            if bytes(data[pos + name_at:pos + name_at + name_len]) == member.encode():
                data[pos + flag_at] |= 0x1
            pos = data.find(signature, pos + 4)
    Path(path).write_bytes(bytes(data))
    return Path(path)
