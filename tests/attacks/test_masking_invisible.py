"""Masking sees what a reader sees (docs/privacy.md, "What masking covers"): a personal value
written with invisible characters inside it — a decomposed accent, zero-width spaces, a soft
hyphen — or with full-width `＠` and `．` is masked whole under `--redact`, and a search cannot
find a part of it, while the same search unmasked does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

THREAD = "invisible"
VALUES = {
    "decomposed accent": "jose\u0301.pii@north-mail.com",
    "zero-width space": "bo\u200bb.pii@south-mail.com",
    "soft hyphen": "dave.pii@west\u00admail.com",
    "full-width at and dot": "carol\uff20east-mail\uff0ecom",
    "zero-width card": "4111\u200b1111\u200b1111\u200b1111",
}
# What must never be printed under masking: a visible piece of each value.
SECRETS = ["north-mail", "jos", "south-mail", "b.pii", "dave", "carol", "east-mail", "4111"]
PROBES = ["east-mail", "1111"]  # past a full-width at, and between zero-width spaces


@pytest.fixture(scope="module")
def lens(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("invisible")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    said = [HumanMessage(f"my {what} is {value} thanks") for what, value in VALUES.items()]
    store_with_messages(store, [*said, AIMessage("noted")], THREAD)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


@pytest.mark.parametrize("fmt", ["csv"])
def test_a_value_with_invisible_characters_is_masked_whole(fmt, lens, tmp_path):
    out = run_cli(["transcript", "--thread", THREAD, "--format", fmt, "--db", str(lens), "--redact"], tmp_path)
    out.succeeded().never_prints(*SECRETS)
    assert out.stdout.count("<EMAIL_") == 4 and "<CARD_1>" in out.stdout, out.stdout


@pytest.mark.parametrize("probe", PROBES)
def test_a_part_of_such_a_value_never_matches_a_search(probe, lens, tmp_path):
    plain = run_cli(["search", probe, "--db", str(lens), "--format", "csv"], tmp_path).succeeded()
    assert len(plain.stdout.splitlines()) > 1  # unmasked, the probe finds the message
    out = run_cli(["search", probe, "--db", str(lens), "--format", "csv", "--redact"], tmp_path)
    out.succeeded().never_prints(*(s for s in SECRETS if s not in probe))  # (the summary line names the query)
    assert len(out.stdout.splitlines()) <= 1, out.stdout  # a header, no hit
