"""A load's private temporary folders, and the removal of those a killed load left.

A load stages Arrow parts, SQLite snapshot copies and staged exports in the
system temporary folder; it removes them when it ends, however it ends, except
when it is killed outright (SIGKILL, the OOM killer, a power loss). Each folder
is named after the process that made it, so the next load can tell which ones
no running process owns and delete them: a killed load of a large store would
otherwise leave as much as the store itself behind.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "transcript-lens-"
_NAME = re.compile(rf"^{re.escape(PREFIX)}[a-z]+-(\d+)-")


def scratch_dir(kind: str) -> str:
    """A new private folder `transcript-lens-<kind>-<pid>-<random>` in the system temp folder.

    >>> Path(scratch_dir("parts")).name.startswith(f"transcript-lens-parts-{os.getpid()}-")  # doctest: +SKIP
    True
    """
    if not kind.isalpha() or not kind.islower():
        raise ValueError(f"scratch folder kind must be lowercase letters, not {kind!r}")
    return tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-")


def process_gone(pid: int) -> bool:
    """True when no process has this id (a zombie, or one we may not signal, counts as running)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive but not ours (EPERM), or unknowable
    return False


def remove_stale_scratch() -> list[Path]:
    """Delete the scratch folders whose process no longer runs; returns what was removed.

    Folders of running processes (concurrent loads, their workers) and anything
    not named by `scratch_dir` are left alone.
    """
    removed = []
    for p in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        m = _NAME.match(p.name)
        if m is None or not p.is_dir() or p.is_symlink() or not process_gone(int(m.group(1))):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed
