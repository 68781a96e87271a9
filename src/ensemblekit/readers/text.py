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
import stat
import sys
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ensemblekit.dataset import DataError
from ensemblekit.fifo import open_for_reading
from ensemblekit.readers.bounds import DATA_MB, LINE_MB

__all__ = ["MixedEncodingError", "Lines", "decoded_blocks", "iter_lines", "line_units", "open_input",
           "read_small_text"]

# Compressed input: gzip is recognised by its first two bytes (RFC 1952, 2.3.1).
_GZIP_MAGIC = b"\x1f\x8b"

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
class MixedEncodingError(DataError):
    """Text that is not UTF-8 after earlier lines that were UTF-8 and not ASCII.

    A reader that can start again reads the whole input as Latin-1 instead;
    ``byte`` and ``byte_line`` are what its note names.
    """

    def __init__(self, what: str, source: str | None, byte: int, byte_line: int):
        super().__init__(what, source)
        self.byte = byte
        self.byte_line = byte_line


class _Counted(io.RawIOBase):
    """A byte stream that stops with a :class:`DataError` past :data:`DATA_MB` bytes.

    It counts as it reads (``found`` words the message: "the gzip data
    decompresses to"), so no more than the bound and one buffer is ever read.
    With ``gunzip``, the stream is gzip data, decompressed as it is read; every
    member of a multi-member file is read (as ``gzip -d`` does), and a damaged
    or truncated stream is a :class:`DataError` too.
    """

    def __init__(self, raw: BinaryIO, src: str, found: str, gunzip: bool):
        self._raw = gzip.GzipFile(fileobj=raw, mode="rb") if gunzip else raw
        self._src = src
        self._found = found
        self._limit = DATA_MB.limit()
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # never more than one byte past the bound: a bomb stops at the bound
        view = memoryview(buffer)[: max(1, min(len(buffer), self._limit + 1 - self._count))]
        try:
            n = self._raw.readinto(view)
        except (OSError, EOFError, zlib.error) as exc:
            if isinstance(self._raw, gzip.GzipFile):
                raise DataError(f"cannot decompress the gzip data ({exc})", self._src) from None
            raise DataError(f"cannot read the input ({getattr(exc, 'strerror', None) or exc})",
                            self._src) from None
        self._count += n or 0
        if self._count > self._limit:
            raise DataError(DATA_MB.exceeded(self._found), self._src)
        return n or 0


def _measure_gunzip(path: str, src: str) -> None:
    """Decompress a gzip file once, keeping nothing, to refuse it at once when it holds
    more than :data:`DATA_MB` (parsing that much first would take a minute)."""
    with open(path, "rb") as raw:
        counted = _Counted(raw, src, "the gzip data decompresses to", True)
        buffer = bytearray(_BLOCK)
        while counted.readinto(buffer):
            pass


def _refuse_special(path: str, mode: int) -> None:
    """Refuse what is neither a regular file nor a FIFO: nothing bounds what it gives."""
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return
    if stat.S_ISDIR(mode):
        raise DataError("is a directory, not a data file", path)
    kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a special file")
    raise DataError(f"is {kind}, not a data file (give a regular file, a FIFO or '-')", path)


