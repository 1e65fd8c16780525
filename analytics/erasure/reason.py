"""What an erasure keeps of a reason: the request as given, without the erased threads' text.

The reason (`--reason`) is stored in the tombstone and in the erasure log, both in the review
workspace, which the erasure's scan reads. A reason quoting the erased thread ("asked by
alice@example.com", an e-mail its metadata carries) would keep on disk what the erasure
removes. So before it is written (`masked_reason`), each stretch of the reason that is the
erased threads' text is replaced by `<erased>`: at each position, the longest stretch an erased
thread says (in any case: its messages' text and tool calls, its checkpoint metadata,
`analytics.erasure.said`), when it is `SHORTEST` characters or more and no kept thread says it —
the rule the scan's text windows follow (`analytics.erasure.scan`). Any distinctive quote is
inside such a longest stretch, and a stretch a kept thread says holds no distinctive part.

The reasons already in the workspace (an earlier erasure's or lift's, written when a thread
erased now was kept) are rid of the scan's windows by each erasure (`scrub_reasons`, in
the workspace purge's transaction).

>>> replaced_within("asked by Alice@X.org, twice", ("alice@x.org",))
('asked by <erased>, twice', 1)
"""

from __future__ import annotations

import os
import re
import sqlite3

import duckdb

from analytics.erasure.exports import ERASED, inside
from analytics.erasure.said import said_sql
from analytics.erasure.triggers import unguarded
from analytics.reader_view import view

#: The fewest characters a stretch of a reason has to be erased text (the scan's `SHORTEST`).
SHORTEST = 8


def _fold(text: str) -> str:
    """`text` in lower case, character for character (a character whose lower case is longer stays)."""
    lower = text.lower()
    if len(lower) == len(text):  # (no character's lower case is longer: the same, character for character)
        return lower
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _word_span(text: str, a: int, b: int) -> tuple[int, int]:
    """The stretch `text[a:b]` without the spaces and punctuation at its ends: what `ERASED`
    replaces, so the words around it keep their spaces (`asked by <erased> today`)."""
    while a < b and not text[a].isalnum():
        a += 1
    while b > a and not text[b - 1].isalnum():
        b -= 1
    return a, b


def _erased(match: re.Match) -> str:
    a, b = _word_span(match.string, match.start(), match.end())
    return match.string[match.start():a] + (ERASED if a < b else "") + match.string[b:match.end()]


