"""``ensemblekit algorithms NAME``: one algorithm's parameters with type, default, range and help.

Issue 18, "Parameter help" (acceptance item 5): the figures shown are those each estimator
declares once in ``_parameter_constraints`` and its ``__init__`` defaults, so the tests
compare the output with the declaration itself, plus a few facts known by hand.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ensemblekit import registry
from ensemblekit.constraints import Constraint

from ektesting.support import run_cli as run

NAMES = list(registry.ALGORITHMS)


def _declared(algorithm: str, parameter: str) -> tuple[Constraint, object]:
    """The estimator class's own Constraint and default for ``parameter`` (the command line's
    default wins where the entry sets one, as ``fit`` uses it)."""
    spec = registry.get(algorithm)
    cls = spec.estimator_class()
    default = spec.cli_defaults.get(parameter,
                                    inspect.signature(cls.__init__).parameters[parameter].default)
    return cls._parameter_constraints[parameter], default


def _json(*args) -> object:
    result = run("algorithms", *args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


# --------------------------------------------------------------------------- k2 by hand and by declaration
def test_k2_max_parents_is_listed_as_declared():
    constraint, default = _declared("k2", "max_parents")
    # known by hand: K2's parent limit counts from 0, may be none (unlimited), default 2
    assert (constraint.kind, constraint.low, constraint.high, constraint.none_ok) == ("int", 0, None, True)
    assert default == 2

    entry = _json("k2")
    (param,) = [p for p in entry["parameters"] if p["name"] == "max_parents"]
    assert param == {"name": "max_parents", "type": "int", "default": default,
                     "values": constraint.describe_range(arrays=False), "help": constraint.help}
    assert param["values"].startswith("int >= 0")
    assert entry["name"] == "k2" and entry["task"] == "classification"


def test_k2_table_has_the_columns_and_a_row_per_parameter():
    result = run("algorithms", "k2")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    spec = registry.get("k2")
    # the title names the algorithm, its task and (the start of) its description
    assert lines[0].startswith(f"k2 (classification): {spec.description[:40]}")
    header = next(line for line in lines if "parameter" in line)
    assert [c.strip() for c in header.strip("┃ ").split("┃")] == ["parameter", "type", "default",
                                                                   "range", "help"]
    constraint, default = _declared("k2", "max_parents")
    (row,) = [line for line in lines if line.startswith("│ max_parents ")]
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells == ["max_parents", "int", str(default), "int >= 0, or none", constraint.help]
    rows = [line for line in lines if line.startswith("│ ")]
    assert [r.split("│")[1].strip() for r in rows] == list(spec.exposed)


def test_types_name_every_alternative_once():
    # cart-entropy's min_samples_leaf: a count (int >= 1) or a fraction (float in (0, 1)), as
    # scikit-learn
    (param,) = [p for p in _json("cart-entropy")["parameters"] if p["name"] == "min_samples_leaf"]
    assert (param["type"], param["values"]) == ("int or float", "int >= 1, or float > 0 and < 1")
    assert Constraint("int", low=0, none_ok=True).describe_type() == "int"
    assert Constraint("float", alt=Constraint("float", low=1)).describe_type() == "float"
    assert Constraint("choice", choices=("a",), multiple=True).describe_type() == "choice list"
    assert Constraint("bool").describe_type() == "bool"


# --------------------------------------------------------------------------- every algorithm
@pytest.mark.parametrize("name", NAMES)
def test_every_algorithm_renders_and_its_json_is_the_overview_entry(name):
    spec = registry.get(name)
    table = run("algorithms", name)
    assert table.exit_code == 0, table.stderr
    assert table.stdout.startswith(f"{name} ({spec.task}): ")
    for param in spec.exposed:
        assert f"│ {param} " in table.stdout
    entry = _json(name)
    overview = {e["name"]: e for e in _json()}
    assert entry == overview[name]
    declared = getattr(spec.estimator_class(), "_parameter_constraints", {})
    for p in entry["parameters"]:
        if not isinstance(declared.get(p["name"]), Constraint):
            continue  # knn: scikit-learn's class, described by its registry entry instead
        constraint, default = _declared(name, p["name"])
        assert p["type"].split()[0] == constraint.kind  # "int or float", "choice list": first form
        assert p["values"] == constraint.describe_range(arrays=False)
        assert p["help"] == constraint.help and p["default"] == default


def test_overview_says_where_the_parameter_help_is():
    result = run("algorithms")
    assert result.exit_code == 0, result.stderr
    assert "ensemblekit algorithms NAME lists an algorithm's parameters" in result.stdout


# --------------------------------------------------------------------------- errors and streams
def test_unknown_algorithm_is_a_usage_error_naming_the_valid_ones():
    for args in (("nosuch",), ("nosuch", "--format", "json")):
        result = run("algorithms", *args)
        assert result.exit_code == 2
        assert result.stdout == ""
        with pytest.raises(registry.UnknownAlgorithmError) as raised:
            registry.get("nosuch")
        # one message, the registry's, as every other command gives it
        assert result.stderr.strip() == f"ensemblekit: error: {raised.value}"
        assert all(name in result.stderr for name in NAMES)


@pytest.mark.slow  # a whole process
def test_parameters_go_to_stdout_and_nothing_to_stderr():
    exe = Path(sys.executable).parent / "ensemblekit"
    command = [str(exe)] if exe.exists() else [sys.executable, "-c",
                                               "from ensemblekit.cli import main; main()"]
    done = subprocess.run(command + ["algorithms", "k2"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "max_parents" in done.stdout and "int >= 0, or none" in done.stdout
