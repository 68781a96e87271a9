"""Plain dense ARFF rows are split in Python, to the cells liac-arff reads (issue 30)."""

import itertools
import random

import arff
import pytest

from ensemblekit.readers.arff import _plain_cells


def _liac(rows, m):
    """What liac-arff makes of the rows, each value of a string attribute (None = missing)."""
    doc = ["@relation r", *(f"@attribute a{k} STRING" for k in range(m)), "@data", *rows]
    return arff.ArffDecoder().decode(doc)["data"]


PLAIN = [
    ["'40-49','premeno','15-19','0-2',yes"],             # quoted and bare
    ["no,adult,38.5,?,'>=3','continuous severe pain'\r"],  # spaces inside quotes, CR at the end
    ['1, 2 ,  ?,,"x y"', "\t'a' ,b,c,d,e "],             # whitespace around values, empty
    ["'?',?,\"?\",'',\"\""],                              # a quoted ? is text, an empty quote too
    ["-1.5e3,NaN,inf,%x,a%b"],                            # % inside a value is plain
]
NOT_PLAIN = [
    ["'a,b',c"],             # a quoted comma
    ["'it\\'s',b"],          # an escape
    ["{0 x, 1 y}"],          # a sparse row
    ["a b,c"],               # whitespace inside a bare value
    ["'a'b,c"],              # text after the closing quote
    ["'a\"b',c"],            # a quote inside a quoted value
    ["'a,c"],                # no closing quote
    ["a,b,c"],               # three values for two attributes
]


@pytest.mark.parametrize("rows", PLAIN)
def test_plain_rows_give_the_cells_of_liac_arff(rows):
    m = len(_liac(rows, len(rows[0].split(",")))[0])
    assert _plain_cells(rows, m) == _liac(rows, m)


@pytest.mark.parametrize("rows", NOT_PLAIN)
def test_other_rows_are_left_to_liac_arff(rows):
    assert _plain_cells(rows, 2) is None


def test_random_rows_agree_with_liac_arff_whenever_they_are_split():
    # every row made of these pieces is either split to liac-arff's cells or left to it
    pieces = ["a", "1.5", "?", "", " ", "'x y'", "'?'", '"q"', "'", "a b", "'a'b", "\\", "{",
              "\t'z'\t", "é", "\x1c", "'it''s'", '"a\'b"']
    rng = random.Random(4)
    split = 0
    for _ in range(3000):
        m = rng.randint(1, 4)
        row = ",".join(rng.choice(pieces) for _ in range(m))
        ours = _plain_cells([row], m)
        try:
            theirs = _liac([row], m)
        except Exception:  # noqa: BLE001 - liac-arff refuses it: so must we
            assert ours is None, row
            continue
        if ours is not None:
            split += 1
            assert ours == theirs, row
    assert split > 500  # most rows of plain pieces are split


def test_rows_like_those_of_the_uci_files_are_split():
    # the twelve files of the main job hold only plain rows (quoted nominal values, CR ends)
    rows = ["'f','f','l','won'\r", "no,adult,?,'pale cyanotic'", "218,178,9,0.111111,path\r"]
    for row, m in zip(rows, (4, 4, 5)):
        assert _plain_cells([row], m) is not None
    assert list(itertools.chain(*_plain_cells(rows[:1], 4))) == ["f", "f", "l", "won"]
