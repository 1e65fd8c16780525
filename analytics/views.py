"""Page-shaped answers for the Streamlit app: one call per page view.

Each function composes `metrics` / `transcript` calls and returns frames in
the exact shape a page draws, so pages stay widget → one call → render and
every shape is testable without Streamlit. Nothing here imports streamlit.

>>> import analytics.views as views
>>> views.overview_page("demo.duckdb").headline["threads"]  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from analytics import metrics
from analytics._pandas import pd
from analytics.db import ConOrPath, connection
from analytics.errors import AnalyticsError, BadRequest, NotFound, Unsupported
from analytics.filters import Filters
from analytics.transcript import TranscriptQuery, read, search_threads, threads

NO_TENANT = "(no tenant)"

#: Columns of the transcript table view (and of its CSV download), in order.
TRANSCRIPT_TABLE_COLUMNS = (
    "index",
    "ordinal",
    "role",
    "ts",
    "content",
    "message_id",
    "checkpoint_id",
    "name",
    "tool_calls",
    "tool_call_id",
    "tool_status",
    "model",
    "input_tokens",
    "output_tokens",
    "total_tokens",
)

#: Columns of the conversations table (and of its CSV download), in order.
CONVERSATION_TABLE_COLUMNS = (
    "thread_id",
    "tenant_id",
    "sub_tenant_id",
    "messages",
    "user_turns",
    "assistant_messages",
    "tool_calls",
    "first_ts",
    "last_ts",
    "duration_s",
    "latency_median_s",
    "latency_p90_s",
    "total_tokens",
    "models",
    "forks",
    "interrupt_pending",
    "resume_points",
    "removed_messages",
    "edited_messages",
)


# --- overview -----------------------------------------------------------------------


@dataclass(frozen=True)
class OverviewPage:
    """Everything the overview page draws."""

    headline: dict[str, Any]
    messages_by_role: pd.DataFrame  # day, role, messages
    activity: pd.DataFrame  # day, active_conversations, conversations_started
    top_tenants: pd.DataFrame
    top_models: pd.DataFrame
    top_tools: pd.DataFrame


def _per_day(daily: pd.DataFrame) -> pd.DataFrame:
    # daily() is per (day, tenant); a thread has one tenant, so summing over tenants counts each once.
    cols = [c for c in daily.columns if c not in ("day", "tenant_id", "latency_median_s")]
    return daily.groupby("day", as_index=False)[cols].sum(min_count=1)


def _label_tenants(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(tenant_id=frame["tenant_id"].astype(object).where(frame["tenant_id"].notna(), NO_TENANT))


def overview_page(con_or_path: ConOrPath, filters: Filters = Filters(), top: int = 10) -> OverviewPage:
    """Headline numbers, daily messages by role, daily activity and the top tenants/models/tools."""
    with connection(con_or_path) as con:
        headline = dict(metrics.overview(con, filters))
        per_day = _per_day(metrics.daily(con, filters, latency=False))  # messages and activity only
        tenants = metrics.top_tenants(con, filters, limit=top)
        models = metrics.top_models(con, filters, limit=top)
        tools = metrics.top_tools(con, filters, limit=top)
    role_cols = {f"{r}_messages": r for r in metrics.ROLES}
    by_role = per_day[["day", *role_cols]].melt(id_vars="day", var_name="role", value_name="messages")
    by_role["role"] = by_role["role"].map(role_cols)
    by_role = by_role[by_role["messages"] > 0].reset_index(drop=True)
    activity = per_day[["day", "active_conversations", "conversations_started"]]
    return OverviewPage(headline, by_role, activity, _label_tenants(tenants), models, tools)


# --- conversations ------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationsPage:
    """The conversations table (one row per thread) and its charts, over the same threads."""

    table: pd.DataFrame  # CONVERSATION_TABLE_COLUMNS, most recently active first, at most TABLE_MAX rows
    matching: pd.DataFrame  # every matching thread (same columns and order): the "all rows" download
    total: int  # threads passing `filters` before the turn / interrupt / fork conditions
    latency: pd.DataFrame  # histogram of user→assistant pairs: bin_start, bin_end, model, pairs
    latency_summary: dict[str, Any]  # pairs, median_s, p90_s over the same pairs
    tokens_by_model: pd.DataFrame  # model, kind (input/output), tokens
    turns: pd.DataFrame  # user_turns, threads (a histogram of the table)
    activity: pd.DataFrame  # day, active_conversations, messages, user_messages


LATENCY_BINS = 40
#: Rows the conversations table draws; beyond this a browser table only costs (34 MB for 176k threads).
TABLE_MAX = 5_000


def latency_histogram(latency_s: pd.Series, model: pd.Series, bins: int = LATENCY_BINS) -> pd.DataFrame:
    """Pairs per latency bin and model (columns bin_start, bin_end, model, pairs).

    Binned here so a page ships a few hundred bars to the browser, not one value
    per pair (hundreds of thousands on a large corpus).

    >>> latency_histogram(pd.Series([0.0, 1.0, 1.0]), pd.Series(["a", "a", "b"]), bins=2)["pairs"].tolist()
    [1, 1, 1]
    """
    columns = ["bin_start", "bin_end", "model", "pairs"]
    values = latency_s.astype(float).to_numpy()
    if len(values) == 0:
        return pd.DataFrame(columns=columns)
    edges = np.histogram_bin_edges(values, bins=bins)
    # The last bin is closed on the right, like numpy.histogram.
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    # Counted as one integer per (bin, model) pair: counting (bin, model) rows with
    # value_counts took 0.1-0.2 s for 300k pairs, mostly hashing the model strings twice.
    codes, names = pd.factorize(model.fillna("(no model)"), sort=True)
    names = np.asarray(names, dtype=object)
    counts = np.bincount(idx * len(names) + codes, minlength=(len(edges) - 1) * len(names))
    present = np.flatnonzero(counts)  # in (bin, model) order
    bin_, code = np.divmod(present, len(names))
    return pd.DataFrame(
        {"bin_start": edges[bin_], "bin_end": edges[bin_ + 1], "model": names[code], "pairs": counts[present]}
    )


@dataclass(frozen=True)
class ThreadConditions(Filters):
    """`Filters` plus the conversations page's thread conditions, as thread-level SQL.

    Every metrics query scopes threads through `thread_where`, so the table and all
    its charts see exactly the same threads without shipping a list of ids.

    >>> ThreadConditions(forks_only=True).thread_where()[0]
    '(t.fork_count > 0)'
    """

    min_user_turns: int = 0
    pending_only: bool = False
    forks_only: bool = False
    #: Read user turns from the loader's `conversation_metrics` (same counts) instead of counting messages.
    turns_from_table: bool = False

    def thread_where(self, alias: str = "t") -> tuple[str, list]:
        sql, params = super().thread_where(alias)
        clauses = [] if sql == "TRUE" else [sql]
        if self.min_user_turns > 0:
            # user_turns in metrics is the thread's count of user messages.
            if self.turns_from_table:
                clauses.append(
                    f"{alias}.thread_id IN (SELECT thread_id FROM {metrics.MATERIALIZED_TABLE} WHERE user_turns >= ?)"
                )
            else:
                clauses.append(
                    f"{alias}.thread_id IN (SELECT thread_id FROM messages WHERE role = 'user' "
                    "GROUP BY thread_id HAVING count(*) >= ?)"
                )
            params = [*params, self.min_user_turns]
        if self.pending_only:
            clauses.append(f"coalesce({alias}.interrupt_pending, false)")
        if self.forks_only:
            clauses.append(f"{alias}.fork_count > 0")
        if not clauses:
            return "TRUE", params
        return " AND ".join(c if c == sql else f"({c})" for c in clauses), params


def conversations_page(
    con_or_path: ConOrPath,
    filters: Filters = Filters(),
    min_turns: int = 0,
    pending_only: bool = False,
    forks_only: bool = False,
) -> ConversationsPage:
    """`metrics.conversations` narrowed by user turns, pending interrupt and forks, with its charts.

    The conditions are applied in SQL (`ThreadConditions`), so the table and every
    chart describe exactly the same threads.
    """
    if isinstance(min_turns, bool) or not isinstance(min_turns, int) or min_turns < 0:
        raise BadRequest(f"min_turns must be an integer >= 0, got {min_turns!r}")
    with connection(con_or_path) as con:
        where, params = filters.thread_where("t")
        if filters.text:
            # A text filter scans every message's content; resolve it to thread ids once
            # instead of once per query below (same threads: the ids pass the whole filter).
            ids = tuple(r[0] for r in con.execute(f"SELECT t.thread_id FROM threads t WHERE {where}", params).fetchall())
            total = len(ids)
            if ids:
                filters = dataclasses.replace(filters, thread_ids=ids, text=None)
        else:
            total = con.execute(f"SELECT count(*) FROM threads t WHERE {where}", params).fetchall()[0][0]
        scoped = ThreadConditions(
            **{f.name: getattr(filters, f.name) for f in dataclasses.fields(Filters)},
            min_user_turns=min_turns,
            pending_only=bool(pending_only),
            forks_only=bool(forks_only),
            turns_from_table=min_turns > 0 and metrics._materialized(con),
        )
        conv = metrics.conversations(con, scoped, columns=CONVERSATION_TABLE_COLUMNS)  # user_turns included
        latency = metrics.latency_distribution(con, scoped, columns=("latency_s", "model"))
        models = metrics.by_model(con, scoped, latency=False)  # the page draws their tokens
        daily = metrics.daily(con, scoped, latency=False)  # and daily activity
    tokens = models.melt(
        id_vars="model", value_vars=["input_tokens", "output_tokens"], var_name="kind", value_name="tokens"
    )
    tokens["kind"] = tokens["kind"].str.removesuffix("_tokens")
    tokens = tokens[tokens["tokens"].notna()].reset_index(drop=True)
    activity = _per_day(daily)[["day", "active_conversations", "messages", "user_messages"]]
    values = latency["latency_s"].astype(float)
    summary = {
        "pairs": len(values),
        "median_s": float(values.median()) if len(values) else None,
        "p90_s": float(values.quantile(0.9)) if len(values) else None,
    }
    turns = conv["user_turns"].value_counts().sort_index().rename("threads").rename_axis("user_turns").reset_index()
    # Newest first, ties by thread id: `conversations()` answers by thread id, so a
    # stable sort on last_ts alone gives that order without sorting 176k strings
    # (0.1-0.2 s of the page on a million messages).
    matching = (
        conv[list(CONVERSATION_TABLE_COLUMNS)]
        .sort_values("last_ts", ascending=False, na_position="last", kind="stable")
        .reset_index(drop=True)
    )
    return ConversationsPage(
        matching.head(TABLE_MAX),
        matching,
        total,
        latency_histogram(latency["latency_s"], latency["model"]),
        summary,
        tokens,
        turns,
        activity,
    )


# --- transcript explorer --------------------------------------------------------------


def thread_choices(
    con_or_path: ConOrPath, text: str = "", selected: str | None = None, limit: int = 200
) -> pd.DataFrame:
    """Threads for the picker (thread_id, label), best match first; `selected` always included.

    Empty `text` lists the most recently active threads.
    """
    with connection(con_or_path) as con:
        found = search_threads(con, text or "", limit=limit)
        if selected and selected not in set(found["thread_id"]):
            known = threads(con, Filters(thread_ids=(selected,)))
            found = pd.concat([known.assign(match_count=0), found], ignore_index=True)
    last = found["last_ts"].dt.strftime("%Y-%m-%d %H:%M").fillna("no time")
    label = found["thread_id"] + " · " + found["message_count"].astype(str) + " msgs · " + last
    if text and "snippet" in found:
        snippet = found["snippet"].fillna("").str.replace(r"\s+", " ", regex=True).str.slice(0, 60)
        label = label.where(snippet == "", label + " · “" + snippet + "”")
    return pd.DataFrame({"thread_id": found["thread_id"], "label": label})


@dataclass(frozen=True)
class Problem:
    """A contract error turned into something a page can show: kind is bad_request / unsupported / not_found."""

    kind: str
    message: str


@dataclass(frozen=True)
class TranscriptPage:
    """One transcript read, its table shape and the thread's summary; `problem` instead of a traceback."""

    rows: pd.DataFrame  # analytics.transcript.read() columns
    table: pd.DataFrame  # TRANSCRIPT_TABLE_COLUMNS: what the table view and the CSV show
    thread: dict[str, Any] = field(default_factory=dict)
    problem: Problem | None = None


