"""One error family: bad input exits 2, anything else is an unexpected failure (exit 1).

A toy classifier whose ``fit`` raises a plain :class:`ValueError` stands for a bug inside
numpy or an estimator. ``compare`` must record its units as failures of the algorithm,
not of the input, and a lone ``fit`` must exit 1 with "unexpected failure"; a bad
``--set`` value is still the user's mistake and exits 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ensemblekit import api, registry
from ensemblekit.errors import EnsemblekitError, InputError, interruption

from ektesting.support import data_path
from ektesting.support import run_cli as run

VOTE = data_path("vote.arff")

BROKEN = textwrap.dedent('''
    from sklearn.base import BaseEstimator, ClassifierMixin

    from ensemblekit.constraints import Constraint, validate_params


    class BrokenClassifier(ClassifierMixin, BaseEstimator):
        _parameter_constraints = {
            "smoothing": Constraint("float", low=0.0, high=100.0, help="unused"),
        }

        def __init__(self, smoothing=1.0):
            self.smoothing = smoothing

        def fit(self, X, y):
            validate_params(self)
            raise ValueError("a bug deep inside fit")
''')

DRIVER = textwrap.dedent('''
    import sys

    from ensemblekit import registry

    registry.ALGORITHMS["broken"] = registry.AlgorithmSpec(
        name="broken", task=registry.CLASSIFICATION, description="raises in fit (tests only)",
        estimator="broken_estimator:BrokenClassifier", exposed=("smoothing",),
        preprocessing="nominal: one-hot; missing: training mean (numeric) / mode (nominal)")

    from ensemblekit.cli import main

    sys.argv = ["ensemblekit", *sys.argv[1:]]
    main()
''')


@pytest.fixture
def broken(tmp_path, monkeypatch):
    """Register ``broken`` here, and write the module a subprocess needs to do the same."""
    (tmp_path / "broken_estimator.py").write_text(BROKEN)
    (tmp_path / "driver.py").write_text(DRIVER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.ALGORITHMS, "broken", registry.AlgorithmSpec(
        name="broken", task=registry.CLASSIFICATION, description="raises in fit (tests only)",
        estimator="broken_estimator:BrokenClassifier", exposed=("smoothing",),
        preprocessing="nominal: one-hot; missing: training mean (numeric) / mode (nominal)"))
    return tmp_path


def _ensemblekit(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ENSEMBLEKIT_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, str(folder / "driver.py"), *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_the_errors_api_input_errors_does_not_list_are_in_the_family():
    # tests/app/test_api.py checks the seven that api.input_errors() used to list
    from ensemblekit.clustering.consensus import MissingDependencyError
    from ensemblekit.constraints import InvalidParameterError
    from ensemblekit.metrics import UnknownMetricError
    from ensemblekit.trust import DamagedModelError

    for cls in (InvalidParameterError, UnknownMetricError, DamagedModelError):
        assert issubclass(cls, InputError), cls
    assert issubclass(MissingDependencyError, EnsemblekitError)
    assert not issubclass(MissingDependencyError, InputError)  # a missing package is not bad input


def test_compare_records_a_plain_value_error_as_a_failure_of_the_algorithm(broken):
    result = api.compare(["broken", "c45"], [VOTE], cv=2, repeats=1, seed=1,
                         notify=lambda message: None)
    assert len(result.failures) == 2
    assert all(not f.bad_input and f.algorithm == "broken" for f in result.failures)
    assert "ValueError: a bug deep inside fit" in result.failures[0].error
    assert set(result.table("accuracy")["vote"]) >= {"c45"}
    # the command line: every unit of one algorithm failed, not for the input's sake -> 1
    compared = run("compare", "broken", "c45", "--data", VOTE, "--cv", "2", "--repeats", "1")
    assert compared.exit_code == 1, compared.output


@pytest.mark.slow  # whole ensemblekit processes
def test_a_lone_fit_that_raises_a_plain_value_error_is_an_unexpected_failure(broken, tmp_path):
    model = tmp_path / "m.ekm"
    done = _ensemblekit(broken, "fit", "broken", VOTE, "-o", str(model))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("ensemblekit: unexpected failure: ValueError: a bug deep inside fit")
    assert "--debug" in done.stderr and "Traceback" not in done.stderr
    assert not model.exists()
    traced = _ensemblekit(broken, "--debug", "fit", "broken", VOTE, "-o", str(model))
    assert traced.returncode == 1
    assert "Traceback" in traced.stderr and "a bug deep inside fit" in traced.stderr


@pytest.mark.slow  # whole ensemblekit processes
def test_a_bad_set_value_is_still_bad_input(broken, tmp_path):
    done = _ensemblekit(broken, "fit", "broken", VOTE, "-o", str(tmp_path / "m.ekm"),
                        "--set", "smoothing=-1")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("ensemblekit: error:") and "smoothing" in done.stderr


# ----------------------------------------------------------------- a refusal naming its column
def test_a_column_error_is_named_by_the_caller_that_knows_the_columns():
    from ensemblekit.data import load_dataset
    from ensemblekit.errors import ColumnError

    error = ColumnError(2, "{column} holds 1e+300, beyond the largest value")
    assert isinstance(error, InputError) and error.column == 2
    assert str(error) == "column 2 holds 1e+300, beyond the largest value"
    assert error.naming(["a", "b", "c"]) == "attribute 'c' holds 1e+300, beyond the largest value"
    assert error.naming(["a"]) == str(error)  # a name list that does not reach it
    target = ColumnError(None, "{column} is too large")
    assert str(target) == "the target is too large"
    assert target.naming([], "price") == "target 'price' is too large"
    # the registry names the columns as the algorithm sees them: codes (the attributes) or
    # one-hot (numeric attributes first, then one column per nominal value)
    schema = load_dataset(data_path("breast-cancer.arff")).schema
    coded = registry.refusal_text(ColumnError(1, "{column} is odd"), "c45", schema)
    onehot = registry.refusal_text(ColumnError(1, "{column} is odd"), "cart-entropy", schema)
    assert coded == f"attribute '{schema.features[1].name}' is odd"
    assert onehot.startswith(f"attribute '{schema.features[0].name}=")
    assert registry.refusal_text(ValueError("plain"), "c45", schema) == "plain"


def test_a_value_beyond_float32_is_refused_naming_the_attribute(tmp_path):
    data = tmp_path / "wide.csv"
    data.write_text("a,b,class\n1,2,x\n3,-1e300,y\n5,6,x\n7,8,y\n")
    result = run("fit", "cart-entropy", data, "-o", tmp_path / "m.ekm")
    assert result.exit_code == 2
    assert result.stderr == (f"ensemblekit: error: {data}: cart-entropy cannot be fitted: "
                             "attribute 'b' holds -1e+300, a value too large for dtype('float32'), "
                             "in which scikit-learn's trees read the data (at most about 3.4e38 "
                             "in magnitude)\n")


# --------------------------------------------------------------------------- interrupts
def _raised_from(cause: BaseException, link: str) -> Exception:
    """A SystemError raised from ``cause`` as CPython raises one when compiled code returns
    normally with the interrupt set (``link`` "cause"), or raised while handling it."""
    try:
        try:
            raise cause
        except BaseException as inner:  # noqa: BLE001
            if link == "cause":
                raise SystemError("CPUDispatcher(f) returned a result with an exception set") from inner
            raise ValueError("during the handling")  # noqa: B904 - the context is the point
    except Exception as outer:  # noqa: BLE001
        return outer


@pytest.mark.parametrize("link", ["cause", "context"])
def test_an_error_raised_from_an_interrupt_is_the_interrupt(link):
    # issue 29: Ctrl-C inside numba's callbacks surfaced as SystemError, exit 1
    stop = KeyboardInterrupt()
    wrapped = _raised_from(stop, link)
    assert interruption(wrapped) is stop
    assert interruption(_raised_from(wrapped, link)) is stop  # any depth
    assert interruption(stop) is stop


def test_errors_without_an_interrupt_behind_them_are_errors():
    assert interruption(ValueError("plain")) is None
    assert interruption(_raised_from(OSError("disk"), "cause")) is None
    assert interruption(_raised_from(GeneratorExit(), "context")) is None
    looped = ValueError("a")
    looped.__context__ = TypeError("b")
    looped.__context__.__context__ = looped  # a cycle ends the walk
    assert interruption(looped) is None
