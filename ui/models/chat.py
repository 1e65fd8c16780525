"""The chat as typed items: messages (tool calls with their results beneath) and markers
between them. `ui.chat.draw` draws a sequence of them; no streamlit here.

`items(messages, markers)` builds them from `analytics.transcript.context.in_context`
frames (or from any `analytics.read` answer, without markers). A message is numbered
as the app shows it, "Message 5" = ordinal 4, so a number in a link or a search hit
names the same message whatever view is open.

>>> ctx = in_context("lens.duckdb", "acme:web:sess-1002")  # doctest: +SKIP
>>> [type(i).__name__ for i in items(ctx.messages, ctx.markers)][:2]  # doctest: +SKIP
['MessageItem', 'MessageItem']
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import pandas as pd

from analytics import jsontext
from ui.models.frames import is_missing
from ui.escape import code, text
from ui.formats import clock, duration, plural  # noqa: F401  (ui.chat takes them from here too)

#: Plain names of the roles (contract §3.3) as a reader says them.
SPEAKERS = {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System", "other": "Other"}
#: A tool call's text is cut here in the one-line form (the whole arguments are a click away).
SIGNATURE_CHARS = 160


def _value(value: Any) -> Any:
    """A cell as a plain Python value (None for every kind of missing)."""
    if is_missing(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value.item() if hasattr(value, "item") else value


@dataclass(frozen=True)
class Media:
    """A content block that is not text (`messages.media`): an image, a file, audio; never fetched."""

    kind: str  # image · file · audio · …
    url: str | None = None  # the URL the block names, shown as text
    mime_type: str | None = None
    inline: bool = False  # it carried its bytes, which the store keeps and the database does not

    def line(self) -> str:
        """What the transcript writes for it: Markdown in which the URL is a code span (text, never a
        link or an image the browser would load).

        >>> Media("image", "https://host/cat.png").line()
        'Image (not loaded): `https://host/cat.png`'
        >>> Media("file", mime_type="application/pdf", inline=True).line()
        'File, application/pdf, sent inline (not shown)'
        >>> Media("image").line()
        'Image (not shown)'
        """
        what = text(self.kind.replace("_", " ").capitalize()) + (f", {text(self.mime_type)}" if self.mime_type else "")
        if self.url:
            return f"{what} (not loaded): {code(self.url)}"
        return f"{what}, sent inline (not shown)" if self.inline else f"{what} (not shown)"


def media(value: Any) -> tuple[Media, ...]:
    """`messages.media` JSON as `Media` items.

    >>> media('[{"type": "image", "url": "https://host/cat.png"}, {"type": "file", "inline": true}]')
    (Media(kind='image', url='https://host/cat.png', mime_type=None, inline=False), Media(kind='file', url=None, mime_type=None, inline=True))
    """
    value = _value(value)
    if value is None:
        return ()
    try:
        markers = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return ()
    return tuple(
        Media(str(m.get("type") or "unknown"), _text_or_none(m.get("url")), _text_or_none(m.get("mime_type")),
              bool(m.get("inline")))
        for m in markers if isinstance(m, dict)
    ) if isinstance(markers, list) else ()


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class ToolCall:
    """One call an assistant message asked for, and the tool message that answered it (if drawn beneath)."""

    name: str
    args: Any  # the decoded arguments (usually a dict)
    call_id: str | None
    signature: str  # `name(arg="value", …)`, cut at SIGNATURE_CHARS
    result: MessageItem | None = None
    unanswered: bool = False  # no tool message of the transcript answers it (e.g. waiting for approval)

    @property
    def cut(self) -> bool:
        return self.signature.endswith("…)")


@dataclass(frozen=True)
class Edit:
    """A later change of a message's text (on the current branch)."""

    ts: datetime | None
    before: str | None  # the text it had before


@dataclass(frozen=True)
class MessageItem:
    """One message of the transcript, as the chat draws it."""

    number: int  # ordinal + 1: "Message 5"
    ordinal: int
    role: str
    speaker: str  # plain label: "User", "Assistant", "Tool · lookup_order", "Other (critic)"
    content: str
    ts: datetime | None
    message_id: str | None = None
    checkpoint_id: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None  # the metrics' reply latency (this reply pairs with a question)
    since_question_s: float | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # a tool message: the call it answers
    tool_status: str | None = None
    non_text_blocks: int = 0
    media: tuple[Media, ...] = ()  # what the non-text blocks were (older databases: none, only the count)
    edits: tuple[Edit, ...] = ()
    index: int | None = None  # a filtered read's `index` (contract §4); None in the whole conversation
    kind: str = field(default="message", init=False)

    @property
    def failed(self) -> bool:
        return self.tool_status == "error"


