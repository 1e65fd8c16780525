"""AppTests of the transcript explorer (pages/transcript.py) on the demo database: the whole
conversation with its markers and a focused message, and the filtered read of contract §4."""

from __future__ import annotations

import pandas as pd
import pytest

import analytics
from tests.pages.conftest import APP, TIMEOUT, captions, markdown_texts, open_page


def chat_numbers(at) -> list[int]:
    """The message numbers drawn, from each message header ("**User** · Message 3 · …")."""
    return [int(c.split(" · ")[1].removeprefix("Message ")) for c in captions(at) if c.startswith("**")]


def highlighted(at) -> list[int]:
    """The message the page highlights (and scrolls to), read from the style and script it draws."""
    found = []
    for h in at.get("html"):
        body = h.proto.body
        if "<style>.st-key-chat-msg-" in body:
            found.append(int(body.split(".st-key-chat-msg-")[1].split(" ")[0]))
    scrolls = [h.proto.body for h in at.get("html") if "scrollIntoView" in h.proto.body]
    assert len(scrolls) == len(found)
    return found


def badges(at) -> list[str]:
    return [m for m in markdown_texts(at) if "-badge[" in m]


@pytest.mark.parametrize("fact", [0, 1, 2, 3])
def test_first_question_and_last_reply_are_shown_in_the_whole_conversation(app, con, readme_facts, fact):
    thread, (first_user, last_reply) = list(readme_facts.items())[fact]
    rows = analytics.read(con, thread)
    first = analytics.read(con, thread, speaker="user", index=0)
    last = analytics.read(con, thread, speaker="assistant", index=-1)
    assert first["content"].item() == first_user and last["content"].item() == last_reply
    for at_, row in (("first-question", first), ("last-reply", last)):
        at = open_page(app, "transcript", thread=thread, at=at_)
        assert highlighted(at) == [int(row["ordinal"].item()) + 1]
        # In context: every message of the thread is there, the answer among them.
        texts = markdown_texts(at)
        assert first_user in texts and last_reply in texts
        assert set(chat_numbers(at)) | _nested(at) == {int(o) + 1 for o in rows["ordinal"]}


def _nested(at) -> set[int]:
    """Numbers of tool results drawn beneath their calls ("↳ … · Message 3 · …")."""
    return {int(c.split("Message ")[1].split(" ")[0]) for c in captions(at) if c.startswith("↳")}


def test_message_n_is_focused_and_a_missing_one_says_so(app, con):
    thread = "acme:web:sess-1002"
    at = open_page(app, "transcript", thread=thread, msg="6")
    assert highlighted(at) == [6]
    assert at.number_input(key="transcript.msg").value == 6
    at = open_page(app, "transcript", thread=thread, msg="99")
    assert not at.exception and highlighted(at) == []
    assert any("There is no message 99: this conversation has messages 1–8." in w.value for w in at.warning)


def test_jump_controls_write_the_url_and_exclude_each_other(app):
    at = open_page(app, "transcript", thread="acme:web:sess-1002")
    assert highlighted(at) == []
    at.segmented_control(key="transcript.at").set_value("last-reply").run()
    assert at.query_params["at"] == "last-reply" and highlighted(at) == [8]
    at.number_input(key="transcript.msg").set_value(3).run()
    assert at.query_params.get("msg") == "3" and "at" not in at.query_params  # a number replaces the jump
    assert highlighted(at) == [3]
    at.segmented_control(key="transcript.at").set_value("first-question").run()
    assert at.query_params.get("at") == "first-question" and "msg" not in at.query_params
    assert highlighted(at) == [1]


def test_tool_calls_read_as_calls_with_their_result_beneath(app, con):
    thread = "acme:web:sess-1002"
    rows = analytics.read(con, thread)
    at = open_page(app, "transcript", thread=thread)
    calls = [m for m in markdown_texts(at) if m.startswith(":material/build:")]
    assert calls == [':material/build: `lookup_order(order_id="A-1043")`',
                     ':material/build: `track_shipment(tracking="1Z999AA10123456784")`']
    results = [c for c in captions(at) if c.startswith("↳")]
    tools = rows[rows["role"] == "tool"]
    assert [int(c.split("Message ")[1].split(" ")[0]) for c in results] == [int(o) + 1 for o in tools["ordinal"]]
    assert all(":material/check_circle: success" in c for c in results)
    texts = [t.value for t in at.text]
    assert any('"order_id": "A-1043", "status": "shipped"' in t for t in texts)  # the result, one line of JSON
    assert not any(lab.startswith("1 tool call") for lab in [e.label for e in at.expander])  # no raw JSON tree


