"""A `[redact]` value of the wrong type is refused in one line naming the file, the key and what
was expected: `terms = "Nightingale"` (a string, not a list) masked nothing, silently; a
number where a string is meant, or `patterns` as a list, printed a traceback."""

from __future__ import annotations

import pytest

from tests.attacks.harness import run_cli

CONFIGS = {
    'terms = "Nightingale"': ("terms", "a list of strings"),
    "terms = [1, 2]": ("terms", "a list of strings"),
    "terms_kind = 5": ("terms_kind", "a string"),
    'phone_regions = "US"': ("phone_regions", "a list of strings"),
    'patterns = ["EMP-\\\\d{6}"]': ("patterns", "a table"),
    "[redact.patterns]\nE = 5": ("patterns", "a table"),
    '[redact.patterns]\n"bad name" = "x"': ("bad name", "letters, digits and underscores"),
}


@pytest.mark.parametrize("line", CONFIGS)
def test_a_redact_value_of_the_wrong_type_is_refused(tmp_path, line):
    config = tmp_path / "redact.toml"
    config.write_text(f"[redact]\n{line}\n")
    out = run_cli(["transcript", "--db", str(tmp_path / "x.duckdb"), "--thread", "t", "--redact",
                   "--redact-config", str(config)], tmp_path)
    key, expected = CONFIGS[line]
    out.refused(str(config), key, expected)
    assert out.returncode == 2
