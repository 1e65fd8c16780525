"""An address with a real or spelled `@` and a dot written otherwise — spelled in brackets after a
real `@` (`dan@example[dot]com`), a comma for its last dot (`victor@example,com`), `at` and `dot`
between dashes or underscores (`heidi -at- example -dot- com`, `oscar_at_example_dot_com`), or its
`@` as CSS escapes it (`alice\\40 example.com`) — is masked as the address it spells, and no part
of it is found by a masked search (docs/privacy.md, `EMAIL`, "Search under masking"). Look-alikes
stay: a word after a comma that is no common top-level domain, a name in code."""

from __future__ import annotations

import pytest

from analytics.redact import Redactor
from tests.attacks.harness import found_unmasked_only, said_in_a_thread

SPELLED = {
    "dan@example[dot]com": "dan",
    "victor@example,com": "victor",
    "heidi -at- example -dot- com": "heidi",
    "oscar_at_example_dot_com": "oscar",
    "alice\\40 example.com": "alice",
    "peggy -at- acme-mail -dot- co -dot- uk": "peggy",
    "jane dot doe at example dot com": "jane",  # (a local part's dots spelled too)
    "mary.ann dot lee (at) example (dot) org": "mary.ann",
    "john.smith at gmail.com": "john.smith",  # (a bare `at` after a name of words joined by dots)
    "bob_smith at example.org": "bob_smith",
    "john<at>gmail<dot>com": "john",
}
DECOYS = ["look it up at example.com", "v1.2 at example.com", "see the doc dot and write to me", "me@home,please", "created_at_index_dot_html", "up-at-dawn dot com", "v1.2,com", "path C:\\40 files"]


@pytest.mark.parametrize("written", list(SPELLED))
def test_the_address_is_masked(written):
    assert Redactor().text(f"write to {written} today") == "write to <EMAIL_1> today"


def test_each_spelling_is_the_address():
    r = Redactor()
    assert r.text("dan@example.com dan@example[dot]com dan -at- example -dot- com dan\\40 example.com") == \
        "<EMAIL_1> <EMAIL_1> <EMAIL_1> <EMAIL_1>"


def test_the_look_alikes_are_left_as_written():
    r = Redactor()
    assert [r.text(text) for text in DECOYS] == DECOYS


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    return said_in_a_thread(tmp_path_factory.mktemp("masking-spelled-dots"), [f"mail {w} end" for w in SPELLED])


@pytest.mark.parametrize("probe", [*SPELLED.values(), "example,com", "example -dot- com", "example_dot_com",
                                   "example[dot]com", "40 example", "-at- example", ",com"])
def test_a_masked_search_finds_no_part(lens, probe):
    found_unmasked_only(lens, probe)
