"""AppTests of the review workspace in the app: the transcript's annotations and dialogs, the
Conversations review columns, filters and queue dialog, the Review page, the Overview's numbers,
saved views — and two sessions (or a session and a load) writing at once.

Every test works on a private copy of the demo database (`TRANSCRIPT_LENS_DB`), so its workspace
is a fresh file beside it in tmp_path.
"""

from __future__ import annotations

import json
import shutil
import threading

import pytest
from streamlit.testing.v1 import AppTest

import analytics
import transcript_lens
from analytics import metrics
from analytics import workspace as ws_api
from analytics.filters import Filters
from tests.pages.conftest import APP, TIMEOUT, markdown_texts, metric, open_page
from ui import markup

THREAD = "acme:web:sess-1002"


@pytest.fixture()
def db(demo_db, tmp_path, monkeypatch):
    path = shutil.copyfile(demo_db, tmp_path / "lens.duckdb")
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(path))
    return path


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT)


def _messages(db, thread=THREAD):
    con = analytics.connect(db)
    try:
        return con.execute("SELECT ordinal, message_id, role, checkpoint_id FROM messages WHERE thread_id = ? "
                           "ORDER BY ordinal", [thread]).fetchall()
    finally:
        con.close()


def _dialog_key(at, suffix: str) -> str:
    """The key of the open dialog's widget ending in `suffix` (each opening numbers its widgets)."""
    keys = [w.key for w in [*at.selectbox, *at.text_area, *at.text_input, *at.button, *at.radio, *at.toggle]
            if w.key and w.key.startswith("dlg.") and w.key.endswith(suffix)]
    assert keys, f"no open dialog with a widget *{suffix}"
    return keys[-1]


def _annotate_in_page(at, button: str, label=None, note=None, on=None):
    at.button(key=button).click().run()
    if on is not None:
        at.radio(key=_dialog_key(at, ".on")).set_value(on)
    if label is not None:
        at.selectbox(key=_dialog_key(at, ".label")).set_value(label)
    if note is not None:
        at.text_area(key=_dialog_key(at, ".note")).set_value(note)
    at.button(key=_dialog_key(at, ".save")).click().run()
    assert not at.exception, at.exception
    return at


def test_annotations_show_next_to_their_message_on_the_thread_and_as_orphans(db, tmp_path):
    msgs = _messages(db)
    ws_api.annotate(db, THREAD, label="lost context", verdict="fail", note="asked again after the restart",
                    author="ben")
    ws_api.annotate(db, THREAD, message_id=msgs[1][1], label="good answer", author="cy")
    ws_api.annotate(db, THREAD, checkpoint_id=msgs[0][3], note="saved here", author="ana")
    (tmp_path / "old.jsonl").write_text(
        '{"thread_id": "%s", "message_id": "gone-1", "label": "hallucination", "excerpt": "Refund: $500", '
        '"role": "assistant", "author": "eval"}\n' % THREAD)
    ws_api.import_jsonl(db, tmp_path / "old.jsonl")
    at = open_page(_app(), "transcript", thread=THREAD)
    shown = markdown_texts(at)
    thread_line = next(t for t in shown if "asked again after the restart" in t)
    assert ">lost context</span>" in thread_line and "✗ fail" in thread_line and "ben" in thread_line
    assert any(">good answer</span>" in t and "cy" in t for t in shown)
    assert any("saved here" in t and "ana" in t for t in shown)
    orphans = [e for e in at.expander if "orphaned annotation" in e.label]
    assert len(orphans) == 1 and orphans[0].label.startswith("1 orphaned annotation")
    inside = [m.value for m in orphans[0].markdown]
    assert any("message gone" in t and "gone-1" in t for t in inside)
    assert any(markup.text("Refund: $500") in c.value for c in orphans[0].caption)  # data, escaped
    # Each message has its button; the thread has its own.
    keys = {b.key for b in at.button}
    assert "rv.transcript.thread" in keys and {f"rv.transcript.m{o}.add" for o, *_ in msgs} <= keys


