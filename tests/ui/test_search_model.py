"""A search hit's snippet as the Search page draws it: plain text, the match where the search found it."""

from __future__ import annotations

from collections import namedtuple

import pandas as pd

from ui.models.search import _hit

Row = namedtuple("Row", "thread_id tenant_id ordinal role name ts snippet match_start match_end")


def hit(snippet: str, start, end):
    return _hit(Row("t1", "acme", 4, "assistant", None, pd.Timestamp("2025-03-03", tz="UTC"), snippet, start, end))


def test_a_snippet_loses_its_markdown_marks_and_keeps_the_match():
    text = "I am talking to **ledger-svc** now, see [the runbook](http://x/rb)."
    start = text.index("ledger")
    h = hit(text, start, start + len("ledger"))
    assert (h.before, h.match, h.after) == ("I am talking to ", "ledger", "-svc now, see the runbook.")
    assert h.number == 5  # the transcript's "Message 5"


def test_a_mark_inside_the_match_and_a_snippet_without_a_match():
    text = "run `make test` first"
    start = text.index("`make")
    h = hit(text, start, start + len("`make test`"))
    assert (h.before, h.match, h.after) == ("run ", "make test", " first")
    assert hit("## Heading\n**bold**", None, None).before == "Heading\nbold"


def test_a_snippet_holding_a_sentinel_is_left_as_it_is():
    text = "odd \x00 byte **x**"
    h = hit(text, 0, 3)
    assert h.before + h.match + h.after == text
