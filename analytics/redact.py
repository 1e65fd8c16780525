"""Masking personal data at read time (contract §11): what a transcript says, minus who said it.

A checkpoint store keeps verbatim text (the runtime needs it to resume), so masking
can only happen when the data is read. A `Redactor` finds emails, phone numbers
(national and E.164 forms), payment card numbers (Luhn-checked), IBANs (checksum),
IPv4/IPv6 addresses, US social security numbers, configured patterns and a list of
names or terms, and replaces each by a placeholder that keeps its kind and is
stable per value for the life of the redactor (one export, one page view):

>>> r = Redactor()
>>> r.text("Mail bob@example.com or BOB@example.com, card 4111 1111 1111 1111; order A-1043")
'Mail <EMAIL_1> or <EMAIL_1>, card <CARD_1>; order A-1043'

Decoys stay as they are: order numbers, digit runs that fail the Luhn check,
version strings, ISO times. Validation comes from maintained libraries
(`phonenumbers`, `python-stdnum`, the standard `ipaddress`), not one big regex.

JSON columns (tool-call arguments, metadata) are masked value by value, so the
result is still the same JSON with placeholders for the personal values:

>>> r.json_text('{"to": "bob@example.com", "amount": 12}')
'{"to":"<EMAIL_1>","amount":12}'
"""

from __future__ import annotations

import functools
import os
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import phonenumbers
from stdnum import iban as _iban
from stdnum.us import ssn as _ssn

from analytics import redact_limits as limits
from analytics.errors import BadRequest
from analytics.reader_view import base, view
from analytics.redact_cards import cards, comma_cards
from analytics.redact_ips import ips
from analytics.redact_issued import outside
from analytics.redact_merge import merge_findings
from analytics.redact_phones import phones
from analytics.redact_shapes import iban_length, iban_shaped
from analytics.redact_spelled import obfuscated_emails
from analytics.tomltable import read_table

#: The environment switch of a deployment: set (to anything but "" or "0"), every read masks.
ENV = "TRANSCRIPT_LENS_REDACT"
#: A TOML file with the `[redact]` table of `RedactConfig.from_toml`.
CONFIG_ENV = "TRANSCRIPT_LENS_REDACT_CONFIG"

#: The kinds built in, in the order they are looked for (a later kind never takes
#: text an earlier one took: an email's digits are not a phone number).
KINDS = ("EMAIL", "IBAN", "CARD", "SSN", "IP", "PHONE")


def enabled_by_environment() -> bool:
    """Whether the deployment asks every read to mask (`TRANSCRIPT_LENS_REDACT=1`).

    >>> os.environ.pop(ENV, None); enabled_by_environment()
    False
    """
    return os.environ.get(ENV, "") not in ("", "0")


