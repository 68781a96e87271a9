"""A sample of benchmarks/bench_hostile_inputs.py, one or two cases of each family (issue 29).

Each case is built by the benchmark's own generators and run the way the benchmark
runs it: the installed ``ensemblekit`` script in a fresh process, under a wall limit
and an address-space limit, judged by the benchmark (see its docstring for the
outcomes). A case passes when it ends in the outcome it expects: a clean refusal
(exit 2, one ``ensemblekit: error:`` line) or a correct answer (the reference
output). The second case of a family is one that holds already, so that a change to
the generators or to the judging that breaks them shows here too. The samples are
slow (a process each); the judging is tested in this process, on made-up runs.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_hostile_inputs.py"

CLEAN = ("refused", "correct")  # where the case accepts either

SAMPLES = [
    # (family, case name, outcomes that pass, xfail reason or None)
    ("model", "c45 fitted on iris x 1e25 (genuine) · show", ("correct",), None),
    ("model", "c45 fitted on iris x 1e25 (genuine) · predict", ("correct",), None),
    ("data", "/dev/zero · info", ("refused",), None),
    ("data", "a directory · info", ("refused",), None),
    ("outputs", "stdout on /dev/full · predict", ("refused",), None),
    ("outputs", "a FIFO (no writer) as the model · show", CLEAN, None),
    ("processes", "a journal holding \"accuracy\": 7.5", ("refused",), None),
    ("processes", "a journal whose last record was torn by a kill (resumes)", ("correct",), None),
    ("usage", "compare kmeans --runs 1000000000", ("refused",), None),
    ("usage", "compare --cv 1000000000", ("refused",), None),
    ("dask", "a listener that accepts and never speaks · compare", ("refused",), None),
    ("dask", "a closed port · predict", ("refused",), None),
    ("silent", "knn on iris scaled to +-1e308 against +-1e8 · predict", CLEAN, None),
    ("silent", "tree-kernel model holding tree_value_[1] = 1e308 · predict", CLEAN, None),
]


def _load_bench():
    sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("bench_hostile_inputs", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _load_bench()


@pytest.fixture(scope="module")
def ctx(bench, tmp_path_factory):
    # 30 s is plenty for every sample: each is refused at once, or answers in seconds
    context = bench.Ctx(tmp_path_factory.mktemp("hostile"), limit=30, as_limit_mb=2048, keep=False)
    bench.fit_models(context, names=("c45", "tree-kernel"))
    return context


def _params():
    for family, name, passing, reason in SAMPLES:
        marks = [pytest.mark.xfail(strict=False, reason=reason)] if reason else []
        yield pytest.param(family, name, passing, marks=marks, id=f"{family}: {name}")


@pytest.mark.slow
@pytest.mark.parametrize(("family", "name", "passing"), list(_params()))
def test_sample_case_ends_cleanly(bench, ctx, family, name, passing, monkeypatch):
    if family == "dask":
        if not bench.dask_available():
            pytest.skip("dask.distributed is not installed")
        # the silent listener and the closed port are refused when the connection timeout
        # runs out: 2 s instead of the default 10 s is the same refusal, sooner
        monkeypatch.setitem(ctx.env, "ENSEMBLEKIT_DASK_TIMEOUT", "2s")
    case = bench.case_named(family, name, ctx)
    row = bench.run_case(ctx, case)
    assert row.verdict is not None, row.skipped
    assert case.family == family
    assert row.verdict.outcome in passing, row.verdict.detail


def test_every_family_has_a_sample(bench):
    assert {family for family, *_ in SAMPLES} == set(bench.FAMILIES)


def test_judge_tells_a_silent_wrong_answer_from_a_refusal(bench, tmp_path):
    # the judging itself, on runs made up here: exit 0 where a refusal was expected is silent
    # wrong; exit 2 with a traceback is not a clean refusal; a MemoryError is over 1 GB
    out = tmp_path / "out"
    out.write_text("row,prediction\n")

    def made(code, stderr, mb=40.0):
        return bench.Run(["x"], code, mb, 1.0, False, out, stderr)

    error = "ensemblekit: error: x: not a regular file\n"
    assert bench.judge(made(0, ""), bench.REFUSE).outcome == "silent wrong"
    assert bench.judge(made(2, error), bench.REFUSE).outcome == "refused"
    assert bench.judge(made(2, "note: read 3 rows\n" + error), bench.REFUSE).outcome == "refused"
    assert bench.judge(made(2, "Traceback (most recent call last):\n" + error),
                       bench.REFUSE).outcome == "other"
    assert bench.judge(made(2, error), bench.CORRECT).outcome == "other"
    assert bench.judge(made(1, "ensemblekit: unexpected failure: MemoryError: \n"),
                       bench.EITHER).outcome == "over 1 GB"
    assert bench.judge(made(0, "", mb=1500.0), bench.EITHER).outcome == "over 1 GB"
    assert bench.judge(made(-11, ""), bench.EITHER).outcome == "signal"
    assert bench.judge(made(0, ""), bench.EITHER, lambda run: "rows differ").outcome == "silent wrong"
    assert bench.judge(made(2, error), bench.REFUSE, deadline=0.5).outcome == "other"
