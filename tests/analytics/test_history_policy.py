"""The history API and Resume QA under a deployment's policy (contract §11): personal data masked,
only some tenants' rows. The storegen store's simple chat holds an email address ("It's
jane@example.com"); its threads belong to the tenants acme, globex, initech and none."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

import analytics
from analytics import TranscriptQuery, observed
from analytics.history.backlog import backlog
from analytics.history.branches import branches_of
from analytics.errors import NotFound
from analytics.history.edits import edit_logs
from analytics.subgraphs import subgraph_runs_of

EMAIL = "jane@example.com"


def _texts(frame: pd.DataFrame) -> str:
    return " ".join(str(v) for col in frame.columns if frame[col].dtype == object or str(frame[col].dtype) == "str"
                    for v in frame[col].dropna())  # fmt: skip


@pytest.fixture()
def masked(loaded):
    c = analytics.connect(loaded, redact=True)
    yield c
    c.close()


def test_history_answers_are_masked(masked, con, sqlite_store):
    chat = sqlite_store.thread("simple_chat")
    raw = analytics.read(con, chat)
    assert EMAIL in _texts(raw)
    latest = raw["checkpoint_id"].dropna().iloc[-1]
    for frame in (
        analytics.read(masked, TranscriptQuery(chat, checkpoint_id=con.sql(
            "SELECT latest_checkpoint_id FROM threads WHERE thread_id = ?", params=[chat]).fetchall()[0][0])),
        analytics.diff(masked, chat, sqlite_store.thread("edit")),
        analytics.diff(masked, TranscriptQuery(chat, checkpoint_id=latest), chat),
    ):
        assert EMAIL not in _texts(frame) and "<EMAIL_" in _texts(frame)


def test_a_masked_comparison_still_compares_the_stored_text_with_the_logged_one(masked, con, sqlite_store):
    chat = sqlite_store.thread("simple_chat")
    window = analytics.expected_window(con, chat)
    assert EMAIL in " ".join(window["content"])
    lines = [{"thread_id": chat, "position": int(w.position), "speaker": w.speaker, "content": w.content}
             for w in window.itertuples()]  # fmt: skip
    findings, summary = observed.compare(masked, ("\n".join(map(json.dumps, lines)) + "\n").encode())
    assert findings.empty and summary["verdict"].tolist() == ["pass"]  # not the masked text against the raw one
    altered = [{**line, "content": line["content"].replace(EMAIL, "janet@example.com")} for line in lines]
    findings, _ = observed.compare(masked, ("\n".join(map(json.dumps, altered)) + "\n").encode())
    assert findings["kind"].tolist() == ["altered_content"]
    assert EMAIL not in _texts(findings) and "janet@example.com" not in _texts(findings)
    detail = observed.compare_detail(masked, ("\n".join(map(json.dumps, altered)) + "\n").encode())
    assert EMAIL not in _texts(detail.rows)


def test_a_tenant_scope_keeps_other_tenants_history_out(loaded, sqlite_store):
    scoped = analytics.connect(loaded, tenants=["globex"])
    try:
        for call in (
            lambda: analytics.branches(scoped, sqlite_store.thread("tool_calls")),
            lambda: analytics.read(scoped, sqlite_store.thread("subgraph"), checkpoint_id="x"),
            lambda: analytics.edit_log(scoped, sqlite_store.thread("remove_message")),
            lambda: analytics.subgraph_runs(scoped, sqlite_store.thread("subgraph")),
            lambda: analytics.diff(scoped, sqlite_store.thread("edit"), sqlite_store.thread("simple_chat")),
        ):
            with pytest.raises(NotFound):
                call()
        assert set(branches_of(scoped)["thread_id"]) == {sqlite_store.thread("replay_branch")}  # globex
        assert set(edit_logs(scoped)["thread_id"]) == {sqlite_store.thread("edit")}  # globex::s2
        assert subgraph_runs_of(scoped).empty  # acme's
        assert backlog(scoped).empty  # initech's
    finally:
        scoped.close()


def test_csvs_of_frames_leave_the_tool_masked(loaded, sqlite_store, tmp_path, monkeypatch, capsys):
    from analytics.cli import main as cli_main
    from analytics.reporting.writer import frame_csv

    chat = sqlite_store.thread("simple_chat")
    out = tmp_path / "d.csv"
    assert cli_main(["diff", "--db", str(loaded), "--thread", chat, "--with-thread", sqlite_store.thread("edit"),
                     "--format", "csv", "--out", str(out), "--redact"]) == 0  # fmt: skip
    text = out.read_text()
    assert EMAIL not in text and "<EMAIL_" in text
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT", "1")
    # The process's redactor numbers values as it meets them: any number, the value gone.
    assert re.fullmatch(r"thread_id\n<EMAIL_\d+>\n", frame_csv(pd.DataFrame({"thread_id": [EMAIL]})).decode())
