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
from analytics.resume import expected_window, resume_points, risks, thread_risks
from analytics.observed import compare, parse_observed  # also registers `python -m analytics report resume`

__all__ = [
    "AnalyticsError",
    "BadRequest",
    "Filters",
    "NotFound",
    "TranscriptQuery",
    "Unsupported",
    "compare",
    "connect",
    "connection",
    "expected_window",
    "parse_observed",
    "read",
    "resume_points",
    "risks",
    "search_threads",
    "thread_risks",
]