def open_input(source: Any, stdin: BinaryIO | None, *, whole: bool = False
               ) -> tuple[BinaryIO, str, str | None, str]:
    """Open a data source for reading bytes, decompressing gzip (found by its magic bytes).

    Only what can be bounded is read: a regular file, a FIFO or standard
    input. Decompressed gzip data, and with ``whole`` the bytes of standard
    input or a FIFO, are counted as they are read, up to :data:`DATA_MB`.

    Parameters
    ----------
    source : str, bytes or os.PathLike
        Path of the file, or ``"-"`` for standard input.
    stdin : binary stream or None
        Where ``"-"`` reads from; None for ``sys.stdin.buffer``.
    whole : bool, default=False
        The input is to be read whole (not chunk by chunk): standard input
        and a FIFO are bounded too.

    Returns
    -------
    stream : binary stream
        The bytes of the input, decompressed when they are gzip (at most
        :data:`DATA_MB`, else :class:`DataError` while reading). The caller
        closes it (not standard input).
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
        Standard input is closed; the file is missing, a directory, a device
        or a socket, or cannot be read.
        Or ``ENSEMBLEKIT_MAX_DATA_MB`` is not a whole number >= 1.
    TypeError
        ``source`` is neither a path nor ``"-"``.
    """
    if isinstance(source, str) and source == "-":
        if stdin is None and sys.stdin is None:  # descriptor 0 was closed when Python started
            raise DataError("standard input is closed", "<stdin>")
        stream: BinaryIO = stdin if stdin is not None else sys.stdin.buffer
        src, suffix, name = "<stdin>", None, "stdin"
        mode, path = 0, None
        try:  # standard input redirected from a regular file is read as that file is
            mode = os.fstat(stream.fileno()).st_mode
        except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
            pass
        bounded = "standard input holds" if whole and not stat.S_ISREG(mode) else None
    else:
        try:
            path = os.fspath(source)
        except TypeError:
            raise TypeError(f"source must be a path or '-', not {type(source).__name__}") from None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        try:
            mode = os.stat(path).st_mode
            _refuse_special(path, mode)
            if stat.S_ISFIFO(mode):  # waits for a writer, within a bound
                stream = os.fdopen(open_for_reading(path), "rb")
            else:
                stream = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
        except TimeoutError as exc:
            raise DataError(exc.strerror, path) from None
        except FileNotFoundError:
            raise DataError("no such file", path) from None
        except IsADirectoryError:
            raise DataError("is a directory, not a data file", path) from None
        except PermissionError:
            raise DataError("permission denied", path) from None
        except OSError as exc:
            raise DataError(f"cannot read the file ({exc.strerror or exc})", path) from None
        mode = os.fstat(stream.fileno()).st_mode  # what was opened, should the path have changed
        try:
            _refuse_special(path, mode)
        except DataError:
            stream.close()
            raise
        bounded = "the FIFO holds" if whole and stat.S_ISFIFO(mode) else None
        base = Path(path[:-3] if path.lower().endswith(".gz") else path)
        src, suffix, name = path, base.suffix.lower(), base.stem
    if not hasattr(stream, "peek"):
        stream = io.BufferedReader(stream)  # type: ignore[arg-type]
    try:
        magic = stream.peek(2)[:2]
    except OSError as exc:
        raise DataError(f"cannot read the input ({exc.strerror or exc})", src) from None
    if magic == _GZIP_MAGIC:
        if path is not None and stat.S_ISREG(mode):
            _measure_gunzip(path, src)  # a bomb is refused before any of it is parsed
        stream = io.BufferedReader(_Counted(stream, src, "the gzip data decompresses to", True),
                                   buffer_size=1 << 16)
    elif bounded is not None:
        stream = io.BufferedReader(_Counted(stream, src, bounded, False), buffer_size=1 << 16)
    return stream, src, suffix, name


def read_small_text(source, max_chars: int, what: str) -> tuple[str, str]:
    """The whole text of a small file (a cost matrix, a scores file), decoded as data files are.

    Parameters
    ----------
    source : str or os.PathLike
        A file (gzip-compressed or not), or ``"-"`` for standard input.
    max_chars : int
        Text beyond this many characters is refused.
    what : str
        What the file should be, for the refusal ("a cost matrix").

    Returns
    -------
    (str, str)
        The text, and the source's name as messages give it.

    Raises
    ------
    ensemblekit.dataset.DataError
        The file cannot be read, or holds more than ``max_chars`` characters.
    """
    stream, src, _, _ = open_input(source, None, whole=True)
    parts, size = [], 0
    try:
        for block in decoded_blocks(stream, src, None):
            size += len(block)
            if size > max_chars:
                raise DataError(f"more than {max_chars >> 20} MiB of text: not {what}", src)
            parts.append(block)
    finally:
        if source != "-":
            stream.close()
    return "".join(parts), src


