"""Transcript Lens analytics: the Python API over a loaded DuckDB database.

Every function takes a DuckDB connection or a database path and returns
pandas DataFrames or plain data; nothing here imports streamlit.

>>> import analytics
>>> con = analytics.connect("demo.duckdb")  # doctest: +SKIP
"""

from analytics.db import connect, connection
from analytics.errors import AnalyticsError, BadRequest, NotFound, Unsupported
from analytics.filters import Filters

__all__ = [
    "AnalyticsError",
    "BadRequest",
    "Filters",
    "NotFound",
    "Unsupported",
    "connect",
    "connection",
]
