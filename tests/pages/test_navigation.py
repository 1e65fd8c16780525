"""State that travels: the navigation links carry the shared filters, each page's last view and
the open database; the URL names a database only by a name the server knows."""

from __future__ import annotations

import shutil
from urllib.parse import parse_qs

from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP, TIMEOUT, metric, open_page


def links(at) -> dict[str, dict[str, list[str]]]:
    """{page title: query params} of the sidebar's navigation links (a present-but-empty param kept, as a browser keeps it)."""
    return {link.proto.label: parse_qs(link.proto.query_string, keep_blank_values=True)
            for link in at.sidebar.get("page_link")}


def follow(at, title: str, page: str):
    """Click the sidebar link `title` (AppTest cannot click links: open its page with its params)."""
    params = {k: v if len(v) > 1 else v[0] for k, v in links(at)[title].items()}
    return open_page(at, page, **params)


def test_every_page_is_in_the_navigation(app):
    at = app.run()
    assert list(links(at)) == ["Overview", "Conversations", "Outcomes", "Search", "Transcript explorer", "Resume QA",
                               "Waiting on a human", "Topics", "Failure patterns", "Compare", "Review"]


def test_a_tenant_chosen_on_overview_is_chosen_on_conversations(app, con):
    at = open_page(app, "overview")
    at.multiselect(key="overview.tenant").set_value(["acme"]).run()
    nav = links(at)  # drawn before the page, yet with the tenant just chosen
    assert nav["Conversations"]["tenant"] == ["acme"] and nav["Search"]["tenant"] == ["acme"]
    assert nav["Resume QA"]["tenant"] == ["acme"] and nav["Waiting on a human"]["tenant"] == ["acme"]
    assert "tenant" not in nav["Transcript explorer"]  # no filter bar there
    follow(at, "Conversations", "conversations")
    assert at.multiselect(key="conversations.tenant").value == ["acme"]
    acme = con.execute("SELECT count(*) FROM threads WHERE tenant_id = 'acme'").fetchall()[0][0]
    assert any(c.value.startswith(f"rows 1–{acme} of {acme} threads") for c in at.caption)


def test_dates_and_text_travel_and_clearing_a_filter_travels_too(app):
    at = open_page(app, "conversations", tenant="globex", q="refund", **{"from": "2025-03-05"})
    follow(at, "Overview", "overview")
    assert at.multiselect(key="overview.tenant").value == ["globex"]
    assert at.text_input(key="overview.q").value == "refund"
    assert str(at.date_input(key="overview.from").value) == "2025-03-05"
    at.multiselect(key="overview.tenant").set_value([]).run()
    follow(at, "Search", "search")
    assert at.multiselect(key="search.tenant").value == []
    assert at.text_input(key="search.q").value == "refund"  # the text is the search


def test_a_page_opens_as_it_was_last_seen(app):
    at = open_page(app, "conversations", sort="duration_s", order="asc")
    follow(at, "Overview", "overview")
    nav = links(at)
    assert nav["Conversations"]["sort"] == ["duration_s"] and nav["Conversations"]["order"] == ["asc"]
    follow(at, "Conversations", "conversations")
    assert at.selectbox(key="conversations.sort").value == "duration_s"
    assert at.segmented_control(key="conversations.order").value == "asc"


def test_a_search_hit_and_a_conversations_row_link_to_the_transcript_with_the_database(app, tmp_cache, tmp_path, demo_db):
    copy = tmp_path / "other.duckdb"
    shutil.copyfile(demo_db, copy)
    at = app.run()
    at.sidebar.text_input(key="load.spec").set_value(str(copy))
    at.sidebar.button(key="load.go").click().run()
    name = at.query_params["db"]
    assert all(params.get("db") == [name] for params in links(at).values())
    at = open_page(at, "search", q="refund", db=name)
    hit = at.main.get("page_link")[0]
    assert parse_qs(hit.proto.query_string)["db"] == [name]


def test_the_database_given_on_the_command_line_is_the_default_and_the_demo_has_a_name(demo_db, tmp_path, monkeypatch):
    mine = tmp_path / "prod.duckdb"
    shutil.copyfile(demo_db, mine)
    monkeypatch.setattr("sys.argv", ["app.py", "--db", str(mine)])
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert "**prod.duckdb**" in "\n".join(m.value for m in at.sidebar.markdown)
    assert "db" not in at.query_params  # the default needs no name
    demo = AppTest.from_file(APP, default_timeout=TIMEOUT)
    demo.query_params["db"] = "demo"
    demo.run()
    assert "(bundled demo)" in "\n".join(m.value for m in demo.sidebar.markdown)
    assert demo.query_params["db"] == "demo"
    assert metric(demo, "Threads") == "37"
    # A shared link's first run: every navigation link keeps the database (drawn before the page ran)
    assert all(params.get("db") == ["demo"] for params in links(demo).values())


def test_the_url_never_opens_a_path(demo_db, tmp_path):
    secret = tmp_path / "secret.duckdb"
    shutil.copyfile(demo_db, secret)
    for name in (str(secret), "secret.duckdb", "secret", "../secret.duckdb"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params["db"] = name
        at.run()
        assert "secret" not in "\n".join(m.value for m in at.sidebar.markdown)
        assert any("which this server does not know" in w.value for w in at.sidebar.warning)
