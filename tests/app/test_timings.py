"""ensemblekit.api.timings: the seconds each stage of the work takes (``--verbose``, issue 32)."""

from __future__ import annotations

from ensemblekit import api
from ensemblekit.app.common import stage, timed

from ektesting.support import data_path


def test_fit_records_reading_then_fitting():
    with api.timings() as spent:
        api.fit("c45", data_path("iris.arff"))
    assert list(spent) == ["reading", "fitting"]
    assert all(seconds >= 0 for seconds in spent.values())


def test_compare_records_reading_units_and_statistics():
    with api.timings() as spent:
        api.compare(["knn", "c45"], [data_path("iris.arff")], cv=2, repeats=1)
    assert list(spent) == ["reading", "units", "statistics"]


def test_predict_records_the_model_and_the_reading_of_its_chunks(tmp_path):
    model = tmp_path / "iris.ekm"
    api.save_model(api.fit("c45", data_path("iris.arff")), model)
    with api.timings() as spent:
        list(api.predict_chunks(model, data_path("iris.arff")))
    assert list(spent) == ["loading the model", "reading"]


def test_stages_add_up_and_nothing_is_recorded_outside_a_block():
    with stage("reading"):
        pass  # no block: nothing to record, no error
    assert list(timed([1, 2], "reading")) == [1, 2]
    with api.timings() as spent:
        with stage("a"):
            pass
        first = spent["a"]
        with stage("a"):
            pass
        assert list(timed(iter([1, 2, 3]), "b")) == [1, 2, 3]
    assert spent["a"] >= first and list(spent) == ["a", "b"]
    with stage("a"):
        pass
    assert list(spent) == ["a", "b"]  # the block is over
