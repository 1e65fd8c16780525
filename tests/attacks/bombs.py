"""Compressed bombs and long lines, crafted at test time in well under a second each.

Each bomb is a small file that decompresses to `size` bytes or more, built from one
compressed piece repeated (what a compressor itself would need seconds to produce):

- gzip: gzip members concatenated (a gzip reader reads them as one stream);
- raw deflate (a zip member): one piece ended by a full flush, repeated, then a final
  empty block (each piece starts with an empty window, so any copy decodes alone);
- bzip2: one compressed block of zeros (about 46 MB) repeated bit for bit, with the
  stream's combined CRC recomputed.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import zipfile
import zlib
from pathlib import Path

MB = 1 << 20
_PIECE = 64 * MB
_BLOCK_MAGIC = format(0x314159265359, "048b")
_END_MAGIC = format(0x177245385090, "048b")


@functools.cache
def _gzip_piece(fill: bytes) -> bytes:
    return gzip.compress(fill * (_PIECE // len(fill)), 6, mtime=0)


def gzip_bomb(head: bytes, size: int, fill: bytes = b"x") -> bytes:
    """gzip of `head` then at least `size` bytes of `fill` repeated (b"x": one endless line)."""
    return gzip.compress(head, mtime=0) + _gzip_piece(fill) * -(-size // _PIECE)


@functools.cache
def _deflate_piece() -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(b"\0" * _PIECE) + c.flush(zlib.Z_FULL_FLUSH)


@functools.cache
def _zero_crc(pieces: int) -> int:
    crc, chunk = 0, b"\0" * _PIECE
    for _ in range(pieces):
        crc = zlib.crc32(chunk, crc)
    return crc


def _bits(data: bytes) -> str:
    return bin(int.from_bytes(data, "big"))[2:].zfill(len(data) * 8)


def _bz2_blocks(data: bytes) -> list[tuple[str, int]]:
    """The blocks of `bz2.compress(data)` as bit strings with their CRCs."""
    bits = _bits(bz2.compress(data, 9))
    starts = [i for i in range(32, len(bits) - 47) if bits.startswith(_BLOCK_MAGIC, i)]
    ends = starts[1:] + [bits.index(_END_MAGIC, starts[-1])]
    return [(bits[a:b], int(bits[a + 48:a + 80], 2)) for a, b in zip(starts, ends)]


@functools.cache
def _bz2_zero_block() -> tuple[str, int, int]:
    block, crc = _bz2_blocks(b"\0" * 46_000_000)[0]  # more than one block holds
    return block, crc, len(bz2.decompress(_bz2_stream([(block, crc)])))


def _bz2_stream(blocks: list[tuple[str, int]]) -> bytes:
    combined = 0
    for _, crc in blocks:
        combined = (((combined << 1) | (combined >> 31)) & 0xFFFFFFFF) ^ crc
    bits = "".join(b for b, _ in blocks) + _END_MAGIC + format(combined, "032b")
    bits += "0" * (-len(bits) % 8)
    return b"BZh9" + int(bits, 2).to_bytes(len(bits) // 8, "big")


def bzip2_bomb(head: bytes, size: int) -> tuple[bytes, int, int]:
    """A bzip2 stream of `head` then zeros, `size` bytes or more: (stream, its size, its CRC-32)."""
    block, crc, n = _bz2_zero_block()
    count = -(-size // n)
    stream = _bz2_stream(_bz2_blocks(head) + [(block, crc)] * count)
    total, out_crc = len(head), zlib.crc32(head)
    zeros = b"\0" * n
    for _ in range(count):
        out_crc = zlib.crc32(zeros, out_crc)
    return stream, total + n * count, out_crc


def zip_with(path: Path, members: dict[str, bytes], bomb_name: str, method: int, size: int, head: bytes) -> Path:
    """A zip of `members` (deflated) and `bomb_name`: `head` then zeros, `size` bytes or more,
    compressed by `method` (ZIP_DEFLATED or ZIP_BZIP2) with honest sizes and CRC."""
    if method == zipfile.ZIP_BZIP2:
        data, total, crc = bzip2_bomb(head, size)
    else:
        pieces = -(-size // _PIECE)
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        data = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH) + _deflate_piece() * pieces + b"\x03\x00"
        total = len(head) + pieces * _PIECE
        crc = zlib.crc32(b"\0" * _PIECE, zlib.crc32(head)) if pieces == 1 else _combine(zlib.crc32(head), pieces)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    _append_member(path, bomb_name, method, data, total, crc)
    return path


def _combine(head_crc: int, pieces: int) -> int:
    crc, chunk = head_crc, b"\0" * _PIECE
    for _ in range(pieces):
        crc = zlib.crc32(chunk, crc)
    return crc


def _append_member(path: Path, name: str, method: int, data: bytes, size: int, crc: int) -> None:
    """Add a member of precomputed compressed `data` (zipfile would compress it itself), ZIP64 when large."""
    with zipfile.ZipFile(path, "a") as zf:
        info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
        info.compress_type = method
        info.file_size, info.compress_size, info.CRC = size, len(data), crc
        zip64 = size >= 0xFFFFFFFF
        info.header_offset = zf.fp.tell()
        zf.fp.write(info.FileHeader(zip64))
        zf.fp.write(data)
        zf.start_dir = zf.fp.tell()
        zf.filelist.append(info)
        zf.NameToInfo[name] = info
        zf._didModify = True


__all__ = ["MB", "bzip2_bomb", "gzip_bomb", "zip_with"]
