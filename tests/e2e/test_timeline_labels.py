"""End to end: the Resume QA timeline's words can be read, in Debian's Chromium through Playwright.

The chart is the app's (`ui.charts.resume_timeline` of `ui.models.resume_qa.thread_qa`), drawn by
Streamlit's ECharts as SVG (the app draws it on a canvas: the same layout, but no text to read
back) for a thread written by the real agent graph that runs past midnight and resumes often: at
a one-minute idle gap its resume points lie seconds apart.
"""

from __future__ import annotations

import datetime as dt
import os
import re

import pytest

import transcript_lens
from tests.analytics.outcomes.stores import Script, User, write_store
from tests.e2e.util import ROOT, app_server, chromium, require_chromium, settle
from storegen import Reply

require_chromium()

THREAD = "acme:web:late"
#: The user's messages: (seconds after the one before, text); the first at 23:20 UTC.
TURNS = [(0, "Where is my order A-1043?"), (75, "It was due yesterday"), (80, "Any news?"), (2400, "Still nothing"),
         (70, "Hello?"), (90, "Can you check again?"), (1900, "Thanks, it arrived")]

_SCRIPT = """
import streamlit as st
from ui import charts
from ui.models.resume_qa import thread_qa

qa = thread_qa({db!r}, {thread!r}, gap_minutes=1.0)
option = charts.resume_timeline(qa.timeline, qa.markers)
st.echarts_chart(option, height=charts.height(option), renderer="svg", key="timeline")
"""

#: Every text the chart draws: its words and its box on the page.
_TEXTS = """() => [...document.querySelectorAll('[data-testid="stEChartsChart"] svg text')].map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
}).filter(t => t.text.trim())"""


@pytest.fixture(scope="module")
def late_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("late")
    script = Script([Reply(f"Let me look ({i}).") for i in range(len(TURNS))],
                    [User(text, think) for think, text in TURNS], start=dt.datetime(2026, 3, 1, 23, 20, tzinfo=dt.timezone.utc))
    write_store(folder / "late.sqlite", {THREAD: script})
    transcript_lens.load(folder / "late.sqlite", folder / "late.duckdb", workers=1)
    return folder / "late.duckdb"


@pytest.fixture(scope="module")
def texts(late_db, tmp_path_factory):
    folder = tmp_path_factory.mktemp("timeline")
    (folder / "timeline.py").write_text(_SCRIPT.format(db=str(late_db), thread=THREAD))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with app_server(env, folder / "server.log", str(folder / "timeline.py")) as url, chromium() as browser:
        page = browser.new_page(viewport={"width": 1000, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(url)
        page.locator('[data-testid="stEChartsChart"] svg text').first.wait_for()
        settle(page)
        return page.evaluate(_TEXTS)


def _overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] - 1 and b["left"] < a["right"] - 1 and a["top"] < b["bottom"] - 1 and b["top"] < a["bottom"] - 1


def test_every_resume_label_shows_clear_of_the_others_and_of_the_legend(texts, late_db):
    from analytics import resume

    points = resume.resume_points(late_db, THREAD, gap_minutes=1.0)
    labels = [t for t in texts if t["text"].startswith("resume #")]
    assert sorted(t["text"].split(" · ")[0] for t in labels) == sorted(f"resume #{n}" for n in points["resume_no"])
    assert min(b - a for a, b in zip(points["after_ts"], points["after_ts"][1:])).total_seconds() < 120  # (close ones)
    crowded = [(a["text"], b["text"]) for a in labels for b in texts if a is not b and _overlap(a, b)]
    assert not crowded, crowded


def test_a_tick_at_midnight_names_the_day(texts):
    """A time axis that passes midnight labels that tick with its day ("Mar 2"), not the bare day of
    the month ("2", which reads as a count); the other ticks are times of day."""
    row = next(t for t in texts if t["text"] == "23:50")["top"]  # (the x axis' ticks: one row)
    ticks = [t["text"] for t in texts if abs(t["top"] - row) < 2]
    assert "00:10" in ticks and "23:20" in ticks
    days = [t for t in ticks if not re.fullmatch(r"\d{2}:\d{2}", t)]
    assert days == ["Mar 2"], ticks
