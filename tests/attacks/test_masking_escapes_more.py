"""An address's `@` written as JavaScript's `escape()` writes it (`%u0040`), as Python's named escape
(`\\N{COMMERCIAL AT}`) or as an octal escape (`\\100`) is read as an `@` by the reader's view, and a
dotted quad with octets in hex (`0xC0.0xA8.0x01.0x01`, which `inet_aton` and browsers read as an
address) is an IP address: each masked, and no part of it found by a masked search (docs/privacy.md)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

import analytics
from analytics.policy import Policy, reading_as
from analytics.redact import Redactor
from tests.attacks.harness import loaded_thread

MASKED = [
    ("email js carol%u0040example.com end", "carol", "<EMAIL_1>"),
    ("email named eve\\N{COMMERCIAL AT}example.com end", "eve", "<EMAIL_1>"),
    ("email octal mallory\\100example.com end", "mallory", "<EMAIL_1>"),
    ("ip hex 0xC0.0xA8.0x4D.0x0F end", "0xC0", "<IP_1>"),
    ("ip mixed 0xC0.168.77.15 end", "0xC0", "<IP_1>"),
]
DECOYS = [
    "path C:\\data\\100 files end",
    "registers 0x1F.0x2 and 0xFF.0x00.0x00 end",
    "colour 0xFF.0xFF.0xFF.0xFFF end",
    "escape \\N{NO SUCH CHARACTER NAME} and \\000 end",
]


@pytest.mark.parametrize("text, hidden, placeholder", MASKED)
def test_the_value_is_masked(text, hidden, placeholder):
    shown = Redactor().text(text)
    assert hidden not in shown and placeholder in shown, shown


def test_one_address_in_every_spelling():
    r = Redactor()
    assert r.text("0xC0.0xA8.0x01.0x01") == r.text("192.168.1.1") == "<IP_1>"
    assert r.text("a%u0040b.io a\\N{COMMERCIAL AT}b.io a\\100b.io") == "<EMAIL_1> <EMAIL_1> <EMAIL_1>"


@pytest.mark.parametrize("text", DECOYS)
def test_a_decoy_is_left_as_written(text):
    assert Redactor().text(text) == text


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    return loaded_thread(tmp_path_factory.mktemp("masking-escapes-more"), [*(HumanMessage(t) for t, _, _ in MASKED), AIMessage("noted end")], "acme:web:e1")


@pytest.mark.parametrize("probe", ["carol", "%u0040example", "eve\\N", "COMMERCIAL AT", "mallory", "\\100example",
                                   "0xC0", "0xA8.0x4D", "0xC0.168"])
def test_a_masked_search_finds_no_part(lens, probe):
    assert analytics.search(str(lens), probe).total >= 1  # unmasked, the probe finds its message
    with reading_as(Policy(redact=True)):
        assert analytics.search(str(lens), probe).total == 0
