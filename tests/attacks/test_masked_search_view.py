"""Under masking, search reads a text as the masking detector does (`analytics.reader_view`): a value
masked in a spelling only the view reads — an address in quoted-printable (`alice=40example.com`), a
card's digits as character references, percent escapes or circled digits — is no more searchable
than one written plainly: no part of it matches (docs/privacy.md, "Search under masking"), through
the search API and the `search` command on a loaded database."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

import analytics
from analytics.policy import Policy, reading_as
from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

SAID = [
    "mail alice=40example.com today",
    "mail carol=40east-mail=2Eorg today",
    "card &#52;&#49;&#49;&#49;&#32;&#49;&#49;&#49;&#49;&#32;&#49;&#49;&#49;&#49;&#32;&#49;&#49;&#49;&#49; today",
    "card %34%31%31%31%20%31%31%31%31%20%31%31%31%31%20%31%31%31%31 today",
    "card \u2463\u2460\u2460\u2460 \u2460\u2460\u2460\u2460 \u2460\u2460\u2460\u2460 \u2460\u2460\u2460\u2460 today",
]
# Parts of the values above as stored, each found unmasked.
PROBES = ["alice=40example", "=40example.com", "40example", "example.com", "carol=40east", "east-mail=2Eorg",
          "&#52;&#49;&#49;&#49;", "&#49;&#32;&#49;", "%34%31%31%31", "%31%20%31", "\u2463\u2460\u2460\u2460",
          "\u2460 \u2460"]


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("masked-search-view")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [*(HumanMessage(s) for s in SAID), AIMessage("noted, today")], thread_id="acme:web:v1")
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def test_every_value_is_masked(lens):
    with reading_as(Policy(redact=True)):
        hits = analytics.search(str(lens), "today", limit=100).hits
    assert len(hits) == len(SAID) + 1
    assert not [p for p in PROBES if any(p in s for s in hits["snippet"])], list(hits["snippet"])


@pytest.mark.parametrize("probe", PROBES)
def test_the_api_finds_no_part_of_a_value(lens, probe):
    assert analytics.search(str(lens), probe).total == 1  # unmasked, the probe finds its message
    with reading_as(Policy(redact=True)):
        assert analytics.search(str(lens), probe).total == 0


@pytest.mark.parametrize("probe", ["alice=40example", "=40example.com", "&#49;&#32;&#49;", "%31%20%31"])
def test_the_command_finds_no_part_of_a_value(lens, tmp_path, probe):
    plain = run_cli(["search", probe, "--db", str(lens), "--format", "csv"], tmp_path).succeeded()
    assert len(plain.stdout.splitlines()) == 2
    out = run_cli(["search", probe, "--db", str(lens), "--format", "csv", "--redact"], tmp_path)
    assert out.returncode == 2 and "refused" in out.stderr or len(out.succeeded().stdout.splitlines()) == 1, out.stdout


@pytest.mark.parametrize("text", ["mail", "today", "card"])
def test_the_words_around_them_are_found(lens, text):
    with reading_as(Policy(redact=True)):
        assert analytics.search(str(lens), text).total >= 2


def test_a_text_re2_cannot_read_is_blind():
    from analytics.masking import blinded
    from analytics.redact import Redactor

    undecodable = "thread \udcff of 4111&#32;1111&#32;1111&#32;1111"  # (a command-line argument of bytes not UTF-8)
    assert blinded(undecodable) == "\0"
    assert "1111" not in Redactor().text(undecodable)
