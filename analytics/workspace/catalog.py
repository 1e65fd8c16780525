"""The review workspace's tables, declared once: name, SQLite type, nullability, meaning.

The workspace is a SQLite file, not part of the loaded DuckDB database (see
`analytics.workspace.store` for why). Its tables are created and changed only by
the numbered migrations in `analytics.workspace.migrations` (SQL frozen at the
version that introduced it, as a migration must be); these declarations are
what the tables are after the last one. tests/analytics/test_workspace_schema.py
holds every migrated workspace to them (`PRAGMA table_info`), and docs/schema.md's
workspace section is generated from them (`python scripts/schema_doc.py`).

Adding a table: append a
`Migration` creating it, declare it here, add it to `TABLES`, add an empty
`<!-- catalog: NAME -->` block to docs/schema.md and run `scripts/schema_doc.py`.

>>> ANNOTATIONS.column("verdict").type.ddl
'TEXT'
"""

from __future__ import annotations

from loaders.catalog import Column, SqlType, Table

#: SQLite's storage classes as the workspace uses them (no Arrow staging: `arrow`/`kind` unset).
TEXT = SqlType("TEXT", "TEXT")
INTEGER = SqlType("INTEGER", "INTEGER")
#: Times are TEXT in ISO 8601, UTC, microseconds, `Z` (`2025-03-01T09:00:12.500000Z`): they sort as text.
TIME = TEXT


def _c(name: str, type_: SqlType, doc: str, *, null: bool = True) -> Column:
    return Column(name, type_, null, doc)


_SCOPE = _c("scope", TEXT, "JSON list of the tenants its maker was limited to (`TRANSCRIPT_LENS_TENANTS`); NULL: "
            "none. A reader limited to some tenants sees only what was made within them")
_AUTHOR = "who (the name a reviewer typed, `--author`, or `$TRANSCRIPT_LENS_AUTHOR` / the login name from the API)"

MIGRATIONS = Table(
    "migrations",
    "one row per schema migration applied to this workspace",
    (
        _c("version", INTEGER, "the migration's number (1, 2, …); the workspace's version is the greatest", null=False),
        _c("name", TEXT, "what it changed", null=False),
        _c("applied_at", TIME, "when it was applied", null=False),
        _c("tool_version", TEXT, "the Transcript Lens version that applied it", null=False),
    ),
    primary_key=("version",),
)

WORKSPACE = Table(
    "workspace",
    "`key` / `value` pairs: `workspace_id`, `created_at`, `created_beside`, `revision`, `erasure_key`",
    (
        _c("key", TEXT, "`workspace_id` (a UUID), `created_at`, `created_beside` (the database it was made for), "
           "`revision` (bumped by every write: readers cache on it), `erasure_key` (64 hex digits, made by the "
           "first erasure: the key of `erased_digests`)", null=False),
        _c("value", TEXT, "its value"),
    ),
    primary_key=("key",),
)

LABELS = Table(
    "labels",
    "the configurable label set: name, colour, order",
    (
        _c("name", TEXT, "the label (unique; 1–60 characters)", null=False),
        _c("color", TEXT, "`#rrggbb`, lower case: the chip's colour in the app", null=False),
        _c("description", TEXT, "what the label means (shown as help)"),
        _c("position", INTEGER, "order in pickers and legends", null=False),
        _c("retired_at", TIME, "set when the label was removed from the set: no longer offered, still shown on "
           "the annotations that carry it"),
        _c("created_at", TIME, "when it was defined", null=False),
    ),
    primary_key=("name",),
)

LABEL_SCOPES = Table(
    "label_scopes",
    "the tenant scope a label was defined under; a label without a row here (the default set, one an "
    "unscoped reader defined) is offered to every reader",
    (
        _c("name", TEXT, "the label (`labels.name`; follows a rename)", null=False),
        _c("scope", TEXT, "JSON list of the tenants its maker was limited to (`TRANSCRIPT_LENS_TENANTS`): "
           "offered only to a reader limited to some of them, and to readers without a scope", null=False),
    ),
    primary_key=("name",),
)

