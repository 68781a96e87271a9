"""Fixtures of the reader tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def fast_engine(monkeypatch):
    """``spy(name)``: a list that records, for each call of ``readers.fast.<name>``, whether it
    made a table; ``force()``: the vectorised engine from the first byte (FAST_BYTES 0)."""
    from ensemblekit.readers import fast

    def spy(name: str) -> list[bool]:
        made: list[bool] = []
        real = getattr(fast, name)

        def counting(*args, **kwargs):
            table = real(*args, **kwargs)
            made.append(table is not None)
            return table

        monkeypatch.setattr(fast, name, counting)
        return made

    def force() -> None:
        monkeypatch.setattr(fast, "FAST_BYTES", 0)
    return spy, force
