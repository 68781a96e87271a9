"""The vectorised ARFF path (readers/fast.py) gives what the ordinary reader gives.

Every case is read twice: as a small file is read (the ordinary reader alone) and
with ``FAST_BYTES`` at 0, so that the vectorised engine takes every plain chunk.
Values, missing values, nominal codes, line numbers and error messages must be
equal; the cases that must take the fast path check that it did.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError
from ensemblekit.streaming import iter_chunks

pytest.importorskip("pyarrow")

DATA = Path(__file__).resolve().parents[1] / "data"

HEADER = ("@relation r\n@attribute a numeric\n@attribute b real\n"
          "@attribute c {x,y,'z z'}\n@attribute class {no,yes}\n@data\n")


def _rows(n: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        a = "?" if i % 7 == 3 else f"{rng.normal():.6f}"
        b = "?" if i % 11 == 5 else repr(float(rng.normal() * 1e3))
        c = ("x", "y", "?")[i % 3]
        out.append(f"{a},{b},{c},{('no', 'yes')[i % 2]}")
    return "\n".join(out) + "\n"


@pytest.fixture
def counted(fast_engine):
    """Tables the vectorised engine produced, and a switch to force it on."""
    spy, force = fast_engine
    return spy("fast_arff_table"), force


def _read_both(path, counted, **kw):
    made, force = counted
    try:
        slow = load_dataset(path, **kw)
    except DataError as exc:
        slow = exc
    assert not made, "a small file must not use the vectorised engine"
    force()
    try:
        quick = load_dataset(path, **kw)
    except DataError as exc:
        quick = exc
    return slow, quick


def _same(slow, quick):
    if isinstance(slow, DataError):
        assert isinstance(quick, DataError)
        assert str(quick) == str(slow)
        return
    assert quick.schema == slow.schema
    for field in ("X", "y", "lines"):
        a, b = getattr(slow, field), getattr(quick, field)
        assert (a is None) == (b is None), field
        if a is not None:
            np.testing.assert_array_equal(b, a)  # NaN equal to NaN
            assert b.dtype == a.dtype, field


def _write(tmp_path, text, name="t.arff", mode="w", encoding="utf-8"):
    path = tmp_path / name
    if mode == "gz":
        path.write_bytes(gzip.compress(text.encode(encoding)))
    else:
        path.write_bytes(text.encode(encoding))
    return str(path)


def test_plain_rows_take_the_fast_path_and_equal_the_ordinary_reader(tmp_path, counted):
    path = _write(tmp_path, HEADER + _rows(5000))
    slow, quick = _read_both(path, counted)
    _same(slow, quick)
    assert any(counted[0])
    assert np.isnan(quick.X[3, 0]) and np.isnan(quick.X[2, 2])
    assert quick.X[:3, 2].tolist()[:2] == [0.0, 1.0]
    assert quick.lines[0] == 7


@pytest.mark.parametrize("body", [
    "1,2,x,no\n% a comment\n\n3,4,y,yes\n",  # comments and blank lines
    "1,2,x,no\n  \n3,4,y,yes\n\t\n",  # whitespace-only lines
    "1,2,'z z',no\n3,4,y,yes\n",  # a quoted value
    "1,2,x,no\n{0 5,3 yes}\n3,4,y,yes\n",  # a sparse row
    "1, 2,x,no\n3,4,y ,yes\n",  # spaces around values
    "1,2,x,no\r\n3,4,y,yes\r\n",  # CRLF line ends
    "1e3,-0.5,x,no\n+.5,5.,y,yes\nnan,?,?,?\n",  # number forms
    "1,,x,no\n,2,,yes\n",  # empty values
])
def test_rows_the_fast_engine_must_not_read_alone(tmp_path, counted, body):
    path = _write(tmp_path, HEADER + _rows(300) + body + _rows(300, 1))
    slow, quick = _read_both(path, counted)
    _same(slow, quick)
    assert not isinstance(quick, DataError)


@pytest.mark.parametrize("bad, message", [
    ("1,2,w,no", "value 'w' is not declared for nominal attribute 'c'"),
    ("1,inf,x,no", "value 'inf' of attribute 'b' is not a finite number"),
    ("1,2x,x,no", "value '2x' is not numeric for attribute 'b'"),
    ("1,2,x", "expected 4 values"),
    ("1,2,x,no,5", "expected 4 values"),
])
def test_errors_are_the_ordinary_readers_with_their_lines(tmp_path, counted, bad, message):
    path = _write(tmp_path, HEADER + _rows(400) + bad + "\n" + _rows(400, 2))
    slow, quick = _read_both(path, counted)
    assert isinstance(slow, DataError)
    assert message in str(slow)
    assert slow.line == 7 + 400
    _same(slow, quick)


@pytest.mark.parametrize("mode, encoding, bom", [
    ("gz", "utf-8", ""), ("w", "utf-8", "\ufeff"), ("w", "utf-16", ""), ("w", "latin-1", ""),
])
def test_gzip_and_encodings(tmp_path, counted, mode, encoding, bom):
    header = HEADER.replace("'z z'", "'\u00e9t\u00e9'") if encoding == "latin-1" else HEADER
    body = _rows(500) + "1,2,'\u00e9t\u00e9',yes\n" if encoding == "latin-1" else _rows(500)
    path = _write(tmp_path, bom + header + body, name="t.arff.gz" if mode == "gz" else "t.arff",
                  mode=mode, encoding=encoding)
    slow, quick = _read_both(path, counted)
    _same(slow, quick)
    assert not isinstance(quick, DataError)
    assert any(counted[0]) or encoding == "latin-1"  # one block, not ASCII: all the ordinary way


def test_ignore_and_target(tmp_path, counted):
    path = _write(tmp_path, HEADER + _rows(2000))
    slow, quick = _read_both(path, counted, ignore=("b",), target="c")
    _same(slow, quick)
    assert any(counted[0])


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.arff")))
def test_the_test_data_files(counted, name):
    slow, quick = _read_both(str(DATA / name), counted)
    _same(slow, quick)


def test_streamed_chunks_equal(tmp_path, counted):
    text = HEADER + _rows(6000)
    path = _write(tmp_path, text)
    training = _write(tmp_path, HEADER + _rows(50), name="train.arff")
    schema = load_dataset(training).schema
    slow = list(iter_chunks(path, schema, chunk_rows=700))
    made, force = counted
    force()
    quick = list(iter_chunks(path, schema, chunk_rows=700))
    assert any(made)
    assert len(slow) == 9 and len(quick) >= 2  # the first chunk; then a table per block

    def whole(chunks):
        return {field: np.concatenate([getattr(c, field) for c in chunks])
                for field in ("X", "y", "lines")}

    a, b = whole(slow), whole(quick)
    for field in a:
        np.testing.assert_array_equal(b[field], a[field])
        assert b[field].dtype == a[field].dtype


def test_streamed_error_is_the_ordinary_one(tmp_path, counted):
    path = _write(tmp_path, HEADER + _rows(3000) + "1,2,w,no\n")
    training = _write(tmp_path, HEADER + _rows(50), name="train.arff")
    schema = load_dataset(training).schema

    def first_error():
        with pytest.raises(DataError) as info:
            for _ in iter_chunks(path, schema, chunk_rows=500):
                pass
        return str(info.value)

    slow = first_error()
    counted[1]()
    assert first_error() == slow
    assert "was not seen in the training data" in slow and "line 3007" in slow
