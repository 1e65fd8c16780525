"""Text from the data drawn as Markdown without the browser fetching anything it names.

Three layers (docs/security.md, "Rendering"):

- `code(value)` and `text(value)`: a value from the data or the URL (a thread id, a tenant, a
  label, an error naming either) placed into a page's own Markdown. `code` draws it as an inline
  code span whose fence is longer than any backtick run in it, so nothing in it is Markdown;
  `text` backslash-escapes every character that can start Markdown syntax, so it reads as typed
  and forms no image, link, emphasis or Streamlit directive. Every f-string that puts such a value into
  `st.markdown`, `st.caption`, `st.warning`, `st.subheader`, ... goes through one of them.
- `inert(text)`: Markdown whose images cannot form. Every image, inline (`![i](url)`) or by
  reference (`![i][ref]`), starts with `![`; a WORD JOINER (U+2060, invisible) between the two
  makes it a `!` and a link: the URL is shown (as a link's target) and never requested. Raw HTML
  stays off (`st.markdown`'s default: it is drawn as text). Links are links: nothing follows one
  until a reader clicks it, and Streamlit opens it in a new tab with `rel="noopener noreferrer"`.
- `no_remote_images()`: a Content-Security-Policy for the page (`img-src 'self' data: blob:`), so
  an image from anywhere else is blocked by the browser itself, whatever element draws it.

>>> inert("see ![i](http://host/beacon) and ![x][r]")
'see !\\u2060[i](http://host/beacon) and !\\u2060[x][r]'
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import streamlit as st

from ui.escape import code, text  # noqa: F401  (the one way a value enters Markdown)

_JOINER = "\u2060"
_POLICY = "img-src 'self' data: blob:"


def inert(text: str) -> str:
    """`text` as Markdown in which no image can form (module docstring)."""
    return text.replace("![", "!" + _JOINER + "[")


def as_written(text: str) -> str:
    """A message's own text as Markdown: `inert`, and none of Streamlit's additions to Markdown
    forms from it: an emoji shortcode Streamlit draws (`root:x:0` would show a cross), a material
    icon (`:material/home:`), a colour or size directive (`:red[…]`, `:small[…]`). A WORD JOINER
    after the colon that opens one leaves it text; any other colon (`acme:web:s1`, `12:30:45`)
    is left alone.

    >>> as_written("root:x:0 :red[hot] acme:web:s1") == "root:" + _JOINER + "x:0 :" + _JOINER + "red[hot] acme:web:s1"
    True
    """
    return _DIRECTIVE.sub(_opened, inert(text))


def _opened(match: re.Match) -> str:
    name, closed = match.group(1), match.group(2) == ":"
    if closed:
        opens = name in _shortcodes() or name.startswith("material/")
    else:
        opens = name == "small" or name.removesuffix("-background").removesuffix("-badge") in _COLOURS
    return ":" + _JOINER + match.group(0)[1:] if opens else match.group(0)


# A colon, a name, then `:` (a shortcode, an icon) or `[` (a colour or size directive).
_DIRECTIVE = re.compile(r":([A-Za-z0-9_+-]+|material/[A-Za-z0-9_]+)(?=(:)|\[)")
_COLOURS = {"red", "orange", "yellow", "green", "blue", "violet", "gray", "grey", "rainbow", "primary"}


@functools.cache
def _shortcodes() -> frozenset[str]:
    """The emoji shortcodes Streamlit draws (`ui/emoji_shortcodes.txt`, scripts/emoji_shortcodes.py)."""
    return frozenset((Path(__file__).with_name("emoji_shortcodes.txt")).read_text(encoding="utf-8").split())


# The icon-only buttons (keys `rv.….add`, `rv.….edit.…`): their label names them to a screen
# reader and the browser (a glyph's ligature is no name); on screen only the icon shows.
_ICON_BUTTONS = ", ".join(
    f'.stElementContainer[class*="st-key-rv-"][class*="{part}"] button [data-testid="stMarkdownContainer"]'
    for part in ("-add", "-edit-"))
_VISUALLY_HIDDEN = ("position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;"
                    " clip: rect(0 0 0 0); white-space: nowrap; border: 0;")


#: The key prefix of a message's header line holding a control (`ui.chat`): a row that never
#: wraps, so the control stays at the end of the header's line and a header longer than the
#: row wraps its own text beside it (a horizontal container wraps its items, and a header as
#: wide as the row pushed the control under it, in a 1000 px window).
HEADER_LINE = "tl-head-"
HEADER_LINES = (f'[data-testid="stHorizontalBlock"][class*="st-key-{HEADER_LINE}"] {{ flex-wrap: nowrap; }} '
                f'[data-testid="stHorizontalBlock"][class*="st-key-{HEADER_LINE}"] > :first-child {{ min-width: 0; }}')


def icon_buttons() -> None:
    """Style the icon-only buttons of every page (`_ICON_BUTTONS`): labelled, the label not shown,
    and kept at the end of their header's line (`HEADER_LINES`)."""
    st.html(f"<style>{_ICON_BUTTONS} {{ {_VISUALLY_HIDDEN} }} {HEADER_LINES}</style>")


def markdown(text: str) -> None:
    """`st.markdown` of text that holds data."""
    st.markdown(inert(text))


def message(text: str) -> None:
    """`st.markdown` of a message's own text (`as_written`)."""
    st.markdown(as_written(text))


def line_breaks(text: str) -> str:
    """`text` with each single line break a Markdown hard break (two spaces before it), so a
    message reads as it was typed: Markdown joins the lines of a paragraph otherwise. Blank
    lines stay paragraph breaks; in a code block the two spaces are invisible.

    >>> line_breaks("Hi,\\nline two\\n\\nnew paragraph")
    'Hi,  \\nline two\\n\\nnew paragraph'
    """
    return _SINGLE_BREAK.sub("  \n", text.replace("\r\n", "\n"))


_SINGLE_BREAK = re.compile(r"(?<!\n)\n(?!\n)")


def caption(text: str) -> None:
    """`st.caption` of text that holds data."""
    st.caption(inert(text))


def no_remote_images() -> None:
    """Put the page's image policy in its head, once per page (a `<meta>` the browser enforces from
    the moment it is inserted: run first, before anything from the data is drawn)."""
    st.html(
        "<script>(function () { if (document.querySelector('meta[data-tl-csp]')) return;"
        " const m = document.createElement('meta'); m.httpEquiv = 'Content-Security-Policy';"
        f" m.content = \"{_POLICY}\"; m.setAttribute('data-tl-csp', '1');"
        " document.head.prepend(m); })();</script>",
        unsafe_allow_javascript=True,
    )
