"""Read-time masking and tenant scope (analytics.policy), tried the way a leak would happen:
every table, every API answer and every report of a store full of planted personal data."""

from __future__ import annotations

import re

import duckdb
import pandas as pd
import pytest

import analytics
from analytics import Filters
from analytics.reporting import spec as specs, writer
from analytics.cli import main as analytics_main
from analytics.catalog import ALL_TABLES
from analytics.db import applied_policy
from analytics.frames import fetch_frame
from analytics.policy import TENANTS_ENV, Policy
from analytics.redact import ENV as REDACT_ENV
from tests.analytics.pii_store import DECOYS, PLANTED, load_pii_db

ALL_PLANTED = [v for values in PLANTED.values() for v in values]


@pytest.fixture(scope="module")
def pii_db(tmp_path_factory):
    return load_pii_db(tmp_path_factory.mktemp("pii"))


@pytest.fixture(autouse=True)
def no_deployment_policy(monkeypatch):
    monkeypatch.delenv(REDACT_ENV, raising=False)
    monkeypatch.delenv(TENANTS_ENV, raising=False)


def _text(answer) -> str:
    if isinstance(answer, pd.DataFrame):
        return answer.astype(str).to_csv()
    return repr(answer)


def _api_answers(con, tmp_path) -> dict[str, str]:
    """Every public way to read the database, with the text each answer holds."""
    threads = [t for t in fetch_frame(con, "SELECT thread_id FROM threads ORDER BY 1").thread_id]
    out = {}
    for t in threads:
        out[f"read {t}"] = _text(analytics.read(con, t))
        out[f"conversation {t}"] = _text(analytics.conversation(con, t))
        out[f"thread_risks {t}"] = _text(analytics.thread_risks(con, t))
        out[f"expected_window {t}"] = _text(analytics.expected_window(con, t))
        context = analytics.in_context(con, t)
        out[f"in_context {t}"] = _text(context.messages) + _text(context.markers)
    for name in ("conversations", "overview", "by_model", "daily", "top_models", "top_tools", "top_tenants", "risks"):
        out[name] = _text(getattr(analytics, name)(con))
    out["search"] = _text(analytics.search_threads(con, "Charged"))
    out["search messages"] = _text(analytics.search(con, "Charged", limit=1000).hits)
    out["search tool calls"] = _text(analytics.search(con, "e", in_="tool_calls", limit=1000).hits)
    needs = {"search": Filters(text="e")}  # a report that needs its --text
    prices = tmp_path / "prices.csv"  # (no price table is bundled)
    prices.write_text("model,input,output\nany-model,1.00,4.00\n", encoding="utf-8")
    options = {"compare": {"a_since": "2000-01-01", "b_until": "2100-01-01"},  # two cohorts that differ
               "costs": {"prices": str(prices), "cost_by": "tenant"}}
    for kind in sorted(specs.registry()):
        out[f"report_frame {kind}"] = _text(analytics.report_frame(con, kind, needs.get(kind, Filters()),
                                                                   options.get(kind)))
        path = writer.write_report(con, kind, tmp_path / f"{kind}.csv", needs.get(kind, Filters()), options.get(kind))
        out[f"write_report {kind}"] = path.read_text(encoding="utf-8")
    return out


def test_unmasked_answers_hold_the_planted_values(pii_db, tmp_path):
    # The store really holds what the masked tests must not find (else they prove nothing).
    with analytics.connect(pii_db) as con:
        text = "".join(_api_answers(con, tmp_path).values())
    assert all(v in text for v in ALL_PLANTED)


def test_masked_answers_hold_no_planted_value_and_every_decoy(pii_db, tmp_path):
    with analytics.connect(pii_db, redact=True) as con:
        answers = _api_answers(con, tmp_path)
    leaks = {name: [v for v in ALL_PLANTED if v in text] for name, text in answers.items()}
    assert {k: v for k, v in leaks.items() if v} == {}
    reads = "".join(text for name, text in answers.items() if name.startswith("read "))
    assert all(d in reads for d in DECOYS)
    # Numbered per process (what this worker masked before counts), so any number.
    assert all(re.search(rf"<{kind}_\d+>", reads) for kind in ("EMAIL", "CARD", "IBAN"))