def _line_too_long(line: int, src: str) -> DataError:
    return DataError(LINE_MB.exceeded(f"line {line} holds"), src, line)


def decoded_blocks(stream: BinaryIO, src: str, notify: Callable[[str], None] | None, *,
                   latin1: bool = False) -> Iterator[str]:
    """Text of the input, block by block, decoded.

    A byte order mark selects UTF-8, UTF-16 or UTF-32 (either byte order);
    without one the text is UTF-8, or, when it is not valid UTF-8, Latin-1
    (every byte sequence decodes), which ``notify`` is told.

    Each block ends at a line end (``\\n``, ``\\r\\n`` or ``\\r``, which become
    ``\\n``), except perhaps the last one. A line is checked against
    :data:`LINE_MB` while it is read, so a line without an end is refused
    once it is past the bound, not once it is all in memory.

    Parameters
    ----------
    stream : binary stream
        The input, as :func:`open_input` returns it; read to its end.
    src : str
        The source as shown in messages.
    notify : callable or None
        Receives the note on reading Latin-1.
    latin1 : bool, default=False
        Read text without a byte order mark as Latin-1 from the start, without
        a note (for a reader that starts again after
        :class:`MixedEncodingError`, having given the note itself).

    Yields
    ------
    str
        The next block of text, from about 1 MiB of input.

    Raises
    ------
    DataError
        Text that starts with a byte order mark but is not valid in its
        encoding; or a line longer than :data:`LINE_MB`.
    MixedEncodingError
        Text that is not UTF-8 after earlier lines that were UTF-8 and not
        ASCII (the whole-file reader reads all of such a file as Latin-1, which
        a stream cannot do once the earlier lines are used).
    """
    head = stream.peek(4)[:4] if hasattr(stream, "peek") else b""
    codec = shown = None
    for bom, name, label in _BOMS:
        if head.startswith(bom):
            codec, shown = name, label
            break
    carry = ""  # a final "\r" waits for the next block, which may start with "\n"
    first = True
    line_limit = LINE_MB.limit()

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
        open_line = 0  # characters since the last line end
        ends = 0
        while True:
            raw = stream.read(_BLOCK)
            try:
                text = decoder.decode(raw, final=not raw)
            except UnicodeDecodeError as exc:
                raise DataError(f"not valid {shown} text although it starts with a {shown} byte "
                                f"order mark (bad bytes at offset {offset + exc.start})", src) from None
            offset += len(raw)
            first_end = _first_line_end(text)
            if open_line + (len(text) if first_end < 0 else first_end) > line_limit:
                raise _line_too_long(ends + 1, src)
            if first_end >= 0:
                ends += text.count("\n") + text.count("\r")
                open_line = len(text) - 1 - max(text.rfind("\n"), text.rfind("\r"))
            else:
                open_line += len(text)
            yield from normalised(text, final=not raw)
            if not raw:
                return
    # No byte order mark: UTF-8, or Latin-1 when the bytes are not UTF-8.
    encoding = "latin-1" if latin1 else "utf-8"
    ascii_so_far = True
    lines_before = 0
    pending: list[bytes] = []  # the bytes of a line not yet ended
    pending_size = 0
    while True:
        raw = stream.read(_BLOCK)
        if raw:
            cut = max(raw.rfind(b"\n"), raw.rfind(b"\r")) + 1
            first_end = _first_line_end(raw)
            if pending_size + (len(raw) if cut == 0 else first_end) > line_limit:
                raise _line_too_long(lines_before + 1, src)
            if cut == 0:
                pending.append(raw)
                pending_size += len(raw)
                continue
            buf = b"".join([*pending, raw[:cut]])
            pending, pending_size = [raw[cut:]], len(raw) - cut
        else:
            buf = b"".join(pending)
            pending = []
        if encoding == "utf-8":
            try:
                text = buf.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = lines_before + buf.count(b"\n", 0, exc.start) + 1
                if not ascii_so_far:
                    raise MixedEncodingError(
                        f"not UTF-8 (byte 0x{buf[exc.start]:02x} on line {line}) although earlier "
                        "lines are UTF-8 text that is not ASCII; convert the file to one encoding "
                        "(for example with iconv)", src, buf[exc.start], line) from None
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


