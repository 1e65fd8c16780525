"""The layering rule, checked: pages → ui → analytics → DuckDB, and page models stay testable without Streamlit."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted(p.stem for p in (ROOT / "ui" / "models").glob("*.py") if p.stem != "__init__")


def test_the_page_models_import_neither_streamlit_nor_plotly():
    code = (
        "import importlib, sys\n"
        f"for name in {MODELS!r}: importlib.import_module('ui.models.' + name)\n"
        "print(sorted(m for m in ('streamlit', 'plotly') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert {"overview", "conversations", "transcript", "resume_qa"} <= set(MODELS)


def test_pages_import_streamlit_and_ui_only():
    for path in sorted((ROOT / "pages").glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {
            (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
            for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        assert imported <= {"streamlit", "ui"}, (path.name, imported)


def test_analytics_holds_no_page_models():
    assert not (ROOT / "analytics" / "views.py").exists()
    for path in (ROOT / "analytics").rglob("*.py"):  # its subpackages (the review workspace) too
        text = path.read_text()
        assert "import streamlit" not in text and "from ui" not in text and "import ui" not in text, path


def _imported_packages(path: Path) -> set[str]:
    """The top-level packages a module imports, at the top or inside a function."""
    tree = ast.parse(path.read_text())
    return {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "level", 0) == 0
        for alias in node.names
    }


def test_the_composition_root_imports_no_app_module():
    """transcript_lens/ wires loaders and analytics; the app (ui, pages) sits on top of it, so
    the root importing ui would make a cycle (ui.database imports transcript_lens)."""
    for path in sorted((ROOT / "transcript_lens").rglob("*.py")):
        imported = _imported_packages(path)
        assert not imported & {"ui", "pages", "streamlit"}, (path.relative_to(ROOT), imported & {"ui", "pages"})


def test_the_query_layer_and_the_loader_import_neither_the_root_nor_the_app():
    for package, banned in (("analytics", {"ui", "pages", "transcript_lens", "streamlit"}),
                            ("loaders", {"ui", "pages", "analytics", "streamlit"})):
        for path in sorted((ROOT / package).rglob("*.py")):
            assert not _imported_packages(path) & banned, (path.relative_to(ROOT), _imported_packages(path) & banned)
