"""``predicting._read_ahead``: the chunks of a reader, in order, read one ahead by a thread."""

from __future__ import annotations

import threading

import pytest

from ensemblekit.app.predicting import _read_ahead


def test_items_come_in_order_and_the_source_is_closed_at_the_end():
    closed = []

    def source():
        try:
            yield from range(50)
        finally:
            closed.append(threading.current_thread().name)

    assert list(_read_ahead(source())) == list(range(50))
    assert closed == ["ensemblekit-read-ahead"]


def test_an_error_comes_after_the_items_before_it():
    def source():
        yield 1
        yield 2
        raise ValueError("line 3: bad value")

    got = []
    with pytest.raises(ValueError, match="line 3: bad value"):
        for item in _read_ahead(source()):
            got.append(item)
    assert got == [1, 2]


def test_a_consumer_that_stops_early_stops_the_reader():
    read = []
    closed = threading.Event()

    def source():
        try:
            for i in range(10_000):
                read.append(i)
                yield i
        finally:
            closed.set()

    ahead = _read_ahead(source())
    assert next(ahead) == 0
    ahead.close()
    assert closed.wait(5)
    assert len(read) <= 3  # one item handed over, at most one waiting, one being offered
