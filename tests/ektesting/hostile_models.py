"""Builders of hostile model files, shared by the tests and benchmarks/bench_hostile_models.py.

Each builder takes a genuine model file written by ``ensemblekit fit`` and
writes a crafted one the way an attacker who knows the format would: the
digest and the recorded sizes are recomputed unless the attack is on them.
The marker file named by :data:`MARKER_NAME` is what the code-running payload
would create; its absence after loading shows nothing ran.
"""

from __future__ import annotations

import copy
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from ensemblekit.persistence import _digest, _zip_bytes

MARKER_NAME = "pwned.txt"
GIB = 1 << 30


# --------------------------------------------------------------------------- reading and writing
def unpack(path):
    """(metadata dict, {member: bytes} of the payload, schema) of a model file."""
    with zipfile.ZipFile(path) as outer:
        metadata = json.loads(outer.read("metadata.json"))
        payload = outer.read("model.skops")
    with zipfile.ZipFile(io.BytesIO(payload)) as inner:
        members = {name: inner.read(name) for name in inner.namelist()}
    return metadata, members, json.loads(members["schema.json"])


def pack(path, metadata, members, schema=None, *, redigest=True, resize=True):
    """Write a model file from parts; by default with honest sizes and a valid digest."""
    members = dict(members)
    if schema is not None:
        members["schema.json"] = json.dumps(schema).encode()
    payload = _zip_bytes(list(members.items()))
    metadata = copy.deepcopy(metadata)
    if resize:
        metadata["payload"] = {"bytes": len(payload),
                               "members": {name: len(data) for name, data in members.items()}}
    if redigest:
        metadata["digest"] = _digest(metadata, payload)
    raw = json.dumps(metadata, indent=1).encode()
    Path(path).write_bytes(_zip_bytes([("metadata.json", raw), ("model.skops", payload)]))
    return Path(path)


