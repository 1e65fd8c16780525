"""AppTests of the Search page (pages/search.py) on the demo database."""

from __future__ import annotations

import io
from urllib.parse import parse_qs

import pandas as pd

import analytics
from analytics.searching import SearchQuery, search
from tests.pages.conftest import captions, open_page


def hit_links(at) -> list[tuple[str, dict]]:
    """(label, query params) of each hit's link to its conversation."""
    return [(link.proto.label, {k: v[-1] for k, v in parse_qs(link.proto.query_string).items()})
            for link in at.main.get("page_link")]


def test_a_search_lists_every_hit_with_where_who_when_and_the_match(app, con):
    expected = search(con, SearchQuery("refund", limit=100))
    assert 0 < expected.total <= 25
    at = open_page(app, "search", q="refund")
    links = hit_links(at)
    assert [p["thread"] for _, p in links] == expected.hits["thread_id"].tolist()
    assert [int(p["msg"]) for _, p in links] == (expected.hits["ordinal"] + 1).tolist()
    assert [label for label, _ in links] == [f"{t} · Message {o + 1}" for t, o in
                                             zip(expected.hits["thread_id"], expected.hits["ordinal"])]
    snippets = [h.proto.body for h in at.get("html") if "tl-snippet" in h.proto.body]
    assert len(snippets) == expected.total
    assert all("<mark>" in s and s.split("<mark>")[1].split("</mark>")[0].lower() == "refund" for s in snippets)
    assert any(c.startswith(f"{expected.total:,} messages in {expected.threads:,} conversations") for c in captions(at))
    who = [c for c in captions(at) if " UTC" in c and "·" in c]
    assert who[0].startswith("Assistant · 2025-")


def test_speaker_and_tool_call_scopes(app, con):
    at = open_page(app, "search", q="refund")
    at.segmented_control(key="search.speaker").set_value("user").run()
    users = search(con, SearchQuery("refund", speaker="user"))
    assert at.query_params["speaker"] == "user" and len(hit_links(at)) == users.total < search(con, "refund").total
    at = open_page(app, "search", q="A-1043", **{"in": "tool_calls"})
    calls = search(con, SearchQuery("A-1043", in_="tool_calls"))
    assert len(hit_links(at)) == calls.total > 0
    assert all(s.count("(") >= 1 for s in [h.proto.body for h in at.get("html") if "tl-snippet" in h.proto.body])


def test_the_shared_filters_scope_the_search(app, con):
    at = open_page(app, "search", q="refund", tenant="globex")
    assert at.multiselect(key="search.tenant").value == ["globex"]
    expected = search(con, SearchQuery("refund", filters=analytics.Filters(tenants=("globex",))))
    assert len(hit_links(at)) == expected.total
    assert all(p["thread"].startswith("globex") for _, p in hit_links(at))


def test_pages_of_hits(app, con):
    everything = search(con, SearchQuery("the", limit=1000))
    assert everything.total > 50
    at = open_page(app, "search", q="the")
    assert len(hit_links(at)) == 25
    at.get("pagination")[0].set_value(2).run()
    assert at.query_params["page"] == "2"
    second = [(p["thread"], int(p["msg"])) for _, p in hit_links(at)]
    assert second == list(zip(everything.hits["thread_id"][25:50], everything.hits["ordinal"][25:50] + 1))
    # A new text starts again at page 1.
    at.text_input(key="search.q").set_value("refund").run()
    assert "page" not in at.query_params


def test_download_holds_every_hit(app, con):
    at = open_page(app, "search", q="the")
    button = next(b for b in at.get("download_button") if b.label.startswith("Download all"))
    everything = search(con, SearchQuery("the", limit=1000))
    assert button.label == f"Download all {everything.total:,} hits (CSV)"
    from ui.models.search import search_csv

    frame = pd.read_csv(io.BytesIO(search_csv(con, "the", "all", "messages", analytics.Filters())))
    # (under the page's words: each message by its number, "Message N", not its 0-based ordinal)
    assert frame[["Thread", "Message"]].values.tolist() == (
        everything.hits[["thread_id", "ordinal"]].assign(ordinal=everything.hits["ordinal"] + 1).values.tolist())


def test_no_text_no_hits_and_a_bad_request(app):
    at = open_page(app, "search")
    assert any("Type a word" in i.value for i in at.info) and not hit_links(at)
    at = open_page(app, "search", q="zzzz-nothing")
    assert any("No message contains that text" in i.value for i in at.info)
    at = open_page(app, "search", q="x" * 600)
    assert any("at most 500" in e.value for e in at.error)
