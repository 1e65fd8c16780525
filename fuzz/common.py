"""What every fuzz target shares: the sanitized extensions, the input formats, the mismatch error.

`use_sanitized_extensions()` must run before anything imports `loaders._native`:
it puts the sanitizer build (scripts/build-sanitized.sh) first on the `loaders`
package's path, so `from loaders import _scan` loads it instead of the in-place
build next to the sources, and refuses to go on if it did not.

The input formats are small and length-prefixed, so libFuzzer's byte mutations
(flips, inserted and erased bytes, spliced inputs) keep most of an input
meaningful, and a real row encodes into a seed exactly (`fuzz/seeds.py`).

>>> decode_records(encode_records(7, [b"ab", b""]))
(7, [b'ab', b''])
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: FUZZ_DIR/ext/loaders, where scripts/build-sanitized.sh puts the sanitized .so files.
EXT_ENV = "TL_FUZZ_EXT"


class Mismatch(AssertionError):
    """The C entry point and its Python twin disagree on one input (libFuzzer keeps the input)."""


def use_sanitized_extensions() -> None:
    """Load `loaders._scan` / `loaders._readahead` / `loaders._rows` from the sanitizer build, or fail."""
    ext = os.environ.get(EXT_ENV)
    if not ext:
        raise SystemExit(f"{EXT_ENV} is not set: run the targets through `python -m fuzz.campaign` (make fuzz)")
    import loaders

    loaders.__path__.insert(0, str(Path(ext).resolve()))
    from loaders import _native

    for name, mod in (("_scan", _native.scan), ("_readahead", _native.readahead), ("_rows", _native.rows)):
        if mod is None or not str(Path(mod.__file__).resolve()).startswith(str(Path(ext).resolve())):
            where = "not loaded" if mod is None else mod.__file__
            raise SystemExit(f"loaders.{name} is not the sanitizer build in {ext} ({where})")


# --- records: a flag byte, then up to MAX_RECORDS length-prefixed byte strings ----------

MAX_RECORDS = 6


def encode_records(flags: int, records: list[bytes]) -> bytes:
    return bytes([flags & 0xFF]) + b"".join(struct.pack("<I", len(r)) + r for r in records)


def decode_records(data: bytes) -> tuple[int, list[bytes]]:
    """Never fails: a length past the end takes what is left, a missing flag byte is 0."""
    if not data:
        return 0, []
    flags, pos, out = data[0], 1, []
    while pos < len(data) and len(out) < MAX_RECORDS:
        head = data[pos:pos + 4].ljust(4, b"\0")
        (n,) = struct.unpack("<I", head)
        pos += 4
        out.append(data[pos:pos + n])
        pos += n
    return flags, out


# --- values: one tag byte, then what the tag needs (stage and ts_list targets) ---------------

class Reader:
    """Bytes consumed from the front; reads past the end give zeros / empty (never fails)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def left(self) -> int:
        return len(self.data) - self.pos

    def byte(self) -> int:
        b = self.data[self.pos] if self.pos < len(self.data) else 0
        self.pos += 1
        return b

    def take(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def sized(self) -> bytes:
        n = self.byte() | (self.byte() << 8)
        return self.take(n)


class StrSub(str):
    """A str subclass: C code that checks types exactly and pyarrow may treat it differently."""


class IntSub(int):
    """An int subclass (bool is the real-world one)."""


# Tags of `read_value` / `write_value`.
T_NONE, T_STR, T_INT, T_BIG, T_BOOL, T_ARR_I, T_ARR_L, T_LIST, T_BYTES, T_FLOAT, T_STRSUB, T_INTSUB, T_SURR, \
    T_STRIDED, T_LATIN1 = range(15)
N_TAGS = 15


def read_value(r: Reader):
    """One Python value from the input: the kinds a staged row holds, and the kinds it must not."""
    from array import array

    tag = r.byte() % N_TAGS
    if tag == T_NONE:
        return None
    if tag == T_STR:
        return r.sized().decode("utf-8", "replace")
    if tag == T_SURR:  # bytes that are not UTF-8 become lone surrogates: text that cannot be encoded
        return r.sized().decode("utf-8", "surrogateescape")
    if tag == T_LATIN1:
        return r.sized().decode("latin-1")
    if tag == T_STRSUB:
        return StrSub(r.sized().decode("utf-8", "replace"))
    if tag == T_INT:
        return struct.unpack("<q", r.take(8).ljust(8, b"\0"))[0]
    if tag == T_BIG:
        return int.from_bytes(r.sized()[:64], "little", signed=True)
    if tag == T_INTSUB:
        return IntSub(struct.unpack("<i", r.take(4).ljust(4, b"\0"))[0])
    if tag == T_BOOL:
        return bool(r.byte() & 1)
    if tag in (T_ARR_I, T_ARR_L, T_STRIDED):
        raw = r.sized()
        code = "l" if tag == T_ARR_L else "i"
        size = 8 if code == "l" else 4
        arr = array(code, raw[: len(raw) // size * size])
        return memoryview(arr)[::2] if tag == T_STRIDED else arr
    if tag == T_LIST:
        raw = r.sized()
        return [b - 128 for b in raw[:64]]
    if tag == T_BYTES:
        return r.sized()
    return struct.unpack("<d", r.take(8).ljust(8, b"\0"))[0]  # T_FLOAT


def write_value(v) -> bytes:
    """The bytes `read_value` reads back as `v` (for seeds built from real rows)."""
    from array import array

    def sized(b: bytes) -> bytes:
        b = b[:0xFFFF]
        return struct.pack("<H", len(b)) + b

    if v is None:
        return bytes([T_NONE])
    if isinstance(v, bool):
        return bytes([T_BOOL, int(v)])
    if isinstance(v, int):
        if -(2**63) <= v < 2**63:
            return bytes([T_INT]) + struct.pack("<q", v)
        return bytes([T_BIG]) + sized(v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True))
    if isinstance(v, str):
        return bytes([T_STR]) + sized(v.encode("utf-8", "replace"))
    if isinstance(v, array):
        return bytes([T_ARR_L if v.typecode == "l" else T_ARR_I]) + sized(v.tobytes())
    if isinstance(v, (list, tuple)):
        return bytes([T_LIST]) + sized(bytes((x + 128) & 0xFF for x in v))
    if isinstance(v, bytes):
        return bytes([T_BYTES]) + sized(v)
    if isinstance(v, float):
        return bytes([T_FLOAT]) + struct.pack("<d", v)
    raise TypeError(f"no seed encoding for {type(v).__name__}")
