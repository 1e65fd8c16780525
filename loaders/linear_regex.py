"""User-supplied regular expressions, run by RE2: time linear in the text, whatever the pattern.

Python's `re` backtracks: a typed pattern such as `^(?P<session>(\\w|\\W|.)*)XYZ$`
takes exponential time on a thread id that does not end in `XYZ`. A pattern a user
types (the thread-key pattern of a load) is compiled here by RE2 (the `google-re2`
binding; DuckDB's search runs on RE2 too), which never backtracks. RE2 refuses what it
cannot run in linear time (backreferences, lookaround): `compile_linear` turns that into
a `ValueError` of one line. RE2's `\\w`, `\\d` and `\\b` are ASCII; `.` matches newlines.

>>> rx = compile_linear(r"^(?P<tenant>[^:]*):(?P<session>.*)$", "thread-key pattern")
>>> rx.groupindex, rx.groups("acme:s1"), rx.groups("s1")
({'session': 2, 'tenant': 1}, {'tenant': 'acme', 'session': 's1'}, None)
>>> compile_linear(r"(a)\\1", "thread-key pattern")
Traceback (most recent call last):
...
ValueError: invalid thread-key pattern '(a)\\\\1': RE2 (linear-time matching) cannot run it: invalid escape sequence: \\1
"""

from __future__ import annotations


class LinearRegex:
    """A compiled RE2 pattern: `groups(text)` is the named groups of a match at the start
    of `text` (None for a group that did not take part), or None when it does not match."""

    __slots__ = ("pattern", "groupindex", "_match", "_anchor", "_names")

    def __init__(self, pattern: str, regexp, anchor, groupindex: dict[str, int]) -> None:
        self.pattern = pattern
        self.groupindex = dict(groupindex)
        self._match = regexp.Match
        self._anchor = anchor
        self._names = sorted(self.groupindex.items(), key=lambda kv: kv[1])

    def groups(self, text: str) -> dict[str, str | None] | None:
        raw = text.encode("utf-8", "surrogatepass")
        spans = self._match(self._anchor, raw, 0, len(raw))
        if spans[0][0] < 0:
            return None
        return {name: None if spans[i][0] < 0 else raw[spans[i][0]:spans[i][1]].decode("utf-8", "surrogatepass")
                for name, i in self._names}


class BuiltinRegex:
    """A pattern of this project's own, run by Python's `re` (about five times faster than
    the RE2 binding per short text): only for patterns written to match in linear time
    (no nested or adjacent unbounded repeats), never for one a user typed."""

    __slots__ = ("pattern", "groupindex", "_match")

    def __init__(self, pattern: str) -> None:
        import re

        compiled = re.compile(pattern, re.DOTALL)
        self.pattern, self.groupindex, self._match = pattern, dict(compiled.groupindex), compiled.match

    def groups(self, text: str) -> dict[str, str | None] | None:
        m = self._match(text)
        return None if m is None else m.groupdict()


def compile_linear(pattern: str, what: str) -> LinearRegex:
    """`pattern` compiled by RE2 (`.` matches newlines); `ValueError` naming `what` when RE2 cannot take it."""
    try:
        import re2
    except ImportError:  # pragma: no cover - google-re2 is a requirement
        raise ValueError(f"a {what} needs the google-re2 package (pip install google-re2)") from None
    options = re2.Options()
    options.log_errors = False  # (its errors are raised, not logged to stderr)
    options.dot_nl = True
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(f"invalid {what} {pattern!r}: RE2 (linear-time matching) cannot run it: {reason}") from None
    return LinearRegex(pattern, compiled._regexp, re2._Anchor.ANCHOR_START, compiled.groupindex)