def test_a_failed_tool_call_shows_its_error_status(app, con):
    failed = con.execute("SELECT thread_id, ordinal FROM messages WHERE tool_status = 'error' ORDER BY 1 LIMIT 1").fetchall()[0]
    at = open_page(app, "transcript", thread=failed[0])
    assert any(":red[:material/error: error]" in c and f"Message {failed[1] + 1}" in c for c in captions(at))


def test_reply_latency_and_tokens_in_each_header(app, con):
    thread = "acme:web:sess-1002"
    pairs = analytics.latency_distribution(con, analytics.Filters(thread_ids=(thread,)))
    rows = analytics.read(con, thread).set_index("ordinal")
    at = open_page(app, "transcript", thread=thread)
    for p in pairs.itertuples():
        n, row = p.assistant_ordinal + 1, rows.loc[p.assistant_ordinal]
        header = next(c for c in captions(at) if c.startswith(f"**Assistant** · Message {n} ·"))
        assert f"replied in {p.latency_s:.1f} s" in header
        assert f"{row['input_tokens']:,} in / {row['output_tokens']:,} out tokens" in header and row["model"] in header


@pytest.mark.parametrize("thread, needles", [
    ("initech:helpdesk:sess-5006", ["6 messages removed here"]),
    ("initech:helpdesk:sess-5005", ["Message 2 was edited here"]),
    ("globex:api:sess-2107", ["Restart detected · resumed after 3 h"]),
    ("acme:mobile:sess-3003", ["Paused for human input, resumed 38 m later"]),
])  # fmt: skip
def test_markers_between_messages(app, thread, needles):
    at = open_page(app, "transcript", thread=thread)
    shown = badges(at)
    for needle in needles:
        assert any(needle in b for b in shown), shown
    assert not any("pause" in b for b in shown)  # the long pauses here are a restart or an interrupt


def test_a_wait_for_a_human_is_no_restart(app, con):
    """The idle gap of a thread waiting on a person's answer is that wait, said once; a restart by
    another process during a gap stays a restart."""
    marks = analytics.in_context(con, "acme:mobile:sess-3003").markers
    restart, = marks[marks["kind"] == "restart"].itertuples()
    wait, = marks[marks["kind"] == "interrupt"].itertuples()
    assert (restart.ts, restart.until_ts, restart.reason) == (wait.ts, wait.until_ts, "idle_gap")  # one gap, one cause
    shown = badges(open_page(app, "transcript", thread="acme:mobile:sess-3003"))
    assert any("Paused for human input" in b for b in shown) and not any("Restart" in b for b in shown), shown
    assert any("Restart detected" in b for b in badges(open_page(app, "transcript", thread="globex:api:sess-2107")))


def test_removed_messages_can_be_read_and_edits_show_the_text_before(app, con):
    at = open_page(app, "transcript", thread="initech:helpdesk:sess-5006")
    removed = next(e for e in at.expander if e.label == "Show the removed messages")
    assert sum(m.value.startswith("**") for m in removed.markdown) == 6
    at = open_page(app, "transcript", thread="initech:helpdesk:sess-5005")
    before = next(e for e in at.expander if e.label.startswith("Edited later"))
    assert "4401" in before.text[0].value  # the extension the operator corrected (4401 → 4410)
    assert any("4410" in m for m in markdown_texts(at))


def test_a_pending_interrupt_is_the_last_thing_shown(app):
    at = open_page(app, "transcript", thread="acme:web:sess-1008")
    assert [w.value for w in at.warning] == ["**Waiting for human input**: Approve this action? (action: issue_refund)"]
    # The call waiting for the approval has no result, and says so; the answered one does not.
    assert sum(c.startswith("↳ no result in the transcript") for c in captions(at)) == 1
    assert "waiting for human input" in next(c for c in captions(at) if c.startswith("tenant"))


def test_plain_labels_in_the_thread_line(app):
    at = open_page(app, "transcript", thread="faq-kiosk-lobby")
    line = next(c for c in captions(at) if "session" in c)
    assert line.startswith("no tenant · no sub-tenant · session **faq-kiosk-lobby**")
    assert "None" not in line and "time unknown" in line


