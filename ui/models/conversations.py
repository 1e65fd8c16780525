"""The conversations page: one row per thread with its metrics, and charts over the same threads.

>>> conversations_page("demo.duckdb", min_turns=2).table.head()  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analytics import metrics
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.scope import thread_scope
from ui.models.frames import per_day

#: Columns of the conversations table (and of its CSV download), in order.
CONVERSATION_TABLE_COLUMNS = (
    "thread_id",
    "tenant_id",
    "sub_tenant_id",
    "messages",
    "user_turns",
    "assistant_messages",
    "tool_calls",
    "first_ts",
    "last_ts",
    "duration_s",
    "latency_median_s",
    "latency_p90_s",
    "total_tokens",
    "models",
    "forks",
    "interrupt_pending",
    "resume_points",
    "removed_messages",
    "edited_messages",
)

LATENCY_BINS = 40
#: Rows the conversations table draws; beyond this a browser table only costs (34 MB for 176k threads).
TABLE_MAX = 5_000


@dataclass(frozen=True)
class ConversationsPage:
    """The conversations table (one row per thread) and its charts, over the same threads."""

    table: pd.DataFrame  # CONVERSATION_TABLE_COLUMNS, most recently active first, at most TABLE_MAX rows
    matching: pd.DataFrame  # every matching thread (same columns and order): the "all rows" download
    total: int  # threads passing `filters` before the turn / interrupt / fork conditions
    latency: pd.DataFrame  # histogram of user→assistant pairs: bin_start, bin_end, model, pairs
    latency_summary: dict[str, Any]  # pairs, median_s, p90_s over the same pairs
    tokens_by_model: pd.DataFrame  # model, kind (input/output), tokens
    turns: pd.DataFrame  # user_turns, threads (a histogram of the table)
    activity: pd.DataFrame  # day, active_conversations, messages, user_messages


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
    edges = np.histogram_bin_edges(values, bins=bins)
    # The last bin is closed on the right, like numpy.histogram.
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
) -> ConversationsPage:
    """`metrics.conversations` narrowed by user turns, pending interrupt and forks, with its charts.

    The conditions are applied in SQL (`analytics.scope`), so the table and every
    chart describe exactly the same threads.
    """
    with connection(con_or_path) as con:
        scope = thread_scope(con, filters, min_turns, pending_only, forks_only)
        scoped = scope.conditions
        conv = metrics.conversations(con, scoped, columns=CONVERSATION_TABLE_COLUMNS)  # user_turns included
        latency = metrics.latency_distribution(con, scoped, columns=("latency_s", "model"))
        models = metrics.by_model(con, scoped, latency=False)  # the page draws their tokens
        daily = metrics.daily(con, scoped, latency=False)  # and daily activity
    tokens = models.melt(
        id_vars="model", value_vars=["input_tokens", "output_tokens"], var_name="kind", value_name="tokens"
    )
    tokens["kind"] = tokens["kind"].str.removesuffix("_tokens")
    tokens = tokens[tokens["tokens"].notna()].reset_index(drop=True)
    activity = per_day(daily)[["day", "active_conversations", "messages", "user_messages"]]
    values = latency["latency_s"].astype(float)
    summary = {
        "pairs": len(values),
        "median_s": float(values.median()) if len(values) else None,
        "p90_s": float(values.quantile(0.9)) if len(values) else None,
    }
    turns = conv["user_turns"].value_counts().sort_index().rename("threads").rename_axis("user_turns").reset_index()
    # Newest first, ties by thread id: `conversations()` answers by thread id, so a
    # stable sort on last_ts alone gives that order without sorting 176k strings
    # (0.1-0.2 s of the page on a million messages).
    matching = (
        conv[list(CONVERSATION_TABLE_COLUMNS)]
        .sort_values("last_ts", ascending=False, na_position="last", kind="stable")
        .reset_index(drop=True)
    )
    return ConversationsPage(
        matching.head(TABLE_MAX),
        matching,
        scope.total,
        latency_histogram(latency["latency_s"], latency["model"]),
        summary,
        tokens,
        turns,
        activity,
    )
