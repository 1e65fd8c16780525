"""One table of a TOML config file, read with errors that name the file and the key.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "x.toml"; _ = p.write_text("[app]\\nread_only = true\\n")
>>> read_table(p, "app", {"read_only", "redact"})
{'read_only': True}
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from analytics.errors import BadRequest


def read_table(path: str | os.PathLike, name: str, known: set[str], error: type[Exception] = BadRequest) -> dict:
    """The `[name]` table of the TOML file at `path` ({} when absent); `error` (naming the file)
    when the file is missing or not TOML, or the table has a key not in `known`."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{p}: no such config file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{p}: not a TOML file ({exc})") from None
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise error(f"{p}: [{name}] must be a table")
    unknown = set(table) - known
    if unknown:
        raise error(f"{p}: unknown [{name}] key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    return table
