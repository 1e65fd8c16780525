"""A pasted log in a message is drawn as written (preformatted), not as Markdown; the message's own
words and Markdown meant as Markdown stay Markdown."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from ui.log_text import has_log, parts

#: Lines a user pastes from a build, a server or a shell: `#` rules, `*` banners, `_` names, `|` columns, indentation.
LOGS = [
    "#### BUILD FAILED ####\n*** step 3 of 5: compile ***\n  __init__.py: syntax error | line 12\n"
    "  __main__.py: skipped | line 0\n# exit 2",
    "2025-03-12 16:50:03 ERROR worker-1 | job_id=7 failed\n2025-03-12 16:50:04 WARN  retrying in 5 s\n"
    "2025-03-12 16:50:09 INFO  job_id=7 done",
    'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\n'
    'ValueError: bad __value__',
    "| pid | cmd |\n| 12  | nginx |\n| 13  | __worker__ |\n    ^ restarted",
]
#: A message that says something, then pastes what the machine printed.
PROSE, PASTED = "The build fails since this morning, here is what it printed:", LOGS[0]
#: Messages written in Markdown on purpose: headings, lists, bold, a table with its separator row, a fence.
MARKDOWN = [
    "## Your refund\n\nI have **issued** the refund for order _B-2211_.\n\n- amount: 89.00 EUR\n- arrives in 3–5 days",
    "| Order | Status |\n|---|---|\n| A-1043 | shipped |\n| B-2211 | refunded |",
    "Run this:\n\n```\n#!/bin/sh\n  make test | tee log\n```\nthen tell me what it prints.",
    "Hi! Thanks for waiting.\nYour order ships *today*.\nAnything else?",
]


@pytest.mark.parametrize("text", LOGS)
def test_a_pasted_log_is_found_whole(text):
    assert parts(text) == [(True, text)]


def test_a_log_after_words_is_cut_from_them():
    assert parts(f"{PROSE}\n{PASTED}\n\nThanks!") == [(False, PROSE), (True, PASTED), (False, "\nThanks!")]


@pytest.mark.parametrize("text", MARKDOWN)
def test_markdown_meant_as_markdown_is_not_a_log(text):
    assert not has_log(text)


def _messages(texts: list[str]) -> None:
    from ui import chat

    for text in texts:
        chat.content(text)


@pytest.mark.parametrize(("texts", "as_code"), [(LOGS, True), (MARKDOWN, False)])
def test_a_log_is_drawn_preformatted_and_markdown_rendered(texts, as_code):
    at = AppTest.from_function(_messages, args=(texts,), default_timeout=60).run()
    assert not at.exception
    codes = [c.value for c in at.code]
    if as_code:
        assert codes == texts  # every line as written, nothing of it a heading, emphasis or table
        assert not at.markdown
    else:
        assert not codes and len(at.markdown) == len(texts)


def test_the_words_before_a_log_stay_markdown():
    at = AppTest.from_function(_messages, args=([f"{PROSE}\n{PASTED}"],), default_timeout=60).run()
    assert not at.exception
    assert [c.value for c in at.code] == [PASTED] and [m.value for m in at.markdown] == [PROSE]