ANNOTATIONS = Table(
    "annotations",
    "labels, verdicts and notes on a thread, a message or a checkpoint",
    (
        _c("annotation_id", TEXT, "32 hex digits: random, or from the content of an imported line that had none "
           "(importing it again adds nothing)", null=False),
        _c("target", TEXT, "`thread`, `message` or `checkpoint`", null=False),
        _c("thread_id", TEXT, "the thread (every target)", null=False),
        _c("message_id", TEXT, "message target: the message's id (what finds it again after a reload)"),
        _c("ordinal", INTEGER, "message target: its ordinal when annotated; the anchor of a message without id "
           "(with `content_digest`)"),
        _c("checkpoint_ns", TEXT, "checkpoint target: its namespace (`''` = root)"),
        _c("checkpoint_id", TEXT, "checkpoint target: its id"),
        _c("label", TEXT, "a `labels.name`, or NULL"),
        _c("verdict", TEXT, "`pass`, `fail`, or NULL"),
        _c("note", TEXT, "free text, or NULL (at least one of label, verdict, note is set)"),
        _c("author", TEXT, _AUTHOR, null=False),
        _c("created_at", TIME, "when it was made", null=False),
        _c("updated_at", TIME, "when it was last changed", null=False),
        _c("revision", INTEGER, "1, then +1 per change: an edit names the revision it read and is refused "
           "when someone changed it since", null=False),
        _c("origin", TEXT, "`app`, `api` or `import`", null=False),
        _c("role", TEXT, "message target: the message's role when annotated"),
        _c("excerpt", TEXT, "message target: its first 300 characters when annotated (shown when orphaned)"),
        _c("content_digest", TEXT, "message target: sha256 of its content when annotated (first 16 hex digits)"),
        _c("source", TEXT, "the database's source when annotated (`loads.source`, passwords masked)"),
    ),
    primary_key=("annotation_id",),
)

QUEUES = Table(
    "queues",
    "review queues: a list of threads to walk, made from a Conversations view",
    (
        _c("queue_id", INTEGER, "1, 2, … (never reused)", null=False),
        _c("name", TEXT, "unique name", null=False),
        _c("description", TEXT, "what the queue is for"),
        _c("created_by", TEXT, _AUTHOR, null=False),
        _c("created_at", TIME, "when it was made", null=False),
        _c("view", TEXT, "JSON: the Conversations view it was made from (its URL query parameters)"),
        _c("matching", INTEGER, "threads the view matched when the queue was made", null=False),
        _c("sample_size", INTEGER, "size of the random sample taken of them; NULL when every thread was taken"),
        _c("seed", INTEGER, "the sample's seed (the same view, size and seed give the same threads)"),
        _c("source", TEXT, "the database's source when the queue was made (`loads.source`, passwords masked)"),
        _SCOPE,
    ),
    primary_key=("queue_id",),
)

QUEUE_ITEMS = Table(
    "queue_items",
    "the threads of each queue, in walking order",
    (
        _c("queue_id", INTEGER, "the queue", null=False),
        _c("position", INTEGER, "1, 2, … in walking order (the view's sort)", null=False),
        _c("thread_id", TEXT, "the thread (once per queue)", null=False),
        _c("assignee", TEXT, "the reviewer it is assigned to; NULL: anyone"),
        _c("status", TEXT, "`pending` or `done`", null=False),
        _c("done_by", TEXT, "who marked it done"),
        _c("done_at", TIME, "when"),
    ),
    primary_key=("queue_id", "position"),
)

SAVED_VIEWS = Table(
    "saved_views",
    "named app views: a page and its URL query parameters",
    (
        _c("view_id", INTEGER, "1, 2, … (never reused)", null=False),
        _c("name", TEXT, "unique name", null=False),
        _c("page", TEXT, "the page's URL path (`conversations`, `transcript`, `overview`, …)", null=False),
        _c("params", TEXT, "JSON object {parameter: [values]}: the page's query parameters, `db` left out",
           null=False),
        _c("created_by", TEXT, _AUTHOR, null=False),
        _c("created_at", TIME, "when it was saved", null=False),
        _c("updated_at", TIME, "when it was last saved over", null=False),
        _SCOPE,
    ),
    primary_key=("view_id",),
)

_KIND = _c("kind", TEXT, "`thread`, `tenant` or `session`: what `value` names", null=False)
_WHO = "who (`--by`, else the login name; the app's signed-in user)"

TOMBSTONES = Table(
    "tombstones",
    "what was erased and must stay out of the database: every load holds these threads back until lifted",
    (
        _c("tombstone_id", INTEGER, "1, 2, … (never reused)", null=False),
        _KIND,
        _c("value", TEXT, "the thread id, tenant id or session id", null=False),
        _c("reason", TEXT, "why (the erasure request, a ticket)", null=False),
        _c("by", TEXT, _WHO, null=False),
        _c("at", TIME, "when it was recorded", null=False),
        _c("lifted_at", TIME, "when it was lifted (loads bring the rows back from then on); NULL: standing"),
        _c("lifted_by", TEXT, "who lifted it"),
    ),
    primary_key=("tombstone_id",),
)

