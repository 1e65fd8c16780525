"""`ui.models.resume_qa`: the Resume QA page's shapes over the analytics answers they are made of.

On the session store loaded by the real loader; its `second_process` thread is
the restart (two turns, three idle hours, two more turns from a second OS process).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from analytics import resume
from analytics.db import connect
from analytics.errors import BadRequest
from analytics.filters import Filters
from tests.analytics.conftest import edited_copy
from ui.models import resume_qa
from ui.models.resume_qa import LATEST, RISK_TABLE_COLUMNS, WINDOW_TABLE_COLUMNS


@pytest.fixture()
def restart(sqlite_store) -> str:
    return sqlite_store.thread("second_process")


def test_the_risk_overview_is_risks_in_the_page_columns_with_a_label_per_thread(con):
    got = resume_qa.risk_overview(con, Filters(), 50)
    ranked = resume.risks(con, Filters(), 50)
    want = ranked[list(RISK_TABLE_COLUMNS)].assign(flags=ranked["flags"].map(resume_qa.flags_text))
    pd.testing.assert_frame_equal(got.table, want)
    assert list(got.labels) == ranked["thread_id"].tolist()
    for row in ranked.itertuples():  # (the risk and the flags in the table's words: "risk", not "score")
        flags = " · " + resume_qa.flags_text(row.flags) if isinstance(row.flags, str) and row.flags else ""
        assert got.labels[row.thread_id] == f"{row.thread_id} · risk {row.risk_score}{flags}"
    assert any(" · " in label.split("risk ", 1)[1] for label in got.labels.values())  # some thread has flags


def pandas_sorted(frame: pd.DataFrame, column: str, descending: bool) -> list[str]:
    """The expected order, by pandas: thread ids first, then a stable sort on `column`, NULLs last."""
    frame = frame.sort_values("thread_id", kind="stable")
    return frame.sort_values(column, ascending=not descending, na_position="last", kind="stable")["thread_id"].tolist()


def every_page(con, page_size: int, **kwargs) -> list[str]:
    first = resume_qa.risk_overview(con, page_size=page_size, **kwargs)
    ids = first.table["thread_id"].tolist()
    assert first.pages == max(1, -(-first.matching // page_size))
    for page in range(2, first.pages + 1):
        view = resume_qa.risk_overview(con, page=page, page_size=page_size, **kwargs)
        assert view.offset == (page - 1) * page_size and view.matching == first.matching and view.page == page
        assert list(view.labels) == view.table["thread_id"].tolist()  # the picker offers the page's threads
        ids += view.table["thread_id"].tolist()
    return ids


# The live query's rows are sorted by the same ORDER BY as the table's (`risk_list_sql` wraps either
# source alike): every column is sorted on the table; on the live query, one column of each kind
# (the id alone, a score, a timestamp, a text) — each page a live query of its own.
LIVE_SORTS = ("thread_id", "risk_score", "last_ts", "flags")


@pytest.mark.parametrize("cap", [resume.DEFAULT_CAP, 3])  # the load-time table, and the live query
def test_paging_any_sort_gives_every_thread_once_in_pandas_order(con, cap):
    full = resume.risks(con, Filters(), cap)
    assert len(full) > 7
    # (the live query runs once a page: it is paged in two, the table in pages of 3)
    size = 3 if cap == resume.DEFAULT_CAP else -(-len(full) // 2)
    assert set(LIVE_SORTS) <= set(resume_qa.SORTABLE)
    for column in resume_qa.SORTABLE if cap == resume.DEFAULT_CAP else LIVE_SORTS:
        for descending in (False, True):
            ids = every_page(con, size, cap=cap, sort=column, descending=descending)
            assert ids == pandas_sorted(full, column, descending), (column, descending)
    # The default is risks()' own ranking, and the CSV's rows are the whole sorted list, its flags in words.
    assert every_page(con, 4, cap=cap) == full["thread_id"].tolist()
    table = resume_qa.risk_table(con, Filters(), cap, resume.DEFAULT_GAP_MINUTES, False, "window_size", False)
    want = full.set_index("thread_id", drop=False).loc[pandas_sorted(full, "window_size", False),
                                                       list(RISK_TABLE_COLUMNS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(table, want.assign(flags=want["flags"].map(resume_qa.flags_text)))


def test_ties_and_missing_values_are_broken_by_thread_id(loaded, tmp_path):
    db = edited_copy(
        loaded, tmp_path / "ties.duckdb",
        f"UPDATE {resume.RISKS_TABLE} SET last_ts = NULL WHERE thread_id IN "
        f"(SELECT thread_id FROM {resume.RISKS_TABLE} ORDER BY thread_id LIMIT 3)",
    )  # fmt: skip
    with connect(db) as c:
        full = resume.risks(c)
        assert full["last_ts"].isna().sum() == 3 and full["risk_score"].duplicated().any()
        for column in ("last_ts", "risk_score"):
            for descending in (False, True):
                ids = every_page(c, 2, sort=column, descending=descending)
                assert ids == pandas_sorted(full, column, descending), (column, descending)
        nulls_last = every_page(c, 2, sort="last_ts", descending=False)[-3:]
        assert nulls_last == sorted(full.loc[full["last_ts"].isna(), "thread_id"])  # NULLs last both ways


def test_restarted_only_and_filters_are_applied_before_the_page(con, restart):
    full = resume.risks(con)
    restarted = full[full["resume_points"] > 0]
    assert 0 < len(restarted) < len(full) and restart in set(restarted["thread_id"])
    view = resume_qa.risk_overview(con, restarted_only=True, page_size=1)
    assert view.matching == len(restarted) and view.pages == len(restarted)
    assert every_page(con, 1, restarted_only=True) == restarted["thread_id"].tolist()
    tenant = full["tenant_id"].dropna().iloc[0]
    mine = full[full["tenant_id"] == tenant]
    assert every_page(con, 2, filters=Filters(tenants=(tenant,))) == mine["thread_id"].tolist()


def test_a_page_past_the_end_shows_the_last_and_a_bad_sort_is_refused(con):
    last = resume_qa.risk_overview(con, page=10_000, page_size=5)
    assert last.page == last.pages and last.offset == (last.pages - 1) * 5 and 0 < len(last.table) <= 5
    assert resume_qa.risk_overview(con, page=0, page_size=5).page == 1
    with pytest.raises(BadRequest, match="cannot sort"):
        resume_qa.risk_overview(con, sort="risk_score; DROP TABLE threads")


def test_the_risk_overview_reads_the_loaders_risk_table(loaded, tmp_path):
    doctored = edited_copy(loaded, tmp_path / "doctored.duckdb", f"UPDATE {resume.RISKS_TABLE} SET risk_score = -1")
    with connect(doctored) as c:
        assert set(resume_qa.risk_overview(c).table["risk_score"]) == {-1}


def test_a_restart_shows_the_window_at_its_resume_point_and_marks_it(con, restart):
    qa = resume_qa.thread_qa(con, restart)
    point = resume.resume_points(con, restart).iloc[0]
    assert qa.problem is None and qa.at == "1" and qa.at_options == ("1", LATEST)
    pd.testing.assert_frame_equal(qa.points, resume.resume_points(con, restart))
    pd.testing.assert_frame_equal(qa.risks, resume.thread_risks(con, restart))
    assert qa.window_checkpoint_id == point.before_checkpoint_id
    expected = resume.expected_window(con, restart, point.before_checkpoint_id)
    pd.testing.assert_frame_equal(qa.window, expected[list(WINDOW_TABLE_COLUMNS)])
    # The timeline is analytics' plus the chart's legend group and hover text.
    line = resume.timeline(con, restart)
    pd.testing.assert_frame_equal(qa.timeline[list(line.columns)], line)
    assert set(qa.timeline["branch"]) == {"current branch"}
    after = qa.timeline.set_index("checkpoint_id").loc[point.after_checkpoint_id]
    assert after["label"] == (
        f"{after['source']} · step {after['step']} · {after['message_count']} messages · {after['process']} · after #1"
    )
    # One marker per resume point, in time and in steps.
    steps = dict(zip(line["checkpoint_id"], line["step"]))
    (marker,) = qa.markers.itertuples()
    assert marker.label == "resume #1" and (marker.before_ts, marker.after_ts) == (point.before_ts, point.after_ts)
    assert marker.before_step == steps[point.before_checkpoint_id]
    assert marker.after_step == steps[point.after_checkpoint_id]


def test_latest_and_an_unknown_choice(con, restart):
    latest = resume_qa.thread_qa(con, restart, at=LATEST)
    assert latest.at == LATEST and latest.window_checkpoint_id == resume.latest_root(con, restart)
    pd.testing.assert_frame_equal(latest.window, resume.expected_window(con, restart)[list(WINDOW_TABLE_COLUMNS)])
    assert resume_qa.thread_qa(con, restart, at="7").at == "1"  # names no resume point: the first one
    # A gap no pause exceeds still finds the process change; a cap of 1 keeps the last message.
    small = resume_qa.thread_qa(con, restart, gap_minutes=10_000, cap=1, at="1")
    assert small.points["reason"].tolist() == ["process_change"] and len(small.window) == 1


def test_a_thread_without_resume_points_shows_the_latest_window(con, sqlite_store):
    thread = sqlite_store.threads_of("simple_chat")[0]
    qa = resume_qa.thread_qa(con, thread)
    assert qa.at == LATEST and qa.at_options == (LATEST,) and qa.points.empty and qa.markers.empty
    assert len(qa.window) > 0 and qa.window_checkpoint_id == resume.latest_root(con, thread)


def test_a_problem_instead_of_a_traceback_with_typed_empty_frames(con, sqlite_store):
    qa = resume_qa.thread_qa(con, "no:such:thread")
    assert qa.problem.kind == "not_found" and "no thread 'no:such:thread'" in qa.problem.message
    no_points = resume.resume_points(con, sqlite_store.threads_of("simple_chat")[0])
    assert no_points.empty
    pd.testing.assert_frame_equal(qa.points, no_points)
    assert list(qa.window.columns) == list(WINDOW_TABLE_COLUMNS) and qa.window.empty
    assert list(qa.risks.columns) == list(resume.THREAD_RISK_COLUMNS) and qa.risks.empty
    assert "cap must be" in resume_qa.thread_qa(con, sqlite_store.threads_of("simple_chat")[0], cap=-1).problem.message


def test_an_observed_check_counts_what_the_page_headlines(con, restart):
    point = resume.resume_points(con, restart).iloc[0]
    window = resume.expected_window(con, restart, point.before_checkpoint_id)
    lines = [
        {"thread_id": restart, "checkpoint_id": point.before_checkpoint_id, "position": int(w.position),
         "speaker": w.speaker, "content": w.content}
        for w in window.itertuples()
    ]  # fmt: skip
    faithful = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
    check = resume_qa.observed_check(con, faithful)
    assert (len(check.summary), check.passed, check.failed, check.uncompared) == (1, 1, 0, 0)
    assert check.findings.empty
    lines[0]["speaker"] = "assistant"
    broken = ("\n".join(json.dumps(x) for x in lines) + "\n{oops\n" + json.dumps({**lines[1], "thread_id": "x:y:z"})
              + "\n").encode()
    check = resume_qa.observed_check(con, broken)
    assert (check.passed, check.failed, check.uncompared) == (0, 1, 2)
    assert sorted(check.findings["kind"]) == ["malformed", "unresolved", "wrong_speaker"]


def test_labels_and_the_flag_legend():
    assert resume_qa.at_label(LATEST) == "latest checkpoint (a restart now)" and resume_qa.at_label("3") == "resume #3"
    legend = resume_qa.flag_legend().splitlines()
    assert len(legend) == len(resume.RISK_FLAGS)
    assert legend[0].startswith("- **resumes from an older turn** (weight 5; its column ")
    assert resume_qa.MAX_RISK_SCORE == sum(f.weight for f in resume.RISK_FLAGS) > 0


def test_the_flag_legend_names_each_flag_as_the_csv_has_it(con):
    """Each flag's line names the header of the CSV column its figure is in (as the download heads
    it) and the code docs/resume_qa.md names it by; no column by its stored name. The CSV's Flags
    column writes the flags in the legend's words, as the table does."""
    import re

    from analytics.resume.risk_figures import _FLAG_CONDITIONS
    from ui import columns
    from ui.formats import readable

    table = resume_qa.risk_table(con, Filters(), 50, 30.0, False, "risk_score", True)
    headers = dict(zip(table.columns, readable(table.head(0), columns.risks(resume_qa.MAX_RISK_SCORE)).columns))
    lines = resume_qa.flag_legend().splitlines()
    assert len(lines) == len(resume.RISK_FLAGS)
    for flag, line in zip(resume.RISK_FLAGS, lines, strict=True):
        behind = [c for c in re.findall(r"[a-z_]+", _FLAG_CONDITIONS[flag.name]) if c in headers]
        assert behind and any(f"“{headers[c]}”" in line for c in behind), line
        assert f"`{flag.name}` in docs/resume_qa.md" in line, line
        assert not [c for c in re.findall(r"`([a-z_]+)`", line) if c in headers and c != flag.name], line
    words = {w for flags in table["flags"] for w in flags.split(", ") if w}
    assert words and words <= set(resume_qa.FLAG_WORDS.values()), words
