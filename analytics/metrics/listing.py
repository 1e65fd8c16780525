"""The Conversations list: one page of threads' metrics, sorted and filtered in DuckDB, with
a preview of the first user message, and its counts.

>>> conversation_list("demo.duckdb", sort="user_turns", descending=True)  # doctest: +SKIP
"""

from __future__ import annotations

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.frames import fetch_frame
from analytics.metrics.per_conversation import CONVERSATION_COLUMNS, conversations_query, conversations_sql
from analytics.metrics.scope import is_scoped
from analytics.paging import check_limit, check_offset
from analytics.resume.gap import DEFAULT_GAP_MINUTES


# --- the conversations list: any sort, pages, a preview (the page and the CSV report) --------

#: A conversation's list row: `CONVERSATION_COLUMNS` and a preview of its first user message.
PREVIEW_COLUMN = "first_user_message"
LIST_COLUMNS = (*CONVERSATION_COLUMNS, PREVIEW_COLUMN)
#: Characters of the preview (whitespace runs folded to one space; a cut one ends in "…").
PREVIEW_CHARS = 160
#: Columns the list sorts by: every metric column, and the preview (computed for every listed
#: thread first when it is the sort, else only for the rows of the page).
SORT_COLUMNS = (*CONVERSATION_COLUMNS, PREVIEW_COLUMN)
#: Columns a range filter applies to (`analytics.filters.Range`; `analytics.scope.ThreadConditions`).
RANGE_COLUMNS = (
    "messages", "user_turns", "duration_s", "input_tokens", "output_tokens", "total_tokens",
    "tool_calls", "tool_errors", "latency_median_s", "latency_p90_s",
)  # fmt: skip
DEFAULT_SORT = "last_ts"

PREVIEW_SQL = f"""
        SELECT thread_id, CASE WHEN length(text) > {PREVIEW_CHARS} THEN left(text, {PREVIEW_CHARS - 1}) || '…'
                               ELSE text END AS {PREVIEW_COLUMN}
        FROM (SELECT thread_id,
                     trim(regexp_replace(arg_min(left(content, {4 * PREVIEW_CHARS}), ordinal), '\\s+', ' ', 'g'))
                       AS text
              FROM messages
              WHERE role = 'user' AND content_chars > 0 AND {{listed_only}}
              GROUP BY thread_id)"""


def unordered_conversations(con, filters: Filters, gap_minutes: float, live: bool) -> tuple[str, list]:
    """`conversations_query` (or, `live`, `conversations_sql`) without its final thread-id ORDER BY:
    a list sorts by its own column, and a sort of 176k thread ids first costs ~0.2 s for nothing."""
    sql, params = conversations_sql(filters, gap_minutes) if live else conversations_query(con, filters, gap_minutes)
    for order in (" ORDER BY cm.thread_id", "\n    ORDER BY t.thread_id"):
        if sql.endswith(order):
            return sql.removesuffix(order), params
    raise AssertionError("conversations query without its thread-id order")  # the two queries above changed


def sort_column(sort: str) -> str:
    """`sort` when it names a `SORT_COLUMNS` column (the constant's own string), else `BadRequest`.

    >>> sort_column("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    analytics.errors.BadRequest: cannot sort by 'nope'; sort columns: thread_id, ...
    """
    if sort not in SORT_COLUMNS:
        raise BadRequest(f"cannot sort by {sort!r}; sort columns: {', '.join(SORT_COLUMNS)}")
    return SORT_COLUMNS[SORT_COLUMNS.index(sort)]


def list_order(alias: str, sort: str, descending: bool) -> str:
    """The conversation list's ORDER BY over rows aliased `alias`.

    >>> list_order("l", "duration_s", True)
    'l.duration_s DESC NULLS LAST, l.thread_id'
    """
    # NULLs last either way (a thread without latency is not the fastest one); ties by thread id.
    column = sort_column(sort)
    direction = "DESC" if descending else "ASC"
    tie = "" if column == "thread_id" else f", {alias}.thread_id"
    return f"{alias}.{column} {direction} NULLS LAST{tie}"


