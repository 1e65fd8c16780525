"""Annotations on real stores: made on each target, kept through reloads, found again or shown orphaned.

Each test writes a SqliteSaver store with real graphs (`review_util.LiveStore`),
loads it with the real loader, annotates through the API, then keeps writing to
the store and reloads it (full, incremental, or another source into the same path).
"""

from __future__ import annotations

import os

import pandas as pd
import pytest

import analytics
import transcript_lens
from analytics import workspace as ws_api
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.workspace import Conflict, Workspace
from analytics.workspace.resolve import digest
from tests.analytics.review_util import LiveStore

CHAT = "acme:web:a1"
LEGACY = "legacy:kiosk:b"
OTHER = "globex:api:c"


@pytest.fixture()
def store(tmp_path):
    s = LiveStore(tmp_path / "app.sqlite")
    s.chat(CHAT, "hello", "my refund is wrong")
    s.legacy(LEGACY, "What are your hours?", "Weekends too?")
    s.chat(OTHER, "status?")
    return s


@pytest.fixture()
def db(store, tmp_path):
    path = tmp_path / "lens.duckdb"
    transcript_lens.load(store.path, path)
    return path


def _messages(db, thread):
    con = analytics.connect(db)
    try:
        return con.execute("SELECT ordinal, message_id, role, content FROM messages WHERE thread_id = ? ORDER BY 1",
                           [thread]).fetchall()
    finally:
        con.close()


def _by_id(frame):
    return {r["annotation_id"]: r for r in frame.to_dict("records")}


def test_each_target_is_annotated_and_read_back_with_what_it_points_at(db):
    msgs = _messages(db, CHAT)
    first_user = msgs[0]
    a = ws_api.annotate(db, CHAT, label="good answer", author="ana")
    b = ws_api.annotate(db, CHAT, message_id=msgs[3][1], label="wrong answer", verdict="fail", note="refund amount",
                        author="ben")
    by_ordinal = ws_api.annotate(db, CHAT, ordinal=0, verdict="pass", author="ben")
    legacy = _messages(db, LEGACY)
    idless = ws_api.annotate(db, LEGACY, ordinal=2, label="lost context", author="ana")
    con = analytics.connect(db)
    ckpt = con.execute("SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ? AND is_latest",
                       [CHAT]).fetchone()
    con.close()
    c = ws_api.annotate(db, CHAT, checkpoint_id=ckpt[1], note="restart here", author="ana")

    # A message given by ordinal that has an id is anchored by that id; an id-less one by ordinal + content.
    assert by_ordinal.message_id == first_user[1] and by_ordinal.role == "user" and by_ordinal.excerpt == "hello"
    assert idless.message_id is None and idless.ordinal == 2 and idless.content_digest == digest(legacy[2][3])
    assert b.ordinal == 3 and b.role == "assistant" and b.excerpt == msgs[3][3]
    assert c.target == "checkpoint" and c.checkpoint_ns == "" and a.target == "thread"
    assert {x.source for x in (a, b, c)} == {str(db.parent / "app.sqlite")}

    got = ws_api.annotations(db)
    assert list(got.columns) == list(ws_api.COLUMNS)
    assert got["annotation_id"].tolist() == [x.annotation_id for x in (a, b, by_ordinal, idless, c)]  # oldest first
    assert set(got["status"]) == {"ok"} and got["orphan_reason"].isna().all()
    rows = _by_id(got)
    assert rows[b.annotation_id]["ordinal"] == 3 and rows[b.annotation_id]["label_color"] == "#c62828"
    assert rows[idless.annotation_id]["ordinal"] == 2 and rows[idless.annotation_id]["tenant_id"] == "legacy"
    assert rows[a.annotation_id]["tenant_id"] == "acme" and rows[a.annotation_id]["sub_tenant_id"] == "web"
    # Narrowing: by thread, label, verdict, target, author, status.
    assert ws_api.annotations(db, LEGACY)["annotation_id"].tolist() == [idless.annotation_id]
    assert ws_api.annotations(db, label="wrong answer")["annotation_id"].tolist() == [b.annotation_id]
    assert ws_api.annotations(db, verdict="pass")["annotation_id"].tolist() == [by_ordinal.annotation_id]
    assert ws_api.annotations(db, target="checkpoint")["annotation_id"].tolist() == [c.annotation_id]
    assert len(ws_api.annotations(db, author="ana")) == 3
    assert ws_api.annotations(db, filters=Filters(tenants=("legacy",)))["thread_id"].tolist() == [LEGACY]
    assert analytics.annotations is ws_api.annotations and analytics.annotate is ws_api.annotate


