"""A card or a phone number in the forms a log or a form post writes them is masked, and no part of
it is found by a masked search (docs/privacy.md, `CARD`, `PHONE` and the reader's view): a card
form-encoded (`cc=4111+1111+1111+1111`: `+` is a space there) or grouped by colons or bars, and a
phone number right after other digits (`phone00 0044 20 7946 0958`, `ticket 12 020 7946 0958`),
which `phonenumbers` would read as one longer number. Decoys stay as written."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

import analytics
from analytics.policy import Policy, reading_as
from analytics.redact import Redactor
from tests.attacks.harness import loaded_thread, run_cli

# (text, what must not be shown of it)
MASKED = [
    ("plusform cc=4111+1111+1111+1111 end", "1111"),
    ("posted /pay?cc=4111+1111+1111+1112&x=1 end", "1111"),
    ("card colon 4111:1111:1111:1111 end", "1111"),
    ("card pipe 4111|1111|1111|1111 end", "1111"),
    ("typo colon 4111:1111:1111:1112 end", "1111"),
    ("phone00 0044 20 7946 0958 end", "7946"),
    ("phone011 011 44 20 7946 0959 end", "7946"),
    ("ticket 12 020 7946 0957 end", "7946"),
    ("line2 07700 900456 end", "900456"),
    ("opt 3 415 555 2671 end", "2671"),
    ("posted phone=%2B44+20+7946+0956 end", "7946"),
    ("asked ?q=peggy+at+example+dot+com&page=2 end", "peggy"),
]
DECOYS = [
    "semver 1.2.3+20250305 end",
    "sum 2+2=4 and 12+34=46 end",
    "lang C++17 end",
    "stamp 2025-03-05T12:30:45+00:00 and 2025-03-05 19:45:00.123456+00:00 and 20250305T194500+0100 end",
    "query ?t=2025-03-05T12:30:45+01:00&n=12+34 end",
    "time 12:30:45 and ratio 3:4:5 end",
    "exif 2025:03:05 12:30:45 end",
    "table | 1203 | 4512 | 7781 | 1234 | end",
    "version 1.2.3.4 and v10.0.0.1 and 2025-03-05 end",
    "order 4111111111111111111111 end",
    "grouped 1234:5678:9012:3456 end",
    "build 10.0.19045.2965 and 2025-03-05 10:00 end",
]


@pytest.mark.parametrize("text, hidden", MASKED)
def test_the_value_is_masked(text, hidden):
    shown = Redactor().text(text)
    assert hidden not in shown and "<" in shown, shown


@pytest.mark.parametrize("text", DECOYS)
def test_a_decoy_is_left_as_written(text):
    assert Redactor().text(text) == text


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    return loaded_thread(tmp_path_factory.mktemp("masking-forms"), [*(HumanMessage(t) for t, _ in MASKED), AIMessage("noted end")], "acme:web:f1")


def test_the_transcript_command_shows_none(lens, tmp_path):
    out = run_cli(["transcript", "--db", str(lens), "--thread", "acme:web:f1", "--format", "json", "--redact"],
                  tmp_path).succeeded().stdout
    assert out.count("end") == len(MASKED) + 1
    assert not [h for _, h in MASKED if h in out], out


@pytest.mark.parametrize("probe", ["4111+1111", "1111:1111", "1111|1111", "20 7946", "7946 0958", "44 20 7946",
                                   "900456", "555 2671", "%2B44+20", "peggy+at", "example+dot"])
def test_a_masked_search_finds_no_part(lens, probe):
    assert analytics.search(str(lens), probe).total >= 1  # unmasked, the probe finds its message
    with reading_as(Policy(redact=True)):
        assert analytics.search(str(lens), probe).total == 0
