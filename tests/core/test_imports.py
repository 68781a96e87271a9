"""One-shot import hooks (ensemblekit._imports) and the scipy docstring shortcut."""

import importlib
import inspect
import subprocess
import sys
import textwrap

import pytest

from ensemblekit._imports import around_import


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A fresh importable package ``hookpkg`` with a module ``mod`` that records its run."""
    root = tmp_path / "hookpkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "mod.py").write_text("import builtins\nbuiltins._hook_log.append('body')\nVALUE = 41\n")
    (root / "bad.py").write_text("raise RuntimeError('broken module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("builtins._hook_log", [], raising=False)
    yield "hookpkg"
    for name in [n for n in sys.modules if n == "hookpkg" or n.startswith("hookpkg.")]:
        del sys.modules[name]


def test_hooks_run_around_the_body_once_and_the_module_keeps_its_loader(package):
    import builtins

    log = builtins._hook_log
    before_meta_path = list(sys.meta_path)

    def before():
        log.append("before")
        return "state"

    def after(module, state):
        log.append(("after", module.VALUE, state))
        module.VALUE += 1

    finder = around_import(f"{package}.mod", before=before, after=after)
    assert finder is not None and sys.meta_path[0] is finder
    # asked again (e.g. main() run twice in one process): no second finder, hooks run once
    assert around_import(f"{package}.mod", before=before, after=after) is finder
    assert sum(f is finder for f in sys.meta_path) == 1 and len(sys.meta_path) == len(before_meta_path) + 1
    walked = sys.meta_path  # the list an import in another thread could be walking
    mod = importlib.import_module(f"{package}.mod")
    assert walked[0] is finder and finder not in sys.meta_path  # replaced, not edited
    assert log == ["before", "body", ("after", 41, "state")]
    assert mod.VALUE == 42
    assert sys.meta_path == before_meta_path  # the finder removed itself
    # the module's loader is the ordinary one, so its source can still be read
    assert type(mod.__loader__).__name__ == "SourceFileLoader"
    assert mod.__spec__.loader is mod.__loader__
    assert "VALUE = 41" in inspect.getsource(mod)
    importlib.reload(mod)  # a reload runs the body only, without the hooks
    assert log[-1] == "body" and mod.VALUE == 41


def test_already_imported_module_gets_no_hook(package):
    importlib.import_module(f"{package}.mod")
    assert around_import(f"{package}.mod", before=lambda: pytest.fail("hook ran")) is None


def test_after_runs_when_the_body_raises_and_remove_withdraws_an_unused_hook(package):
    seen = []
    around_import(f"{package}.bad", after=lambda module, state: seen.append(module.__name__))
    with pytest.raises(RuntimeError, match="broken module"):
        importlib.import_module(f"{package}.bad")
    assert seen == [f"{package}.bad"]

    before_meta_path = list(sys.meta_path)
    finder = around_import(f"{package}.never_imported", before=lambda: pytest.fail("hook ran"))
    finder.remove()
    finder.remove()  # a second call is harmless
    assert sys.meta_path == before_meta_path


def _scipy_facts(hooked: bool) -> dict:
    code = textwrap.dedent(
        f"""
        import json
        if {hooked}:
            from ensemblekit._imports import plain_scipy_docstrings
            plain_scipy_docstrings()
        import numpy as np
        import scipy.stats
        from scipy._lib._array_api import xp_capabilities_table
        doc = scipy.stats.ttest_ind.__doc__
        result = scipy.stats.ttest_ind(np.arange(10.0), np.arange(10.0) ** 1.5)
        print(json.dumps({{
            "registered": sorted(f"{{getattr(f, '__module__', '')}}.{{f.__name__}}"
                                 for f in xp_capabilities_table),
            "entry": repr(xp_capabilities_table[scipy.stats.ttest_ind]),
            "lines": [line.strip() for line in doc.splitlines() if line.strip()],
            "has_backend_note": "Array API Standard Support" in doc,
            "statistic": float(result.statistic), "pvalue": float(result.pvalue),
        }}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    import json

    return json.loads(out.stdout)


@pytest.mark.slow  # two fresh interpreters import scipy.stats
def test_plain_scipy_docstrings_changes_only_the_docstring_note():
    if not hasattr(pytest.importorskip("scipy._lib._array_api"), "xp_capabilities_table"):
        pytest.skip("this scipy has no xp_capabilities decorator")
    plain, hooked = _scipy_facts(False), _scipy_facts(True)
    assert plain["has_backend_note"] and not hooked["has_backend_note"]
    # the hooked docstring is the plain one without the note: no line lost or changed
    assert hooked["lines"][0] == plain["lines"][0]
    assert set(hooked["lines"]) <= set(plain["lines"])
    assert len(hooked["lines"]) < len(plain["lines"])
    # the decorator still registers every function with the same capabilities
    assert len(plain["registered"]) > 100
    assert hooked["registered"] == plain["registered"]
    assert hooked["entry"] == plain["entry"]
    assert (hooked["statistic"], hooked["pvalue"]) == (plain["statistic"], plain["pvalue"])
