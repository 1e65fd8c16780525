"""Container formats an export comes in: gzip, zip, and pg_dump's archive formats."""

from __future__ import annotations

import gzip
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import IO

from loaders.records import SourceError

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
GZIP_MAGIC = b"\x1f\x8b"
PGDMP_MAGIC = b"PGDMP"


def is_zip(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        return fh.read(4) in ZIP_MAGIC


def open_maybe_gzip(path: Path) -> IO[bytes]:
    """The file's bytes, through gzip when it starts with the gzip magic."""
    fh = path.open("rb")
    if fh.read(2) == GZIP_MAGIC:
        fh.close()
        return gzip.open(path, "rb")
    fh.seek(0)
    return fh


def read_head(path: Path, size: int = 1 << 16) -> bytes:
    """The first `size` bytes of the (maybe gzip-compressed) file; b"" when its data is unreadable."""
    with path.open("rb") as fh:
        magic = fh.read(2)
    try:
        with (gzip.open(path, "rb") if magic == GZIP_MAGIC else path.open("rb")) as fh:
            return fh.read(size)
    except (OSError, EOFError):
        return b""


def gunzipped(fh: IO[bytes]) -> IO[bytes]:
    """A zip member, read through gzip when it starts with the gzip magic."""
    head = fh.read(2)
    fh.seek(0)
    return gzip.GzipFile(fileobj=fh) if head == GZIP_MAGIC else fh


def uncompressed(file: Path, tmp: str, where: str) -> Path:
    """A gzip file decompressed into the stage folder (DuckDB sizes its gzip buffers by
    the longest line allowed, which a blob row needs to be huge); others as they are."""
    with file.open("rb") as fh:
        if fh.read(2) != GZIP_MAGIC:
            return file
    target = Path(tempfile.mkdtemp(dir=tmp)) / file.name.removesuffix(".gz")
    try:
        with gzip.open(file, "rb") as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise SourceError(f"{where}: unreadable gzip data ({exc})") from None
    return target


def archive_kind(path: Path) -> str | None:
    """'custom', 'directory' or 'tar' for a pg_dump archive pg_restore must read; else None."""
    if path.is_dir():
        toc = path / "toc.dat"
        if toc.is_file():
            with toc.open("rb") as fh:
                if fh.read(5) == PGDMP_MAGIC:
                    return "directory"
        return None
    if not path.is_file():
        return None
    with path.open("rb") as fh:
        head = fh.read(5)
    if head == PGDMP_MAGIC:
        return "custom"
    try:
        if tarfile.is_tarfile(path):
            with tarfile.open(path) as tf:
                first = tf.next()
                if first is not None and first.name == "toc.dat":
                    return "tar"
    except (tarfile.TarError, OSError, EOFError):
        return None
    return None
