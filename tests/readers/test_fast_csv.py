"""predict's CSV stream read a block at a time by the vectorised engine gives what the
ordinary reader gives: the same values, codes, lines and messages (FAST_BYTES forced to 0)."""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError
from ensemblekit.streaming import iter_chunks

pytest.importorskip("pyarrow")

HEAD = "a,b,c,class\n"


def _rows(n: int, sep: str = ",", seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        a = ("?", "", "NA")[i % 3] if i % 7 == 3 else f"{rng.normal():.6f}"
        b = repr(float(rng.normal() * 1e3))
        out.append(sep.join([a, b, ("x", "y", "N/A")[i % 3], ("no", "yes")[i % 2]]))
    return "\n".join(out) + "\n"


def _read(path, schema, **kw):
    try:
        chunks = list(iter_chunks(path, schema, chunk_rows=300, **kw))
    except DataError as exc:
        return str(exc)
    return {f: np.concatenate([getattr(c, f) for c in chunks]) for f in ("X", "y", "lines")}


def _both(tmp_path, fast_engine, text, name="t.csv", **kw):
    path = tmp_path / name
    path.write_text(text)
    train = tmp_path / ("train" + path.suffix)
    train.write_text(text.split("\n", 1)[0] + "\n" + _rows(60, "\t" if name.endswith("tsv") else ","))
    schema = load_dataset(train, **kw).schema
    slow = _read(path, schema, **kw)
    spy, force = fast_engine
    made = spy("fast_csv_table")
    force()
    quick = _read(path, schema, **kw)
    if isinstance(slow, str):
        assert quick == slow
    else:
        assert not isinstance(quick, str), quick
        for f in slow:
            np.testing.assert_array_equal(quick[f], slow[f])
            assert quick[f].dtype == slow[f].dtype
    return slow, made


def test_plain_blocks_take_the_fast_path(tmp_path, fast_engine):
    slow, made = _both(tmp_path, fast_engine, HEAD + _rows(5000))
    assert any(made)
    assert slow["lines"][0] == 2 and np.isnan(slow["X"][3, 0])


def test_pandas_missing_tokens_read_alike_by_both_engines(tmp_path, fast_engine):
    rows = _rows(5000).splitlines()
    tokens = ["NULL", "#N/A", "<NA>", "#NA", "nan"]
    for i in range(3, len(rows), 11):  # the first column's cell becomes a missing token
        rows[i] = tokens[i % len(tokens)] + rows[i][rows[i].index(","):]
    slow, made = _both(tmp_path, fast_engine, HEAD + "\n".join(rows) + "\n")
    assert any(made)
    assert np.isnan(slow["X"][3::11, 0]).all()


def test_tab_delimited(tmp_path, fast_engine):
    _, made = _both(tmp_path, fast_engine, HEAD.replace(",", "\t") + _rows(3000, "\t"),
                    name="t.tsv")
    assert any(made)


@pytest.mark.parametrize("tail", [
    '1,2,"x",no\n3,4,y,yes\n',  # quotes: the rest goes the ordinary way
    "1, 2,x,no\n\n3,4,y ,yes\n",  # spaces and a blank line
    '1,2,"x\ny",no\n',  # a quoted line end
    "1,2,-,no\n1,2,null,yes\n",  # more missing tokens
])
def test_blocks_the_fast_engine_must_not_read_alone(tmp_path, fast_engine, tail):
    slow, _ = _both(tmp_path, fast_engine, HEAD + _rows(3000) + tail + _rows(500, seed=1))
    assert isinstance(slow, dict) or "x\ny" in tail


@pytest.mark.parametrize("bad, message", [
    ("1,2,w,no", "was not seen in the training data"),
    ("1,inf,x,no", "not a finite number"),
    ("1,2x,x,no", "holds the non-number '2x'"),
    ("1,2,x", "expected 4 fields"),
])
def test_errors_are_the_ordinary_readers(tmp_path, fast_engine, bad, message):
    slow, _ = _both(tmp_path, fast_engine, HEAD + _rows(3000) + bad + "\n" + _rows(300, seed=2))
    assert message in slow and "line 3002" in slow


def test_missing_values_option(tmp_path, fast_engine):
    _, made = _both(tmp_path, fast_engine, "a,b,c,class\n" + _rows(3000).replace("x", "-9"),
                    missing_values=("-9",))
    assert any(made)
