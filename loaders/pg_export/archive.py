r"""Container formats an export comes in: gzip, zip, and pg_dump's archive formats, read
within the budgets of docs/security.md ("Bounded memory and disk").

Every text export reader (a plain pg_dump, a mysqldump, a COPY CSV header) reads its
lines through `capped_lines`, and every compressed stream through `Capped`:

- a line is at most `MAX_LINE` bytes (`MAX_LINE_MB`): a longer one is refused with one
  line naming the limit, the file and the line number, after reading no more of it
  than the limit;
- decompressed data is at most `inflate_limit(compressed size)`: `INFLATE_RATIO` times
  the compressed size, at least `INFLATE_FLOOR` and never more than `INFLATE_CEILING`;
  past it the read is refused, before anything beyond it is kept or written. A gzip
  stream is also held to the ratio as it goes: past `RATIO_CHECK_FROM` (128 MiB), what
  was decompressed so far may not exceed `INFLATE_RATIO` times the compressed bytes read
  so far (a bomb is refused there, not after its rows up to the whole limit were parsed
  and staged: minutes for a 5 MB gzip of tiny rows);
- a zip member is refused up front when its declared size is over that limit (the zip
  reader never yields more than the declared size), and bzip2 and LZMA members are
  decompressed here a chunk at a time (the standard zip reader inflates a whole
  compressed chunk of them at once: a 4 KB bzip2 chunk can hold gigabytes).

>>> import io
>>> list(capped_lines(io.BytesIO(b"a\nbb\n"), "f", max_line=4))
[b'a\n', b'bb\n']
>>> list(capped_lines(io.BytesIO(b"a\nbbbbbb\n"), "f", max_line=4))
Traceback (most recent call last):
...
loaders.records.SourceError: f: line 2 is longer than 4 bytes, the longest line this reader takes
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import shutil
import stat
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from loaders.records import SourceError

MAX_LINE = 64 << 20  # one line of a text export: a dump's row (a blob as hex text) or a header
# Dumps and CSV of real stores (hex or base64 of msgpack and JSON) compress 3 to 30 times;
# a bomb, about 1000 (deflate) to millions (bzip2). Reading is linear in the decompressed
# size: the cap bounds the time a small file can cost as well as the disk it can fill.
INFLATE_RATIO = 100  # decompressed bytes allowed per compressed byte
INFLATE_FLOOR = 64 << 20  # allowed whatever the ratio (a small file of real rows compresses well)
INFLATE_CEILING = 64 << 30  # never more, whatever the compressed size
# From here on a gzip stream is held to INFLATE_RATIO as it is read (`Capped`): the floor and one
# longest line past it, so a line reader meets its own limit first (an endless line says so).
RATIO_CHECK_FROM = INFLATE_FLOOR + MAX_LINE
MAX_ZIP_ENTRIES = 10_000  # entries of a zip export (each one an object in memory once listed)

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
GZIP_MAGIC = b"\x1f\x8b"
PGDMP_MAGIC = b"PGDMP"


def zip_entries(path: Path) -> int | None:
    """How many entries a zip's end-of-central-directory record declares (ZIP64's when it
    defers to it); None when no record is found (the zip reader then says what is wrong)."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        fh.seek(max(0, size - (1 << 16) - 22))
        tail = fh.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) < at + 22:
            return None
        count = struct.unpack("<H", tail[at + 10:at + 12])[0]
        locator = tail[at - 20:at] if at >= 20 else b""
        if count == 0xFFFF and locator[:4] == b"PK\x06\x07":
            fh.seek(struct.unpack("<Q", locator[8:16])[0])
            record = fh.read(40)
            if record[:4] == b"PK\x06\x06" and len(record) == 40:
                count = struct.unpack("<Q", record[32:40])[0]
    return count


def open_zip(path: Path, where: str) -> zipfile.ZipFile:
    """A zip file, refused (`SourceError`) when it declares more than `MAX_ZIP_ENTRIES` entries:
    the zip reader holds an object per entry (a 100 MB zip can list a million)."""
    count = zip_entries(path)
    if count is not None and count > MAX_ZIP_ENTRIES:
        raise SourceError(f"{where}: a zip of {count:,} entries, over the {MAX_ZIP_ENTRIES:,}-entry limit "
                          "(an export holds a few CSV files)")
    return zipfile.ZipFile(path)


def is_zip(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        return fh.read(4) in ZIP_MAGIC


def _size(n: int) -> str:
    """`n` bytes in the largest unit that holds it whole, else in MiB to a tenth with the exact count.

    >>> _size(64 << 20), _size(123954300)
    ('64 MiB', '118.2 MiB (123,954,300 bytes)')
    """
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n / (1 << 20):.1f} MiB ({n:,} bytes)" if n >= 1 << 20 else f"{n} bytes"


