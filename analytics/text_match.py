"""How a text is found in a message, one rule for every text question (search, the "text in
messages" thread filter, the thread picker): a case-insensitive regular expression that
DuckDB's RE2 and Python's `re` read alike.

Unicode simple case folding ("ÄRGER" finds "ärger", "ΣΊΣΥΦΟΣ" finds "Σίσυφος" with its
final ς, "STRAẞE" finds "straße"), a Turkish dotted capital İ as i, and both the composed
(NFC) and the decomposed (NFD) spelling of accented letters ("é" typed finds "e" +
combining accent). Every character typed is literal (`%`, `_`, `.` and `*` mean
themselves).

>>> print(pattern("Straße (1.5)"))
(?i)(?:Straße \\(1\\.5\\))
>>> import re
>>> bool(re.search(pattern("ΣΊΣΥΦΟΣ"), "Ο Σίσυφος"))
True
"""

from __future__ import annotations

import functools
import unicodedata

#: Characters of text kept on each side of the match in a snippet.
SNIPPET_CONTEXT = 80
_SPECIAL = set("\\.^$|?*+()[]{}")
_DOTTED_I = "[iIİ]"  # İ lower-cases to i (DuckDB, Turkish); case folding alone does not pair them


def spellings(text: str) -> list[str]:
    """The forms of `text` a stored message may use: NFC, and NFD when it differs.

    >>> [len(s) for s in spellings("é")]
    [1, 2]
    """
    nfc = unicodedata.normalize("NFC", text)
    nfd = unicodedata.normalize("NFD", nfc)
    return [nfc] if nfd == nfc else [nfc, nfd]


def pattern(text: str) -> str:
    """The case-insensitive regular expression that finds `text` (RE2 in DuckDB and in snippets, `re` alike).

    >>> print(pattern("İzmir"))
    (?i)(?:[iIİ]zm[iIİ]r|[iIİ]\u0307zm[iIİ]r)
    >>> [len(p) for p in pattern("é")[7:-1].split("|")]  # é composed, then e + accent
    [1, 2]
    """
    def literal(spelling: str) -> str:
        return "".join(_DOTTED_I if c in "iIİ" else "\\" + c if c in _SPECIAL else c for c in spelling)

    return "(?i)(?:" + "|".join(literal(s) for s in spellings(text)) + ")"


def contains_sql(column: str) -> str:
    """SQL: `column` contains the text whose `pattern` is bound to both placeholders
    (`contains_params`): as stored, then as the connection's search sees it — on a connection
    that masks personal data, with every stretch that may hold a personal value a barrier
    (`analytics.masking.searchable_sql`): no match inside a masked value, whole or partial.
    The first test keeps the second to the messages that match at all.

    >>> contains_sql("m.content").startswith("(regexp_matches(m.content, ?) AND (NOT getvariable(")
    True
    """
    from analytics.masking import BLIND_SQL, searchable_sql

    return f"(regexp_matches({column}, ?) AND (NOT {BLIND_SQL} OR regexp_matches({searchable_sql(column)}, ?)))"


#: The SQL function a masking search reads each text through: every stretch the masking detector's
#: view of it (`analytics.reader_view`: escapes read, digits of every script made ASCII, invisible
#: characters dropped) holds of the search barrier or of a configured term made one NUL character
#: (`analytics.masking.blinded`), so the barrier sees every spelling masking reads as personal data.
#: Registered on every connection the query layer opens or is given (`analytics.db`), so the SQL
#: binds, masking or not.
BLIND_FUNCTION = "tl_blind"


def _blind(texts):
    from analytics.masking import blinder

    import pyarrow as pa  # (only a masking search gets here)

    blinded = blinder()
    return pa.array([blinded(t) if t else t for t in texts.to_pylist()], pa.string())


def register_search_functions(con) -> None:
    """Register `BLIND_FUNCTION` on `con` (once per database instance: its cursors share it).

    >>> import duckdb; con = duckdb.connect(); register_search_functions(con); register_search_functions(con)
    >>> con.execute(f"SELECT {BLIND_FUNCTION}('Alice'), {BLIND_FUNCTION}('ask alice=40example.com')").fetchall()
    [('Alice', 'ask \\x00')]
    """
    import duckdb

    try:
        con.create_function(BLIND_FUNCTION, _blind, ["VARCHAR"], "VARCHAR", type="arrow", side_effects=False)
    except (duckdb.NotImplementedException, duckdb.CatalogException):
        pass  # (registered on this connection or another cursor of its database already)
    except duckdb.ResourceInUseException:
        # A caller's connection holding an unread result refuses a registration; one opened by
        # `analytics.db.connect` has the function already, and the result stays the caller's.
        pass


def contains_params(text: str) -> list[str]:
    """The parameters of `contains_sql` for `text`.

    >>> contains_params("Refund")
    ['(?i)(?:Refund)', '(?i)(?:Refund)']
    """
    expression = pattern(text)
    return [expression, expression]


@functools.lru_cache(maxsize=64)
def _linear(needle: str):
    """`pattern(needle)` compiled by RE2, which finds it in time linear in the text (Python's `re`
    takes time of the text times the needle on a long near-match: 3.8 s for a 1 MB message of
    `a`s and a 500-character `aaa…b`; RE2 0.01 s); memory for its DFA past a long needle's states."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    return re2.compile(pattern(needle), options)


def snippet(text: str | None, needle: str, context: int = SNIPPET_CONTEXT) -> tuple[str, int | None, int | None]:
    """The part of `text` around the first match of `needle` (as a search matches it): (snippet,
    start, end), start/end within the snippet; (the opening of `text`, None, None) when none.

    >>> snippet("Hello, I would like a REFUND for my order", "refund", context=8)
    ('… like a REFUND for my …', 9, 15)
    """
    if not text:
        return "", None, None
    found = _linear(needle).search(text)
    if found is None:
        cut = text[: 2 * context]
        return cut + ("…" if len(text) > len(cut) else ""), None, None
    at, end = found.span()
    lo, hi = max(0, at - context), min(len(text), end + context)
    head, tail = ("…" if lo > 0 else ""), ("…" if hi < len(text) else "")
    return head + text[lo:hi] + tail, at - lo + len(head), end - lo + len(head)
