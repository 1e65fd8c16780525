"""A thread-key pattern that backtracks catastrophically under Python's `re` runs in linear
time (RE2, loaders/linear_regex.py); one RE2 cannot run is refused in one line."""

from __future__ import annotations

import duckdb

from tests.attacks.harness import attack
from tests.attacks.stores import store_with_messages

# Three alternatives that each take any character: 3^n ways to split a thread id of n
# characters, every one tried by a backtracking engine before it gives up on `XYZ$`.
BOMB = r"^(?P<session>(\w|\W|.)*)XYZ$"
THREAD = "acme:web:" + "s" * 40  # (2 s at 17 characters grew to 52 s; at 49, never)


def test_a_backtracking_bomb_of_a_thread_key_pattern_loads_in_linear_time(tmp_path):
    store, db = tmp_path / "s.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [{"role": "user", "content": "hi", "id": "m1"}], thread_id=THREAD)
    # (the timeout only ends a hang: a backtracking engine would not finish this in years)
    out = attack(["load", str(store), "--db", str(db), "--thread-key-pattern", BOMB], tmp_path, timeout=300)
    out.succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT tenant_id, session_id FROM threads").fetchall() == [(None, THREAD)]  # no match
    con.close()


def test_a_pattern_only_a_backtracking_engine_runs_is_refused_in_one_line(tmp_path):
    store, db = tmp_path / "s.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [{"role": "user", "content": "hi", "id": "m1"}], thread_id=THREAD)
    out = attack(["load", str(store), "--db", str(db), "--thread-key-pattern", r"^(?P<session>(s+)\2)"], tmp_path)
    out.refused("thread-key pattern", "RE2").within_budget().wrote_only([db])
    assert not db.exists()


# Under Python's `re` each of the 2^40 ways to split the `a`s between `(\w+)+` is tried before
# `-\d{6}` fails: years. RE2 reads the text once.
REDACT_BOMB = r"EMP-(\w+)+-\d{6}"


def _masked_transcript(tmp_path, content: str, pattern: str):
    store, db, config = tmp_path / "s.sqlite", tmp_path / "out.duckdb", tmp_path / "redact.toml"
    store_with_messages(store, [{"role": "user", "content": content, "id": "m1"}], thread_id="acme:web:s1")
    attack(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    config.write_text(f"[redact.patterns]\nEMPLOYEE_ID = '{pattern}'\n")
    return attack(["transcript", "--thread", "acme:web:s1", "--format", "csv", "--db", str(db), "--redact",
                   "--redact-config", str(config)], tmp_path, timeout=300)


def test_a_backtracking_bomb_of_a_redaction_pattern_masks_in_linear_time(tmp_path):
    out = _masked_transcript(tmp_path, "id EMP-" + "a" * 40 + "! and EMP-ab-123456 and bob@example.com", REDACT_BOMB)
    out.succeeded().within_budget()
    assert "EMP-" + "a" * 40 + "!" in out.stdout and "<EMPLOYEE_ID_1>" in out.stdout and "<EMAIL_1>" in out.stdout
    out.never_prints("EMP-ab-123456", "bob@example.com")


def test_a_redaction_pattern_only_a_backtracking_engine_runs_is_refused_in_one_line(tmp_path):
    out = _masked_transcript(tmp_path, "id EMP-123456", r"EMP-(?=\d)\d+")
    out.refused("EMPLOYEE_ID", "RE2").never_prints("EMP-123456")


def test_an_email_lookalike_that_never_ends_masks_in_linear_time(tmp_path):
    # A million characters of `a'` before an `@` with no domain: every `a` could start an address
    # and a regex for the whole address re-reads the rest from each (~10^11 steps); read from the
    # `@` backwards it is one pass. (The timeout only ends a hang.)
    body = "x " + "a'" * 500_000 + "@! and bob@example.com"
    out = _masked_transcript(tmp_path, body, r"EMP-\d{6}")
    out.succeeded().within_budget().never_prints("bob@example.com")
    assert "<EMAIL_1>" in out.stdout and "a'a'a'" in out.stdout
