"""The generated tables of ``docs/model-format.md``, from the registry and the state declarations.

The document describes model files for other tools; its tables of algorithms and of
each model class's stored state must say what the code writes. They are generated
here from the registry entries and the ``_fitted_state`` declarations
(:mod:`ensemblekit.state`), and ``tests/persistence/test_model_format_doc.py`` checks
that the document holds exactly these tables, so a change of a declaration that is
not carried into the document fails a test.

In the document each table sits between two HTML comments::

    <!-- generated: state C45Model -->
    ...
    <!-- end generated -->

Run from ``tests/`` (or with ``tests`` on ``PYTHONPATH``)::

    python -m ektesting.model_format            # print every block
    python -m ektesting.model_format --update   # rewrite the blocks of docs/model-format.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

DOC = Path(__file__).resolve().parents[2] / "docs" / "model-format.md"
BEGIN = "<!-- generated: {key} -->"
END = "<!-- end generated -->"
_BLOCK = re.compile(r"<!-- generated: (?P<key>[^>]+?) -->\n(?P<body>.*?)<!-- end generated -->",
                    re.DOTALL)


# --------------------------------------------------------------------------- rendering
def _code(text) -> str:
    return f"`{text}`"


def _shape(shape) -> str:
    return _code("(" + ", ".join(str(axis) for axis in shape) + ("," if len(shape) == 1 else "")
                 + ")")


def _number(value) -> str:
    return str(value)


def _bounds(low, high, below) -> str:
    """``low <= v <= high`` / ``low <= v < below`` / ``v >= low`` ... or ''."""
    upper = f" <= {_number(high)}" if high is not None else (
        f" < {_number(below)}" if below is not None else "")
    if low is not None and upper:
        return _code(f"{_number(low)} <= v{upper}")
    if low is not None:
        return _code(f"v >= {_number(low)}")
    if upper:
        return _code(f"v{upper}")
    return ""


def _array_values(decl) -> str:
    if decl.dtype == "bool":
        return "0/1 (False/True)"
    parts = [_bounds(decl.low, decl.high, decl.below)]
    if decl.dtype.startswith("float"):
        if decl.nan:
            parts.append("NaN allowed")
        if decl.inf:
            parts.append("+-inf allowed")
        if not decl.nan and not decl.inf:
            parts.append("finite")
    parts = [p for p in parts if p]
    return ", ".join(parts) if parts else "any"


def _scalar_values(decl) -> str:
    if decl.kind == "str":
        if decl.choices:
            return "one of " + ", ".join(_code(f'"{c}"') for c in decl.choices)
        return "any text"
    if decl.kind == "bool":
        return "`true`/`false`"
    parts = [_bounds(decl.low, decl.high, None)]
    if decl.kind == "float":
        parts.append("+-inf allowed" if decl.inf
                     else "finite")
    parts = [p for p in parts if p]
    return ", ".join(parts) if parts else "any"


def _member_classes(decl, owner_cls) -> list[tuple[str, type]]:
    """``[(condition, class)]``: the class of the members, or one per value of the choice
    parameter of the owner that picks it (``tree = "c45"``)."""
    if isinstance(decl.model, type):
        return [("", decl.model)]
    found = []
    for name, constraint in getattr(owner_cls, "_parameter_constraints", {}).items():
        if getattr(constraint, "kind", None) != "choice":
            continue
        for choice in constraint.choices:
            try:
                cls = decl.model(SimpleNamespace(**{name: choice}))
            except Exception:  # a choice that picks no class
                continue
            found.append((f'{_code(name)} = {_code(chr(34) + choice + chr(34))}', cls))
    if not found:
        raise TypeError(f"{owner_cls.__name__}: cannot tell which classes its members may be")
    return found


def state_table(cls) -> str:
    """The markdown table of the declared state of a model class."""
    from ensemblekit.state import Array, ArrayList, Members, Scalar, declared_state

    rows = ["| entry | stored as | dtype | shape | values | optional |",
            "|---|---|---|---|---|---|"]
    for name, decl in declared_state(cls).items():
        optional = "yes" if getattr(decl, "optional", False) else ""
        if isinstance(decl, Scalar):
            rows.append(f"| {_code(name)} | state | {decl.kind} | scalar | "
                        f"{_scalar_values(decl)} | {optional} |")
        elif isinstance(decl, Array):
            rows.append(f"| {_code(name)} | {_code(name + '.npy')} | {decl.dtype} | "
                        f"{_shape(decl.shape)} | {_array_values(decl)} | {optional} |")
        elif isinstance(decl, ArrayList):
            item = decl.item
            length = decl.length if decl.length is not None else "any"
            rows.append(f"| {_code(name)} | {_code(name + '/<i>.npy')}, i < {_code(length)}; "
                        f"state: the count | {item.dtype} | {_shape(item.shape)} each | "
                        f"{_array_values(item)} | {optional} |")
        elif isinstance(decl, Members):
            length = decl.length if decl.length is not None else "any"
            kinds = _member_classes(decl, cls)
            what = "; ".join(f"{_code(member.__name__)}" + (f" when {cond}" if cond else "")
                             for cond, member in kinds)
            rows.append(f"| {_code(name)} | {_code(name + '/<i>/...')}, i < {_code(length)}; "
                        f"state: a list of the members' scalars | members | - | "
                        f"each the state of {what} | {optional} |")
        else:  # pragma: no cover - a new kind of declaration
            raise TypeError(f"{cls.__name__}.{name}: unknown declaration {decl!r}")
    return "\n".join(rows) + "\n"


def _class_path(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def model_classes() -> list[tuple[type, list]]:
    """``[(model class, [registry entries])]`` in registry order, then member-only classes."""
    from ensemblekit import registry
    from ensemblekit.state import Members, declared_state

    groups: dict[type, list] = {}
    for spec in registry.ALGORITHMS.values():
        groups.setdefault(spec.model_class(), []).append(spec)
    extra = []
    for cls in list(groups):
        for decl in declared_state(cls).values():
            if isinstance(decl, Members):
                for _, member in _member_classes(decl, cls):
                    if member not in groups and member not in extra:
                        extra.append(member)
    return [*groups.items(), *((cls, []) for cls in extra)]


def _entries_line(cls, specs) -> str:
    if not specs:
        return f"Members only. Model class: {_code(_class_path(cls))}.\n"
    names = []
    for spec in specs:
        text = _code(spec.name)
        if spec.aliases:
            text += " (alias " + ", ".join(_code(a) for a in spec.aliases) + ")"
        names.append(text)
    return (f"Registry entries: {', '.join(names)}. Model class: {_code(_class_path(cls))}.\n")


def algorithms_table() -> str:
    """One row per registry entry: what a reader needs to turn a row into the model's input."""
    from ensemblekit import registry

    rows = ["| registry name | task | encode | impute_numeric | scale | model class | "
            "predicts new rows |",
            "|---|---|---|---|---|---|---|"]
    for spec in registry.ALGORITHMS.values():
        name = _code(spec.name) + "".join(f" ({_code(a)})" for a in spec.aliases)
        rows.append(f"| {name} | {spec.task} | {spec.encode} | "
                    f"{'yes' if spec.impute_numeric else 'no'} | {spec.scale} | "
                    f"{_code(spec.model_class().__name__)} | "
                    f"{'yes' if spec.predicts_new_rows else 'no'} |")
    return "\n".join(rows) + "\n"


