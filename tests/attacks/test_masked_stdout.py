"""What `search` and `report …` print under `--redact` is masked value by value before it is
serialised, as the files they write are (docs/privacy.md, "What masking covers"): masked as
printed lines, a value the CSV quotes across two lines or JSON escapes (`4111 1111\\n1111 1111`,
a card broken by a line break) passed the masker in pieces, and a report printed to stdout was
masked a second time as text, so a configured pattern rewrote its counts (`content_chars`)."""

from __future__ import annotations

import json
import re

import pytest

from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

THREAD = "acme:web:bob.stdout@example.com"
CARD = "4111 1111\n1111 1111"  # a card number broken by a line break: one value, two printed lines
IBAN = "DE89 3704 0044\n0532 0130 00"
TEXT = "refund the order please, " + "x" * 20_031


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("masked-stdout")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [{"type": "human", "content": TEXT, "id": f"card {CARD}"},
                                {"type": "ai", "content": f"refund to iban {IBAN}", "id": f"iban {IBAN}"}],
                        thread_id=THREAD)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def _digits_leaked(printed: str) -> list[str]:
    return [s for s in ("4111 1111", "1111 1111", "3704 0044", "0532 0130") if s in printed]


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_search_prints_every_value_masked(lens, tmp_path, fmt):
    out = run_cli(["search", "refund", "--db", str(lens), "--redact", "--format", fmt], tmp_path)
    out.succeeded().never_prints("bob.stdout@example.com")
    assert _digits_leaked(out.stdout) == [] and "<IBAN_" in out.stdout
    if fmt == "json":
        ids = sorted(re.sub(r"_\d+>", ">", r["message_id"]) for r in json.loads(out.stdout))
        assert ids == ["card <CARD>", "iban <IBAN>"]  # each value masked whole


@pytest.mark.parametrize("kind", ["transcript", "search"])
def test_a_report_printed_is_the_report_written(lens, tmp_path, kind):
    config = tmp_path / "redact.toml"
    config.write_text("[redact.patterns]\nCUSTNO = '\\d{5,}'\n")
    args = ["report", kind, "--db", str(lens), "--redact", "--redact-config", str(config),
            *(["--text", "refund"] if kind == "search" else ["--tenant", "acme"])]
    written = tmp_path / f"{kind}.csv"
    run_cli([*args, "--out", str(written)], tmp_path).succeeded()
    printed = run_cli(args, tmp_path)
    printed.succeeded()
    assert printed.stdout.encode() == written.read_bytes()
    assert _digits_leaked(printed.stdout) == [] and "bob.stdout@example.com" not in printed.stdout
    if kind == "transcript":
        assert ",20056," in printed.stdout  # content_chars, as counted: a number of a masked file is not text
