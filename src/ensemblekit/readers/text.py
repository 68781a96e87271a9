"""Data input as text: opening files and standard input, gzip, byte order marks, encodings.

Text is UTF-8, or UTF-16/UTF-32 with a byte order mark, or else Latin-1 (said
in a note); line ends become ``\n``. Input compressed with gzip (found by its
first two bytes) is decompressed up to a size limit. The whole input can be
read at once, or block by block for a reader of chunks.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ensemblekit.dataset import DataError
from ensemblekit.errors import InputError

__all__ = ["decode_text", "decoded_blocks", "iter_lines", "open_input", "read_bytes"]

# Compressed input: gzip is recognised by its first two bytes (RFC 1952, 2.3.1).
_GZIP_MAGIC = b"\x1f\x8b"
# Largest decompressed size of a gzip input, so that a small file that inflates
# to gigabytes (a "gzip bomb") is refused instead of filling the memory. The same
# policy as model files (persistence.max_model_bytes): MiB, raised by a variable.
_DEFAULT_MAX_GUNZIP_MB = 1024
_GUNZIP_LIMIT_VARIABLE = "ENSEMBLEKIT_MAX_DATA_MB"

# Byte order marks, longest first (a UTF-32-LE mark starts like a UTF-16-LE one).
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig", "UTF-8"),
    (b"\xff\xfe\x00\x00", "utf-32", "UTF-32"),
    (b"\x00\x00\xfe\xff", "utf-32", "UTF-32"),
    (b"\xff\xfe", "utf-16", "UTF-16"),
    (b"\xfe\xff", "utf-16", "UTF-16"),
)

# Bytes read from the input at a time.
_BLOCK = 1 << 20


# --------------------------------------------------------------------------
# Reading the input
# --------------------------------------------------------------------------
def _max_gunzip_bytes(src: str) -> int:
    """Largest decompressed size of a gzip input, in bytes (see ``_DEFAULT_MAX_GUNZIP_MB``)."""
    text = os.environ.get(_GUNZIP_LIMIT_VARIABLE)
    if text is None:
        return _DEFAULT_MAX_GUNZIP_MB << 20
    try:
        value = int(text)
        if value < 1:
            raise InputError
    except ValueError:
        raise DataError(f"{_GUNZIP_LIMIT_VARIABLE}={text!r}: expected a whole number of MiB >= 1",
                        src) from None
    return value << 20


class _BoundedGunzip(io.RawIOBase):
    """A gzip stream that stops with a :class:`DataError` past a decompressed size.

    Reads every member of a multi-member file (as ``gzip -d`` does); a damaged
    or truncated stream is a :class:`DataError` too.
    """

    def __init__(self, raw: BinaryIO, src: str):
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self._src = src
        self._limit = _max_gunzip_bytes(src)
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            n = self._gz.readinto(buffer)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"cannot decompress the gzip data ({exc})", self._src) from None
        self._count += n
        if self._count > self._limit:
            raise DataError(
                f"the gzip data decompresses to more than {self._limit >> 20} MiB, the limit for "
                f"compressed input (set {_GUNZIP_LIMIT_VARIABLE} to a larger number of MiB to allow it)",
                self._src,
            )
        return n


def open_input(source: Any, stdin: BinaryIO | None) -> tuple[BinaryIO, str, str | None, str]:
    """Open a data source for reading bytes, decompressing gzip (found by its magic bytes).

    Parameters
    ----------
    source : str, bytes or os.PathLike
        Path of the file, or ``"-"`` for standard input.
    stdin : binary stream or None
        Where ``"-"`` reads from; None for ``sys.stdin.buffer``.

    Returns
    -------
    stream : binary stream
        The bytes of the input, decompressed when they are gzip (at most
        1024 MiB, or ``ENSEMBLEKIT_MAX_DATA_MB`` MiB, else :class:`DataError`
        while reading). The caller closes it (not standard input).
    src : str
        The source as shown in messages: the path as given, or ``"<stdin>"``.
    suffix : str or None
        The lower-case format suffix without ``.gz`` (``".csv"`` for
        ``x.csv.gz``); None for standard input.
    name : str
        The file stem without ``.gz`` (``"x"``); ``"stdin"`` for standard input.

    Raises
    ------
    DataError
        Standard input is closed; the file is missing, a directory, or cannot
        be read; or ``ENSEMBLEKIT_MAX_DATA_MB`` is not a whole number >= 1.
    TypeError
        ``source`` is neither a path nor ``"-"``.
    """
    if isinstance(source, str) and source == "-":
        if stdin is None and sys.stdin is None:  # descriptor 0 was closed when Python started
            raise DataError("standard input is closed", "<stdin>")
        stream: BinaryIO = stdin if stdin is not None else sys.stdin.buffer
        src, suffix, name = "<stdin>", None, "stdin"
    else:
        try:
            path = os.fspath(source)
        except TypeError:
            raise TypeError(f"source must be a path or '-', not {type(source).__name__}") from None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        try:
            stream = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
        except FileNotFoundError:
            raise DataError("no such file", path) from None
        except IsADirectoryError:
            raise DataError("is a directory, not a data file", path) from None
        except PermissionError:
            raise DataError("permission denied", path) from None
        except OSError as exc:
            raise DataError(f"cannot read the file ({exc.strerror or exc})", path) from None
        base = Path(path[:-3] if path.lower().endswith(".gz") else path)
        src, suffix, name = path, base.suffix.lower(), base.stem
    if not hasattr(stream, "peek"):
        stream = io.BufferedReader(stream)  # type: ignore[arg-type]
    try:
        magic = stream.peek(2)[:2]
    except OSError as exc:
        raise DataError(f"cannot read the input ({exc.strerror or exc})", src) from None
    if magic == _GZIP_MAGIC:
        stream = io.BufferedReader(_BoundedGunzip(stream, src), buffer_size=1 << 16)
    return stream, src, suffix, name


def read_bytes(source: Any, stdin: BinaryIO | None) -> tuple[bytes | str, str, str | None]:
    """Read a whole input as :func:`open_input` opens it.

    Parameters
    ----------
    source, stdin
        As in :func:`open_input`.

    Returns
    -------
    content : bytes
        Every byte of the input, gzip decompressed.
    src : str
        The source as shown in messages.
    suffix : str or None
        The format suffix, as in :func:`open_input`.

    Raises
    ------
    DataError
        As :func:`open_input`, or the input cannot be read to its end.
    """
    stream, src, suffix, _ = open_input(source, stdin)
    try:
        content = stream.read()
    except OSError as exc:
        raise DataError(f"cannot read the file ({exc.strerror or exc})", src) from None
    finally:
        if source != "-":
            stream.close()
    return content, src, suffix


def decode_text(content: bytes | str, src: str = "<input>",
                notify: Callable[[str], None] | None = None) -> str:
    """Decode the bytes of an input into text with ``\\n`` line ends.

    A byte order mark selects UTF-8, UTF-16 or UTF-32 (either byte order);
    without one the text is UTF-8, or, when it is not valid UTF-8, Latin-1
    (every byte sequence decodes), which ``notify`` is told.

    Parameters
    ----------
    content : bytes or str
        The input; a ``str`` only loses a leading byte order mark.
    src : str, default="<input>"
        The source as shown in messages.
    notify : callable or None
        Receives the note on reading Latin-1 (one line, ``"note: ..."``).

    Returns
    -------
    str
        The text, ``\\r\\n`` and ``\\r`` turned into ``\\n``.

    Raises
    ------
    DataError
        The text starts with a byte order mark but is not valid in its
        encoding.
    """
    if isinstance(content, str):
        text = content[1:] if content.startswith("\ufeff") else content
    else:
        for bom, codec, shown in _BOMS:
            if content.startswith(bom):
                try:
                    text = content.decode(codec)
                except UnicodeDecodeError as exc:
                    raise DataError(f"not valid {shown} text although it starts with a {shown} byte "
                                    f"order mark (bad bytes at offset {exc.start})", src) from None
                text = text[1:] if text.startswith("\ufeff") else text
                break
        else:
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError as exc:
                # Old Weka files are often Latin-1; every byte sequence decodes.
                text = content.decode("latin-1")
                if notify is not None:
                    line = content.count(b"\n", 0, exc.start) + 1
                    notify(f"note: {src}: not UTF-8 (byte 0x{content[exc.start]:02x} on line {line}), "
                           "so it is read as Latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --------------------------------------------------------------------------- text
def decoded_blocks(stream: BinaryIO, src: str, notify: Callable[[str], None] | None) -> Iterator[str]:
    """Text of the input, block by block, decoded as :func:`decode_text` decodes it.

    Each block ends at a line end (``\\n``, ``\\r\\n`` or ``\\r``, which become
    ``\\n``), except perhaps the last one.

    Parameters
    ----------
    stream : binary stream
        The input, as :func:`open_input` returns it; read to its end.
    src : str
        The source as shown in messages.
    notify : callable or None
        Receives the note on reading Latin-1.

    Yields
    ------
    str
        The next block of text, from about 1 MiB of input.

    Raises
    ------
    DataError
        Text that starts with a byte order mark but is not valid in its
        encoding; or text that is not UTF-8 after earlier lines that were
        UTF-8 and not ASCII (the whole-file reader reads all of such a file as
        Latin-1, which a stream cannot do once the earlier lines are used).
    """
    head = stream.peek(4)[:4] if hasattr(stream, "peek") else b""
    codec = shown = None
    for bom, name, label in _BOMS:
        if head.startswith(bom):
            codec, shown = name, label
            break
    carry = ""  # a final "\r" waits for the next block, which may start with "\n"
    first = True

    def normalised(text: str, final: bool) -> Iterator[str]:
        """The block with the byte order mark dropped (first block) and line ends as ``\\n``."""
        nonlocal carry, first
        if first and text:
            text = text[1:] if text.startswith("\ufeff") else text
            first = False
        text, carry = carry + text, ""
        if not final and text.endswith("\r"):
            text, carry = text[:-1], "\r"
        if text:
            yield text.replace("\r\n", "\n").replace("\r", "\n")
    if codec is not None:
        decoder = codecs.getincrementaldecoder(codec)()
        offset = 0
        while True:
            raw = stream.read(_BLOCK)
            try:
                text = decoder.decode(raw, final=not raw)
            except UnicodeDecodeError as exc:
                raise DataError(f"not valid {shown} text although it starts with a {shown} byte "
                                f"order mark (bad bytes at offset {offset + exc.start})", src) from None
            offset += len(raw)
            yield from normalised(text, final=not raw)
            if not raw:
                return
    # No byte order mark: UTF-8, or Latin-1 when the bytes are not UTF-8.
    encoding = "utf-8"
    ascii_so_far = True
    lines_before = 0
    rest = b""
    while True:
        raw = stream.read(_BLOCK)
        buf = rest + raw
        if raw:
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                rest = buf
                continue
            buf, rest = buf[:cut], buf[cut:]
        else:
            rest = b""
        if encoding == "utf-8":
            try:
                text = buf.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = lines_before + buf.count(b"\n", 0, exc.start) + 1
                if not ascii_so_far:
                    raise DataError(
                        f"not UTF-8 (byte 0x{buf[exc.start]:02x} on line {line}) although earlier "
                        "lines are UTF-8 text that is not ASCII; convert the file to one encoding "
                        "(for example with iconv)", src) from None
                encoding = "latin-1"
                text = buf.decode("latin-1")
                if notify is not None:
                    notify(f"note: {src}: not UTF-8 (byte 0x{buf[exc.start]:02x} on line {line}), "
                           "so it is read as Latin-1")
            else:
                ascii_so_far = ascii_so_far and buf.isascii()
        else:
            text = buf.decode("latin-1")
        lines_before += buf.count(b"\n")
        yield from normalised(text, final=not raw)
        if not raw:
            return


def iter_lines(blocks: Iterator[str]) -> Iterator[str]:
    """Split blocks of text into lines, as ``"".join(blocks).split("\\n")`` would.

    Parameters
    ----------
    blocks : iterator of str
        Text in pieces, as :func:`decoded_blocks` yields it.

    Yields
    ------
    str
        Each line without its ``\\n``; the last is what follows the last
        line end (empty when the text ends with one).
    """
    partial = ""
    for block in blocks:
        pieces = block.split("\n")
        pieces[0] = partial + pieces[0]
        partial = pieces.pop()
        yield from pieces
    yield partial
