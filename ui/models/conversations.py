"""The conversations page: a page of the sorted threads with their metrics, and charts over all of them.

>>> conversations_page("demo.duckdb", min_turns=2).table.head()  # doctest: +SKIP
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analytics import metrics
from analytics.db import ConOrPath, connection
from analytics.filters import Filters, Range
from analytics.frames import fetch_frame
from analytics.reporting.writer import write_report
from analytics.scope import ThreadConditions, scoped_view
from ui.models.frames import gaps_filled, per_day
from ui.models.outcomes import with_outcomes
from ui.models.report_csv import readable_report

LATENCY_BINS = 40
#: Rows per page of the table: sorted and cut in DuckDB, so a page ships this many rows however many match.
PAGE_SIZE = 50


#: Past this many user-turn values the turns chart keeps only the values seen (one bar each).
MAX_TURN_BARS = 100

@dataclass(frozen=True)
class ConversationsPage:
    """One page of the sorted conversations (one row per thread) and charts over all the matching threads."""

    table: pd.DataFrame  # metrics.LIST_COLUMNS, outcome, signals, outcome_reason, outcome_message: rows offset+1 … offset+len of the sort
    matching: int  # threads passing every condition (the sort's rows; the CSV's rows)
    total: int  # threads passing `filters`, before the turn / interrupt / fork / range conditions
    in_database: int  # every thread of the database
    page: int  # 1-based, clamped to the last page
    pages: int  # at least 1
    offset: int  # rows before this page
    conditions: ThreadConditions  # the threads, ready for `conversations_csv`
    latency: pd.DataFrame  # histogram of user→assistant pairs: bin_start, bin_end, model, pairs
    latency_summary: dict[str, Any]  # pairs, median_s, p90_s over the same pairs
    tokens_by_model: pd.DataFrame  # model, kind (input/output), tokens
    turns: pd.DataFrame  # user_turns, threads (a histogram of the matching threads)
    activity: pd.DataFrame  # day, active_conversations, messages, user_messages


#: A spread (largest over smallest positive latency) past which bins grow geometrically: with
#: replies from 1 s to an hour, equal widths put every fast reply in the first bar.
LOG_SPREAD = 50


def latency_top(values: np.ndarray) -> float:
    """The top of the latency histogram's range: the slowest reply, or, when a few far slower ones
    (one, or at most 1 % of the replies) would squeeze every other reply into the first bars, the
    upper fence q3 + 3 × IQR (a reply past it is counted in the last bar). More past the fence are
    a part of the spread, drawn (at equal ratios past `LOG_SPREAD`). With fewer than 8 replies the
    quartiles say too little: the slowest.

    >>> latency_top(np.array([1.0, 1.2, 1.5, 1.8, 2.0, 2.2, 2.5, 3.0, 44.7]))
    5.5
    >>> latency_top(np.array([1.0, 44.7]))
    44.7
    """
    top = float(values.max())
    if len(values) < 8:
        return top
    q1, q3 = np.percentile(values, [25, 75])
    fence = float(q3 + 3 * (q3 - q1))
    few = (values > fence).sum() <= max(1, len(values) // 100)
    return fence if few and values.min() < fence < top else top


def latency_edges(values: np.ndarray, bins: int = LATENCY_BINS) -> np.ndarray:
    """Bin edges for latencies: equal widths, or equal ratios when they spread over `LOG_SPREAD`x;
    at most `bins` of them and no more than the Rice rule's 2 × ∛n for n replies (bars a reader
    can tell apart), up to `latency_top` (a far outlier does not set the scale).

    >>> latency_edges(np.array([1.0, 2.0, 3.0]), bins=2).tolist()
    [1.0, 2.0, 3.0]
    >>> latency_edges(np.array([0.0, 1.0, 10.0, 100.0]), bins=2).round(6).tolist()
    [1.0, 10.0, 100.0]

    Every bin has a width: a spread holding fewer than `bins` floats (one value, 0 s and a
    subnormal 5e-324 s, two neighbouring floats) is widened on both sides, as numpy.histogram
    widens a single value by 0.5.

    >>> latency_edges(np.array([0.0, 5e-324]), bins=2).tolist()
    [-0.5, 0.0, 0.5]
    """
    bins = max(1, min(bins, math.ceil(2 * len(values) ** (1 / 3))))
    values = values[values <= latency_top(values)] if len(values) else values
    positive = values[values > 0]
    if len(positive) and positive.max() > LOG_SPREAD * positive.min():  # (a product: no overflow on a denormal)
        edges = np.geomspace(positive.min(), positive.max(), bins + 1)
        if (np.diff(edges) > 0).all():  # (subnormal latencies have too few floats between them for `bins` ratios)
            return edges
    lo, hi = values.min(), values.max()
    if not np.isfinite(hi - lo):
        raise ValueError(f"latencies from {lo} to {hi} have no finite bins")
    edges, pad = np.linspace(lo, hi, bins + 1), 0.5
    while not (np.diff(edges) > 0).all():
        lo, hi, pad = lo - pad, hi + pad, pad * 2
        edges = np.linspace(lo, hi, bins + 1)
    return edges


def latency_histogram(latency_s: pd.Series, model: pd.Series, bins: int = LATENCY_BINS) -> pd.DataFrame:
    """Pairs per latency bin and model (columns bin_start, bin_end, model, pairs).

    Binned here so a page ships a few hundred bars to the browser, not one value
    per pair (hundreds of thousands on a large corpus).

    >>> latency_histogram(pd.Series([0.0, 1.0, 1.0]), pd.Series(["a", "a", "b"]), bins=2)["pairs"].tolist()
    [1, 1, 1]
    """
    columns = ["bin_start", "bin_end", "model", "pairs"]
    values = latency_s.astype(float).to_numpy()
    if len(values) == 0:
        return pd.DataFrame(columns=columns)
    edges = latency_edges(values, bins)
    # The last bin is closed on the right, like numpy.histogram (a 0 s pair falls in the first bin).
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    # Counted as one integer per (bin, model) pair: counting (bin, model) rows with
    # value_counts took 0.1-0.2 s for 300k pairs, mostly hashing the model strings twice.
    codes, names = pd.factorize(model.fillna("(no model)"), sort=True)
    names = np.asarray(names, dtype=object)
    counts = np.bincount(idx * len(names) + codes, minlength=(len(edges) - 1) * len(names))
    present = np.flatnonzero(counts)  # in (bin, model) order
    bin_, code = np.divmod(present, len(names))
    return pd.DataFrame(
        {"bin_start": edges[bin_], "bin_end": edges[bin_ + 1], "model": names[code], "pairs": counts[present]}
    )


def conversations_page(
    con_or_path: ConOrPath,
    filters: Filters = Filters(),
    min_turns: int = 0,
    pending_only: bool = False,
    forks_only: bool = False,
    ranges: tuple[Range, ...] = (),
    sort: str = metrics.DEFAULT_SORT,
    descending: bool = True,
    page: int = 1,
    page_size: int | None = None,
) -> ConversationsPage:
    """Page `page` of the matching threads sorted by `sort`, with charts over all of them.

    The conditions are applied in SQL (`analytics.scope`) and the sort and the page
    in DuckDB (`metrics.conversation_list_sql`), so the table, its CSV and every
    chart describe exactly the same threads, at any corpus size.

    >>> conversations_page("demo.duckdb", sort="duration_s", page=2).table.head()  # doctest: +SKIP
    """
    metrics.sort_column(sort)  # a bad sort is refused before any query runs
    page_size = page_size or PAGE_SIZE
    with connection(con_or_path) as con:
        # Six queries over the same threads: the threads are found once, not once per query.
        with scoped_view(con, filters, min_turns, pending_only, forks_only, ranges) as (scope, scoped):
            turns = fetch_frame(con, *metrics.turns_histogram_sql(con, scoped))
            matching = int(turns["threads"].sum())  # (the histogram's rows are the matching threads)
            ((in_database,),) = con.execute(*metrics.conversation_count_sql(con)).fetchall()
            pages = max(1, -(-matching // page_size))
            page = min(max(1, int(page)), pages)
            offset = (page - 1) * page_size
            table = fetch_frame(con, *metrics.conversation_list_sql(con, scoped, sort, descending, page_size, offset))
            table = with_outcomes(con, table)  # the page's rows only
            latency = metrics.latency_distribution(con, scoped, columns=("latency_s", "model"))
            models = metrics.by_model(con, scoped, latency=False, conversations=False)  # the page draws their tokens
            daily = metrics.daily(con, scoped, latency=False)  # and daily activity
    tokens = models.melt(
        id_vars="model", value_vars=["input_tokens", "output_tokens"], var_name="kind", value_name="tokens"
    )
    tokens["kind"] = tokens["kind"].str.removesuffix("_tokens")
    tokens = tokens[tokens["tokens"].notna()].reset_index(drop=True)
    activity = per_day(daily)[["day", "active_conversations", "messages", "user_messages"]]
    # Quiet days and unseen turn counts as zeros, so both axes step evenly (a whole-number axis only
    # while it stays short enough to draw a bar for each value).
    if len(activity):
        activity = gaps_filled(activity, "day", pd.date_range(activity["day"].min(), activity["day"].max(), freq="D",
                                                               unit="ms", name="day"))
    if len(turns) and int(turns["user_turns"].max()) - int(turns["user_turns"].min()) < MAX_TURN_BARS:
        turns = gaps_filled(turns, "user_turns", pd.RangeIndex(int(turns["user_turns"].min()),
                                                               int(turns["user_turns"].max()) + 1))
    values = latency["latency_s"].astype(float)
    summary = {
        "pairs": len(values),
        "median_s": float(values.median()) if len(values) else None,
        "p90_s": float(values.quantile(0.9)) if len(values) else None,
        "max_s": float(values.max()) if len(values) else None,
        "top_s": latency_top(values.to_numpy()) if len(values) else None,  # (the last bar holds the slower)
    }
    return ConversationsPage(
        table, matching, scope.total, in_database, page, pages, offset, scope.conditions,
        latency_histogram(latency["latency_s"], latency["model"]), summary, tokens, turns, activity,
    )  # fmt: skip


def conversations_csv(
    con_or_path: ConOrPath, conditions: Filters, sort: str = metrics.DEFAULT_SORT, descending: bool = True,
    shown: tuple[tuple[str, str, str], ...] | None = None,
) -> bytes:
    """Every row of the sorted list as a CSV; DuckDB writes it, and the bytes are read back once,
    on the download click.

    `shown` (the table's columns: name, header, kind) makes it the CSV of the page's table: its
    columns in its order under its headers (`report_csv.csv_header`), its outcome and signal labels and its
    Why (`why_text` of the report's `outcome_reason`), times
    to the second in UTC; numbers stay numbers (the header names their unit). Without `shown`,
    the `conversations` report (the CLI's very format and columns).
    """
    with tempfile.TemporaryDirectory(prefix="tl-conversations-") as tmp:
        out = write_report(con_or_path, "conversations", Path(tmp) / "conversations.csv", conditions,
                           {"sort": sort, "desc": descending})  # fmt: skip
        if shown is None:
            return out.read_bytes()
        return readable_report(out, shown)
