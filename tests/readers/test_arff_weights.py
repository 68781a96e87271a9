"""ARFF instance weights (``{w}`` after a row, as Weka writes them): read into
``Dataset.weights``, used by ``fit c45`` as J48 uses them, refused where they would be
ignored (issue 32)."""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.data import load_dataset
from ensemblekit.dataset import DataError

from ektesting.support import SAMPLE_DATA, run_main

HEAD = "@relation w\n@attribute a {x,y}\n@attribute n numeric\n@attribute c {p,q}\n@data\n"


def _write(tmp_path, body, name="w.arff"):
    path = tmp_path / name
    path.write_text(HEAD + body)
    return path


def test_weights_of_dense_and_sparse_rows(tmp_path):
    path = _write(tmp_path, "x,1,p,{2}\ny,2,q, { 0.5 }\nx,3,q\n{0 y,1 4,2 p},{3}\n{1 5}\n"
                            "'x',6,p,{0}\n")
    ds = load_dataset(path)
    np.testing.assert_array_equal(ds.weights, [2, 0.5, 1, 3, 1, 0])
    np.testing.assert_array_equal(ds.X, [[0, 1], [1, 2], [0, 3], [1, 4], [0, 5], [0, 6]])
    np.testing.assert_array_equal(ds.y, [0, 1, 1, 0, 0, 0])
    assert ds.weighted
    assert ds.take([2, 4]).weights.tolist() == [1, 1] and not ds.take([2, 4]).weighted


def test_a_file_without_weights_has_none(tmp_path):
    ds = load_dataset(_write(tmp_path, "x,1,p\ny,2,q\n"))
    assert ds.weights is None and not ds.weighted


@pytest.mark.parametrize("weight", ["-1", "nan", "inf", "heavy", ""])
def test_a_weight_that_is_not_a_finite_number_at_least_0_is_refused(tmp_path, weight):
    path = _write(tmp_path, f"x,1,p\ny,2,q,{{{weight}}}\n")
    with pytest.raises(DataError, match=r"line 7: instance weight .* is not a finite number >= 0"):
        load_dataset(path)


def test_fit_c45_weighs_and_other_commands_refuse(tmp_path, monkeypatch, capsys):
    # iris with weights: c45 fits (its leaves count weights), knn and compare refuse
    lines = (SAMPLE_DATA / "iris.arff").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lower().startswith("@data")) + 1
    cycle = ["1", "0.5", "2", "3"]
    rows = [f"{r},{{{cycle[i % 4]}}}" for i, r in enumerate(r for r in lines[start:] if r)]
    path = tmp_path / "wiris.arff"
    path.write_text("\n".join(lines[:start] + rows) + "\n")
    model = tmp_path / "m.model"
    code, _, err = run_main(["fit", "c45", path, "-o", model], monkeypatch, capsys)
    assert code == 0, err
    code, out, _ = run_main(["show", model], monkeypatch, capsys)
    total = sum(float(cycle[i % 4]) for i in range(len(rows)))
    assert "Iris-setosa (" in out and (len(rows), total) == (150, 242.0)
    leaf_weights = [float(t.split("(")[1].split("/")[0].rstrip(")"))
                    for t in out.splitlines() if ": Iris-" in t]
    assert sum(leaf_weights) == pytest.approx(total)
    for args, says in [
        (["fit", "knn", path, "-o", tmp_path / "k.model"], "knn does not take instance weights"),
        (["compare", "c45", "knn", "--data", path], "which cross-validation does not use yet"),
        (["evaluate", "c45", path, "--split-percentage", "66"], "which evaluate does not use"),
        (["cluster", "kmeans", path, "-k", "3"], "kmeans does not take instance weights"),
    ]:
        code, out, err = run_main(args, monkeypatch, capsys)
        assert (code, out) == (2, ""), err
        assert says in err and "the first on line" in err and err.count("\n") == 1, err
