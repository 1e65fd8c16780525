"""An address with spaces round its `@` or its dots (`john @ gmail . com`, `john @gmail.com`,
`john@ gmail .com`, `john (at) gmail . com`, a tab or a non-breaking space for a space) is masked as the address it is, the
same placeholder as written plainly, and no part of it is found by a masked search (docs/privacy.md,
`EMAIL`). Prose with an `@` and a dot stays: no name before the `@`, no known top-level domain
after the dot, a word opening a sentence, or a sentence after an address written plainly."""

from __future__ import annotations

import pytest

from analytics.redact import Redactor
from tests.attacks.harness import found_unmasked_only, left_as_written, said_lens

SPACED = {
    "john @ gmail . com": "john",
    "john @gmail.com": "john",
    "john@ gmail .com": "john",
    "JOHN @ GMAIL . COM": "JOHN",
    "kate\t@\tmail . example . co . uk": "kate",
    "liam\u00a0@\u00a0example\u00a0.\u00a0org": "liam",
    "mia @ shop . co": "mia",  # (a country's domain)
    "noah.lee @ example.io": "noah.lee",
    "olga @ mail. ru": "olga",  # (a dot with spaces after it alone, after an `@` with spaces round it)
    "pia@mail. com": "pia",  # (or as the domain's one dot, before a common top-level domain)
    "quinn (at) mail . org": "quinn",  # (an `@` in brackets)
}
DECOYS = ["meet @ 5 . ok", "price @ 3.50", "a . b", "x @ y . z", "me @ home . please", "ping @ team . Great",
          "reach me @ home. Info below", "10 @ 5 . de", "email: @ gmail . com", "see the @ sign . ok",
          "ann@home. so tired", "x (at) y"]


@pytest.mark.parametrize("written", list(SPACED))
def test_the_address_is_masked(written):
    assert Redactor().text(f"write to {written} today") == "write to <EMAIL_1> today"


def test_each_spacing_is_the_address():
    r = Redactor()
    assert r.text("john@gmail.com, john @ gmail . com, john @gmail.com, john@ gmail .com") == \
        "<EMAIL_1>, <EMAIL_1>, <EMAIL_1>, <EMAIL_1>"


def test_a_sentence_after_an_address_is_not_its_domain():
    assert Redactor().text("bob@example.com. Info follows; bob@example.com. info") == "<EMAIL_1>. Info follows; <EMAIL_1>. info"


def test_the_look_alikes_are_left_as_written():
    left_as_written(DECOYS)


lens = said_lens("masking-spaced-emails", [f"mail {w} end" for w in SPACED])


@pytest.mark.parametrize("probe", [*dict.fromkeys(SPACED.values()), "gmail . com", "@ gmail", "example . co"])
def test_a_masked_search_finds_no_part(lens, probe):
    found_unmasked_only(lens, probe)
