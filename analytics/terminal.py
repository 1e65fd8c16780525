"""What the command line prints reaches a terminal with its control characters shown, not run.

Store text is anyone's: a message holding `ESC ] 0 ; … BEL` sets the terminal's title,
`ESC [ 2 J` clears the screen, a carriage return or `ESC [ 1 A` writes over the lines
above, and a bidi override (U+202E) shows text in an order it is not stored in. Every
command of the analytics CLI prints through `visible_output` (`analytics.cli`): each
control character — C0 but the line feed and the tab, DEL, C1 — and each bidi embedding,
override or isolate (U+202A–U+202E, U+2066–U+2069) is written as a visible escape
(`\\x1b`, `\\u202e`). A document printed for a program (`--format csv` or `json`, a report
on stdout: `document_output`) is written as it is when stdout is not a terminal (a file
or a pipe keeps the data; JSON escapes control characters itself), and shown escaped
when it is one.

>>> visible("title\\x1b]0;pwned\\x07 \\u202eevil\\r\\tok\\n")
'title\\\\x1b]0;pwned\\\\x07 \\\\u202eevil\\\\x0d\\tok\\n'
"""

from __future__ import annotations

import codecs
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: The characters a terminal acts on rather than shows.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character written as a visible escape."""
    return CONTROL.sub(_escape, text)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class TextWrapper:
    """A text stream written through to `inner` (`write` says how); the inner stream answers the rest."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._inner.flush()

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


class _VisibleStream(TextWrapper):
    """A text stream that writes control characters as escapes (a document to a file or pipe:
    as it is, `document_output`)."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.document = False
        self.buffer = _VisibleBytes(self)

    def raw(self) -> bool:
        return self.document and not _isatty(self._inner)

    def write(self, s: str) -> int:
        self._inner.write(s if self.raw() else visible(s))
        return len(s)


class _VisibleBytes:
    """The stream's `buffer`: bytes are UTF-8 text, escaped as text is (decoded incrementally:
    a character cut between two writes stays whole); a document's bytes to a file or pipe as they are."""

    def __init__(self, stream: _VisibleStream) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def write(self, data: bytes) -> int:
        inner = getattr(self._stream._inner, "buffer", None)
        if self._stream.raw() and inner is not None:
            self._stream.flush()
            return inner.write(data)
        self._stream.write(self._decoder.decode(bytes(data)))
        return len(data)

    def flush(self) -> None:
        self._stream.flush()


_stdout: list[_VisibleStream] = []


@contextmanager
def visible_output() -> Iterator[None]:
    """Inside the block, stdout and stderr write control characters as visible escapes."""
    saved = sys.stdout, sys.stderr
    out, err = _VisibleStream(sys.stdout), _VisibleStream(sys.stderr)
    sys.stdout, sys.stderr = out, err
    _stdout.append(out)
    try:
        yield
    finally:
        _stdout.pop()
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = saved


@contextmanager
def document_output() -> Iterator[None]:
    """Inside the block, stdout prints a document for a program (CSV, JSON): as it is to a file
    or a pipe, escaped to a terminal.

    >>> with document_output(): print("no visible stream, no change")
    no visible stream, no change
    """
    if not _stdout:
        yield
        return
    stream = _stdout[-1]
    stream.document = True
    try:
        yield
    finally:
        stream.document = False
