"""The Conversations list sorted by its preview column, and the metric ranges of `report
conversations` (--min / --max), against pandas over the unsorted, unfiltered list."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from analytics import metrics
from analytics.errors import BadRequest
from analytics.reporting.writer import report_frame


@pytest.mark.parametrize("descending", [False, True])
def test_sorting_by_the_first_question_sorts_every_thread_by_its_preview(con, descending):
    everything = metrics.conversation_list(con)
    expected = everything.sort_values(["first_user_message", "thread_id"], ascending=[not descending, True],
                                      na_position="last", kind="stable")
    got = metrics.conversation_list(con, sort="first_user_message", descending=descending)
    assert got["thread_id"].tolist() == expected["thread_id"].tolist()
    assert got["first_user_message"].isna().sum() == everything["first_user_message"].isna().sum()
    page = metrics.conversation_list(con, sort="first_user_message", descending=descending, limit=3, offset=2)
    assert page["thread_id"].tolist() == expected["thread_id"].tolist()[2:5]


def test_report_ranges_keep_the_threads_within_every_bound(con, loaded, tmp_path):
    everything = metrics.conversation_list(con)
    options = {"min": ["duration_s=60", "user_turns=2"], "max": ["tool_errors=0"]}
    frame = report_frame(con, "conversations", options=options)
    keep = (everything["duration_s"] >= 60) & (everything["user_turns"] >= 2) & (everything["tool_errors"] <= 0)
    assert 0 < keep.sum() < len(everything)
    assert sorted(frame["thread_id"]) == sorted(everything.loc[keep, "thread_id"])
    # The same from the command line, sorted and cut in DuckDB.
    out = tmp_path / "c.csv"
    done = subprocess.run([sys.executable, "-m", "transcript_lens", "report", "conversations", "--db", str(loaded),
                           "--out", str(out), "--min", "duration_s=60", "--min", "user_turns=2", "--max", "tool_errors=0",
                           "--sort", "duration_s", "--desc", "--limit", "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    top = everything[keep].sort_values(["duration_s", "thread_id"], ascending=[False, True]).head(2)
    assert pd.read_csv(out)["thread_id"].tolist() == top["thread_id"].tolist()


@pytest.mark.parametrize("given", ["duration_s", "nope=3", "duration_s=soon"])
def test_a_bad_range_names_the_flag_and_the_columns(con, given):
    with pytest.raises(BadRequest, match="--min .*give COLUMN=NUMBER, COLUMN one of messages, user_turns"):
        report_frame(con, "conversations", options={"min": [given]})
