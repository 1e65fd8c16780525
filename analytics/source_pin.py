"""A path inside the source folders, pinned for a load: what the loader reads is what was checked.

`Deployment.path_refusal` checks a path by name; a loader opening it by name again later would
follow a symbolic link swapped in meanwhile (any file the server can read). So the checked path
is opened once more from its source folder down, one component at a time, never following a
link (`O_NOFOLLOW` on each, relative to the folder opened before it), and what it names — a
file with its SQLite `-wal` beside it, or a folder with everything in it — is hard-linked into a
private folder (copied where the file system refuses a link: another device, or a file the
server does not own). The loader is given that private path: nobody else can change what it names.
A file the app reads itself (a database opened from the panel, Compare's price table) is read
from what the same walk holds (`held`, `read_beneath`), never by name again.

>>> import tempfile; root = Path(tempfile.mkdtemp()); _ = (root / "a.sqlite").write_text("x")
>>> with pinned(root / "a.sqlite", (root,), Path(tempfile.mkdtemp())) as p: (p.read_text(), p.name)
('x', 'a.sqlite')
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loaders.scratch import process_gone

_PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
#: Files a SQLite store keeps beside it that its reader opens (the write-ahead log).
_BESIDE = ("-wal",)
_PIN = re.compile(r"^pin-(\d+)-")  # a pin folder, named after the server process that made it


class PinRefused(ValueError):
    """The path could not be pinned as checked (a link or a special file met on the way)."""


@contextmanager
def pinned(path: str | os.PathLike, roots: tuple[Path, ...], into: Path) -> Iterator[Path]:
    """The private pin of `path` (resolved inside one of `roots`) under `into`, removed on exit."""
    real, root = _beneath(path, roots)
    into.mkdir(parents=True, exist_ok=True)
    for stale in into.iterdir():  # pins a killed server left (a copy can be as big as its store)
        if (m := _PIN.match(stale.name)) and process_gone(int(m.group(1))):
            shutil.rmtree(stale, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=f"pin-{os.getpid()}-", dir=into))  # (mode 0700: the server's alone)
    try:
        if real == root:
            fd = _open_beneath(root, (), path)
            try:
                _pin_folder(fd, folder / real.name, path)
            finally:
                os.close(fd)
        else:
            parent = _open_beneath(root, real.parent.relative_to(root).parts, path)
            try:
                _pin_entry(parent, real.name, folder / real.name, path, beside=_BESIDE)
            finally:
                os.close(parent)
        yield folder / real.name
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def held(path: str | os.PathLike, roots: tuple[Path, ...]) -> Iterator[int]:
    """An `O_PATH` descriptor of the regular file `path` names (resolved inside one of `roots`),
    reached from its source folder down without following a link: what it holds is the file a
    check by name saw, whatever is swapped in after. `PinRefused` for a link, a folder or a
    special file on the way (never opened for reading: a FIFO would hang).

    >>> import tempfile; root = Path(tempfile.mkdtemp()); _ = (root / "p.toml").write_text("x")
    >>> with held(root / "p.toml", (root,)) as fd: open(f"/proc/self/fd/{fd}").read()
    'x'
    """
    real, root = _beneath(path, roots)
    if real == root:
        raise PinRefused(f"{path}: not a regular file")
    parent = _open_beneath(root, real.parent.relative_to(root).parts, path)
    try:
        fd = os.open(real.name, _PATH_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        raise PinRefused(f"{path}: no such file") from None
    finally:
        os.close(parent)
    try:
        _refuse_unless_regular(os.fstat(fd).st_mode, real.name, path)
        yield fd
    finally:
        os.close(fd)


def read_beneath(path: str | os.PathLike, roots: tuple[Path, ...], max_bytes: int) -> bytes:
    """The bytes of the file `path` names, read as `held` reaches it; `PinRefused` past `max_bytes`."""
    with held(path, roots) as fd, open(f"/proc/self/fd/{fd}", "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise PinRefused(f"{path} is over {max_bytes:,} bytes")
    return data


def unlink_unfollowed(path: str | os.PathLike) -> None:
    """Remove the file at the absolute `path`, reached from `/` down without following a link
    (each folder opened `O_PATH | O_NOFOLLOW` relative to the one before, the name unlinked in
    the last): a folder on the way swapped for a link since the path was recorded is never
    followed, and `PinRefused` names it; a link as the last component is removed itself, never
    what it names. A file that is already gone is no error.

    >>> import tempfile; root = Path(tempfile.mkdtemp()); (root / "real").mkdir(); (root / "via").symlink_to(root / "real")
    >>> _ = (root / "real" / "r.csv").write_text("x")
    >>> try: unlink_unfollowed(root / "via" / "r.csv")
    ... except PinRefused as exc: print(str(exc).split(": ", 1)[1])
    via is not a folder (a link swapped in?)
    >>> unlink_unfollowed(root / "real" / "r.csv"); (root / "real" / "r.csv").exists()
    False
    """
    path = Path(path)
    if not path.is_absolute() or any(part in (".", "..") for part in path.parts):
        raise PinRefused(f"{path}: not an absolute path without . or ..")
    try:
        parent = _open_beneath(Path(path.anchor), path.parent.parts[1:], path)
    except FileNotFoundError:
        return
    try:
        os.unlink(path.name, dir_fd=parent)
    except FileNotFoundError:
        pass
    finally:
        os.close(parent)


def _beneath(path: str | os.PathLike, roots: tuple[Path, ...]) -> tuple[Path, Path]:
    """(`path` resolved, the source folder it is in); `PinRefused` when it is in none."""
    real = Path(os.path.realpath(Path(path).expanduser()))
    root = next((r for r in roots if real == r or r in real.parents), None)
    if root is None:
        raise PinRefused(f"{path} is outside the folders this app may read")
    return real, root


def _refuse_unless_regular(mode: int, name: str, shown) -> None:
    if not stat.S_ISREG(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file or folder"
        raise PinRefused(f"{shown}: {name} is {kind}")


def _open_beneath(root: Path, parts: tuple[str, ...], shown) -> int:
    """An `O_PATH` descriptor of the folder `root/parts…`, no component followed if it is a link."""
    fd = os.open(root, _PATH_FLAGS | os.O_DIRECTORY)
    for part in parts:
        try:
            nxt = os.open(part, _PATH_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = nxt
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            os.close(fd)
            raise PinRefused(f"{shown}: {part} is not a folder (a link swapped in?)")
    return fd


def _pin_entry(parent: int, name: str, dest: Path, shown, beside: tuple[str, ...] = ()) -> None:
    """Pin `name` in the folder `parent` (and its `beside` files when there) as `dest`."""
    try:
        fd = os.open(name, _PATH_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        raise PinRefused(f"{shown}: no such file") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            _pin_folder(fd, dest, shown)
            return
        _refuse_unless_regular(mode, name, shown)
        pin_file(fd, dest)
        for suffix in beside:
            if _exists(parent, name + suffix):
                _pin_entry(parent, name + suffix, dest.with_name(dest.name + suffix), shown)
    finally:
        os.close(fd)


def _pin_folder(fd: int, dest: Path, shown) -> None:
    dest.mkdir(mode=0o700)
    reopened = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        names = os.listdir(reopened)
    finally:
        os.close(reopened)
    for name in names:
        _pin_entry(fd, name, dest / name, shown)


def pin_file(fd: int, dest: Path) -> None:
    """A hard link to the opened file at `dest`, else a copy of it (read through the descriptor)."""
    held = f"/proc/self/fd/{fd}"  # (the file itself, whatever its name now leads to)
    folder = os.open(dest.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:  # (`linkat` with AT_SYMLINK_FOLLOW, which a `dst_dir_fd` makes `os.link` call: `link` would not follow)
        os.link(held, dest.name, dst_dir_fd=folder, follow_symlinks=True)
    except OSError:
        with open(held, "rb") as src, open(dest, "xb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    finally:
        os.close(folder)


def _exists(parent: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True
