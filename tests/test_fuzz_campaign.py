"""The fuzz campaign's verdict on what a target left behind (fuzz/campaign.py)."""

from pathlib import Path

from fuzz.campaign import failures


def test_an_input_kept_for_being_slow_is_not_a_failure(tmp_path):
    # libFuzzer keeps an input slower than -report_slow_units as `<prefix>slow-unit-<sha>`; on a
    # busy machine any input can be slow, so only crashes, leaks, timeouts and OOMs fail the smoke.
    made = {tmp_path / n for n in ("thread-slow-unit-ab12", "thread-crash-cd34", "thread-timeout-ef56", "rows-crash-0a")}
    assert failures(made, "thread") == sorted(str(tmp_path / n) for n in ("thread-crash-cd34", "thread-timeout-ef56"))
    assert failures({tmp_path / "thread-slow-unit-ab12"}, "thread") == []
