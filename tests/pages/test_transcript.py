"""AppTests of the transcript explorer (pages/transcript.py) on the demo database."""

from __future__ import annotations

import pandas as pd
import pytest

import analytics
from tests.pages.conftest import captions, markdown_texts, open_page


def test_first_user_message_of_a_known_thread(app, con, readme_facts):
    thread, (first_user, _) = next(iter(readme_facts.items()))
    expected = analytics.read(con, thread, speaker="user", index=0)
    assert expected["content"].item() == first_user  # the README fact and the database agree
    at = open_page(app, "transcript", thread=thread, speaker="user", index="0")
    shown = markdown_texts(at)
    assert first_user in shown
    # Only that one message: the assistant's first reply is not drawn.
    other = analytics.read(con, thread, speaker="assistant", index=0)["content"].item()
    assert other not in shown
    meta = [c for c in captions(at) if c.startswith("**user**")]
    row = expected.iloc[0]
    assert meta == [meta[0]] and "#0 in view" in meta[0] and f"ordinal {row['ordinal']}" in meta[0]
    assert row["message_id"] in meta[0] and row["ts"].strftime("%Y-%m-%d %H:%M:%S UTC") in meta[0]


@pytest.mark.parametrize("fact", [0, 1, 2, 3])
def test_last_assistant_reply_with_negative_index(app, con, readme_facts, fact):
    thread, (_, last_reply) = list(readme_facts.items())[fact]
    assert analytics.read(con, thread, speaker="assistant", index=-1)["content"].item() == last_reply
    at = open_page(app, "transcript", thread=thread, speaker="assistant", index="-1")
    assert last_reply in markdown_texts(at)


def test_widgets_write_the_url_and_the_url_restores_the_view(app, con, readme_facts):
    thread = list(readme_facts)[1]
    at = open_page(app, "transcript")
    assert any("Pick a thread" in i.value for i in at.info)
    at.selectbox(key="transcript.thread").set_value(thread).run()
    at.radio(key="transcript.speaker").set_value("user").run()
    at.number_input(key="transcript.index").set_value(-1).run()
    at.number_input(key="transcript.limit").set_value(1).run()
    at.toggle(key="transcript.table").set_value(True).run()
    assert not at.exception
    params = dict(at.query_params)
    assert params == {"thread": thread, "speaker": "user", "index": "-1", "limit": "1", "table": "1"}

    expected = analytics.read(con, thread, speaker="user", index=-1, limit=1)
    # A new session opened on that link draws the same view.
    from streamlit.testing.v1 import AppTest

    from tests.pages.conftest import APP, TIMEOUT

    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "transcript", **params)
    assert fresh.selectbox(key="transcript.thread").value == thread
    assert fresh.radio(key="transcript.speaker").value == "user"
    assert fresh.number_input(key="transcript.index").value == -1
    table = fresh.dataframe[0].value
    assert table["content"].tolist() == expected["content"].tolist()
    assert table["ordinal"].tolist() == expected["ordinal"].tolist()


def test_table_view_shows_exactly_the_read(app, con, readme_facts):
    thread = list(readme_facts)[1]
    at = open_page(app, "transcript", thread=thread, table="1")
    table = at.dataframe[0].value
    expected = analytics.read(con, thread)
    assert len(table) == len(expected) > 1
    assert table["index"].tolist() == expected["index"].tolist()
    assert table["role"].tolist() == expected["role"].tolist()
    assert table["message_id"].fillna("").tolist() == expected["message_id"].fillna("").tolist()
    assert [d.label for d in at.get("download_button")] == ["Download CSV"]


def test_time_range_mode_filters_by_checkpoint_time(app, con):
    thread = "globex:api:sess-2107"
    rows = analytics.read(con, thread)
    stamps = sorted(rows["ts"].dropna().unique())
    since, until = stamps[1], stamps[-2]
    expected = analytics.read(con, thread, since=since, until=until)
    assert 0 < len(expected) < len(rows)
    at = open_page(app, "transcript", thread=thread, mode="time", since=since.isoformat(), until=until.isoformat(),
                   table="1")
    assert at.number_input(key="transcript.limit") is not None
    with pytest.raises(KeyError):
        at.number_input(key="transcript.index")  # the modes are exclusive: no index widget in time mode
    table = at.dataframe[0].value
    assert table["ordinal"].tolist() == expected["ordinal"].tolist()


