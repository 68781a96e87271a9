"""Rule ensembles refuse, in one line naming the attribute, what their trees cannot read.

Issue 29 (7): on data near +-1e308 the rule ensembles failed with scikit-learn's raw
float32 error (exit 1), and a target beyond ~1e154 overflowed the squares of their
trees and weights: oob-weighted and random-forest printed a correlation of 0 with exit
0, tree-kernel predicted NaN. The trees read float32, so a value beyond it is refused;
a target beyond TARGET_MAX is refused before its squares overflow.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ensemblekit.errors import ColumnError
from ensemblekit.rules.postprocess import RuleEnsembleRegressor
from ensemblekit.rules.postprocess_model import TARGET_MAX, nadaraya_watson

from ektesting.support import run_cli

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _rows(n=30):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X, X[:, 0] * 2 + rng.normal(scale=0.1, size=n)


def test_a_value_beyond_float32_is_refused_at_fit_naming_its_column():
    X, y = _rows()
    X[4, 2] = -1e300
    X[9, 1] = 5e38
    with pytest.raises(ColumnError, match=r"^column 1 holds 5e\+38, a value too large for "
                                          r"dtype\('float32'\)") as caught:
        RuleEnsembleRegressor(method="kernel", basis="trees", n_estimators=3, cv=2).fit(X, y)
    assert caught.value.column == 1
    assert caught.value.naming(["a", "b", "c"]).startswith("attribute 'b' holds 5e+38")


@pytest.mark.parametrize("big", [1e101, -1e308])
def test_a_target_whose_squares_would_overflow_is_refused(big):
    X, y = _rows()
    y[3] = big
    said = re.escape(f"the target holds {big:.6g}, beyond 1e+100 in magnitude: a rule ensemble")
    with pytest.raises(ColumnError, match=f"^{said}"):
        RuleEnsembleRegressor(method="oob", basis="trees", learning_rate=0, n_estimators=3,
                              max_samples=0.5, cv=2).fit(X, y)
    y[3] = TARGET_MAX  # the bound itself is a target
    model = RuleEnsembleRegressor(method="kernel", basis="trees", n_estimators=3, cv=2).fit(X, y)
    assert np.isfinite(model.predict(X)).all()


def test_the_kernel_mean_with_a_width_whose_square_underflows():
    D2 = np.array([[4.0, 1.0, 1.0, 9.0], [0.0, 0.0, 2.0, 2.0]])
    y = np.array([10.0, 20.0, 40.0, 80.0])
    assert nadaraya_watson(D2, y, 1e-200).tolist() == [30.0, 15.0]  # the nearest rows only
    # an ordinary width keeps the plain formula's bits
    z = -(D2 - D2.min(axis=1, keepdims=True)) / (2.0 * 0.7 * 0.7)
    w = np.exp(z)
    assert nadaraya_watson(D2, y, 0.7).tobytes() == ((w @ y) / w.sum(axis=1)).tobytes()


def _csv(path, x_big=None, y_big=None):
    X, y = _rows(24)
    if x_big is not None:
        X[5, 1] = x_big
    if y_big is not None:
        y[7] = y_big
    lines = ["height,width,depth,price"] + [",".join(repr(float(v)) for v in (*r, t))
                                            for r, t in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("algorithm", ["rule-kernel", "tree-kernel", "oob-weighted"])
def test_the_command_line_refuses_in_one_line_naming_the_attribute(tmp_path, algorithm):
    data = _csv(tmp_path / "wide.csv", x_big=-1e308)
    fitted = run_cli("fit", algorithm, data, "-o", tmp_path / "m.ekm", "--set", "n_estimators=4")
    assert fitted.exit_code == 2 and not (tmp_path / "m.ekm").exists()
    assert fitted.stderr == (f"ensemblekit: error: {data}: {algorithm} cannot be fitted: "
                             "attribute 'width' holds -1e+308, a value too large for "
                             "dtype('float32'), in which scikit-learn's trees read the data (at "
                             "most about 3.4e38 in magnitude)\n")
    target = _csv(tmp_path / "tall.csv", y_big=3e200)
    evaluated = run_cli("evaluate", algorithm, target, "--cv", "2", "--repeats", "1",
                        "--set", "n_estimators=4")
    assert evaluated.exit_code == 2
    assert evaluated.stderr.splitlines()[-1].endswith(
        "ColumnError: target 'price' holds 3e+200, beyond 1e+100 in magnitude: a rule ensemble "
        "squares its targets, which would overflow; rescale the target")


def test_predict_refuses_a_value_beyond_float32_naming_the_attribute(tmp_path):
    model = tmp_path / "m.ekm"
    assert run_cli("fit", "tree-kernel", _csv(tmp_path / "ok.csv"), "-o", model,
                   "--set", "n_estimators=4").exit_code == 0
    data = _csv(tmp_path / "wide.csv", x_big=4e38)
    predicted = run_cli("predict", model, data)
    assert predicted.exit_code == 2 and predicted.stdout == ""
    assert predicted.stderr == (f"ensemblekit: error: {model}: the model cannot predict {data}: "
                                "attribute 'width' holds 4e+38, a value too large for "
                                "dtype('float32'), in which scikit-learn's trees read the data "
                                "(at most about 3.4e38 in magnitude)\n")
