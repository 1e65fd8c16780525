"""A configured pattern that matches inside a built-in value (`x+` inside `bob@example.com`) does
not leave the rest of that value as text: configured patterns are found first, and an address
reaching past one was dropped, printing `bob@e<CUSTOM_1>ample.com`. Overlapping findings are
masked as one (their union, named as the longest)."""

from __future__ import annotations

import pytest

from tests.attacks.harness import run_cli
from tests.attacks.test_masked_json import THREAD, lens  # noqa: F401 (the fixture: a thread keyed by an e-mail)


@pytest.mark.parametrize("pattern", ["x+", "b", "example"])
def test_a_pattern_inside_an_address_masks_the_whole_address(lens, tmp_path, pattern):  # noqa: F811
    config = tmp_path / "redact.toml"
    config.write_text(f"[redact.patterns]\nCUSTOM = '{pattern}'\n")
    out = run_cli(["transcript", "--db", str(lens), "--thread", THREAD, "--redact", "--redact-config", str(config)],
                  tmp_path)
    out.succeeded()
    text = out.stdout + out.stderr
    assert "bob@" not in text and "@e" not in text and "ample.com" not in text, text[:2000]
