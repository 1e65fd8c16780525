"""Paths a visitor types, and files a visitor uploads, used as weapons (docs/security.md, "The served app").

Through the real command line (`attack`): AES key files that are a FIFO, `/dev/zero`, a symlink to
`/etc/passwd`, a big file; an observed JSONL nested 100,000 deep. Through the app's load panel
(AppTest, a deployment with a source folder): a symlink in the folder to `/etc/passwd` typed as the
source or the key file, a folder export whose member is such a link, a FIFO in the folder, and a key
file outside the folder that exists and one that does not (the same answer for both).
Each: refused in one line (or, for the JSONL, a line error), no traceback, nothing of the target
shown, memory within the budget, nothing written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.attacks.harness import attack
from tests.pages.conftest import APP, TIMEOUT, _v2_router, open_page  # noqa: F401 (the AppTests' router fixture)

PASSWD_FIRST = Path("/etc/passwd").read_text().splitlines()[0]


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _key_files(folder: Path) -> dict[str, Path]:
    folder.mkdir(exist_ok=True)
    link = folder / "passwd.key"
    link.symlink_to("/etc/passwd")
    big = folder / "big.key"
    big.write_bytes(b"k" * 1_000_000)
    return {"fifo": _fifo(folder / "fifo.key"), "zero": Path("/dev/zero"), "passwd": link, "big": big}


@pytest.mark.parametrize("what", ["fifo", "zero", "passwd", "big"])
def test_a_key_file_that_is_no_key_file_is_refused_unread(sqlite_store, tmp_path, what):
    key = _key_files(tmp_path / "keys")[what]
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(sqlite_store.path), "--db", str(db), "--aes-key-file", str(key)], tmp_path, timeout=120)
    out.refused("AES key file").within_budget().never_prints(PASSWD_FIRST, "k" * 32).wrote_only([])
    assert not db.exists()


def test_an_observed_log_nested_100k_deep_is_a_line_error(sqlite_store, tmp_path):
    db = tmp_path / "lens.duckdb"
    attack(["load", str(sqlite_store.path), "--db", str(db)], tmp_path).succeeded()
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"thread_id": "t", "speaker": "user", "content": "ok", "position": 0}\n'
                    '{"thread_id": "t", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    found = tmp_path / "found.csv"
    out = attack(["report", "resume", "--db", str(db), "--observed", str(deep), "--out", str(found)], tmp_path)
    out.succeeded().within_budget().wrote_only([found, db])  # (and the export log beside the database)
    import pandas as pd

    rows = pd.read_csv(found)
    bad = rows[rows["kind"] == "malformed"]
    assert bad["line"].tolist() == [2] and "nested deeper than 200 levels" in bad["detail"].item()


def test_an_annotations_import_nested_100k_deep_is_refused_naming_the_line(sqlite_store, tmp_path):
    db = tmp_path / "lens.duckdb"
    attack(["load", str(sqlite_store.path), "--db", str(db)], tmp_path).succeeded()
    deep = tmp_path / "labels.jsonl"
    deep.write_text('{"thread_id": "t", "note": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    out = attack(["annotations", "import", str(deep), "--db", str(db), "--author", "me"], tmp_path)
    out.no_traceback().within_budget()  # (the import lists its bad lines under one heading: not one line)
    assert out.returncode == 2 and f"{deep}:1: not JSON (nested deeper than 200 levels)" in out.stderr.splitlines()


# --- the app's load panel -----------------------------------------------------------------------


@pytest.fixture()
def deployed(sqlite_store, tmp_path, monkeypatch):
    """The app on a database of its own, with `tmp_path/root` as its only source folder."""
    import transcript_lens

    db = tmp_path / "lens.duckdb"
    transcript_lens.load(sqlite_store.path, db)
    for name in ("TRANSCRIPT_LENS_REDACT", "TRANSCRIPT_LENS_TENANTS", "TRANSCRIPT_LENS_CONFIG",
                 "TRANSCRIPT_LENS_READ_ONLY", "TRANSCRIPT_LENS_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(db))
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TRANSCRIPT_LENS_SOURCE_ROOTS", str(root))
    return root


def _try(spec: str, key_file: str | None = None) -> list[str]:
    """Type `spec` (and a key file) into the load panel and press Load; what it shows as errors."""
    at = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "overview")
    at.text_input(key="load.spec").set_value(spec).run()
    if key_file is not None:
        at.text_input(key="load.aes_key_file").set_value(key_file).run()
    at.button(key="load.go").click().run()
    assert not at.exception, at.exception
    shown = [e.value for e in at.error] + [s.value for s in at.success]
    assert not any(PASSWD_FIRST in text for text in shown), shown
    return [e.value for e in at.error]


def test_a_symlink_in_the_folder_to_a_file_outside_is_refused(deployed):
    (deployed / "passwd.sqlite").symlink_to("/etc/passwd")
    [error] = _try(str(deployed / "passwd.sqlite"))
    assert "outside the folders this app may read" in error


def test_a_folder_export_whose_member_links_outside_is_refused_unread(deployed):
    export = deployed / "export"
    export.mkdir()
    for name in ("checkpoints.csv", "checkpoint_writes.csv"):
        (export / name).symlink_to("/etc/passwd")
    [error] = _try(str(export))
    assert "a link out of the folders this app may read" in error


def test_a_fifo_in_the_folder_is_refused_as_source_and_as_key(deployed, sqlite_store):
    fifo = _fifo(deployed / "pipe.sqlite")
    [error] = _try(str(fifo))
    assert "is not a regular file or folder" in error
    store = deployed / "store.sqlite"
    store.write_bytes(sqlite_store.path.read_bytes())
    [error] = _try(str(store), key_file=str(fifo))
    assert error.startswith("AES key file:") and "not a regular file" in error


def test_a_key_file_is_checked_against_the_folders_and_tells_nothing_of_outside(deployed, sqlite_store, tmp_path):
    store = deployed / "store.sqlite"
    store.write_bytes(sqlite_store.path.read_bytes())
    there, missing = Path("/etc/passwd"), tmp_path / "no-such.key"
    answers = [_try(str(store), key_file=str(p)) for p in (there, missing)]
    assert [a[0].replace(str(p), "P") for a, p in zip(answers, (there, missing))] == [
        f"AES key file: P is outside the folders this app may read ({deployed}). The open database is unchanged."] * 2
    (deployed / "zero.key").symlink_to("/dev/zero")
    [error] = _try(str(store), key_file=str(deployed / "zero.key"))
    assert "outside the folders" in error
    (deployed / "big.key").write_bytes(b"k" * 4096)
    [error] = _try(str(store), key_file=str(deployed / "big.key"))
    assert "is over 256 bytes" in error


def test_a_typed_path_with_an_equals_sign_tells_nothing_of_outside(deployed, tmp_path):
    """A spec holding `=` was taken for a libpq DSN unless a file of that name existed: two answers,
    an existence test of any server path. Now the same refusal whether it exists or not."""
    there, missing = tmp_path / "out=side.sqlite", tmp_path / "no=such.sqlite"
    there.write_bytes(b"x")
    answers = [_try(str(p))[0].replace(str(p), "P") for p in (there, missing)]
    assert answers[0] == answers[1] == (f"P is outside the folders this app may read ({deployed}). "
                                        "The open database is unchanged."), answers
