"""Usage is capped against the data before a plan is built (issue 29, item 3)."""

from __future__ import annotations

import pytest

from ensemblekit import experiment
from ensemblekit.experiment import protocol as protocol_module
from ensemblekit.experiment.protocol import Candidate, Protocol, ProtocolError


def _units_text(found: str, bound: str) -> str:
    return (f"{found} more than {bound} units, the bound on the units of work of a comparison "
            "(set ENSEMBLEKIT_MAX_UNITS to allow more)")


def test_runs_past_the_bound_are_refused_before_a_unit_is_made(iris, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_UNITS", "10")
    made = []
    monkeypatch.setattr(protocol_module, "Unit", lambda *a, **k: made.append(a))
    candidates = [Candidate("kmeans", {}, "kmeans"), Candidate("iekm", {}, "iekm")]
    with pytest.raises(ProtocolError) as info:
        experiment.plan([iris], candidates, Protocol("runs", repeats=6))
    assert str(info.value) == _units_text(
        "1 data sets x 2 algorithms x 6 runs make 12 units of work,", "10")
    assert made == []


def test_repeats_and_folds_past_the_bound_are_refused(iris, monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_UNITS", "10")
    with pytest.raises(ProtocolError) as info:
        experiment.plan([iris], [Candidate("c45", {}, "c45")], Protocol("cv", folds=3, repeats=4))
    assert str(info.value) == _units_text(
        "1 data sets x 1 algorithms x 4 repeats x 3 folds make 12 units of work,", "10")
    monkeypatch.setenv("ENSEMBLEKIT_MAX_UNITS", "12")
    assert len(experiment.plan([iris], [Candidate("c45", {}, "c45")],
                               Protocol("cv", folds=3, repeats=4)).units) == 12


def test_folds_are_checked_against_every_data_set_first(iris, monkeypatch):
    made = []
    monkeypatch.setattr(protocol_module, "_cv_units", lambda *a: made.append(a) or [])
    small = iris.take(range(0, 150, 10), name="small")  # 15 rows
    with pytest.raises(ProtocolError, match=r"15 labelled instances, fewer than 20 folds"):
        experiment.plan([iris, small], [Candidate("c45", {}, "c45")],
                        Protocol("cv", folds=20, repeats=1))
    assert made == []  # not even the first data set's folds


def test_a_grid_past_the_bound_is_refused_before_a_point_is_made(monkeypatch):
    monkeypatch.setenv("ENSEMBLEKIT_MAX_GRID_POINTS", "6")
    monkeypatch.setattr(protocol_module, "Candidate", lambda *a: pytest.fail("a point was made"))
    with pytest.raises(ProtocolError) as info:
        experiment.expand_grid("knn", {}, {"n_neighbors": [1, 2, 3], "weights": ["a", "b", "c"]})
    assert str(info.value) == (
        "the grid of knn has 9 points (3 values of n_neighbors x 3 values of weights), more than "
        "6 points, the bound on the points of a grid (set ENSEMBLEKIT_MAX_GRID_POINTS to allow "
        "more)")


def test_compare_refuses_runs_past_the_bound_with_one_line(cli, sample_path):
    result = cli("compare", "kmeans", "iekm", "--data", str(sample_path("iris.arff")),
                 "--runs", "1000000000")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() == "ensemblekit: error: " + _units_text(
        "1 data sets x 2 algorithms x 1,000,000,000 runs make 2,000,000,000 units of work,",
        "1,000,000")