def test_every_table_read_through_the_query_layer_is_masked(pii_db):
    with analytics.connect(pii_db, redact=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()]
        assert {t.name for t in ALL_TABLES} <= set(names)
        for table in names:
            text = _text(fetch_frame(con, f'SELECT * FROM "{table}"'))
            assert [v for v in ALL_PLANTED if v in text] == [], table


def test_one_placeholder_per_value_across_answers(pii_db):
    with analytics.connect(pii_db, redact=True) as con:
        a = analytics.read(con, "acme:web:s1")
        b = analytics.read(con, "acme:web:s2")
    email_in = lambda frame: {w for c in frame.content for w in c.replace(".", " ").replace(",", " ").split() if w.startswith("<EMAIL_")}  # noqa: E731
    assert email_in(a) == email_in(b) and len(email_in(a)) == 1
    assert '"email":"' + next(iter(email_in(a))) + '"' in a.tool_calls.dropna().iloc[0]


def test_tenant_scope_reaches_no_other_tenant(pii_db, tmp_path):
    raw = duckdb.connect(str(pii_db), read_only=True)
    with analytics.connect(pii_db, tenants=["acme"]) as con:
        for (table,) in raw.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            columns = [r[0] for r in raw.execute(f'DESCRIBE "{table}"').fetchall()]
            if "thread_id" not in columns:
                continue
            want = raw.execute(f"""SELECT count(*) FROM "{table}" WHERE thread_id IN
                                   (SELECT thread_id FROM threads WHERE tenant_id = 'acme')""").fetchall()
            assert con.execute(f'SELECT count(*) FROM "{table}"').fetchall() == want, table
        answers = _api_answers(con, tmp_path)
        with pytest.raises(analytics.NotFound):
            analytics.read(con, "globex:web:s1")
    leaks = {name: text for name, text in answers.items() if "globex" in text or PLANTED["globex"][0] in text}
    assert leaks == {}
    assert "acme:web:s1" in answers["conversations"] and PLANTED["acme"][0] in answers["read acme:web:s1"]


def test_the_deployment_policy_cannot_be_lowered(pii_db, monkeypatch):
    monkeypatch.setenv(REDACT_ENV, "1")
    monkeypatch.setenv(TENANTS_ENV, "acme,globex")
    with analytics.connect(pii_db, redact=False) as con:
        assert applied_policy(con) == Policy(redact=True, tenants=frozenset({"acme", "globex"}))
        assert PLANTED["acme"][0] not in _text(analytics.read(con, "acme:web:s1"))
    with analytics.connect(pii_db, tenants=["globex", "initech"]) as con:
        assert applied_policy(con).tenants == {"globex"}
        assert analytics.conversations(con).thread_id.tolist() == ["globex:web:s1", "globex:web:s2"]
    # A connection opened around the API (duckdb.connect) is read through the policy too.
    raw = duckdb.connect(str(pii_db), read_only=True)
    assert PLANTED["acme"][0] not in _text(analytics.read(raw, "acme:web:s1"))
    assert applied_policy(raw).is_open  # the caller's own connection is left as it was


def test_read_redact_on_an_open_connection(pii_db):
    raw = duckdb.connect(str(pii_db), read_only=True)
    masked = analytics.read(raw, "globex:web:s1", redact=True)
    assert PLANTED["globex"][0] not in _text(masked) and "<EMAIL_" in _text(masked)
    assert PLANTED["globex"][0] in _text(analytics.read(raw, "globex:web:s1"))


