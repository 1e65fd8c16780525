"""A link swapped in between the load panel's path check and the loader's open (docs/security.md,
"The served app"): the check passes a store inside the source folder, then the store's name is
replaced by a symbolic link to a store outside. The swap is made by a hook at that exact point,
no timing involved. Made after the path is pinned, the loader still reads the store that was
checked; made before, the load is refused in one line, as the link would have been. Either way
nothing of the outside store is read or shown (tests/analytics/test_source_pin.py swaps each
part of the path at the pin's own steps)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import duckdb
import pytest
from langchain_core.messages import HumanMessage
from streamlit.testing.v1 import AppTest

import transcript_lens
from analytics.deployment import Deployment
from tests.attacks.stores import store_with_messages
from tests.attacks.test_app_paths import _try, deployed  # noqa: F401 - (a fixture)
from tests.pages.conftest import APP, TIMEOUT, open_page
from tests.pages.conftest import _v2_router  # noqa: F401 (the AppTests' router fixture)

OUTSIDE_SECRET = "SWAPPED-IN-SECRET-4471"


@pytest.fixture()
def stores(deployed, tmp_path) -> tuple[Path, Path]:  # noqa: F811
    """(a store inside the source folder, a store outside it holding OUTSIDE_SECRET)."""
    inside = deployed / "store.sqlite"
    store_with_messages(inside, [HumanMessage("the checked store")], "checked")
    outside = tmp_path / "elsewhere" / "other.sqlite"
    outside.parent.mkdir()
    store_with_messages(outside, [HumanMessage(OUTSIDE_SECRET)], "outside")
    return inside, outside


def _swap(name: Path, target: Path) -> None:
    """Replace `name` by a symbolic link to `target` in one rename (as an attacker would)."""
    link = name.with_name(".swap")
    link.symlink_to(target)
    os.replace(link, name)


def test_a_link_swapped_in_after_the_check_is_never_followed(stores, monkeypatch):
    inside, outside = stores
    loaded: list[Path] = []
    real_load = transcript_lens.load

    def swap_then_load(spec, db, **kw):
        _swap(inside, outside)  # the check is done; the loader has not opened the source yet
        loaded.append(Path(db))
        return real_load(spec, db, **kw)

    monkeypatch.setattr(transcript_lens, "load", swap_then_load)
    assert _try(str(inside)) == []
    [db] = loaded
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT thread_id, content FROM messages").fetchall() == [("checked", "the checked store")]


def test_a_link_swapped_in_before_the_pin_is_refused(stores, monkeypatch, tmp_path):
    inside, outside = stores
    real_check = Deployment.path_refusal

    def check_then_swap(self, path, max_bytes=None):
        answer = real_check(self, path, max_bytes)
        if Path(path) == inside:
            _swap(inside, outside)  # right after the check said yes
        return answer

    monkeypatch.setattr(Deployment, "path_refusal", check_then_swap)
    [error] = _try(str(inside))
    assert error == f"{inside} is outside the folders this app may read. The open database is unchanged.", error
    assert not list((tmp_path / "cache" / "loads").glob("*.duckdb")), "a load ran"
    assert not list((tmp_path / "cache").glob("pins/*")), "a pin was left"


# --- a database opened from the load panel, and Compare's price table --------------------------
#
# Neither is given to the loader: the app reads the file itself, the database on every view. A
# database a visitor named is read from the file reached from its source folder down, no link
# followed (`ui.database._held`), so a link swapped in after the check, or after the database was
# opened, is refused; the price table is read the same way (`Deployment.read_file`).


@pytest.fixture()
def databases(deployed, tmp_path) -> tuple[Path, Path]:  # noqa: F811
    """(a Transcript Lens database inside the source folder, one outside holding OUTSIDE_SECRET)."""
    out = []
    for folder, name, text in ((deployed, "checked", "the checked database"),
                               (tmp_path / "elsewhere-db", "outside", OUTSIDE_SECRET)):
        folder.mkdir(exist_ok=True)
        store = tmp_path / f"{name}.sqlite"
        store_with_messages(store, [HumanMessage(text)], "checked")  # (one thread id: a view of it shows either)
        transcript_lens.load(str(store), folder / f"{name}.duckdb")
        out.append(folder / f"{name}.duckdb")
    return out[0], out[1]


def _shown(at) -> str:
    """Every text and table the page shows, as one string."""
    parts = [str(e.value) for kind in ("markdown", "caption", "error", "info", "warning", "success", "text", "code")
             for e in getattr(at, kind)]
    parts += [df.value.to_csv() for df in at.dataframe]
    return "\n".join(parts)


def _open_from_panel(spec: str) -> AppTest:
    at = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "overview")
    at.text_input(key="load.spec").set_value(spec).run()
    at.button(key="load.go").click().run()
    assert not at.exception, at.exception
    return at


def test_an_opened_database_swapped_for_a_link_is_never_read(databases):
    inside, outside = databases
    at = _open_from_panel(str(inside))
    assert not at.error, [e.value for e in at.error]
    name = at.query_params["db"]  # (the name links use for it: the views below keep it open)
    at = open_page(at, "transcript", thread="checked", db=name)
    assert "the checked database" in _shown(at)
    _swap(inside, outside)  # the database is open; every later view reads it again
    at = open_page(at, "transcript", thread="checked", db=name)
    assert OUTSIDE_SECRET not in _shown(at)
    assert "outside the folders this app may read" in _shown(at)
    for page, params in (("search", {"q": "SWAPPED"}), ("overview", {})):
        assert OUTSIDE_SECRET not in _shown(open_page(at, page, db=name, **params)), page


def test_a_database_swapped_for_a_link_after_its_pin_is_refused(databases, monkeypatch):
    inside, outside = databases
    real_pinned = Deployment.pinned

    @contextlib.contextmanager
    def pin_then_swap(self, path, into):
        with real_pinned(self, path, into) as pin:
            if Path(path) == inside:
                _swap(inside, outside)  # the pin is made; the app has not opened the file yet
            yield pin

    monkeypatch.setattr(Deployment, "pinned", pin_then_swap)
    at = _open_from_panel(str(inside))
    assert any("outside the folders this app may read" in e.value for e in at.error), [e.value for e in at.error]
    assert OUTSIDE_SECRET not in _shown(at)
    opened = inside.parent.parent / "cache" / "opened.json"  # (the names links may use)
    assert not opened.exists() or str(outside) not in opened.read_text()
    at = open_page(at, "transcript", thread="checked", **({"db": at.query_params["db"]} if "db" in at.query_params else {}))
    assert OUTSIDE_SECRET not in _shown(at)


def test_a_price_table_swapped_for_a_link_after_the_check_is_refused(deployed, tmp_path, monkeypatch):  # noqa: F811
    prices, outside = deployed / "prices.toml", tmp_path / "elsewhere-prices" / "prices.toml"
    outside.parent.mkdir()
    prices.write_text('[models."m"]\ninput = 1\noutput = 2\n', encoding="utf-8")
    outside.write_text(f'[models."{OUTSIDE_SECRET}"]\ninput = "x"\n', encoding="utf-8")
    real_check = Deployment.path_refusal

    def check_then_swap(self, path, max_bytes=None):
        answer = real_check(self, path, max_bytes)
        if Path(path) == prices and not prices.is_symlink():
            _swap(prices, outside)  # right after the check said yes
        return answer

    monkeypatch.setattr(Deployment, "path_refusal", check_then_swap)
    at = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "compare")
    at.text_input(key="compare.prices_path").input(str(prices)).run()
    assert not at.exception, at.exception
    assert any("outside the folders this app may read" in e.value for e in at.error), [e.value for e in at.error]
    assert OUTSIDE_SECRET not in _shown(at)
