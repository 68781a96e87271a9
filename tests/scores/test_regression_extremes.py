"""Regression scores of targets near the float limits (issue 29, item 7).

Squaring errors near 1e308 overflowed (RMSE, RRSE and the correlation became inf or
undefined, with numpy warnings); near 1e-300 the squares underflowed to 0. Scored in a
power-of-two unit of their own, such targets get the scores of the same data in an
ordinary unit: the same ratios, and errors that are the ordinary ones times the unit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.scores import regression as scores

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

_TRUE = np.array([1.0, 2.0, 3.5, -1.0, 0.25])
_PRED = np.array([1.5, 1.0, 3.0, 0.0, 0.5])


@pytest.mark.parametrize("exponent", [1021, -1000])
def test_scores_of_targets_near_the_limits_are_those_of_the_ordinary_unit(exponent):
    t, p, m = np.ldexp(_TRUE, exponent), np.ldexp(_PRED, exponent), np.ldexp(1.25, exponent)
    for ratio in (scores.correlation, scores.r2):
        assert ratio(t, p) == ratio(_TRUE, _PRED)
    for relative in (scores.relative_absolute_error_regression,
                     scores.root_relative_squared_error_regression):
        assert relative(t, p, m) == relative(_TRUE, _PRED, 1.25)
    for error in (scores.rmse, scores.mae):
        assert error(t, p) == np.ldexp(error(_TRUE, _PRED), exponent)
    assert scores.regression_report(t, p, m).to_dict()["rmse"] == scores.rmse(t, p)


def test_an_error_beyond_a_float_is_inf_without_a_warning():
    assert scores.mae([1.7e308], [-1.7e308]) == np.inf
    assert scores.correlation([1.7e308, -1.7e308, 0.0], [-1.7e308, 1.7e308, 1.0]) == -1.0
