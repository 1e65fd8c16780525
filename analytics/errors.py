"""Typed errors of the analytics API (contract §4)."""


class AnalyticsError(Exception):
    """Base class: every error the analytics API raises on purpose."""


class BadRequest(AnalyticsError, ValueError):
    """The request itself is invalid (bad speaker, index with a time range, …)."""


class Unsupported(AnalyticsError):
    """The data cannot answer this kind of request (e.g. no timestamps)."""


class NotFound(AnalyticsError, LookupError):
    """The named thread (or other object) is not in the database."""


class NotADatabase(Unsupported):
    """The file is not a Transcript Lens database a reader opens (not DuckDB, or holding code)."""


class OlderSchema(Unsupported):
    """The database was written under another schema version: load its source again."""


class StaleTranscript(UserWarning):
    """Warned by `analytics.read` for a thread whose transcript is not its latest root
    checkpoint's (that one did not decode: `threads.stale_reason`, docs/contract.md)."""
