"""The fast near-duplicate search equals a plain reading of the documented rule (docs/outcomes.md):
token sets of `lexicon.tokens`, each of 3 or more tokens, `|A ∩ B| / |A ∪ B| >= 0.6`, every pair
compared; a reply repeats when it near-duplicates any earlier reply of its thread."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from analytics.conversation_outcomes.lexicon import built_in, clauses, tokens
from analytics.conversation_outcomes.materialize import MIN_REPLY_CHARS
from analytics.conversation_outcomes.texts import text_rows, text_signals
from analytics.conversation_outcomes.similarity import _PUNCTUATION, Repeats, token_set

_WORDS = ["order", "Order", "ships", "monday", "MONDAY", "refund", "café", "Cafe", "straße", "x1", "a_b",
          "3", "5", "the", "your", "won't", "it's", "ﬁle", "e\u0301t\u00e9"]
_GLUE = [" ", ", ", ". ", "–", "—", "’", "‘", "…", "\u00a0", "•", "€", "£", '"', "“", "”", "«", "»", "„", "`",
         "!", "?", "\n", "-", "/", "(", ")"]
_text = st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_GLUE)), max_size=12).map(
    lambda parts: "".join(w + g for w, g in parts))


def _near(a: set[str], b: set[str]) -> bool:
    return len(a) >= 3 and len(b) >= 3 and len(a & b) / len(a | b) >= 0.6


def _reference(replies: list[tuple[int, str]]) -> list[int]:
    sets = [(o, set(tokens(t))) for o, t in replies]
    return [o for k, (o, s) in enumerate(sets) if any(_near(s, t) for _, t in sets[:k])]


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_text)
def test_token_set_is_the_lexicon_tokens(text):
    assert token_set(text) == set(tokens(text))


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.lists(_text, max_size=8), min_size=1, max_size=6))
def test_repeats_over_a_load_equal_the_reference(threads):
    repeats = Repeats()  # (one for all the threads, as a load uses it)
    for texts in threads:
        items = list(enumerate(texts))
        assert repeats.of([(o, token_set(t)) for o, t in items]) == _reference(items), texts


_threads = st.lists(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _text), max_size=8), max_size=5)
#: Complaints of the lexicon among the users' texts, so that both halves of the frustration rule fire.
_COMPLAINTS = ["I want to talk to a human", "that still doesn't work", "No need to talk to a person",
               "This is ridiculous", "that answer is wrong"]


def _signals(threads, batch_rows: int):
    """The text signals of `threads` ([(role, text)] each), read `batch_rows` rows at a time (a thread may span batches)."""
    rows = [(f"t{n}", o, role, text) for n, msgs in enumerate(threads) for o, (role, text) in enumerate(msgs) if text]
    return text_signals(text_rows(rows).to_batches(max_chunksize=batch_rows), built_in(), MIN_REPLY_CHARS)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(_threads, st.integers(1, 6))
def test_repetition_signal_equals_the_reference(threads, batch_rows):
    _, repetition = _signals(threads, batch_rows)
    expected = {}
    for n, msgs in enumerate(threads):
        replies = [(o, t) for o, (role, t) in enumerate(msgs) if role == "assistant" and t and len(t) >= MIN_REPLY_CHARS]
        if found := _reference(replies):
            expected[f"t{n}"] = found
    assert repetition == expected


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["user", "user", "assistant"]), _text | st.sampled_from(_COMPLAINTS)),
                         max_size=8), max_size=5), st.integers(1, 6))
def test_frustration_signal_equals_the_reference(threads, batch_rows):
    """A user message asks for a human, says an answer given before it is wrong (`wrong` after a
    message that is not the user's), or near-duplicates the user message before it."""
    frustration, _ = _signals(threads, batch_rows)
    lexicon, expected = built_in(), {}
    for n, msgs in enumerate(threads):
        users = [(o, t) for o, (role, t) in enumerate(msgs) if role == "user" and t]
        answered = lambda o: any(role != "user" and t for role, t in msgs[:o])  # noqa: E731
        found = [o for k, (o, t) in enumerate(users)
                 if lexicon.find("human", clauses(t)) or (answered(o) and lexicon.find("wrong", clauses(t)))
                 or (k and _near(set(tokens(users[k - 1][1])), set(tokens(t))))]
        if found:
            expected[f"t{n}"] = found
    assert frustration == expected


def test_each_fast_path_mark_is_neither_a_word_nor_changed():
    for mark in _PUNCTUATION:
        assert not mark.isalnum() and mark.casefold() == mark and unicodedata.normalize("NFD", mark) == mark
        assert not any(c.isalnum() or c in '_"' for c in unicodedata.normalize("NFKC", mark)), hex(ord(mark))


def test_past_the_bit_budget_sets_are_compared_as_sets(monkeypatch):
    import random

    from analytics.conversation_outcomes import similarity

    monkeypatch.setattr(similarity, "_MAX_BITS", 6)
    rng = random.Random(3)
    words = [f"w{i}" for i in range(10)]
    repeats = Repeats()
    for _ in range(200):
        items = [(o, " ".join(rng.sample(words, rng.randint(2, 7)))) for o in range(rng.randint(1, 10))]
        assert repeats.of([(o, token_set(t)) for o, t in items]) == _reference(items), items
