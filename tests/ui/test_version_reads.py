"""A reload replacing the database while the app still reads its old version: the path a data call
was handed stays openable until that call ends (`ui.cache.reading`).

During a reload a prewarm thread of the old version and a page of the new one run side by side in
the app: were each switch to close the other version's connection and remove its link, a call
between being handed its path and connecting to it would fail ("no Transcript Lens database at …").
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from analytics.db import connect
from ui import cache, database


def _replace(db: Path) -> None:
    """What a load does to the file: a new file renamed over it (a new inode)."""
    tmp = db.with_name("next.duckdb")
    shutil.copyfile(db, tmp)
    os.replace(tmp, db)


def test_a_call_on_the_replaced_version_still_opens_its_path_while_the_new_one_is_read(loaded, tmp_path):
    db = Path(shutil.copyfile(loaded, tmp_path / "lens.duckdb"))
    old_ref = database.ref(db)
    with cache.reading(old_ref) as old:
        _replace(db)
        new_ref = database.ref(db)
        assert new_ref.version != old_ref.version
        with cache.reading(new_ref) as new:
            assert new != old
            connect(old).close()  # the old call connects only now, after the new version was opened
        connect(old).close()
        with cache.reading(new_ref) as new:
            with cache.reading(old_ref) as again:  # a prewarm of the old version, still running
                assert again == old
            connect(new).close()  # nor is the new version's path pulled from under its call
        connect(old).close()
    with cache.reading(new_ref) as new:
        connect(new).close()
    assert not Path(old).exists()  # nothing reads the old version any more: its link is gone


def test_a_version_whose_link_was_removed_under_the_app_is_opened_on_a_new_one(loaded, tmp_path):
    """A temp cleaner or a user clearing the cache folder removes the link of a version the app
    holds: the next call opens the same version again instead of failing on the missing path."""
    db = Path(shutil.copyfile(loaded, tmp_path / "lens.duckdb"))
    ref = database.ref(db)
    with cache.reading(ref) as first:
        connect(first).close()
    shutil.rmtree(Path(first).parent)  # the cache folder's `open/`, with the link in it
    with cache.reading(ref) as again:
        assert Path(again).exists()
        connect(again).close()
