"""The page of rows a list call returns: its `limit` and `offset`, checked before they reach SQL.

>>> check_limit(50), check_offset(0)
(50, 0)
"""

from __future__ import annotations

from analytics.errors import BadRequest


def check_limit(limit: int) -> int:
    """`limit` if a positive integer (not a bool), else BadRequest."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise BadRequest(f"limit must be a positive integer, got {limit!r}")
    return limit


def check_offset(offset: int) -> int:
    """`offset` if an integer >= 0 (not a bool), else BadRequest."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise BadRequest(f"offset must be an integer >= 0, got {offset!r}")
    return offset
