"""What a redaction config (`[redact]`, `analytics.redact.RedactConfig`) may ask for, and its
values checked in lines that never echo them.

A config is an operator's file, but what it asks for is paid by every process that masks:
each pattern is compiled by RE2 into a program, and its matcher caches states as it reads.
10,000 patterns such as `[a-z]{1,1000}x1` (a 288 KB file) compiled to 20 million instructions:
two minutes to read and 1.6 GB at its peak. So a config has at most `MAX_PATTERNS` patterns,
whose programs (RE2's size, which counts a repetition `{1,1000}` a thousand times) come to at
most `MAX_PROGRAM` instructions together, each compiled with `PATTERN_MEMORY` as RE2's budget
(what its matcher caches stays within it: past it, RE2 matches without the cache, still in
linear time); and at most `MAX_TERMS` terms of at most `MAX_TERM` characters each. Past a limit,
the config is refused in one line naming the file, the key and the limit.

An error about a value names the key, the position and what was expected, and the value only by
its type and size: a term is a person's name, a pattern can spell an e-mail, and the line goes to
a terminal, a log, a page of the app. Text an error must quote (RE2's reason, which quotes part
of the pattern) is masked first (`masked`).

>>> described("alice@example.com"), described([1, 2]), described(5)
('a string of 17 characters', 'a list of 2 values', 'an integer')
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from analytics.errors import BadRequest

#: The most patterns a config may have.
MAX_PATTERNS = 1_000
#: The most RE2 instructions a config's patterns may compile to, together (`EMP-\d{6}`: 14; `[a-z]{1,1000}`: 2,003).
MAX_PROGRAM = 100_000
#: RE2's memory budget for each pattern (its program and the states its matcher caches).
PATTERN_MEMORY = 1 << 18
#: The most terms a config may have, and the most characters a term may have.
MAX_TERMS, MAX_TERM = 50_000, 200
#: A kind's name: its placeholder is `<KIND_1>`.
KIND = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

_TYPES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list",
          tuple: "a list", dict: "a table"}


def described(value: Any) -> str:
    """What `value` is, by its type and size, never its text."""
    kind = _TYPES.get(type(value), f"a {type(value).__name__}")
    if isinstance(value, str):
        return f"{kind} of {len(value)} characters"
    if isinstance(value, (list, tuple)):
        return f"{kind} of {len(value)} values"
    if isinstance(value, dict):
        return f"{kind} of {len(value)} keys"
    return kind


def masked(text: str) -> str:
    """`text` with the personal values the built-in kinds find masked (an error quoting a config)."""
    from analytics.redact import Redactor  # (this module is imported by it)

    return Redactor().text(text)


def refused(path: str | Path, key: str, expected: str, value: Any) -> BadRequest:
    return BadRequest(f"{path}: [redact] {key} must be {expected}, not {described(value)}")


def string(path: str | Path, table: dict, key: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise refused(path, key, "a string", value)
    return value


def strings(path: str | Path, table: dict, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """`table[key]` as a list of strings: a single string is refused, not read letter by letter (or
    as nothing to mask)."""
    value = table.get(key, default)
    expected = f'a list of strings ({key} = ["…", "…"])'
    if not isinstance(value, (list, tuple)):
        raise refused(path, key, expected, value)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise refused(path, f"{key}[{i}]", f"a string ({key} is {expected})", item)
    return tuple(value)


def kind(key: str, name: str, shown: bool = False) -> str:
    """`name`, a kind's name (`KIND`), or `BadRequest` naming `key`, and `name` itself masked when
    `shown` (a pattern's kind is its key in the file: the line says which)."""
    if not KIND.fullmatch(name):
        what = masked(repr(name)) if shown and len(name) <= 60 else described(name)
        raise BadRequest(f"{key} must be a name of letters, digits and underscores (its placeholder is <KIND_1>), "
                         f"not {what}")
    return name


def table_of_strings(path: str | Path, table: dict, key: str) -> dict[str, str]:
    value = table.get(key, {})
    expected = f"a table of kind = 'regular expression' ([redact.{key}])"
    if not isinstance(value, dict):
        raise refused(path, key, expected, value)
    if len(value) > MAX_PATTERNS:
        raise BadRequest(f"{path}: [redact] {key}: {len(value):,} patterns, more than the {MAX_PATTERNS:,} a config "
                         "may have")
    for i, (name, pattern) in enumerate(value.items()):
        try:
            kind(f"{key}: the kind of pattern {i + 1}", name, shown=True)
        except BadRequest as exc:
            raise BadRequest(f"{path}: [redact] {exc}") from None
        if not isinstance(pattern, str):
            raise refused(path, f"{key}.{name}", f"a regular expression (a string; {key} is {expected})", pattern)
    return dict(value)


def terms(given: tuple[str, ...]) -> tuple[str, ...]:
    """`given`, or `BadRequest` when there are more than `MAX_TERMS` or one is longer than `MAX_TERM`."""
    if len(given) > MAX_TERMS:
        raise BadRequest(f"terms: {len(given):,} terms, more than the {MAX_TERMS:,} a config may have")
    for i, term in enumerate(given):
        if len(term) > MAX_TERM:
            raise BadRequest(f"terms[{i}]: a term of {len(term):,} characters, more than the {MAX_TERM} a term may have")
    return given


def regions(given: tuple[str, ...], known) -> tuple[str, ...]:
    """`given` in upper case, or `BadRequest` naming each one not `known` (by its position, and by
    itself when it has the shape of a code: two or three letters)."""
    upper = tuple(r.upper() for r in given)
    unknown = [r if re.fullmatch(r"[A-Z]{2,3}", r) else f"phone_regions[{i}] ({described(r)})"
               for i, r in enumerate(upper) if r not in known]
    if unknown:
        raise BadRequest(f"unknown phone region(s) {', '.join(unknown)} (ISO 3166 codes such as US, GB, DE)")
    return upper


def linear(kind: str, pattern: str):
    """`pattern` compiled by RE2 within `PATTERN_MEMORY`, which matches in time linear in the text
    whatever the pattern (Python's `re` backtracks: `EMP-(\\w+)+-\\d{6}` takes minutes on 40
    characters); a pattern RE2 cannot run (look-arounds, back-references) is refused in one line
    naming it."""
    import re2

    options = re2.Options()
    options.log_errors = False  # (its errors are raised, not logged to stderr)
    options.max_mem = PATTERN_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise BadRequest(f"redaction pattern {kind!r} is not a valid regular expression for RE2 (linear-time "
                         f"matching: no look-arounds or back-references): {masked(reason)}") from None


def compiled(patterns: tuple[tuple[str, str], ...]) -> list:
    """Each pattern compiled (`linear`), in order; `BadRequest` naming the one past `MAX_PATTERNS`
    or whose program brings the total past `MAX_PROGRAM` (each is compiled only while the total is within)."""
    if len(patterns) > MAX_PATTERNS:
        raise BadRequest(f"patterns: {len(patterns):,} patterns, more than the {MAX_PATTERNS:,} a config may have")
    out, total = [], 0
    for name, pattern in patterns:
        regex = linear(name, pattern)
        total += max(regex.programsize, 0)
        if total > MAX_PROGRAM:
            raise BadRequest(f"patterns: the pattern {name!r} brings what they compile to past {MAX_PROGRAM:,} RE2 "
                             "instructions, the most a config's patterns may take together (a repetition such as "
                             "{1,1000} counts its pattern a thousand times): fewer patterns or smaller repetitions")
        out.append(regex)
    return out
