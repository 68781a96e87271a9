"""Reading against a training schema with values not seen in training read as missing
(``unknown="missing"``) and chosen columns kept as text (``copy``): the same rows, masks
and text from the ordinary reader and from the vectorised engine, in ARFF and CSV."""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError
from ensemblekit.streaming import iter_chunks

pytest.importorskip("pyarrow")

TRAIN = ("@relation r\n@attribute a numeric\n@attribute c {x,y}\n@attribute class {no,yes}\n"
         "@data\n1,x,no\n2,y,yes\n")
# c holds w (unseen) in rows 2 and 5; the class holds maybe (unseen) in row 5; id is not
# an attribute of the training data
ROWS = ["1.50,x,no,7", "2,w,yes,8", "?,y,?,9", "4.25,?,no,?", "5,w,maybe,11", "6,y,yes,12"]


def _files(tmp_path, n_copies: int):
    rows = ROWS * n_copies
    arff = tmp_path / "test.arff"
    arff.write_text("@relation t\n@attribute a numeric\n@attribute c {x,y,w}\n"
                    "@attribute class {no,yes,maybe}\n@attribute id numeric\n@data\n"
                    + "\n".join(rows) + "\n")
    csv = tmp_path / "test.csv"
    csv.write_text("a,c,class,id\n" + "\n".join(r.replace("?", "") for r in rows) + "\n")
    return arff, csv


def _read(path, schema, **kw):
    chunks = list(iter_chunks(path, schema, unknown="missing", chunk_rows=4, **kw))
    n = sum(c.n_instances for c in chunks)
    masks = {}
    for name in ("c", "class"):
        masks[name] = np.concatenate([c.unseen.get(name, np.zeros(c.n_instances, bool))
                                      if c.unseen else np.zeros(c.n_instances, bool)
                                      for c in chunks])
    texts = {k: [v for c in chunks for v in c.texts[k]] for k in kw.get("copy", ())}
    X = np.vstack([c.X for c in chunks])
    y = None if chunks[0].y is None else np.concatenate([c.y for c in chunks])
    assert X.shape[0] == n
    return X, y, masks, texts


@pytest.mark.parametrize("which", ["arff", "csv"])
def test_unseen_values_are_missing_and_copies_are_text_in_both_engines(tmp_path, fast_engine,
                                                                        which):
    schema = load_dataset(_write(tmp_path / "train.arff", TRAIN)).schema
    arff, csv = _files(tmp_path, 300)
    path = arff if which == "arff" else csv
    kw = {"read_class": True, "copy": ("a", "c", "id")}
    slow = _read(path, schema, **kw)
    made = fast_engine[0]("fast_arff_table" if which == "arff" else "fast_csv_table")
    fast_engine[1]()
    quick = _read(path, schema, **kw)
    assert any(made), "the vectorised engine read no chunk"
    for a, b in zip(slow[:2], quick[:2]):
        np.testing.assert_array_equal(a, b)
    for k in slow[2]:
        np.testing.assert_array_equal(slow[2][k], quick[2][k])
    assert slow[3] == quick[3]
    X, y, masks, texts = quick
    # the first six rows, by hand: w -> missing (NaN), maybe -> missing (-1)
    np.testing.assert_array_equal(X[:6, 1], [0, np.nan, 1, np.nan, np.nan, 1])
    assert y[:6].tolist() == [0, 1, -1, 0, -1, 1]
    assert masks["c"][:6].tolist() == [False, True, False, False, True, False]
    assert masks["class"][:6].tolist() == [False, False, False, False, True, False]
    assert masks["c"].sum() == 600 and masks["class"].sum() == 300
    assert texts["c"][:6] == ["x", "w", "y", None, "w", "y"]
    assert texts["id"][:6] == ["7", "8", "9", None, "11", "12"]
    # ARFF declares a numeric: its numbers as text; a CSV column: its cells as written
    assert texts["a"][:2] == (["1.5", "2"] if which == "arff" else ["1.50", "2"])


def test_unknown_error_still_refuses_and_a_missing_copy_is_named(tmp_path):
    schema = load_dataset(_write(tmp_path / "train.arff", TRAIN)).schema
    arff, _ = _files(tmp_path, 1)
    with pytest.raises(DataError, match="value 'w' of attribute 'c' was not seen"):
        list(iter_chunks(arff, schema, read_class=False))
    with pytest.raises(DataError, match=r"no attribute named 'ids' to copy to the output "
                                        r"\(did you mean 'id'\?\)"):
        list(iter_chunks(arff, schema, read_class=False, unknown="missing", copy=("ids",)))


def _write(path, text):
    path.write_text(text)
    return path