@dataclass(frozen=True)
class Marker:
    """Something that happened between two messages (`analytics.transcript.context.MARKER_KINDS`)."""

    kind: str  # removed / pause / restart / interrupt / edited / pending
    after_ordinal: int  # -1: before the first message
    title: str  # what a reader sees first, e.g. "2 messages removed here"
    note: str | None = None  # a second, smaller line
    ts: datetime | None = None
    texts: tuple[tuple[str, str], ...] = ()  # (speaker, text): removed messages, or the text before an edit
    detail: str | None = None  # a pending interrupt's value (JSON)
    ordinal: int | None = None  # an edit: the edited message


TranscriptItem = MessageItem | Marker


# --- labels ------------------------------------------------------------------------


def header(item: MessageItem) -> str:
    """The line above a message: who, which message, when, how fast and with what.

    >>> from datetime import datetime, timezone
    >>> header(MessageItem(2, 1, "assistant", "Assistant", "hi", datetime(2025, 3, 3, 10, 5, tzinfo=timezone.utc),
    ...        model="gpt-4o-mini", input_tokens=120, output_tokens=40, latency_s=0.9, since_question_s=0.9))
    '**Assistant** · Message 2 · 2025-03-03 10:05:00 UTC · replied in 0.9 s · gpt-4o-mini · 120 in / 40 out tokens'
    """
    bits = [f"**{item.speaker}**", f"Message {item.number}", clock(item.ts)]  # (numbered once, as everywhere)
    if item.latency_s is not None:
        bits.append(f"replied in {_seconds(item.latency_s)}")
    elif item.role == "assistant" and item.since_question_s is not None:
        bits.append(f"{_seconds(item.since_question_s)} after the question")
    if item.model:
        bits.append(item.model)
    if item.input_tokens is not None or item.output_tokens is not None:
        given = lambda v: "?" if v is None else f"{v:,}"  # noqa: E731
        bits.append(f"{given(item.input_tokens)} in / {given(item.output_tokens)} out tokens")
    return " · ".join(bits)


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if abs(value) < 60 else duration(value)


def ids(item: MessageItem) -> str:
    """A message's identifiers, for looking it up elsewhere (drawn when asked: a tooltip on every
    header cost the browser a second per hundred messages).

    >>> ids(MessageItem(3, 2, "user", "User", "hi", None, message_id="m-1", checkpoint_id="c-9"))
    'message id `m-1` · first saved in checkpoint `c-9`'
    """
    lines = [f"message id {code(item.message_id)}" if item.message_id else "no message id (so no time of its own)"]
    if item.checkpoint_id:
        lines.append(f"first saved in checkpoint {code(item.checkpoint_id)}")
    return " · ".join(lines)  # (numbered once: the header's "Message N")


def speaker(role: str, name: Any = None, lc_type: Any = None, chat_role: Any = None) -> str:
    """The plain label of a message's author.

    >>> speaker("tool", "lookup_order"), speaker("other", None, "chat", "critic"), speaker("user")
    ('Tool · lookup_order', 'Other (critic)', 'User')
    """
    label = SPEAKERS.get(role, role.title())
    if role == "other":
        what = chat_role if not is_missing(chat_role) else lc_type
        return f"{label} ({what})" if not is_missing(what) else label
    if not is_missing(name):
        return f"{label} · {name}"
    return label


def signature(name: str, args: Any, limit: int = SIGNATURE_CHARS) -> str:
    """A tool call as one line, `name(key=value, …)` with JSON values, cut at `limit`.

    >>> signature("lookup_order", {"order_id": "A-1043"})
    'lookup_order(order_id="A-1043")'
    >>> signature("f", {"text": "x" * 50}, limit=20)
    'f(text="xxxxxxxxxx…)'
    """
    if isinstance(args, dict):
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    elif args in (None, "", []):
        inner = ""
    else:
        inner = json.dumps(args, ensure_ascii=False)
    text = f"{name}({inner})"
    if len(text) > limit:
        text = text[: max(limit - 2, len(name) + 1)] + "…)"
    return text


def tool_calls(value: Any) -> tuple[ToolCall, ...]:
    """The `tool_calls` JSON of a message as `ToolCall`s (text that is not JSON: one call named "?").

    >>> [c.signature for c in tool_calls('[{"name": "f", "args": {"a": 1}, "id": "c1"}]')]
    ['f(a=1)']
    """
    if is_missing(value) or value == "":
        return ()
    try:
        calls = jsontext.loads(value) if isinstance(value, str) else value
    except ValueError:
        return (ToolCall("?", value, None, signature("?", str(value))),)
    if not isinstance(calls, list):
        calls = [calls]
    out = []
    for call in calls:
        if not isinstance(call, dict):
            out.append(ToolCall("?", call, None, signature("?", call)))
            continue
        name = str(call.get("name") or "?")
        args = call.get("args", call.get("arguments"))
        if isinstance(args, str):  # OpenAI-style arguments are a JSON string
            try:
                args = jsontext.loads(args)
            except ValueError:
                pass
        out.append(ToolCall(name, args, _value(call.get("id")), signature(name, args)))
    return tuple(out)


