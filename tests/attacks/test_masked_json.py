"""`transcript --redact --format json` masks the records value by value and prints valid JSON,
whatever the configured patterns match: masked again as printed text, a pattern for long numbers
(`\\d{5,}`) turned `"content_chars": 20031` into `"content_chars": <CUSTNO_3>`, and one matching
part of a key turned `"index"` into `"i<CUSTOM_1>"` (docs/privacy.md: JSON "stays valid JSON")."""

from __future__ import annotations

import json

import pytest

from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

THREAD = "acme:web:bob@example.com"
TEXT = "mail bob@example.com about order 4400123 " + "a" * 20_000


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("masked-json")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [{"type": "human", "content": TEXT, "id": "m1"}], thread_id=THREAD)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


@pytest.mark.parametrize("pattern", [r"\d{5,}", "ndex"], ids=["numbers", "part-of-a-key"])
def test_masked_json_stays_json_whatever_a_pattern_matches(lens, tmp_path, pattern):
    config = tmp_path / "redact.toml"
    config.write_text(f"[redact.patterns]\nCUSTOM = '{pattern}'\n")
    out = run_cli(["transcript", "--db", str(lens), "--thread", THREAD, "--redact", "--redact-config", str(config),
                   "--format", "json"], tmp_path)
    out.succeeded()
    [record] = json.loads(out.stdout)
    assert "bob@example.com" not in out.stdout and record["thread_id"] == "acme:web:<EMAIL_1>"
    assert isinstance(record["content_chars"], int) and record["content_chars"] == len(TEXT)
    assert "index" in record  # keys as they are
    assert "<EMAIL_1>" in record["content"] and ("4400123" in record["content"]) == (pattern == "ndex")


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_a_placeholder_is_not_masked_again(lens, tmp_path, fmt):
    """Each value is masked once: the read masks the text, the command masks the keys it left as
    stored. Masked again, a placeholder is text a pattern for ids (`TICKET_123`) matches:
    `<EMAIL_1>` became `<<TICKET_2>>`, its kind and number lost."""
    config = tmp_path / "redact.toml"
    config.write_text("[redact.patterns]\nTICKET = '[A-Z]+_[0-9]+'\n")
    out = run_cli(["transcript", "--db", str(lens), "--thread", THREAD, "--redact", "--redact-config", str(config),
                   "--format", fmt], tmp_path)
    out.succeeded()
    assert "bob@example.com" not in out.stdout + out.stderr
    assert "mail <EMAIL_1> about" in out.stdout and "TICKET" not in out.stdout
    if fmt != "table":
        assert "acme:web:<EMAIL_1>" in out.stdout
