"""The file forms of a MongoDBSaver store, read one document at a time.

- a `mongodump` folder: `DB/<collection>.bson` beside `<collection>.metadata.json`,
  each maybe gzipped (`--gzip`: `.bson.gz`, `.metadata.json.gz`); the spec is the
  dump's root (`dump/`), a database's folder, or a collection's `.bson` file;
- a `mongodump --archive` file (maybe gzipped): mongo-tools' own format
  (common/archive/spec.md): the magic number `0x8199e26d` (little-endian), a
  prelude block (a header document, then one document per collection, then the
  terminator `0xffffffff`), then namespace segments — a header document
  `{db, collection, EOF, CRC}`, documents, the terminator — each collection ended
  by a header with `EOF: true`. Collections are interleaved; only the chosen
  database's two collections are staged, the rest is skipped;
- `mongoexport` JSON lines, one file per collection (`<collection>.json`, maybe
  gzipped), Extended JSON v2 in canonical or relaxed mode (`$binary`, `$oid`,
  `$date`, `$numberLong`…), read by pymongo's `bson.json_util`.

Memory is bounded whatever the input (a gzip bomb too): a document is read
only after its length is checked against MongoDB's 16 MiB limit
(`MAX_DOCUMENT`), a JSON line against `MAX_LINE`; a larger one is a
`load_errors` row and is skipped (a `.bson` whose lengths no longer make sense
ends there, with a row saying so). BSON is decoded by pymongo's `bson` module,
which only builds data (a `Code` value stays text; the stage refuses every
type the saver does not write).
"""

from __future__ import annotations

import gzip
import re
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from loaders.pg_export.archive import open_maybe_gzip, regular_file  # (gzip capped: docs/security.md)
from loaders.records import SourceError

MAX_DOCUMENT = 16 << 20  # MongoDB's BSON document limit (mongo-tools' db.MaxBSONSize)
MAX_LINE = 64 << 20  # one mongoexport line: a 16 MiB document as base64 Extended JSON, and escapes
#: The most objects and arrays one line may hold: an embedded document or array is 7 bytes or more
#: of BSON (type, a key of one byte or more, its own 5), so a 16 MiB document holds fewer.
MAX_CONTAINERS = MAX_DOCUMENT // 7
#: The most members (commas) one line may hold: an element is 2 bytes or more of BSON.
MAX_MEMBERS = MAX_DOCUMENT // 2
#: The most memory one line's document may take as Python objects, estimated before it is parsed
#: (`parse_cost`). What a byte of BSON holds costs far more parsed: a one-key object is 184 bytes of
#: dict, a `$code` 466, a five-letter string 62, so the two counts above still let a 63 MB line take
#: 1.1 GB. Sized for the budget (docs/security.md: 1 GB peak): the process's own 200 MB, this, and
#: the staging of the document fit; a real checkpoint (a binary value, a small metadata document) is
#: a few times its line.
MAX_PARSE_COST = 512 << 20
#: Bytes an object or array costs parsed, at most, beside its members (json_util's worst: `$code`).
CONTAINER_COST = 512
#: Bytes a member (a key, a value) costs parsed, at most, beside its text: its pointer in a list or
#: dict, a string's or number's header, a key's entry in the parser's key cache.
MEMBER_COST = 64
ARCHIVE_MAGIC = struct.pack("<I", 0x8199E26D)
TERMINATOR = 0xFFFFFFFF
GZIP_MAGIC = b"\x1f\x8b"
_BSON_SUFFIXES = (".bson", ".bson.gz")
_JSON_SUFFIXES = (".json", ".json.gz")
# mongoexport writes each document as stored: a server keeps `_id` first.
_EXPORT_HEAD = re.compile(rb'^\s*\{\s*"(?:_id|thread_id)"\s*:')