# --- building the items --------------------------------------------------------------


def message_item(row: Any, edits: tuple[Edit, ...] = ()) -> MessageItem:
    """One `read()` / `in_context()` row (a dict or a Series) as a `MessageItem`."""
    get = row.get
    role = str(get("role"))
    blocks = _value(get("non_text_blocks"))
    index = _value(get("index"))
    return MessageItem(
        number=int(get("ordinal")) + 1,
        ordinal=int(get("ordinal")),
        role=role,
        speaker=speaker(role, _value(get("name")), _value(get("lc_type")), _value(get("chat_role"))),
        content="" if is_missing(get("content")) else str(get("content")),
        ts=_value(get("ts")),
        message_id=_value(get("message_id")),
        checkpoint_id=_value(get("checkpoint_id")),
        model=_value(get("model")),
        input_tokens=_value(get("input_tokens")),
        output_tokens=_value(get("output_tokens")),
        latency_s=_value(get("latency_s")),
        since_question_s=_value(get("since_question_s")),
        tool_calls=tool_calls(get("tool_calls")),
        tool_call_id=_value(get("tool_call_id")),
        tool_status=_value(get("tool_status")),
        non_text_blocks=int(blocks or 0),
        media=media(get("media")),
        edits=edits,
        index=None if index is None else int(index),
    )


def _removed_title(n: int) -> str:
    return f"{plural(n, 'message')} removed here"


def markers(frame: pd.DataFrame | None, gap_minutes: float = 30.0) -> list[Marker]:
    """`in_context().markers` rows as `Marker`s: removed messages at one place become one
    marker; a pause that a restart or an interrupt at the same place already explains is
    folded into it, and so is an idle-gap restart inside an interrupt's wait (a person taking
    their time to answer, said once as that wait; a change of process stays a restart)."""
    if frame is None or frame.empty:
        return []
    out: list[Marker] = []
    explained = {
        int(r.after_ordinal) for r in frame.itertuples() if r.kind in ("restart", "interrupt")
    }  # fmt: skip
    waits = [(int(r.after_ordinal), r.ts, r.until_ts) for r in frame.itertuples()
             if r.kind == "interrupt" and not is_missing(r.ts) and not is_missing(r.until_ts)]
    removed = frame[frame["kind"] == "removed"]
    for after, group in removed.groupby("after_ordinal", sort=False):
        texts = tuple((speaker(str(r.role or "other")), "" if is_missing(r.content) else str(r.content)) for r in group.itertuples())
        first, last = group["ts"].min(), group["ts"].max()
        when = clock(first) if first == last else f"{clock(first)} → {clock(last)}"
        out.append(Marker("removed", int(after), _removed_title(len(group)), f"removed from the conversation · {when}",
                          _value(first), texts))  # fmt: skip
    for r in frame[frame["kind"] != "removed"].itertuples():
        after, ts = int(r.after_ordinal), _value(r.ts)
        if r.kind == "pause":
            if after in explained:
                continue
            out.append(Marker("pause", after, f"{duration(r.gap_s)} pause", f"no message from {clock(r.ts)} to {clock(r.until_ts)}", ts))
        elif r.kind == "restart":
            if str(r.reason) == "idle_gap" and any(at == after and start <= r.ts and r.until_ts <= end
                                                   for at, start, end in waits):
                continue  # (the gap is the interrupt's wait for a person)
            idle = "idle_gap" in str(r.reason)
            title = f"Restart detected · resumed after {duration(r.gap_s)}" if idle else "Restart detected · another process"
            why = [f"idle {duration(r.gap_s)} (over {duration(gap_minutes * 60)})"] if idle else []
            why += [] if is_missing(r.detail) else [str(r.detail)]
            out.append(Marker("restart", after, title, " · ".join([*why, f"{clock(r.ts)} → {clock(r.until_ts)}"]), ts))
        elif r.kind == "interrupt":
            waited = "" if is_missing(r.gap_s) else f", resumed {duration(r.gap_s)} later"
            out.append(Marker("interrupt", after, f"Paused for human input{waited}",
                              f"interrupt at {clock(r.ts)}" + ("" if is_missing(r.until_ts) else f" · resumed {clock(r.until_ts)}"), ts))  # fmt: skip
        elif r.kind == "edited":
            texts = ((speaker(str(r.role or "other")), "" if is_missing(r.content) else str(r.content)),)
            out.append(Marker("edited", after, f"Message {int(r.ordinal) + 1} was edited here", f"changed at {clock(r.ts)}",
                              ts, texts, ordinal=int(r.ordinal)))  # fmt: skip
        elif r.kind == "pending":
            out.append(Marker("pending", after, "Waiting for human input", interrupt_question(r.detail), ts,
                              detail=_value(r.detail)))  # fmt: skip
    order = {"removed": 0, "pause": 1, "interrupt": 2, "restart": 3, "edited": 4, "pending": 5}
    return sorted(out, key=lambda m: (m.after_ordinal, order[m.kind]))