def inflate_limit(compressed: int) -> int:
    """The most decompressed bytes taken from `compressed` bytes of compressed data.

    >>> inflate_limit(1000) == INFLATE_FLOOR, inflate_limit(10 << 20) == 1000 << 20
    (True, True)
    """
    return min(INFLATE_CEILING, max(INFLATE_FLOOR, INFLATE_RATIO * compressed))


def too_inflated(where: str, limit: int) -> SourceError:
    return SourceError(
        f"{where}: decompresses to more than {_size(limit)}, the decompressed size limit for its compressed size "
        f"({INFLATE_RATIO} times it, at least {_size(INFLATE_FLOOR)}, at most {_size(INFLATE_CEILING)}; a compression bomb?)"
    )


def inflating_too_fast(where: str, out: int, consumed: int) -> SourceError:
    return SourceError(
        f"{where}: decompresses to more than {INFLATE_RATIO} times its compressed size ({_size(out)} from the first "
        f"{_size(consumed)}), past the {_size(RATIO_CHECK_FROM)} allowed whatever the ratio; a compression bomb?"
    )


class Capped(io.RawIOBase):
    """A decompressing stream that refuses (`SourceError`) to yield more than `limit` bytes in all,
    and, given `consumed` (the compressed bytes read so far), more than `INFLATE_RATIO` times them
    once past `RATIO_CHECK_FROM`."""

    def __init__(self, fh: IO[bytes], limit: int, where: str, consumed: Callable[[], int] | None = None) -> None:
        self._fh, self._left, self.limit, self.where = fh, limit, limit, where
        self._consumed, self._out = consumed, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = len(buf)
        data = self._fh.read(min(n, self._left + 1))  # (damaged data raises as the reader's own errors)
        if len(data) > self._left:
            raise too_inflated(self.where, self.limit)
        self._left -= len(data)
        self._out += len(data)
        if self._consumed is not None and self._out > RATIO_CHECK_FROM:
            consumed = self._consumed()
            if self._out > INFLATE_RATIO * consumed:
                raise inflating_too_fast(self.where, self._out, consumed)
        buf[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._fh.close()
        super().close()


def regular_file(path: Path, where: str) -> Path:
    """`path`, a file of an export folder, when it is a regular file and not a link; else a
    `SourceError` naming it. A link is never followed: it could lead out of the folder (to any
    file the server can read), and a loop or a FIFO would hang the read. (A hard link is the
    file itself: read like any other.)

    >>> import tempfile, os
    >>> d = Path(tempfile.mkdtemp()); os.symlink("elsewhere", d / "checkpoints.csv")
    >>> regular_file(d / "checkpoints.csv", "export")
    Traceback (most recent call last):
    ...
    loaders.records.SourceError: export: checkpoints.csv is a symbolic link; the files of an export folder are read only when they are not links (copy the file in)
    """
    try:
        st = path.lstat()
    except FileNotFoundError:
        raise SourceError(f"{where}: {path.name}: no such file") from None
    if stat.S_ISLNK(st.st_mode):
        raise SourceError(f"{where}: {path.name} is a symbolic link; the files of an export folder are read only "
                          "when they are not links (copy the file in)")
    if not stat.S_ISREG(st.st_mode):
        raise SourceError(f"{where}: {path.name} is not a regular file (a FIFO, device, socket or folder)")
    return path


def open_maybe_gzip(path: Path, where: str | None = None) -> IO[bytes]:
    """The file's bytes, through gzip (capped: `inflate_limit`) when it starts with the gzip magic;
    a refusal names `where` (default: the path)."""
    fh = path.open("rb")
    if fh.read(2) == GZIP_MAGIC:
        fh.close()
        gz = gzip.open(path, "rb")
        return io.BufferedReader(Capped(gz, inflate_limit(path.stat().st_size), where or str(path), gz.fileobj.tell),
                                 1 << 16)
    fh.seek(0)
    return fh


def capped_lines(fh: IO[bytes], where: str, max_line: int = MAX_LINE) -> Iterator[bytes]:
    """The lines of `fh` (ends kept), each at most `max_line` bytes: a longer one is a `SourceError`
    naming the limit and the line, raised having read at most `max_line` + 1 bytes of it."""
    line_no = 0
    while True:
        line = fh.readline(max_line + 1)
        if not line:
            return
        line_no += 1
        if len(line) > max_line:
            raise SourceError(f"{where}: line {line_no} is longer than {_size(max_line)}, the longest line this reader takes")
        yield line


class _Inflating(io.RawIOBase):
    """A bzip2 or LZMA zip member's data decompressed a chunk at a time (at most what is asked)."""

    def __init__(self, path: Path, info: zipfile.ZipInfo) -> None:
        self._fh = path.open("rb")
        self._fh.seek(info.header_offset)
        head = self._fh.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            self._fh.close()
            raise zipfile.BadZipFile(f"bad local header of {info.filename}")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        self._fh.seek(info.header_offset + 30 + name_len + extra_len)
        self._left_in = info.compress_size
        self._left_out = self._size = info.file_size
        self._name = info.filename
        self._crc, self._expected = 0, info.CRC
        self._lzma = info.compress_type == zipfile.ZIP_LZMA
        self._dec = None if self._lzma else bz2.BZ2Decompressor()

    def readable(self) -> bool:
        return True

    def _input(self, n: int) -> bytes:
        data = self._fh.read(min(n, self._left_in))
        self._left_in -= len(data)
        return data

    def readinto(self, buf) -> int:
        if self._dec is None:  # zip's LZMA: a version, the properties' size, the properties, raw LZMA1
            head = self._input(4)
            props = self._input(struct.unpack("<H", head[2:4])[0]) if len(head) == 4 else b""
            self._dec = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[
                lzma._decode_filter_properties(lzma.FILTER_LZMA1, props)])
        n = min(len(buf), self._left_out)
        out = b""
        while n and not out and not self._dec.eof:
            data = self._input(1 << 14) if self._dec.needs_input else b""
            if not data and self._dec.needs_input:
                break
            out = self._dec.decompress(data, n)
        self._left_out -= len(out)
        if not self._left_out and not self._dec.eof and (out or n):
            raise zipfile.BadZipFile(f"{self._name}: inflates past its declared size of {self._size} bytes")
        self._crc = zlib.crc32(out, self._crc)
        if not out and self._crc != self._expected:
            raise zipfile.BadZipFile(f"{self._name}: bad CRC-32")
        buf[: len(out)] = out
        return len(out)

    def close(self) -> None:
        self._fh.close()
        super().close()


