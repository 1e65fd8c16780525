"""`erase --remove-exports` never follows a link swapped into an export's path (docs/privacy.md, "Exports").

The export log records the absolute path an export was written to. Whoever can write in a
shared export folder could, after the export was written, move the folder away and put a link
to another folder in its place: removing the recorded path would follow that link and delete a
same-named file there, which holds nothing of the erased thread, while the export itself stays.
Now each export is removed from `/` down without following a link; one met on the way is named
and the file is not removed, and the erasure is not proven. A FIFO swapped in for an export
after the scan listed it is named, not read (a grep opening it would wait for a writer).
"""

from __future__ import annotations

import os
import threading

import pytest

from analytics.erasure.scan import Needles, Place, scan
from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.erasure_stores import GONE, build_erasure_store, files_holding

UNRELATED = "an unrelated file that merely shares the export's name\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_erasure_store(tmp_path_factory.mktemp("erasure-export-links") / "store.sqlite")


def test_a_folder_swapped_for_a_link_is_not_followed(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    folder = tmp_path / "shared" / "exports"
    folder.mkdir(parents=True)
    run_cli(["report", "transcript", "--db", str(db), "--thread", GONE, "--out", str(folder / "r.csv")],
            tmp_path).succeeded()
    # Someone with write access to the shared folder swaps the export's folder for a link.
    moved = folder.with_name("exports.moved")
    folder.rename(moved)
    victim = tmp_path / "elsewhere"
    victim.mkdir()
    (victim / "r.csv").write_text(UNRELATED)
    folder.symlink_to(victim, target_is_directory=True)

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR", "--remove-exports"], tmp_path, env=env)
    out.no_traceback().within_budget()
    assert (victim / "r.csv").read_text() == UNRELATED  # not deleted through the link
    assert out.returncode == 1 and "scan: 1 of" in out.stdout
    (line,) = [line for line in out.stderr.splitlines() if "still holds" in line]
    assert str(folder / "r.csv") in line and "not removed" in line and "exports is not a folder" in line
    assert "exports removed" not in out.stdout
    assert files_holding(tmp_path) == [moved / "r.csv"]  # (moved away: no record of the tool names it)


def test_a_link_as_the_export_itself_is_removed_not_what_it_names(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    export = tmp_path / "r.csv"
    run_cli(["report", "transcript", "--db", str(db), "--thread", GONE, "--out", str(export)], tmp_path).succeeded()
    export.unlink()
    victim = tmp_path / "victim.csv"
    victim.write_text(UNRELATED)
    export.symlink_to(victim)

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR", "--remove-exports"], tmp_path, env=env)
    out.succeeded().within_budget()
    assert "scan: 0 of" in out.stdout and "exports removed 1" in out.stdout
    assert not export.is_symlink() and victim.read_text() == UNRELATED


def test_a_fifo_swapped_in_for_an_export_is_named_not_read(tmp_path):
    """A FIFO put where an export was, after the scan listed its files: grep opening it would wait
    for a writer for ever. It is opened without blocking, named in the scan line and not read."""
    export = tmp_path / "r.csv"
    os.mkfifo(export)
    kept = tmp_path / "kept.csv"
    kept.write_text("QUINCE-48213-PLOVER\n")
    done: list = []
    worker = threading.Thread(target=lambda: done.append(
        scan([Place(export, "export"), Place(kept, "export")], Needles(("QUINCE-48213-PLOVER",), ()))), daemon=True)
    worker.start()
    worker.join(120)  # (a bound on a hang, not a measure: the scan takes milliseconds)
    if worker.is_alive():  # release each reader that opens it, so no grep or thread is left behind
        while worker.is_alive():
            try:
                os.close(os.open(export, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # (no reader at this moment)
                pass
            worker.join(0.1)
        pytest.fail("the scan waited on the FIFO")
    (found,) = done
    assert [(p.path, why) for p, why in found.holding] == [(export, "not read: a FIFO"), (kept, "message text, as bytes")]
    assert found.lines()[1] == f"  still holds erased text (not read: a FIFO): {export} [export]"


def test_a_folder_made_at_an_export_path_is_named_not_emptied(store, tmp_path, env):  # noqa: F811
    """An export is one file. A folder made at its path since (holding a copy of the checkpoint
    store and notes with the erased text) is not the export: never descended into, nothing in it
    read or deleted; the scan names it and the erasure fails."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    export = tmp_path / "ex" / "b.csv"
    export.parent.mkdir()
    run_cli(["report", "transcript", "--db", str(db), "--thread", GONE, "--out", str(export)], tmp_path).succeeded()
    export.unlink()
    export.mkdir()
    (export / "app-checkpoints.sqlite").write_bytes(store.read_bytes())
    (export / "notes.txt").write_text("notes: QUINCE-48213-PLOVER\n")

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR", "--remove-exports"], tmp_path, env=env)
    out.no_traceback().within_budget()
    assert sorted(p.name for p in export.iterdir()) == ["app-checkpoints.sqlite", "notes.txt"]
    assert (export / "app-checkpoints.sqlite").read_bytes() == store.read_bytes()
    assert out.returncode == 1 and "exports removed" not in out.stdout
    held = [line for line in out.stdout.splitlines() + out.stderr.splitlines() if "still holds" in line]
    assert [line for line in held if str(export) in line] == [
        f"  still holds erased text (not the export file: a folder; not removed: a folder stands there): {export} [export]"]
    assert not [line for line in held if str(export) + os.sep in line]  # (nothing inside it is named)


def test_a_link_to_a_folder_at_an_export_path_is_not_followed(store, tmp_path, env):  # noqa: F811
    """A link to a folder where an export was: nothing it names is read or named; the link itself,
    at the recorded path, is what `--remove-exports` removes."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    export = tmp_path / "b.csv"
    run_cli(["report", "transcript", "--db", str(db), "--thread", GONE, "--out", str(export)], tmp_path).succeeded()
    export.unlink()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("notes: QUINCE-48213-PLOVER\n")
    export.symlink_to(outside, target_is_directory=True)

    kept = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR"], tmp_path, env=env)
    kept.no_traceback()
    assert kept.returncode == 1 and str(outside) not in kept.stdout + kept.stderr
    assert f"  still holds erased text (not the export file: a link): {export} [export]" in kept.stderr.splitlines()

    removed = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR", "--remove-exports"],
                     tmp_path, env=env)
    removed.no_traceback()
    assert not os.path.lexists(export) and (outside / "notes.txt").read_text() == "notes: QUINCE-48213-PLOVER\n"
    assert str(outside) not in removed.stdout + removed.stderr
