"""The transcript explorer's page model: the thread picker's choices, one thread's whole
conversation as chat items (`ui.models.chat`) with the part to draw around a focused
message, and the filtered read of contract §4.

>>> conv = conversation("demo.duckdb", "acme:web:sess-1002")  # doctest: +SKIP
>>> window(conv, focus_of(conv, LAST_REPLY)).focus  # doctest: +SKIP
8
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from analytics import metrics
from analytics.db import ConOrPath, applied_policy, connection
from analytics.errors import AnalyticsError, NotFound
from analytics.filters import Filters
from analytics.masking import mask_text
from analytics.resume.gap import DEFAULT_GAP_MINUTES
from analytics.transcript import TRANSCRIPT_COLUMNS, TranscriptQuery, read, search_threads, threads
from ui.escape import code
from analytics.transcript.context import in_context
from ui.models import chat
from ui.models.frames import empty, is_missing
from ui.models.problems import Problem, problem_of

#: Columns of the transcript table view (and of its CSV download), in order: each message by its
#: number in the transcript ("Message N", `message_number`), the one numbering the app shows,
#: not the read's 0-based `index` nor the stored 0-based `ordinal`.
TRANSCRIPT_TABLE_COLUMNS = (
    "message",
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
#: The two views of a thread: the whole conversation, or a read under the query contract (contract §4).
TABLE_TYPES = {**TRANSCRIPT_COLUMNS, "message": "int64"}
VIEWS = ("conversation", "filtered")
VIEW_LABELS = {"conversation": "Whole conversation", "filtered": "Filtered read"}
#: The filtered read's URL params; an older link with any of them (and no `view`) opens the filtered read.
FILTERED_PARAMS = ("speaker", "mode", "index", "since", "until", "limit")
SPEAKERS = ("all", "user", "assistant")
READ_MODES = ("index", "time")
READ_MODE_LABELS = {"index": "By position (index)", "time": "By time range"}


def view_of_link(params: Any) -> str:
    """The view a link without `view` asks for: the filtered read when it carries the read's params.

    >>> view_of_link({"thread": "t", "speaker": "user", "index": "0"}), view_of_link({"thread": "t"})
    ('filtered', 'conversation')
    """
    return "filtered" if any(p in params for p in FILTERED_PARAMS) else "conversation"


#: Where "Jump to" can go besides a message number.
FIRST_QUESTION = "first-question"
LAST_REPLY = "last-reply"
JUMPS = (FIRST_QUESTION, LAST_REPLY)
JUMP_LABELS = {FIRST_QUESTION: "First question", LAST_REPLY: "Last reply"}
#: Messages drawn at once; a longer conversation is drawn a window at a time around the focus
#: (a hundred messages kept the browser's main thread busy for over a second: bench/bench_render.py).
CHAT_WINDOW = 50
#: A filtered read draws at most this many messages (the table view and the CSV have all of them).
CHAT_MAX = 300


def thread_choices(
    con_or_path: ConOrPath, text: str = "", selected: str | None = None, limit: int = 200
) -> pd.DataFrame:
    """Threads for the picker (thread_id, label), best match first; `selected` always included
    when it exists (so a thread id typed or linked is found however many threads there are).

    Empty `text` lists the most recently active threads.
    """
    with connection(con_or_path) as con:
        found = search_threads(con, text or "", limit=limit)
        if selected and selected not in set(found["thread_id"]):
            known = threads(con, Filters(thread_ids=(selected,)))
            found = pd.concat([known.assign(match_count=0), found], ignore_index=True)
        policy = applied_policy(con)
    last = found["last_ts"].dt.strftime("%Y-%m-%d %H:%M").fillna("no time")
    shown_id = found["thread_id"].map(lambda t: mask_text(t, policy))  # a label leaves the tool: masked
    label = shown_id + " · " + found["message_count"].astype(str) + " msgs · " + last
    if text and "snippet" in found:
        snippet = found["snippet"].fillna("").str.replace(r"\s+", " ", regex=True).str.slice(0, 60)
        label = label.where(snippet == "", label + " · “" + snippet + "”")
    return pd.DataFrame({"thread_id": found["thread_id"], "label": label})


# --- the whole conversation ----------------------------------------------------------


def stale_text(t: dict[str, Any]) -> str | None:
    """The warning a stale transcript carries (its `conversations()` row), as Markdown; None when current.

    >>> stale_text({"transcript_checkpoint_id": "c1", "stale_reason": "latest root checkpoint c2 not decoded: damaged"})
    "**Stale transcript**: this is root checkpoint `c1`, not the thread's latest. `latest root checkpoint c2 not decoded: damaged`"
    """
    reason = t.get("stale_reason")
    if is_missing(reason) or not reason:
        return None
    cid = t.get("transcript_checkpoint_id")
    shown = "empty: none of its root checkpoints decoded" if is_missing(cid) or not cid else f"root checkpoint {code(cid)}"
    # (the reason is data: in a code span, markup in it stays text)
    return f"**Stale transcript**: this is {shown}, not the thread's latest. {code(reason)}"


def table_of(rows: pd.DataFrame) -> pd.DataFrame:
    """`read()` / `in_context()` rows as the table view and its CSV show them: `message` is the
    message's number in the transcript (ordinal + 1), as its header in the chat says.

    >>> table_of(pd.DataFrame({c: [None] for c in TRANSCRIPT_COLUMNS}).assign(index=[0], ordinal=[4]))["message"].tolist()
    [5]
    """
    return rows.assign(message=rows["ordinal"].astype("int64") + 1)[list(TRANSCRIPT_TABLE_COLUMNS)]


@dataclass(frozen=True)
class Conversation:
    """One thread read whole, as chat items; `problem` instead of a traceback."""

    thread_id: str
    items: tuple[chat.TranscriptItem, ...] = ()
    table: pd.DataFrame = field(default_factory=lambda: empty({c: TABLE_TYPES[c] for c in TRANSCRIPT_TABLE_COLUMNS}))
    thread: dict[str, Any] = field(default_factory=dict)  # its `metrics.conversations()` row
    numbers: tuple[int, ...] = ()  # every message number, in order
    first_question: int | None = None
    last_reply: int | None = None
    markers: int = 0
    problem: Problem | None = None


def conversation(con_or_path: ConOrPath, thread_id: str, gap_minutes: float = DEFAULT_GAP_MINUTES) -> Conversation:
    """The whole transcript of `thread_id` with its markers (`analytics.transcript.context`)."""
    with connection(con_or_path) as con:
        try:
            ctx = in_context(con, thread_id, gap_minutes)
            thread = dict(metrics.conversation(con, thread_id))
        except NotFound as exc:
            return Conversation(thread_id, problem=problem_of(exc))
    # The whole conversation has no "index of the read" (that is the filtered read's numbering).
    items = tuple(chat.items(ctx.messages.drop(columns="index"), ctx.markers, gap_minutes))
    m = ctx.messages
    users, replies = m.loc[m["role"] == "user", "ordinal"], m.loc[m["role"] == "assistant", "ordinal"]
    table = table_of(m)
    return Conversation(
        thread_id, items, table, thread, tuple(int(o) + 1 for o in m["ordinal"]),
        int(users.min()) + 1 if len(users) else None, int(replies.max()) + 1 if len(replies) else None,
        sum(isinstance(i, chat.Marker) for i in items),
    )  # fmt: skip


@dataclass(frozen=True)
class Window:
    """The part of a conversation drawn now: `items` around the focused message."""

    items: tuple[chat.TranscriptItem, ...]
    focus: int | None  # the message number to scroll to and highlight
    first: int | None  # first and last message number drawn
    last: int | None
    earlier: int  # messages before the window
    later: int  # and after it
    start_before: int | None = None  # the `start` that shows the previous window (None: at the beginning)
    start_after: int | None = None  # and the next one
    note: str | None = None  # why the focus asked for is not there


def focus_of(conv: Conversation, at: str | None = None, number: int | None = None) -> tuple[int | None, str | None]:
    """The message to focus: `number` when given, else `at` (FIRST_QUESTION / LAST_REPLY); and a
    note when that message does not exist.

    >>> focus_of(Conversation("t", numbers=(1, 2, 3), first_question=1, last_reply=3), LAST_REPLY)
    (3, None)
    >>> focus_of(Conversation("t", numbers=(1, 2, 3)), number=9)
    (None, 'There is no message 9: this conversation has messages 1–3.')
    """
    if number is not None:
        if number in conv.numbers:
            return number, None
        span = f"messages {conv.numbers[0]}–{conv.numbers[-1]}" if conv.numbers else "no messages"
        return None, f"There is no message {number}: this conversation has {span}."
    if at == FIRST_QUESTION:
        return conv.first_question, None if conv.first_question else "This conversation has no question from the user."
    if at == LAST_REPLY:
        return conv.last_reply, None if conv.last_reply else "This conversation has no reply from the assistant."
    return None, None


def _top_level(entries: tuple[chat.TranscriptItem, ...]) -> list[tuple[int, list[int]]]:
    """(position in `entries`, message numbers it shows) of each drawn message."""
    out = []
    for pos, item in enumerate(entries):
        if isinstance(item, chat.MessageItem):
            out.append((pos, chat.numbers([item])))
    return out


def window(
    conv: Conversation, focus: int | None = None, start: int | None = None, size: int = CHAT_WINDOW, note: str | None = None
) -> Window:
    """At most `size` drawn messages: from message `start` when given, else around `focus`, else from the top.

    Markers between the drawn messages come along; those before the first message
    only when the window starts at the top, those after the last only at the end.
    """
    drawn = _top_level(conv.items)
    if not drawn:
        return Window(conv.items, None, None, None, 0, 0, note=note)
    at = 0
    if start is not None:
        at = next((i for i, (_, nums) in enumerate(drawn) if nums[-1] >= start), len(drawn) - 1)
    elif focus is not None:
        hit = next((i for i, (_, nums) in enumerate(drawn) if focus in nums), 0)
        at = max(0, hit - size // 3)
    at = max(0, min(at, len(drawn) - size)) if len(drawn) > size else 0
    end = min(len(drawn), at + size)
    lo = 0 if at == 0 else drawn[at][0]
    hi = len(conv.items) if end == len(drawn) else drawn[end][0]
    shown = conv.items[lo:hi]
    nums = chat.numbers(shown)
    earlier = sum(len(n) for _, n in drawn[:at])
    later = sum(len(n) for _, n in drawn[end:])
    before = None if at == 0 else drawn[max(0, at - size)][1][0]
    after = None if end == len(drawn) else drawn[end][1][0]
    return Window(tuple(shown), focus if focus in nums else None, nums[0] if nums else None,
                  nums[-1] if nums else None, earlier, later, before, after, note)  # fmt: skip


# --- the filtered read (contract §4) ---------------------------------------------------


@dataclass(frozen=True)
class TranscriptPage:
    """One transcript read, its table shape, its chat items and the thread's summary;
    `problem` instead of a traceback."""

    rows: pd.DataFrame  # analytics.transcript.read() columns
    table: pd.DataFrame  # TRANSCRIPT_TABLE_COLUMNS: what the table view and the CSV show
    thread: dict[str, Any] = field(default_factory=dict)
    problem: Problem | None = None
    items: tuple[chat.TranscriptItem, ...] = ()  # the first CHAT_MAX rows as messages


def _shown_time(value: str | datetime | None) -> str | datetime | None:
    """Accept a time back in the form the chat shows it ("2025-03-03 10:05:00 UTC").

    >>> _shown_time("2025-03-03 10:05:00 UTC")
    '2025-03-03 10:05:00+00:00'
    """
    if isinstance(value, str) and value.strip().upper().endswith(" UTC"):
        return value.strip()[:-4] + "+00:00"
    return value


def transcript_page(
    con_or_path: ConOrPath,
    thread_id: str,
    speaker: str = "all",
    index: int | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    limit: int | None = None,
) -> TranscriptPage:
    """`read()` under the query contract (contract §4), plus the thread's metrics row for the header.

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
            problem = problem_of(exc)
            rows = empty(TRANSCRIPT_COLUMNS)
        if not (problem and problem.kind == "not_found"):
            try:
                thread = dict(metrics.conversation(con, thread_id))
            except NotFound:
                thread = {}
    items = tuple(chat.items(rows.head(CHAT_MAX), nest=False))  # every row of the read is one message
    return TranscriptPage(rows, table_of(rows), thread, problem, items)
