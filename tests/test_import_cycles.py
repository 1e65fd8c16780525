"""No import cycle among the product's modules: a module's top-level imports, package by package,
form a graph without a loop (a package's face may import its parts; a part never imports its face)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("loaders", "analytics", "ui", "transcript_lens", "lens_notebook")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(tree: ast.Module, known: dict[str, Path]) -> set[str]:
    """The product modules `tree` imports at its top level (inside `if`/`try` too; not in functions)."""

    def owner(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    names: set[str | None] = set()
    for statement in tree.body:
        for node in ast.walk(statement) if isinstance(statement, (ast.If, ast.Try)) else (statement,):
            if isinstance(node, ast.Import):
                names |= {owner(a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names |= {owner(f"{node.module}.{a.name}") if f"{node.module}.{a.name}" in known else owner(node.module)
                          for a in node.names}
    return {n for n in names if n}


def test_no_module_imports_itself_round_a_loop():
    known = _modules()
    graph = {name: _imported(ast.parse(path.read_text()), known) - {name} for name, path in known.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise AssertionError(f"an import cycle: {' -> '.join(exc.args[1])}") from None
