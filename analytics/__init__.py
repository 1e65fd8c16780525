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
from analytics.search import SearchQuery, search
from analytics.transcript_context import in_context
from analytics.metrics import (
    by_model, conversation, conversations, daily, latency_distribution, overview, top_models, top_tenants, top_tools,
)
from analytics.reports import ReportSpec, register_report, report_frame, write_report  # registers `report`
from analytics.resume_chain import resume_points
from analytics.resume_rehydrate import expected_window
from analytics.resume_risks import risks, thread_risks
from analytics.observed import compare, parse_observed  # (with analytics.observed_report: `report resume`)
from analytics.retention import retention  # also registers `report retention`
from analytics.backlog import backlog
from analytics.branches import branches, checkpoint_tree
from analytics.diff import diff
from analytics.history import edit_log
from analytics.subgraphs import subgraph_messages, subgraph_runs
from analytics import history_reports  # noqa: F401  (registers the branches, edits, subgraphs and backlog reports)
from analytics import history_cli  # noqa: F401  (registers `python -m analytics diff`)
from analytics import workspace  # the review workspace (also registers `annotations`, `queues`, `report annotations`)
from analytics.workspace import annotate, annotations, create_queue, progress, queue_items, queues
from analytics import search_cli  # noqa: F401,E402  (registers `search` and `report search`)
from analytics.erasure import erase, erasure_log, lift, tombstones
from analytics import erasure_cli  # noqa: F401,E402  (registers `erase`)
from analytics.exports import acting_as, exports, record_export
from analytics import exports_report  # noqa: F401,E402  (registers `report exports`)

__all__ = [
    "AnalyticsError",
    "acting_as",
    "BadRequest",
    "Filters",
    "NotFound",
    "ReportSpec",
    "SearchQuery",
    "TranscriptQuery",
    "Unsupported",
    "annotate",
    "annotations",
    "backlog",
    "branches",
    "by_model",
    "checkpoint_tree",
    "compare",
    "connect",
    "connection",
    "conversation",
    "conversations",
    "create_queue",
    "daily",
    "diff",
    "edit_log",
    "erase",
    "erasure_log",
    "expected_window",
    "exports",
    "in_context",
    "latency_distribution",
    "lift",
    "overview",
    "parse_observed",
    "progress",
    "queue_items",
    "queues",
    "read",
    "record_export",
    "register_report",
    "report_frame",
    "resume_points",
    "retention",
    "risks",
    "search",
    "search_threads",
    "subgraph_messages",
    "subgraph_runs",
    "thread_risks",
    "tombstones",
    "top_models",
    "top_tenants",
    "top_tools",
    "workspace",
    "write_report",
]
