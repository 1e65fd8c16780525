"""CSV reports: documented columns in order, ISO-8601 UTC timestamps, the
file equal to `report_frame`, filters applied, the registry and the CLI."""

from __future__ import annotations

import csv
import re

import duckdb
import pandas as pd

import analytics
from analytics.conversation_outcomes.signals import SIGNALS
import pytest

from analytics import metrics
from analytics.reporting import kinds, spec as specs, writer
from analytics.cli import main
from analytics.db import connect
from analytics.filters import Filters
from tests.analytics.metrics_db import CORPUS, D2, write

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return write(tmp_path_factory.mktemp("reports") / "lens.duckdb")


def read_text_csv(path) -> pd.DataFrame:
    """The file as written: every cell a string, empty cells as ''."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")


def as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """`report_frame` rendered the way the CSV renders values, for a cell-by-cell comparison."""

    def cell(v) -> str:
        if v is None or v is pd.NA or (isinstance(v, float) and v != v):
            return ""
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, float):
            return repr(v)
        return str(v)

    return frame.astype(object).map(cell)


@pytest.mark.parametrize("kind", ["conversations", "transcript", "daily"])
def test_file_is_exactly_report_frame(db, tmp_path, kind):
    out = writer.write_report(db, kind, tmp_path / f"{kind}.csv")
    got = read_text_csv(out)
    want = writer.report_frame(db, kind)
    assert tuple(got.columns) == specs.report_spec(kind).columns
    pd.testing.assert_frame_equal(got, as_text(want), check_dtype=False)


def test_conversations_round_trip_with_iso_utc_timestamps(db, tmp_path):
    out = writer.write_report(db, "conversations", tmp_path / "c.csv")
    got = pd.read_csv(out)
    assert tuple(got.columns) == (*metrics.CONVERSATION_COLUMNS, "first_user_message", "outcome", "signals",
                                  "outcome_reason")
    frame = metrics.conversations(db)
    assert got["thread_id"].tolist() == frame["thread_id"].tolist()
    outcomes = analytics.outcomes(db).set_index("thread_id")
    assert got.set_index("thread_id")["outcome"].to_dict() == outcomes["outcome"].to_dict()
    # The reason is `report outcomes`' own: which signal or rule made the outcome, at which message.
    assert got.set_index("thread_id")["outcome_reason"].to_dict() == outcomes["outcome_reason"].to_dict()
    for row in got.itertuples():  # the signals that fired, in their order; the closing is the outcome's reason
        want = [s for s in SIGNALS if s != "resolved_closing" and outcomes.loc[row.thread_id, s]]
        assert ([] if pd.isna(row.signals) else row.signals.split(";")) == want
    for col in ("first_ts", "last_ts", "first_checkpoint_ts", "last_checkpoint_ts"):
        stamps = got[col].dropna()
        assert stamps.map(lambda s: bool(ISO_UTC.match(s))).all(), col
        # Parsed back, they are the same instants.
        assert pd.to_datetime(got[col], utc=True).tolist() == frame[col].tolist()
    assert got["messages"].tolist() == frame["messages"].tolist()
    assert got["latency_median_s"].fillna(-1).tolist() == frame["latency_median_s"].round(3).fillna(-1).tolist()
    assert got.loc[got.thread_id == "acme:web:s1", "models"].item() == "claude-3,gpt-4o"


def test_timestamps_do_not_follow_the_session_time_zone(db, tmp_path):
    con = connect(db)
    try:
        con.execute("SET TimeZone = 'America/New_York'")
        out = writer.write_report(con, "transcript", tmp_path / "t.csv", Filters(thread_ids=("acme:web:s1",)))
    finally:
        con.close()
    got = read_text_csv(out)
    assert got["ts"].iloc[1] == "2025-03-01T09:00:10.000000Z"
    assert got["ts"].iloc[2] == "2025-03-01T09:00:12.500000Z"


def test_transcript_report_is_the_filtered_messages_in_order(db, tmp_path):
    filters = Filters(tenants=("acme", "globex"), since=D2)
    out = writer.write_report(db, "transcript", tmp_path / "t.csv", filters)
    got = read_text_csv(out)
    # Threads active since D2 (acme:mobile:s2, globex::s3), messages stamped since D2, in transcript order.
    want = [
        (tid, str(i), m.content)
        for tid in sorted(CORPUS.transcripts)
        if tid.split(":")[0] in ("acme", "globex")
        for i, m in enumerate(CORPUS.transcripts[tid])
        if m.ts is not None and m.ts >= D2
    ]
    assert list(zip(got.thread_id, got.ordinal, got.content)) == want
    # Quotes, a comma, a newline and non-ASCII text survive the trip.
    assert 'He said "hi", then left,\nfor good' in got["content"].tolist()
    assert "Bonjour — ça va ?" in got["content"].tolist()


def test_transcript_written_in_parts_is_the_same_file(db, tmp_path, monkeypatch):
    whole = writer.write_report(db, "transcript", tmp_path / "whole.csv").read_bytes()
    monkeypatch.setattr(kinds, "TRANSCRIPT_PART_MESSAGES", 3)
    con = connect(db)
    try:
        assert len(list(kinds._transcript_parts(con, Filters(), {}))) > 2
    finally:
        con.close()
    assert writer.write_report(db, "transcript", tmp_path / "parts.csv").read_bytes() == whole
    # An empty selection still has its header.
    empty = writer.write_report(db, "transcript", tmp_path / "empty.csv", Filters(tenants=("nobody",)))
    assert empty.read_text().splitlines() == [",".join(kinds.TRANSCRIPT_COLUMNS)]


def test_daily_report_days_are_plain_dates(db, tmp_path):
    got = read_text_csv(writer.write_report(db, "daily", tmp_path / "d.csv", Filters(tenants=("globex",))))
    assert got["day"].tolist() == ["2025-03-02", "2025-03-03"]
    assert tuple(got.columns) == metrics.DAILY_COLUMNS


def test_a_failed_report_leaves_the_old_file_alone(db, tmp_path, monkeypatch):
    out = tmp_path / "keep.csv"
    out.write_text("previous\n")

    def broken(con, filters, options):
        return con.sql("SELECT error('boom') AS x")

    monkeypatch.setitem(specs.REPORTS, "broken", specs.ReportSpec("broken", "fails", ("x",), broken))
    with pytest.raises(duckdb.Error):
        writer.write_report(db, "broken", out)
    assert out.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.csv"]


def test_registry_takes_new_kinds_and_holds_them_to_their_columns(db, tmp_path, monkeypatch):
    def tenants(con, filters, options):
        where, params = filters.thread_where("t")
        return con.sql(
            f"SELECT t.tenant_id, count(*) AS threads, max(t.last_ts) AS last_ts, ? AS label FROM threads t"
            f" WHERE {where} GROUP BY ALL ORDER BY 1",
            params=[options.get("label") or "none", *params],
        )

    def arguments(parser):
        parser.add_argument("--label")

    monkeypatch.setattr(specs, "REPORTS", dict(specs.REPORTS))
    columns = ("tenant_id", "threads", "last_ts", "label")
    specs.register_report(specs.ReportSpec("tenants", "per tenant", columns, tenants, arguments))
    out = tmp_path / "tenants.csv"
    assert main(["report", "tenants", "--db", str(db), "--out", str(out), "--tenant", "acme", "--label", "x"]) == 0
    assert list(csv.reader(out.open())) == [
        ["tenant_id", "threads", "last_ts", "label"],
        ["acme", "3", "2025-03-02T10:02:50.000000Z", "x"],
    ]
    with pytest.raises(ValueError):
        specs.register_report(specs.ReportSpec("tenants", "again", ("x",), tenants))
    drifted = (columns[1], columns[0], *columns[2:])
    specs.REPORTS["drifted"] = specs.ReportSpec("drifted", "wrong order", drifted, tenants)
    with pytest.raises(AssertionError):
        writer.report_frame(db, "drifted")


def test_cli_writes_the_filtered_report(db, tmp_path, capsys):
    out = tmp_path / "acme.csv"
    argv = ["report", "conversations", "--db", str(db), "--out", str(out), "--tenant", "acme", "--sub-tenant", "web"]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == str(out)
    got = pd.read_csv(out)
    assert got["thread_id"].tolist() == ["acme:web:empty", "acme:web:s1"]
    filters = Filters(tenants=("acme",), sub_tenants=("web",))
    api = writer.write_report(db, "conversations", tmp_path / "api.csv", filters)
    pd.testing.assert_frame_equal(got, pd.read_csv(api))


def test_cli_filters_by_time_text_and_thread(db, tmp_path):
    out = tmp_path / "t.csv"
    argv = ["report", "transcript", "--db", str(db), "--out", str(out)]
    argv += ["--text", "billing", "--until", "2025-03-01T09:00:13Z"]
    assert main(argv) == 0
    got = read_text_csv(out)
    assert set(got.thread_id) == {"acme:web:s1"} and got.ordinal.tolist() == ["0", "1", "2", "3"]
    assert main(["report", "transcript", "--db", str(db), "--out", str(out), "--thread", "globex::s3"]) == 0
    assert set(read_text_csv(out).thread_id) == {"globex::s3"}


def test_cli_resume_gap_option(db, tmp_path):
    out = tmp_path / "c.csv"
    assert main(["report", "conversations", "--db", str(db), "--out", str(out), "--gap-minutes", "0.05"]) == 0
    got = pd.read_csv(out).set_index("thread_id")
    # Root checkpoints at 09:00:00, :10, :12.5, :13, :15, 10:00:00, :04, :05, :11: the gaps over
    # 3 s are 10 s, 3585 s, 4 s and 6 s (2.5, 0.5, 2 and 1 s are not).
    assert got.loc["acme:web:s1", "resume_points"] == 4


def test_the_former_gap_flag_still_works_warns_and_is_not_listed(db, tmp_path, capsys):
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    assert main(["report", "conversations", "--db", str(db), "--out", str(new), "--gap-minutes", "0.05"]) == 0
    capsys.readouterr()
    assert main(["report", "conversations", "--db", str(db), "--out", str(old), "--resume-gap-minutes", "0.05"]) == 0
    assert "--resume-gap-minutes is deprecated; use --gap-minutes" in capsys.readouterr().err
    assert old.read_text() == new.read_text()
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    help_text = capsys.readouterr().out
    assert "--gap-minutes MIN" in help_text and "--resume-gap-minutes" not in help_text


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--since", "yesterday"], "--since"),
        (["--db", "{missing}"], "no Transcript Lens database"),
        (["--out", "{tmp}/no/such/dir/x.csv"], "no directory"),
        (["--out", "{tmp}"], "is a directory"),
    ],
)
def test_cli_mistakes_are_one_line_and_exit_2(db, tmp_path, capsys, argv, message):
    base = {"--db": str(db), "--out": str(tmp_path / "x.csv")}
    for flag, value in zip(argv[::2], argv[1::2]):
        base[flag] = value.format(missing=tmp_path / "nope.duckdb", tmp=tmp_path)
    args = ["report", "conversations"] + [x for kv in base.items() for x in kv]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_cli_refuses_an_unknown_kind(db, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "nope", "--db", str(db), "--out", str(tmp_path / "x.csv")])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


# --- one CSV format; the sorted conversations -------------------------------------------


def test_one_format_z_times_true_false_and_rounded_floats(loaded, tmp_path):
    out = writer.write_report(loaded, "conversations", tmp_path / "c.csv")
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    frame = metrics.conversations(loaded)
    assert {r["interrupt_pending"] for r in rows} <= {"true", "false"}
    assert all(ISO_UTC.match(r["last_ts"]) for r in rows if r["last_ts"])
    by_id = frame.set_index("thread_id")
    floats = [c for c in metrics.CONVERSATION_COLUMNS if str(frame[c].dtype) == "float64"]
    assert {"duration_s", "latency_median_s", "mean_chars_user"} <= set(floats)
    unrounded = 0
    for r in rows:
        for c in floats:
            want = by_id.loc[r["thread_id"], c]
            if pd.isna(want):
                assert r[c] == ""
                continue
            decimals = r[c].partition(".")[2]
            assert len(decimals) <= writer.FLOAT_DECIMALS, (c, r[c])
            assert float(r[c]) == round(float(want), writer.FLOAT_DECIMALS)
            unrounded += round(float(want), 3) != float(want)
    assert unrounded  # the store has figures with more decimals, so rounding was exercised


def pandas_sorted(frame: pd.DataFrame, column: str, descending: bool) -> list[str]:
    """Independent of the SQL: thread_id order, then a stable sort on `column` with NULLs last."""
    frame = frame.sort_values("thread_id", kind="stable")
    return frame.sort_values(column, ascending=not descending, na_position="last", kind="stable")["thread_id"].tolist()


@pytest.mark.parametrize("column", ["duration_s", "latency_median_s", "total_tokens", "last_ts", "models",
                                    "interrupt_pending", "tool_errors"])
@pytest.mark.parametrize("desc", [False, True])
def test_cli_sort_is_a_pandas_sort_of_the_whole_table(loaded, tmp_path, column, desc):
    out = tmp_path / "sorted.csv"
    argv = ["report", "conversations", "--db", str(loaded), "--out", str(out), "--sort", column]
    assert main(argv + (["--desc"] if desc else [])) == 0
    got = read_text_csv(out)["thread_id"].tolist()
    assert got == pandas_sorted(metrics.conversations(loaded), column, desc)
    assert main(argv + ["--limit", "3"] + (["--desc"] if desc else [])) == 0
    assert read_text_csv(out)["thread_id"].tolist() == got[:3]


def test_cli_default_order_is_thread_id(loaded, tmp_path):
    out = writer.write_report(loaded, "conversations", tmp_path / "c.csv")
    assert read_text_csv(out)["thread_id"].tolist() == sorted(metrics.conversations(loaded)["thread_id"])


@pytest.mark.parametrize("flags, message", [
    (["--sort", "duration; DROP TABLE messages"], "cannot sort by"),
    (["--sort", "Duration"], "cannot sort by"),  # a label of the app, not a column
    (["--limit", "0"], "--limit must be a positive integer"),
    (["--limit", "ten"], "--limit must be a positive integer"),
])  # fmt: skip
def test_cli_sort_mistakes_are_one_line_naming_the_valid_columns(db, tmp_path, capsys, flags, message):
    out = tmp_path / "x.csv"
    assert main(["report", "conversations", "--db", str(db), "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    if flags[0] == "--sort":
        assert "duration_s" in err and "latency_p90_s" in err  # the valid ones, named
    assert not out.exists()
