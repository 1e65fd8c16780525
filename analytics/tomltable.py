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
from analytics.user_files import read_user_text


def read_table(path: str | os.PathLike, name: str, known: set[str], error: type[Exception] = BadRequest) -> dict:
    """The `[name]` table of the TOML file at `path` ({} when absent); `error` (naming the file)
    when the file is missing, not a regular file, too big (`analytics.user_files`) or not TOML,
    or the table has a key not in `known`."""
    p = Path(path)
    try:
        data = tomllib.loads(read_user_text(p, "config file"))
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