_PROBLEM_KINDS = ((BadRequest, "bad_request"), (Unsupported, "unsupported"), (NotFound, "not_found"))


def _shown_time(value: str | datetime | None) -> str | datetime | None:
    """Accept a time back in the form the chat shows it ("2025-03-03 10:05:00 UTC").

    >>> _shown_time("2025-03-03 10:05:00 UTC")
    '2025-03-03 10:05:00+00:00'
    """
    if isinstance(value, str) and value.strip().upper().endswith(" UTC"):
        return value.strip()[:-4] + "+00:00"
    return value


def _empty_transcript() -> pd.DataFrame:
    from analytics.transcript import TRANSCRIPT_COLUMNS

    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in TRANSCRIPT_COLUMNS.items()})


def transcript_page(
    con_or_path: ConOrPath,
    thread_id: str,
    speaker: str = "all",
    index: int | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    limit: int | None = None,
) -> TranscriptPage:
    """`read()` under the SPEC §4 contract, plus the thread's metrics row for the header.

    A `BadRequest` / `Unsupported` / `NotFound` comes back as `problem` (and empty
    rows) so a page shows a message, not a traceback; anything else still raises.
    """
    problem = None
    thread: dict[str, Any] = {}
    with connection(con_or_path) as con:
        try:
            query = TranscriptQuery(
                thread_id, speaker=speaker, index=index, since=_shown_time(since), until=_shown_time(until), limit=limit
            )
            rows = read(con, query)
        except AnalyticsError as exc:
            kind = next((k for cls, k in _PROBLEM_KINDS if isinstance(exc, cls)), "bad_request")
            problem = Problem(kind, str(exc))
            rows = _empty_transcript()
        if not (problem and problem.kind == "not_found"):
            try:
                thread = dict(metrics.conversation(con, thread_id))
            except NotFound:
                thread = {}
    return TranscriptPage(rows, rows[list(TRANSCRIPT_TABLE_COLUMNS)], thread, problem)
