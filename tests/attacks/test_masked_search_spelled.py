"""Under masking, an address written with its `@` spelled out (`peggy (at) example (dot) com`,
`olivia at example dot com`, `sybil AT example DOT com`), which the display masks as an address, is
no more searchable than one written plainly: no part of it matches a search or the conversations'
text filter (docs/privacy.md, "Search under masking"), through the API and the commands."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

import analytics
from analytics.policy import Policy, reading_as
from tests.attacks.harness import loaded_thread, run_cli

SAID = [
    "email paren peggy (at) example (dot) com end",
    "email at-word olivia at example dot com end",
    "email AT upper sybil AT example DOT com end",
    "email bracket trudy[at]mail[.]example[.]org end",
]
# Parts of the values above, each found unmasked.
PROBES = ["peggy", "peggy (at)", "(at) example", "example (dot) com", "olivia", "olivia at example",
          "at example dot", "example dot com", "sybil", "sybil AT", "trudy", "mail[.]example", "[at]mail"]


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    return loaded_thread(tmp_path_factory.mktemp("masked-search-spelled"), [*(HumanMessage(s) for s in SAID), AIMessage("noted, meet at noon")], "acme:web:spelled")


@pytest.mark.parametrize("probe", PROBES)
def test_no_part_of_a_spelled_address_is_found(lens, probe):
    assert analytics.search(str(lens), probe).total >= 1  # unmasked, the probe finds its message
    assert len(analytics.conversations(str(lens), analytics.Filters(text=probe))) == 1
    with reading_as(Policy(redact=True)):
        assert analytics.search(str(lens), probe).total == 0
        assert analytics.conversations(str(lens), analytics.Filters(text=probe)).empty


@pytest.mark.parametrize("probe", ["peggy", "olivia at example", "example (dot) com", "sybil"])
def test_the_commands_find_no_part(lens, tmp_path, probe):
    plain = run_cli(["search", probe, "--db", str(lens), "--format", "csv"], tmp_path).succeeded()
    assert len(plain.stdout.splitlines()) == 2
    masked = run_cli(["search", probe, "--db", str(lens), "--format", "csv", "--redact"], tmp_path).succeeded()
    assert len(masked.stdout.splitlines()) == 1, masked.stdout
    listed = run_cli(["report", "conversations", "--db", str(lens), "--text", probe, "--out", "-"], tmp_path).succeeded()
    assert "acme:web:spelled" in listed.stdout
    listed = run_cli(["report", "conversations", "--db", str(lens), "--text", probe, "--out", "-", "--redact"],
                     tmp_path).succeeded()
    assert "acme:web:spelled" not in listed.stdout, listed.stdout


@pytest.mark.parametrize("text", ["email", "paren", "end", "meet at noon"])
def test_the_words_around_them_are_found(lens, text):
    with reading_as(Policy(redact=True)):
        assert analytics.search(str(lens), text).total >= 1


def test_each_is_masked_on_display(lens):
    with reading_as(Policy(redact=True)):
        hits = analytics.search(str(lens), "end", limit=10).hits
    assert len(hits) == len(SAID)
    assert not [p for p in ("peggy", "olivia", "sybil", "trudy") if any(p in s for s in hits["snippet"])]
