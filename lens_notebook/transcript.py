"""A conversation in a notebook cell, drawn as the transcript explorer draws it.

`transcript(db, thread_id)` reads the thread through the explorer's page model
(`ui.models.transcript.conversation`) and returns a `Transcript`, whose `_repr_html_`
Jupyter shows: each message with the app's header line (who, which message, when, how
fast, model, tokens), tool calls as `name(args)` with their result and status beneath,
and the same markers between messages (removed, pause, restart, interrupt, edited,
pending), a stale transcript's warning above.

Every text from the data is HTML-escaped and shown as typed (the app's "Text as typed"):
no element, link or image can form from it, so drawing a transcript fetches nothing.

>>> from ui.models.chat import MessageItem
>>> html = Transcript((MessageItem(1, 0, "user", "User", "<img src=http://x/y>", None),))._repr_html_()
>>> "&lt;img src=http://x/y&gt;" in html and "<img" not in html
True
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass

from analytics.db import ConOrPath
from analytics.resume.gap import DEFAULT_GAP_MINUTES
from ui.models import transcript as model
from ui.models.chat import Marker, MessageItem, ToolCall, TranscriptItem, clock, header, ids

#: Messages longer than this (characters or lines) show a preview and fold the rest (as the app).
LONG_CHARS = 1500
LONG_LINES = 25
PREVIEW_CHARS = 600

# Symbols every common font has (no emoji: a browser without an emoji font draws boxes).
_TOOL = "⚙"
_MARKERS = {  # kind → (symbol, colour), the app's badges
    "removed": ("✂", "#d62728"), "pause": ("◷", "#7f7f7f"), "restart": ("↻", "#ff7f0e"),
    "interrupt": ("⚑", "#9467bd"), "edited": ("✎", "#1f77b4"), "pending": ("⚑", "#ff7f0e"),
}
_FOLDS = {"removed": "Show the removed messages", "edited": "Show the text before the edit"}
_STYLE = """<style>
.tl-nb { font-family: system-ui, sans-serif; font-size: 14px; line-height: 1.45; max-width: 60rem; }
.tl-nb .tl-msg { border: 1px solid rgba(128,128,128,.35); border-radius: .5rem; padding: .4rem .7rem; margin: .4rem 0; }
.tl-nb .tl-role-user { background: rgba(31,119,180,.07); }
.tl-nb .tl-role-tool { background: rgba(128,128,128,.08); }
.tl-nb .tl-focus { box-shadow: 0 0 0 2px rgba(230,160,0,.75); background: rgba(255,196,0,.14); }
.tl-nb .tl-head, .tl-nb .tl-small { color: rgba(110,110,110,1); font-size: 12px; }
.tl-nb .tl-text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .2rem 0; }
.tl-nb .tl-result { margin: .2rem 0 .3rem 1.2rem; padding-left: .6rem; border-left: 3px solid rgba(128,128,128,.4); }
.tl-nb .tl-error { color: #d62728; font-weight: 600; } .tl-nb .tl-success { color: #2ca02c; font-weight: 600; }
.tl-nb .tl-marker { margin: .3rem 0; } .tl-nb .tl-badge { border-radius: .8rem; padding: .05rem .55rem; color: white; }
.tl-nb .tl-warning { background: rgba(255,170,0,.15); border-left: 4px solid #ff9f00; padding: .4rem .7rem; margin: .4rem 0; }
.tl-nb code { font-size: 13px; }
</style>"""


def _e(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _code_spans(markdown: str) -> str:
    """The app's short Markdown (``**bold**`` and `` `code` `` only) as escaped HTML."""
    out = _e(markdown)
    out = re.sub(r"`([^`]*)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", out)


def _text(text: str, what: str = "message") -> str:
    """A text as typed, a long one folded after a preview (as the app's)."""
    if not text:
        return f'<div class="tl-small">(no text content)</div>' if what == "message" else '<div class="tl-small">(empty result)</div>'
    if len(text) > LONG_CHARS or text.count("\n") > LONG_LINES:
        head = text[:PREVIEW_CHARS]
        cut = head.rsplit("\n", 1)[0] if "\n" in head else head
        return (f'<div class="tl-text">{_e(cut)} …</div><details><summary>Show the whole {what} '
                f'({len(text):,} characters)</summary><div class="tl-text">{_e(text)}</div></details>')
    return f'<div class="tl-text">{_e(text)}</div>'


def _status(item: MessageItem) -> str:
    if item.tool_status == "error":
        return '<span class="tl-error">✖ error</span>'
    if item.tool_status == "success":
        return '<span class="tl-success">✔ success</span>'
    return "result"


def _header(item: MessageItem) -> str:
    line = header(item)  # "**Speaker** · Message 2 · …": the speaker is data, bold by position, not by markup
    rest = line[len(f"**{item.speaker}**"):]
    return f'<div class="tl-head"><b>{_e(item.speaker)}</b>{_e(rest)}</div>'


def _call(call: ToolCall, show_ids: bool, focus: int | None) -> str:
    out = [f'<div>{_TOOL} <code>{_e(call.signature)}</code></div>']
    if call.cut:
        out.append(f'<details><summary>All arguments</summary><div class="tl-text">'
                   f'{_e(json.dumps(call.args, ensure_ascii=False, indent=2, default=str))}</div></details>')
    result = call.result
    if result is None:
        if call.unanswered:
            out.append('<div class="tl-small">↳ no result in the transcript (not run, or still waiting)</div>')
        return "".join(out)
    mark = " tl-focus" if result.number == focus else ""
    out.append(f'<div class="tl-result{mark}" id="tl-msg-{result.number}"><div class="tl-small">↳ {_status(result)}'
               f' · Message {result.number} · {_e(clock(result.ts))}</div>')
    if show_ids:
        out.append(f'<div class="tl-small">{_code_spans(ids(result))}</div>')
    out.append(_text(result.content, "result") + "</div>")
    return "".join(out)


def message_html(item: MessageItem, show_ids: bool = False, focus: int | None = None) -> str:
    """One message as the app's chat bubble: header, text, tool calls with results, later edits."""
    mark = " tl-focus" if item.number == focus else ""
    out = [f'<div class="tl-msg tl-role-{_e(item.role)}{mark}" id="tl-msg-{item.number}">', _header(item)]
    if show_ids:
        out.append(f'<div class="tl-small">{_code_spans(ids(item))}</div>')
    if item.role == "tool":
        answers = f" · answers call <code>{_e(item.tool_call_id)}</code>" if item.tool_call_id else ""
        out.append(f'<div class="tl-small">{_status(item)}{answers}</div>' + _text(item.content, "result"))
    elif item.content or not item.tool_calls:  # a message that only calls tools has nothing to say
        out.append(_text(item.content))
    out += [_call(call, show_ids, focus) for call in item.tool_calls]
    for edit in item.edits:
        out.append(f'<details><summary>✎ Edited later ({_e(clock(edit.ts))}): show the text before</summary>'
                   f'<div class="tl-text">{_e(edit.before or "(no text)")}</div></details>')
    if item.non_text_blocks:
        n = item.non_text_blocks
        out.append(f'<div class="tl-small">+ {n} non-text block{"s" if n > 1 else ""} (images, files) not shown</div>')
    return "".join(out) + "</div>"


def marker_html(m: Marker) -> str:
    """What happened between two messages: the app's badge and line, removed or earlier text folded."""
    icon, colour = _MARKERS.get(m.kind, ("•", "#7f7f7f"))
    if m.kind == "pending":
        out = f'<div class="tl-warning tl-marker-pending">{icon} <b>{_e(m.title)}</b>{": " + _e(m.note) if m.note else ""}'
        if m.detail:
            out += f'<details><summary>The interrupt\'s value</summary><div class="tl-text">{_e(m.detail)}</div></details>'
        return out + "</div>"
    out = (f'<div class="tl-marker tl-marker-{_e(m.kind)}"><span class="tl-badge" style="background:{colour}">'
           f'{icon} {_e(m.title)}</span>{" <span class=tl-small>" + _e(m.note) + "</span>" if m.note else ""}')
    if m.texts:
        said = "".join(f'<div class="tl-text"><b>{_e(who)}:</b> {_e(text) if text else "(no text)"}</div>'
                       for who, text in m.texts)
        out += f'<details><summary>{_FOLDS.get(m.kind, "Show the text")}</summary>{said}</details>'
    return out + "</div>"


@dataclass(frozen=True)
class Transcript:
    """Chat items (`ui.models.chat`) that Jupyter draws as the app does (module docstring)."""

    items: tuple[TranscriptItem, ...]
    thread_id: str | None = None
    warning: str | None = None  # the stale transcript's (`ui.models.transcript.stale_text`) or a problem's
    focus: int | None = None  # the message number highlighted
    show_ids: bool = False  # each message's ids under its header
    note: str | None = None  # what was left out ("messages 1–50 of 300")

    def _repr_html_(self) -> str:
        out = [_STYLE, '<div class="tl-nb">']
        if self.thread_id is not None:
            out.append(f'<div class="tl-small">Thread <code>{_e(self.thread_id)}</code></div>')
        if self.warning:
            out.append(f'<div class="tl-warning">{_code_spans(self.warning)}</div>')
        if self.note:
            out.append(f'<div class="tl-small">{_e(self.note)}</div>')
        for item in self.items:
            out.append(message_html(item, self.show_ids, self.focus) if isinstance(item, MessageItem) else marker_html(item))
        return "".join(out) + "</div>"

    def __repr__(self) -> str:  # a terminal has no HTML: who said what, one line each
        lines = [f"Transcript of {self.thread_id}"] if self.thread_id else []
        for item in self.items:
            if isinstance(item, MessageItem):
                lines.append(f"Message {item.number} · {item.speaker}: {item.content[:80]!r}")
            else:
                lines.append(f"-- {item.title}")
        return "\n".join(lines)


def transcript(
    con_or_path: ConOrPath, thread_id: str, focus: int | None = None, size: int | None = None,
    show_ids: bool = False, gap_minutes: float = DEFAULT_GAP_MINUTES,
) -> Transcript:
    """The whole conversation of `thread_id` with its markers; `focus` highlights message
    `focus`; `size` draws only a window of that many messages around it (the explorer's window)."""
    conv = model.conversation(con_or_path, thread_id, gap_minutes)
    if conv.problem is not None:
        return Transcript((), thread_id, conv.problem.message)
    items, note = conv.items, None
    if size is not None:
        win = model.window(conv, focus, size=size)
        items, focus = win.items, win.focus
        if win.earlier or win.later:
            note = f"Messages {win.first}–{win.last} ({win.earlier:,} before, {win.later:,} after)"
    return Transcript(tuple(items), thread_id, model.stale_text(conv.thread), focus, show_ids, note)

