"""Reading one thread's transcript under the query contract (contract §4).

The order of operations is the contract (it follows the legacy
`TranscriptService.read`):

1. keep the speaker's rows (`"all"` keeps tool, system and other rows too) and
   number them 0-based — that number is the `index` column and a row keeps it
   whatever later steps drop;
2. `since` / `until` keep rows whose `ts` is in the closed range; NULL `ts` is
   out. A thread without any timestamp cannot answer a time range, so that
   raises `Unsupported` instead of answering empty;
3. `index` picks one row of that view (negative from the end; out of range →
   empty, never an error);
4. `limit` keeps the first rows (`rows[:limit]`).

Decisions where the contract is silent (also in `TranscriptQuery`'s docstring):

- a thread that is not in `threads` raises `NotFound` (an empty frame would
  look like an empty conversation); a known thread with no messages reads empty;
- "no timestamps at all" is judged over the whole thread, not the speaker's
  view: a user-only time read of a thread whose assistant rows have `ts` is an
  ordinary (maybe empty) answer. A thread without messages has no timestamps,
  so a time-range read of it raises `Unsupported` too;
- `since > until` is a bad request (almost always swapped arguments; the contract
  avoids answering empty where the question cannot be right); `since == until`
  is fine and selects one checkpoint's messages;
- naive datetimes (and ISO strings without an offset) are UTC; strings are
  accepted wherever a datetime is and parsed as ISO 8601.

The whole read is one parameterized DuckDB query (window functions over the
thread's rows), so it costs the same on a million-message database as on a
small one — only when it answers empty does a second, tiny query find out
whether that is because the thread is unknown or has no timestamps.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest, NotFound, StaleTranscript, Unsupported
from analytics.filters import Filters, as_utc
from analytics.policy import Policy
from analytics.frames import dtypes_of, fetch_frame, typed
from analytics.text_index import text_grams
from analytics.text_match import contains_params, contains_sql, snippet
from loaders.catalog import MESSAGES, THREADS

Speaker = Literal["user", "assistant", "all"]
NO_FILTERS = Filters()  # frozen, so one shared default is safe
SPEAKERS: tuple[str, ...] = ("user", "assistant", "all")

# Columns of a `read` answer, in order, with the dtype each one always has
# (an empty answer included, so callers can concatenate and compare frames):
# `index`, then `messages` columns typed as the catalogue declares them.
TRANSCRIPT_COLUMNS: dict[str, str] = {
    "index": "int64",
    **dtypes_of(
        MESSAGES,
        "ordinal", "role", "content", "message_id", "ts", "checkpoint_id", "name", "lc_type", "chat_role",
        "content_chars", "non_text_blocks", "media", "tool_calls", "tool_call_count", "tool_call_id", "tool_status",
        "input_tokens", "output_tokens", "total_tokens", "model", "thread_id", "tenant_id", "sub_tenant_id", "session_id",
    ),
}

THREAD_COLUMNS: dict[str, str] = dtypes_of(
    THREADS, "thread_id", "tenant_id", "sub_tenant_id", "session_id", "message_count", "first_ts", "last_ts",
    "stale_reason",
)

SEARCH_COLUMNS: dict[str, str] = {
    **THREAD_COLUMNS,
    "match_count": "int64",
    "first_match_ordinal": "Int64",
    "snippet": "str",
}


def parse_time(value: str | datetime | date | None, what: str = "time") -> datetime | None:
    """An ISO 8601 string or a datetime → an aware UTC-comparable datetime; naive means UTC.

    >>> parse_time("2025-01-31T14:00")
    datetime.datetime(2025, 1, 31, 14, 0, tzinfo=datetime.timezone.utc)
    >>> parse_time("2025-01-31T14:00:00+02:00").isoformat()
    '2025-01-31T14:00:00+02:00'
    """
    if value is None:
        return None
    if isinstance(value, datetime):  # pandas.Timestamp is one too
        return as_utc(value.to_pydatetime() if hasattr(value, "to_pydatetime") else value)
    if isinstance(value, date):
        # A bare date is ambiguous as an inclusive upper bound (its midnight, or its end?).
        raise BadRequest(
            f"{what}: give a datetime, not a date ({value.isoformat()}); e.g. {value.isoformat()}T00:00:00Z"
        )
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise BadRequest(
                f"{what}: {value!r} is not an ISO 8601 date/time (e.g. 2025-01-31T14:00:00Z; no offset means UTC)"
            ) from None
        return as_utc(parsed)
    raise BadRequest(f"{what}: expected a datetime or an ISO 8601 string, got {type(value).__name__}")


def _optional_int(value: object, what: str) -> int | None:
    if value is None:
        return None
    # bool is an int subclass; index=True is a bug, not row 1.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise BadRequest(f"{what} must be an integer, got {value!r}")
    return int(value)


def _optional_limit(value: object) -> int | None:
    """A row limit: None (every row) or an integer >= 0.

    >>> _optional_limit(None), _optional_limit(5)
    (None, 5)
    """
    limit = _optional_int(value, "limit")
    if limit is not None and limit < 0:
        raise BadRequest(f"limit must be >= 0, got {limit}")
    return limit


@dataclass(frozen=True)
class TranscriptQuery:
    """One transcript read (contract §4), validated at construction.

    - `speaker`: `"user"`, `"assistant"` or `"all"` (every row, tool/system/other too);
    - `index`: one row of the speaker's view, negative from the end; out of range → empty;
    - `since` / `until`: inclusive bounds on `ts` (datetime or ISO string; naive = UTC);
      `since > until` and `index` together with either are `BadRequest`;
    - `limit`: keep the first `limit` rows (≥ 0), applied last;
    - `checkpoint_id`: read the message list of that root checkpoint of the thread (any branch, any
      point in its history) under the same rules; None reads the transcript (the latest root checkpoint).

    >>> TranscriptQuery("acme:eu:42", speaker="user", index=0)
    TranscriptQuery(thread_id='acme:eu:42', speaker='user', index=0, since=None, until=None, limit=None, checkpoint_id=None)
    >>> TranscriptQuery("t", index=0, since="2025-01-01")
    Traceback (most recent call last):
    ...
    analytics.errors.BadRequest: index cannot be combined with since/until (index selects within the speaker's view; use one or the other)
    """

    thread_id: str
    speaker: Speaker = "all"
    index: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None
    checkpoint_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.thread_id, str) or not self.thread_id:
            raise BadRequest(f"thread_id must be a non-empty string, got {self.thread_id!r}")
        if self.speaker not in SPEAKERS:
            raise BadRequest(f"speaker must be one of user, assistant, all; got {self.speaker!r}")
        index = _optional_int(self.index, "index")
        limit = _optional_limit(self.limit)
        since = parse_time(self.since, "since")
        until = parse_time(self.until, "until")
        if index is not None and (since is not None or until is not None):
            raise BadRequest(
                "index cannot be combined with since/until (index selects within the speaker's view; use one or the other)"
            )
        if self.checkpoint_id is not None and (not isinstance(self.checkpoint_id, str) or not self.checkpoint_id):
            raise BadRequest(f"checkpoint_id must be a non-empty string or None, got {self.checkpoint_id!r}")
        if since is not None and until is not None and since > until:
            raise BadRequest(f"since ({since.isoformat()}) is after until ({until.isoformat()})")
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "limit", limit)
        object.__setattr__(self, "since", since)
        object.__setattr__(self, "until", until)

    @property
    def is_time_range(self) -> bool:
        return self.since is not None or self.until is not None


# One pass over the thread's rows. `view` numbers the speaker's rows and
# counts them (for negative indices); `timed` applies the closed ts range;
# the final WHERE picks the index, and LIMIT (NULL = no limit) caps last.
# `{rows}` is where the rows come from: the transcript, or one root checkpoint's list.
_READ_SQL = """
WITH {rows},
view AS (
    SELECT
        m.*,
        row_number() OVER (ORDER BY m.ordinal) - 1 AS view_index,
        count(*) OVER () AS view_size
    FROM source AS m
    WHERE ($speaker = 'all' OR m.role = $speaker)
),
timed AS (
    SELECT * FROM view
    WHERE ($since IS NULL AND $until IS NULL)
       OR (ts IS NOT NULL
           AND ($since IS NULL OR ts >= $since)
           AND ($until IS NULL OR ts <= $until))
)
SELECT
    view_index AS "index", ordinal, role, content, message_id, ts, checkpoint_id,
    name, lc_type, chat_role, content_chars, non_text_blocks, media,
    tool_calls, tool_call_count, tool_call_id, tool_status,
    input_tokens, output_tokens, total_tokens, model,
    thread_id, tenant_id, sub_tenant_id, session_id
FROM timed
WHERE $index IS NULL
   OR view_index = CASE WHEN $index < 0 THEN view_size + $index ELSE $index END
ORDER BY ordinal
LIMIT $limit
"""

_TRANSCRIPT_ROWS = "source AS (SELECT * FROM messages WHERE thread_id = $thread_id)"

# The list of one root checkpoint, as `messages` rows would hold it (contract §3 rules at
# that checkpoint): each entry's version, `ts` and `checkpoint_id` from the oldest
# sighting of its id (versions are numbered by first appearance, so the smallest version
# with the id is the one the loader stamps `messages.ts` from).
_CHECKPOINT_ROWS = """listed AS (
    SELECT unnest(c.message_versions) AS version, generate_subscripts(c.message_versions, 1) - 1 AS ordinal
    FROM checkpoints AS c
    WHERE c.thread_id = $thread_id AND c.checkpoint_id = $checkpoint_id AND c.is_root
),
first_seen AS (
    SELECT message_id, arg_min(first_ts, version) AS ts, arg_min(first_checkpoint_id, version) AS checkpoint_id
    FROM message_versions
    WHERE thread_id = $thread_id AND message_id IN (
        SELECT v.message_id FROM listed JOIN message_versions AS v ON v.thread_id = $thread_id AND v.version = listed.version)
    GROUP BY message_id
),
source AS (
    SELECT l.ordinal, v.role, v.content, v.message_id, f.ts, f.checkpoint_id, v.name, v.lc_type, v.chat_role,
           v.content_chars, v.non_text_blocks, v.media, v.tool_calls, v.tool_call_count, v.tool_call_id, v.tool_status,
           v.input_tokens, v.output_tokens, v.total_tokens, v.model,
           t.thread_id, t.tenant_id, t.sub_tenant_id, t.session_id
    FROM listed AS l
    JOIN message_versions AS v ON v.thread_id = $thread_id AND v.version = l.version
    LEFT JOIN first_seen AS f ON f.message_id = v.message_id
    JOIN threads AS t ON t.thread_id = $thread_id
)"""

_DIAGNOSE_SQL = """
WITH {rows}
SELECT
    EXISTS (SELECT 1 FROM threads WHERE thread_id = $thread_id) AS known,
    EXISTS (SELECT 1 FROM source) AS has_messages,
    (SELECT count(ts) FROM source) AS stamped
"""


def read(con_or_path: ConOrPath, query: TranscriptQuery | str, *, redact: bool = False, **kwargs) -> pd.DataFrame:
    """Read one thread's transcript under the query contract (contract §4; see the module docstring).

    `query` is a `TranscriptQuery`, or a thread id with the query fields as keywords.
    With `checkpoint_id`, the same rules read that root checkpoint's list instead (an
    abandoned branch's last checkpoint, the state before an operator's edit, …).
    Raises `NotFound` for a thread not in the database (or a checkpoint that is not one
    of its root checkpoints) and `Unsupported` for a time-range read of a thread
    without any timestamp. On your own connection,
    finish any open `execute()` result first (fetch it all or `con.complete()`):
    DuckDB refuses new work while one is pending, and this read never discards yours.
    `redact=True` masks personal data in the text (analytics.redact; the deployment's
    `TRANSCRIPT_LENS_REDACT=1` masks whatever is asked here).

    >>> read("demo.duckdb", TranscriptQuery("acme:eu:42", speaker="user", index=0))  # doctest: +SKIP
    >>> read("demo.duckdb", "acme:eu:42", redact=True).content.tolist()  # doctest: +SKIP
    ['My email is <EMAIL_1>', …]
    >>> read(con, "acme:eu:42", speaker="assistant", index=-1).content.item()  # doctest: +SKIP

    A thread whose latest root checkpoint did not decode reads the transcript of the
    greatest one that did: the read warns `StaleTranscript` (`stale_note`'s line), and the
    frame's `attrs` carry `transcript_checkpoint_id` and `stale_reason` (None when current).
    """
    if isinstance(query, str):
        query = TranscriptQuery(query, **kwargs)
    elif not isinstance(query, TranscriptQuery):
        raise BadRequest(f"expected a TranscriptQuery or a thread id, got {type(query).__name__}")
    elif kwargs:
        raise BadRequest("pass either a TranscriptQuery or a thread id with keywords, not both")
    params = {
        "thread_id": query.thread_id,
        "speaker": query.speaker,
        "since": query.since,
        "until": query.until,
        "index": query.index,
        "limit": query.limit,
    }
    at = query.checkpoint_id
    rows, where = (_TRANSCRIPT_ROWS, {}) if at is None else (_CHECKPOINT_ROWS, {"checkpoint_id": at})
    with connection(con_or_path, Policy(redact=True) if redact else None) as con:
        if at is not None and not _is_root_checkpoint(con, query.thread_id, at):
            raise NotFound(f"no root checkpoint {at!r} in thread {query.thread_id!r}")
        frame = fetch_frame(con, _READ_SQL.format(rows=rows), {**params, **where}, TRANSCRIPT_COLUMNS)
        if at is None:
            frame.attrs.update(staleness(con, query.thread_id))
            if frame.attrs.get("stale_reason"):
                warnings.warn(stale_note(query.thread_id, **frame.attrs), StaleTranscript, stacklevel=2)
        if frame.empty:
            diagnose = _DIAGNOSE_SQL.format(rows=rows)
            known, has_messages, stamped = con.sql(diagnose, params={"thread_id": query.thread_id, **where}).fetchall()[0]
            if not known and not has_messages:
                raise NotFound(f"no thread {query.thread_id!r} in this database")
            if query.is_time_range and stamped == 0:
                raise Unsupported(
                    f"thread {query.thread_id!r} has no message timestamps"
                    + (f" at checkpoint {at!r}" if at is not None else "")
                    + ", so it cannot answer a time-range read (since/until); read it by index instead"
                )
    return frame


STALENESS_COLUMNS = dtypes_of(THREADS, "transcript_checkpoint_id", "stale_reason")


def staleness(con, thread_id: str) -> dict[str, str | None]:
    """`{transcript_checkpoint_id, stale_reason}` of a thread (empty for an unknown one), read under
    `con`'s policy (the reason is masked when it masks)."""
    frame = fetch_frame(con, "SELECT transcript_checkpoint_id, stale_reason FROM threads WHERE thread_id = ?",
                        [thread_id], STALENESS_COLUMNS)
    return {} if frame.empty else {k: (None if pd.isna(v) else v) for k, v in frame.iloc[0].items()}


def stale_note(thread_id: str, transcript_checkpoint_id: str | None = None, stale_reason: str | None = None) -> str:
    """The one line that says a transcript is stale (the CLI's warning, the read's, the app's).

    >>> stale_note("t1", "c1", "latest root checkpoint c2 not decoded: no key given")
    'thread t1: stale transcript, from root checkpoint c1 (latest root checkpoint c2 not decoded: no key given)'
    >>> stale_note("t1", None, "latest root checkpoint c2 not decoded: damaged")
    'thread t1: stale transcript, no root checkpoint decoded (latest root checkpoint c2 not decoded: damaged)'
    """
    shown = f"from root checkpoint {transcript_checkpoint_id}" if transcript_checkpoint_id else "no root checkpoint decoded"
    return f"thread {thread_id}: stale transcript, {shown} ({stale_reason})"


def _is_root_checkpoint(con, thread_id: str, checkpoint_id: str) -> bool:
    found = con.sql(
        "SELECT 1 FROM checkpoints WHERE thread_id = $t AND checkpoint_id = $c AND is_root",
        params={"t": thread_id, "c": checkpoint_id},
    ).fetchall()
    return bool(found)


_THREADS_SQL = """
SELECT t.thread_id, t.tenant_id, t.sub_tenant_id, t.session_id, t.message_count, t.first_ts, t.last_ts,
       t.stale_reason
FROM threads AS t
WHERE {where}
ORDER BY t.last_ts DESC NULLS LAST, t.thread_id
LIMIT ?
"""


def threads(con_or_path: ConOrPath, filters: Filters = NO_FILTERS, limit: int | None = None) -> pd.DataFrame:
    """Threads for a picker, most recently active first (the first `limit`, cut in DuckDB).

    Columns: thread_id, tenant_id, sub_tenant_id, session_id, message_count, first_ts, last_ts, stale_reason
    (NULL unless the transcript is stale: `stale_note`).

    >>> threads("demo.duckdb", Filters(tenants=("acme",)), limit=200).thread_id.tolist()  # doctest: +SKIP
    """
    limit = _optional_limit(limit)
    where, params = filters.thread_where("t")
    with connection(con_or_path) as con:
        # `where` is Filters' own SQL with placeholders; the values stay bound (LIMIT NULL: every row).
        return fetch_frame(con, _THREADS_SQL.format(where=where), [*params, limit], THREAD_COLUMNS)


# A text is found as Search finds it (analytics.text_match: `$contains_*` are its predicates).
_SEARCH_SQL = """
WITH $source hits AS (
    SELECT
        m.thread_id,
        count(*) AS match_count,
        arg_min(m.content, m.ordinal) AS first_match,
        min(m.ordinal) AS first_match_ordinal
    FROM $messages AS m
    WHERE $contains_content
    GROUP BY m.thread_id
)
SELECT
    t.thread_id, t.tenant_id, t.sub_tenant_id, t.session_id, t.message_count, t.first_ts, t.last_ts, t.stale_reason,
    coalesce(h.match_count, 0) AS match_count,
    h.first_match_ordinal,
    h.first_match AS snippet
FROM threads AS t
LEFT JOIN hits AS h USING (thread_id)
WHERE ({where})
  AND (h.thread_id IS NOT NULL
       OR $contains_key)
ORDER BY (h.thread_id IS NULL), match_count DESC, t.last_ts DESC NULLS LAST, t.thread_id
LIMIT $limit
"""


# The messages a text is looked for in: every one, or those the text index keeps (materialised:
# their content alone is read; `analytics.text_index`).
_MESSAGES = ""
_CANDIDATES = "candidates AS MATERIALIZED (SELECT thread_id, ordinal, content FROM search_text WHERE {grams}),"


def search_threads(
    con_or_path: ConOrPath, text: str, limit: int | None = 50, filters: Filters = NO_FILTERS
) -> pd.DataFrame:
    """Threads whose id/key parts or any message contain `text` (as Search finds it:
    `analytics.text_match`), best first.

    Columns: those of `threads()` plus match_count (messages containing the
    text), first_match_ordinal and snippet (around the first match). Threads
    matched by id only come after threads with message matches. Empty text
    lists every thread (like `threads`, capped at `limit`).

    >>> search_threads("demo.duckdb", "refund", limit=10)[["thread_id", "snippet"]]  # doctest: +SKIP
    """
    limit = _optional_limit(limit)
    if not isinstance(text, str):
        raise BadRequest(f"search text must be a string, got {type(text).__name__}")
    if not text.strip():
        # The first `limit` cut in DuckDB: fetching 1.7M threads to keep 200 took 0.6 s at 10M messages.
        listed = threads(con_or_path, filters, limit)
        return listed.assign(
            match_count=pd.Series(0, index=listed.index, dtype="int64"),
            first_match_ordinal=pd.Series(pd.NA, index=listed.index, dtype="Int64"),
            snippet=pd.Series(None, index=listed.index, dtype="str"),
        )
    with connection(con_or_path) as con:
        grams = text_grams(con, text.strip())
        where, where_params = filters.thread_where("t", text_grams(con, filters.text))
        # Filters' placeholders are positional, so the named ones are spelled out positionally too.
        sql = (_SEARCH_SQL.replace("$source", _MESSAGES if grams is None else _CANDIDATES.format(grams=grams))
               .replace("$messages", "messages" if grams is None else "candidates")
               .replace("$contains_content", contains_sql("m.content"))
               .replace("$contains_key", contains_sql("concat_ws(':', t.thread_id, t.tenant_id, t.sub_tenant_id, t.session_id)"))
               .replace("$limit", "?").format(where=where))
        found_by = contains_params(text.strip())
        found = fetch_frame(con, sql, [*found_by, *where_params, *found_by, limit], SEARCH_COLUMNS)
    found["snippet"] = [None if not isinstance(t, str) else snippet(t, text.strip(), 40)[0] for t in found["snippet"]]
    return typed(found, SEARCH_COLUMNS)
