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
