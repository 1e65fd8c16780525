"""A value from the data or the URL as a piece of Markdown that forms nothing (no Streamlit: page
models use it too). `code` draws it as an inline code span, `text` as escaped text; `ui.markup`
says why (docs/security.md, "Rendering").
"""

from __future__ import annotations

import re


def code(value: object) -> str:
    """`value` as an inline code span: nothing in it can close the span (its fence is one backtick
    longer than its longest backtick run) or end the paragraph (line breaks become spaces).

    >>> code("a`b")
    '``a`b``'
    >>> code("x` ![u](http://h/p.png) `")
    '`` x` ![u](http://h/p.png) ` ``'
    """
    s = _BREAKS.sub(" ", str(value))
    if not s.strip():
        return "` `" if not s else "`" + s + "`"
    fence = "`" * (max((len(run) for run in _TICKS.findall(s)), default=0) + 1)
    pad = " " if s[0] in "` " or s[-1] in "` " else ""  # CommonMark strips one space each side
    return f"{fence}{pad}{s}{pad}{fence}"


def text(value: object) -> str:
    r"""`value` as Markdown text that reads as typed: every character that can start Markdown syntax
    escaped (no image, link, HTML, entity, emphasis, table, math or `:directive[...]` can form;
    an `_` inside a word, which forms nothing, stays), a list or heading marker at its start too,
    and line breaks spaces (it cannot start a block of its own).

    >>> print(text("*x* ![u](h.png) snake_case _y_ ana@acme.com"))
    \*x\* \!\[u\](h.png) snake_case \_y\_ ana@acme.com
    >>> print(text("1. # - not a list"))
    1\. \# - not a list
    """
    escaped = _SYNTAX.sub(r"\\\g<0>", _BREAKS.sub(" ", str(value)))
    return _LEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped, count=1)


_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_TICKS = re.compile(r"`+")
_SYNTAX = re.compile(r"[\\`*\[\]<>!|~$&{}#]|(?<!\w)_|_(?!\w)")
_LEADING = re.compile(r"^(\s*(?:\d{1,9})?)([-+=.)])")