def test_annotating_from_the_transcript_page_writes_the_workspace(db):
    msgs = _messages(db)
    at = open_page(_app(), "transcript", thread=THREAD)
    # Without a name the dialog asks for one and writes nothing.
    at.button(key="rv.transcript.m0.add").click().run()
    at.selectbox(key=_dialog_key(at, ".label")).set_value("wrong answer")
    at.button(key=_dialog_key(at, ".save")).click().run()
    assert any("Type your name first" in e.value for e in at.error)
    assert ws_api.annotations(db).empty
    at.text_input(key=_dialog_key(at, ".name")).set_value("ana")
    at.button(key=_dialog_key(at, ".save")).click().run()
    assert not at.exception
    assert at.text_input(key="tl.reviewer").value == "ana"  # typed once: the session keeps it
    _annotate_in_page(at, "rv.transcript.thread", label="lost context", note="forgot the order")
    _annotate_in_page(at, "rv.transcript.m2.add", note="the restart point", on="the checkpoint that saved it")
    got = ws_api.annotations(db).set_index("target")
    assert set(got["author"]) == {"ana"} and set(got["origin"]) == {"app"}
    assert got.loc["message", "message_id"] == msgs[0][1] and got.loc["message", "label"] == "wrong answer"
    assert got.loc["thread", "label"] == "lost context" and got.loc["thread", "note"] == "forgot the order"
    assert got.loc["checkpoint", "checkpoint_id"] == msgs[2][3]
    assert [t.value for t in at.toast][-1] == "Annotated the checkpoint"
    assert any(">wrong answer</span>" in t for t in markdown_texts(at))
    assert not any(w.key.startswith("dlg.") for w in at.button if w.key)  # the dialog is closed


def test_edit_delete_and_a_conflicting_edit_from_another_session(db):
    made = ws_api.annotate(db, THREAD, label="good answer", author="ben")
    at = open_page(_app(), "transcript", thread=THREAD)
    at.text_input(key="tl.reviewer").set_value("ana").run()
    at.button(key=f"rv.transcript.t.edit.{made.annotation_id}").click().run()
    at.selectbox(key=_dialog_key(at, ".label")).set_value("wrong answer")
    ws_api.edit_annotation(db, made.annotation_id, 1, note="changed meanwhile", author="cy")  # another session
    at.button(key=_dialog_key(at, ".save")).click().run()
    assert any("was changed by cy" in w.value for w in at.warning)
    row = ws_api.annotations(db).iloc[0]
    assert (row["label"], row["note"], row["revision"]) == ("good answer", "changed meanwhile", 2)  # nothing lost
    at = open_page(_app(), "transcript", thread=THREAD)  # a fresh session reads the newer version
    at.text_input(key="tl.reviewer").set_value("ana").run()
    at.button(key=f"rv.transcript.t.edit.{made.annotation_id}").click().run()
    at.selectbox(key=_dialog_key(at, ".label")).set_value("wrong answer")
    at.button(key=_dialog_key(at, ".save")).click().run()
    row = ws_api.annotations(db).iloc[0]
    assert (row["label"], row["note"], row["author"], row["revision"]) == ("wrong answer", "changed meanwhile", "ana", 3)
    at.button(key=f"rv.transcript.t.edit.{made.annotation_id}").click().run()
    at.button(key=_dialog_key(at, ".delete")).click().run()
    assert ws_api.annotations(db).empty


def test_conversations_show_review_columns_and_filter_by_label_and_failed_review(db):
    other = "globex:api:sess-2105"
    ws_api.annotate(db, THREAD, label="lost context", verdict="fail", author="ana")
    ws_api.annotate(db, THREAD, message_id=_messages(db)[1][1], verdict="pass", note="ok", author="ana")
    ws_api.annotate(db, other, label="good answer", author="ben")
    at = open_page(_app(), "conversations", label="lost context")
    table = at.dataframe[0].value
    assert table["thread_id"].tolist() == [THREAD]
    assert (table["labels"].iloc[0], table["review"].iloc[0]) == ("lost context", "✗ 1 · ✓ 1 · 1 note")
    at = open_page(_app(), "conversations", failed="1")
    assert at.dataframe[0].value["thread_id"].tolist() == [THREAD]
    at = open_page(_app(), "conversations")
    table = at.dataframe[0].value.set_index("thread_id")
    assert table.loc[other, "labels"] == "good answer" and table.loc[other, "review"] == ""
    assert (table["labels"] != "").sum() == 2
    at.multiselect(key="conversations.label").set_value(["good answer", "lost context"]).run()
    assert at.dataframe[0].value.empty  # no thread carries both
    assert at.query_params.get("label") == ["good answer", "lost context"]


