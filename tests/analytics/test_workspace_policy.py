"""The review workspace under the reader's policy (contract §11): masked notes and excerpts, and a
tenant scope that shows, imports, exports, queues and views nothing of another tenant.

The store is `pii_store`'s: two tenants whose messages hold planted personal data, written by a
real graph. The deployment's policy is the environment (`TRANSCRIPT_LENS_REDACT`, `_TENANTS`).
"""

from __future__ import annotations

import json
import shutil

import pytest

import analytics
from analytics import workspace as ws_api
from analytics.errors import NotFound
from analytics.policy import TENANTS_ENV
from analytics.redact import ENV as REDACT_ENV
from analytics.workspace import ImportFailed
from tests.analytics.pii_store import PLANTED, load_pii_db
from transcript_lens.cli import main

ACME, GLOBEX = "acme:web:s1", "globex:web:s1"


@pytest.fixture(scope="module")
def store_db(tmp_path_factory):
    return load_pii_db(tmp_path_factory.mktemp("pii"))


@pytest.fixture()
def db(store_db, tmp_path, monkeypatch):
    monkeypatch.delenv(REDACT_ENV, raising=False)
    monkeypatch.delenv(TENANTS_ENV, raising=False)
    return shutil.copyfile(store_db, tmp_path / "lens.duckdb")


def _planted_message(db, thread):
    """The id of a user message of `thread` holding a planted value, and that value."""
    con = analytics.connect(db)
    try:
        rows = con.execute("SELECT message_id, content FROM messages WHERE thread_id = ? AND role = 'user' "
                           "ORDER BY ordinal", [thread]).fetchall()
    finally:
        con.close()
    tenant = thread.split(":")[0]
    return next((m, v) for m, text in rows for v in PLANTED[tenant] if v in text)


def test_notes_and_excerpts_are_masked_for_a_reader_who_masks(db, tmp_path, monkeypatch, capsys):
    message_id, planted = _planted_message(db, ACME)
    made = ws_api.annotate(db, ACME, message_id=message_id, label="wrong answer",
                           note="customer wrote dana.scully@fbi.example.org twice", author="ana")
    assert planted in made.excerpt  # stored as the database holds it: masking happens at read time
    raw = ws_api.annotations(db).iloc[0]
    assert "dana.scully@fbi.example.org" in raw["note"] and planted in raw["excerpt"]
    monkeypatch.setenv(REDACT_ENV, "1")
    masked = ws_api.annotations(db).iloc[0]
    assert "dana.scully" not in masked["note"] and "<EMAIL_" in masked["note"]
    assert planted not in masked["excerpt"]
    assert (masked["thread_id"], masked["message_id"], masked["label"]) == (ACME, message_id, "wrong answer")
    out = tmp_path / "a.csv"
    assert main(["report", "annotations", "--db", str(db), "--out", str(out)]) == 0
    assert "dana.scully" not in out.read_text() and planted not in out.read_text()
    assert main(["annotations", "export", "--db", str(db)]) == 0
    exported = capsys.readouterr().out
    assert "dana.scully" not in exported and planted not in exported
    monkeypatch.delenv(REDACT_ENV)
    assert main(["annotations", "export", "--db", str(db), "--redact"]) == 0
    assert "dana.scully" not in capsys.readouterr().out
    assert main(["annotations", "export", "--db", str(db)]) == 0
    assert "dana.scully" in capsys.readouterr().out  # nothing asked: as stored