def test_a_bad_annotation_is_refused_with_what_is_wrong_and_nothing_is_written(db):
    msgs = _messages(db, CHAT)
    cases = [
        (NotFound, "thread gone", dict(thread_id="nope:x:y", label="good answer")),
        (NotFound, "message gone", dict(thread_id=CHAT, message_id="no-such-id", label="good answer")),
        (NotFound, "message gone", dict(thread_id=CHAT, ordinal=99, label="good answer")),
        (NotFound, "checkpoint gone", dict(thread_id=CHAT, checkpoint_id="no-such", label="good answer")),
        (BadRequest, "unknown label 'nope'; the labels are: good answer, wrong answer", dict(thread_id=CHAT, label="nope")),
        (BadRequest, "needs a label, a verdict or a note", dict(thread_id=CHAT, note="   ")),
        (BadRequest, "a verdict is 'pass' or 'fail'", dict(thread_id=CHAT, verdict="maybe")),
        (BadRequest, "on a message or on a checkpoint, not both", dict(thread_id=CHAT, message_id=msgs[0][1],
                                                                     checkpoint_id="x", label="good answer")),
        (BadRequest, "ordinal must be an integer >= 0", dict(thread_id=CHAT, ordinal=-1, label="good answer")),
        (BadRequest, "an author is a non-empty name", dict(thread_id=CHAT, label="good answer", author=" ")),
    ]
    for error, message, kwargs in cases:
        kwargs.setdefault("author", "ana")
        thread = kwargs.pop("thread_id")
        with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
            ws_api.annotate(db, thread, **kwargs)
    assert ws_api.annotations(db).empty


def test_annotations_survive_full_and_incremental_reloads_and_follow_their_messages(store, db):
    msgs = _messages(db, CHAT)
    first = ws_api.annotate(db, CHAT, message_id=msgs[0][1], label="lost context", author="ana")
    reply = ws_api.annotate(db, CHAT, message_id=msgs[3][1], verdict="fail", author="ana")
    thread = ws_api.annotate(db, CHAT, label="needs follow-up", author="ben")
    workspace = Workspace.beside(db)
    ws_inode, db_inode = os.stat(workspace.path).st_ino, os.stat(db).st_ino

    store.chat(CHAT, "still wrong")  # the trimming graph now drops "hello" and its reply from the transcript
    transcript_lens.load(store.path, db)
    assert os.stat(db).st_ino != db_inode and os.stat(workspace.path).st_ino == ws_inode  # the load replaced only the db
    after = _messages(db, CHAT)
    assert msgs[0][1] not in [m[1] for m in after]
    rows = _by_id(ws_api.annotations(db))
    assert (rows[first.annotation_id]["status"], rows[first.annotation_id]["orphan_reason"]) == ("orphaned", "message removed")
    assert pd.isna(rows[first.annotation_id]["ordinal"])
    assert rows[first.annotation_id]["excerpt"] == "hello"  # what it was about, kept for the orphan
    moved = [m[0] for m in after if m[1] == msgs[3][1]]
    assert moved == [1] and rows[reply.annotation_id]["status"] == "ok" and rows[reply.annotation_id]["ordinal"] == 1
    assert rows[reply.annotation_id]["annotated_ordinal"] == 3
    assert rows[thread.annotation_id]["status"] == "ok"

    store.chat(CHAT, "and now?")
    transcript_lens.load(store.path, db, incremental=True)
    again = _by_id(ws_api.annotations(db))
    assert set(again) == {first.annotation_id, reply.annotation_id, thread.annotation_id}
    assert again[first.annotation_id]["orphan_reason"] == "message removed"
    # The reply is trimmed away too now.
    assert again[reply.annotation_id]["orphan_reason"] == "message removed"
    assert again[thread.annotation_id]["status"] == "ok"


