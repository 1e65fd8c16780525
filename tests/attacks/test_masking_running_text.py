"""A value in running text, a word right after it, is masked whole: a detector whose pattern
runs on over the next words (an IBAN's groups of four take `please` as one more) must not
judge the value and the words together and let the value through."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

THREAD = "running"
VALUES = [
    "DE89 3704 0044 0532 0130 00",
    "GB82 WEST 1234 5698 7654 32",
    "GB82WEST12345698765432",
    "de89-3704-0044-0532-0130-00",
    "4111 1111 1111 1111",
    "4111_1111_1111_1111",
    "5500/0000/0000/0004",
    "+44 20 7946 0958",
    "dana.scully@fbi.example.org",
    '"Quinn Zed"@example.com',
    "zorbax@[192.168.1.1]",
]
# What each value may not leave behind: its longest run of characters other than separators.
PIECES = ["3704 0044 0532", "WEST 1234", "GB82WEST", "3704-0044", "1111 1111", "1111_1111", "0000/0000", "7946 0958",
          "scully", "Quinn Zed", "zorbax"]


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_value_followed_by_words_is_masked_whole(fmt, tmp_path):
    store, db = tmp_path / "store.sqlite", tmp_path / "lens.duckdb"
    said = [HumanMessage(f"pay to {value} please and thanks") for value in VALUES]
    store_with_messages(store, [*said, AIMessage(f"noted {VALUES[0]} ok")], THREAD)
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    out = run_cli(["transcript", "--db", str(db), "--thread", THREAD, "--format", fmt, "--redact"], tmp_path)
    out.succeeded().never_prints(*PIECES)
    assert out.stdout.count("<IBAN_") == 5 and "please and thanks" in out.stdout, out.stdout
