"""The package's import structure: layers in one direction, no cycles, no borrowed private names.

Written in the spirit of ``test_cli_boundary.py``: the imports of every module under
``src/ensemblekit`` are read with :mod:`ast` (imports inside functions included, since a
lazy import is still a dependency), and three rules are asserted:

1. **No cycles.** The graph of module imports has no strongly connected component of more
   than one module.
2. **Layers.** Every module has a rank in :data:`LAYERS`; an import may go to the same rank
   or a lower one, never up. From the top: the command line, the application layer,
   the experiment/persistence/report tier, the registry and the metric scorer, the
   estimators, and at the bottom data, readers, pure scores and constraints.
3. **Private names stay home.** A module uses another module's ``_name`` (by ``from M
   import _name`` or ``M._name``) only when both sit in the same subpackage (``app/``,
   ``readers/``, ``classifiers/`` ...). Modules directly under ``ensemblekit/`` count as
   strangers to each other.

A new module must be placed in :data:`LAYERS`, which makes its place in the design a
decision rather than drift. The checker itself is tested on a small fake tree.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ensemblekit

PACKAGE = Path(ensemblekit.__file__).resolve().parent

#: rank -> module prefixes (a module takes the rank of its longest matching prefix).
LAYERS = {
    0: ("ensemblekit", "ensemblekit.errors", "ensemblekit.safejson", "ensemblekit.atomic",
        "ensemblekit.names",
        "ensemblekit.fifo", "ensemblekit._imports", "ensemblekit._workers"),
    1: ("ensemblekit.constraints", "ensemblekit.class_domain", "ensemblekit.dataset",
        "ensemblekit.readers", "ensemblekit.data", "ensemblekit.streaming", "ensemblekit.scores",
        "ensemblekit.stats", "ensemblekit.trust", "ensemblekit.state", "ensemblekit.rows",
        "ensemblekit.units", "ensemblekit.frames", "ensemblekit.java_random"),
    2: ("ensemblekit.bayesnet", "ensemblekit.classifiers", "ensemblekit.clustering",
        "ensemblekit.rules", "ensemblekit.lazy", "ensemblekit.discretize",
        "ensemblekit.discretize_model", "ensemblekit.preprocessing",
        "ensemblekit.preprocessing_model"),
    3: ("ensemblekit.registry", "ensemblekit.metrics"),
    4: ("ensemblekit.results", "ensemblekit.writers", "ensemblekit.persistence",
        "ensemblekit.pipeline"),
    5: ("ensemblekit.experiment", "ensemblekit.report", "ensemblekit.description",
        "ensemblekit.plots"),
    6: ("ensemblekit.app", "ensemblekit.api"),
    7: ("ensemblekit.cli", "ensemblekit.cli_io", "ensemblekit.cli_options", "ensemblekit.__main__"),
}


# --------------------------------------------------------------------------- the checker
def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package at ``root``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _known(name: str, known) -> str | None:
    """The longest prefix of ``name`` that is one of the ``known`` modules."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(root: Path) -> dict[str, dict[str, set[str]]]:
    """Module -> {imported module: names used from it}, within the package at ``root``.

    ``from P import m`` where ``P.m`` is a module counts as an import of ``P.m``;
    ``import P.m as x`` followed by ``x._y`` records the name ``_y``.
    """
    mods = modules(root)
    graph: dict[str, dict[str, set[str]]] = {}
    for name, path in mods.items():
        package = _package_of(name, path)
        out: dict[str, set[str]] = {}
        aliases: dict[str, str] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _known(alias.name, mods)
                    if target and target != name:
                        out.setdefault(target, set())
                        if alias.asname:
                            aliases[alias.asname] = target
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in mods:
                        if sub != name:
                            out.setdefault(sub, set())
                            aliases[alias.asname or alias.name] = sub
                        continue
                    target = _known(base, mods)
                    if target and target != name:
                        out.setdefault(target, set()).add(alias.name)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases):
                out.setdefault(aliases[node.value.id], set()).add(node.attr)
        graph[name] = out
    return graph


def cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def rank(name: str, layers) -> int | None:
    """A module's rank: that of its longest matching prefix in ``layers``."""
    best = None
    for r, prefixes in layers.items():
        for prefix in prefixes:
            nested = "." in prefix and name.startswith(prefix + ".")  # the root matches itself only
            if (name == prefix or nested) and (
                    best is None or len(prefix) > len(best[1])):
                best = (r, prefix)
    return None if best is None else best[0]


def upward(graph, layers) -> list[str]:
    """Every import that goes to a higher rank, and every module with no rank."""
    found = []
    for source in sorted(graph):
        r = rank(source, layers)
        if r is None:
            found.append(f"{source} has no layer: place it in LAYERS")
            continue
        for target in sorted(graph[source]):
            t = rank(target, layers)
            if t is not None and t > r:
                found.append(f"{source} (rank {r}) imports {target} (rank {t})")
    return found


def borrowed_private_names(root: Path) -> list[str]:
    """Every use of another module's ``_name`` from outside that module's subpackage."""
    mods = modules(root)
    found = []
    for source, targets in imports(root).items():
        home = _package_of(source, mods[source])
        for target, names in targets.items():
            same = home == _package_of(target, mods[target]) and home != root.name
            for used in sorted(names):
                if used.startswith("_") and not used.startswith("__") and not same:
                    found.append(f"{source} uses {target}.{used}")
    return found


# --------------------------------------------------------------------------- the package
GRAPH = imports(PACKAGE)


def test_no_import_cycles():
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_imports_go_down_the_layers():
    found = upward(GRAPH, LAYERS)
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_no_module_borrows_a_private_name():
    found = borrowed_private_names(PACKAGE)
    assert not found, "private names used from another package:\n" + "\n".join(found)


def test_modules_other_than_estimators_and_stats_stay_under_1000_lines():
    estimators = LAYERS[2]
    long = {name: len(path.read_text(encoding="utf-8").splitlines())
            for name, path in modules(PACKAGE).items()
            if rank(name, {0: estimators}) is None and name != "ensemblekit.stats"}
    assert {name: n for name, n in long.items() if n > 1000} == {}


def test_api_is_a_facade():
    assert len((PACKAGE / "api.py").read_text(encoding="utf-8").splitlines()) <= 300


# --------------------------------------------------------------------------- the checker, tested
@pytest.fixture
def fake(tmp_path):
    """A fake package ``pkg``: low <- mid <- top, plus a subpackage ``sub``."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "low.py": "def _hidden(): pass\ndef shown(): pass\n",
        "mid.py": "from pkg.low import shown\n",
        "top.py": "from pkg import mid\n\ndef f():\n    import pkg.low\n",
        "sub/__init__.py": "",
        "sub/a.py": "from pkg.sub._b import _helper\n",
        "sub/_b.py": "def _helper(): pass\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    layers = {0: ("pkg", "pkg.low", "pkg.sub"), 1: ("pkg.mid",), 2: ("pkg.top",)}
    return root, layers


def test_checker_passes_a_clean_tree(fake):
    root, layers = fake
    graph = imports(root)
    assert graph["pkg.top"] == {"pkg.mid": set(), "pkg.low": set()}
    assert cycles(graph) == [] and upward(graph, layers) == []
    assert borrowed_private_names(root) == []  # _helper is used inside its own subpackage


def test_checker_finds_a_cycle_made_by_a_lazy_import(fake):
    root, layers = fake
    (root / "low.py").write_text("def f():\n    from pkg import top\n")
    graph = imports(root)
    assert cycles(graph) == [["pkg.low", "pkg.mid", "pkg.top"]]
    assert upward(graph, layers) == ["pkg.low (rank 0) imports pkg.top (rank 2)"]


def test_checker_finds_an_upward_import_and_an_unplaced_module(fake):
    root, layers = fake
    (root / "mid.py").write_text("import pkg.top as t\n")
    (root / "new.py").write_text("")
    found = upward(imports(root), layers)
    assert "pkg.mid (rank 1) imports pkg.top (rank 2)" in found
    assert "pkg.new has no layer: place it in LAYERS" in found


def test_checker_finds_borrowed_private_names(fake):
    root, _ = fake
    (root / "mid.py").write_text("from pkg.low import _hidden\nimport pkg.low as low\nlow._x\n")
    assert borrowed_private_names(root) == ["pkg.mid uses pkg.low._hidden", "pkg.mid uses pkg.low._x"]
