"""Every browser the tests, benches and scripts open is Debian's Chromium (bench/debian_chromium.py):
a launch without its options would fall back on a Chromium Playwright downloads into
~/.cache/ms-playwright, another browser than the one the project is measured and tested on."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from debian_chromium import CHROMIUM, launch_options  # noqa: E402

#: Playwright's calls that start a browser.
LAUNCHES = {"launch", "launch_persistent_context", "launch_server"}
FOLDERS = ("tests", "bench", "scripts")


def _launches(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in LAUNCHES and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr in ("chromium", "firefox", "webkit")]


def _with_debian_options(call: ast.Call) -> bool:
    """`<playwright>.chromium.launch(**launch_options(…))` and no argument of its own beside them."""
    if call.func.value.attr != "chromium" or call.args or len(call.keywords) != 1 or call.keywords[0].arg is not None:
        return False
    value = call.keywords[0].value
    name = getattr(getattr(value, "func", None), "id", None) or getattr(getattr(value, "func", None), "attr", None)
    return isinstance(value, ast.Call) and name == "launch_options"


def launches_elsewhere(root: Path) -> list[str]:
    """Each browser launch under `root`'s FOLDERS that does not open Debian's Chromium, as `path:line`."""
    bad = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            for call in _launches(ast.parse(path.read_text(encoding="utf-8"))):
                if not _with_debian_options(call):
                    bad.append(f"{path.relative_to(root)}:{call.lineno}")
    return bad


def test_every_browser_launch_opens_debians_chromium():
    assert launch_options()["executable_path"] == CHROMIUM == "/usr/bin/chromium"
    assert launches_elsewhere(ROOT) == []


def test_a_launch_of_playwrights_own_browser_is_found(tmp_path):
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "x.py").write_text(
        "b = p.chromium.launch(headless=True)\n"
        "c = p.chromium.launch(**launch_options(), executable_path='/root/.cache/ms-playwright/chrome')\n"
        "d = await pw.firefox.launch(**launch_options())\n"
        "e = p.chromium.launch(**launch_options('--headless=new'))\n")
    assert launches_elsewhere(tmp_path) == ["bench/x.py:1", "bench/x.py:2", "bench/x.py:3"]
