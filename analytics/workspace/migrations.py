"""The workspace's schema, as numbered migrations applied in order, each once.

A workspace records the migrations it has had in its `migrations` table. Opening
one applies the missing ones in a single `BEGIN IMMEDIATE` transaction (two
processes opening an old workspace at once: the second waits, then finds
nothing left to do), after copying the file to `<workspace>.v<N>.bak` when it
already holds data and one of them changes what is there. A migration that only
adds empty tables (and their indexes and triggers) is marked `adds_only`: it
leaves every row where it was, so a copy would protect nothing — and would keep,
outside the purge of an erasure, the annotations of a thread that the very
erasure upgrading the workspace is removing. A workspace with a migration this code does not know (made
by a newer Transcript Lens) is refused, never written.

A migration's SQL is frozen once released: change the schema by appending a new
`Migration` (next number) and updating `analytics.workspace.catalog`, whose
declarations the tests hold every migrated workspace to. Migration 2 adds the
erasure tombstones (docs/privacy.md) and two append-only logs (the erasure log
and the export log), whose triggers refuse any UPDATE or DELETE; migration 3 the
thread ids each tombstone covered (`tombstone_threads`), kept the same way; migration 4 the
other workspaces written for the database (`other_workspaces`) and the threads each export held
(`export_threads`); migration 5 the keyed digests of the text each erasure looked for (`erased_digests`); migration 6
the tenant scope a label was defined under (`label_scopes`).

>>> [m.version for m in MIGRATIONS][:3]
[1, 2, 3]
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str  # one or more statements (sqlite3's executescript is not used: it commits on its own)
    adds_only: bool = False  # only CREATEs new tables, indexes, triggers: no copy of the file before it


_V1 = """
CREATE TABLE workspace (
    key TEXT NOT NULL PRIMARY KEY,
    value TEXT
);
CREATE TABLE labels (
    name TEXT NOT NULL PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 60 AND name = trim(name)),
    color TEXT NOT NULL CHECK (length(color) = 7 AND color GLOB '#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'),
    description TEXT,
    position INTEGER NOT NULL,
    retired_at TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE annotations (
    annotation_id TEXT NOT NULL PRIMARY KEY,
    target TEXT NOT NULL CHECK (target IN ('thread', 'message', 'checkpoint')),
    thread_id TEXT NOT NULL,
    message_id TEXT,
    ordinal INTEGER CHECK (ordinal >= 0),
    checkpoint_ns TEXT,
    checkpoint_id TEXT,
    label TEXT REFERENCES labels (name) ON UPDATE CASCADE,
    verdict TEXT CHECK (verdict IN ('pass', 'fail')),
    note TEXT,
    author TEXT NOT NULL CHECK (length(author) > 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1,
    origin TEXT NOT NULL CHECK (origin IN ('app', 'api', 'import')),
    role TEXT,
    excerpt TEXT,
    content_digest TEXT,
    source TEXT,
    CHECK (label IS NOT NULL OR verdict IS NOT NULL OR note IS NOT NULL),
    CHECK (CASE target
        WHEN 'thread' THEN message_id IS NULL AND ordinal IS NULL AND checkpoint_id IS NULL
        WHEN 'message' THEN (message_id IS NOT NULL OR ordinal IS NOT NULL) AND checkpoint_id IS NULL
        WHEN 'checkpoint' THEN checkpoint_id IS NOT NULL AND checkpoint_ns IS NOT NULL
            AND message_id IS NULL AND ordinal IS NULL
    END)
);
CREATE INDEX annotations_thread ON annotations (thread_id);
CREATE INDEX annotations_label ON annotations (label);
CREATE TABLE queues (
    queue_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    description TEXT,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    view TEXT,
    matching INTEGER NOT NULL,
    sample_size INTEGER,
    seed INTEGER,
    source TEXT,
    scope TEXT CHECK (scope IS NULL OR (json_valid(scope) AND json_type(scope) = 'array'))
);
CREATE TABLE queue_items (
    queue_id INTEGER NOT NULL REFERENCES queues (queue_id) ON DELETE CASCADE,
    position INTEGER NOT NULL CHECK (position >= 1),
    thread_id TEXT NOT NULL,
    assignee TEXT,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    done_by TEXT,
    done_at TEXT,
    PRIMARY KEY (queue_id, position),
    UNIQUE (queue_id, thread_id)
);
CREATE INDEX queue_items_assignee ON queue_items (queue_id, assignee);
CREATE TABLE saved_views (
    view_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    page TEXT NOT NULL,
    params TEXT NOT NULL CHECK (json_valid(params) AND json_type(params) = 'object'),
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    scope TEXT CHECK (scope IS NULL OR (json_valid(scope) AND json_type(scope) = 'array'))
);
INSERT INTO labels (name, color, description, position, created_at) VALUES
    ('good answer', '#2e7d32', 'Correct, helpful and complete', 1, :now),
    ('wrong answer', '#c62828', 'Factually wrong or wrong action taken', 2, :now),
    ('lost context', '#ef6c00', 'Forgot or contradicted earlier turns (e.g. after a restart)', 3, :now),
    ('hallucination', '#6a1b9a', 'Made up facts, tools or results', 4, :now),
    ('tool misuse', '#00838f', 'Wrong tool, wrong arguments, or ignored a tool error', 5, :now),
    ('needs follow-up', '#1565c0', 'Someone should look at this again', 6, :now)
"""

# Two logs an auditor relies on: rows are only ever added (a trigger refuses a change or a
# removal, whoever asks: the app, the CLI, or someone with the sqlite3 shell and no intent
# to bypass triggers). Tombstones may be lifted (lifted_at/lifted_by set once), never removed.
_V2 = """
CREATE TABLE tombstones (
    tombstone_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('thread', 'tenant', 'session')),
    value TEXT NOT NULL CHECK (length(value) > 0),
    reason TEXT NOT NULL CHECK (length(reason) > 0),
    by TEXT NOT NULL CHECK (length(by) > 0),
    at TEXT NOT NULL,
    lifted_at TEXT,
    lifted_by TEXT,
    CHECK ((lifted_at IS NULL) = (lifted_by IS NULL))
);
CREATE UNIQUE INDEX tombstones_standing ON tombstones (kind, value) WHERE lifted_at IS NULL;
CREATE TRIGGER tombstones_kept BEFORE DELETE ON tombstones
BEGIN SELECT RAISE(ABORT, 'tombstones are never deleted: lift one instead'); END;
CREATE TRIGGER tombstones_lift_once BEFORE UPDATE ON tombstones
WHEN OLD.lifted_at IS NOT NULL OR NEW.kind IS NOT OLD.kind OR NEW.value IS NOT OLD.value
    OR NEW.reason IS NOT OLD.reason OR NEW.by IS NOT OLD.by OR NEW.at IS NOT OLD.at
    OR NEW.tombstone_id IS NOT OLD.tombstone_id