def test_a_long_conversation_is_drawn_a_window_at_a_time(app, monkeypatch):
    from ui.models import transcript as model

    monkeypatch.setattr(model, "CHAT_WINDOW", 3)
    at = open_page(app, "transcript", thread="acme:web:sess-1002", at="last-reply")
    assert chat_numbers(at)[-1] == 8 and len(chat_numbers(at)) == 3 and highlighted(at) == [8]
    earlier = next(b for b in at.button if b.label.startswith("Show earlier messages"))
    earlier.click().run()
    assert chat_numbers(at)[0] == 1 and highlighted(at) == []  # the focus is outside this window
    later = next(b for b in at.button if b.label.startswith("Show later messages"))
    later.click().run()
    assert 8 in chat_numbers(at)


def test_a_typed_thread_id_is_found_beyond_the_list(app, con):
    at = open_page(app, "transcript", find="globex")
    listed = at.selectbox(key="transcript.thread").options
    assert listed and all(o.startswith("globex") for o in listed)
    # An id typed into the picker (accept_new_options) comes back as the thread: it is looked up,
    # not searched among the listed ones (tests/e2e types it in a real browser).
    at = open_page(app, "transcript", find="globex", thread="acme:web:sess-1002")
    assert not at.warning
    assert at.selectbox(key="transcript.thread").value == "acme:web:sess-1002"
    assert analytics.read(con, "acme:web:sess-1002")["content"].iloc[0] in markdown_texts(at)


def test_the_picker_choices_include_the_chosen_thread_however_long_the_list(con):
    from ui.models.transcript import thread_choices

    oldest = con.execute("SELECT thread_id FROM threads ORDER BY last_ts NULLS FIRST LIMIT 1").fetchall()[0][0]
    short = thread_choices(con, "", None, limit=2)
    assert len(short) == 2 and oldest not in set(short["thread_id"])
    assert oldest in set(thread_choices(con, "", oldest, limit=2)["thread_id"])


def test_unknown_thread_in_a_link_narrows_the_list_to_near_matches(app):
    at = open_page(app, "transcript", thread="acme:web:sess-10")
    assert any("No thread `acme:web:sess-10`" in w.value for w in at.warning)
    assert at.selectbox(key="transcript.thread").value is None
    assert at.text_input(key="transcript.find").value == "acme:web:sess-10"
    assert all(o.startswith("acme:web:sess-10") for o in at.selectbox(key="transcript.thread").options)


def test_table_view_and_csv_hold_the_whole_conversation(app, con):
    thread = "acme:web:sess-1002"
    at = open_page(app, "transcript", thread=thread, table="1")
    table = at.dataframe[0].value
    expected = analytics.read(con, thread)
    # Each row by its number in the transcript ("Message N"), as the chat's headers say; no 0-based numbers.
    assert table["message"].tolist() == [o + 1 for o in expected["ordinal"]]
    assert "index" not in table and "ordinal" not in table
    assert table["content"].fillna("").tolist() == expected["content"].fillna("").tolist()
    assert [d.label for d in at.get("download_button")] == ["Download CSV"]


# --- the filtered read (contract §4) ---------------------------------------------------


def test_an_older_link_with_speaker_and_index_opens_the_filtered_read(app, con, readme_facts):
    thread, (first_user, _) = next(iter(readme_facts.items()))
    expected = analytics.read(con, thread, speaker="user", index=0)
    at = open_page(app, "transcript", thread=thread, speaker="user", index="0")
    assert at.segmented_control(key="transcript.view").value == "filtered"
    assert "view" not in at.query_params  # the link's own params already say so
    shown = markdown_texts(at)
    assert first_user in shown
    other = analytics.read(con, thread, speaker="assistant", index=0)["content"].item()
    assert other not in shown  # only that one message
    meta = [c for c in captions(at) if c.startswith("**User**")]
    row = expected.iloc[0]
    assert meta == [f"**User** · Message {row['ordinal'] + 1} · {row['ts']:%Y-%m-%d %H:%M:%S} UTC"]  # one numbering


@pytest.mark.parametrize("fact", [0, 1, 2, 3])
def test_last_assistant_reply_with_negative_index(app, con, readme_facts, fact):
    thread, (_, last_reply) = list(readme_facts.items())[fact]
    assert analytics.read(con, thread, speaker="assistant", index=-1)["content"].item() == last_reply
    at = open_page(app, "transcript", thread=thread, speaker="assistant", index="-1")
    assert last_reply in markdown_texts(at)