def test_switching_mode_drops_the_other_modes_params(app, readme_facts):
    thread = next(iter(readme_facts))
    at = open_page(app, "transcript", thread=thread, index="0")
    at.radio(key="transcript.mode").set_value("time").run()
    at.text_input(key="transcript.since").set_value("2025-03-01T00:00:00Z").run()
    assert "index" not in at.query_params and at.query_params["since"] == "2025-03-01T00:00:00Z"
    at.radio(key="transcript.mode").set_value("index").run()
    assert "since" not in at.query_params and at.query_params.get("mode") is None


def test_time_range_on_a_thread_without_timestamps_is_a_warning_not_a_traceback(app, con):
    thread = "faq-kiosk-lobby"
    assert analytics.read(con, thread)["ts"].isna().all()
    at = open_page(app, "transcript", thread=thread, mode="time", since="2025-03-01T00:00:00Z")
    assert not at.exception
    assert any("no message timestamps" in w.value for w in at.warning)
    # In index mode the same thread reads fine, each message marked "time unknown".
    at = open_page(app, "transcript", thread=thread)
    assert sum("time unknown" in c and "no message id" in c for c in captions(at)) == len(analytics.read(con, thread))


@pytest.mark.parametrize(
    "params, needle",
    [
        ({"mode": "time", "since": "yesterday"}, "not an ISO 8601"),
        ({"mode": "time", "since": "2025-03-10T00:00:00Z", "until": "2025-03-01T00:00:00Z"}, "is after until"),
    ],
)
def test_bad_requests_are_friendly_errors(app, readme_facts, params, needle):
    at = open_page(app, "transcript", thread=next(iter(readme_facts)), **params)
    assert not at.exception
    assert any(needle in e.value for e in at.error), [e.value for e in at.error]


def test_index_out_of_range_answers_empty(app, readme_facts):
    at = open_page(app, "transcript", thread=next(iter(readme_facts)), speaker="user", index="999")
    assert not at.exception and not at.error
    assert any("No message matches" in i.value for i in at.info)


def test_unknown_thread_in_a_link(app):
    at = open_page(app, "transcript", thread="nope:nope:nope")
    assert any("not in this database" in w.value for w in at.warning)
    assert at.selectbox(key="transcript.thread").value is None


def test_tool_calls_and_results_are_folded(app, con):
    thread = "acme:web:sess-1002"
    rows = analytics.read(con, thread)
    tool_names = {n for n in rows.loc[rows["role"] == "tool", "name"]}
    at = open_page(app, "transcript", thread=thread)
    labels = [e.label for e in at.expander]
    assert sum(lab.startswith("1 tool call") for lab in labels) == int((rows["tool_call_count"] > 0).sum())
    assert sum(lab.startswith("Tool result") for lab in labels) == int((rows["role"] == "tool").sum())
    assert any(name in lab for lab in labels for name in tool_names)


def test_find_narrows_the_picker_to_matching_threads(app, con, readme_facts):
    thread, (first_user, _) = next(iter(readme_facts.items()))
    needle = first_user.split()[5]
    at = open_page(app, "transcript", find=needle)
    options = at.selectbox(key="transcript.thread").options
    assert any(o.startswith(thread) for o in options)
    total = con.execute("select count(*) from threads").fetchone()[0]
    assert len(options) < total


def test_long_content_is_collapsed():
    from streamlit.testing.v1 import AppTest

    def script():
        import pandas as pd

        from ui import render

        row = pd.Series({
            "role": "assistant", "index": 0, "ordinal": 3, "ts": None, "message_id": "m1", "name": None,
            "content": "line\n" * 200, "tool_calls": None, "model": None, "total_tokens": None,
            "non_text_blocks": 2, "lc_type": "ai",
        })
        render.message(row)

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert [e.label for e in at.expander] == ["Show the whole message (1,000 characters)"]
    assert any("time unknown" in c for c in captions(at))
    assert any("2 non-text blocks" in c for c in captions(at))
    assert pd.notna(at.markdown[0].value)