def blocks() -> dict[str, str]:
    """Every generated block of the document, by key, in document order."""
    from ensemblekit.preprocessing_model import PreprocessorModel

    out = {"algorithms": algorithms_table(),
           "state PreprocessorModel": (f"Model class: {_code(_class_path(PreprocessorModel))}.\n\n"
                                       + state_table(PreprocessorModel))}
    for cls, specs in model_classes():
        out[f"state {cls.__name__}"] = _entries_line(cls, specs) + "\n" + state_table(cls)
    return out


# --------------------------------------------------------------------------- the document
def document_blocks(text: str) -> dict[str, str]:
    """The generated blocks a document holds, by key (in document order)."""
    found: dict[str, str] = {}
    for match in _BLOCK.finditer(text):
        key = match.group("key")
        if key in found:
            raise ValueError(f"block {key!r} appears twice in the document")
        found[key] = match.group("body")
    return found


def updated(text: str) -> str:
    """``text`` with the body of every generated block it holds replaced by the current one.

    Raises
    ------
    KeyError
        The document holds a block the generator does not make (or lacks one it makes).
    """
    current = blocks()
    have = document_blocks(text)
    if set(have) != set(current):
        raise KeyError(f"the document's blocks differ from the generated ones: missing "
                       f"{sorted(set(current) - set(have))}, unknown {sorted(set(have) - set(current))}")
    return _BLOCK.sub(lambda m: BEGIN.format(key=m.group("key")) + "\n" + current[m.group("key")]
                      + END, text)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--update"]:
        DOC.write_text(updated(DOC.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    for key, body in blocks().items():
        print(BEGIN.format(key=key))
        print(body, end="")
        print(END)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