def interrupt_question(value: Any) -> str | None:
    """What a pending interrupt asks, in one line (its `question` or `message`, else its value).

    >>> interrupt_question('[[{"value": {"question": "Approve this action?", "action": "issue_refund"}, "id": "x"}]]')
    'Approve this action? (action: issue_refund)'
    """
    if is_missing(value):
        return None
    try:
        data = jsontext.loads(value) if isinstance(value, str) else value
    except ValueError:
        return str(value)[:200]
    while isinstance(data, list) and data:  # [[Interrupt, …]] per task
        data = data[0]
    if isinstance(data, dict) and "value" in data:
        data = data["value"]
    if isinstance(data, dict):
        head = data.get("question") or data.get("message") or data.get("prompt")
        rest = {k: v for k, v in data.items() if k not in ("question", "message", "prompt") and isinstance(v, str)}
        tail = ", ".join(f"{k}: {v}" for k, v in rest.items())
        if head:
            return f"{head}" + (f" ({tail})" if tail else "")
        return json.dumps(data, ensure_ascii=False)[:200]
    return str(data)[:200]


def items(
    messages: pd.DataFrame, frame: pd.DataFrame | None = None, gap_minutes: float = 30.0, nest: bool = True
) -> list[TranscriptItem]:
    """The chat: each message in order with the markers where they happened.

    With `nest`, a tool message is drawn beneath the call it answers when it follows
    that message with nothing else between (other tool results aside); otherwise (a
    pause, a restart, an interrupt in between) it keeps its own place, so the order
    in time holds. Without, every message is an item of its own (a filtered read).
    """
    placed = markers(frame, gap_minutes)
    edits: dict[int, list[Edit]] = {}
    for m in placed:
        if m.kind == "edited" and m.ordinal is not None:
            edits.setdefault(m.ordinal, []).append(Edit(m.ts, m.texts[0][1] if m.texts else None))
    rows = [message_item(r, tuple(edits.get(int(r["ordinal"]), ()))) for r in messages.to_dict("records")]
    if nest:  # the whole transcript: a call no tool message answers says so
        answered = {r.tool_call_id for r in rows if r.role == "tool" and r.tool_call_id}
        rows = [replace(r, tool_calls=tuple(replace(c, unanswered=bool(c.call_id) and c.call_id not in answered)
                                            for c in r.tool_calls)) if r.tool_calls else r for r in rows]
    by_after: dict[int, list[Marker]] = {}
    for m in placed:
        by_after.setdefault(m.after_ordinal, []).append(m)
    out: list[TranscriptItem] = list(by_after.pop(-1, []))
    open_calls: dict[str, int] = {}  # call id → position in `out` of the asking message
    for item in rows:
        host = open_calls.get(item.tool_call_id) if nest and item.role == "tool" and item.tool_call_id else None
        if host is not None:
            asking = out[host]
            calls = tuple(replace(c, result=item) if c.call_id == item.tool_call_id and c.result is None else c
                          for c in asking.tool_calls)  # fmt: skip
            out[host] = replace(asking, tool_calls=calls)
        else:
            out.append(item)
            if item.tool_calls:
                open_calls = {c.call_id: len(out) - 1 for c in item.tool_calls if c.call_id}
            elif item.role != "tool":
                open_calls = {}
        here = by_after.pop(item.ordinal, [])
        if here:
            open_calls = {}  # something happened in between: later results keep their own place
            out.extend(here)
    for rest in by_after.values():  # after an ordinal not in the transcript (D5 gaps): at the end
        out.extend(rest)
    return out


def numbers(entries: Iterable[TranscriptItem]) -> list[int]:
    """Every message number the items show, nested tool results included (in order)."""
    found = []
    for item in entries:
        if isinstance(item, MessageItem):
            found.append(item.number)
            found += [c.result.number for c in item.tool_calls if c.result is not None]
    return found
