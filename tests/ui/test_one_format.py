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


#: A count written straight before a plural noun ("1 conversations"): ui.formats.plural says
#: "1 conversation". A count that is always over one (past a cap) may stay as it is.
BARE_COUNT = re.compile(r"\{[^{}]*(:,)?\}\s+(conversations|messages|threads|rows|hits|tenants|annotations|patterns|topics)\b")
ALWAYS_MANY = ("Showing the first",)


def test_counts_before_a_noun_go_through_plural():
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
             for p in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("ui/models/*.py")]
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if BARE_COUNT.search(line) and not any(s in line for s in ALWAYS_MANY)]
    assert not found, "write counts with ui.formats.plural:\n" + "\n".join(found)


#: A plural made on the spot ("annotation{'s' if n > 1 else ''}", which writes "0 annotation"), or a
#: count before a phrase ending in a plural ("1 user → assistant pairs").
AD_HOC_PLURAL = re.compile(r"""\{\s*['"](s|es|ies)['"]\s+if\b|\{[^{}]*\}\s+(user → assistant |user→assistant )?pairs\b""")


def test_plurals_are_made_by_plural_only():
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
             for p in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("ui/models/*.py")]
             for i, line in enumerate(p.read_text().splitlines(), 1) if AD_HOC_PLURAL.search(line)]
    assert not found, "write counts with ui.formats.plural:\n" + "\n".join(found)
