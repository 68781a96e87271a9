"""CSV and TSV predictions are written a column at a time (writers._delimited_rows):
the text must be the row-by-row writer's (format_predictions), byte for byte."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ensemblekit.results import Prediction, prediction_rows
from ensemblekit.writers import format_prediction_stream, format_predictions

HOSTILE = ("a", "b, c", 'say "hi"', "", "tab\there", "line\nend", " lead", "x\r", "é")


def _whole(p: Prediction, fmt: str) -> str:
    rows = prediction_rows(p.predictions, p.probabilities, p.classes)
    return format_predictions(rows, p.columns, fmt, prediction_values=p.prediction_values,
                              numeric_prediction=p.task == "regression")


def _pieces(p: Prediction, cuts) -> list[Prediction]:
    return [Prediction(p.task, p.predictions[a:b],
                       None if p.probabilities is None else p.probabilities[a:b],
                       p.classes, p.prediction_values) for a, b in zip(cuts, cuts[1:])]


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
@pytest.mark.parametrize("proba", [False, True])
def test_class_labels_any_quoting(fmt, proba):
    rng = np.random.default_rng(1)
    labels = [HOSTILE[i] for i in rng.integers(0, len(HOSTILE), 40)]
    P = rng.dirichlet(np.ones(len(HOSTILE)), 40) if proba else None
    if proba:
        P[3, 0], P[4, 1], P[5, 2] = np.nan, 0.5e-6, -0.0  # rounding ties, NaN, signed zero
    p = Prediction("classification", labels, P, HOSTILE if proba else (), HOSTILE)
    for cuts in ([0, 40], [0, 1, 17, 40]):
        assert "".join(format_prediction_stream(_pieces(p, cuts), fmt)) == _whole(p, fmt)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_numeric_and_cluster_predictions(fmt):
    values = [1.5, -0.0, math.nan, math.inf, 1e-320, 2 / 3, 1e22, -math.inf, 3.0]
    p = Prediction("regression", values)
    assert "".join(format_prediction_stream(_pieces(p, [0, 4, 9]), fmt)) == _whole(p, fmt)
    c = Prediction("clustering", ["0", "1", "10", "1"], prediction_values=("0", "1", "10"))
    assert "".join(format_prediction_stream(_pieces(c, [0, 2, 4]), fmt)) == _whole(c, fmt)
