"""Finding what annotations point at in the loaded database, after any number of reloads.

An annotation is keyed by what a store never changes: the thread id, the
message id, the checkpoint id (and namespace). A message without an id is
anchored by its ordinal and a digest of its content: found at that ordinal, or
else as the one id-less message with that content (nearest first), so a
message that moved keeps its annotation. What cannot be found is *orphaned*,
with the reason — never dropped:

| reason | meaning |
|---|---|
| `thread gone` | the thread is not in the database (erased, or another source was loaded) |
| `message removed` | the message is in the thread's history (`message_versions`) but no longer in its transcript |
| `message gone` | no message of the thread has that id (or, without id, that content) |
| `checkpoint gone` | the thread has no checkpoint with that namespace and id |

`resolve_sql` takes the anchors as bound lists (one `unnest` each), so the
annotations of a SQLite workspace meet the DuckDB database in one query without
copying either.

>>> sql, params = resolve_sql([Anchor("acme:web:1", message_id="m-3")])  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from analytics.errors import BadRequest

TARGETS = ("thread", "message", "checkpoint")
EXCERPT_CHARS = 300
#: `resolve_sql`'s columns, in order: the anchor's index in the list, then what was found.
RESOLVED_COLUMNS = (
    "i", "status", "orphan_reason", "ordinal", "message_id", "role", "excerpt", "content_digest",
    "tenant_id", "sub_tenant_id",
)


def digest(content: str | None) -> str:
    """The `content_digest` of a message's content: sha256 of its UTF-8 text, first 16 hex digits
    (DuckDB's `sha256` computes the same, so the database side needs no Python).

    >>> digest("abc")
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256((content or "").encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Anchor:
    """What an annotation is on: a thread; a message of it (`message_id`, or `ordinal` for a
    message without id); or a checkpoint of it (`checkpoint_id`, in namespace `checkpoint_ns`).

    >>> Anchor("acme:web:1", ordinal=3).target
    'message'
    >>> Anchor("acme:web:1", checkpoint_id="1ef…").checkpoint_ns
    ''
    """

    thread_id: str
    message_id: str | None = None
    ordinal: int | None = None
    checkpoint_id: str | None = None
    checkpoint_ns: str | None = None
    #: For an id-less message: the digest of its content when annotated (found again by it).
    content_digest: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.thread_id, str) or not self.thread_id:
            raise BadRequest(f"thread_id must be a non-empty string, got {self.thread_id!r}")
        for name in ("message_id", "checkpoint_id", "checkpoint_ns"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise BadRequest(f"{name} must be a string, got {value!r}")
        if self.message_id == "":
            raise BadRequest("message_id must not be empty (give the ordinal of a message without id)")
        if self.ordinal is not None and (isinstance(self.ordinal, bool) or not isinstance(self.ordinal, int)
                                         or self.ordinal < 0):
            raise BadRequest(f"ordinal must be an integer >= 0, got {self.ordinal!r}")
        if self.checkpoint_id is not None:
            if self.message_id is not None or self.ordinal is not None:
                raise BadRequest("an annotation is on a message or on a checkpoint, not both")
            if self.checkpoint_ns is None:
                object.__setattr__(self, "checkpoint_ns", "")
        elif self.checkpoint_ns is not None:
            raise BadRequest("checkpoint_ns needs a checkpoint_id")

    @property
    def target(self) -> str:
        if self.checkpoint_id is not None:
            return "checkpoint"
        if self.message_id is not None or self.ordinal is not None:
            return "message"
        return "thread"


_SQL = """
WITH a AS (
    SELECT unnest(?::INTEGER[]) AS i, unnest(?::VARCHAR[]) AS target, unnest(?::VARCHAR[]) AS thread_id,
           unnest(?::VARCHAR[]) AS message_id, unnest(?::INTEGER[]) AS ordinal,
           unnest(?::VARCHAR[]) AS checkpoint_ns, unnest(?::VARCHAR[]) AS checkpoint_id,
           unnest(?::VARCHAR[]) AS digest
),
candidates AS (
    -- by id: the copy at the annotated ordinal first (an id can repeat in an appended list)
    SELECT a.i, m.ordinal, m.message_id, m.role, m.content,
           row_number() OVER (PARTITION BY a.i ORDER BY m.ordinal IS NOT DISTINCT FROM a.ordinal DESC, m.ordinal) AS r
    FROM a JOIN messages m ON m.thread_id = a.thread_id AND m.message_id = a.message_id
    WHERE a.target = 'message'
    UNION ALL
    -- without id: at the ordinal, else the id-less message with the same content nearest to it
    SELECT a.i, m.ordinal, m.message_id, m.role, m.content,
           row_number() OVER (PARTITION BY a.i ORDER BY m.ordinal = a.ordinal DESC, abs(m.ordinal - a.ordinal),
                              m.ordinal) AS r
    FROM a JOIN messages m ON m.thread_id = a.thread_id
    WHERE a.target = 'message' AND a.message_id IS NULL
      AND CASE WHEN a.digest IS NULL THEN m.ordinal = a.ordinal
               ELSE m.message_id IS NULL AND left(sha256(coalesce(m.content, '')), 16) = a.digest END
),
found AS (SELECT * FROM candidates WHERE r = 1),
judged AS (
    SELECT a.i, t.thread_id IS NOT NULL AS has_thread, f.i IS NOT NULL AS has_message,
           a.target, f.ordinal, f.message_id, f.role, f.content, t.tenant_id, t.sub_tenant_id,
           a.target = 'message' AND f.i IS NULL AND a.message_id IS NOT NULL AND EXISTS (
               SELECT 1 FROM message_versions v WHERE v.thread_id = a.thread_id AND v.message_id = a.message_id
           ) AS in_history,
           a.target = 'checkpoint' AND EXISTS (
               SELECT 1 FROM checkpoints c WHERE c.thread_id = a.thread_id AND c.checkpoint_ns = a.checkpoint_ns
                 AND c.checkpoint_id = a.checkpoint_id
           ) AS has_checkpoint
    FROM a LEFT JOIN threads t ON t.thread_id = a.thread_id LEFT JOIN found f ON f.i = a.i
)
SELECT i,
       CASE WHEN reason IS NULL THEN 'ok' ELSE 'orphaned' END AS status,
       reason AS orphan_reason, ordinal, message_id, role,
       left(content, {excerpt}) AS excerpt,
       CASE WHEN has_message THEN left(sha256(coalesce(content, '')), 16) END AS content_digest,
       tenant_id, sub_tenant_id
FROM (
    SELECT *, CASE
        WHEN NOT has_thread THEN 'thread gone'
        WHEN target = 'message' AND NOT has_message AND in_history THEN 'message removed'
        WHEN target = 'message' AND NOT has_message THEN 'message gone'
        WHEN target = 'checkpoint' AND NOT has_checkpoint THEN 'checkpoint gone'
    END AS reason
    FROM judged
)
ORDER BY i
""".format(excerpt=EXCERPT_CHARS)


def resolve_sql(anchors: Sequence[Anchor]) -> tuple[str, list]:
    """Where each anchor is in the database now (`RESOLVED_COLUMNS`, one row per anchor, by index)."""
    return resolve_sql_lists(
        [a.target for a in anchors], [a.thread_id for a in anchors], [a.message_id for a in anchors],
        [a.ordinal for a in anchors], [a.checkpoint_ns for a in anchors], [a.checkpoint_id for a in anchors],
        [a.content_digest for a in anchors],
    )


def resolve_sql_lists(targets: list, thread_ids: list, message_ids: list, ordinals: list, checkpoint_ns: list,
                      checkpoint_ids: list, digests: list) -> tuple[str, list]:
    """`resolve_sql` from the anchors' fields as parallel lists (stored annotations: checked when written)."""
    return _SQL, [list(range(len(targets))), targets, thread_ids, message_ids, ordinals, checkpoint_ns,
                  checkpoint_ids, digests]
