"""Shares and durations written one way on every page: the formats of ui.formats, not a page's own."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A table column's own printf format for a share or a span of time (streamlit's "percent" writes
#: "84.62%" beside another page's "2.7 %").
OWN_FORMAT = re.compile(r"""format=["'](percent|%[^"']*(%%|\bs))["']""")


def test_no_page_writes_shares_or_seconds_in_a_format_of_its_own():
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
             for p in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py")] if p.name != "formats.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if OWN_FORMAT.search(line)]
    assert not found, "use ui.formats.PERCENT_FORMAT / SECONDS_FORMAT:\n" + "\n".join(found)
