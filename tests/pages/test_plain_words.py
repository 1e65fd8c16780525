"""What a page says to its reader is in their words: no stored field names ("ts", "usage_metadata",
"response_metadata") and no repository paths ("docs/…md", a file an app user cannot open)."""

from __future__ import annotations

import re

import pytest

from tests.pages.conftest import captions, open_page

#: Words of the store or the repository, not of the reader.
_JARGON = re.compile(r"\bts\b|usage_metadata|response_metadata|docs/\w+\.md")


def _said(at) -> list[str]:
    """The page's captions, and the help of its metrics and widgets."""
    helps = [m.help for m in at.metric] + [w.help for kind in ("selectbox", "radio", "file_uploader")
                                           for w in at.get(kind) if getattr(w, "help", None)]
    return captions(at) + [h for h in helps if h]


@pytest.mark.parametrize(("page", "params"), [
    ("overview", {}), ("overview", {"trend": "tokens"}), ("overview", {"trend": "latency"}),
    ("conversations", {}), ("outcomes", {}), ("topics", {}), ("patterns", {}), ("compare", {}),
])
def test_a_page_speaks_without_field_names_or_file_paths(app, page, params):
    at = open_page(app, page, **params)
    said = _said(at)
    assert said and not [s for s in said if _JARGON.search(s)]
