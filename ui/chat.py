"""Drawing a conversation: `draw(items)` draws `ui.models.chat` items — messages (tool calls
as `name(args)` with their result beneath) and the markers between them — and scrolls to
and highlights one message.

Other views hang their own things onto a message with `extra`, a function called
inside each message (and each nested tool result) after its content, or `Hooks`, which
also puts a small control at the end of each message's header line; and `head`, called
right under its header (e.g. badges saying what the message was flagged for):

>>> draw(view.items, focus=8, extra=lambda item: st.caption(f"notes on {item.message_id}"))  # doctest: +SKIP
>>> draw(view.items, extra=Hooks(header=lambda item: st.button("", icon=":material/flag:")))  # doctest: +SKIP

Every message sits in a container keyed `<key>-msg-<number>` (CSS class
`st-key-<key>-msg-<number>`), so a page can draw two conversations side by side
under different `key`s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from analytics import jsontext
from ui import log_text, markup
from ui.formats import plural
from ui.models.chat import Marker, MessageItem, ToolCall, TranscriptItem, clock, duration, header, ids

#: Messages longer than this (characters or lines) show a preview and fold the rest.
LONG_CHARS = 1500
LONG_LINES = 25
PREVIEW_CHARS = 600

_AVATARS = {
    "user": "user",
    "assistant": "assistant",
    "tool": ":material/build:",
    "system": ":material/settings:",
    "other": ":material/help:",
}
_MARKERS = {  # kind → (icon, badge colour)
    "removed": (":material/delete_sweep:", "red"),
    "pause": (":material/schedule:", "gray"),
    "restart": (":material/restart_alt:", "orange"),
    "interrupt": (":material/front_hand:", "violet"),
    "edited": (":material/edit_note:", "blue"),
    "pending": (":material/front_hand:", "orange"),
}
_FOLDS = {"removed": "Show the removed messages", "edited": "Show the text before the edit"}

Extra = Callable[[MessageItem], None]


@dataclass(frozen=True)
class Hooks:
    """What another view draws in each message: `header` at the end of its header line (one
    small control, not a row of its own), `after` beneath its content."""

    header: Extra | None = None
    after: Extra | None = None


def _hooks(extra: Extra | Hooks | None) -> Hooks:
    return extra if isinstance(extra, Hooks) else Hooks(after=extra)


def _header_line(text: str, item: MessageItem, hooks: Hooks, key: str) -> None:
    """A message's header line, with the view's control at its end when it has one: on the
    header's line at any width, a long header wrapping beside it (`markup.HEADER_LINES`)."""
    if hooks.header is None:
        markup.caption(text)
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key=f"{markup.HEADER_LINE}{key}-{item.number}"):
        markup.caption(text)
        hooks.header(item)


def draw(
    entries: Sequence[TranscriptItem], focus: int | None = None, raw: bool = False,
    extra: Extra | Hooks | None = None, key: str = "chat", show_ids: bool = False, head: Extra | None = None,
) -> None:
    """Draw the items in order; highlight message `focus` and scroll it into view; `show_ids`
    adds each message's ids under its header."""
    if focus is not None:
        highlight(focus, key)
    for item in entries:
        if isinstance(item, MessageItem):
            message(item, raw=raw, extra=extra, key=key, show_ids=show_ids, head=head)
        else:
            marker(item)
    if focus is not None:
        scroll_to(focus, key)


def highlight(number: int, key: str = "chat") -> None:
    """Mark message `number` (a style rule; it takes no room on the page)."""
    st.html(
        f"<style>.st-key-{key}-msg-{number} {{ background: rgba(255, 196, 0, 0.14); border-radius: 0.6rem;"
        " box-shadow: 0 0 0 2px rgba(230, 160, 0, 0.75); padding: 0.25rem 0.4rem; }</style>"
    )


def scroll_to(number: int, key: str = "chat") -> None:
    """Scroll message `number` to the middle of the view once, when it is drawn (a script that runs
    again only when the message asked for changes)."""
    target = json.dumps(f".st-key-{key}-msg-{number}")
    st.html(
        "<script>(function () {"
        f"  const pick = () => document.querySelector({target});"
        "  let tries = 0;"
        "  const go = () => { const el = pick();"
        "    if (el) { el.scrollIntoView({block: 'center'}); } else if (tries++ < 40) { setTimeout(go, 100); } };"
        "  setTimeout(go, 50);"
        "})();</script>",
        unsafe_allow_javascript=True,
    )


def content(text: str, raw: bool = False) -> None:
    """A message's text (markdown, or as typed with `raw`), long ones folded after a preview; a
    pasted log, trace or listing in it (`log_text.parts`) as preformatted text, its lines as written."""
    if not text:
        st.caption("(no text content)")
        return
    show = st.text if raw else _drawn
    if len(text) > LONG_CHARS or text.count("\n") > LONG_LINES:
        cut = text[:PREVIEW_CHARS].rsplit("\n", 1)[0] if "\n" in text[:PREVIEW_CHARS] else text[:PREVIEW_CHARS]
        show(cut + " …")
        with st.expander(f"Show the whole message ({len(text):,} characters)"):
            show(text)
    else:
        show(text)


