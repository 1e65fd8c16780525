"""Masking reads a value as a reader reads it, whatever encodes or separates it
(analytics/reader_view.py): escapes (HTML character references, percent-encoding, JSON and Python
escapes, escaped twice), every space, tab, middle dot or bullet between digit groups, full-width and
other compatibility forms, an IBAN grouped by any separator. The values are built here from parts,
in every combination of spelling, so a spelling no list names is tried too; decoys (ordinary
numbers, dates, versions, prices, entities between words) stay as written. The same texts are masked
in a CLI transcript, a masked report, a search and an app session's answer (`ui.cache`)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from analytics.policy import Policy, reading_as
from analytics.redact import Redactor
from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages


def _escapes(c: str, before_digits: bool = False) -> list[str]:
    """Every way the masking must read `c`: as itself, as an HTML character reference (decimal,
    hex, with and without `;` — not before digits, which a reference without `;` would take in —,
    named where HTML names it), percent-encoded (its UTF-8), as a JSON or Python escape, and
    escaped twice."""
    code = ord(c)
    utf8 = "".join(f"%{b:02X}" for b in c.encode())
    named = {"@": ["&commat;"], ".": ["&period;"], "\u00a0": ["&nbsp;", *([] if before_digits else ["&nbsp"]),
                                                          "&NonBreakingSpace;"],
             "\u00b7": ["&middot;", "&centerdot;"], "\u2022": ["&bull;"], "/": ["&sol;"], "-": ["&hyphen;", "&dash;"]}
    bare = [] if before_digits else [f"&#{code}", f"&#X{code:X}"]
    return [c, f"&#{code};", *bare, f"&#x{code:x};", f"&#0{code};", utf8, utf8.lower(),
            f"\\u{code:04x}", f"\\u{code:04X}", f"\\x{code:02x}" if code < 256 else f"\\U{code:08x}",
            "%25" + utf8[1:3] + utf8[3:].replace("%", "%25"), f"&amp;#{code};", *named.get(c, [])]


AT_SIGNS = [*_escapes("@"), *_escapes("\uff20"), "\ufe6b"]
DOTS = [*_escapes("."), *_escapes("\uff0e"), "\u3002"]
DIGIT_GAPS = [g for c in (" ", "\t", "\u00a0", "\u202f", "\u2009", "\u2007", "\u3000", "\u00b7", "\u2022", "\u30fb",
                          "\u2027", "\u2219", "-", ".", "/", "_", "\uff0d")
              for g in _escapes(c, before_digits=True)] + [" \u00b7 ", " \u2022 ", " / ", "\t-\t"]
IBAN_GAPS = [" ", "-", ".", "/", "_", "\t", "\u00a0", "\u00b7", "\u2022", " / ", "&nbsp;", "%20", "\\u00a0"]


def _emails() -> list[str]:
    return [f"{local}{at}{host}{dot}{top}" for (local, host, top), at, dot in itertools.product(
        [("dana.scully", "skully-mail", "org"), ("\uff42\uff4f\uff42", "\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45", "org")],
        AT_SIGNS, DOTS)]


def _cards() -> list[str]:
    full_width = ["\uff14\uff11\uff11\uff11", *["\uff11" * 4] * 3]
    return [gap.join(groups) for gap in DIGIT_GAPS
            for groups in (["4111", "1111", "1111", "1111"], ["5500", "0000", "0000", "0004"], full_width)]


def _ibans() -> list[str]:
    groups = ["DE89", "3704", "0044", "0532", "0130", "00"]
    return [gap.join(g if k else g for k, g in enumerate(groups)) for gap in IBAN_GAPS] + [
        "de89/3704/0044/0532/0130/00", "GB82/WEST/1234/5698/7654/32", "\uff24\uff25\uff18\uff19/3704/0044/0532/0130/00"]


VALUES = {"EMAIL": _emails(), "CARD": _cards(), "IBAN": _ibans()}

DECOYS = [
    "version 1.2.3.4 of the app, build 10.0.19045.2965",
    "on 2025-03-05 at 12:30:45, then 2025/03/06 \u00b7 2025/03/07",
    "order 1043 \u00b7 42 items \u2022 12.50 EUR each, total 1\u00a0234,56",
    "AT&amp;T &amp; friends, 100&nbsp;000 users, 50%25 off, C:\\\\Users\\\\x",
    "room 12 \u2022 floor 3 \u2022 desk 7",
    "ids 1234&nbsp;5678 and 9%20times, page &#49;&#50;",
    "tel? no: 2025 \u00b7 0305 \u00b7 1741",
    "the rate is 3.14159 and 2.71828",
]


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_every_spelling_of_a_value_is_masked_whole(kind):
    r = Redactor()
    missed = [v for v in VALUES[kind] if not re.fullmatch(f"mine is <{kind}_[0-9]+> thanks", r.text(f"mine is {v} thanks"))]
    assert not missed, missed[:10]


def test_the_escaped_spellings_are_the_same_value():
    r = Redactor()
    assert {r.text(v) for v in _emails()[:len(AT_SIGNS) * len(DOTS)]} == {"<EMAIL_1>"}
    assert {r.text(v) for v in _cards() if v.startswith("4111")} == {"<CARD_1>"}


def test_decoys_stay_as_written():
    r = Redactor()
    assert [r.text(d) for d in DECOYS] == DECOYS


SAMPLE = {"EMAIL": ["bob&#64;example&#46;com", "bob%40example%2Ecom", "bob\\u0040example.com", "bob%EF%BC%A0example.com",
                    "bob&commat;example&period;com"],
          "CARD": ["4111\t1111\t1111\t1111", "4111&nbsp;1111&nbsp;1111&nbsp;1111", "4111\u00b71111\u00b71111\u00b71111",
                   "4111\u20221111\u20221111\u20221111", "4111\u202f1111\u202f1111\u202f1111"],
          "IBAN": ["DE89/3704/0044/0532/0130/00"]}
SECRETS = ["example", "4111", "1111", "3704", "0532"]
THREAD = "escapes"


@pytest.fixture(scope="module")
def lens(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("escapes")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    said = [HumanMessage(f"reach me at {v} please") for values in SAMPLE.values() for v in values]
    store_with_messages(store, [*said, *(HumanMessage(d) for d in DECOYS), AIMessage("noted")], THREAD)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def test_a_masked_transcript_and_report_hold_none_of_them(lens, tmp_path):
    for fmt in ("csv", "json", "table"):
        out = run_cli(["transcript", "--thread", THREAD, "--format", fmt, "--db", str(lens), "--redact"], tmp_path)
        out.succeeded().never_prints(*SECRETS)
        # (placeholders are numbered per process, and this one may have masked before)
        assert all(re.search(rf"<{kind}_\d+>", out.stdout) for kind in ("EMAIL", "CARD", "IBAN")), out.stdout
        for decoy in ("1.2.3.4", "2025-03-05", "12.50 EUR"):
            assert decoy in out.stdout
    report = tmp_path / "t.csv"
    run_cli(["report", "transcript", "--db", str(lens), "--out", str(report), "--redact"], tmp_path).succeeded()
    text = report.read_text(encoding="utf-8")
    assert not [s for s in SECRETS if s in text] and re.search(r"<IBAN_\d+>", text)


@pytest.mark.parametrize("probe", ["example", "4111", "0532/0130", "reach me at bob"])
def test_a_masked_search_finds_no_part_of_them(probe, lens, tmp_path):
    plain = run_cli(["search", probe, "--db", str(lens), "--format", "csv"], tmp_path).succeeded()
    assert len(plain.stdout.splitlines()) > 1  # unmasked, the probe finds its message
    out = run_cli(["search", probe, "--db", str(lens), "--format", "csv", "--redact"], tmp_path).succeeded()
    assert len(out.stdout.splitlines()) <= 1, out.stdout


def test_an_app_session_is_shown_none_of_them():
    from ui.cache import _shown

    frame = {"content": [f"reach me at {v}" for values in SAMPLE.values() for v in values],
             "thread_id": json.dumps(SAMPLE["EMAIL"][0])}
    with reading_as(Policy(redact=True)):
        shown = _shown(frame)
    text = json.dumps(shown)
    assert not [s for s in SECRETS if s in text], text


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_the_search_barrier_covers_every_spelling(kind):
    import duckdb

    from analytics.masking import search_barrier
    from analytics.redact import RedactConfig

    con = duckdb.connect()
    said = [f"mine is {v} thanks" for v in VALUES[kind]]
    blind = con.execute("SELECT list_transform(?::VARCHAR[], lambda s: regexp_replace(s, ?, '#', 'g'))",
                        [said, search_barrier(RedactConfig())]).fetchone()[0]
    parts = ["skully", "\uff45\uff58\uff41", "4111", "1111", "5500", "0004", "\uff11\uff11", "3704", "0532", "WEST"]
    leaked = [b for b in blind if any(p in b for p in parts)]
    assert not leaked, leaked[:5]