def _first_line_end(text):
    """Index of the first ``\\n`` or ``\\r`` in ``text`` (str or bytes); -1 when there is none."""
    if isinstance(text, str):
        found = [i for i in (text.find("\n"), text.find("\r")) if i >= 0]
    else:
        found = [i for i in (text.find(b"\n"), text.find(b"\r")) if i >= 0]
    return min(found) if found else -1


class Lines:
    """The lines of blocks of text, as ``"".join(blocks).split("\\n")`` would give them, one by one.

    Besides iteration, lines taken can be put back (:meth:`unread`) and the text
    not yet taken can be had in blocks (:meth:`rest`), so that a reader can look
    at the first lines, then read the rest of a large file without making a
    string per line.

    Parameters
    ----------
    blocks : iterator of str
        Text in pieces, as :func:`decoded_blocks` yields it.
    """

    def __init__(self, blocks: Iterator[str]):
        self._blocks = iter(blocks)
        self._ready: deque[str] = deque()  # whole lines not yet taken
        self._partial: list[str] = []  # pieces of a line whose end is not yet read
        self._ended = False

    def __iter__(self) -> Lines:
        return self

    def __next__(self) -> str:
        while not self._ready:
            if self._ended:
                raise StopIteration
            block = next(self._blocks, None)
            if block is None:
                self._ended = True
                self._ready.append("".join(self._partial))
                self._partial = []
                break
            pieces = block.split("\n")
            if len(pieces) == 1:
                self._partial.append(pieces[0])
                continue
            pieces[0] = "".join([*self._partial, pieces[0]])
            self._partial = [pieces.pop()]
            self._ready = deque(pieces)
        return self._ready.popleft()

    def unread(self, lines: list[str]) -> None:
        """Put back lines taken, the last taken last: they come out again first."""
        self._ready.extendleft(reversed(lines))

    def rest(self) -> Iterator[str]:
        """The text of the lines not yet taken, in blocks.

        Joined, the blocks are ``"\\n".join(remaining lines)``; the iterator is
        used up by them.
        """
        ready, self._ready = list(self._ready), deque()
        if self._ended:
            if ready:
                yield "\n".join(ready)
            return
        partial, self._partial = "".join(self._partial), []
        yield "\n".join([*ready, partial])
        yield from self._blocks
        self._ended = True


def iter_lines(blocks: Iterator[str]) -> Lines:
    """Split blocks of text into lines, as ``"".join(blocks).split("\\n")`` would.

    Parameters
    ----------
    blocks : iterator of str
        Text in pieces, as :func:`decoded_blocks` yields it.

    Returns
    -------
    Lines
        An iterator of each line without its ``\\n``; the last is what
        follows the last line end (empty when the text ends with one).
    """
    return Lines(blocks)


def line_units(blocks: Iterator[str], first_line: int) -> Iterator[tuple[str, int, int]]:
    """Blocks of text cut at line ends, for reading a large file a block at a time.

    Parameters
    ----------
    blocks : iterator of str
        Text from the start of a line, as :meth:`Lines.rest` gives it.
    first_line : int
        1-based line of the first line of the text.

    Yields
    ------
    (str, int, int)
        The text of some whole lines joined by ``\\n`` (no line end after the
        last), the line of the first and the number of lines. Joined by
        ``\\n``, the texts are the whole text; the last is what follows the last
        line end (perhaps empty).
    """
    carry = ""
    for block in blocks:
        text = carry + block if carry else block
        cut = text.rfind("\n")
        if cut < 0:
            carry = text
            continue
        unit, carry = text[:cut], text[cut + 1:]
        n_lines = unit.count("\n") + 1
        yield unit, first_line, n_lines
        first_line += n_lines
    yield carry, first_line, 1
