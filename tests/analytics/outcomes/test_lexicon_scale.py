"""A long user lexicon is read as a short one is: a plain phrase parses as the general syntax reads
it, negations and contrasts are looked up by length and first word instead of tried one by one, and
the answers are those of trying each (bench/bench_masking_terms.py measures the time)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analytics.conversation_outcomes.lexicon import _by_length, _negated, clauses, lexicon_from, parse

words = st.text(alphabet="abcdeéÇ'-", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(words, min_size=1, max_size=4))
def test_a_plain_phrase_parses_as_the_general_syntax_reads_it(phrase):
    text = " ".join(phrase)
    assert parse(text) == parse(text + " ...")  # (a trailing gap: read by the general syntax, no part added)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcd"), min_size=1, max_size=3).map(tuple), max_size=8),
       st.lists(st.sampled_from("abcde"), max_size=6))
def test_negations_by_length_answer_as_trying_each(negations, before):
    tried = any(tuple(before[j:j + len(n)]) == n for n in negations for j in range(len(before) - len(n) + 1))
    assert _negated(before, _by_length(tuple(negations))) == tried


def test_a_lexicon_of_thousands_of_phrases_finds_its_own_and_keeps_the_rules():
    phrases = [f"zq{n} yx{n}" for n in range(20000)]
    lexicon = lexicon_from({"extend": True, "human": phrases, "negation": ["no need", "not", *[f"nq{n}" for n in range(5000)]],
                            "contrast": ["but", "but then", *[f"cq{n} and" for n in range(5000)]]})
    assert lexicon.matches("human", "well, zq12345 yx12345 now")
    assert not lexicon.matches("human", "well, zq12345 yx12346 now")
    assert not lexicon.matches("human", "no need to zq7 yx7")  # a negation before it takes it back
    assert not lexicon.matches("human", "nq4999 zq7 yx7")
    assert lexicon.matches("human", "I want to talk to a human")  # the built-in phrases stay
    assert lexicon.find("closing", clauses("thanks a lot")) and not lexicon.find("closing", clauses("thanks but then no"))
    assert not lexicon.find("closing", clauses("thanks cq17 and that is not it"))