def _drawn(text: str) -> None:
    """A message's text as Markdown, each stretch of machine output in it preformatted."""
    for log, part in log_text.parts(text):
        if log:
            preformatted(part)
        elif part.strip():
            markup.message(markup.line_breaks(part))


def preformatted(text: str) -> None:
    """Text drawn as written, in a monospaced block that wraps its long lines (no Markdown forms)."""
    st.code(text, language=None, wrap_lines=True)


def _result_text(text: str) -> None:
    """A tool's output as plain text (JSON on one line); a long one folded after a preview,
    and JSON shown indented there."""
    try:
        data = jsontext.loads(text) if text[:1] in "[{" else None
    except ValueError:
        data = None
    body = json.dumps(data, ensure_ascii=False) if data is not None else text
    if not body:
        st.caption("(empty result)")
    elif len(body) > LONG_CHARS or body.count("\n") > LONG_LINES:
        st.text(body[:PREVIEW_CHARS] + " …")
        with st.expander(f"Show the whole result ({len(body):,} characters)"):
            if data is not None:
                st.json(data, expanded=True)
            else:
                st.text(body)
    else:
        st.text(body)


def _status(item: MessageItem) -> str:
    if item.tool_status == "error":
        return ":red[:material/error: error]"
    if item.tool_status == "success":
        return ":green[:material/check_circle: success]"
    return "result"


def _code(text: str) -> str:
    return markup.code(text)


def tool_call(
    call: ToolCall, raw: bool = False, extra: Extra | Hooks | None = None, key: str = "chat", show_ids: bool = False,
    head: Extra | None = None,
) -> None:
    """One call, `name(args)`, and beneath it the tool's result with its status."""
    markup.markdown(f":material/build: {_code(call.signature)}")
    if call.cut:
        with st.expander("All arguments"):
            st.json(call.args, expanded=True)
    result = call.result
    if result is None:
        if call.unanswered:
            st.caption("↳ no result in the transcript (not run, or still waiting)")
        return
    hooks = _hooks(extra)
    with st.container(key=f"{key}-msg-{result.number}"):
        _header_line(f"↳ {_status(result)} · Message {result.number} · {clock(result.ts)}", result, hooks, key)
        if head is not None:
            head(result)
        if show_ids:
            markup.caption(ids(result))
        _result_text(result.content)
        if hooks.after is not None:
            hooks.after(result)


def message(
    item: MessageItem, raw: bool = False, extra: Extra | Hooks | None = None, key: str = "chat",
    show_ids: bool = False, head: Extra | None = None,
) -> None:
    """One message as a chat bubble: header, text, tool calls with results, later edits."""
    hooks = _hooks(extra)
    with st.container(key=f"{key}-msg-{item.number}"):
        with st.chat_message(item.role, avatar=_AVATARS.get(item.role, _AVATARS["other"])):
            _header_line(header(item), item, hooks, key)
            if head is not None:
                head(item)
            if show_ids:
                markup.caption(ids(item))
            if item.role == "tool":
                markup.caption(_status(item) + (f" · answers call `{item.tool_call_id}`" if item.tool_call_id else ""))
                _result_text(item.content)
            elif item.content or not item.tool_calls:  # a message that only calls tools has nothing to say
                content(item.content, raw)
            for edit in item.edits:
                with st.expander(f"Edited later ({clock(edit.ts)}): show the text before", icon=":material/edit_note:"):
                    st.text(edit.before or "(no text)")
            for m in item.media:  # (the URL as text: the app fetches nothing the data names)
                icon = ":material/image:" if m.kind == "image" else ":material/attach_file:"
                st.caption(f"{icon} {m.line()}", help="A link in the data is shown, never loaded: open it yourself if you "
                                          "trust it")
            if item.non_text_blocks > len(item.media):
                n = item.non_text_blocks - len(item.media)
                st.caption(f"{plural(n, 'non-text block')} (images, files) not shown")
            if hooks.after is not None:  # (before its calls: beneath them it would read as the result's)
                hooks.after(item)
            for call in item.tool_calls:
                tool_call(call, raw, extra, key, show_ids, head)


def marker(m: Marker) -> None:
    """What happened between two messages: a badge and a line; removed or earlier text folded beneath."""
    icon, color = _MARKERS.get(m.kind, (":material/info:", "gray"))
    if m.kind == "pending":
        st.warning(markup.inert(f"**{m.title}**" + (f": {m.note}" if m.note else "")), icon=icon)
        if m.detail:
            with st.expander("The interrupt's value"):
                st.json(m.detail, expanded=True)
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.badge(m.title, icon=icon, color=color)
        if m.note:
            markup.caption(m.note)
    if m.texts:
        with st.expander(_FOLDS.get(m.kind, "Show the text")):
            for who, text in m.texts:
                if text and log_text.has_log(text):
                    markup.message(f"**{who}:**")
                    _drawn(text)
                else:
                    markup.message(f"**{who}:** {markup.line_breaks(text)}" if text else f"**{who}:** (no text)")
