"""The command line only parses, calls the API and renders (issue 17, acceptance 2).

cli.py may import the standard library, typer, and from ensemblekit only the modules
that parse (registry), do the work (api), render (report, description, results, writers) or
handle the process's streams (cli_io, _imports). It never imports numpy or metric code, so
it cannot compute a score itself.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ensemblekit.cli

CLI = Path(ensemblekit.cli.__file__)
ALLOWED_OWN = {"ensemblekit", "ensemblekit.api", "ensemblekit.registry", "ensemblekit.report",
               "ensemblekit.description", "ensemblekit.results", "ensemblekit.writers", "ensemblekit.cli_io",
               "ensemblekit._imports", "ensemblekit.errors", "ensemblekit.cli_options"}
THIRD_PARTY = {"typer", "rich"}


def imported_modules(path: Path) -> set[str]:
    """Every module an import statement in ``path`` names (at any depth of the file)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module)
            if node.module == "ensemblekit":  # from ensemblekit import api -> ensemblekit.api
                found.update(f"ensemblekit.{a.name}" for a in node.names if a.name != "__version__")
    return found


def test_cli_imports_only_parsing_api_and_rendering_modules():
    modules = imported_modules(CLI)
    own = {m for m in modules if m.split(".")[0] == "ensemblekit"}
    assert own <= ALLOWED_OWN, f"cli.py imports {sorted(own - ALLOWED_OWN)}"
    others = {m.split(".")[0] for m in modules} - {"ensemblekit"}
    stdlib = set(sys.stdlib_module_names)
    assert others <= stdlib | THIRD_PARTY, f"cli.py imports {sorted(others - stdlib - THIRD_PARTY)}"
    for banned in ("numpy", "scipy", "sklearn", "ensemblekit.metrics", "ensemblekit.stats",
                   "ensemblekit.experiment"):
        assert not any(m == banned or m.startswith(banned + ".") for m in modules), banned


def test_the_checker_sees_nested_imports(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    import numpy as np\n    from ensemblekit.metrics import X\n")
    assert imported_modules(sample) == {"numpy", "ensemblekit.metrics"}


def test_cli_is_small():
    lines = len(CLI.read_text(encoding="utf-8").splitlines())
    assert lines <= 700, f"cli.py has {lines} lines"


def test_importing_the_cli_loads_no_numeric_library():
    code = ("import sys, ensemblekit.cli; "
            "print(sorted(m for m in ('numpy', 'scipy', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
