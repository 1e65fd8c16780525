"""argparse's own error lines quote what was typed (`invalid choice: 'bob@example.com'`,
`unrecognized arguments: …`, `invalid int value: …`): under `--redact`, or the deployment's
masking, they are masked as every other line a command prints (docs/privacy.md, "What masking
covers"), with a `--redact-config`'s own patterns; without masking they quote the value as typed."""

from __future__ import annotations

import pytest

from tests.attacks.harness import run_cli

EMAIL = "alice.argv@example.com"

ERRORS = [
    ["report", EMAIL, "--db", "x.duckdb"],  # invalid choice (the report kind)
    ["search", "refund", "--db", "x.duckdb", EMAIL],  # unrecognized arguments
    ["search", "refund", "--db", "x.duckdb", "--limit", EMAIL],  # invalid value of a typed flag
    ["annotations", "add", "--db", "x.duckdb", "--thread", "t", "--verdict", EMAIL],  # a subcommand's choices
]


@pytest.mark.parametrize("argv", ERRORS, ids=lambda a: " ".join(a[:2]))
def test_an_argument_error_is_masked_under_redact(argv, tmp_path):
    out = run_cli([*argv, "--redact"], tmp_path)
    assert out.returncode == 2 and "<EMAIL_" in out.stderr
    out.never_prints(EMAIL)


@pytest.mark.parametrize("argv", ERRORS[:2], ids=lambda a: " ".join(a[:2]))
def test_an_argument_error_is_masked_under_the_deployment_masking(argv, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT", "1")
    out = run_cli(argv, tmp_path)
    assert out.returncode == 2 and "<EMAIL_" in out.stderr
    out.never_prints(EMAIL)


def test_a_configured_pattern_masks_an_argument_error(tmp_path):
    config = tmp_path / "redact.toml"
    config.write_text("[redact.patterns]\nEMPLOYEE_ID = 'EMP-\\d{6}'\n")
    out = run_cli(["report", "EMP-123456", "--db", "x.duckdb", "--redact", "--redact-config", str(config)], tmp_path)
    assert out.returncode == 2 and "<EMPLOYEE_ID_" in out.stderr
    out.never_prints("EMP-123456")


def test_without_masking_the_error_quotes_the_value(tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSCRIPT_LENS_REDACT", raising=False)
    out = run_cli(["report", EMAIL, "--db", "x.duckdb"], tmp_path)
    assert out.returncode == 2 and EMAIL in out.stderr