def open_member(path: Path, zf: zipfile.ZipFile, name: str) -> IO[bytes]:
    """A zip member's bytes; its declared size checked against `inflate_limit` of its
    compressed size, bzip2 and LZMA decompressed a chunk at a time."""
    info = zf.getinfo(name)
    limit = inflate_limit(info.compress_size)
    if info.file_size > limit:
        raise too_inflated(f"{path}: {name}", limit)
    if info.flag_bits & 1:  # (zipfile would ask for a password, or fail deep in a read)
        raise SourceError(f"{path}: {name} is encrypted; unpack it with its password first")
    if info.compress_type not in _ZIP_METHODS:  # (zstd, AES, deflate64 …: zipfile has no decoder)
        raise SourceError(f"{path}: {name} is compressed with zip method {info.compress_type}, which this reader "
                          "does not take (stored, deflate, bzip2 or LZMA); unpack it first")
    if info.compress_type in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        return io.BufferedReader(_Inflating(path, info), 1 << 16)
    return zf.open(info)


_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


def read_head(path: Path, size: int = 1 << 16) -> bytes:
    """The first `size` bytes of the (maybe gzip-compressed) file; b"" when its data is unreadable."""
    with path.open("rb") as fh:
        magic = fh.read(2)
    try:
        with (gzip.open(path, "rb") if magic == GZIP_MAGIC else path.open("rb")) as fh:
            return fh.read(size)
    except (OSError, EOFError):
        return b""


def gunzipped(fh: IO[bytes], compressed: int, where: str) -> IO[bytes]:
    """A zip member (of `compressed` bytes in the zip), read through gzip (capped) when it starts with the gzip magic."""
    if fh.peek(2)[:2] != GZIP_MAGIC:
        return fh
    return io.BufferedReader(Capped(gzip.GzipFile(fileobj=fh), inflate_limit(compressed), where, fh.tell), 1 << 16)


def uncompressed(file: Path, tmp: str, where: str) -> Path:
    """A gzip file decompressed into the stage folder (DuckDB sizes its gzip buffers by
    the longest line allowed, which a blob row needs to be huge); others as they are."""
    with file.open("rb") as fh:
        if fh.read(2) != GZIP_MAGIC:
            return file
    target = Path(tempfile.mkdtemp(dir=tmp)) / file.name.removesuffix(".gz")
    try:
        with open_maybe_gzip(file, where) as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except SourceError:
        target.unlink(missing_ok=True)
        raise
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
    return "tar" if _tar_starts_with_toc(path) else None


def _tar_starts_with_toc(path: Path) -> bool:
    """Whether the file's first 512-byte block is a tar header of a regular file named toc.dat, as
    pg_dump -Ft writes it (pg_restore reads only uncompressed tars). Only that block is read:
    `tarfile` itself would decompress a `.tar.*` and read a GNU long-name or PAX header whole,
    whatever size it declares (2 KB of bzip2 can declare gigabytes)."""
    with path.open("rb") as fh:
        block = fh.read(tarfile.BLOCKSIZE)
    try:
        info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return info.name == "toc.dat" and info.type in (tarfile.REGTYPE, tarfile.AREGTYPE)