def test_a_queue_is_made_from_the_conversations_view_and_walked(db):
    at = open_page(_app(), "conversations", tenant="acme", sort="messages", order="asc")
    expected = metrics.conversation_list(db, Filters(tenants=("acme",)), sort="messages", descending=False)
    at.text_input(key="tl.reviewer").set_value("lead").run()
    at.button(key="conversations.queue").click().run()
    at.text_input(key=_dialog_key(at, ".name")).set_value("acme by size")
    at.toggle(key=_dialog_key(at, ".sampled")).set_value(False)
    at.text_input(key=_dialog_key(at, ".reviewers")).set_value("ana, ben")
    at.button(key=_dialog_key(at, ".create")).click().run()
    assert not at.exception, at.exception
    (q,) = ws_api.queues(db)
    items = ws_api.queue_items(db, q.queue_id)
    assert items["thread_id"].tolist() == expected["thread_id"].tolist()
    assert items["assignee"].tolist()[:3] == ["ana", "ben", "ana"] and q.created_by == "lead"
    assert q.view == {"tenant": "acme", "sort": "messages", "order": "asc"}

    at = open_page(_app(), "review", queue=str(q.queue_id))
    assert at.query_params.get("item") == "1"
    assert any(f"**Item 1 of {q.items}**" in t and items["thread_id"][0] in t for t in markdown_texts(at))
    at.button(key="review.next").click().run()
    assert at.query_params.get("item") == "2"
    at.button(key="review.prev").click().run()
    assert at.query_params.get("item") == "1"
    at.button(key="review.done").click().run()  # no name yet in this session
    assert any("Type your name in the sidebar" in e.value for e in at.error)
    assert ws_api.queue_items(db, q.queue_id)["status"].tolist()[0] == "pending"
    at.text_input(key="tl.reviewer").set_value("ben").run()
    at.toggle(key="review.mine").set_value(True).run()
    assert at.query_params.get("item") == "2"  # ben's first item
    at.button(key="review.done").click().run()
    done = ws_api.queue_items(db, q.queue_id)
    assert done["status"].tolist()[1] == "done" and done["done_by"].tolist()[1] == "ben"
    assert at.query_params.get("item") == "4"  # on to ben's next pending item
    _annotate_in_page(at, "rv.review.walk.thread", label="good answer")
    assert ws_api.annotations(db)["thread_id"].tolist() == [items["thread_id"][3]]
    at.button(key="review.back").click().run()
    assert "queue" not in at.query_params
    queues = at.dataframe[0].value
    assert queues["done"].tolist() == [100 / q.items] and queues["threads"].tolist() == [q.items]
    # One column for what is done (a "1 / 5" beside a 20 % bar was two), headers capitalised as everywhere.
    assert "progress" not in queues.columns
    labels = [v.get("label") for v in json.loads(at.dataframe[0].proto.columns).values() if v.get("label")]
    assert {"Queue", "Done", "Made from", "By"} <= set(labels) and all(x[0].isupper() for x in labels), labels


def test_the_overview_counts_annotations_in_scope(db):
    ws_api.annotate(db, THREAD, label="lost context", verdict="fail", author="ana")
    ws_api.annotate(db, "globex:api:sess-2105", verdict="pass", author="ana")
    at = open_page(_app(), "overview")
    assert metric(at, "Annotated threads") == "2" and metric(at, "Fail") == "1" and metric(at, "Pass") == "1"
    assert any("lost context · 1" in t for t in markdown_texts(at))
    at = open_page(_app(), "overview", tenant="acme")
    assert metric(at, "Annotated threads") == "1" and metric(at, "Pass") == "0"


def test_a_view_is_saved_from_the_sidebar_and_reopens_exactly(db):
    at = open_page(_app(), "conversations", tenant="acme", sort="messages", order="asc", q="order")
    at.text_input(key="views.name").set_value("acme orders").run()
    at.button(key="views.save").click().run()
    assert not at.exception
    (view,) = ws_api.saved_views(db)
    assert (view.page, view.params) == ("conversations", {"tenant": ["acme"], "sort": ["messages"],
                                                          "order": ["asc"], "q": ["order"]})
    links = [link for link in at.get("page_link") if link.proto.label == "acme orders"]
    assert len(links) == 1 and links[0].proto.page.endswith("conversations")
    assert "tenant=acme" in links[0].proto.query_string and "q=order" in links[0].proto.query_string
    shared = [t.value for t in at.text_input if t.label.startswith("Link to this view") and "conversations?" in t.value]
    assert shared and "tenant=acme&sort=messages&order=asc&q=order" in shared[0]
    # The link opens exactly that view.
    fresh = open_page(_app(), "conversations", **{k: v[0] for k, v in view.params.items()})
    assert fresh.multiselect(key="conversations.tenant").value == ["acme"]
    assert fresh.selectbox(key="conversations.sort").value == "messages"
    assert fresh.text_input(key="conversations.q").value == "order"


