"""Every download the app offers reads as its page does: human headers (the table's, else
`ui.formats.header`'s), never a column's snake_case name, and one time format — to the second,
in UTC, its header saying so (`ui.formats.CSV_TIME`, the Conversations CSV's); the pages' words,
never a code (an outcome, a signal, a risk flag, a restart's reason, a test); a share in percent,
its header saying so; no float's noise.

The walk opens each page in the states that draw its downloads (a thread's history with its
branches, edits and subgraph runs, an uploaded observed log, a price table, the Overview's tables
unfolded) and builds each CSV with the very callable the page handed to `st.download_button`.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import analytics
from tests.pages.conftest import APP, TIMEOUT, open_page
from tests.pages.test_overview import unfold_tables
from tests.pages.test_resume_qa import RESTART, _observed_lines, _upload
from ui.models.compare import TEST_LABELS
from ui.models.outcomes import OUTCOME_LABELS, SIGNAL_LABELS
from ui.models.resume_qa import FLAG_WORDS, REASON_WORDS
from ui.models.topics import topics_page

ROOT = Path(__file__).resolve().parents[2]
#: A column's own name as code writes it ("waiting_since", "period"): not a header.
SNAKE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
#: A cell that is a time (ISO or not, any precision or offset), and the one way a download writes one.
TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}[\d:.]*(?:Z|[+-]\d{2}(?::?\d{2})?)?")
ONE_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
#: The codes the pages say in words: of a signal, a risk flag, a restart's reason ("slow_hitl",
#: "no_id_in_window", "idle_gap"), a test ("welch"), a Compare row's kind; an outcome's, below.
CODES = {code for words in (SIGNAL_LABELS, FLAG_WORDS, REASON_WORDS) for code in words if "_" in code}
CODES |= {code for code in TEST_LABELS if len(code) > 1} | {"metric"}
#: A number written with a float's noise (0.16216216216216217, 241819.00500000003).
NOISE = re.compile(r"-?\d+\.\d{7,}(?:e-?\d+)?")
#: A header of a share: it says its unit, and its cells are percent (0–100 to a tenth).
SHARE_HEADER = re.compile(r"\b(?:share|rate)\b", re.I)


def _unspoken(key: str, header: list[str], rows: list[list[str]]) -> list:
    """The cells of a download (`key`) a page would say otherwise: codes, raw fractions, noise."""
    found = []
    shares = [i for i, h in enumerate(header) if SHARE_HEADER.search(h)]
    found += [(key, header[i]) for i in shares if "%" not in header[i]]
    for row in rows:
        for name, cell in zip(header, row):
            parts = {p.strip() for p in re.split(r"[,;+]", cell)} | {cell}
            found += [(key, name, cell) for code in CODES if code in parts]
            found += [(key, name, cell)] if NOISE.fullmatch(cell) else []
        found += [(key, header[i], row[i]) for i in shares if row[i] and not re.fullmatch(r"\d{1,3}(?:\.\d)?", row[i])]
        said = row[header.index("Outcome")] if "Outcome" in header else ""
        found += [(key, "Outcome", said)] if said not in {"", *OUTCOME_LABELS.values()} else []
    return found


def _observed(at, con) -> None:
    lines = _observed_lines(con)
    lines[1]["content"] = "something else"  # a finding, so the findings table (and its CSV) is drawn
    _upload(at, lines)


def _prices(at, tmp_path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."gpt-4o-mini-2024-07-18"]\ninput = 1\noutput = 2\n', encoding="utf-8")
    at.text_input(key="compare.prices_path").input(str(prices)).run()


#: (page, query params, what to do there once open)
WALK = [
    ("overview", {}, lambda at, con, tmp: unfold_tables(at)),
    ("conversations", {}, None),
    ("outcomes", {}, None),
    ("search", {"q": "order"}, None),
    ("transcript", {"thread": "globex:api:sess-2105", "history": "1"}, None),  # two branches: compare, branch CSVs
    ("transcript", {"thread": "initech:helpdesk:sess-5005", "history": "1"}, None),  # an edit log
    ("transcript", {"thread": "globex:api:sess-2106", "history": "1"}, None),  # subgraph runs
    ("transcript", {"thread": "acme:web:sess-1002", "view": "filtered"}, None),
    ("resume_qa", {"thread": "initech:helpdesk:sess-5005"}, None),  # the thread's risks
    ("resume_qa", {"thread": RESTART}, lambda at, con, tmp: _observed(at, con)),  # points, window, summary, findings
    ("backlog", {}, None),
    ("topics", {"topic": "1"}, None),
    ("patterns", {}, None),
    ("compare", {}, lambda at, con, tmp: _prices(at, tmp)),
]


@pytest.fixture()
def offered(monkeypatch) -> dict:
    """{key: (file name, the `data` callable)} of every download button drawn."""
    made: dict = {}
    original = st.download_button

    def recording(label, data, *args, **kwargs):
        made[kwargs.get("key")] = (kwargs.get("file_name"), data)
        return original(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", recording)
    return made


def _keys_in_source() -> set[str]:
    """The keys of the download buttons the pages draw, where the source spells them out."""
    found = set()
    for path in [*ROOT.glob("pages/*.py"), ROOT / "ui" / "history.py"]:
        text = path.read_text()
        for call in re.finditer(r"render\.download(?:_data)?\((.*?)\)\s*(?:#.*)?$", text, re.S | re.M):
            found.update(re.findall(r'\bkey="([^"{}]+)"', call.group(1)))
    return found


def test_every_download_has_human_headers_words_and_one_time_format(demo_db, tmp_cache, offered, tmp_path):
    csv.field_size_limit(1 << 30)
    seen: dict[str, list[str]] = {}
    unspoken: list = []
    outcomes: dict[str, dict[str, str]] = {}  # download → thread → its outcome's word
    con = analytics.connect(tmp_cache / "demo.duckdb")
    try:
        for page, params, act in WALK:
            at = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), page, **params)
            if act is not None:
                act(at, con, tmp_path)
            assert not at.exception, (page, at.exception)
            for key, (file_name, data) in offered.items():
                if file_name.endswith(".jsonl"):
                    continue  # (the observed-log template: the runtime's own field names)
                body = data()
                rows = list(csv.reader(io.StringIO(body.decode("utf-8"))))
                seen[key] = header = rows[0]
                assert len(set(header)) == len(header), (key, header)
                assert not [h for h in header if SNAKE.fullmatch(h)], (key, header)
                for row in rows[1:]:
                    for name, cell in zip(header, row):
                        if TIME.fullmatch(cell):
                            assert ONE_TIME.fullmatch(cell) and "UTC" in name, (key, name, cell)
                if key != "resume_qa.findings_csv":  # (an observed log's own lines, as the runtime wrote them)
                    unspoken += _unspoken(key, header, rows[1:])
                if {"Thread", "Outcome"} <= set(header):
                    outcomes[key] = {r[header.index("Thread")]: r[header.index("Outcome")] for r in rows[1:]}
            offered.clear()
    finally:
        con.close()
    assert _keys_in_source() <= set(seen), sorted(_keys_in_source() - set(seen))
    assert not unspoken, unspoken[:20]
    # A thread waiting on a human is said so in the same word by the Outcomes CSV and the Conversations CSV.
    slow, every = outcomes["outcomes.slow_csv"], outcomes["conversations.csv"]
    assert slow and all(every[thread] == word for thread, word in slow.items()), (slow, every)
    # A trend's columns named by data (a topic's label) keep their words, as the chart's legend writes them.
    legend = topics_page(tmp_cache / "demo.duckdb", period="week").trend.columns[1:].tolist()
    assert seen["topics.trend.csv"][1:] == legend and any(name != name.lower() for name in legend)
    timed = [k for k, header in seen.items() if any("UTC" in h for h in header)]
    assert len(timed) >= 10, timed  # (the walk met times in most of them)
