"""Tables written to a pipe or a file (issue 32): as wide as COLUMNS says, no trailing spaces."""

from __future__ import annotations

import pytest

from ensemblekit import cli_io

from ektesting.support import data_path, run_main

COMPARE = ["compare", "knn", "c45", "--data", data_path("iris.arff"), "--cv", "3", "--repeats", "1"]


@pytest.mark.parametrize("args", [["info", data_path("vote.arff")],
                                  COMPARE,
                                  ["algorithms"]])
def test_tables_in_a_pipe_fit_columns_without_trailing_spaces(monkeypatch, capsys, args):
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run_main(args, monkeypatch, capsys)
    assert code == 0
    lines = out.splitlines()
    assert any("┃" in line or "│" in line for line in lines)
    assert max(map(len, lines)) <= 60
    assert [line for line in lines if line != line.rstrip()] == []


def test_without_columns_tables_keep_their_width_and_lose_trailing_spaces(monkeypatch, capsys):
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out, _ = run_main(["info", data_path("vote.arff")], monkeypatch, capsys)
    assert code == 0
    lines = out.splitlines()
    assert max(map(len, lines)) > 80  # the attribute table, whole on each line
    assert lines[1] == "relation   vote"  # was padded with spaces to the table's width
    assert [line for line in lines if line != line.rstrip()] == []


@pytest.mark.parametrize("value, width", [("60", 60), ("", cli_io.PIPE_WIDTH),
                                          ("wide", cli_io.PIPE_WIDTH), ("0", cli_io.PIPE_WIDTH),
                                          (" 132 ", 132)])
def test_pipe_width(value, width):
    assert cli_io.pipe_width({"COLUMNS": value}) == width
    assert cli_io.pipe_width({}) == cli_io.PIPE_WIDTH


def test_trimmed_lines_drop_spaces_before_each_line_end_across_writes():
    import io

    out = io.StringIO()
    stream = cli_io.TrimmedLines(out)
    for piece in ("ab  ", "  \ncd", " ", "e  \n", "   \n", "f g "):
        stream.write(piece)
    assert out.getvalue() == "ab\ncd e\n\nf g"
