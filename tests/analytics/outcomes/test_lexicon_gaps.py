"""A user lexicon's pattern of many gaps (`a ... a ... a ...`) on a long message: each (token, part)
is tried once per clause, so the work grows with the message and the parts, not exponentially with
the gaps (six gaps took 209 s on three 3,000-token messages before)."""

from __future__ import annotations

from analytics.conversation_outcomes import lexicon as lexicon_module
from analytics.conversation_outcomes.lexicon import GAP, clauses, lexicon_from


def test_a_pattern_of_many_gaps_that_fails_late_is_tried_once_per_token_and_part(monkeypatch):
    parts = 8
    pattern = " ... ".join(["a"] * (parts - 1) + ["zzz"])  # never matches: every way is tried
    lx = lexicon_from({"human": [pattern]})  # (the only human pattern: the count is its own)
    text = " ".join(["a"] * 400)
    calls = []
    here = lexicon_module.Lexicon._match_here

    def counted(self, *args):
        calls.append(1)
        return here(self, *args)

    monkeypatch.setattr(lexicon_module.Lexicon, "_match_here", counted)
    assert not lx.find("human", clauses(text))
    tokens = 400
    # each (token, part) once, whatever the start: linear in the message and the parts (without
    # the memo, about (GAP + 1) ** (parts - 1) ways from each start: millions here)
    assert len(calls) <= tokens * parts
    assert lx.find("human", clauses(text + " zzz"))  # (and it still matches when it can)
