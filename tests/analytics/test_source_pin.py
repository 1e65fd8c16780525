"""`analytics.source_pin`: a path pinned for a load is what was checked. Each swap is made by a
hook at the step it targets (no timing): a link swapped in for the file, for a folder on the way,
or for a member of a folder export is refused, never followed; what is pinned is the file itself
(a hard link where the file system allows one) with its `-wal`, and the pin is removed after."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analytics import source_pin
from analytics.source_pin import PinRefused, pinned


@pytest.fixture()
def root(tmp_path) -> Path:
    root = tmp_path / "root"
    (root / "team").mkdir(parents=True)
    (root / "team" / "a.sqlite").write_text("main")
    (root / "team" / "a.sqlite-wal").write_text("log")
    (root / "team" / "export").mkdir()
    (root / "team" / "export" / "checkpoints.csv").write_text("rows")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "a.sqlite").write_text("SECRET")
    (tmp_path / "outside" / "checkpoints.csv").write_text("SECRET")
    return root


def _swap(name: Path, target: Path) -> None:
    """`name` replaced by a link to `target` (a folder moved aside first: a rename cannot replace it)."""
    if name.is_dir():
        name.rename(name.with_name(name.name + ".moved"))
    link = name.with_name(".swap")
    link.symlink_to(target)
    os.replace(link, name)


def test_a_file_is_pinned_as_itself_with_its_wal_and_the_pin_goes(root, tmp_path):
    into = tmp_path / "pins"
    with pinned(root / "team" / "a.sqlite", (root,), into) as pin:
        assert (pin.read_text(), pin.with_name("a.sqlite-wal").read_text()) == ("main", "log")
        assert pin.stat().st_ino == (root / "team" / "a.sqlite").stat().st_ino  # a hard link, not a copy
    assert list(into.iterdir()) == []


@pytest.mark.parametrize("swapped", ["the file", "a folder on the way", "a member of a folder"])
def test_a_link_swapped_in_before_the_walk_is_refused(root, tmp_path, monkeypatch, swapped):
    outside = tmp_path / "outside"
    path, name, target = {
        "the file": (root / "team" / "a.sqlite", root / "team" / "a.sqlite", outside / "a.sqlite"),
        "a folder on the way": (root / "team" / "a.sqlite", root / "team", outside),
        "a member of a folder": (root / "team" / "export", root / "team" / "export" / "checkpoints.csv",
                                 outside / "checkpoints.csv"),
    }[swapped]
    walk = source_pin._open_beneath

    def swap_then_walk(*args):
        _swap(name, target)  # after the path was resolved inside the folder, before it is opened
        return walk(*args)

    monkeypatch.setattr(source_pin, "_open_beneath", swap_then_walk)
    with pytest.raises(PinRefused, match="a symbolic link|not a folder"):
        with pinned(path, (root,), tmp_path / "pins"):
            pass
    assert list((tmp_path / "pins").iterdir()) == []


def test_a_path_outside_the_folders_is_refused(root, tmp_path):
    with pytest.raises(PinRefused, match="outside the folders"):
        with pinned(tmp_path / "outside" / "a.sqlite", (root,), tmp_path / "pins"):
            pass


def test_the_pins_a_killed_server_left_are_removed(root, tmp_path):
    into = tmp_path / "pins"
    (into / "pin-999999999-x" / "a.sqlite").mkdir(parents=True)  # (no process has that id)
    (into / "pin-1-y").mkdir()  # (init: running)
    with pinned(root / "team" / "a.sqlite", (root,), into):
        pass
    assert [p.name for p in into.iterdir()] == ["pin-1-y"]
