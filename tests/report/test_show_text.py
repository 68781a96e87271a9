"""What ``show`` prints: plain lines for a pipe, the rich layout on a terminal (issue 28).

``description.model_description`` describes a model as plain blocks (``report.Fields``,
``Lines``, ``Columns``); ``description_text`` lays them out as plain lines (no rich, no
line padded at its end) and ``description_renderables`` as the rich tables a terminal
gets, unchanged from before.
"""

from __future__ import annotations

import io

from rich.console import Console

from ensemblekit.description import description_renderables, description_text
from ensemblekit.report import Columns, Fields, Lines, prototype_columns

FIELDS = Fields((("algorithm", "k2 (classification)"), ("data fingerprint", "sha256:0d6a"),
                 ("seed", "1")))
NETWORK = Columns("Bayesian network: parents of each node", ("node", "values", "parents", "CPT size"),
                  (False, True, False, True),
                  (("class", "3", "-", "1 x 3"), ("sepalwidth", "3", "class, sepallength", "9 x 3")))


def _no_render(block):
    raise AssertionError(f"only rich blocks are rendered by the callback, not {block!r}")


def _rich(renderables, width: int = 200) -> str:
    """What a console that is no terminal prints (the console ``show`` had before issue 28)."""
    out = io.StringIO()
    console = Console(file=out, width=width, soft_wrap=False, force_terminal=False, highlight=False,
                      emoji=False)
    for renderable in renderables:
        console.print(renderable)
    return out.getvalue()


def test_fields_are_names_padded_to_the_longest_plus_two_spaces_then_the_value():
    assert description_text([FIELDS], _no_render) == (
        "algorithm         k2 (classification)\n"
        "data fingerprint  sha256:0d6a\n"
        "seed              1\n")


def test_plain_fields_are_the_terminal_grid_without_its_padding():
    wide = Fields((("trained on", "花 (3 instances)"), ("ensemblekit", "0.1.0"),
                   ("name", "e\u0301t\u00e9")))
    for block in (FIELDS, wide):
        grid = _rich(description_renderables([block]))
        assert grid != description_text([block], _no_render)  # rich pads every line
        assert [line.rstrip() for line in grid.splitlines()] == \
            description_text([block], _no_render).splitlines()


def test_columns_are_a_title_a_header_a_rule_and_aligned_rows():
    assert description_text([NETWORK], _no_render) == (
        "Bayesian network: parents of each node\n"
        "node        values  parents             CPT size\n"
        "----------  ------  ------------------  --------\n"
        "class            3  -                      1 x 3\n"
        "sepalwidth       3  class, sepallength     9 x 3\n")


def test_prototypes_put_the_sizes_apart_from_the_coordinates():
    block = prototype_columns([[5.9016, 2.0], [6.85, 1234567.0]], ["sepallength", "x"], [62, 38],
                              "2 prototypes (training sizes)")
    assert description_text([block], _no_render) == (
        "2 prototypes (training sizes)\n"
        "feature      cluster 0  cluster 1\n"
        "-----------  ---------  ---------\n"
        "size                62         38\n"
        "-----------  ---------  ---------\n"
        "sepallength      5.902       6.85\n"
        "x                    2  1.235e+06\n")


def test_no_plain_line_ends_in_white_space_and_none_is_folded():
    long_value = "k=" + "v" * 300
    blocks = [Fields((("parameters", long_value), ("seed", "1"))),
              Columns("t", ("a", "b"), (False, False), (("x", "-"), ("longer", "y"))),
              Lines("tree\n|   a = " + "w" * 250, fold=False)]
    text = description_text(blocks, _no_render)
    assert all(line == line.rstrip() for line in text.splitlines())
    assert f"parameters  {long_value}\n" in text and "|   a = " + "w" * 250 + "\n" in text


def test_text_blocks_are_written_as_they_stand():
    text = "J48 pruned tree\n------------------\n\nx <= 1: a (2.0)\n\nSize of the tree : 3"
    assert description_text([Lines(text, fold=False)], _no_render) == text + "\n"


def test_rich_blocks_go_through_the_callback_in_their_place():
    marker = object()
    got = description_text([FIELDS, marker, Lines("after")],
                           lambda block: "rendered\n" if block is marker else _no_render(block))
    assert got.splitlines()[-2:] == ["rendered", "after"]


def test_the_terminal_keeps_the_rich_tables():
    # the layout `show` printed before issue 28, with a console 200 columns wide
    block = prototype_columns([[5.9016, 2.7484], [5.006, 3.418]], ["sepallength", "sepalwidth"],
                              [62, 50], "2 prototypes (training sizes)")
    assert _rich(description_renderables([block])) == (
        "2 prototypes (training sizes)          \n"
        "┏━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━┓\n"
        "┃ feature     ┃ cluster 0 ┃ cluster 1 ┃\n"
        "┡━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━┩\n"
        "│ size        │        62 │        50 │\n"
        "├─────────────┼───────────┼───────────┤\n"
        "│ sepallength │     5.902 │     5.006 │\n"
        "│ sepalwidth  │     2.748 │     3.418 │\n"
        "└─────────────┴───────────┴───────────┘\n")
    assert _rich(description_renderables([NETWORK])).splitlines()[2] == \
        "┃ node       ┃ values ┃ parents            ┃ CPT size ┃"
