"""The gallery (scripts/gallery.py, `make gallery`) covers every page of the app: each page of
ui.nav.PAGES as it opens, on both databases, and its states name only pages that exist."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ui import nav

ROOT = Path(__file__).resolve().parents[2]


def _gallery():
    spec = importlib.util.spec_from_file_location("gallery", ROOT / "scripts" / "gallery.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gallery", module)  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def test_every_page_is_shot_as_it_opens_on_both_databases():
    gallery = _gallery()
    opened = {(s.page, db) for s in gallery.shots() if s.name == "page" and not s.params and not s.act
              for db in s.databases}
    assert opened == {(p.stem, db) for p in nav.PAGES for db in ("demo", "large")}


def test_the_states_are_of_real_pages_with_known_actions_and_unique_names():
    gallery = _gallery()
    shots = gallery.shots()
    stems = {p.stem for p in nav.PAGES}
    assert set(gallery.EXTRA) <= stems
    assert all(s.act is None or s.act in gallery.ACTIONS for s in shots)
    names = [(s.page, s.name) for s in shots]
    assert len(names) == len(set(names))
    # the kinds of state the gallery is for: a selected thread, a dialog, an empty result, an error
    titles = " ".join(s.title for s in shots)
    assert all(kind in titles for kind in ("selected thread", "dialog", "empty result", "(an error)"))


def test_the_search_shots_name_a_field_the_page_searches():
    # (an unknown `in=` falls back to the message text: the shot would show another search)
    from ui.models.search import IN_LABELS

    fields = [s.params["in"] for s in _gallery().shots() if s.page == "search" and "in" in s.params]
    assert fields and set(fields) <= set(IN_LABELS)