def test_widgets_write_the_url_and_the_url_restores_the_view(app, con, readme_facts):
    from streamlit.testing.v1 import AppTest

    thread = list(readme_facts)[1]
    at = open_page(app, "transcript")
    assert any("Pick a thread" in i.value for i in at.info)
    at.selectbox(key="transcript.thread").set_value(thread).run()
    at.segmented_control(key="transcript.view").set_value("filtered").run()
    at.radio(key="transcript.speaker").set_value("user").run()
    at.number_input(key="transcript.index").set_value(-1).run()
    at.number_input(key="transcript.limit").set_value(1).run()
    at.toggle(key="transcript.table").set_value(True).run()
    assert not at.exception
    params = dict(at.query_params)
    assert params == {"thread": thread, "speaker": "user", "index": "-1", "limit": "1", "table": "1"}

    expected = analytics.read(con, thread, speaker="user", index=-1, limit=1)
    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "transcript", **params)
    assert fresh.selectbox(key="transcript.thread").value == thread
    assert fresh.radio(key="transcript.speaker").value == "user"
    assert fresh.number_input(key="transcript.index").value == -1
    table = fresh.dataframe[0].value
    assert table["content"].tolist() == expected["content"].tolist()
    assert table["message"].tolist() == [o + 1 for o in expected["ordinal"]]


def test_the_filtered_view_with_defaults_keeps_its_name_in_the_url_and_switching_back_drops_its_params(app, readme_facts):
    thread = next(iter(readme_facts))
    at = open_page(app, "transcript", thread=thread)
    at.segmented_control(key="transcript.view").set_value("filtered").run()
    assert at.query_params["view"] == "filtered"
    at.radio(key="transcript.speaker").set_value("user").run()
    assert "view" not in at.query_params and at.query_params["speaker"] == "user"
    at.segmented_control(key="transcript.view").set_value("conversation").run()
    assert dict(at.query_params) == {"thread": thread}


def test_table_view_shows_exactly_the_read(app, con, readme_facts):
    thread = list(readme_facts)[1]
    at = open_page(app, "transcript", thread=thread, view="filtered", table="1")
    table = at.dataframe[0].value
    expected = analytics.read(con, thread)
    assert len(table) == len(expected) > 1
    assert table["message"].tolist() == [o + 1 for o in expected["ordinal"]]  # the transcript's numbers
    assert "index" not in table and "ordinal" not in table
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
    assert table["message"].tolist() == [o + 1 for o in expected["ordinal"]]


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
    # The whole conversation reads fine, each message marked "time unknown".
    at = open_page(app, "transcript", thread=thread)
    heads = [c for c in captions(at) if c.startswith("**")]
    assert len(heads) == len(analytics.read(con, thread)) and all("time unknown" in c for c in heads)


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


def test_long_content_is_collapsed():
    from streamlit.testing.v1 import AppTest

    def script():
        from ui import chat
        from ui.models.chat import MessageItem

        chat.message(MessageItem(4, 3, "assistant", "Assistant", "line\n" * 200, None, non_text_blocks=2))

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert [e.label for e in at.expander] == ["Show the whole message (1,000 characters)"]
    assert any("time unknown" in c for c in captions(at))
    assert any("2 non-text blocks" in c for c in captions(at))
    assert pd.notna(at.markdown[0].value)


def test_ids_are_one_toggle_away(app, con):
    thread = "acme:web:sess-1002"
    rows = analytics.read(con, thread)
    at = open_page(app, "transcript", thread=thread)
    assert not any("message id" in c for c in captions(at))  # plain labels by default
    at.toggle(key="transcript.ids").set_value(True).run()
    assert at.query_params["ids"] == "1"
    shown = [c for c in captions(at) if c.startswith("message id")]
    assert len(shown) == len(rows)
    first = rows.iloc[0]
    # (one numbering: the header's "Message N", no ordinal counted from 0 beside it)
    assert shown[0] == f"message id `{first['message_id']}` · first saved in checkpoint `{first['checkpoint_id']}`"


def test_line_breaks_of_a_message_stay_in_its_markdown(app, con):
    thread = "acme:mobile:sess-3004"
    typed = next(t for t in analytics.read(con, thread)["content"] if "\n" in t and "\n\n" not in t)
    at = open_page(app, "transcript", thread=thread)
    lines = typed.split("\n")
    # Markdown joins the lines of a paragraph; a hard break (two spaces) keeps each on its own.
    assert "  \n".join(lines) in markdown_texts(at)


def test_raw_text_shows_messages_as_typed(app, con):
    thread = "acme:web:sess-1001"
    first = analytics.read(con, thread)["content"].iloc[0]
    at = open_page(app, "transcript", thread=thread)
    assert first in markdown_texts(at) and first not in [t.value for t in at.text]
    at.toggle(key="transcript.raw").set_value(True).run()
    assert at.query_params["raw"] == "1"
    assert first in [t.value for t in at.text] and first not in markdown_texts(at)
