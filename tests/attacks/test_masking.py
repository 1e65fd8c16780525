"""Masking without holes, through the real command line (docs/privacy.md, "What masking covers"),
run in this process (`run_cli`: what it prints and writes is what is judged here).

A store written by a real graph through a real SqliteSaver holds personal values in every field a
command can print: the thread id (so the session id), checkpoint metadata, message text, tool-call
arguments, tool results and a configured name. Under `--redact` no command prints any of them —
transcripts in every format, reports, searches, the erasure listing and log — and a search cannot
recover a value in parts: a part of a masked value never matches (the two halves of an email, the
digits of a card probed group by group), while the same searches unmasked do find them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analytics.pii_store import (EMAIL, GLUED, NAME, PHONE, SECRETS, THREAD, build_pii_in_every_field)
from analytics.reporting.spec import registry
from tests.attacks.harness import run_cli

@pytest.fixture(scope="module")
def lens(tmp_path_factory) -> tuple[Path, Path]:
    """(the loaded database, the redaction config naming NAME), built once for the module."""
    folder = tmp_path_factory.mktemp("masking")
    db = folder / "lens.duckdb"
    run_cli(["load", str(build_pii_in_every_field(folder / "pii.sqlite")), "--db", str(db)], folder).succeeded()
    config = folder / "redact.toml"
    config.write_text(f'[redact]\nterms = ["{NAME}"]\n', encoding="utf-8")
    return db, config


def _masked(argv: list[str], lens, tmp_path) -> list[str]:
    db, config = lens
    return [*argv, "--db", str(db), "--redact", "--redact-config", str(config)]


@pytest.mark.parametrize("argv", [
    ["transcript", "--thread", THREAD],
    ["transcript", "--thread", THREAD, "--format", "csv"],
    ["transcript", "--thread", THREAD, "--format", "json"],
    ["search", "Order", "--format", "table"],
    ["search", "Order", "--format", "csv"],
    ["search", "Order", "--format", "json"],
    ["transcript", "--thread", "acme:web:nobody@acme-mail.com"],  # an error line names the id asked for
], ids=lambda a: " ".join(a[:4]))
def test_no_planted_value_is_printed(argv, lens, tmp_path):
    out = run_cli(_masked(argv, lens, tmp_path), tmp_path)
    out.no_traceback().never_prints(*SECRETS, "nobody@acme-mail.com")
    assert out.returncode in (0, 2)
    if out.returncode == 0:
        assert "<EMAIL_" in out.stdout  # the values are there, masked


# What a report kind needs besides --db and --out (every registered kind is written: a new one is covered).
# The thread is chosen by its tenant: under masking a `--thread` holding a personal value matches nothing.
ONE = ["--tenant", THREAD.split(":")[0]]
REPORT_ARGS = {"search": ["--text", "Order"], "transcript": ONE, "branches": ONE,
               "edits": ONE, "subgraphs": ONE, "resume": ONE,
               "compare": ["--a-since", "2000-01-01", "--b-until", "2100-01-01"]}


@pytest.mark.parametrize("kind", sorted(registry()))
def test_every_report_written_is_masked(kind, lens, tmp_path):
    for suffix in (".csv", ".jsonl"):
        extra = REPORT_ARGS.get(kind, [])
        if kind == "costs":  # (a price table of its own: none is bundled)
            prices = tmp_path / "prices.csv"
            prices.write_text("model,input,output\nany-model,1.00,4.00\n", encoding="utf-8")
            extra = ["--prices", str(prices), "--cost-by", "tenant"]
        target = tmp_path / f"{kind}{suffix}"
        out = run_cli(_masked(["report", kind, *extra, "--out", str(target)], lens, tmp_path), tmp_path)
        out.succeeded().never_prints(*SECRETS)
        written = target.read_text(encoding="utf-8")
        assert not [s for s in SECRETS if s in written], kind
        if kind in ("conversations", "transcript", "search"):
            assert "<EMAIL_" in written  # the values are there, masked


def test_the_erasure_listing_and_log_are_masked(lens, tmp_path):
    db, _config = lens
    copy = tmp_path / "lens.duckdb"
    copy.write_bytes(db.read_bytes())
    run_cli(["erase", "--db", str(copy), "--thread", THREAD, "--reason", f"asked by {EMAIL}"], tmp_path).succeeded()
    for flag in ("--list", "--log"):
        plain = run_cli(["erase", "--db", str(copy), flag], tmp_path).succeeded()
        assert GLUED in plain.stdout  # what masking must hide is there to print
        run_cli(["erase", "--db", str(copy), flag, "--redact"], tmp_path).succeeded().never_prints(*SECRETS)


# Searches that recover a value in parts when a part of a masked value can match.
PROBES = ["mail me at alice.pii@", "@acme-mail.com or call", "alice.pii", "acme-mail", "7700 900", "4111 1111",
          "1111 1111 1111", "3704-0044", "carol@", "com-h0"]


@pytest.mark.parametrize("probe", PROBES)
def test_a_part_of_a_masked_value_never_matches(probe, lens, tmp_path):
    db, _config = lens
    plain = run_cli(["search", probe, "--db", str(db), "--format", "csv"], tmp_path).succeeded()
    assert len(plain.stdout.splitlines()) > 1  # unmasked, the probe finds the message
    out = run_cli(_masked(["search", probe, "--format", "csv"], lens, tmp_path), tmp_path)
    out.no_traceback().never_prints(*SECRETS)
    if out.returncode == 0:
        assert len(out.stdout.splitlines()) <= 1, out.stdout  # a header, no hit
    else:
        out.refused("personal data")


def test_the_text_around_a_masked_value_is_still_found(lens, tmp_path):
    out = run_cli(_masked(["search", "mail me at", "--format", "csv"], lens, tmp_path), tmp_path)
    out.succeeded().never_prints(*SECRETS)
    assert len(out.stdout.splitlines()) == 2 and "<EMAIL_1>" in out.stdout


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_diff_written_to_a_file_is_masked(fmt, lens, tmp_path):
    import duckdb

    db, _config = lens
    with duckdb.connect(str(db), read_only=True) as con:  # an early checkpoint of the thread: the other side
        (early,) = con.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
                               "ORDER BY checkpoint_id LIMIT 1 OFFSET 2", [THREAD]).fetchall()[0]
    target = tmp_path / f"diff.{fmt}"
    out = run_cli(_masked(["diff", "--thread", THREAD, "--with-checkpoint", early, "--format", fmt, "--out", str(target)],
                         lens, tmp_path), tmp_path)
    out.succeeded().never_prints(*SECRETS)
    written = target.read_text(encoding="utf-8")
    assert "<EMAIL_" in written and not [s for s in SECRETS if s in written]


@pytest.mark.parametrize("guess", [EMAIL, "wrong.guess@acme-mail.com"])
def test_a_metadata_filter_confirms_no_guessed_value(guess, lens, tmp_path):
    """`--meta KEY=VALUE` on a value holding a personal value matches nothing under masking,
    whether the guess is right or not (checkpoint metadata is masked on output)."""
    db, _config = lens
    argv = ["search", "Order", "--format", "csv", "--meta", f"user_email={guess}"]
    plain = run_cli([*argv, "--db", str(db)], tmp_path).succeeded()
    assert (len(plain.stdout.splitlines()) > 1) == (guess == EMAIL)  # unmasked, the right guess finds its thread
    out = run_cli(_masked(argv, lens, tmp_path), tmp_path).succeeded().never_prints(*SECRETS)
    assert len(out.stdout.splitlines()) <= 1, out.stdout  # a header, no hit


def test_the_metadata_a_cohort_is_chosen_by_shows_no_personal_value(lens):
    """The Conversations and Compare pages offer these keys and values as choices."""
    import analytics
    from analytics.cohorts.facets import cohort_facets

    db, _config = lens
    plain = cohort_facets(analytics.connect(db)).metadata
    assert {(k, v) for k, v, _n in plain} >= {("user_email", EMAIL), ("caller", PHONE)}
    masked = cohort_facets(analytics.connect(db, redact=True)).metadata
    assert not [f for f in masked if any(s in f"{f[0]} {f[1]}" for s in SECRETS)], masked


@pytest.mark.parametrize("right", [True, False], ids=["right guess", "wrong guess"])
def test_a_thread_filter_confirms_no_guessed_masked_key(right, lens, tmp_path):
    """`--thread` on a key holding a personal value matches nothing under masking, right guess or
    not, as `--meta` does; a key holding none still filters (and `--tenant` of a plain tenant)."""
    db, _config = lens
    guess = THREAD if right else THREAD.replace("acme", "acme-x", 1) + "x"
    argv = ["search", "Order", "--format", "csv", "--thread", guess]
    plain = run_cli([*argv, "--db", str(db)], tmp_path).succeeded()
    assert (len(plain.stdout.splitlines()) > 1) == right  # unmasked, the right key finds its thread
    out = run_cli(_masked(argv, lens, tmp_path), tmp_path).succeeded().never_prints(*SECRETS)
    assert len(out.stdout.splitlines()) <= 1, out.stdout  # a header, no hit
    kept = run_cli(_masked(["search", "Order", "--format", "csv", "--tenant", "acme"], lens, tmp_path), tmp_path)
    assert len(kept.succeeded().stdout.splitlines()) > 1
