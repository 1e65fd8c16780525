"""A value from the URL or the data drawn into a page's Markdown forms no image and no link
(docs/security.md, "Rendering"): `ui.markup.code` and `ui.markup.text` are the one way such a
value enters Markdown. The check here reads Markdown as CommonMark does (code spans, backslash
escapes) without the helpers' help, so a helper that lets a backtick or bracket through fails it."""

from __future__ import annotations

import re

import pytest

from tests.pages.conftest import open_page
from ui import markup

HOSTILE = [
    "x` ![u](http://127.0.0.1:9/p.png) `",
    "x`` ![u](http://127.0.0.1:9/p.png) ``",
    "```![u](http://127.0.0.1:9/p.png)",
    "a\n\n![u](http://127.0.0.1:9/p.png)",
    "[click](http://127.0.0.1:9/l) <http://127.0.0.1:9/a> :red[x] $x$",
    "![r][ref]\n\n[ref]: http://127.0.0.1:9/r.png",
]


def _live_markup(md: str) -> str:
    """What of `md` CommonMark reads as syntax: code spans and backslash-escaped characters removed."""
    md = re.sub(r"\\[!-/:-@\[-`{-~]", "", md)
    out, i = [], 0
    while i < len(md):
        m = re.compile(r"`+").match(md, i)
        if not m:
            out.append(md[i])
            i += 1
            continue
        n = len(m.group())
        close = re.compile(r"(?<!`)`{%d}(?!`)" % n).search(md, m.end())
        if close is None:
            out.append(m.group())
            i = m.end()
        else:
            i = close.end()
    return "".join(out)


def _assert_inert(md: str) -> None:
    live = _live_markup(md)
    assert "![" not in live and "](" not in live and "]:" not in live and "<http" not in live, md
    assert "\n\n" not in md, md


@pytest.mark.parametrize("value", HOSTILE)
def test_a_value_as_code_or_text_forms_no_image_or_link(value):
    _assert_inert(f"No thread {markup.code(value)} here")
    _assert_inert(f"tenant **{markup.text(value)}** here")


def test_the_checker_sees_the_break_out_the_helpers_close():
    with pytest.raises(AssertionError):
        _assert_inert(f"No thread `{HOSTILE[0]}` here")


@pytest.mark.parametrize("page", ["transcript", "resume_qa"])
def test_a_thread_id_from_the_url_is_drawn_as_code(app, page):
    at = open_page(app, page, thread=HOSTILE[0])
    drawn = [w.value for w in at.warning] + [s.value for s in at.subheader] + [e.value for e in at.error]
    said = [md for md in drawn if "http://127.0.0.1:9" in md]
    assert said, drawn
    for md in said:
        _assert_inert(md)


@pytest.mark.parametrize("value", HOSTILE)
def test_ids_page_models_put_in_markdown_form_no_image_or_link(value):
    from ui.models.chat import MessageItem, ids
    from ui.models.transcript import stale_text

    _assert_inert(ids(MessageItem(3, 2, "user", "User", "hi", None, message_id=value, checkpoint_id=value)))
    _assert_inert(stale_text({"transcript_checkpoint_id": value, "stale_reason": value}))
