"""IBk's one distance sum in two forms: the compiled kernel gives the numpy form's bits.

The ``knn`` estimator sums the squared attribute differences with the compiled
:func:`ensemblekit.classifiers._ibk_kernels.ordered_sums`; a model rebuilt from a file
(numpy only) with :func:`ensemblekit.classifiers.ibk_model.ordered_sums`. Everything
else (ranges, scaling, far values, neighbours, weights) is shared, so the two forms
must agree to the bit on any operands: missing values on either side or both, nominal
codes, exact ties, values far outside the ranges (+-inf scaled values) and differences
that overflow when squared.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.classifiers import _ibk_kernels
from ensemblekit.classifiers.ibk import IBk
from ensemblekit.classifiers.ibk_model import (
    IBkModel,
    _byte_codes,
    _far,
    _scale,
    ordered_sums,
)

from ektesting.state_roundtrip import roundtrip


def _operands(rng, m, n, p):
    """Random scaled rows with missing values, shared values (ties) and extremes."""
    nominal = rng.random(p) < 0.4
    Q = rng.choice([0.0, 0.25, 0.5, 1.0, 0.3, -2.0, 7.5, np.nan, 1e200, -np.inf, np.inf],
                   size=(m, p))
    T = rng.choice([0.0, 0.25, 0.5, 1.0, 0.7, 3.0, np.nan, -1e200], size=(p, n))
    Q[:, nominal] = rng.choice([0.0, 1.0, 2.0, np.nan], size=(m, int(nominal.sum())))
    T[nominal] = rng.choice([0.0, 1.0, 2.0, np.nan], size=(int(nominal.sum()), n))
    with np.errstate(invalid="ignore", over="ignore"):
        return Q, _far(Q), T, _far(T), nominal


@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_sum_gives_the_bits_of_the_numpy_sum(seed):
    rng = np.random.default_rng(seed)
    m, n, p = int(rng.integers(1, 9)), int(rng.integers(1, 40)), int(rng.integers(1, 7))
    Q, FQ, T, FT, nominal = _operands(rng, m, n, p)
    want, got = np.full((m, n), -1.0), np.full((m, n), -1.0)  # both must overwrite
    with np.errstate(invalid="ignore", over="ignore"):
        ordered_sums(Q, FQ, T, FT, nominal, want)
    _ibk_kernels.ordered_sums(Q, FQ, T, FT, nominal, got)
    assert got.tobytes() == want.tobytes()
    assert (want >= 0).any()  # not all NaN: the comparison says something


def test_the_sum_follows_the_missing_value_rules_by_hand():
    # one numeric column (scaled 0.2 in the test row, 0.9 / missing in the training rows)
    # and one nominal column (code 1 against 1 / 2 / missing)
    nominal = np.array([False, True])
    Q = np.array([[0.2, 1.0], [np.nan, np.nan]])
    T = np.array([[0.9, np.nan, 0.9], [1.0, 2.0, np.nan]])
    FQ, FT = _far(Q), _far(T)
    want = np.array([[(0.2 - 0.9) ** 2 + 0.0, 0.8 ** 2 + 1.0, (0.2 - 0.9) ** 2 + 1.0],
                     [0.9 ** 2 + 1.0, 1.0 + 1.0, 0.9 ** 2 + 1.0]])
    for form in (ordered_sums, _ibk_kernels.ordered_sums):
        out = np.empty((2, 3))
        form(Q, FQ, T, FT, nominal, out)
        assert out.tobytes() == want.tobytes()


@pytest.mark.parametrize("seed", range(6))
def test_the_mismatch_count_gives_the_bits_of_the_sum_on_nominal_rows(seed):
    # every attribute nominal: the estimator counts mismatches on one-byte codes
    rng = np.random.default_rng(seed)
    m, n, p = int(rng.integers(1, 9)), int(rng.integers(1, 70)), int(rng.integers(1, 40))
    Q = rng.choice([0.0, 1.0, 2.0, 253.0, np.nan], size=(m, p))
    T = rng.choice([0.0, 1.0, 2.0, 253.0, np.nan], size=(p, n))
    want, got = np.full((m, n), -1.0), np.full((m, n), -1.0)
    ordered_sums(Q, Q, T, T, np.ones(p, dtype=bool), want)
    for wide in (np.uint8, np.uint16):
        got[:] = -1.0
        _ibk_kernels.mismatch_counts(_byte_codes(Q, 255), _byte_codes(T, 254),
                                     np.empty(n, dtype=wide), got)
        assert got.tobytes() == want.tobytes()
    assert len(np.unique(want)) > 1


@pytest.mark.parametrize("k", [1, 3])
def test_the_compiled_votes_count_as_numpy_does(k):
    # ties with the k-th distance vote; a NaN distance never does, an all-NaN row votes for none
    rng = np.random.default_rng(k)
    sq = rng.choice([0.0, 1.0, 2.0, np.inf, np.nan], size=(30, 12))
    sq[0] = np.nan
    y = rng.integers(0, 3, 12)
    numpy_model, compiled = IBkModel(n_neighbors=k), IBkModel(n_neighbors=k)
    for model in (numpy_model, compiled):
        model.y_train_, model.classes_, model.n_features_in_ = y, np.arange(3), 2
        model.n_neighbors_ = k
    compiled._compiled = True
    want, got = (np.zeros((30, 3)), np.zeros(30)), (np.zeros((30, 3)), np.zeros(30))
    numpy_model._add_votes(sq, *want)
    compiled._add_votes(sq, *got)
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    want = want[0]
    assert want[0].sum() == 0 and want.sum(axis=1).max() > k  # ties vote too


@pytest.mark.parametrize("params", [{}, {"n_neighbors": 3}, {"n_neighbors": 3, "weights": "similarity"}])
def test_fit_coded_counts_nominal_mismatches_as_the_rebuilt_model_sums_them(params):
    rng = np.random.default_rng(7)
    for p in (7, 300):  # counts in one byte, and in two
        X = rng.integers(0, 3, size=(90, p)).astype(np.float64)
        X[rng.random(X.shape) < 0.2] = np.nan
        args = dict(nominal_features=range(p), n_categories=[3] * p, n_classes=3, **params)
        model = IBkModel(**args).fit_coded(X[:60], rng.integers(0, 3, 60))
        rebuilt = roundtrip(IBk(**args).fit(X[:60], model.y_train_), IBkModel)
        want = rebuilt.predict_proba(X[60:])
        assert model.predict_proba(X[60:]).tobytes() == want.tobytes()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("params", [{}, {"n_neighbors": 4, "weights": "inverse"},
                                    {"n_neighbors": 3, "weights": "similarity"},
                                    {"n_neighbors": 2, "range_update": "none"}])
def test_estimator_and_rebuilt_model_agree_on_random_mixed_data(seed, params):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(3, 50)), int(rng.integers(1, 6))
    X = np.round(rng.normal(size=(n + 40, p)) * 4, 1)  # rounded: many exact ties
    nominal = np.flatnonzero(rng.random(p) < 0.4)
    X[:, nominal] = rng.integers(0, 3, size=(n + 40, nominal.size))
    X[rng.random(X.shape) < 0.15] = np.nan
    X[n + 20:] *= 3.0  # later test rows widen the ranges
    X[n + 20:, nominal] = rng.integers(0, 3, size=(20, nominal.size))
    est = IBk(nominal_features=nominal, n_categories=[3] * nominal.size, n_classes=3,
              **params).fit(X[:n], rng.integers(0, 3, n))
    stored_rows = est.X_train_.copy()
    model = roundtrip(est, IBkModel)
    assert type(model) is IBkModel
    assert est.predict_proba(X[n:]).tobytes() == model.predict_proba(X[n:]).tobytes()
    assert est.X_train_.tobytes() == stored_rows.tobytes()  # prediction leaves them as they were


def test_prediction_leaves_a_single_column_of_stored_rows_unchanged():
    # one column: the transposed rows are contiguous already, and must still be a copy
    X = np.array([[1.0], [4.0], [np.nan], [10.0]])
    est = IBk().fit(X, [0, 1, 0, 1])
    before = est.X_train_.copy()
    est.predict_proba(np.array([[2.0], [30.0]]))
    assert est.X_train_.tobytes() == before.tobytes()
    assert X[1, 0] == 4.0


@pytest.mark.parametrize("seed", range(4))
def test_scaling_values_inside_their_ranges_takes_the_general_forms_bits(seed):
    # the 2-pass form for values within [lo, hi], against the general form, per column
    rng = np.random.default_rng(seed)
    scale = [1e-300, 1.0, 3.7, 1e300][seed]
    values = rng.normal(size=(50, 6)) * scale
    values[rng.random(values.shape) < 0.1] = np.nan
    lo = np.fmin.reduce(values, axis=0) - rng.random(6) * scale
    hi = np.fmax.reduce(values, axis=0) + rng.random(6) * scale
    want = _scale(values, lo, hi)
    assert _scale(values, lo, hi, inside=True).tobytes() == want.tobytes()
    # a range that is 0, unknown or overflowing takes the general form either way
    for lo_j, hi_j in ((1.0, 1.0), (np.inf, -np.inf), (-1.7e308, 1.7e308)):
        low, high = lo.copy(), hi.copy()
        low[0], high[0] = lo_j, hi_j
        inside = values.copy()
        inside[:, 0] = np.clip(inside[:, 0], min(lo_j, hi_j), max(lo_j, hi_j))
        assert (_scale(inside, low, high, inside=True).tobytes()
                == _scale(inside, low, high).tobytes())