def test_a_message_without_id_is_found_by_its_content_when_it_moves_and_orphaned_when_it_changes(store, db):
    legacy = _messages(db, LEGACY)
    hours = ws_api.annotate(db, LEGACY, ordinal=0, label="good answer", author="ana")
    answer = ws_api.annotate(db, LEGACY, ordinal=1, note="correct hours", author="ana")
    weekend = ws_api.annotate(db, LEGACY, ordinal=2, verdict="fail", author="ana")
    assert legacy[0][1] is None
    store.rewrite_legacy(LEGACY, [("user", "Hi there"), ("user", legacy[0][3]), ("assistant", legacy[1][3]),
                                  ("user", "Weekends, please?")])
    transcript_lens.load(store.path, db)
    rows = _by_id(ws_api.annotations(db, LEGACY))
    assert (rows[hours.annotation_id]["status"], rows[hours.annotation_id]["ordinal"]) == ("ok", 1)
    assert (rows[answer.annotation_id]["status"], rows[answer.annotation_id]["ordinal"]) == ("ok", 2)
    # The third message is another one now ("Weekends, please?" is not "Weekends too?"): orphaned, not re-pinned.
    assert rows[weekend.annotation_id]["status"] == "orphaned"
    assert rows[weekend.annotation_id]["orphan_reason"] == "message gone"
    assert rows[weekend.annotation_id]["excerpt"] == legacy[2][3]


def test_a_load_of_another_source_into_the_same_path_keeps_every_annotation_as_orphaned(store, db, tmp_path):
    msgs = _messages(db, CHAT)
    kept = [
        ws_api.annotate(db, CHAT, label="good answer", author="ana"),
        ws_api.annotate(db, CHAT, message_id=msgs[1][1], verdict="pass", author="ana"),
        ws_api.annotate(db, OTHER, note="other thread", author="ana"),
    ]
    other = LiveStore(tmp_path / "other.sqlite")
    other.chat(OTHER, "status?")  # the one thread both sources have
    other.chat("fresh:web:z", "hi")
    transcript_lens.load(other.path, db)
    rows = _by_id(ws_api.annotations(db))
    assert set(rows) == {k.annotation_id for k in kept}
    assert [rows[k.annotation_id]["orphan_reason"] for k in kept] == ["thread gone", "thread gone", None]
    assert rows[kept[2].annotation_id]["status"] == "ok"
    assert ws_api.annotations(db, status="orphaned")["thread_id"].tolist() == [CHAT, CHAT]
    # Filters choose threads of the database: an orphan whose thread is gone is in no tenant's scope.
    assert ws_api.annotations(db, filters=Filters(tenants=("acme",))).empty
    counts = ws_api.review_counts(analytics.connect(db), Workspace.beside(db))
    assert (counts.annotations, counts.threads, counts.orphaned) == (1, 1, 2)


def test_an_edit_made_on_a_stale_read_is_refused_and_nothing_is_lost(db):
    made = ws_api.annotate(db, CHAT, label="good answer", author="ana")
    first = ws_api.edit_annotation(db, made.annotation_id, made.revision, verdict="pass", author="ben")
    assert (first.revision, first.verdict, first.label, first.author) == (2, "pass", "good answer", "ben")
    with pytest.raises(Conflict, match=r"changed by ben .*revision 2, you edited 1"):
        ws_api.edit_annotation(db, made.annotation_id, made.revision, note="stale", author="cy")
    with pytest.raises(Conflict):
        ws_api.delete_annotation(db, made.annotation_id, made.revision)
    row = ws_api.annotations(db).iloc[0]
    assert (row["verdict"], row["note"], row["revision"]) == ("pass", None, 2)
    cleared = ws_api.edit_annotation(db, made.annotation_id, 2, label=None)
    assert cleared.label is None and cleared.verdict == "pass"
    with pytest.raises(BadRequest, match="needs a label, a verdict or a note"):
        ws_api.edit_annotation(db, made.annotation_id, 3, verdict=None)
    ws_api.delete_annotation(db, made.annotation_id, 3)
    assert ws_api.annotations(db).empty
    with pytest.raises(NotFound):
        ws_api.delete_annotation(db, made.annotation_id)


