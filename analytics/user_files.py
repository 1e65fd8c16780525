"""One bounded reader for every file a user names (a config, a lexicon, a price table, a JSON
Lines import): a regular file of at most a stated size, or one `BadRequest` naming the file and
the limit — never a read that does not end.

A path can name anything: `/dev/zero` never ends (read whole, it took 5 GB and a MemoryError),
a FIFO waits for a writer that may never come, a folder is no file. So the file is opened
without waiting (`O_NONBLOCK`: a FIFO opens at once, then is refused), checked with `fstat` on
that very descriptor (no swap between check and read), and read to at most its limit + 1
bytes whatever `fstat` says (a file in /proc says size 0, a file may grow while read).

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "a.toml"; _ = p.write_text("x = 1\\n")
>>> read_user_text(p, "redaction config")
'x = 1\\n'
>>> read_user_text("/dev/zero", "redaction config")
Traceback (most recent call last):
...
analytics.errors.BadRequest: /dev/zero: the redaction config is not a regular file (a device, FIFO, socket or folder)
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from analytics.errors import BadRequest

#: The most bytes read from a config file (TOML or JSON: a redaction config, a lexicon, a price table).
MAX_CONFIG_BYTES = 4 * 1024 * 1024
#: The most bytes read from an imported or uploaded JSON Lines file (annotations, an observed log).
MAX_JSONL_BYTES = 100 * 1024 * 1024


def _mib(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB"


def open_user_file(path: str | os.PathLike, what: str, max_bytes: int) -> BinaryIO:
    """`path` opened for reading in binary, once it is known to be a regular file of at most
    `max_bytes` by its size; `BadRequest` naming `path`, `what` and the limit otherwise. OS
    errors (no such file, no permission) pass through for the caller to word. The caller reads
    through `bounded_read` or caps its own reading (a file may grow)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadRequest(f"{os.fspath(path)}: the {what} is not a regular file (a device, FIFO, socket or folder)")
        if st.st_size > max_bytes:
            raise BadRequest(f"{os.fspath(path)}: the {what} is over {_mib(max_bytes)}, the most read from one")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def bounded_read(fh: BinaryIO, path: str | os.PathLike, what: str, max_bytes: int) -> bytes:
    """All of `fh`, or `BadRequest` once more than `max_bytes` come."""
    data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise BadRequest(f"{os.fspath(path)}: the {what} is over {_mib(max_bytes)}, the most read from one")
    return data


def read_user_bytes(path: str | os.PathLike, what: str, max_bytes: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` (see the module doc)."""
    with open_user_file(path, what, max_bytes) as fh:
        return bounded_read(fh, path, what, max_bytes)


def read_user_text(path: str | os.PathLike, what: str, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of the regular file at `path`, at most `max_bytes` (`UnicodeDecodeError` passes through)."""
    return read_user_bytes(path, what, max_bytes).decode("utf-8")
