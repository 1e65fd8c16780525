"""Under masking, a search of the tool calls (`search --in tool_calls`) finds a tool by its name
and its arguments by what is not personal, though an argument holds an e-mail: the calls are
searched as `name({"to":"…"})`, one run without white space, and the barrier took the whole run
holding an `@` (docs/privacy.md, "Search under masking"). What would match inside the address —
whole (refused) or any part of it — still finds nothing."""

from __future__ import annotations

import pytest

from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

EMAIL = "alice.tool@example.com"
CALL = {"name": "send_email", "args": {"to": EMAIL, "cc": ["(bob.cc@example.org)"], "subject": "refund ok"},
        "id": "c1", "type": "tool_call"}


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("masked-tool-calls")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [{"type": "human", "content": "mail it please", "id": "m1"},
                                {"type": "ai", "content": "", "id": "m2", "tool_calls": [CALL]}],
                        thread_id="acme:web:t1")
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def _search(lens, tmp_path, text: str, *more: str):
    return run_cli(["search", text, "--db", str(lens), "--in", "tool_calls", "--format", "csv", *more], tmp_path)


@pytest.mark.parametrize("text", ["send_email", "subject", "refund ok", '"cc":["'])
def test_what_is_not_personal_is_found(lens, tmp_path, text):
    out = _search(lens, tmp_path, text, "--redact")
    out.succeeded().never_prints(EMAIL, "bob.cc@example.org")
    assert len(out.stdout.splitlines()) == 2 and "<EMAIL_" in out.stdout


def test_a_whole_address_is_refused(lens, tmp_path):
    out = _search(lens, tmp_path, EMAIL, "--redact")
    assert out.returncode == 2 and "refused" in out.stderr


@pytest.mark.parametrize("text", ["alice.tool", "tool@example", "@example.com", '"to":"alice', "bob.cc", "example.org)\"]"])
def test_a_part_of_an_address_finds_nothing(lens, tmp_path, text):
    assert len(_search(lens, tmp_path, text).succeeded().stdout.splitlines()) == 2  # found, unmasked
    out = _search(lens, tmp_path, text, "--redact")
    out.succeeded()
    assert len(out.stdout.splitlines()) == 1  # the header alone
