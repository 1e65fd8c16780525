"""TOML text read with its nesting bounded, and one table of a TOML config file, read with
errors that name the file and the key.

Python's `tomllib` recurses once per nesting level of arrays and inline tables, so a 4 KB
value of 2,000 `[` raises `RecursionError`. `loads` measures the nesting first, without
recursion, and refuses a text nested deeper than `MAX_DEPTH` with a `tomllib.TOMLDecodeError`
naming the line, which every reader of TOML already reports in one line.

>>> loads("x = " + "[" * 201 + "]" * 201)
Traceback (most recent call last):
...
analytics.tomltable.TooDeep: nested deeper than 200 levels (at line 1, column 205)

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "x.toml"; _ = p.write_text("[app]\\nread_only = true\\n")
>>> read_table(p, "app", {"read_only", "redact"})
{'read_only': True}
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from analytics.errors import BadRequest
from analytics.user_files import read_user_text


#: The deepest nesting of arrays and inline tables read (as `analytics.jsontext.MAX_DEPTH`).
MAX_DEPTH = 200

# What may hold a bracket that is no nesting: comments and the four kinds of strings.
_TOKEN = re.compile(r'#[^\n]*|"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|[\[\]{}]',
                    re.DOTALL)


class TooDeep(tomllib.TOMLDecodeError):
    """A TOML text nested deeper than `MAX_DEPTH` levels: not parsed."""


def depth_at(text: str, max_depth: int = MAX_DEPTH) -> int | None:
    """The offset in `text` where its arrays and inline tables (outside strings and comments)
    first go deeper than `max_depth` levels; None when they never do (a linear scan).

    >>> depth_at('a = "[[[[" # [[[[\\nb = [[1]]', 1)
    23
    """
    level = 0
    for m in _TOKEN.finditer(text):
        ch = m.group()
        if ch in "[{":
            level += 1
            if level > max_depth:
                return m.start()
        elif ch in "]}":
            level = max(level - 1, 0)
    return None


def loads(text: str, max_depth: int = MAX_DEPTH) -> dict:
    """`tomllib.loads(text)`, refusing with `TooDeep` (a `tomllib.TOMLDecodeError`) a text
    nested deeper than `max_depth` levels.

    >>> loads("[a]\\nb = [[1], {c = 2}]")
    {'a': {'b': [[1], {'c': 2}]}}
    """
    if text.count("[") + text.count("{") > max_depth:
        at = depth_at(text, max_depth)
        if at is not None:
            line = text.count("\n", 0, at) + 1
            column = at - (text.rfind("\n", 0, at) + 1) + 1
            raise TooDeep(f"nested deeper than {max_depth} levels (at line {line}, column {column})")
    return tomllib.loads(text)


def read_table(path: str | os.PathLike, name: str, known: set[str], error: type[Exception] = BadRequest) -> dict:
    """The `[name]` table of the TOML file at `path` ({} when absent); `error` (naming the file)
    when the file is missing, not a regular file, too big (`analytics.user_files`) or not TOML,
    or the table has a key not in `known`."""
    p = Path(path)
    try:
        data = loads(read_user_text(p, "config file"))
    except FileNotFoundError:
        raise error(f"{p}: no such config file") from None
    except BadRequest as exc:
        raise error(str(exc)) from None
    except OSError as exc:
        raise error(f"{p}: cannot read the config file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{p}: not a TOML file ({exc})") from None
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise error(f"{p}: [{name}] must be a table")
    unknown = set(table) - known
    if unknown:
        raise error(f"{p}: unknown [{name}] key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    return table