def test_cli_redact_flag_on_every_command(pii_db, tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert analytics_main(["report", "transcript", "--db", str(pii_db), "--out", str(out), "--redact"]) == 0
    text = out.read_text(encoding="utf-8")
    assert [v for v in ALL_PLANTED if v in text] == [] and "<EMAIL_" in text
    assert analytics_main(["transcript", "--db", str(pii_db), "--thread", "acme:web:s1", "--format", "json", "--redact"]) == 0
    printed = capsys.readouterr().out
    assert PLANTED["acme"][0] not in printed and "<EMAIL_" in printed
    # The flag lasts for its command only.
    assert analytics_main(["transcript", "--db", str(pii_db), "--thread", "acme:web:s1", "--format", "json"]) == 0
    assert PLANTED["acme"][0] in capsys.readouterr().out


def test_cli_redact_config_adds_terms_and_names_a_bad_file(pii_db, tmp_path, capsys):
    config = tmp_path / "redact.toml"
    config.write_text("[redact]\nterms = ['A-1043']\n")
    out = tmp_path / "t.csv"
    args = ["report", "transcript", "--db", str(pii_db), "--out", str(out), "--redact", "--redact-config", str(config)]
    assert analytics_main(args) == 0
    assert "A-1043" not in out.read_text(encoding="utf-8") and "<NAME_1>" in out.read_text(encoding="utf-8")
    config.write_text("[redact]\npatterns = { X = '(' }\n")
    assert analytics_main(args) == 2
    assert "not a valid regular expression" in capsys.readouterr().err


def test_under_masking_the_text_filter_is_blind_inside_masked_values(pii_db):
    # The same filter finds the threads unmasked; under masking it sees only unmasked text.
    with analytics.connect(pii_db) as con:
        assert sorted(analytics.conversations(con, Filters(text="dana.scully")).thread_id) == ["acme:web:s1", "acme:web:s2"]
    with analytics.connect(pii_db, redact=True) as con:
        assert analytics.conversations(con, Filters(text="dana.scully")).empty
        assert analytics.conversations(con, Filters(text="7946 0958")).empty  # a part of a phone number
        assert analytics.search_threads(con, "dana.scully").empty  # the thread picker's find box
        assert analytics.search(con, "scully@fbi").total == 0  # a part of an email: not refused, blind
        shown = analytics.conversations(con, Filters(text="order A-1043")).thread_id  # text shown as is
    assert sorted(shown) == ["acme:web:s1", "acme:web:s2", "globex:web:s1", "globex:web:s2"]


def test_under_masking_a_search_for_personal_data_is_refused(pii_db):
    email = next(v for v in ALL_PLANTED if "@" in v)
    with analytics.connect(pii_db) as con:
        assert analytics.search(con, email).total > 0  # the value is there to find
    with analytics.connect(pii_db, redact=True) as con:
        with pytest.raises(analytics.BadRequest, match="personal data is masked in this app.*email"):
            analytics.search(con, email)
        assert analytics.search(con, "Charged").total > 0  # any other text is searched as before


def test_raw_sql_on_a_masking_connection_is_verbatim_and_analytics_sql_masks_it(pii_db):
    # As docs/privacy.md's table of switches says: DuckDB answers raw SQL itself; `analytics.sql` masks.
    email = next(v for v in ALL_PLANTED if "@" in v)
    query = "SELECT thread_id, content FROM messages WHERE role = 'user' ORDER BY thread_id, ordinal"
    with analytics.connect(pii_db, redact=True) as con:
        raw = "\n".join(c for (_t, c) in con.execute(query).fetchall())
        masked = analytics.sql(con, query)
    assert email in raw
    assert not [v for v in ALL_PLANTED if v in "\n".join(masked.content)] and "<EMAIL_" in "\n".join(masked.content)


@pytest.mark.parametrize("select", ["content AS thread_id", "content AS role", "content AS model_name",
                                    "list(content) AS thread_id", "{'role': content} AS role",
                                    "map([thread_id], [content]) AS thread_id"])
def test_analytics_sql_masks_every_text_whatever_its_column_is_called(pii_db, select):
    # A column's name says nothing of what a query put in it: every text of an answer is masked.
    query = f"SELECT {select} FROM messages WHERE role = 'user'" + (" GROUP BY role" if "list(" in select else "")
    with analytics.connect(pii_db, redact=True) as con:
        raw = str(con.execute(query).fetchall())
        shown = analytics.sql(con, query).to_string()
    assert [v for v in ALL_PLANTED if v in raw]
    assert not [v for v in ALL_PLANTED if v in shown] and "<EMAIL_" in shown, shown