def replaced_within(text: str, texts: tuple[str, ...]) -> tuple[str, int]:
    """`text` with each occurrence (in any case) of one of `texts` replaced by `ERASED`, the
    spaces and punctuation at its ends kept; how many.

    >>> replaced_within("a window: asked by alice, today", (" alice, ",))
    ('a window: asked by <erased>, today', 1)
    """
    pattern = inside(texts)
    return pattern.subn(_erased, text) if text and pattern is not None else (text, 0)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _longest_said(con: duckdb.DuckDBPyConnection, folded: list[str]) -> dict[tuple[int, int], int]:
    """{(text, start): length} of the longest stretch at each start of each of `folded` that the
    text in the temp table `erased_said` holds, where it is `SHORTEST` characters or more: a binary
    search on the length, every start of every text at once, one query a round (a stretch held
    means every shorter one at its start is)."""
    def held(pieces: dict[tuple[int, int], str]) -> set[tuple[int, int]]:
        if not pieces:
            return set()
        found = {w for (w,) in con.execute(
            "SELECT w FROM unnest(?::VARCHAR[]) AS t(w) "
            "WHERE EXISTS (SELECT 1 FROM erased_said s WHERE contains(s.said, w))",
            [sorted(set(pieces.values()))]).fetchall()}
        return {at for at, w in pieces.items() if w in found}

    low = dict.fromkeys(held({(k, i): text[i:i + SHORTEST] for k, text in enumerate(folded)
                              for i in range(len(text) - SHORTEST + 1)}), SHORTEST)
    # A stretch held holds each of its `SHORTEST`-character pieces: it ends before the first piece not held.
    high: dict[tuple[int, int], int] = {}
    for k, text in enumerate(folded):
        end = len(text)
        for i in reversed(range(len(text) - SHORTEST + 1)):
            if (k, i) not in low:
                end = i + SHORTEST - 1
            else:
                high[k, i] = end - i
    while any(low[at] < high[at] for at in low):
        mid = {at: (low[at] + high[at] + 1) // 2 for at in low if low[at] < high[at]}
        yes = held({(k, i): folded[k][i:i + m] for (k, i), m in mid.items()})
        for at, m in mid.items():
            if at in yes:
                low[at] = m
            else:
                high[at] = m - 1
    return low


def masked_reason(db: str | os.PathLike | None, thread_ids: list[str], reason: str,
                  needles: tuple[str, ...] = ()) -> tuple[str, int]:
    """`reason` with each stretch of it that is the erased threads' text replaced by `ERASED`
    (the module's rule; read from the DuckDB database at `db` before the erasure), and any of the
    scan's `needles` left; how many stretches were replaced."""
    return masked_texts(db, thread_ids, [reason], needles)[0]


def masked_texts(db: str | os.PathLike | None, thread_ids: list[str], texts: list[str],
                 needles: tuple[str, ...] = (), quoted: set[str] | None = None) -> list[tuple[str, int]]:
    """`masked_reason` of each of `texts` (read through one connection): [(masked, stretches replaced)].
    Each text is read as a reader sees it (`analytics.reader_view.view`: zero-width characters
    every few letters, escapes, hide no quote); each stretch replaced is added to `quoted`."""
    spans: list[list[tuple[int, int]]] = [[] for _ in texts]
    if db is not None and thread_ids and any(len(t) >= SHORTEST for t in texts):
        con = duckdb.connect()
        try:
            con.execute("ATTACH ? AS src (READ_ONLY)", [str(db)])
            said = said_sql(con, "src")
            if said is not None:
                con.execute("CREATE TEMP TABLE erased (thread_id VARCHAR)")
                con.execute("INSERT INTO erased SELECT DISTINCT unnest(?::VARCHAR[])", [list(thread_ids)])
                # The erased threads' text, kept for the search's rounds; the kept threads' is read once, below.
                con.execute(f"CREATE TEMP TABLE erased_said AS SELECT DISTINCT lower(said) AS said FROM ({said}) "
                            "SEMI JOIN erased USING (thread_id) WHERE said IS NOT NULL")
                chosen = {k: view(text) for k, text in enumerate(texts) if len(text) >= SHORTEST}
                found = _erased_spans(con, said, [_fold(seen) for seen, _ in chosen.values()])
                for (k, (_, where)), stretches in zip(chosen.items(), found):
                    spans[k] = [_in_text(a, b, where, len(texts[k])) for a, b in stretches]
        finally:
            con.close()
    out = []
    for text, found in zip(texts, spans):
        parts, at = [], 0
        for a, b in _merged(found):
            a, b = _word_span(text, a, b)
            if quoted is not None and a < b:
                quoted.add(text[a:b])
            parts += [text[at:a], ERASED if a < b else ""]
            at = max(at, b)
        masked, more = replaced_within("".join(parts) + text[at:], needles)
        out.append((masked, len(_merged(found)) + more))
    return out


def _in_text(a: int, b: int, where: list[int] | None, size: int) -> tuple[int, int]:
    """A stretch of the view as the stretch of the text it was read from (the characters hidden in it go with it)."""
    if where is None:
        return a, b
    return where[a], where[b] if b < len(where) else size


def _erased_spans(con: duckdb.DuckDBPyConnection, said: str, folded: list[str]) -> list[list[tuple[int, int]]]:
    """The stretches of each of `folded` the module's rule replaces: [[(start, end), …], …]."""
    longest = _longest_said(con, folded)
    # Only a stretch that ends past the one before it can be distinctive on its own
    # (one that ends with it is inside it, and said wherever it is).
    ends: dict[tuple[int, int], int] = {}
    last: dict[int, int] = {}
    for k, i in sorted(longest):
        if i + longest[k, i] > last.get(k, -1):
            ends[k, i] = last[k] = i + longest[k, i]
    pieces = {(k, i): folded[k][i:j] for (k, i), j in ends.items()}
    kept = {w for (w,) in con.execute(
        f"WITH said AS ({said}) SELECT w FROM unnest(?::VARCHAR[]) AS t(w) WHERE EXISTS (SELECT 1 FROM said s "
        "WHERE contains(lower(s.said), w) AND (s.thread_id IS NULL OR s.thread_id NOT IN "
        "(SELECT thread_id FROM erased)))", [sorted(set(pieces.values()))]).fetchall()} if pieces else set()
    out: list[list[tuple[int, int]]] = [[] for _ in folded]
    for (k, i), w in pieces.items():
        if w not in kept:
            out[k].append((i, ends[k, i]))
    return out


def scrub_reasons(conn: sqlite3.Connection, texts: tuple[str, ...]) -> int:
    """Replace `texts` (the scan's windows) in the reasons of the tombstones and of the erasure
    log in the workspace on `conn`, inside the caller's transaction; how many rows changed. Both
    refuse updates (their triggers): each is written `unguarded`."""
    changed = 0
    for table, key, trigger in (("tombstones", "tombstone_id", "tombstones_lift_once"),
                                ("erasure_log", "entry_id", "erasure_log_no_update")):
        rows = []
        for row_id, reason in conn.execute(f"SELECT {key}, reason FROM {table} WHERE reason IS NOT NULL"):
            new, n = replaced_within(reason, texts)
            if n:
                rows.append((new, row_id))
        if not rows:
            continue
        with unguarded(conn, trigger):
            conn.executemany(f"UPDATE {table} SET reason = ? WHERE {key} = ?", rows)
        changed += len(rows)
    return changed
