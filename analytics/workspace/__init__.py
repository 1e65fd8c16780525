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
"""

from analytics.workspace.annotating import (
    COLUMNS, VERDICTS, Annotation, annotate, default_author, delete_annotation, edit_annotation,
)
from analytics.workspace.jsonl import ImportFailed, ImportSummary, export_jsonl, import_jsonl
from analytics.workspace.label_set import Label, define_label, labels, rename_label, retire_label
from analytics.workspace.queueing import (
    Queue, QueueItem, assign, create_queue, delete_queue, get_queue, item, mark, progress, queue_items, queues, step,
)
from analytics.workspace.resolve import Anchor
from analytics.workspace.review import (
    ReviewCounts, ThreadReview, annotations, review_counts, thread_summaries, threads_with,
)
from analytics.workspace.store import (
    ENV, Conflict, Workspace, WorkspaceError, as_workspace, workspace_of, workspace_path,
)
from analytics.workspace.views import SavedView, delete_view, get_view, save_view, saved_views
from analytics.workspace import cli  # noqa: F401  (registers `annotations`, `queues` and `report annotations`)

__all__ = [
    "COLUMNS", "ENV", "VERDICTS", "Anchor", "Annotation", "Conflict", "ImportFailed", "ImportSummary", "Label",
    "Queue", "QueueItem", "ReviewCounts", "SavedView", "ThreadReview", "Workspace", "WorkspaceError", "annotate",
    "annotations", "as_workspace", "assign", "create_queue", "default_author", "define_label", "delete_annotation",
    "delete_queue", "delete_view", "edit_annotation", "export_jsonl", "get_queue", "get_view", "import_jsonl", "item",
    "labels", "mark", "progress", "queue_items", "queues", "rename_label", "retire_label", "review_counts",
    "save_view", "saved_views", "step", "thread_summaries", "threads_with", "workspace_of", "workspace_path",
]
