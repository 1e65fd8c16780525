"""Full-text search across the messages of every conversation.

`search(con, SearchQuery("refund"))` answers a `SearchResult`: one row per matching
message (thread, position, speaker, time, a snippet around the first match and where
the match is in it), newest first, a page at a time, with how many messages and
threads match in all. The match is a case-insensitive substring test, the same on
every script and the same as every other text question of the app
(`analytics.text_match`: Unicode case folding, İ as i, composed and decomposed
accents). A search for text of three characters or more reads only the messages the
load-time text index (`analytics.text_index`, table `search_text`) says may hold it, and
runs the same RE2 test over them; shorter text, a search in tool calls and a database
without a current index (a Parquet dataset) read every message in scope once.

`in_`: `"messages"` searches message text; `"tool_calls"` the calls assistants made
(tool names and arguments, as `name(arg=value)`). `speaker` keeps one role.
`filters` (tenants, days, …) narrow the threads and, through the days, the messages.

>>> search("lens.duckdb", SearchQuery("refund", speaker="user")).hits[["thread_id", "ordinal"]]  # doctest: +SKIP
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from analytics import _pandas as pd
from analytics.db import ConOrPath, applied_policy, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.frames import dtypes_of, fetch_frame, typed
from analytics.masking import redactor
from analytics.redact import find_personal_data
from analytics.text_match import contains_params, contains_sql, pattern, snippet, spellings  # noqa: F401 (this module's API too)
from loaders.catalog import MESSAGES

#: Roles a search can keep (contract §3.3); `"all"` keeps every one.
SEARCH_SPEAKERS = ("all", "user", "assistant", "tool", "system", "other")
#: Where to look: message text, or the tool calls of assistant messages (names and arguments).
SEARCH_IN = ("messages", "tool_calls")
PAGE_SIZE = 50
#: The longest text a search takes (a pasted page is a mistake, not a query).
MAX_TEXT = 500

#: Columns of `SearchResult.hits`.
HIT_COLUMNS: dict[str, str] = {
    **dtypes_of(MESSAGES, "thread_id", "tenant_id", "ordinal", "role", "name", "ts", "message_id"),
    "snippet": "str",  # text around the first match ("…" where it is cut)
    "match_start": "Int64",  # where the match is in `snippet` (characters); NULL when it could not be placed
    "match_end": "Int64",
}


@dataclass(frozen=True)
class SearchQuery:
    """One search, validated at construction.

    >>> SearchQuery("  Rückerstattung ").text
    'Rückerstattung'
    >>> SearchQuery("x", speaker="robot")
    Traceback (most recent call last):
    ...
    analytics.errors.BadRequest: speaker must be one of all, user, assistant, tool, system, other; got 'robot'
    """

    text: str
    speaker: str = "all"
    in_: str = "messages"
    filters: Filters = Filters()
    limit: int = PAGE_SIZE
    offset: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise BadRequest(f"search text must be a string, got {type(self.text).__name__}")
        text = unicodedata.normalize("NFC", self.text.strip())
        if not text:
            raise BadRequest("give some text to search for")
        if len(text) > MAX_TEXT:
            raise BadRequest(f"search text is {len(text):,} characters; at most {MAX_TEXT} are searched for")
        if self.speaker not in SEARCH_SPEAKERS:
            raise BadRequest(f"speaker must be one of {', '.join(SEARCH_SPEAKERS)}; got {self.speaker!r}")
        if self.in_ not in SEARCH_IN:
            raise BadRequest(f"search in must be one of {', '.join(SEARCH_IN)}; got {self.in_!r}")
        for name, low in (("limit", 1), ("offset", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise BadRequest(f"{name} must be an integer >= {low}, got {value!r}")
        object.__setattr__(self, "text", text)


@dataclass(frozen=True)
class SearchResult:
    """A page of hits and the size of the whole answer."""

    hits: pd.DataFrame  # HIT_COLUMNS, newest first
    total: int  # matching messages
    threads: int  # threads with at least one
    offset: int  # hits before this page


# The searched text as SQL over a `messages` row `m`: a message's content, or its tool
# calls as `name(args-json)` (the arguments as DuckDB writes JSON: non-ASCII as is).
_TARGETS = {
    "messages": "m.content",
    "tool_calls": (
        "CASE WHEN m.tool_calls IS NULL THEN NULL ELSE array_to_string(list_transform("
        "json_extract(m.tool_calls, '$[*]'), "
        "lambda c: coalesce(json_extract_string(c, '$.name'), '?') || '(' || coalesce(CAST(json_extract(c, '$.args') AS VARCHAR), '') || ')'), "
        "' ') END"
    ),
}


def match_sql(query: SearchQuery, alias: str = "m") -> tuple[str, list]:
    """`(sql, params)`: the predicate "this `messages` row matches", its role scope included.

    >>> match_sql(SearchQuery("Refund"))[1]
    ['(?i)(?:Refund)', '(?i)(?:Refund)']
    >>> match_sql(SearchQuery("x", speaker="user", in_="tool_calls"))[0].startswith("(m.role = ?) AND (m.tool_calls IS NOT NULL)")
    True
    """
    target = _TARGETS[query.in_].replace("m.", f"{alias}.")
    clauses, params = [], []
    if query.speaker != "all":
        clauses.append(f"{alias}.role = ?")
        params.append(query.speaker)
    if query.in_ == "tool_calls":
        clauses.append(f"{alias}.tool_calls IS NOT NULL")
    clauses.append(contains_sql(target))
    return " AND ".join(f"({c})" for c in clauses), [*params, *contains_params(query.text)]


_SEARCH_SQL = """
WITH hits AS MATERIALIZED (
    SELECT m.thread_id, m.ordinal, m.ts
    FROM messages AS m
    WHERE {scope} AND {match}
),
counts AS (SELECT count(*) AS total, count(DISTINCT thread_id) AS threads FROM hits),
page AS (
    SELECT * FROM hits ORDER BY ts DESC NULLS LAST, thread_id, ordinal LIMIT ? OFFSET ?
)
SELECT c.total, c.threads, p.*
FROM counts AS c
LEFT JOIN (
    -- (an inner join, the page its build side: DuckDB then reads only the row groups of the
    -- page's threads, by their ids, instead of every message: 0.25 s at a million messages)
    SELECT p.thread_id, m.tenant_id, p.ordinal, m.role, m.name, p.ts, m.message_id, {target} AS text
    FROM page AS p
    JOIN messages AS m ON m.thread_id = p.thread_id AND m.ordinal = p.ordinal
) AS p ON TRUE
ORDER BY p.ts DESC NULLS LAST, p.thread_id, p.ordinal
"""


# The same hits through the text index: the rows whose signature may hold the text, their
# content read only for those (a scan filter on one column, materialised before the RE2 test,
# which DuckDB would otherwise evaluate first), then the scope and the match as above.
_INDEXED_HITS = """
WITH candidates AS MATERIALIZED (
    SELECT thread_id, ordinal, role, ts, content FROM search_text WHERE {grams}
),
hits AS MATERIALIZED (
    SELECT m.thread_id, m.ordinal, m.ts
    FROM candidates AS m
    WHERE {scope} AND {match}
),"""


def indexed_where(con, query: SearchQuery) -> str | None:
    """The text index's test for `query` on `con` (`analytics.text_index.grams_where`), or None
    when the search reads every message: text under three characters, tool calls, no current index."""
    from analytics import text_index

    if query.in_ != "messages" or not text_index.current(con):
        return None
    return text_index.grams_where(query.text)


def search_sql(query: SearchQuery, grams: str | None = None) -> tuple[str, list]:
    """`(sql, params)` of one page of hits; every row also carries `total` and `threads`
    (one row of NULL hit columns when the page is empty). `grams`: the text index's test
    (`indexed_where`), when the search goes through it."""
    scope, scope_params = query.filters.message_where("m")
    match, match_params = match_sql(query)
    # `scope`, `match` and the target are our own SQL with placeholders; every value is bound.
    sql = _SEARCH_SQL.format(scope=scope, match=match, target=_TARGETS[query.in_])
    if grams is not None:
        head, _, rest = sql.partition("counts AS")
        sql = _INDEXED_HITS.format(grams=grams, scope=scope, match=match) + "\ncounts AS" + rest
    return sql, [*scope_params, *match_params, query.limit, query.offset]


_REPORT_SQL = """
SELECT m.thread_id, m.tenant_id, m.sub_tenant_id, m.ordinal, m.ordinal + 1 AS message, m.role, m.name, m.ts,
       m.message_id, {target} AS text
FROM messages AS m
WHERE {scope} AND {match}
ORDER BY m.ts DESC NULLS LAST, m.thread_id, m.ordinal
"""


def report_sql(query: SearchQuery) -> tuple[str, list]:
    """`(sql, params)` of every hit (no paging), with the whole text searched: the `search` report.

    >>> report_sql(SearchQuery("refund"))[1]
    ['(?i)(?:refund)', '(?i)(?:refund)']
    """
    scope, scope_params = query.filters.message_where("m")
    match, match_params = match_sql(query)
    return _REPORT_SQL.format(scope=scope, match=match, target=_TARGETS[query.in_]), [*scope_params, *match_params]


def refuse_personal_data(con, text: str) -> None:
    """Under masking (contract §11), a search for a whole personal value is refused with a clear
    line: which messages hold an email address or a card number is itself what masking hides.
    A part of such a value (`alice.pii@`, four digits of a card) is not refused but cannot
    match: a masking connection searches each text with its personal values blanked out
    (`analytics.masking.searchable_sql`), so it finds only text shown unmasked."""
    if not applied_policy(con).redact:
        return
    kinds = sorted({f.kind for f in find_personal_data(text, redactor().config)})
    if kinds:
        raise BadRequest(f"personal data is masked in this app, so a search for it is refused "
                         f"(the text holds: {', '.join(k.lower() for k in kinds)})")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def search(con_or_path: ConOrPath, query: SearchQuery | str, **kwargs) -> SearchResult:
    """One page of the messages matching `query` (a `SearchQuery`, or its text with the fields as keywords).

    >>> search("lens.duckdb", "Rückerstattung", speaker="user").total  # doctest: +SKIP
    3
    """
    if isinstance(query, str):
        query = SearchQuery(query, **kwargs)
    elif kwargs:
        raise BadRequest("pass either a SearchQuery or the text with keywords, not both")
    with connection(con_or_path) as con:
        refuse_personal_data(con, query.text)
        frame = fetch_frame(con, *search_sql(query, indexed_where(con, query)))
    total = int(frame["total"].iloc[0]) if len(frame) else 0
    threads = int(frame["threads"].iloc[0]) if len(frame) else 0
    frame = frame[frame["thread_id"].notna()].reset_index(drop=True)
    cuts = [snippet(_one_line(t) if isinstance(t, str) else "", query.text) for t in frame["text"]]
    frame["snippet"] = [c[0] for c in cuts]
    frame["match_start"] = pd.array([c[1] for c in cuts], dtype="Int64")
    frame["match_end"] = pd.array([c[2] for c in cuts], dtype="Int64")
    return SearchResult(typed(frame, HIT_COLUMNS), total, threads, query.offset)
