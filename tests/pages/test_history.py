"""AppTests of the transcript page's History section (ui/history.py) on the demo database.

The demo's `globex:api:sess-2105` was forked by a replay of its last answer (the old answer lives
only on the abandoned branch), `initech:helpdesk:sess-5005` had an answer edited by an operator
(extension 4401 → 4410) and `globex:api:sess-2106` runs a `research` subgraph holding a `fetch`
one (demo/README.md).
"""

from __future__ import annotations

import json

import analytics
from analytics.history.branches import branch_head
from analytics.history.diff import diff, diff_counts
from tests.pages.conftest import captions, markdown_texts, metric, open_page
from ui import diffs

FORKED = "globex:api:sess-2105"
EDITED = "initech:helpdesk:sess-5005"
SUBGRAPH = "globex:api:sess-2106"


def _notes(at) -> list[str]:
    return [m.value for m in at.markdown if "border-left:4px" in m.value]


def _table(at, column: str):
    found = [f.value for f in at.dataframe if column in f.value.columns]
    assert len(found) == 1, [list(f.value.columns)[:4] for f in at.dataframe]
    return found[0]


def test_hidden_the_section_is_one_line_that_counts_the_history(app):
    at = open_page(app, "transcript", thread=FORKED)
    toggle = at.toggle(key="transcript.history")
    assert toggle.value is False and "2 branches (1 abandoned)" in toggle.label
    assert not at.tabs and not _notes(at)
    assert "1 edit" in open_page(app, "transcript", thread=EDITED).toggle(key="transcript.history").label


def test_the_branch_picker_reads_the_abandoned_branch_with_its_fork_point(app, con):
    at = open_page(app, "transcript", thread=FORKED, history="1")
    picker = at.selectbox(key="transcript.branch")
    # Where branch 2 forks, in the transcript's numbering: after the messages it shares with branch 1.
    shared = int(analytics.branches(con, FORKED).set_index("branch").at[2, "fork_messages"])
    assert picker.value == 1 and picker.options == [
        "branch 1 · current · 4 messages · last 2025-03-10 10:03",
        f"branch 2 · abandoned · 4 messages · forks after message {shared} · last 2025-03-10 10:02",
    ]
    branches = _table(at, "fork_checkpoint_id")
    assert branches["status"].tolist() == ["current", "abandoned"]
    # The tree (an ECharts chart: the page loads no plotly): both lanes, each checkpoint once, in
    # its branch's lane, and a line from each checkpoint to its parent.
    assert not at.get("plotly_chart")
    tree = analytics.checkpoint_tree(con, FORKED)
    (chart,) = at.get("echarts_chart")
    spec = json.loads(chart.proto.spec)
    assert spec["yAxis"]["data"] == ["branch 1 · current", "branch 2 · abandoned"]
    points = {p["value"][2]: p["value"][1] for s in spec["series"] if s["type"] == "scatter" for p in s["data"]}
    assert len(tree) == 8 and points == {c: b - 1 for c, b in zip(tree["checkpoint_id"], tree["branch"])}
    (lines,) = [s for s in spec["series"] if s["type"] == "lines"]
    assert len(lines["data"]) == tree["parent_checkpoint_id"].notna().sum()
    # The current branch marks where branch 2 leaves it.
    assert any("Branch 2 (abandoned, original run) forks here" in n for n in _notes(at))
    picker.set_value(2).run()
    assert not at.exception and at.query_params["branch"] == "2"
    abandoned = analytics.read(con, FORKED, checkpoint_id=branch_head(con, FORKED, 2))
    old_answer = abandoned["content"].iloc[-1]
    assert old_answer not in set(analytics.read(con, FORKED)["content"])  # only on the abandoned branch
    shown = [m.value for m in at.markdown]
    assert old_answer in shown
    notes = _notes(at)
    assert any("Fork point: branch 2 leaves branch 1 here" in n for n in notes)
    assert any(f"read at its last checkpoint `{branch_head(con, FORKED, 2)}`" in c for c in captions(at))


def test_compare_the_abandoned_branch_with_the_current_one(app, con):
    at = open_page(app, "transcript", thread=FORKED, history="1", branch="2")
    assert at.radio(key="transcript.compare_kind").value == "branch"
    assert at.selectbox(key="transcript.compare").value == "b1"
    expected = diff_counts(diff(con, analytics.TranscriptQuery(FORKED), analytics.TranscriptQuery(
        FORKED, checkpoint_id=branch_head(con, FORKED, 2))))
    assert metric(at, "Same") == str(expected["same"]) and metric(at, "Edited") == str(expected["edited"])
    assert expected["same"] == 3 and expected["edited"] == 1
    edited = [m.value for m in at.markdown if "#fff8e1" in m.value and "Message 4 · edited" in m.value]  # (ordinal 3)
    assert len(edited) == 2 and "<del" in edited[0] and "<ins" in edited[1]
    at.toggle(key="transcript.compare_table").set_value(True).run()
    table = _table(at, "matched_by")
    assert table["status"].tolist() == ["same", "same", "same", "edited"]
    assert at.query_params["compare"] == "b1" and at.query_params["compare_table"] == "1"


def test_an_edited_thread_shows_the_edit_inline_and_compares_with_the_state_before_it(app, con):
    at = open_page(app, "transcript", thread=EDITED, history="1")
    notes = [n for n in _notes(at) if "Edited at" in n]
    assert len(notes) == 1 and "update_state" in notes[0]
    assert '<del style="background:#fdd;color:#a00">4401</del>' in notes[0]
    assert '<ins style="background:#dfd;color:#060;text-decoration:none">4410</ins>' in notes[0]
    # Compare with a checkpoint: the state before the edit is offered first.
    at.radio(key="transcript.compare_kind").set_value("checkpoint").run()
    log = analytics.edit_log(con, EDITED)
    assert at.selectbox(key="transcript.compare").value == f"c:{log['parent_checkpoint_id'].item()}"
    assert metric(at, "Edited") == "1" and metric(at, "Same") == "3"
    # The edit log draws the change as the notes do (no "[-4401-]{+4410+}" markup), the message
    # numbered as the transcript numbers it, and no "None" for what an edit does not have.
    (log_html,) = [m for m in markdown_texts(at) if "<table" in m and "Removed before" in m]
    assert '<del style="background:#fdd;color:#a00">4401</del>' in log_html and "[-" not in log_html
    assert f"<td style=\"{diffs._TD}\">Message {int(log['ordinal'].item()) + 1}</td>" in log_html
    assert "None" not in log_html and ">edited<" in log_html


def test_subgraph_runs_sit_under_the_message_that_started_them(app, con):
    at = open_page(app, "transcript", thread=SUBGRAPH, history="1")
    runs = analytics.subgraph_runs(con, SUBGRAPH)
    titles = [e.label for e in at.expander if "Subgraph run" in e.label]
    assert titles == ["↳ Subgraph run `research` started here: 3 messages, 1 nested"] * 2
    assert len(runs) == 4 and _table(at, "tool_call_match")["node"].tolist() == runs["node"].tolist()
    said = [c for c in captions(at) if c.startswith("↳ said in subgraph run research › fetch")]
    assert len(said) == 4  # search and summarize of both turns, said in the nested run


def test_a_link_to_a_branch_the_thread_lacks_reads_the_current_one(app):
    at = open_page(app, "transcript", thread=FORKED, history="1", branch="9")
    assert not at.exception and at.selectbox(key="transcript.branch").value == 1