@pytest.fixture()
def one_script_cache(monkeypatch):
    """Compile scripts under one lock, as a server's one ScriptCache does for all its sessions: each
    AppTest has its own cache, and CPython 3.11's compiler is not safe to run in two threads at once
    ("AST constructor recursion depth mismatch"), which no server meets."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    lock = threading.Lock()
    compile_once = ScriptCache.get_bytecode

    def get_bytecode(self, script_path):
        with lock:
            return compile_once(self, script_path)

    monkeypatch.setattr(ScriptCache, "get_bytecode", get_bytecode)


@pytest.fixture()
def one_runtime(monkeypatch):
    """One AppTest script run at a time: each run installs its own mock as the process's
    `Runtime` and removes it when done, so a second session's run meeting that would fail
    inside Streamlit ("Runtime hasn't been created!"), which no server meets (one Runtime for
    every session). The sessions still interleave run by run, each with its own state; writers
    that truly overlap are two processes (tests/analytics/test_workspace_concurrency.py)."""
    lock = threading.Lock()
    run_once = AppTest._run

    def _run(self, *args, **kwargs):
        with lock:
            return run_once(self, *args, **kwargs)

    monkeypatch.setattr(AppTest, "_run", _run)


def test_two_sessions_annotating_at_once_lose_nothing(db, one_script_cache, one_runtime):
    msgs = _messages(db)
    sessions = [open_page(_app(), "transcript", thread=THREAD) for _ in range(2)]
    for at, name in zip(sessions, ("ana", "ben")):
        at.text_input(key="tl.reviewer").set_value(name).run()
    failures = []

    def work(at, label):
        try:
            for ordinal, *_ in msgs:
                _annotate_in_page(at, f"rv.transcript.m{ordinal}.add", label=label)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(at, label)) for at, label in
               zip(sessions, ("wrong answer", "good answer"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    got = ws_api.annotations(db)
    assert len(got) == 2 * len(msgs)
    assert sorted(got.groupby("author")["label"].first().items()) == [("ana", "wrong answer"), ("ben", "good answer")]
    assert sorted(got[got["author"] == "ana"]["ordinal"]) == [o for o, *_ in msgs]


def test_a_load_replacing_the_database_while_a_session_annotates_loses_nothing(db, one_script_cache):
    msgs = _messages(db)
    at = open_page(_app(), "transcript", thread=THREAD)
    at.text_input(key="tl.reviewer").set_value("ana").run()
    stop, loads, failures = threading.Event(), [], []

    def reload() -> None:
        try:
            while not stop.is_set():
                loads.append(transcript_lens.load(transcript_lens.demo_store(), db, incremental=len(loads) % 2 == 1,
                                                  workers=1))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    loader = threading.Thread(target=reload)
    loader.start()
    try:
        for ordinal, *_ in msgs:
            _annotate_in_page(at, f"rv.transcript.m{ordinal}.add", note=f"note {ordinal}")
    finally:
        stop.set()
        loader.join()
    assert not failures and len(loads) >= 2
    got = ws_api.annotations(db)
    assert sorted(got["note"]) == sorted(f"note {o}" for o, *_ in msgs) and set(got["status"]) == {"ok"}
    at.run()  # the session reads the reloaded database and still shows every annotation in place
    shown = markdown_texts(at)
    assert all(any(f"note {o}" in t for t in shown) for o, *_ in msgs)


def test_the_label_set_is_edited_on_the_review_page_and_orphans_are_listed(db, tmp_path):
    at = open_page(_app(), "review")
    assert any("No review queue yet" in i.value for i in at.info)
    form_name = [t for t in at.text_input if t.label == "Label"][0]
    form_name.set_value("refund wrong")
    [t for t in at.text_input if t.label == "Meaning"][0].set_value("refund amount or policy")
    at.color_picker[0].set_value("#d32f2f")
    [b for b in at.button if b.label == "Add or update label"][0].click().run()
    assert not at.exception, at.exception
    label = next(x for x in ws_api.labels(db) if x.name == "refund wrong")
    assert (label.color, label.description) == ("#d32f2f", "refund amount or policy")
    assert any(">refund wrong</span>" in t for t in markdown_texts(at))
    at.selectbox(key="labels.retire").set_value("refund wrong").run()
    at.button(key="labels.retire.go").click().run()
    assert next(x for x in ws_api.labels(db) if x.name == "refund wrong").retired
    assert any(">refund wrong (retired)</span>" in t for t in markdown_texts(at))
    # An annotation whose thread is gone is listed with why, and what its message said.
    (tmp_path / "old.jsonl").write_text(
        '{"thread_id": "old:web:1", "message_id": "m-1", "label": "hallucination", "excerpt": "Refund: $500"}\n')
    ws_api.import_jsonl(db, tmp_path / "old.jsonl", author="eval")
    at = open_page(_app(), "review")
    (orphans,) = [e for e in at.expander if e.label.startswith("Orphaned annotations")]
    assert orphans.label == "Orphaned annotations (1)"
    table = orphans.dataframe[0].value
    assert table[["thread_id", "orphan_reason", "label", "excerpt"]].values.tolist() == [
        ["old:web:1", "thread gone", "hallucination", "Refund: $500"]]
    # A link to that thread says it is gone and shows what was said of it.
    at = open_page(_app(), "transcript", thread="old:web:1")
    assert any("No thread `old:web:1` in this database" in w.value for w in at.warning)
    assert [e.label for e in at.expander if e.label.startswith("Orphaned")] == ["Orphaned annotations (1)"]


def test_a_label_typed_into_the_label_box_is_refused_at_once_and_never_stored(db):
    """The browser sends a typed label as the box's value; the dialog says at once that the set lacks
    it (before the verdict or Save is clicked) and Save stores nothing rather than drop it."""
    at = open_page(_app(), "transcript", thread=THREAD)
    at.button(key="rv.transcript.m0.add").click().run()
    at.text_input(key=_dialog_key(at, ".name")).set_value("rui").run()
    box = at.selectbox(key=_dialog_key(at, ".label"))
    box.options.append("agent loop (same tool 3x)")  # what the browser sends for a typed label
    box.set_value("agent loop (same tool 3x)").run()
    assert not at.exception, at.exception
    assert any("is not in the label set" in e.value for e in at.error)
    at.selectbox(key=_dialog_key(at, ".label")).options.append("agent loop (same tool 3x)")  # (as above)
    at.button(key=_dialog_key(at, ".save")).click().run()
    assert ws_api.annotations(db).empty
    assert any("is not in the label set" in e.value for e in at.error)


TOOL_THREAD = "acme:web:sess-1003"  # Message 2 only calls lookup_order; Message 3 is its result


def test_the_annotate_dialog_quotes_a_tool_calling_message_by_its_call(db):
    from ui.models.chat import signature

    at = open_page(_app(), "transcript", thread=TOOL_THREAD)
    at.button(key="rv.transcript.m1.add").click().run()
    quoted = [t for t in markdown_texts(at) if "Message 2:" in t]
    assert quoted, markdown_texts(at)
    assert markup.text(signature("lookup_order", {"order_id": "D-4120"})) in quoted[0]
    assert "“”" not in quoted[0] and "message 2" not in quoted[0]


def _texts_in_order(node) -> list[str]:
    """The markdown and captions under `node`, in the order the page draws them."""
    if getattr(node, "type", None) in ("markdown", "caption"):
        return [node.value]
    return [t for _, child in sorted(getattr(node, "children", {}).items()) for t in _texts_in_order(child)]


def test_an_annotation_on_a_tool_calling_message_is_drawn_in_it_above_the_tool_result(db):
    ws_api.annotate(db, TOOL_THREAD, message_id=_messages(db, TOOL_THREAD)[1][1], verdict="fail",
                    note="called the tool for nothing", author="rui")
    at = open_page(_app(), "transcript", thread=TOOL_THREAD)
    shown = _texts_in_order(at.main)
    note = next(i for i, t in enumerate(shown) if "called the tool for nothing" in t)
    result = next(i for i, t in enumerate(shown) if "Message 3" in t)
    call = next(i for i, t in enumerate(shown) if "Message 2" in t and "Assistant" in t)
    assert call < note < result, shown


def test_the_icon_buttons_have_names_a_screen_reader_reads(db):
    ws_api.annotate(db, THREAD, verdict="pass", note="fine", author="ana")
    at = open_page(_app(), "transcript", thread=THREAD)
    assert at.button(key="rv.transcript.m0.add").label == "Annotate this message"
    edits = [b for b in at.button if b.key and ".edit." in b.key]
    assert edits and all(b.label == "Edit or delete this annotation" for b in edits)


def test_the_share_link_is_the_view_as_shown_right_after_a_filter_changes(db):
    """The sidebar is drawn before the page publishes its URL: its link takes the change of this run."""
    at = open_page(_app(), "conversations", sort="messages", q="order")
    at.text_input(key="conversations.q").set_value("refund").run()
    shared = [t.value for t in at.text_input if t.label.startswith("Link to this view") and "conversations?" in t.value]
    assert shared and "q=refund" in shared[0] and "q=order" not in shared[0], shared
