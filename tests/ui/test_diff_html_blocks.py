"""A diff drawn as HTML inside Markdown stays one HTML block, so its text reads as written.

CommonMark ends a raw HTML block at the first blank line; what follows is read as Markdown, where
a code fence shows the escaped text's entities (`&quot;`, `-&gt;`) as typed. A message with blank
lines and a code block must come back, parsed as HTML, exactly as it was written."""

from html.parser import HTMLParser

import pandas as pd

from ui import diffs

OLD = 'Check it:\n\n```python\nr = get("https://x/o/A-1")\nprint(r["status"])  # -> \'shipped\'\n```\n\nDone.'
NEW = OLD.replace("A-1", "A-2") + "\n\n    indented & <b>bold</b>"


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "br":
            self.parts.append("\n")

    def handle_data(self, data) -> None:
        self.parts.append(data)


def _text(html_block: str) -> str:
    parser = _Text()
    parser.feed(html_block)
    return "".join(parser.parts)


def _one_block(html_block: str) -> bool:
    return all(line.strip() for line in html_block.split("\n"))


def test_each_side_of_a_diff_is_one_html_block_reading_as_written():
    for side, expected in (("old", OLD), ("new", NEW)):
        drawn = diffs.diff_html(OLD, NEW, side)
        assert _one_block(drawn)
        assert _text(drawn) == expected


def test_plain_text_and_its_box_are_one_html_block():
    drawn = diffs.box("User · Message 1", diffs.text_html(NEW), diffs.COLOURS["same"])
    assert _one_block(drawn)
    assert _text(drawn).endswith(NEW)


def test_the_edit_log_table_is_one_html_block():
    edits = pd.DataFrame([{"ts": pd.Timestamp("2025-01-24 00:35:00", tz="UTC"), "event": "edited", "role": "ai",
                           "ordinal": 5, "before_ordinal": None, "old_content": OLD, "new_content": NEW,
                           "source": "operator", "branch": 0}])
    drawn = diffs.edit_log_html(edits)
    assert _one_block(drawn)
    assert 'r["status"]' in _text(drawn)