TOMBSTONE_THREADS = Table(
    "tombstone_threads",
    "the thread ids each tombstone covered: held back by every load whatever tenant or session the load "
    "parses from them (only ever added to)",
    (
        _c("tombstone_id", INTEGER, "the tombstone", null=False),
        _c("thread_id", TEXT, "a thread it covered: at the erasure, or in a load that held the thread back "
           "under it", null=False),
        _c("at", TIME, "when it was first recorded", null=False),
    ),
    primary_key=("tombstone_id", "thread_id"),
)

ERASED_DIGESTS = Table(
    "erased_digests",
    "what each erasure looked for (its scan's texts), as keyed digests, never as text: a later erasure finds "
    "the text again where it is still written (`analytics.erasure.digests`; only ever added to)",
    (
        _c("tombstone_id", INTEGER, "the tombstone", null=False),
        _c("prefix", INTEGER, "a 32-bit keyed fingerprint of the text's first 8 bytes (ASCII letters in lower "
           "case): where a search confirms a match", null=False),
        _c("length", INTEGER, "the text's length in bytes", null=False),
        _c("form", INTEGER, "how the text is written: 0 UTF-8, 1 JSON-escaped, 2 CSV-quoted", null=False),
        _c("digest", TEXT, "32 hex digits: BLAKE2b of the text's bytes (ASCII letters in lower case), keyed by the "
           "workspace's `erasure_key`", null=False),
    ),
    primary_key=("tombstone_id", "digest"),
)

ERASURE_LOG = Table(
    "erasure_log",
    "append-only: every erasure, lift and load that held erased threads back (who, when, why, what)",
    (
        _c("entry_id", INTEGER, "1, 2, … in order", null=False),
        _c("at", TIME, "when", null=False),
        _c("action", TEXT, "`erase`, `lift`, or `held_back` (a load dropped tombstoned threads it read)",
           null=False),
        _KIND,
        _c("value", TEXT, "the thread id, tenant id or session id", null=False),
        _c("reason", TEXT, "why (erase, lift); NULL for a load"),
        _c("by", TEXT, _WHO, null=False),
        _c("db", TEXT, "the database it was done to"),
        _c("threads", INTEGER, "threads removed (or held back)", null=False),
        _c("rows", TEXT, "JSON object {table: rows removed}", null=False),
    ),
    primary_key=("entry_id",),
)

EXPORTS = Table(
    "exports",
    "append-only: every report, transcript, search and diff the CLI wrote, every download from the app",
    (
        _c("export_id", INTEGER, "1, 2, … in order", null=False),
        _c("at", TIME, "when", null=False),
        _c("who", TEXT, "the app's signed-in user, else the OS user", null=False),
        _c("origin", TEXT, "`cli`, `app` or `api`", null=False),
        _c("what", TEXT, "the report kind, `transcript`, `search`, `diff`, or the app download's name", null=False),
        _c("arguments", TEXT, "JSON object: the filters and options it was given", null=False),
        _c("rows", INTEGER, "rows written; NULL when not counted"),
        _c("masked", INTEGER, "1 when personal data was masked, else 0", null=False),
        _c("target", TEXT, "the file written (CLI, API), or the download's file name"),
        _c("db", TEXT, "the database it was read from"),
    ),
    primary_key=("export_id",),
)

EXPORT_THREADS = Table(
    "export_threads",
    "the threads each export held (its rows' `thread_id`, as stored, masked or not): an erasure names the "
    "exports that held an erased thread (only ever added to)",
    (
        _c("export_id", INTEGER, "the export", null=False),
        _c("thread_id", TEXT, "a thread one of its rows belonged to", null=False),
    ),
    primary_key=("export_id", "thread_id"),
)

OTHER_WORKSPACES = Table(
    "other_workspaces",
    "the workspaces other than this one written for this database (`--workspace FILE`): an erasure purges "
    "and scans each",
    (
        _c("path", TEXT, "the workspace file (absolute)", null=False),
        _c("db", TEXT, "the database it was written for (absolute)", null=False),
        _c("at", TIME, "when it was first written for it", null=False),
    ),
    primary_key=("path",),
)

#: Every table of the workspace after the last migration, in docs/schema.md's order.
TABLES: tuple[Table, ...] = (
    ANNOTATIONS, LABELS, LABEL_SCOPES, QUEUES, QUEUE_ITEMS, SAVED_VIEWS, TOMBSTONES, TOMBSTONE_THREADS, ERASED_DIGESTS, ERASURE_LOG, EXPORTS, EXPORT_THREADS,
    OTHER_WORKSPACES, WORKSPACE, MIGRATIONS,
)
