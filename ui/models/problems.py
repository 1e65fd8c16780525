"""One shape for what a page shows instead of a traceback: a `Problem` from an analytics error.

>>> from analytics.errors import NotFound
>>> problem_of(NotFound("no thread 'x'"))
Problem(kind='not_found', message="no thread 'x'")
"""

from __future__ import annotations

from dataclasses import dataclass

from analytics.errors import AnalyticsError, BadRequest, NotFound, Unsupported

_KINDS = ((BadRequest, "bad_request"), (Unsupported, "unsupported"), (NotFound, "not_found"))


@dataclass(frozen=True)
class Problem:
    """A contract error a page can show: `kind` is bad_request / unsupported / not_found."""

    kind: str
    message: str


def problem_of(exc: AnalyticsError) -> Problem:
    """The page-facing form of an analytics error (an unknown subclass is a bad request)."""
    kind = next((k for cls, k in _KINDS if isinstance(exc, cls)), "bad_request")
    return Problem(kind, str(exc))
