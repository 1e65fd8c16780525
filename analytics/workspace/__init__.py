"""The review workspace: annotations, labels, review queues and saved views that survive every reload.

A SQLite file beside the loaded database (`lens.duckdb.workspace.sqlite`, see
`store` for where and why), written by the app, the CLI and this API alike.
Everything a reviewer writes is keyed by what a store never changes (thread id,
message id, checkpoint id), so a reload — full, incremental, or of another source
into the same path — keeps it; what a reload removed is shown as orphaned
(`resolve`). Every function that takes a workspace also takes the database's path.

>>> from analytics import workspace
>>> workspace.annotate("lens.duckdb", "acme:web:sess-1", label="good answer", author="ana")  # doctest: +SKIP
>>> workspace.annotations("lens.duckdb", status="orphaned")  # doctest: +SKIP
>>> q = workspace.create_queue("lens.duckdb", "weekly sample", sample=20, seed=1)  # doctest: +SKIP
>>> workspace.progress("lens.duckdb")  # doctest: +SKIP

The names are imported on first use (PEP 562, as in `analytics`): the load reads the
tombstones through `analytics.workspace.store` without the query layer's imports.
"""

# (No `from __future__ import annotations`: it would bind the name `annotations`, which is API here.)
import importlib
import importlib.util
from typing import Any

#: Each public name and the module that defines it.
_NAMES = {
    **dict.fromkeys((
        "COLUMNS", "VERDICTS", "Annotation", "annotate", "default_author", "delete_annotation",
        "edit_annotation",
    ), "analytics.workspace.annotating"),
    **dict.fromkeys((
        "ImportFailed", "ImportSummary", "export_jsonl", "import_jsonl",
    ), "analytics.workspace.jsonl"),
    **dict.fromkeys((
        "Label", "define_label", "labels", "rename_label", "retire_label",
    ), "analytics.workspace.label_set"),
    **dict.fromkeys((
        "Queue", "QueueItem", "assign", "create_queue", "delete_queue", "get_queue", "item", "mark",
        "progress", "queue_items", "queues", "step",
    ), "analytics.workspace.queueing"),
    **dict.fromkeys((
        "Anchor",
    ), "analytics.workspace.resolve"),
    **dict.fromkeys((
        "ReviewCounts", "ThreadReview", "annotations", "review_counts", "thread_summaries",
        "threads_with",
    ), "analytics.workspace.review"),
    **dict.fromkeys((
        "ENV", "Conflict", "Workspace", "WorkspaceError", "as_workspace", "workspace_of",
        "workspace_path",
    ), "analytics.workspace.store"),
    **dict.fromkeys((
        "SavedView", "delete_view", "get_view", "save_view", "saved_views",
    ), "analytics.workspace.views"),
}


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        if not name.startswith("_") and importlib.util.find_spec(f"analytics.workspace.{name}") is not None:
            return importlib.import_module(f"analytics.workspace.{name}")  # a submodule, as the eager imports gave it
        raise AttributeError(f"module 'analytics.workspace' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = sorted([*_NAMES])  # (the public names are `_NAMES`' keys)
