"""The chat items (`ui.models.chat`) and the window around a focused message
(`ui.models.transcript.window`), over every thread of the demo database."""

from __future__ import annotations

import pytest

import analytics
from ui.models import chat
from ui.models.transcript import Conversation, conversation, window


@pytest.fixture(scope="module")
def demo():
    from ui.database import ensure_demo_db

    return ensure_demo_db()


@pytest.fixture(scope="module")
def threads(demo):
    con = analytics.connect(demo)
    try:
        return [t for (t,) in con.execute("SELECT thread_id FROM threads ORDER BY 1").fetchall()]
    finally:
        con.close()


def _flat(items):
    """(kind, number or after_ordinal) in drawing order, nested tool results right after their call's message."""
    out = []
    for item in items:
        if isinstance(item, chat.MessageItem):
            out.append(("message", item.number))
            out += [("message", c.result.number) for c in item.tool_calls if c.result is not None]
        else:
            out.append(("marker", item.after_ordinal))
    return out


def test_every_message_is_drawn_once_in_order_and_each_marker_after_its_message(demo, threads):
    for thread in threads:
        ctx = analytics.in_context(demo, thread)
        flat = _flat(chat.items(ctx.messages, ctx.markers))
        numbers = [n for kind, n in flat if kind == "message"]
        assert numbers == [o + 1 for o in ctx.messages["ordinal"]], thread
        last = 0  # the number of the message drawn before each marker
        for kind, n in flat:
            if kind == "message":
                last = n
            else:
                assert n == last - 1 or (n == -1 and last == 0), (thread, n, last)


def test_a_tool_result_stays_apart_when_something_happened_before_it(demo):
    ctx = analytics.in_context(demo, "acme:mobile:sess-3003")
    items = chat.items(ctx.messages, ctx.markers)
    asking = [i for i in items if isinstance(i, chat.MessageItem) and i.tool_calls]
    lookup, refund = asking
    assert lookup.tool_calls[0].result is not None and lookup.tool_calls[0].result.number == 3  # right after its call
    assert refund.tool_calls[0].result is None and not refund.tool_calls[0].unanswered  # answered, after the wait
    standalone = [i for i in items if isinstance(i, chat.MessageItem) and i.role == "tool"]
    assert [i.number for i in standalone] == [5]
    kinds = [i.kind for i in items]
    assert kinds.index("interrupt") < kinds.index("message", kinds.index("interrupt"))  # the wait, then the result


def test_a_filtered_read_keeps_every_row_its_own_item(demo):
    rows = analytics.read(demo, "acme:web:sess-1002")
    items = chat.items(rows, nest=False)
    assert [i.number for i in items] == [o + 1 for o in rows["ordinal"]]
    assert all(c.result is None and not c.unanswered for i in items for c in i.tool_calls)
    assert [i.index for i in items] == rows["index"].tolist()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_windows_hold_the_focus_and_cover_the_conversation(demo, threads, size):
    for thread in threads[:12]:
        conv = conversation(demo, thread)
        total = len(conv.numbers)
        for focus in conv.numbers:
            win = window(conv, focus, size=size)
            shown = chat.numbers(win.items)
            assert focus in shown and win.focus == focus
            assert win.earlier + len(shown) + win.later == total
            assert shown == [n for n in conv.numbers if win.first <= n <= win.last]
        # Walking the windows with their "later" starts reaches every message, each window full
        # (the last one ends at the end: it may show again some of the one before), and back.
        seen, start, steps = [], None, 0
        while True:
            win = window(conv, None, start, size=size)
            shown = chat.numbers(win.items)
            assert len([i for i in win.items if isinstance(i, chat.MessageItem)]) == min(size, len(_top(conv)))
            seen += shown
            steps += 1
            if win.start_after is None:
                break
            assert win.start_after > shown[-1] - 1 and steps < total + 2
            start = win.start_after
        assert sorted(set(seen)) == list(conv.numbers)
        back = window(conv, None, win.start_before, size=size) if win.start_before is not None else win
        assert back.first <= win.first


def _top(conv):
    return [i for i in conv.items if isinstance(i, chat.MessageItem)]


def test_a_focus_that_is_not_there(demo):
    conv = conversation(demo, "acme:web:sess-1002")
    assert window(conv, None).focus is None
    empty = Conversation("t")
    assert window(empty, 3).items == () and window(empty, 3).first is None
