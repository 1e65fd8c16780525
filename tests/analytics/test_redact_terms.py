"""Configured redaction terms are found in one pass over the text whatever their number (a trie of
their spellings, `analytics.redact._Terms`), with the semantics of one regular expression per term:
whole words, any case, the longest term at the leftmost place, an accented letter of a term also
without its accent. And a masking search with thousands of terms still searches (the terms are
not an RE2 expression too large to compile, which made every search blind)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from analytics.reader_view import base, view
from analytics.redact import RedactConfig, _Terms, find_personal_data
from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages


def _either_way(spelling: str) -> str:
    return "".join(f"[{c}{base(c)}]" if base(c) != c and len(base(c)) == 1 else re.escape(c) for c in spelling)


def per_term(terms: tuple[str, ...], text: str) -> list[tuple[int, int, str]]:
    """The reference: each term's spellings as one `re` alternative, longest first, whole words, any case."""
    spellings = {t for term in terms for t in (term, view(unicodedata.normalize("NFD", term))[0])}
    alternation = "|".join(_either_way(t) for t in sorted(spellings, key=len, reverse=True))
    regex = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end(), m.group().casefold()) for m in regex.finditer(text)]


def by_trie(terms: tuple[str, ...], text: str) -> list[tuple[int, int, str]]:
    return [(f.start, f.end, f.value) for f in _Terms("NAME", terms).find(text)]


LETTERS = "abcdeéèAÉEsSçCñnü-' ."
words = st.text(alphabet=LETTERS, min_size=1, max_size=8).map(str.strip).filter(bool)


@settings(max_examples=300, deadline=None)
@given(terms=st.lists(words, min_size=1, max_size=12, unique=True),
       picks=st.lists(st.tuples(st.integers(0, 11), st.text(alphabet=LETTERS + "x1,", max_size=4),
                                st.sampled_from(["lower", "upper", "same", "bare"])), max_size=10))
def test_the_trie_finds_what_one_expression_per_term_finds(terms, picks):
    parts = []
    for k, noise, case in picks:
        term = terms[k % len(terms)]
        term = {"lower": term.lower(), "upper": term.upper(), "same": term,
                "bare": "".join(base(c) for c in term)}[case]
        parts += [term, noise]
    text = " ".join(parts)
    assert by_trie(tuple(terms), text) == per_term(tuple(terms), text)


def test_the_longest_term_at_the_leftmost_place_and_whole_words_only():
    terms = ("Alice", "Alice Example", "José", "Ex")
    text = "ALICE example, Alicex, jose, Jose\u0301, JOSÉ, ex-wife, sex"
    assert by_trie(terms, text) == per_term(terms, text)
    assert [v for _s, _e, v in by_trie(terms, text)] == ["alice example", "jose", "jose", "josé", "ex"]


def test_found_in_the_view_spans_of_the_stored_text():
    config = RedactConfig(terms=("Carol Danvers",))
    assert [(f.start, f.end) for f in find_personal_data("ask Carol&nbsp;Dan\u200bvers now", config)] == [(4, 23)]


TERMS = [f"Zq{n:05d}name Person{n}" for n in range(5000)]
THREAD = "terms"


@pytest.fixture(scope="module")
def lens(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("terms")
    store, db, config = folder / "store.sqlite", folder / "lens.duckdb", folder / "redact.toml"
    store_with_messages(store, [HumanMessage(f"please refund {TERMS[4321]} today"), AIMessage("refund sent")], THREAD)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    config.write_text("[redact]\nterms = [" + ", ".join(f'"{t}"' for t in TERMS) + "]\n", encoding="utf-8")
    return db, config


def test_a_masking_search_with_thousands_of_terms_still_searches(lens, tmp_path):
    db, config = lens
    masked = ["--redact", "--redact-config", str(config)]
    out = run_cli(["search", "refund", "--db", str(db), "--format", "csv", *masked], tmp_path).succeeded()
    assert len(out.stdout.splitlines()) == 3, out.stdout  # both messages: the search is not blind
    assert "Zq04321name" not in out.stdout and "<NAME_1>" in out.stdout
    for part in ("Zq04321name", "Person4321", "refund Zq04321"):
        plain = run_cli(["search", part, "--db", str(db), "--format", "csv"], tmp_path).succeeded()
        assert len(plain.stdout.splitlines()) == 2  # unmasked, each part finds its message
        out = run_cli(["search", part, "--db", str(db), "--format", "csv", *masked], tmp_path)
        assert len(out.stdout.splitlines()) <= 1, out.stdout  # masked, no part of a term is found
    shown = run_cli(["transcript", "--thread", THREAD, "--db", str(db), "--format", "csv", *masked], tmp_path)
    shown.succeeded().never_prints("Zq04321name", "Person4321")
