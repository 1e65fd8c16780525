"""An erasure replaces the database file; a hard link of the old file that the erasure does not
know (an app's version under another cache folder than its own, a link made by hand) keeps the
erased text whole. The scan cannot find it, so the erasure says how many such names the old file
has left and exits 1: a clean scan is no proof then (docs/privacy.md, step 7)."""

from __future__ import annotations

import os

from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.attacks.test_erasure_reason import GONE, SECRETS, store  # noqa: F401
from tests.erasure_stores import files_holding


def _app_version(cache, db) -> os.PathLike:
    """A link of `db` where the app keeps its versions in `cache` (`ui.database.version_path`)."""
    st = os.stat(db)
    link = cache / "open" / f"{st.st_ino}-{st.st_mtime_ns}-{st.st_size}.duckdb"
    link.parent.mkdir(parents=True, exist_ok=True)
    os.link(db, link)
    return link


def test_links_of_the_replaced_file_outside_the_app_cache_make_the_erasure_fail(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    known = _app_version(tmp_path / "cache", db)  # the erasure's own app cache ($TRANSCRIPT_LENS_CACHE)
    other = _app_version(tmp_path / "cache2", db)  # an app run with another cache folder
    by_hand = tmp_path / "backup.duckdb"
    os.link(db, by_hand)

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12"], tmp_path, env=env)
    out.no_traceback().within_budget().never_prints(*SECRETS)
    assert out.returncode == 1, out.stdout + out.stderr
    assert ("scan: 0 of" in out.stdout
            and "and 2 other names of the replaced database file (not found, not read) still hold it" in out.stdout)
    assert "under 2 hard link(s) the scan does not know" in out.stderr
    assert not known.exists()
    assert sorted(files_holding(tmp_path, SECRETS)) == sorted([other, by_hand])  # (what the line says)

    other.unlink()
    by_hand.unlink()
    again = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12"], tmp_path, env=env)
    again.succeeded()
    assert "other name" not in again.stdout + again.stderr
