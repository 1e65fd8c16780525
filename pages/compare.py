"""Compare: two cohorts (tenants, days, models, checkpoint metadata) on every figure, with intervals and tests."""

import streamlit as st

from ui import cache, charts, markup, render, state
from ui.compare_prices import price_source
from ui.filters import filter_bar
from ui.models import compare as model

url = state.Url("compare")
db = state.require_db()

st.title("Compare")
st.caption(
    "Two cohorts side by side on every per-conversation figure, outcome signal, outcome and topic: the "
    "difference (B − A) with its 95 % interval, a test's p and the Benjamini-Hochberg q over all rows. "
    "A row is marked when q < 0.05."
)
facets = cache.facets(db)
base = filter_bar(url, facets, text=False)
more = cache.call(model.cohort_facets, db)
metas = model.meta_choices(more)
default_a, default_b = model.default_cohorts(more)


def cohort(side: str, where, default: model.Defaults):
    """One cohort's widgets (bound to the URL as `<side>_…`): its `Filters`, and its values by the
    Conversations page's param names (for the links that list its threads)."""
    where.subheader(f"Cohort {side.upper()}")
    c1, c2 = where.columns(2)
    tenants = c1.multiselect("Tenant", facets.tenants, key=url.bind(f"{side}_tenant", [], state.subset(facets.tenants)),
                             placeholder="as above")
    meta = c2.multiselect("Metadata", metas, key=url.bind(f"{side}_meta", default.meta, state.subset(metas)),
                          placeholder="any", help="The transcript checkpoint's metadata holds KEY = VALUE")
    # Two fields a row: a third beside the dates left each date a third of half the page, its text cut off.
    c3, c4 = where.columns(2)
    first = c3.date_input("From", value=None, key=url.bind(f"{side}_from", None, state.DATE))
    last = c4.date_input("To", value=None, key=url.bind(f"{side}_to", None, state.DATE))
    models = where.multiselect("Model", more.models, key=url.bind(f"{side}_model", default.models, state.subset(more.models)),
                               placeholder="any")
    values = {"tenant": tenants, "from": first, "to": last, "model": models, "meta": meta}
    return model.cohort_filters(base, tenants, first, last, models, meta), values


left, right = st.columns(2, gap="large")
a, a_values = cohort("a", left, default_a)
b, b_values = cohort("b", right, default_b)
c1, c2 = st.columns([1, 3], vertical_alignment="bottom")
significant_only = c1.checkbox("Marked rows only", key=url.bind("marked", False, state.BOOL))
with c2.expander("Cost: price table", icon=":material/payments:"):
    prices = price_source()
url.publish()

if a == b:
    st.info("Both cohorts are the same threads: choose a tenant, days, a model or a metadata value for A or B.",
            icon=":material/compare_arrows:")
    st.stop()
view = cache.call(model.compare_page, db, a, b, prices, significant_only)

markup.markdown(f"**A**: {model.cohort_text(a_values)} &nbsp;·&nbsp; **B**: {model.cohort_text(b_values)}")
render.headline([
    ("Threads in A", render.number(view.threads_a), None),
    ("Threads in B", render.number(view.threads_b), None),
    ("In both", render.number(view.overlap), "The tests assume two separate samples; an overlap weakens them"),
    ("Marked differences", render.number(view.significant), "Rows with Benjamini-Hochberg q < 0.05"),
])
if view.price_problem:
    st.error(view.price_problem)
if view.unpriced_models:
    st.warning("No price for " + ", ".join(view.unpriced_models) + ": the cost row leaves their conversations out.")
if min(view.threads_a, view.threads_b) == 0:
    st.warning("A cohort has no threads: nothing to compare.")
    st.stop()

if model.overlap_warning(view):
    st.warning(model.overlap_warning(view), icon=":material/join_inner:")
st.caption(model.verdict(view) + " · Select a signal or outcome row to list its conversations in A and in B.")
# (the difference, its interval and whether it is marked decide a row: they show at any width)
config = {
    "figure": st.column_config.TextColumn("Figure", pinned=True, width="medium"), "kind": "Kind", "a": "A", "b": "B",
    "difference": "B − A", "ci95": "95 % interval", "p": "p-value", "test": "Test", "q": "q (BH)",
    "significant": st.column_config.TextColumn("Marked", help="q < 0.05"), "n": "n (A / B)",
}
picked = render.table(view.table, hide_index=True, key="compare.table", height=min(36 * (len(view.table) + 1) + 3, 940),
                      keep=("difference", "ci95", "significant"), on_select="rerun", selection_mode="single-row",
                      column_config=config)
row = view.shown.iloc[picked.selection.rows[0]] if picked.selection.rows and view.shown is not None else None
narrow = row is not None and row["kind"] in ("signal", "outcome")
shared = {k: v for k, v in url.params().items() if k in state.SHARED}
for column, side, values in zip(st.columns(2), ("a", "b"), (a_values, b_values)):
    n = int(row[f"count_{side}"]) if narrow else getattr(view, f"threads_{side}")
    what = f" · {model.figure(row['kind'], row['name'], row['label'])}" if narrow else ""
    column.page_link("pages/conversations.py", icon=":material/list:", label=f"List cohort {side.upper()}'s {render.plural(n, 'conversation')}{what}",
                     query_params=state.link_params(**model.conversation_params(
                         shared, values, row["kind"] if narrow else None, row["name"] if narrow else None)))
render.download(model.csv_table(view.frame), "compare.csv", key="compare.csv", label="Download every row (CSV)",
                headers=config)

for column, (name, (title, _)) in zip(st.columns(2), charts.COMPARE_CHARTS.items()):
    with column:
        render.chart_panel(title, getattr(view, name), "differences", lambda f, name=name: charts.compare_chart(name, f),
                           key=f"compare.{name}")

if view.costs is not None:
    st.subheader("Cost by outcome")
    render.table(view.costs, hide_index=True, key="compare.costs", column_config={
        "outcome": "Outcome", "conversations_a": "Conversations A", "cost_a": st.column_config.NumberColumn("Cost A", format="%.4f"),
        "unpriced_tokens_a": "Unpriced tokens A", "conversations_b": "Conversations B",
        "cost_b": st.column_config.NumberColumn("Cost B", format="%.4f"), "unpriced_tokens_b": "Unpriced tokens B",
    })
    render.download(view.costs, "cost_by_outcome.csv", key="compare.costs_csv")
