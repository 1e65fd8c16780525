"""Resume QA (contract §5): would a restart rebuild each conversation's recent-turn window faithfully?

Threads ranked by the risks visible in the store, one thread's checkpoint
timeline with its resume points, the window each resume rebuilds, and the diff
of an uploaded observed JSONL against those windows. docs/resume_qa.md has the
workflow, the JSONL format and every column.
"""

import streamlit as st

from ui import access, cache, charts, columns, flow, markup, render, state, thread_picker
from ui import resume_qa as qa_view
from ui.filters import filter_bar
from ui.models import resume_qa as qa_model

url = state.Url("resume_qa")
db = state.require_db()

st.title("Resume QA")
st.caption(
    "After a restart a runtime rebuilds its recency window from the durable transcript: the last *cap* "
    "user/assistant messages at the checkpoint it resumes from. Resume points are idle gaps between "
    "checkpoints and changes of a run / process id in checkpoint metadata."
)
filters = filter_bar(url, cache.facets(db), text=False)
c_gap, c_cap = flow.row("field", "gap-cap", 2)
gap = c_gap.number_input(
    "Idle gap (minutes)",
    min_value=1,
    step=5,
    key=url.bind("gap", int(qa_model.DEFAULT_GAP_MINUTES), state.INT),
    help="A pause between two consecutive checkpoints longer than this counts as a restart.",
)
cap = c_cap.number_input(
    "Window cap",
    min_value=1,
    step=1,
    key=url.bind("cap", qa_model.DEFAULT_CAP, state.INT),
    help="The runtime's recency-window size (max_entries): how many user/assistant messages are rehydrated.",
)

# --- threads ranked by risk --------------------------------------------------------------
st.subheader("Threads by risk")
c_restarted, c_sort, c_order = flow.row(("control", "field", "control"), "risk-sort", align="bottom")
restarted = c_restarted.toggle(
    "Restarted threads only", key=url.bind("restarted", False, state.BOOL),
    help="Threads with at least one restart: an idle gap over this threshold or a change of run / process id "
         "(a wait on a human's answer is not one).",
)
sort = c_sort.selectbox("Sort by", qa_model.SORTABLE, format_func=columns.RISK_LABELS.get,
                        key=url.bind("sort", qa_model.DEFAULT_SORT, state.choice(qa_model.SORTABLE)))  # fmt: skip
order = c_order.segmented_control("Order", ["desc", "asc"], format_func={"desc": "↓ High first", "asc": "↑ Low first"}.get,
                                  key=url.bind("order", "desc", state.choice(("desc", "asc"))))  # fmt: skip
descending = order != "asc"  # a deselected segmented control (None) keeps the default order
page_key = url.bind("page", 1, state.INT)
page = state.first_page_on_new_question(page_key, (filters, int(cap), float(gap), restarted, sort, descending))
overview = cache.risk_overview(db, filters, int(cap), float(gap), restarted, sort, descending, page)
st.session_state[page_key] = overview.page  # a page past the end (an old link) shows the last one
with st.expander("What the flags mean"):
    st.markdown(qa_model.flag_legend())
st.caption(render.rows_caption(overview.offset, len(overview.table), overview.matching, overview.matching,
                               overview.matching)
           + f" · sorted by {columns.RISK_LABELS[sort]}, {'high first' if descending else 'low first'}"
           " · select a row to inspect it")  # fmt: skip
picked = render.table(
    overview.table,
    key="resume_qa.risks",
    on_select="rerun",
    selection_mode="single-row",
    hide_index=True,
    column_config=columns.risks(qa_model.MAX_RISK_SCORE),
    keep=(sort,),
)
p1, p2 = flow.row(("field", "control"), "page-download", align="bottom")
p1.number_input(f"Page (of {overview.pages:,})", min_value=1, max_value=overview.pages, step=1, key=page_key)
with p2:
    render.download_data(
        lambda: render.csv_bytes(cache.risk_table(db, filters, int(cap), float(gap), restarted, sort, descending),
                                 columns.risks(qa_model.MAX_RISK_SCORE)),
        "resume_risks.csv", key="resume_qa.risks_csv", rows=overview.matching,
        label=render.download_label(overview.matching, "row"),
    )

thread_key = url.bind("thread", None)
thread_picker.refuse_raw_thread(thread_key)  # under masking, a thread opens by its masked id only
rows = picked.selection.rows
if rows and st.session_state.get("resume_qa.picked") != rows:
    # A new table selection picks the thread once; the picker below stays in charge afterwards.
    st.session_state["resume_qa.picked"] = rows
    url.set("thread", overview.table["thread_id"].iloc[rows[0]])
labels = dict(overview.labels)
current = url.value("thread")
if current is not None and current not in labels:
    labels[current] = current  # a linked thread outside the filters still opens
thread = st.selectbox(
    "Thread", list(labels), key=thread_key, index=None, format_func=labels.get, placeholder="Pick a thread…"
)

at_key = url.bind("resume", "")
if thread is None:
    url.publish()
    st.info("Pick a thread (or select a row above) to see its resume points and expected windows.")
    st.stop()

qa = cache.thread_qa(db, thread, float(gap), int(cap), url.value("resume") or None)
if qa.problem is not None:
    url.publish()
    render.problem(qa.problem)
    st.stop()

