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
