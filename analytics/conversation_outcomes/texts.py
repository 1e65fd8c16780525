"""The text signals over a load's text rows at once: user frustration and assistant repetition.

The rows (thread, ordinal, role, content; in thread and ordinal order, `signals.TEXTS_SQL`)
arrive as Arrow batches. Each distinct text is read by the rules once (agents repeat canned
replies, users their greetings), and what is per row — which user message follows which in a
thread, which replies a thread compares — is NumPy over integer ids rather than a Python object
per row. The rules are `materialize`'s: a user message is frustrated when it complains
(`human` or `wrong` in the lexicon) or near-duplicates the user message before it; a reply of
`min_reply_chars` or more repeats when it near-duplicates an earlier one of its thread.

>>> from analytics.conversation_outcomes.lexicon import built_in
>>> rows = text_rows([("t1", 0, "user", "Let me talk to a human"), ("t1", 1, "assistant", "Your order ships Monday."),
...                   ("t1", 2, "assistant", "Your order ships on Monday.")])
>>> text_signals(rows.to_batches(), built_in(), 20)
({'t1': [0]}, {'t1': [2]})
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analytics.conversation_outcomes.columns import arrow_table, numpy_of, numpy_to_arrow
from analytics.conversation_outcomes.lexicon import Lexicon, clauses
from analytics.conversation_outcomes.similarity import MIN_TOKENS, Repeats, clause_set, near, token_set

_ROW_TYPES = {"thread_id": pa.string(), "ordinal": pa.int32(), "role": pa.string(), "content": pa.string()}


def text_rows(rows: list[tuple]) -> pa.Table:
    """(thread, ordinal, role, content) tuples as a table of text rows (tests, small inputs)."""
    return arrow_table({name: [r[i] for r in rows] for i, name in enumerate(_ROW_TYPES)}, _ROW_TYPES)


class _Rows:
    """The text rows as integer arrays: thread number, ordinal, user or not, text id."""

    def __init__(self, batches: Iterable[pa.RecordBatch]) -> None:
        self.ids: dict[str, int] = {}  # text -> id, in order of first appearance
        self.names: list[str] = []  # thread number -> thread id
        threads, ordinals, users, texts = [], [], [], []
        for batch in batches:
            n = batch.num_rows
            if not n:
                continue
            thread = batch.column(0)
            starts = np.empty(n, dtype=bool)
            starts[0] = not self.names or thread[0].as_py() != self.names[-1]
            if n > 1:
                starts[1:] = numpy_of(pc.not_equal(thread.slice(1), thread.slice(0, n - 1)))
            first = len(self.names) - 1
            self.names.extend(thread.filter(numpy_to_arrow(starts)).to_pylist())
            threads.append(first + np.cumsum(starts, dtype=np.int64))
            ordinals.append(numpy_of(batch.column(1)).astype(np.int64))
            roles = pc.dictionary_encode(batch.column(2))  # (a scalar to compare with would import pandas)
            users.append(numpy_of(roles.indices) == (roles.dictionary.to_pylist() + ["user"]).index("user"))
            encoded = pc.dictionary_encode(batch.column(3))
            ids = self.ids
            known = np.fromiter((ids.setdefault(s, len(ids)) for s in encoded.dictionary.to_pylist()), dtype=np.int64)
            texts.append(known[numpy_of(encoded.indices)])
        cat = (lambda parts, dtype: np.concatenate(parts) if parts else np.zeros(0, dtype=dtype))
        self.thread, self.ordinal = cat(threads, np.int64), cat(ordinals, np.int64)
        self.user, self.text = cat(users, bool), cat(texts, np.int64)
        self.texts = list(self.ids)


def text_signals(batches: Iterable[pa.RecordBatch], lexicon: Lexicon,
                 min_reply_chars: int) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """{thread: ordinals} of user frustration and of assistant repetition over the text rows `batches`."""
    rows = _Rows(batches)
    sets: dict[frozenset[str], int] = {}  # token set -> id (user texts and replies share them)
    return _frustration(rows, lexicon, sets), _repetition(rows, min_reply_chars, sets)


def _set_id(sets: dict[frozenset[str], int], s: frozenset[str]) -> int:
    return sets.setdefault(s, len(sets))


def _frustration(rows: _Rows, lexicon: Lexicon, sets: dict[frozenset[str], int]) -> dict[str, list[int]]:
    at = np.flatnonzero(rows.user)
    thread, text = rows.thread[at], rows.text[at]
    distinct = np.unique(text)
    set_of = np.full(len(rows.texts), -1, dtype=np.int64)
    human = np.zeros(len(rows.texts), dtype=bool)
    wrong = np.zeros(len(rows.texts), dtype=bool)
    for t in distinct.tolist():
        parts = clauses(rows.texts[t])
        words = clause_set(parts)
        set_of[t] = _set_id(sets, words)
        human[t] = lexicon.find("human", parts, words)
        wrong[t] = not human[t] and lexicon.find("wrong", parts, words)
    # "That is wrong" is a verdict on an answer: only after one ("This is ridiculous" opening a
    # conversation is about the order, not a reply).
    flagged = human[text] | (wrong[text] & _answered(rows)[at])
    # A user message against the one before it in its thread: each distinct pair of sets once.
    follows = thread[1:] == thread[:-1]
    before, after = set_of[text[:-1]][follows], set_of[text[1:]][follows]
    if len(before):
        by_set = list(sets)
        pairs, pair_of = np.unique(before * len(by_set) + after, return_inverse=True)
        close = np.fromiter((near(by_set[p // len(by_set)], by_set[p % len(by_set)]) for p in pairs.tolist()),
                            dtype=bool, count=len(pairs))
        flagged[1:][follows] |= close[pair_of]
    out: dict[str, list[int]] = {}
    for t, o in zip(thread[flagged].tolist(), rows.ordinal[at][flagged].tolist()):
        out.setdefault(rows.names[t], []).append(o)
    return out


def _answered(rows: _Rows) -> np.ndarray:
    """Per text row: whether a message that is not the user's comes before it in its thread.

    >>> r = _Rows([text_rows([("t", 0, "user", "a"), ("t", 1, "assistant", "b"), ("t", 2, "user", "c"),
    ...                       ("u", 0, "user", "d")]).to_batches()[0]])
    >>> _answered(r).tolist()
    [False, False, True, False]
    """
    n = len(rows.thread)
    if not n:
        return np.zeros(0, dtype=bool)
    other = (~rows.user).astype(np.int64)
    seen = np.cumsum(other) - other  # others strictly before each row, over every thread so far
    starts = np.r_[True, rows.thread[1:] != rows.thread[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    return (seen - seen[first]) > 0


def _repetition(rows: _Rows, min_reply_chars: int, sets: dict[frozenset[str], int]) -> dict[str, list[int]]:
    at = np.flatnonzero(~rows.user)
    reply_set = np.full(len(rows.texts), -1, dtype=np.int64)
    for t in np.unique(rows.text[at]).tolist():
        content = rows.texts[t]
        if len(content) >= min_reply_chars:
            s = token_set(content)
            if len(s) >= MIN_TOKENS:  # (a smaller set is never compared)
                reply_set[t] = _set_id(sets, s)
    compared = at[reply_set[rows.text[at]] >= 0]
    thread = rows.thread[compared]
    firsts, counts = np.unique(thread, return_index=True, return_counts=True)[1:]
    by_set = list(sets)
    seq = reply_set[rows.text[compared]].tolist()
    ordinals = rows.ordinal[compared].tolist()
    names = thread[firsts].tolist()
    repeats, known = Repeats(), {}  # (a thread's result is a function of its sequence of sets)
    out: dict[str, list[int]] = {}
    for name, start, count in zip(names, firsts.tolist(), counts.tolist()):
        if count < 2:
            continue
        key = tuple(seq[start:start + count])
        found = known.get(key)
        if found is None:
            found = known[key] = repeats.of([(k, by_set[s]) for k, s in enumerate(key)])
        if found:
            out[rows.names[name]] = [ordinals[start + k] for k in found]
    return out
