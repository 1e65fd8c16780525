"""What a redaction config may ask for, and how it is refused (docs/privacy.md, "Your own patterns
and terms"; `analytics.redact_limits`).

10,000 patterns such as `[a-z]{1,1000}x1` (a 288 KB file) took minutes to read and 1.6 GB at the
peak; now a config past a limit (the patterns' count, what they compile to together, the terms)
is refused in one line naming the file, the key and the limit, exit 2, before it is compiled. An
error about a value named the value itself (`not str 'alice@example.com'`): now it names the
key, the position and what was expected, the value by its type and size only, and what it must
quote (RE2's reason) masked. `terms_kind`, shown in every placeholder of a term, is a kind's
name or refused: an e-mail there was in every masked output."""

from __future__ import annotations

import re

import pytest

from analytics import redact_limits
from tests.attacks.harness import attack, loaded_thread, run_cli

MAIL = "alice.private@example.com"


def _transcript(tmp_path, text: str, db=None):
    config = tmp_path / "redact.toml"
    config.write_text(text, encoding="utf-8")
    argv = ["transcript", "--db", str(db or tmp_path / "x.duckdb"), "--thread", "acme:web:s1", "--redact",
            "--redact-config", str(config)]
    return config, argv


def test_ten_thousand_large_patterns_are_refused_before_they_are_compiled(tmp_path):
    db = loaded_thread(tmp_path, [{"role": "user", "content": "hello there", "id": "m1"}], "acme:web:s1")
    lines = "".join(f'K{i} = "[a-z]{{1,1000}}x{i}"\n' for i in range(10_000))
    config, argv = _transcript(tmp_path, "[redact.patterns]\n" + lines, db)
    # (the timeout only ends a run that compiles them all: minutes, 1.6 GB)
    out = attack(argv, tmp_path, timeout=90)
    out.refused(str(config), "patterns", f"{redact_limits.MAX_PATTERNS:,}").within_budget()
    assert out.returncode == 2


def test_patterns_compiling_past_the_limit_together_are_refused_naming_the_one(tmp_path):
    count = redact_limits.MAX_PROGRAM // 2_000 + 1  # (each `[a-z]{1,1000}x…` compiles to about 2,000 instructions)
    lines = "".join(f'K{i} = "[a-z]{{1,1000}}x{i}"\n' for i in range(count))
    config, argv = _transcript(tmp_path, "[redact.patterns]\n" + lines)
    out = run_cli(argv, tmp_path)
    out.refused(str(config), "patterns", f"{redact_limits.MAX_PROGRAM:,}", "{1,1000}")
    assert out.returncode == 2 and re.search(r"the pattern 'K4[0-9]'", out.stderr), out.stderr  # (the one past it)


def test_many_small_patterns_and_terms_within_the_limits_mask(tmp_path):
    db = loaded_thread(tmp_path, [{"role": "user", "content": "id EMP-123456 for Ada Quill", "id": "m1"}],
                       "acme:web:s1")
    patterns = "".join(f"P{i} = 'EMP-{i:03d}\\d{{3}}'\n" for i in range(400))
    terms = ", ".join(f'"Name{i} Quill{i}"' for i in range(2_000)) + ', "Ada Quill"'
    _, argv = _transcript(tmp_path, f"[redact]\nterms = [{terms}]\n[redact.patterns]\n{patterns}", db)
    out = run_cli(argv, tmp_path).succeeded()
    assert "<P123_1>" in out.stdout and "<NAME_1>" in out.stdout
    out.never_prints("EMP-123456", "Ada Quill")


CONFIGS = {  # a config: (words its one line holds)
    f'[redact]\nterms = "{MAIL}"\n': ("terms", "a list of strings", "a string of 25 characters"),
    f'[redact]\nterms = ["Ada Quill", 5, "{MAIL}"]\n': ("terms[1]", "a string", "an integer"),
    f'[redact]\nterms_kind = "{MAIL}"\n': ("terms_kind", "letters, digits and underscores", "25 characters"),
    '[redact]\nterms_kind = "Customer Name"\n': ("terms_kind", "letters, digits and underscores"),
    f'[redact]\nphone_regions = ["US", "{MAIL}"]\n': ("phone_regions[1]", "ISO 3166"),
    f"[redact.patterns]\nE = ['{MAIL}']\n": ("patterns.E", "a regular expression", "a list of 1 values"),
    f'[redact.patterns]\n"{MAIL}" = "x"\n': ("kind of pattern 1", "<EMAIL_1>"),
    f"[redact.patterns]\nE = '({MAIL}'\n": ("'E'", "RE2", "missing ): (<EMAIL_1>"),  # (RE2's reason, masked)
    f'[redact]\nterms = ["{"x" * (redact_limits.MAX_TERM + 1)}"]\n': ("terms[0]", f"{redact_limits.MAX_TERM}"),
}


@pytest.mark.parametrize("text", CONFIGS)
def test_a_bad_value_is_refused_naming_its_key_and_never_echoed(tmp_path, text):
    config, argv = _transcript(tmp_path, text)
    out = run_cli(argv, tmp_path)
    out.refused(str(config), *CONFIGS[text]).never_prints(MAIL, "Customer Name", "x" * 100)
    assert out.returncode == 2


def test_terms_past_the_limit_are_refused(tmp_path):
    terms = ", ".join(f'"t{i}"' for i in range(redact_limits.MAX_TERMS + 1))
    config, argv = _transcript(tmp_path, f"[redact]\nterms = [{terms}]\n")
    out = run_cli(argv, tmp_path)
    out.refused(str(config), "terms", f"{redact_limits.MAX_TERMS:,}")
    assert out.returncode == 2