def test_the_label_set_is_configurable_and_annotations_keep_retired_or_renamed_labels(db):
    names = [label.name for label in ws_api.labels(db)]
    assert names[:3] == ["good answer", "wrong answer", "lost context"]
    ws_api.define_label(db, "refund wrong", "#D32F2F", "Refund amount or policy misstated")
    made = ws_api.annotate(db, CHAT, label="refund wrong", author="ana")
    ws_api.define_label(db, "refund wrong", "#b71c1c")  # recolour, keep the description and place
    label = next(x for x in ws_api.labels(db) if x.name == "refund wrong")
    assert (label.color, label.description, label.position) == ("#b71c1c", "Refund amount or policy misstated", 7)
    ws_api.rename_label(db, "refund wrong", "refund amount")
    assert ws_api.annotations(db)["label"].tolist() == ["refund amount"]
    ws_api.retire_label(db, "refund amount")
    assert "refund amount" not in [x.name for x in ws_api.labels(db, include_retired=False)]
    row = ws_api.annotations(db).iloc[0]
    assert (row["annotation_id"], row["label"], row["label_color"]) == (made.annotation_id, "refund amount", "#b71c1c")
    with pytest.raises(BadRequest, match="retired"):
        ws_api.annotate(db, CHAT, label="refund amount", author="ana")
    for bad, message in ((("x", "green"), "#rrggbb"), (("", "#000000"), "non-empty"), (("y" * 61, "#000000"), "at most 60")):
        with pytest.raises(BadRequest, match=message):
            ws_api.define_label(db, *bad)
    with pytest.raises(BadRequest, match="exists already"):
        ws_api.rename_label(db, "good answer", "wrong answer")


def test_conversations_filters_and_overview_counts_come_from_the_same_annotations(db):
    msgs = _messages(db, CHAT)
    ws_api.annotate(db, CHAT, message_id=msgs[1][1], label="wrong answer", verdict="fail", author="ana")
    ws_api.annotate(db, CHAT, label="lost context", author="ana")
    ws_api.annotate(db, LEGACY, label="wrong answer", verdict="pass", author="ben")
    ws_api.annotate(db, OTHER, note="fine", author="ben")
    assert ws_api.threads_with(db, ["wrong answer"]) == (CHAT, LEGACY)
    assert ws_api.threads_with(db, ["wrong answer", "lost context"]) == (CHAT,)
    assert ws_api.threads_with(db, failed=True) == (CHAT,)
    assert ws_api.threads_with(db, ["good answer"]) == ()
    summary = ws_api.thread_summaries(db, [CHAT, LEGACY, "not:annotated:x"])
    assert set(summary) == {CHAT, LEGACY}
    assert summary[CHAT].labels == ("wrong answer", "lost context") and summary[CHAT].fails == 1
    assert (summary[LEGACY].passes, summary[LEGACY].annotations) == (1, 1)
    con = analytics.connect(db)
    try:
        every = ws_api.review_counts(con, Workspace.beside(db))
        acme = ws_api.review_counts(con, Workspace.beside(db), Filters(tenants=("acme",)))
    finally:
        con.close()
    assert (every.annotations, every.threads, every.passes, every.fails, every.failed_threads) == (4, 3, 1, 1, 1)
    assert every.by_label[["label", "annotations", "threads"]].values.tolist() == [
        ["wrong answer", 2, 2], ["lost context", 1, 1]]
    assert every.by_label["color"].tolist() == ["#c62828", "#ef6c00"]
    assert (acme.annotations, acme.threads, acme.fails) == (2, 1, 1)
