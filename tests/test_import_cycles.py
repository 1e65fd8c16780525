"""No import cycle among the product's modules: a module's top-level imports, package by package,
form a graph without a loop (a package's face may import its parts; a part never imports its face)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("loaders", "analytics", "ui", "transcript_lens", "lens_notebook", "storegen")


def _modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
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


def import_loop(root: Path, packages: tuple[str, ...]) -> list[str] | None:
    """A loop of top-level imports among the modules of `packages` under `root` (its first module
    again at its end), or None when there is none."""
    known = _modules(root, packages)
    graph = {name: _imported(ast.parse(path.read_text()), known) - {name} for name, path in known.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        return list(exc.args[1])
    return None


def test_no_module_imports_itself_round_a_loop():
    loop = import_loop(ROOT, PACKAGES)
    assert loop is None, f"an import cycle: {' -> '.join(loop)}"


def test_the_check_finds_a_loop_through_a_face_and_ignores_imports_in_functions(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("import pkg.b\n\ndef later():\n    import pkg.c\n")
    (package / "b.py").write_text("from pkg.sub import part\n")
    (package / "c.py").write_text("import pkg.a\n")  # only `a`'s function imports it: no loop
    (package / "sub" / "__init__.py").write_text("from pkg.sub.part import NAME\n")
    (package / "sub" / "part.py").write_text("NAME = 1\n")
    assert import_loop(tmp_path, ("pkg",)) is None

    # A part that imports its package's face, which imports the part: a loop.
    (package / "sub" / "part.py").write_text("from pkg.sub import NAME\n")
    loop = import_loop(tmp_path, ("pkg",))
    assert loop is not None and set(loop) == {"pkg.sub", "pkg.sub.part"}

    # Round three modules.
    (package / "sub" / "part.py").write_text("from pkg import a\n")
    loop = import_loop(tmp_path, ("pkg",))
    assert loop is not None and {"pkg.a", "pkg.b", "pkg.sub.part"} <= set(loop)
