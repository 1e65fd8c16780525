"""Who writes to the workspace: the author every annotation, queue, view and erasure records.

Its own module so that the erasure code a load runs (`analytics.erasure`) does not
import the annotation queries (and with them DuckDB's and pandas' Python sides).

>>> check_author("  ana ")
'ana'
"""

from __future__ import annotations

import getpass
import os

from analytics.errors import BadRequest

AUTHOR_ENV = "TRANSCRIPT_LENS_AUTHOR"
AUTHOR_MAX = 100


def default_author() -> str:
    """Who the API writes as: `$TRANSCRIPT_LENS_AUTHOR`, else the login name."""
    try:
        fallback = getpass.getuser()
    except (KeyError, OSError):
        fallback = "unknown"
    return os.environ.get(AUTHOR_ENV) or fallback


def check_author(author: object) -> str:
    """`author` stripped, or `BadRequest` when it is empty or too long."""
    if not isinstance(author, str) or not author.strip():
        raise BadRequest(f"an author is a non-empty name, got {author!r}")
    if len(author.strip()) > AUTHOR_MAX:
        raise BadRequest(f"an author name has at most {AUTHOR_MAX} characters")
    return author.strip()
