"""Transcript Lens analytics: the Python API over a loaded DuckDB database.

Every function takes a DuckDB connection or a database path and returns
pandas DataFrames or plain data; nothing here imports streamlit.

>>> import analytics
>>> con = analytics.connect("demo.duckdb")  # doctest: +SKIP
"""

from analytics.db import connect, connection
from analytics.errors import AnalyticsError, BadRequest, NotFound, Unsupported
from analytics.filters import Filters
from analytics.transcript import TranscriptQuery, read, search_threads
from analytics import transcript_cli  # noqa: F401  (registers `python -m analytics transcript`)

__all__ = [
    "AnalyticsError",
    "BadRequest",
    "Filters",
    "NotFound",
    "TranscriptQuery",
    "Unsupported",
    "connect",
    "connection",
    "read",
    "search_threads",
]
