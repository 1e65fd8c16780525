"""Cutting a CSV file into pieces at row ends (DuckDB's reader is given one piece at a time),
and finding lines in it for error messages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


class RowTooLong(Exception):
    """A row longer than the pieces may hold, starting at byte `offset` of the file."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def csv_pieces(file: Path, size: int, max_row: int) -> Iterator[tuple[int, list]]:
    """(byte offset, parts) of pieces of about `size` bytes cut at row ends; the
    parts (the header line first) are to be written one after another.

    DuckDB's CSV reader works on 2,048 rows at a time: 2,048 `messages` blobs of a
    long conversation are hundreds of megabytes whatever its memory limit, so it is
    given pieces. A newline ends a row when the quotes before it (from the start of
    the piece, which starts a row) are balanced: COPY doubles quotes inside fields.
    Blocks are sliced, not joined, so no byte is copied on the way.
    """
    with file.open("rb") as fh:
        header = fh.readline()
        offset = len(header)
        carry: list[bytes] = []  # the start of a row begun in earlier blocks
        carry_len = carry_quotes = 0
        while True:
            block = fh.read(size)
            if not block:
                if carry:
                    yield offset, [header, *carry]
                return
            end = block.rfind(b"\n")
            # The quotes before each newline, from the last one back: each stretch of the block
            # counted once (a block of newlines inside one quoted field costs its length, not its square).
            quotes = carry_quotes + block.count(b'"', 0, end) if end != -1 else 0
            while end != -1 and quotes % 2:
                before = block.rfind(b"\n", 0, end)
                quotes -= block.count(b'"', before + 1, end)
                end = before
            if end == -1:
                carry.append(block)
                carry_len += len(block)
                carry_quotes += block.count(b'"')
                if carry_len > max_row:
                    raise RowTooLong(offset)
                continue
            yield offset, [header, *carry, memoryview(block)[: end + 1]]
            offset += carry_len + end + 1
            tail = block[end + 1 :]
            carry = [tail] if tail else []
            carry_len, carry_quotes = len(tail), tail.count(b'"')


def line_at(file: Path, offset: int) -> int:
    """The line number of the byte at `offset` (1-based; only for error messages)."""
    lines = 1
    with file.open("rb") as fh:
        while offset > 0 and (chunk := fh.read(min(offset, 1 << 20))):
            lines += chunk.count(b"\n")
            offset -= len(chunk)
    return lines


def first_long_line(file: Path, limit: int) -> int | None:
    """The number of the first line of `file` longer than `limit` bytes, if any."""
    number, length = 1, 0
    with file.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                if length + end - start > limit:
                    return number
                number, length, start = number + 1, 0, end + 1
            length += len(chunk) - start
            if length > limit:
                return number
    return None