class Damaged:
    """A document that could not be read: why, with where it is."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _head(path: Path, size: int) -> bytes:
    try:
        with open_maybe_gzip(path) as fh:
            return fh.read(size)
    except (OSError, EOFError):
        return b""


def needs_pymongo(where: str) -> None:
    """`SourceError` when pymongo (its `bson` module) is not installed."""
    try:
        import bson  # noqa: F401
        import pymongo  # noqa: F401 - (pymongo's bson, not the unrelated PyPI package of that name)
    except ImportError:
        raise SourceError(f"{where}: reading MongoDB needs pymongo (pip install 'transcript-lens[mongodb]')") from None


def _codec():
    from bson.codec_options import CodecOptions, DatetimeConversion  # (the `mongodb` extra: pymongo)

    return CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO, unicode_decode_error_handler="strict")


def _read(fh: IO[bytes], n: int) -> bytes:
    try:
        return fh.read(n)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise _Unreadable(str(exc)) from None


class _Unreadable(Exception):
    pass


def _decode(data: bytes, codec) -> Any:
    import bson

    try:
        return bson.decode(data, codec)
    except Exception as exc:  # noqa: BLE001 - InvalidBSON, and what a crafted value makes the decoder raise
        return Damaged(f"invalid BSON ({type(exc).__name__}: {str(exc)[:200]}); skipped")


def _length(raw: bytes) -> int | None:
    return struct.unpack("<I", raw)[0] if len(raw) == 4 else None


def bson_documents(fh: IO[bytes], where: str) -> Iterator[tuple[str, Any]]:
    """`(what, document or Damaged)` of a `.bson` file: documents end to end."""
    codec = _codec()
    offset = 0
    n = 0
    while True:
        try:
            raw = _read(fh, 4)
            if not raw:
                return
            n += 1
            what = f"{where}: document {n} (byte {offset})"
            size = _length(raw)
            if size is None or size < 5 or size > MAX_DOCUMENT:
                reason = ("the file ends inside a document length" if size is None else
                          f"length {size} is not a BSON document's (5 to {MAX_DOCUMENT} bytes)")
                yield what, Damaged(f"{reason}; the rest of the file is not read")
                return
            body = _read(fh, size - 4)
        except _Unreadable as exc:
            yield f"{where}: after byte {offset}", Damaged(f"unreadable data ({exc}); the rest of the file is not read")
            return
        if len(body) < size - 4:
            yield what, Damaged("the file ends inside this document (a truncated dump?)")
            return
        offset += size
        yield what, _decode(raw + body, codec)


def json_documents(fh: IO[bytes], where: str) -> Iterator[tuple[str, Any]]:
    """`(what, document or Damaged)` of a mongoexport file: one Extended JSON document a line."""
    from bson import json_util

    options = json_util.JSONOptions(datetime_conversion=_codec().datetime_conversion)
    line_no = 0
    while True:
        try:
            line = fh.readline(MAX_LINE + 1)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            yield f"{where}: after line {line_no}", Damaged(f"unreadable data ({exc}); the rest of the file is not read")
            return
        if not line:
            return
        line_no += 1
        what = f"{where}: line {line_no}"
        if len(line) > MAX_LINE:
            while line and not line.endswith(b"\n"):  # skip the rest of it, a bounded piece at a time
                line = fh.readline(MAX_LINE)
            yield what, Damaged(f"a line over {MAX_LINE >> 20} MiB (no document mongoexport writes); skipped")
            continue
        if not line.strip():
            continue
        too_many = _over_a_document(line)
        if too_many:
            yield what, Damaged(f"more {too_many} than a {MAX_DOCUMENT >> 20} MiB document holds; skipped")
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield what, Damaged(f"not Extended JSON ({type(exc).__name__}: {str(exc)[:200]}); skipped")
            continue
        cost = parse_cost(line, text)
        del line  # (the text alone is parsed)
        if cost > MAX_PARSE_COST:
            raise SourceError(f"{what}: its document would take about {cost >> 20} MiB parsed, over the limit of "
                              f"{MAX_PARSE_COST >> 20} MiB one mongoexport document may take (a flood of small values?)")
        try:
            doc = json_util.loads(text, json_options=options)
        except RecursionError:
            yield what, Damaged("JSON nested too deeply; skipped")
            continue
        except Exception as exc:  # noqa: BLE001 - ValueError, and what a crafted $-key makes json_util raise
            yield what, Damaged(f"not Extended JSON ({type(exc).__name__}: {str(exc)[:200]}); skipped")
            continue
        finally:
            del text
        yield what, doc
        del doc  # (not alive while the next line is parsed)


_STRUCTURE = (b"{", b"[", b",", b":")
_WINDOW = 1 << 18  # bytes split at a time in `_outside_strings`


def _counts(data: bytes) -> dict[bytes, int]:
    return {c: data.count(c) for c in _STRUCTURE}


def _outside_strings(line: bytes) -> dict[bytes, int]:
    """How many of each of `{ [ , :` `line` holds outside its strings. Its escapes dropped (a
    backslash pair, then an escaped quote: runs of backslashes pair from the left), every quote
    left opens or closes a string, so the text between quotes alternates: it is split at its
    quotes a window at a time, carrying which side a window starts on. Memory: a copy of the line
    and one window's pieces, however many strings it holds (a regular expression's substitution
    keeps every piece: 1.6 GB for a 34 MB line of 9 million one-letter strings)."""
    plain = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    found = dict.fromkeys(_STRUCTURE, 0)
    inside = False
    for start in range(0, len(plain), _WINDOW):
        pieces = plain[start:start + _WINDOW].split(b'"')
        outside = b"".join(pieces[1 if inside else 0::2])
        for c, n in _counts(outside).items():
            found[c] += n
        inside ^= (len(pieces) - 1) % 2 == 1
    return found


def _over(counts: dict[bytes, int]) -> tuple[int, int]:
    """(objects and arrays, members) of `counts` (a container's first member has no comma)."""
    containers = counts[b"{"] + counts[b"["]
    return containers, counts[b","] + counts[b":"] + containers


def parse_cost(line: bytes, text: str) -> int:
    """An upper bound, in bytes, of what `text` (`line` decoded) and the document parsed from it take
    as Python objects: the text twice (itself, and every string parsed out of it, none wider than
    it), and each object, array, key and value at its most (`CONTAINER_COST`, `MEMBER_COST`), counted
    outside strings where counting inside them too would refuse."""
    def cost(counts: dict[bytes, int]) -> int:
        containers, members = _over(counts)
        return 2 * sys.getsizeof(text) + CONTAINER_COST * containers + MEMBER_COST * members

    rough = cost(_counts(line))
    return rough if rough <= MAX_PARSE_COST else cost(_outside_strings(line))


def _over_a_document(line: bytes) -> str | None:
    """What `line` holds more of than a 16 MiB BSON document can (its objects and arrays, its
    members: counted outside strings, at C speed, nothing parsed), or None. Parsed, each is a
    Python object: a 60 MB line of 20 million `{}` asked for 1.5 GB."""
    counts = _counts(line)
    if counts[b"{"] + counts[b"["] <= MAX_CONTAINERS and counts[b","] <= MAX_MEMBERS:
        return None  # (counted with the strings: an overcount, so nothing more to look at)
    counts = _outside_strings(line)
    if counts[b"{"] + counts[b"["] > MAX_CONTAINERS:
        return f"objects and arrays (over {MAX_CONTAINERS:,})"
    if counts[b","] > MAX_MEMBERS:
        return f"members (over {MAX_MEMBERS:,})"
    return None


# --- the archive ------------------------------------------------------------------------


def is_archive(path: Path) -> bool:
    return path.is_file() and _head(path, 4) == ARCHIVE_MAGIC


def _archive_block(fh: IO[bytes], where: str, offset: list[int]) -> Any:
    """The next document of an archive, or None at a terminator; `SourceError` where the
    framing is lost (mongorestore's parser fails there too: nothing after it can be found)."""
    raw = _read(fh, 4)
    if len(raw) < 4:
        raise EOFError
    size = _length(raw)
    if size == TERMINATOR:
        offset[0] += 4
        return None
    if size < 5 or size > MAX_DOCUMENT:
        raise SourceError(f"{where}: byte {offset[0]}: {size} is neither a BSON length nor an archive terminator (a damaged archive)")
    body = _read(fh, size - 4)
    if len(body) < size - 4 or body[-1:] != b"\x00":
        raise SourceError(f"{where}: byte {offset[0]}: the archive ends inside a document (a truncated archive?)")
    offset[0] += size
    return raw + body


def archive_collections(path: Path, where: str) -> list[tuple[str, str]]:
    """`(db, collection)` of every collection the archive's prelude lists."""
    import bson

    codec = _codec()
    with open_maybe_gzip(path) as fh:
        if _read(fh, 4) != ARCHIVE_MAGIC:
            raise SourceError(f"{where}: not a mongodump archive (no magic number)")
        offset = [4]
        try:
            if _archive_block(fh, where, offset) is None:
                raise SourceError(f"{where}: the archive has no header document")
            found = []
            while (block := _archive_block(fh, where, offset)) is not None:
                meta = bson.decode(block, codec)
                found.append((str(meta.get("db")), str(meta.get("collection"))))
        except EOFError:
            raise SourceError(f"{where}: the archive ends inside its prelude (a truncated archive?)") from None
        except (_Unreadable, bson.errors.InvalidBSON) as exc:
            raise SourceError(f"{where}: an unreadable archive prelude ({exc})") from None
    return found


def archive_documents(path: Path, where: str, db: str, collections: tuple[str, ...]) -> Iterator[tuple[str, str, Any]]:
    """`(collection, what, document or Damaged)` of `db`'s `collections` in the archive, as they come."""
    import bson

    codec = _codec()
    counts = dict.fromkeys(collections, 0)
    ended: set[str] = set()
    with open_maybe_gzip(path) as fh:
        _read(fh, 4)
        offset = [4]
        try:
            _archive_block(fh, where, offset)
            while _archive_block(fh, where, offset) is not None:
                pass
            while True:
                try:
                    block = _archive_block(fh, where, offset)
                except EOFError:
                    break
                if block is None:
                    raise SourceError(f"{where}: byte {offset[0]}: two terminators in a row (a damaged archive)")
                try:
                    header = bson.decode(block, codec)
                except bson.errors.InvalidBSON as exc:
                    raise SourceError(f"{where}: byte {offset[0]}: an unreadable namespace header ({exc})") from None
                coll = header.get("collection") if header.get("db") == db else None
                if header.get("EOF") is True:
                    if _archive_block(fh, where, offset) is not None:
                        raise SourceError(f"{where}: byte {offset[0]}: documents after the end of {header.get('collection')!r}")
                    if coll in counts:
                        ended.add(coll)
                    continue
                while True:
                    start = offset[0]
                    try:
                        doc = _archive_block(fh, where, offset)
                    except EOFError:
                        raise SourceError(f"{where}: the archive ends inside a segment of {header.get('collection')!r} (a truncated archive?)") from None
                    if doc is None:
                        break
                    if coll in counts:
                        counts[coll] += 1
                        yield coll, f"{where}: {db}.{coll} document {counts[coll]} (byte {start})", _decode(doc, codec)
        except _Unreadable as exc:
            raise SourceError(f"{where}: unreadable data after byte {offset[0]} ({exc})") from None
        except EOFError:  # (a cut where a terminator was due: after a header, an end header)
            raise SourceError(f"{where}: byte {offset[0]}: the archive ends inside its framing (a truncated archive?)") from None
    missing = [c for c in collections if c not in ended and counts[c]]
    if missing:
        raise SourceError(f"{where}: the archive ends before {db}.{missing[0]} does (a truncated archive?)")


# --- where the collections are ----------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Where a file spec keeps the two collections: `form` is "bson", "json" or "archive"."""

    form: str
    checkpoints: Path | None = None
    writes: Path | None = None
    archive: Path | None = None
    db: str | None = None


def _collection_file(folder: Path, name: str, suffixes: tuple[str, ...]) -> Path | None:
    """The collection's file in a dump folder; a link is named too (`locate` refuses it, unread)."""
    for suffix in suffixes:
        p = folder / f"{name}{suffix}"
        if p.is_symlink() or p.is_file():
            return p
    return None


def _subfolders(path: Path) -> Iterator[Path]:
    """A dump root's database folders: never a link (it could lead out of the root, or loop)."""
    return (sub for sub in path.iterdir() if sub.is_dir() and not sub.is_symlink())


def _is_export(path: Path) -> bool:
    return _EXPORT_HEAD.match(_head(path, 64)) is not None


def _forms_in(folder: Path, checkpoints: str) -> list[str]:
    found = []
    if _collection_file(folder, checkpoints, _BSON_SUFFIXES):
        found.append("bson")
    p = _collection_file(folder, checkpoints, _JSON_SUFFIXES)
    if p is not None and (p.is_symlink() or _is_export(p)):
        found.append("json")
    return found


def detect(path: Path, checkpoints: str = "checkpoints") -> bool:
    """A mongodump folder (its root or a database's), a collection's `.bson`(`.gz`), an
    archive, or a mongoexport file: never raises for another kind's spec."""
    try:
        if path.is_dir():
            return bool(_forms_in(path, checkpoints)) or any(
                _forms_in(sub, checkpoints) for sub in _subfolders(path))
        if not path.is_file():
            return False
        name = path.name
        if name.endswith(_BSON_SUFFIXES):
            size = _length(_head(path, 4))
            return size is not None and 5 <= size <= MAX_DOCUMENT
        if name.endswith(_JSON_SUFFIXES):
            return _is_export(path)
        return is_archive(path)
    except OSError:
        return False


def locate(path: Path, where: str, db: str | None, checkpoints: str, writes: str) -> Layout:
    """The layout of a file spec; `SourceError` naming what is missing."""
    if path.is_file() and not path.name.endswith(_BSON_SUFFIXES + _JSON_SUFFIXES):
        if not is_archive(path):
            raise SourceError(f"{where}: not a mongodump archive, .bson or mongoexport file")
        dbs = sorted({d for d, c in archive_collections(path, where) if c == checkpoints})
        return Layout("archive", archive=path, db=_one_db(dbs, db, where, checkpoints))
    if path.is_file():
        folder, form = path.parent, "bson" if path.name.endswith(_BSON_SUFFIXES) else "json"
    elif path.is_dir():
        forms = _forms_in(path, checkpoints)
        folder = path
        if not forms:
            dbs = sorted(sub.name for sub in _subfolders(path) if _forms_in(sub, checkpoints))
            folder = path / _one_db(dbs, db, where, checkpoints)
            forms = _forms_in(folder, checkpoints)
        form = forms[0]
    else:
        raise SourceError(f"{where}: no such file or folder")
    suffixes = _BSON_SUFFIXES if form == "bson" else _JSON_SUFFIXES
    found = _collection_file(folder, checkpoints, suffixes)
    if found is None:
        raise SourceError(f"{where}: no {checkpoints}{suffixes[0]} (or {suffixes[1]}) here (expected MongoDBSaver's collections)")
    other = _collection_file(folder, writes, suffixes)
    if other is None:
        raise SourceError(f"{where}: no {writes}{suffixes[0]} (or {suffixes[1]}) beside {found.name} "
                          "(MongoDBSaver's pending writes: dump both collections)")
    for file in (found, other):
        if file != path:  # (the file named itself is the user's choice: the source-root rule judges it)
            regular_file(file, where)
    return Layout(form, checkpoints=found, writes=other, db=folder.name)


def _one_db(dbs: list[str], db: str | None, where: str, checkpoints: str) -> str:
    if db is not None:
        if db not in dbs:
            raise SourceError(f"{where}: no database {db!r} with a {checkpoints} collection here (found: {', '.join(dbs) or 'none'})")
        return db
    if len(dbs) != 1:
        raise SourceError(f"{where}: {'no database' if not dbs else 'several databases'} with a {checkpoints} collection "
                          f"({', '.join(dbs) or 'none'}): name one with the database option")
    return dbs[0]


def file_token(paths: list[Path]) -> str:
    """The files' inode, size and modification time (`SourceReader.change_token`)."""
    parts = []
    for p in paths:
        st = p.stat()
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return "mongo " + " ".join(parts)
