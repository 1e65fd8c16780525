"""Odd command-line arguments are refused at the flag, with an `error:` line and exit 2, never a
traceback (README: "Exit status 2 comes with one `error: …` line"): a count past a 64-bit
integer (`--limit`, `--offset`, `--seed`), a number of days that is infinite, not a number or
past what a date can hold (`--older-than`), and an argument that is not UTF-8."""

from __future__ import annotations

import pytest

from tests.attacks.harness import run_cli
from tests.attacks.test_jsonl_floods import lens  # noqa: F401 (the fixture: a database of one thread, "t")

HUGE = "99999999999999999999"


CASES = {
    "search-limit": (["search", "hello", "--limit", HUGE], "out of range"),
    "search-offset": (["search", "hello", "--offset", HUGE], "out of range"),
    "search-not-utf8": (["search", "\udcff\udcfe"], "not valid UTF-8"),
    "retention-inf": (["report", "retention", "--older-than", "1e309", "--out", "-"], "out of range"),
    "retention-nan": (["report", "retention", "--older-than", "nan", "--out", "-"], "out of range"),
    "retention-1e18": (["report", "retention", "--older-than", "1e18", "--out", "-"], "out of range"),
    "queue-seed": (["queues", "create", "q2", "--sample", "5", "--seed", HUGE], "out of range"),
    "conversations-limit": (["report", "conversations", "--limit", HUGE, "--out", "-"], "--limit must be"),
    "transcript-limit": (["transcript", "--thread", "t", "--limit", HUGE], "out of range"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_odd_argument_is_an_error_line_not_a_traceback(lens, tmp_path, case):  # noqa: F811
    argv, words = CASES[case]
    out = run_cli([*argv, "--db", str(lens)], tmp_path)
    out.no_traceback()
    assert out.returncode == 2, out.stderr
    last = [line for line in out.stderr.splitlines() if line.strip()][-1]
    assert "error: " in last and words in last, out.stderr