def conversation_list_sql(
    con,
    filters: Filters = Filters(),
    sort: str = DEFAULT_SORT,
    descending: bool = True,
    limit: int | None = None,
    offset: int = 0,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    live: bool = False,
) -> tuple[str, list]:
    """Rows of `conversations()` in `LIST_COLUMNS`, sorted by `sort` over every matching
    thread (ties by thread_id, NULLs last), then `offset`/`limit` (a page): `(sql, params)`.
    `live`: from `conversations_sql` even when the load-time table could answer.

    >>> sql, params = conversation_list_sql(con, sort="duration_s", limit=50, offset=100)  # doctest: +SKIP
    """
    base, params = unordered_conversations(con, filters, gap_minutes, live)
    page = ""
    if limit is not None:
        page = " LIMIT ? OFFSET ?"
        params = [*params, check_limit(limit), check_offset(offset)]
    elif offset:
        page = " OFFSET ?"
        params = [*params, check_offset(offset)]
    if sort_column(sort) == PREVIEW_COLUMN:
        # The preview is the key: made for every listed thread, then sorted and cut.
        listed_only = "thread_id IN (SELECT thread_id FROM listed)" if is_scoped(filters) else "TRUE"
        sql = f"""
    WITH listed AS ({base}),
    preview AS ({PREVIEW_SQL.format(listed_only=listed_only)})
    SELECT {", ".join(f"l.{c}" for c in CONVERSATION_COLUMNS)}, p.{PREVIEW_COLUMN}
    FROM listed l LEFT JOIN preview p USING (thread_id)
    ORDER BY p.{PREVIEW_COLUMN} {"DESC" if descending else "ASC"} NULLS LAST, l.thread_id{page}"""
        return sql, params
    # A page: sort, cut, then previews of its rows only. Every row of every thread (the whole
    # CSV): previews in one pass over the user messages and one sort at the end (sorting
    # before and after held the rows twice: 500 MB against 430 MB for 176k threads).
    page_order = f" ORDER BY {list_order('c', sort, descending)}{page}" if page else ""
    narrow = bool(page) or is_scoped(filters)
    listed_only = "thread_id IN (SELECT thread_id FROM listed)" if narrow else "TRUE"
    sql = f"""
    WITH listed AS {"MATERIALIZED" if narrow else "NOT MATERIALIZED"} (SELECT * FROM ({base}) c{page_order}),
    preview AS ({PREVIEW_SQL.format(listed_only=listed_only)})
    SELECT {", ".join(f"l.{c}" for c in CONVERSATION_COLUMNS)}, p.{PREVIEW_COLUMN}
    FROM listed l LEFT JOIN preview p USING (thread_id)
    ORDER BY {list_order("l", sort, descending)}"""
    return sql, params


def conversation_count_sql(con, filters: Filters = Filters()) -> tuple[str, list]:
    """How many rows `conversation_list_sql(con, filters)` has, before any page."""
    base, params = unordered_conversations(con, filters, DEFAULT_GAP_MINUTES, live=False)
    return f"SELECT count(*) AS threads FROM ({base})", params


def conversation_ids_sql(
    con, filters: Filters = Filters(), sort: str = DEFAULT_SORT, descending: bool = True
) -> tuple[str, list]:
    """The thread ids of `conversation_list_sql(con, filters, sort, descending)`, in its order
    (column thread_id; no metrics shipped, no previews computed): a review queue's threads."""
    base, params = unordered_conversations(con, filters, DEFAULT_GAP_MINUTES, live=False)
    return f"SELECT c.thread_id FROM ({base}) c ORDER BY {list_order('c', sort, descending)}", params


def turns_histogram_sql(con, filters: Filters = Filters()) -> tuple[str, list]:
    """Threads per number of user turns (columns user_turns, threads) over the same rows."""
    base, params = unordered_conversations(con, filters, DEFAULT_GAP_MINUTES, live=False)
    return f"SELECT user_turns, count(*) AS threads FROM ({base}) GROUP BY user_turns ORDER BY user_turns", params


def conversation_list(con_or_path: ConOrPath, filters: Filters = Filters(), **options) -> pd.DataFrame:
    """`conversation_list_sql` as a frame (`options`: its sort, descending, limit, offset, gap_minutes).

    >>> conversation_list("demo.duckdb", sort="duration_s", limit=10)["thread_id"]  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *conversation_list_sql(con, filters, **options))