def nodes(schema, **where):
    """Every node dict of the schema whose keys equal ``where`` (e.g. __class__="Tree")."""
    found, stack = [], [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if all(value.get(k) == v for k, v in where.items()):
                found.append(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _deflated_zeros(archive: zipfile.ZipFile, name: str, size: int) -> None:
    """Stream ``size`` zero bytes into a deflated member (about 1 MB per GiB on disk)."""
    chunk = bytes(1 << 24)
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    with archive.open(info, "w") as fh:
        written = 0
        while written < size:
            part = chunk[: min(len(chunk), size - written)]
            fh.write(part)
            written += len(part)


# --------------------------------------------------------------------------- the attacks
def scipy_distribution(source, path, marker_dir):
    """A scipy.stats distribution (norm_gen) whose argument-parser template is Python code.

    Rebuilding it calls ``rv_generic.__setstate__``, which runs ``exec`` on the
    template: with the old package-wide trust of scipy this wrote the marker.
    """
    import scipy.stats

    from ensemblekit.persistence import _skops_io

    metadata, members, schema = unpack(source)
    sio = _skops_io()
    with zipfile.ZipFile(io.BytesIO(sio.dumps({"x": scipy.stats.norm}))) as z:
        evil_schema = json.loads(z.read("schema.json"))
        extra = {f"evil-{n}": z.read(n) for n in z.namelist() if n != "schema.json"}
    evil = evil_schema["content"]["x"]
    for node in nodes(evil):
        if isinstance(node.get("file"), str):
            node["file"] = f"evil-{node['file']}"
    code = f"open({str(Path(marker_dir) / MARKER_NAME)!r}, 'w').write('ran')\n"
    state = [n for n in nodes(evil)
             if isinstance(n.get("content"), dict) and "_parse_arg_template" in n["content"]]
    state[0]["content"]["_parse_arg_template"]["content"] = json.dumps(code)
    attrs = schema["content"]  # the attributes of the Pipeline, the root object
    attrs["content"]["evil"] = evil
    types = attrs["key_types"]["content"]  # skops pairs each key with a type node
    types.append(copy.deepcopy(types[0]))
    return pack(path, metadata, {**members, **extra}, schema)


def tree_arrays(source, path, field: str, value: int, node: int = 0):
    """A fitted tree's node array with one entry changed (child or feature index)."""
    metadata, members, schema = unpack(source)
    tree = nodes(schema, __class__="Tree")[0]
    name = nodes(tree["content"], __class__="ndarray")
    files = [n["file"] for n in name if "file" in n]
    for file in files:
        arr = np.load(io.BytesIO(members[file]), allow_pickle=False)
        if arr.dtype.names and field in arr.dtype.names:
            arr[field][node] = value
            buffer = io.BytesIO()
            np.save(buffer, arr, allow_pickle=False)
            members[file] = buffer.getvalue()
            return pack(path, metadata, members, schema)
    raise AssertionError("no node array in the model")


def metadata_bomb(source, path, size=GIB):
    """metadata.json declared (honestly) to inflate to ``size`` bytes."""
    with zipfile.ZipFile(source) as outer:
        payload = outer.read("model.skops")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        _deflated_zeros(archive, "metadata.json", size)
        archive.writestr("model.skops", payload)
    return Path(path)


def lying_metadata_bomb(source, path, size=GIB):
    """Like :func:`metadata_bomb`, but the zip directory claims 100 bytes."""
    metadata_bomb(source, path, size)
    data = bytearray(Path(path).read_bytes())
    entries = []
    pos = data.find(b"PK\x01\x02")
    while pos != -1:
        entries.append(pos)
        pos = data.find(b"PK\x01\x02", pos + 4)
    for pos in entries:
        name_len = int.from_bytes(data[pos + 28:pos + 30], "little")
        if bytes(data[pos + 46:pos + 46 + name_len]) == b"metadata.json":
            data[pos + 24:pos + 28] = (100).to_bytes(4, "little")
    Path(path).write_bytes(bytes(data))
    return Path(path)


def payload_bomb(source, path, size=GIB):
    """An extra .npy member inside the payload that inflates to ``size`` bytes.

    The recorded sizes and the digest are honest, as an attacker would make
    them; only the size limit stands in the way.
    """
    metadata, members, schema = unpack(source)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as inner:
        for name, data in members.items():
            inner.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                           compress_type=zipfile.ZIP_DEFLATED)
        _deflated_zeros(inner, "bomb.npy", size)
    payload = buffer.getvalue()
    metadata = copy.deepcopy(metadata)
    metadata["payload"] = {"bytes": len(payload),
                           "members": {**{n: len(d) for n, d in members.items()}, "bomb.npy": size}}
    metadata["digest"] = _digest(metadata, payload)
    raw = json.dumps(metadata, indent=1).encode()
    Path(path).write_bytes(_zip_bytes([("metadata.json", raw), ("model.skops", payload)]))
    return Path(path)


def edited_metadata(source, path):
    """The class values reversed in metadata.json, digest left as it was (a careless edit)."""
    metadata, members, schema = unpack(source)
    with zipfile.ZipFile(source) as outer:
        payload = outer.read("model.skops")
    values = metadata["schema"]["attributes"][metadata["schema"]["class_index"]]["values"]
    values.reverse()
    raw = json.dumps(metadata, indent=1).encode()
    Path(path).write_bytes(_zip_bytes([("metadata.json", raw), ("model.skops", payload)]))
    return Path(path)


def deep_metadata(source, path, depth=200_000):
    """metadata.json nested ``depth`` levels deep."""
    with zipfile.ZipFile(source) as outer:
        payload = outer.read("model.skops")
    raw = b'{"format_version": 2, "x": ' + b"[" * depth + b"]" * depth + b"}"
    Path(path).write_bytes(_zip_bytes([("metadata.json", raw), ("model.skops", payload)]))
    return Path(path)


def deep_schema(source, path, depth=200_000):
    """schema.json inside the payload nested ``depth`` levels deep (sizes and digest honest)."""
    metadata, members, _ = unpack(source)
    members["schema.json"] = b"[" * depth + b"]" * depth
    return pack(path, metadata, members)


def encrypted_member(source, path, member="metadata.json"):
    """The encryption flag set on one member, in its local header and in the directory."""
    data = bytearray(Path(source).read_bytes())
    for signature, flag_at, name_len_at, name_at in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        pos = data.find(signature)
        while pos != -1:
            name_len = int.from_bytes(data[pos + name_len_at:pos + name_len_at + 2], "little")
            if bytes(data[pos + name_at:pos + name_at + name_len]) == member.encode():
                data[pos + flag_at] |= 0x1
            pos = data.find(signature, pos + 4)
    Path(path).write_bytes(bytes(data))
    return Path(path)