BEGIN SELECT RAISE(ABORT, 'a tombstone can only be lifted, once'); END;
CREATE TABLE erasure_log (
    entry_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('erase', 'lift', 'held_back')),
    kind TEXT NOT NULL CHECK (kind IN ('thread', 'tenant', 'session')),
    value TEXT NOT NULL,
    reason TEXT,
    by TEXT NOT NULL,
    db TEXT,
    threads INTEGER NOT NULL DEFAULT 0,
    rows TEXT NOT NULL CHECK (json_valid(rows) AND json_type(rows) = 'object')
);
CREATE TRIGGER erasure_log_no_update BEFORE UPDATE ON erasure_log
BEGIN SELECT RAISE(ABORT, 'the erasure log is append-only'); END;
CREATE TRIGGER erasure_log_no_delete BEFORE DELETE ON erasure_log
BEGIN SELECT RAISE(ABORT, 'the erasure log is append-only'); END;
CREATE TABLE exports (
    export_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    who TEXT NOT NULL CHECK (length(who) > 0),
    origin TEXT NOT NULL CHECK (origin IN ('cli', 'app', 'api')),
    what TEXT NOT NULL,
    arguments TEXT NOT NULL CHECK (json_valid(arguments) AND json_type(arguments) = 'object'),
    rows INTEGER,
    masked INTEGER NOT NULL CHECK (masked IN (0, 1)),
    target TEXT,
    db TEXT
);
CREATE TRIGGER exports_no_update BEFORE UPDATE ON exports
BEGIN SELECT RAISE(ABORT, 'the export log is append-only'); END;
CREATE TRIGGER exports_no_delete BEFORE DELETE ON exports
BEGIN SELECT RAISE(ABORT, 'the export log is append-only'); END
"""

# The threads a tombstone covered, by id: a tenant or session tombstone matches threads by the
# tenant or session a load parses from their ids, and another `--thread-key-pattern` parses
# other values; the ids recorded at the erasure (and at every load that held threads back
# under it) are held back whatever the parse. Rows are only added, like the logs'.
_V3 = """
CREATE TABLE tombstone_threads (
    tombstone_id INTEGER NOT NULL REFERENCES tombstones (tombstone_id),
    thread_id TEXT NOT NULL CHECK (length(thread_id) > 0),
    at TEXT NOT NULL,
    PRIMARY KEY (tombstone_id, thread_id)
);
CREATE TRIGGER tombstone_threads_no_update BEFORE UPDATE ON tombstone_threads
BEGIN SELECT RAISE(ABORT, 'the threads a tombstone covered are only ever added'); END;
CREATE TRIGGER tombstone_threads_no_delete BEFORE DELETE ON tombstone_threads
BEGIN SELECT RAISE(ABORT, 'the threads a tombstone covered are only ever added'); END
"""

# Where else the project keeps copies for a database: the other workspaces written for it
# (`--workspace FILE`: annotations quote message text there, and its export log names files),
# recorded in the database's own workspace so an erasure purges and scans each; and the threads
# each export held, so an erasure names the exports that held an erased thread.
_V4 = """
CREATE TABLE other_workspaces (
    path TEXT NOT NULL PRIMARY KEY CHECK (length(path) > 0),
    db TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE TABLE export_threads (
    export_id INTEGER NOT NULL REFERENCES exports (export_id),
    thread_id TEXT NOT NULL,
    PRIMARY KEY (export_id, thread_id)
);
CREATE TRIGGER export_threads_no_update BEFORE UPDATE ON export_threads
BEGIN SELECT RAISE(ABORT, 'the threads an export held are only ever added'); END;
CREATE TRIGGER export_threads_no_delete BEFORE DELETE ON export_threads
BEGIN SELECT RAISE(ABORT, 'the threads an export held are only ever added'); END
"""

# What an erasure looked for, kept as keyed digests, never as text (`analytics.erasure.digests`):
# a later erasure finds the text again wherever it is still written, after the rows that said it
# are gone. Rows are only added, like the tombstones' threads.
_V5 = """
CREATE TABLE erased_digests (
    tombstone_id INTEGER NOT NULL REFERENCES tombstones (tombstone_id),
    prefix INTEGER NOT NULL,
    length INTEGER NOT NULL CHECK (length >= 8),
    form INTEGER NOT NULL CHECK (form IN (0, 1, 2)),
    digest TEXT NOT NULL CHECK (length(digest) = 32),
    PRIMARY KEY (tombstone_id, digest)
);
CREATE TRIGGER erased_digests_no_update BEFORE UPDATE ON erased_digests
BEGIN SELECT RAISE(ABORT, 'the digests of what an erasure looked for are only ever added'); END;
CREATE TRIGGER erased_digests_no_delete BEFORE DELETE ON erased_digests
BEGIN SELECT RAISE(ABORT, 'the digests of what an erasure looked for are only ever added'); END
"""

# The tenant scope a label was defined under: a label made by a reader limited to some tenants is
# offered to readers within them only (a table of its own: adding a column would change the labels
# table, and a workspace holding data would need a copy before it).
_V6 = """
CREATE TABLE label_scopes (
    name TEXT NOT NULL PRIMARY KEY REFERENCES labels (name) ON UPDATE CASCADE ON DELETE CASCADE,
    scope TEXT NOT NULL CHECK (json_valid(scope) AND json_type(scope) = 'array')
)
"""

#: Every migration, in order; append only.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "annotations, labels (with a default set), review queues, saved views", _V1),
    Migration(2, "erasure tombstones, the erasure log and the export log (both append-only)", _V2, adds_only=True),
    Migration(3, "the thread ids each erasure tombstone covered", _V3, adds_only=True),
    Migration(4, "the other workspaces written for the database; the threads each export held", _V4, adds_only=True),
    Migration(5, "the keyed digests of the text each erasure looked for", _V5, adds_only=True),
    Migration(6, "the tenant scope each label was defined under", _V6, adds_only=True),
)

LATEST = MIGRATIONS[-1].version


def statements(sql: str) -> list[str]:
    """A migration's statements, one by one (split on `;` at line ends; the SQL above has no other).

    >>> statements("CREATE TABLE a (x);\\nCREATE TABLE b (y)")
    ['CREATE TABLE a (x)', 'CREATE TABLE b (y)']
    """
    return [s.strip() for s in sql.split(";\n") if s.strip()]
