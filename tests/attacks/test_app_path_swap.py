"""A link swapped in between the load panel's path check and the loader's open (docs/security.md,
"The served app"): the check passes a store inside the source folder, then the store's name is
replaced by a symbolic link to a store outside. The swap is made by a hook at that exact point,
no timing involved. Made after the path is pinned, the loader still reads the store that was
checked; made before, the load is refused in one line, as the link would have been. Either way
nothing of the outside store is read or shown (tests/analytics/test_source_pin.py swaps each
part of the path at the pin's own steps)."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest
from langchain_core.messages import HumanMessage

import transcript_lens
from analytics.deployment import Deployment
from tests.attacks.stores import store_with_messages
from tests.attacks.test_app_paths import _try, deployed  # noqa: F401 - (a fixture)
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