# --- the thread's timeline -------------------------------------------------------------------
st.subheader(f"Timeline of {markup.code(render.thread_label(thread))}")
n = len(qa.points)
st.caption(
    f"{render.plural(len(qa.timeline), 'root checkpoint')} · {render.plural(n, 'resume point')} "
    f"(idle gap > {int(gap)} min or a new run / process id)"
)
by_step = st.toggle(
    "Checkpoint order (steps) instead of time",
    key=url.bind("steps", False, state.BOOL),
    help="Time shows the idle gaps; steps show the order and the branches (times can tie or go backwards).",
)
render.chart(charts.resume_timeline(qa.timeline, qa.markers, by_step), key="resume_qa.timeline")

if n:
    points = qa_model.points_shown(qa.points)
    render.table(points, key="resume_qa.points", hide_index=True, column_config=columns.headers(points))
    render.download(points, render.file_name("resume_points", thread), key="resume_qa.points_csv")
else:
    st.info("No resume point at this gap: the window below is what a restart now would rebuild.")

st.subheader("Risks of this thread")
if qa.risks.empty:
    st.success("Nothing in the store makes this thread's window doubtful.", icon=":material/check_circle:")
else:
    risks = qa_model.risks_shown(qa.risks)
    render.table(risks, key="resume_qa.thread_risks", hide_index=True, column_config=columns.headers(risks))
    render.download(risks, render.file_name("resume_risks", thread), key="resume_qa.thread_risks_csv")

# --- the expected window ------------------------------------------------------------------------
st.subheader("Expected window")
url.set("resume", qa.at)
st.selectbox("Rehydrated at", qa.at_options, key=at_key, format_func=qa_model.at_label)
url.publish()
st.caption(
    f"Rebuilt from checkpoint {markup.code(qa.window_checkpoint_id)} · {len(qa.window)} of at most {int(cap)} entries · "
    f"every entry tagged `source = {qa_model.RESUME_SOURCE}`"
)
if qa.window.empty:
    st.info("Nothing to rehydrate: no user or assistant message at that checkpoint.")
else:
    shown = qa_model.window_shown(qa.window)
    render.table(shown, key="resume_qa.window", hide_index=True, column_config=columns.window(shown))
    d1, d2 = flow.row("control", "window-downloads", 2)
    with d1:
        render.download(shown, render.file_name("expected_window", thread, qa.at), key="resume_qa.window_csv")
    with d2:
        render.download_data(
            qa.template, render.file_name("expected_window", thread, qa.at).replace(".csv", ".jsonl"),
            key="resume_qa.window_jsonl", label="Download as JSONL template", mime="application/jsonl",
            icon=":material/data_object:",
            help="The lines a faithful runtime logs for this rehydrate, in the observed format: a template for "
                 "your runtime's log (compare it below and it passes).",
        )  # fmt: skip

# --- observed windows ---------------------------------------------------------------------------
st.subheader("Compare an observed window")
st.caption(
    "Upload the JSONL your runtime logged when it rehydrated, in its own field names (one line per entry: thread, "
    "speaker, content, position, optional metadata.source / turn_id, and the time it was logged: recorded_at, "
    "resume_at, ts, timestamp, time or logged_at, ISO or epoch). Each window is placed at the resume it belongs to: "
    "by checkpoint_id, else by its time (at or just after the resume's first checkpoint), else by position order."
)
upload = st.file_uploader("Observed JSONL", type=["jsonl", "ndjson", "json", "txt"], key="resume_qa.observed",
                          max_upload_size=access.OBSERVED_UPLOAD_MB)
check = None
if upload is not None and upload.size > access.OBSERVED_UPLOAD_MB * 1024 * 1024:
    st.error(f"An observed JSONL is at most {access.OBSERVED_UPLOAD_MB} MB; this one is {upload.size / 2**20:,.0f} MB.")
elif upload is not None:
    check = cache.observed_check(db, upload.getvalue(), int(cap), float(gap))
    if check.problem is not None:
        render.problem(check.problem)
        check = None
if check is not None:
    findings, summary = check.findings, check.summary
    render.headline(
        [
            ("Windows checked", render.number(len(summary)), "Observed windows in the file, each placed at a resume"),
            ("Passed", render.number(check.passed), "No finding at all for that window"),
            ("Failed", render.number(check.failed), None),
            ("Findings", render.number(len(findings)), "One row per divergence, bad lines included"),
            (
                "Lines not compared",
                render.number(check.uncompared),
                "Malformed lines, or lines naming an unknown thread / checkpoint",
            ),
        ]
    )
    if len(summary):
        shown = check.summary_shown()
        render.table(shown, key="resume_qa.summary", hide_index=True, column_config=columns.headers(shown))
        render.download(summary, "resume_summary.csv", key="resume_qa.summary_csv", label="Download summary CSV")
    if findings.empty:
        st.success("Every observed window matches its expected window.", icon=":material/check_circle:")
    else:
        shown = check.findings_shown()
        render.table(shown, key="resume_qa.findings", hide_index=True, column_config=columns.headers(shown))
        render.download(findings, "resume_findings.csv", key="resume_qa.findings_csv", label="Download findings CSV")
    if len(summary):
        st.subheader("Expected and observed, side by side")
        labels = check.window_labels
        failed = [w for w, ok in zip(summary["window"], summary["passed"]) if not ok]
        window = st.selectbox("Window", list(labels), index=list(labels).index(failed[0]) if failed else 0,
                              format_func=labels.get, key="resume_qa.window_pick")  # fmt: skip
        st.caption(summary.loc[summary["window"] == window, "attribution"].item())
        qa_view.side_by_side(check.side_by_side(window))
