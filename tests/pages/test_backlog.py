"""AppTests of the "Waiting on a human" page (pages/backlog.py) on the demo database.

The demo's `acme:web:sess-1008` waits for a supervisor to approve a refund of $89.00 (demo/README.md).
"""

from __future__ import annotations

import io

import pandas as pd

from analytics.history.backlog import BACKLOG_COLUMNS, backlog
from tests.pages.conftest import metric, open_page
from tests.pages.test_privacy import downloads  # noqa: F401  (a fixture: the data of each download button)
from ui.models.backlog import waited_text

WAITING = "acme:web:sess-1008"


def test_the_waiting_thread_its_wait_and_what_it_asks(app, con):
    at = open_page(app, "backlog")
    expected = backlog(con)
    assert expected["thread_id"].tolist() == [WAITING]
    table = at.dataframe[0].value
    assert table["thread_id"].tolist() == [WAITING]
    row = table.iloc[0]
    assert row["waited"] == waited_text(expected["waited_s"].item()) == "2 d 19 h"
    assert "action=issue_refund" in row["request"] and "args.amount=89.0" in row["request"]
    assert metric(at, "Waiting") == "1" and metric(at, "Longest wait") == "2 d 19 h"
    assert any(d.label == "Download every row (CSV)" for d in at.get("download_button"))


def test_controls_live_in_the_url_and_filters_choose_threads(app):
    at = open_page(app, "backlog", until="now", sort="thread_id", order="asc")
    assert at.segmented_control(key="backlog.until").value == "now"
    assert at.selectbox(key="backlog.sort").value == "thread_id"
    waited = at.dataframe[0].value["waited"].item()
    assert waited != "2 d 19 h"  # up to now, not to the newest checkpoint of the snapshot
    at.multiselect(key="backlog.tenant").set_value(["globex"]).run()
    assert not at.dataframe and any("No thread is waiting" in s.value for s in at.success)
    assert at.query_params["tenant"] == "globex"


def test_selecting_a_row_opens_its_transcript(app):
    at = open_page(app, "backlog")
    # AppTest cannot click a dataframe row: the selection arrives as the widget's state.
    at.session_state["backlog.table"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception
    assert at.query_params.get("thread") in (WAITING, [WAITING])


def test_the_csv_holds_every_backlog_column_under_the_tables_headers(app, con, downloads):
    at = open_page(app, "backlog")
    csv = pd.read_csv(io.BytesIO(downloads["backlog.csv"]()))
    assert len(csv.columns) == len(BACKLOG_COLUMNS) + 1  # and over the service level
    assert csv.columns.tolist()[:3] == ["Thread", "Tenant", "Sub-tenant"]  # (the table's headers)
    assert csv["Thread"].tolist() == [WAITING] and "Waiting since (UTC)" in csv.columns
    since = next(t.value for t in at.dataframe)["waiting_since"].item()
    assert csv["Waiting since (UTC)"].item() == since.strftime("%Y-%m-%d %H:%M:%S")
