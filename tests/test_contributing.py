"""CONTRIBUTING.md stays true: every file its map and recipes name exists, and the page recipe
names every place the existing pages are wired through."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "CONTRIBUTING.md").read_text()
PATH = re.compile(r"`((?:loaders|analytics|transcript_lens|ui|pages|tests|docs|scripts|fuzz|bench)/[\w/.<>-]*)`")


def _named() -> set[str]:
    return set(PATH.findall(GUIDE))


def test_every_file_the_guide_names_exists():
    named = {p for p in _named() if "<" not in p}
    assert len(named) > 30
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"CONTRIBUTING.md names files that are not there: {missing}"


def test_the_page_recipe_names_where_every_existing_page_is_wired():
    recipe = GUIDE.split("### A new page", 1)[1].split("###", 1)[0]
    for page in sorted((ROOT / "pages").glob("*.py")):
        text = (ROOT / "ui" / "nav.py").read_text()
        assert f'"pages/{page.name}"' in text, page  # every page is in ui/nav.py, which the recipe names
    assert "`ui/nav.py`" in recipe and "`pages/<page>.py`" in recipe and "`ui/models/<page>.py`" in recipe


def test_the_source_recipe_names_where_every_built_in_kind_is_registered():
    recipe = GUIDE.split("### A new source kind", 1)[1].split("###", 1)[0]
    assert "`loaders/registry.py`" in recipe and "`loaders/catalog.py`" in recipe
    text = (ROOT / "docs" / "sources.md").read_text()
    # In a fresh interpreter: a test in this process may have registered a third-party kind.
    listed = subprocess.run([sys.executable, "-c", "from loaders import registry; print(*registry.sources(), sep='\\n')"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert "sqlite" in listed
    for kind in listed:
        assert f"`{kind}`" in text, f"docs/sources.md does not describe the {kind} kind"


def _registers_a_report(path: Path) -> bool:
    """Whether a module calls `register_report` when imported (outside its functions)."""
    import ast

    def calls(node: ast.AST) -> bool:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        if isinstance(node, ast.Call):
            f = node.func
            if (f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)) == "register_report":
                return True
        return any(calls(child) for child in ast.iter_child_nodes(node))

    return any(calls(statement) for statement in ast.parse(path.read_text()).body)


def test_the_report_recipe_names_where_a_report_module_is_registered():
    recipe = GUIDE.split("### A new report", 1)[1].split("###", 1)[0]
    assert "`REGISTRARS`" in recipe and "`analytics/__init__.py`" in recipe
    assert "`analytics/reporting/kinds.py`" in recipe and _registers_a_report(ROOT / "analytics/reporting/kinds.py")
    registering = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "analytics").rglob("*.py")
                   if _registers_a_report(p)}
    assert "analytics.reporting.kinds" in registering and len(registering) > 5
    # In a fresh interpreter: what `register_all()` imports (the CLI's and the report lookup's way).
    loaded = subprocess.run([sys.executable, "-c", "import sys, analytics; analytics.register_all(); print(*sys.modules, sep='\\n')"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    missing = sorted(registering - set(loaded))
    assert not missing, f"modules that register a report but are not reached from analytics.REGISTRARS: {missing}"


def _loader_modules_imported_by(package: str) -> set[str]:
    """The `loaders` modules the files of `package` import (at the top or inside a function)."""
    import ast

    found = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "loaders":
                    found |= {f"loaders.{a.name}" for a in node.names}
                elif node.module.startswith("loaders."):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("loaders.")}
    return found


def test_the_map_names_every_loader_module_analytics_imports():
    row = next(line for line in GUIDE.splitlines() if line.startswith("| `analytics/` |"))
    named = set(re.findall(r"`(loaders\.[\w.]+)`", row.rsplit("|", 2)[-2]))
    assert named == _loader_modules_imported_by("analytics")
