"""A message's text drawn as Markdown shows Streamlit's own Markdown additions as typed: an emoji
shortcode Streamlit draws, a material icon, a colour, size or badge directive (`ui.markup.as_written`);
any other colon is left alone (thread ids, times)."""

from __future__ import annotations

import re

import pytest

from ui.markup import as_written

# Streamlit's grammar for them: a colon, a name, then `:` (shortcode, icon) or `[` (directive).
SHORTCODE = re.compile(r":([A-Za-z0-9_+-]+|material/[A-Za-z0-9_]+):")
DIRECTIVE = re.compile(r":(?:red|orange|yellow|green|blue|violet|gray|grey|rainbow|primary|small)(?:-background|-badge)?\[")
EMOJI = {"x", "smile", "+1", "100", "thumbsup", "white_check_mark"}

PAYLOADS = ["root:x:0:0:root:/root:/bin/bash", ":red[urgent] and :blue-background[note]", "see :material/home: here",
            ":smile::+1::100:", ":small[fine print]", "a :rainbow-badge[x] b", "done :white_check_mark:"]


@pytest.mark.parametrize("text", PAYLOADS)
def test_no_streamlit_addition_forms_and_the_text_reads_as_typed(text):
    drawn = as_written(text)
    formed = [m.group(1) for m in SHORTCODE.finditer(drawn) if m.group(1) in EMOJI or m.group(1).startswith("material/")]
    assert not formed and not DIRECTIVE.search(drawn), drawn
    assert drawn.replace("\u2060", "") == text


@pytest.mark.parametrize("text", ["acme:web:sess-1008", "12:30:45", "http://host/a:b", "Note: see: this", "x:1[2]",
                                  "key:value:other", "a:red:b"])
def test_thread_ids_times_addresses_and_prose_are_left_as_they_are(text):
    assert as_written(text) == text


def test_the_shortcode_list_is_the_installed_streamlits():
    from scripts.emoji_shortcodes import OUT, shortcodes

    assert OUT.read_text(encoding="utf-8").split() == shortcodes()