def test_a_tenant_scope_shows_no_annotation_of_another_tenant(db, monkeypatch, tmp_path):
    mine = ws_api.annotate(db, ACME, label="good answer", author="ana")
    theirs = ws_api.annotate(db, GLOBEX, note="globex secret", author="ben")
    (tmp_path / "gone.jsonl").write_text(json.dumps({"thread_id": "acme:web:gone", "note": "orphan"}) + "\n"
                                         + json.dumps({"thread_id": ACME, "message_id": "gone-1", "note": "x"}) + "\n")
    ws_api.import_jsonl(db, tmp_path / "gone.jsonl", author="eval")
    monkeypatch.setenv(TENANTS_ENV, "acme")
    got = ws_api.annotations(db)
    # Their thread is invisible; a thread gone from the database could be anyone's: not shown either.
    assert set(got["thread_id"]) == {ACME} and theirs.annotation_id not in set(got["annotation_id"])
    assert sorted(got["orphan_reason"].fillna("ok")) == ["message gone", "ok"]
    assert mine.annotation_id in set(got["annotation_id"])
    counts = ws_api.review_counts(analytics.connect(db), ws_api.Workspace.beside(db))
    assert (counts.annotations, counts.orphaned) == (2, 1)
    with pytest.raises(NotFound):
        ws_api.annotate(db, GLOBEX, label="good answer", author="ana")
    # An import about their threads is refused; an export holds only what the reader may see.
    (tmp_path / "theirs.jsonl").write_text(json.dumps({"thread_id": GLOBEX, "note": "injected"}) + "\n")
    with pytest.raises(ImportFailed, match=r"line 1: thread 'globex:web:s1' is not in the database you may read"):
        ws_api.import_jsonl(db, tmp_path / "theirs.jsonl", author="ana")
    with pytest.raises(ImportFailed, match="needs the database"):
        ws_api.import_jsonl(None, tmp_path / "theirs.jsonl", author="ana", workspace=ws_api.Workspace.beside(db))
    out = tmp_path / "e.jsonl"
    ws_api.export_jsonl(db, out, db=db)
    assert {json.loads(x)["thread_id"] for x in out.read_text().splitlines()} == {ACME}
    with pytest.raises(analytics.BadRequest, match="needs the database"):
        ws_api.export_jsonl(db, out)


def test_queues_and_saved_views_are_seen_within_the_scope_they_were_made_in(db, monkeypatch):
    everyone = ws_api.create_queue(db, "all tenants", author="lead")
    ws_api.save_view(db, "every tenant", "conversations", {}, author="lead")
    monkeypatch.setenv(TENANTS_ENV, "acme")
    acme = ws_api.create_queue(db, "acme only", author="ana")
    ws_api.save_view(db, "acme view", "conversations", {"tenant": "acme"}, author="ana")
    assert acme.scope == ("acme",)
    assert set(ws_api.queue_items(db, acme.queue_id)["thread_id"]) == {"acme:web:s1", "acme:web:s2"}
    assert [q.name for q in ws_api.queues(db)] == ["acme only"]
    assert [v.name for v in ws_api.saved_views(db)] == ["acme view"]
    with pytest.raises(NotFound):
        ws_api.queue_items(db, everyone.queue_id)  # it lists globex's threads
    with pytest.raises(NotFound):
        ws_api.step(db, everyone.queue_id, 0)
    with pytest.raises(analytics.BadRequest, match="exists already"):
        ws_api.save_view(db, "every tenant", "overview", {}, author="ana", replace=True)  # not theirs to replace
    assert set(ws_api.progress(db)["queue"]) == {"acme only"}
    monkeypatch.setenv(TENANTS_ENV, "globex")
    assert ws_api.queues(db) == [] and ws_api.saved_views(db) == []
    monkeypatch.delenv(TENANTS_ENV)
    assert [q.name for q in ws_api.queues(db)] == ["all tenants", "acme only"]  # no scope: everything
    assert len(ws_api.saved_views(db)) == 2


def test_saved_views_are_listed_masked_for_a_reader_who_masks(db, monkeypatch):
    params = {"thread": "acme:web:bob.views@example.com", "label": "calls from +44 20 7946 0958", "q": "refund"}
    ws_api.save_view(db, "dana.scully@fbi.example.org follow-up", "conversations", params,
                     author="ana.views@example.com")
    (plain,) = ws_api.saved_views(db)
    assert plain.name == "dana.scully@fbi.example.org follow-up" and plain.params["thread"] == [params["thread"]]

    monkeypatch.setenv(REDACT_ENV, "1")
    shown = [*ws_api.saved_views(db), ws_api.get_view(db, plain.view_id)]
    for view in shown:
        text = json.dumps([view.name, view.params, view.created_by, view.query_string()])
        for secret in ("dana.scully", "bob.views", "7946 0958", "ana.views"):
            assert secret not in text, text
        assert view.name.endswith(" follow-up") and view.params["q"] == ["refund"]  # the rest as saved
        assert view.params["thread"][0].startswith("acme:web:<EMAIL_")
