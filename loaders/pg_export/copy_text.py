"""COPY text format as pg_dump writes it: fields, identifiers, the client encoding."""

from __future__ import annotations

import codecs
import re

from loaders.records import SourceError

_IDENT_RE = re.compile(r'"((?:[^"]|"")*)"|([^\s,."]+)')
_ESCAPE_RE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v"}


def _unescape(match: re.Match) -> bytes:
    octal, hexa, other = match.groups()
    if octal is not None:
        return bytes([int(octal, 8) & 0xFF])
    if hexa is not None:
        return bytes([int(hexa, 16)])
    return _SIMPLE_ESCAPES.get(other, other)


def copy_text_field(field: bytes, encoding: str = "utf-8") -> str | None:
    """One field of COPY text format (`\\N`, backslash escapes) → text or None.

    >>> copy_text_field(rb"a\\tb\\\\x00\\101"), copy_text_field(rb"\\N")
    ('a\\tb\\\\x00A', None)
    """
    if field == b"\\N":
        return None
    if b"\\" in field:
        field = _ESCAPE_RE.sub(_unescape, field)
    return field.decode(encoding)


def idents(text: str) -> list[str]:
    """SQL identifiers (quoted kept as written, unquoted folded to lower case).

    >>> idents('public."Odd", Thread_ID')
    ['public', 'Odd', 'thread_id']
    """
    return [q.replace('""', '"') if q or not u else u.lower() for q, u in _IDENT_RE.findall(text)]


def python_encoding(name: str, where: str) -> str:
    """The Python codec of a Postgres client_encoding."""
    aliases = {"UTF8": "utf-8", "UNICODE": "utf-8", "SQL_ASCII": "utf-8", "LATIN1": "latin-1", "WIN1252": "cp1252"}
    codec = aliases.get(name.upper(), name)
    try:
        return codecs.lookup(codec).name
    except LookupError:
        raise SourceError(f"{where}: the dump's client_encoding {name!r} is not one this reader knows") from None
