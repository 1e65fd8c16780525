"""Message text drawn as Markdown shows Streamlit's own Markdown additions as typed: an emoji
shortcode, a material icon, a colour, size or badge directive (`ui.markup.inert`)."""

from __future__ import annotations

import re

import pytest

from ui.markup import inert

# Streamlit's grammar for them: a colon, a letter, a name, then `:` (shortcode, icon) or `[` (directive).
STREAMLIT_DIRECTIVE = re.compile(r":[A-Za-z][A-Za-z0-9_+/-]*[:\[]")

PAYLOADS = ["root:x:0:0:root:/root:/bin/bash", ":red[urgent] and :blue-background[note]", "see :material/home: here",
            ":smile::+1::thumbsup:", ":small[fine print]", "a :rainbow-badge[x] b", "ratio a:b:c"]


@pytest.mark.parametrize("text", PAYLOADS)
def test_no_streamlit_directive_forms_and_the_text_reads_as_typed(text):
    drawn = inert(text)
    assert STREAMLIT_DIRECTIVE.search(drawn) is None, drawn
    assert drawn.replace("\u2060", "") == text


@pytest.mark.parametrize("text", ["12:30:45", "http://host/a:b", "Note: see: this", "a : b", "x:1[2]"])
def test_times_addresses_and_prose_are_left_as_they_are(text):
    assert inert(text) == text
