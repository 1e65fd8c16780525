"""Links and special files inside folders the tool reads or erases: a COPY CSV export folder, a
mongodump folder, a Parquet dataset given to `transcript-lens erase`. A symbolic link (out of
the folder, or a loop) is refused in one line naming it, or left alone, never followed; a FIFO
is never opened (a read would hang); a hard link is the file itself and is read as one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.attacks.harness import attack
from tests.erasure_stores import GONE, build_erasure_store, files_holding

OUTSIDE_SECRET = "OUTSIDE-FIRST-LINE-7731"
_HEADERS = {
    "checkpoints": "thread_id,checkpoint_ns,checkpoint_id,parent_checkpoint_id,type,checkpoint,metadata",
    "checkpoint_blobs": "thread_id,checkpoint_ns,channel,version,type,blob",
    "checkpoint_writes": "thread_id,checkpoint_ns,checkpoint_id,task_id,idx,channel,type,blob,task_path",
}


def _export(folder: Path, but: str = "") -> Path:
    folder.mkdir()
    for table, header in _HEADERS.items():
        if table != but:
            (folder / f"{table}.csv").write_text(header + "\n")
    return folder


def _outside(tmp_path: Path, text: str) -> Path:
    secret = tmp_path / "elsewhere" / "server-file.txt"
    secret.parent.mkdir()
    secret.write_text(text)
    return secret


@pytest.mark.parametrize("how", ["out-of-folder", "loop", "to-a-fifo"])
def test_a_link_in_a_copy_csv_folder_is_refused_unread(tmp_path, how):
    folder = _export(tmp_path / "export", but="checkpoints")
    link = folder / "checkpoints.csv"
    if how == "out-of-folder":
        os.symlink(_outside(tmp_path, f"{_HEADERS['checkpoints']}\n{OUTSIDE_SECRET}\n"), link)
    elif how == "loop":
        os.symlink(link.name, link)
    else:
        os.mkfifo(tmp_path / "pipe")
        os.symlink(tmp_path / "pipe", link)
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(folder), "--db", str(db)], tmp_path, timeout=120)
    out.refused("checkpoints.csv is a symbolic link").within_budget().wrote_only([db]).never_prints(OUTSIDE_SECRET)
    assert not db.exists()


def test_a_hard_link_in_a_copy_csv_folder_is_read_as_the_file_it_is(tmp_path):
    folder = _export(tmp_path / "export", but="checkpoints")
    os.link(_outside(tmp_path, _HEADERS["checkpoints"] + "\n"), folder / "checkpoints.csv")
    db = tmp_path / "out.duckdb"
    attack(["load", str(folder), "--db", str(db)], tmp_path).succeeded().within_budget().wrote_only([db])


def test_a_link_in_a_mongodump_folder_is_refused_and_a_folder_loop_ends(tmp_path):
    dump = tmp_path / "dump" / "agents"
    dump.mkdir(parents=True)
    os.symlink(_outside(tmp_path, OUTSIDE_SECRET), dump / "checkpoints.bson")
    (dump / "checkpoint_writes.bson").write_bytes(b"")
    os.symlink(dump.parent, dump.parent / "loop")  # a database folder that is the root again
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(dump.parent), "--db", str(db)], tmp_path, timeout=120)
    out.refused("checkpoints.bson is a symbolic link").within_budget().wrote_only([db]).never_prints(OUTSIDE_SECRET)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_erasure_store(tmp_path_factory.mktemp("links-store") / "store.sqlite")


def test_erase_on_a_dataset_holding_links_and_a_fifo_follows_none(store, tmp_path):
    """A link out of the dataset to a file holding the erased text is neither scanned nor
    touched (it is not the dataset's), loops end, and the FIFO is never opened."""
    env = {"TRANSCRIPT_LENS_CACHE": str(tmp_path / "cache")}
    ds = tmp_path / "lens"
    attack(["load", str(store), "--db", str(ds), "--format", "parquet"], tmp_path, env=env).succeeded()
    outside = _outside(tmp_path, "My locker code is QUINCE-48213-PLOVER")
    os.symlink(outside, ds / "notes.txt")
    os.symlink("loop", ds / "loop")
    os.symlink(".", ds / "again")
    os.mkfifo(ds / "pipe")
    out = attack(["erase", "--db", str(ds), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=env,
                 timeout=300)
    out.succeeded().within_budget()
    assert "scan: 0 of" in out.stdout and str(outside) not in out.stdout + out.stderr
    # The server's own file, untouched (the link to it holds it only through the link).
    assert [p for p in files_holding(tmp_path) if not p.is_symlink()] == [outside]
    assert (ds / "notes.txt").is_symlink() and (ds / "pipe").exists()
