"""JSON Lines a user gives (a Resume QA observed log, an annotations import) are read a line at a
time and at most `analytics.jsonlines.MAX_LINES` lines per file: a flood of tiny lines is refused in
one line naming the limit, within the memory budget (docs/security.md, "Upload limits")."""

from __future__ import annotations

import json

import pytest

from analytics.jsonlines import MAX_LINES
from analytics.jsontext import MAX_ELEMENTS
from tests.attacks.harness import attack
from tests.attacks.stores import store_with_messages

# 5 MB of `1` lines: 2.6 million bad lines, each an object kept for the report (3 GB when read whole).
FLOOD = b"1\n" * (5 << 19)


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jsonl")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [{"type": "human", "content": "hello", "id": "m1"}], thread_id="t")
    attack(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def test_an_observed_log_of_millions_of_lines_is_refused_at_the_line_limit(lens, tmp_path):
    log = tmp_path / "observed.jsonl"
    log.write_bytes(FLOOD)
    out = attack(["report", "resume", "--db", str(lens), "--observed", str(log), "--out", str(tmp_path / "r.csv")],
                 tmp_path)
    out.refused("observed.jsonl", f"more than {MAX_LINES:,} lines").within_budget().wrote_only([])


def test_an_annotations_import_of_millions_of_lines_is_refused_at_the_line_limit(lens, tmp_path):
    lines = tmp_path / "notes.jsonl"
    lines.write_bytes(FLOOD)
    out = attack(["annotations", "import", "--db", str(lens), str(lines)], tmp_path)
    out.refused("notes.jsonl", f"more than {MAX_LINES:,} lines").within_budget().wrote_only([])


@pytest.mark.parametrize("text", ["x" * (40 << 20), "hello" + "\n" * (40 << 20)], ids=["one-word", "empty-lines"])
def test_an_observed_line_of_40_mb_is_compared_within_the_budget(lens, tmp_path, text):
    """Paired with the thread's short message: judging whether the texts are alike looks at their
    first characters only (a character diff of the whole took gigabytes); a text past the diff
    limit is shown replaced whole."""
    log = tmp_path / "observed.jsonl"
    log.write_text(json.dumps({"thread_id": "t", "speaker": "user", "content": text, "position": 0}) + "\n")
    out = attack(["report", "resume", "--db", str(lens), "--observed", str(log), "--out", str(tmp_path / "r.csv")],
                 tmp_path)
    out.succeeded().within_budget().wrote_only([tmp_path / "r.csv"])


# One line of 3 million empty arrays (9 MB): each parsed is an object of 56 bytes or more, so
# the 93 MB line of 31 million asked for 2.3 GB and two minutes before its keys were checked.
ELEMENTS = '{"thread": "t", "x": [' + "[]," * 3_000_000 + '[]]}\n'


def test_an_annotations_line_of_millions_of_elements_is_refused_unparsed(lens, tmp_path):
    lines = tmp_path / "notes.jsonl"
    lines.write_text(ELEMENTS)
    out = attack(["annotations", "import", "--db", str(lens), str(lines)], tmp_path)
    out.no_traceback().within_budget().wrote_only([])
    assert out.returncode == 2 and f"notes.jsonl:1: not JSON (more than {MAX_ELEMENTS:,} JSON elements" in out.stderr


def test_an_observed_line_of_millions_of_elements_is_a_line_error(lens, tmp_path):
    log = tmp_path / "observed.jsonl"
    log.write_text(ELEMENTS)
    out = attack(["report", "resume", "--db", str(lens), "--observed", str(log), "--out", str(tmp_path / "r.csv")],
                 tmp_path)
    out.no_traceback().within_budget()
    assert f"more than {MAX_ELEMENTS:,} JSON elements" in out.stdout + out.stderr + (
        (tmp_path / "r.csv").read_text() if (tmp_path / "r.csv").exists() else "")


def test_an_observed_window_of_many_entries_is_placed_in_linear_time(lens, tmp_path):
    """60,000 entries of one thread, one window (positions counting up, one time): each line is
    checked against the positions its window holds so far, which were gathered again for every
    line (12,500 entries 8 s, 25,000 36 s, 99,999 over 7 minutes); a few seconds now. The
    timeout is one only that growth reaches."""
    log = tmp_path / "observed.jsonl"
    log.write_text("".join(json.dumps({"thread_id": "t", "speaker": "user", "content": f"hi {i}", "position": i,
                                       "recorded_at": "2099-01-01T00:00:00Z"}) + "\n" for i in range(60_000)))
    out = attack(["report", "resume", "--db", str(lens), "--observed", str(log), "--out", str(tmp_path / "r.csv")],
                 tmp_path, timeout=100)
    out.succeeded().within_budget().wrote_only([tmp_path / "r.csv"])
