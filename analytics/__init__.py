"""Transcript Lens analytics: the Python API over a loaded DuckDB database.

Every function takes a DuckDB connection or a database path and returns
pandas DataFrames or plain data; nothing here imports streamlit.

The names below are imported on first use (PEP 562), so a load that only needs the
database lock or the tombstones (`analytics.dblock`, `analytics.erasure`) does not pay
for pandas, pyarrow and every page's queries: an unchanged source's incremental load
is answered in the time the interpreter takes to start. The command-line subcommands
and CSV reports register themselves when their module is imported; `register_all()`
imports every one (the CLI and the report lookup call it).

>>> import analytics
>>> con = analytics.connect("demo.duckdb")  # doctest: +SKIP
"""

# (No `from __future__ import annotations`: it would bind the name `annotations`, which is API here.)
import importlib
import importlib.util
from typing import Any

#: Each public name and the module that defines it.
_NAMES = {
    "connect": "analytics.db", "connection": "analytics.db", "sql": "analytics.frames",
    "AnalyticsError": "analytics.errors", "BadRequest": "analytics.errors", "NotFound": "analytics.errors",
    "Unsupported": "analytics.errors", "StaleTranscript": "analytics.errors",
    "Filters": "analytics.filters",
    "TranscriptQuery": "analytics.transcript", "read": "analytics.transcript", "search_threads": "analytics.transcript",
    "SearchQuery": "analytics.searching", "search": "analytics.searching",
    "in_context": "analytics.transcript.context",
    **dict.fromkeys(
        ("by_model", "conversation", "conversations", "daily", "latency_distribution", "overview", "top_models",
         "top_tenants", "top_tools"), "analytics.metrics"),
    **dict.fromkeys(("ReportSpec", "register_report"), "analytics.reporting.spec"),
    **dict.fromkeys(("report_frame", "write_report"), "analytics.reporting.writer"),
    "resume_points": "analytics.resume.chain",
    "expected_window": "analytics.resume.rehydrate",
    "risks": "analytics.resume.risk_figures", "thread_risks": "analytics.resume.risk_figures",
    "compare": "analytics.observed", "parse_observed": "analytics.observed",
    "retention": "analytics.retention_report",
    "backlog": "analytics.history.backlog",
    "outcomes": "analytics.conversation_outcomes.report",
    **dict.fromkeys(("topics", "topic_overview", "topic_trend"), "analytics.topic_mining.report"),
    "patterns": "analytics.topic_mining.patterns",
    "compare_cohorts": "analytics.cohorts.compare", "costs": "analytics.cohorts.costs",
    "branches": "analytics.history.branches", "checkpoint_tree": "analytics.history.branches",
    "diff": "analytics.history.diff",
    "edit_log": "analytics.history.edits",
    "subgraph_messages": "analytics.subgraphs", "subgraph_runs": "analytics.subgraphs",
    **dict.fromkeys(("annotate", "annotations", "create_queue", "progress", "queue_items", "queues"),
                    "analytics.workspace"),
    **dict.fromkeys(("erase", "erasure_log", "lift", "tombstones"), "analytics.erasure"),
    **dict.fromkeys(("acting_as", "exports", "record_export"), "analytics.export_log"),
}

#: The modules that register a subcommand (`analytics.cli.command`) or a CSV report
#: (`analytics.reporting.spec.register_report`) when imported (`analytics.observed` brings its report module in).
#: The built-in kinds come first: `report --help` lists each kind's own options in the order kinds were registered.
REGISTRARS = (
    "analytics.reporting.kinds", "analytics.reporting.cli", "analytics.transcript.cli", "analytics.observed",
    "analytics.retention_report", "analytics.history.reports", "analytics.history.cli", "analytics.workspace.cli",
    "analytics.search_cli", "analytics.erasure.cli", "analytics.exports_report", "analytics.conversation_outcomes.report",
    "analytics.topic_mining.report", "analytics.topic_mining.patterns",
    "analytics.cohorts.report",
)


def register_all() -> None:
    """Import every module that registers a subcommand or a report (cheap once done).

    >>> register_all(); from analytics.reporting.spec import REPORTS; "conversations" in REPORTS
    True
    """
    for module in REGISTRARS:
        importlib.import_module(module)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        # A submodule (`analytics.metrics.X` after `import analytics`), as the eager imports gave it.
        if not name.startswith("_") and importlib.util.find_spec(f"analytics.{name}") is not None:
            return importlib.import_module(f"analytics.{name}")
        raise AttributeError(f"module 'analytics' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = sorted([*_NAMES, "workspace"])  # (the public names are `_NAMES`' keys and the subpackage)