@dataclass(frozen=True)
class RedactConfig:
    """What to mask besides the built-in kinds.

    `patterns`: kind name → regular expression (each match is one value of that kind);
    `terms`: names or words masked wherever they stand as whole words, any case
    (kind `terms_kind`); `phone_regions`: the countries whose national number forms
    are recognised (E.164 `+…` forms are recognised from anywhere).

    >>> RedactConfig(patterns={"employee id": r"EMP-[0-9]{6}"}).patterns
    (('EMPLOYEE_ID', 'EMP-[0-9]{6}'),)
    """

    #: Given as a mapping; held as (kind, pattern) pairs, so a config is hashable.
    patterns: tuple[tuple[str, str], ...] = ()
    terms: tuple[str, ...] = ()
    terms_kind: str = "NAME"
    phone_regions: tuple[str, ...] = ("US", "GB")
    #: The patterns compiled (`analytics.redact_limits.compiled`: within its limits), in order.
    regexes: tuple = field(default=(), init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        kinds = {}
        pairs = self.patterns.items() if isinstance(self.patterns, dict) else self.patterns
        for kind, pattern in pairs:
            kinds[_kind_name(kind)] = pattern
        object.__setattr__(self, "patterns", tuple(kinds.items()))
        object.__setattr__(self, "regexes", tuple(limits.compiled(self.patterns)))
        object.__setattr__(self, "terms", limits.terms(tuple(t for t in (s.strip() for s in self.terms) if t)))
        # The kind is shown in every placeholder of a term: a label, never a value (an e-mail would be in every output).
        object.__setattr__(self, "terms_kind", _kind_name(limits.kind("terms_kind", self.terms_kind)))
        object.__setattr__(self, "phone_regions", limits.regions(self.phone_regions, phonenumbers.SUPPORTED_REGIONS))

    @classmethod
    def from_toml(cls, path: str | Path) -> RedactConfig:
        """Read the `[redact]` table of a TOML file:

            [redact]
            phone_regions = ["US", "GB", "DE"]
            terms = ["Alice Example", "Project Falcon"]
            [redact.patterns]
            EMPLOYEE_ID = 'EMP-\\d{6}'
        """
        table = read_table(path, "redact", {"patterns", "terms", "terms_kind", "phone_regions"})
        # Each value's type checked first: a string where a list is meant would be read letter by
        # letter, or mask nothing, silently.
        given = dict(patterns=limits.table_of_strings(path, table, "patterns"),
                     terms=limits.strings(path, table, "terms", ()),
                     terms_kind=limits.string(path, table, "terms_kind", "NAME"),
                     phone_regions=limits.strings(path, table, "phone_regions", cls.phone_regions))
        try:
            return cls(**given)
        except BadRequest as exc:
            raise BadRequest(f"{path}: [redact] {exc}") from None

    @classmethod
    def from_environment(cls) -> RedactConfig:
        """The config file named by `TRANSCRIPT_LENS_REDACT_CONFIG`, or the defaults."""
        path = os.environ.get(CONFIG_ENV)
        return cls.from_toml(path) if path else cls()


def _kind_name(kind: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", kind).strip("_").upper()
    if not name:
        raise BadRequest(f"redaction kind {kind!r} has no letters or digits")
    return name


class Finding(NamedTuple):
    """One personal value in a text: `text[start:end]`, its kind and its canonical form
    (what makes two spellings the same value: digits of a card, E.164 of a phone)."""

    start: int
    end: int
    kind: str
    value: str


# --- detectors: text → candidate findings (validated), each kind on its own ----------------------

# An address is a local part (`[\w+%-][\w.+%'-]*`, not glued to a `[\w.+%-]` before it), `@`,
# its domain, and whatever is glued to its end (`carol@acme-mail.com-h0`: masked whole, fail
# closed). One regex for all of it backtracks over every start in a run of local-part characters
# that ends without `@` (`a'a'a'…@!`: quadratic), so the local part is found from each `@`
# backwards (`_emails`) and only the domain is a regex, matched where an `@` is. An `@` written
# as a URL escape (`%40`, escaped twice `%2540`) or an HTML character reference (`&#64;`, `&#x40;`,
# `&commat;`, and without its `;`, `&#64`, which browsers read as an `@` too) is one.
_AT_SIGN = re.compile(r"@|%(?:25)*40|&#0*64(?![0-9])(?:;)?|&#x0*40(?![0-9a-f])(?:;)?|&commat;", re.IGNORECASE)
#: An address literal as a domain (`user@[192.168.1.1]`, `user@[IPv6:2001:db8::1]`).
_EMAIL_LITERAL = re.compile(r"\[(?:IPv6:)?[0-9A-Fa-f:.]{2,45}\]")
#: Characters of a quoted local part (`"john doe"@example.com`) looked back for; RFC 5321 allows 64.
_QUOTED_LOCAL = 64
_EMAIL_DOMAIN = re.compile(r"([^\W_](?:[\w-]*[^\W_])?(?:\.[^\W_](?:[\w-]*[^\W_])?)*\.[^\W\d_]{2,})[\w-]*")
# Any case, grouped by spaces, dashes, dots, slashes or underscores (`de89-3704-…`, `DE89/3704/…`),
# one with a space on each side too (`DE89 / 3704 / …`), a line break (a wrapped line); the checksum decides.
_IBAN_GAP = r"(?: [./_-] |[ ./_\n-])"
_IBAN = re.compile(rf"(?<![A-Za-z0-9])[A-Za-z]{{2}}[0-9]{{2}}(?:{_IBAN_GAP}?[A-Za-z0-9]){{11,30}}(?![A-Za-z0-9])")
_SSN = re.compile(r"(?<![0-9-])([0-9]{3})([- ])([0-9]{2})\2([0-9]{4})(?![0-9]|-[0-9])")

def _word(c: str) -> bool:
    return c.isalnum() or c == "_"  # what `re`'s `\w` matches in a str


def _local(c: str) -> bool:
    return _word(c) or c in ".+%'-"


def _starts_local(text: str, p: int) -> bool:
    """Whether an address's local part may start at `p`: `[\\w+%-]`, not glued to `[\\w.+%-]` before it."""
    c = text[p]
    return (_word(c) or c in "+%-") and (p == 0 or not (_word(text[p - 1]) or text[p - 1] in ".+%-"))


def _emails(text: str) -> Iterator[Finding]:
    """Each address in `text`, in one forward pass: for each position, the leftmost place a local
    part reaching it may start (or None) is carried along, so at an `@` the local part is known
    without reading back, and no character is read twice.

    >>> [f.value for f in _emails("x a'a'b@ex.com, o'neil+tag@Mail.example.co.uk-h0; @ x@y; b%40ex.com")]
    ["a'a'b@ex.com", "o'neil+tag@mail.example.co.uk", 'b@ex.com']
    >>> [f.value for f in _emails('"John Doe"@example.com or ops@[192.168.1.1]')]
    ['"john doe"@example.com', 'ops@[192.168.1.1]']
    """
    i, start = 0, None  # the pass has read text[:i]; `start`: where a local part ending at i may start
    look = 0  # where the next sign is looked for
    while (sign := _AT_SIGN.search(text, look)) is not None:
        at = sign.start()
        for k in range(i, at):
            start = (start if start is not None else k if _starts_local(text, k) else None) if _local(text[k]) else None
        i, look = at, at + 1
        if start is None and at and text[at - 1] == '"':  # a quoted local part (`"john doe"@…`): a bounded look back
            opening = text.rfind('"', max(0, at - 2 - _QUOTED_LOCAL), at - 1)
            start = opening if opening != -1 and "\n" not in text[opening:at] else None
        m = None if start is None else _EMAIL_DOMAIN.match(text, sign.end()) or _EMAIL_LITERAL.match(text, sign.end())
        if m is None:  # (an escaped sign's characters may still be part of a local part: read on from it)
            if text[at] == "@":
                i, start = at + 1, None
            continue
        yield Finding(start, m.end(), "EMAIL", (text[start:at] + "@" + (m.group(m.lastindex or 0))).casefold())
        i, look, start = m.end(), m.end(), None


def _spelled_emails(text: str) -> Iterator[Finding]:
    """Each address with its `@` and dots spelled out (`analytics.redact_spelled.obfuscated_emails`)."""
    for start, end, value in obfuscated_emails(text):
        yield Finding(start, end, "EMAIL", value)


def _ibans(text: str) -> Iterator[Finding]:
    """Each IBAN: the longest stretch of a candidate, ending at its end or before one of its
    separators, whose checksum holds. (The pattern's groups run on over the words after an
    IBAN, `DE89 3704 0044 0532 0130 00 please pay`: the whole candidate fails the checksum.)

    >>> [f.value for f in _ibans("pay GB82 WEST 1234 5698 7654 32 to me, or de89370400440532013000 now")]
    ['GB82WEST12345698765432', 'DE89370400440532013000']
    """
    pos = 0
    while (m := _IBAN.search(text, pos)) is not None:
        ends = [m.end(), *(p for p in range(m.end() - 1, m.start() + 4, -1) if text[p] in " ./_-\n")]
        for end in ends:
            value = re.sub(r"[^A-Za-z0-9]", "", text[m.start():end].rstrip(" ./_-\n")).upper()
            if len(value) == iban_length(value[:2]) and _iban.is_valid(value):  # (the length first: it is cheap)
                yield Finding(m.start(), end, "IBAN", value)
                pos = end
                break
        else:
            shaped = iban_shaped(text, m.start(), m.end())
            if shaped is not None:
                yield Finding(m.start(), shaped, "IBAN", re.sub(r"[^A-Za-z0-9]", "", text[m.start():shaped]).upper())
            pos = shaped or m.start() + 1


def _cards(text: str) -> Iterator[Finding]:
    """Each card number (`analytics.redact_cards`): Luhn-checked, or printed in a card's groups; then
    those written with commas between their groups (a second run of findings, sorted by start).

    >>> [f.value for f in _cards("4111 1111-1111_1111, 3782.822463 10005; 2025-03-05 1741203902; 5500,0000,0000,0004")]
    ['4111111111111111', '378282246310005', '5500000000000004']
    """
    for start, end, digits in (*cards(text), *comma_cards(text)):
        yield Finding(start, end, "CARD", digits)


def _ssns(text: str) -> Iterator[Finding]:
    for m in _SSN.finditer(text):
        digits = m.group(1) + m.group(3) + m.group(4)
        if _ssn.is_valid(digits):
            yield Finding(m.start(), m.end(), "SSN", digits)


def _ips(text: str) -> Iterator[Finding]:
    """Each IP address (`analytics.redact_ips`)."""
    for start, end, value in ips(text):
        yield Finding(start, end, "IP", value)


def _phones(regions: tuple[str, ...]) -> Callable[[str], Iterator[Finding]]:
    """Each phone number (`analytics.redact_phones`), read in `regions`."""
    def find(text: str) -> Iterator[Finding]:
        for start, end, value in phones(text, regions):
            yield Finding(start, end, "PHONE", value)

    return find


def _pattern(kind: str, regex) -> Callable[[str], Iterator[Finding]]:
    def find(text: str) -> Iterator[Finding]:
        # RE2 reads UTF-8, which a lone surrogate (a stored string can hold one) is not: it is
        # read as U+FFFD, one character for one, so every offset stays the text's own.
        for m in regex.finditer(_LONE_SURROGATE.sub("\ufffd", text)):
            if m.end() > m.start():
                yield Finding(m.start(), m.end(), kind, text[m.start():m.end()])

    return find


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.cache
def _fold(c: str) -> str:
    """`c` in lower case where that is one character (case is ignored as `re` ignores it)."""
    low = c.lower()
    return low if len(low) == 1 else c


@functools.cache
def _key(c: str) -> str:
    """What a term's character and a text's character are filed under: the letter without its
    accent, in lower case (`É` → `e`)."""
    return _fold(base(c)) if len(base(c)) == 1 else _fold(c)


@functools.cache
def _allowed(c: str) -> frozenset[str]:
    """The text characters (in lower case) a term's character `c` matches: itself in any case and,
    when it is an accented letter, the letter without its accent (`é`: `é`, `É`, `e`, `E`)."""
    return frozenset({_fold(c), _key(c)}) if base(c) != c and len(base(c)) == 1 else frozenset({_fold(c)})


_END = ""  # (a trie node's key for the spellings ending there: no character's key is empty)


class _Terms:
    """The configured terms, found in one pass over a text whatever their number: a trie of their
    spellings, keyed by each character's letter without accent in lower case (`_key`), walked from
    each place a word may start; a spelling found is checked character by character (`_allowed`).

    Whole words only, any case, the longest term at the leftmost place first; a term with accents
    also as the view reads it decomposed (`José`: `Jose`, what `Jose\u0301` reads as), and an
    accented letter of a term matches its letter without the accent too.

    >>> [f.value for f in _Terms("NAME", ("Alice Example", "Alice", "José")).find("ALICE example, alice, Jose, josé, Alicex")]
    ['alice example', 'alice', 'jose', 'josé']
    """

    def __init__(self, kind: str, terms: tuple[str, ...]) -> None:
        self.kind = kind
        self.trie: dict = {}
        firsts: set[str] = set()
        for spelling in {t for term in terms for t in (term, view(unicodedata.normalize("NFD", term))[0])}:
            if not spelling:
                continue
            node = self.trie
            for c in spelling:
                node = node.setdefault(_key(c), {})
            node.setdefault(_END, []).append(tuple(_allowed(c) for c in spelling))
            firsts.update(_allowed(spelling[0]))
        # Where a term may start: a character a first character matches, no word character before it.
        variants = {v for c in firsts for v in (c, c.upper(), c.title())}
        self._starts = re.compile("(?<!\\w)[" + "".join(re.escape(c) for c in sorted(variants)) + "]", re.IGNORECASE)

    def find(self, text: str) -> Iterator[Finding]:
        at, n = 0, len(text)
        while (start := self._starts.search(text, at)) is not None:
            i = start.start()
            node, j, end = self.trie, i, -1
            while j < n and (node := node.get(_key(text[j]))) is not None:
                j += 1
                if _END in node and (j == n or not _word(text[j])) and any(
                        all(_fold(text[i + k]) in allowed for k, allowed in enumerate(spelling))
                        for spelling in node[_END]):
                    end = j
            if end < 0:
                at = i + 1
                continue
            yield Finding(i, end, self.kind, text[i:end].casefold())
            at = end


def find_personal_data(text: str, config: RedactConfig | None = None) -> list[Finding]:
    """Every personal value in `text`, in text order, none overlapping.

    >>> [f.kind for f in find_personal_data("ip 10.0.0.7, v1.2.3.4, SSN 123-45-6789, +44 20 7946 0958")]
    ['IP', 'SSN', 'PHONE']
    """
    return _Finder.of(config or RedactConfig()).find(text)


class _Finder:
    """The detectors of one config, in priority order."""

    _cache: dict[RedactConfig, _Finder] = {}

    def __init__(self, config: RedactConfig) -> None:
        # Configured patterns come before the built-in kinds: an operator's pattern for
        # their own ids is more specific than "some digits".
        custom = [_pattern(kind, regex) for (kind, _), regex in zip(config.patterns, config.regexes)]
        self.terms = _Terms(config.terms_kind, config.terms).find if config.terms else None
        if self.terms:
            custom.append(self.terms)
        self.custom: list[Callable[[str], Iterable[Finding]]] = custom
        #: The built-in kinds before `PHONE`, whose values no phone number is looked for in.
        self.builtin: list[Callable[[str], Iterable[Finding]]] = [_emails, _spelled_emails, _ibans, _cards, _ssns, _ips]
        self.phones = _phones(config.phone_regions)

    @classmethod
    def of(cls, config: RedactConfig) -> _Finder:
        finder = cls._cache.get(config)
        if finder is None:
            finder = cls._cache[config] = cls(config)
        return finder

    def detected(self, seen: str) -> list[list[Finding]]:
        """Each detector's findings in `seen`, in priority order. Phone numbers are looked for in `seen`
        with the values of the built-in kinds before them blanked out: an address's, a card's or an
        IBAN's digits are no phone number, and a text of them (a flood of addresses) is then no text
        of digit groups for `phonenumbers` to read. (A configured pattern's or term's match is not
        blanked: it may be part of a phone number, masked with it.)"""
        custom = [list(detect(seen)) for detect in self.custom]
        builtin = [list(detect(seen)) for detect in self.builtin]
        return [*custom, *builtin, list(self.phones(_blanked(seen, builtin)))]

    def find(self, text: str) -> list[Finding]:
        # Detected on the view a reader sees (`view`: full-width `４１１１`, a card grouped by
        # non-breaking or zero-width spaces, a decomposed accent); spans are the text's.
        seen, where = view(text)
        return merge_findings([_in_text(f, where, len(text)) for f in found] for found in self.detected(seen))


def _blanked(text: str, found: list[list[Finding]]) -> str:
    """`text` with each character of the findings made a NUL, which no detector reads as part of a value.

    >>> _blanked("ip 10.0.0.1, ring 0207", [[Finding(3, 11, "IP", "10.0.0.1")]])
    'ip \\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00, ring 0207'
    """
    spans = sorted((f.start, f.end) for fs in found for f in fs)
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        if end > at:
            out.append(text[at:max(at, start)])
            out.append("\0" * (end - max(at, start)))
            at = end
    out.append(text[at:])
    return "".join(out)


def _in_text(f: Finding, where: list[int] | None, size: int) -> Finding:
    """A finding in the view as a span of the text it was read from (`view`'s `where`): from its first
    character's origin to the next one's, so the escapes and invisible characters it spans go with it."""
    if where is None:
        return f
    return Finding(where[f.start], where[f.end] if f.end < len(where) else size, f.kind, f.value)


def find_terms(text: str, config: RedactConfig) -> list[tuple[int, int]]:
    """Where `config`'s terms stand in `text`, as the detector finds them (its view, whole words,
    any case): what a masking search cannot see into.

    >>> find_terms("ask Carol\u00a0Danvers or carol", RedactConfig(terms=("Carol Danvers",)))
    [(4, 17)]
    """
    terms = _Finder.of(config).terms
    if terms is None:
        return []
    seen, where = view(text)
    return [(f.start, f.end) for f in (_in_text(f, where, len(text)) for f in terms(seen))]


class Redactor:
    """Masks texts and JSON values; the same value gets the same placeholder for the life
    of the redactor (make one per export or page view). Thread-safe.

    >>> r = Redactor()
    >>> r.text("+1 415 555 2671 / (415) 555-2671 / 10.0.0.1"), r.counts()
    ('<PHONE_1> / <PHONE_1> / <IP_1>', {'IP': 1, 'PHONE': 1})
    """

    def __init__(self, config: RedactConfig | None = None) -> None:
        self.config = config or RedactConfig()
        self._finder = _Finder.of(self.config)
        self._numbers: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()

    def placeholder(self, kind: str, value: str) -> str:
        with self._lock:
            of_kind = self._numbers.setdefault(kind, {})
            n = of_kind.get(value)
            if n is None:
                n = of_kind[value] = len(of_kind) + 1
        return f"<{kind}_{n}>"

    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were masked so far."""
        with self._lock:
            return {kind: len(values) for kind, values in sorted(self._numbers.items())}

    def text(self, text: str | None) -> str | None:
        """`text` with every personal value replaced by its placeholder (None stays None)."""
        if not text:
            return text
        findings = self._finder.find(text)
        if findings and "<" in text:  # (its own placeholders are no personal value: masked twice is masked once)
            findings = outside(findings, text, self.counts())
        if not findings:
            return text
        out, at = [], 0
        for f in findings:
            out.append(text[at:f.start])
            out.append(self.placeholder(f.kind, f.value))
            at = f.end
        out.append(text[at:])
        return "".join(out)

    def value(self, value: Any) -> Any:
        """A decoded JSON value with its strings masked (and numbers that are personal
        data as written, e.g. a card number stored as an integer, made placeholder strings)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**6:
            masked = self.text(str(value))
            return value if masked == str(value) else masked
        return value

    def json_text(self, text: str | None) -> str | None:
        """A JSON document (as text) with its values masked; text that is not JSON is
        masked as text."""
        if not text:
            return text
        try:
            decoded = orjson.loads(text)
        except orjson.JSONDecodeError:
            return self.text(text)
        return orjson.dumps(self.value(decoded)).decode()
