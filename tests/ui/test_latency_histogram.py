"""`ui.models.conversations.latency_histogram` against numpy.histogram run per model on the same edges
(values below the first edge, a 0 s pair under ratio bins, counted in the first bin)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ui.charts import histogram_bars
from ui.models.conversations import LOG_SPREAD, latency_edges, latency_histogram

_pairs = st.lists(
    st.tuples(
        st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
        st.sampled_from(["gpt-4o", "claude", "a", "Z", None]),
    ),
    max_size=60,
)


def _reference(values: list[float], models: list[str | None], bins: int) -> pd.DataFrame:
    edges = latency_edges(np.array(values, dtype=float), bins=bins)
    named = np.array(["(no model)" if m is None else m for m in models], dtype=object)
    clipped = np.clip(np.array(values, dtype=float), edges[0], edges[-1])
    rows = []
    for name in sorted(set(named)):
        counts, _ = np.histogram(clipped[named == name], bins=edges)
        rows += [(b, name, int(n)) for b, n in enumerate(counts) if n]
    rows.sort(key=lambda r: (r[0], r[1]))  # by bin, then model
    return pd.DataFrame({
        "bin_start": [edges[b] for b, _, _ in rows],
        "bin_end": [edges[b + 1] for b, _, _ in rows],
        "model": [m for _, m, _ in rows],
        "pairs": [n for _, _, n in rows],
    })


@settings(max_examples=200, deadline=None)
@given(_pairs, st.integers(min_value=1, max_value=12), st.booleans())
# Spreads with fewer floats in them than bins: a subnormal latency over 0 s, subnormals 60x apart
# (too close for 12 equal ratios), two neighbouring floats.
@example([(0.0, "a"), (5e-324, "a")], 2, False)
@example([(5e-324, "a"), (3e-322, "claude")], 12, False)
@example([(1.0, "a"), (1.0000000000000002, "a")], 3, True)
def test_every_pair_is_counted_once_in_its_bin_and_model(pairs, bins, arrow_strings):
    values = [v for v, _ in pairs]
    models = [m for _, m in pairs]
    if pairs:
        assert (np.diff(latency_edges(np.array(values), bins)) > 0).all()  # every bin has a width
    model = pd.Series(models, dtype="string[pyarrow]" if arrow_strings else object)
    got = latency_histogram(pd.Series(values, dtype=float), model, bins=bins)
    assert list(got.columns) == ["bin_start", "bin_end", "model", "pairs"]
    if not pairs:
        assert got.empty
        return
    want = _reference(values, models, bins)
    assert got["pairs"].sum() == len(pairs)
    assert got["bin_start"].tolist() == want["bin_start"].tolist()
    assert got["bin_end"].tolist() == want["bin_end"].tolist()
    assert got["model"].tolist() == want["model"].tolist()
    assert got["pairs"].tolist() == want["pairs"].tolist()


def test_replies_from_a_second_to_an_hour_get_bins_of_equal_ratio():
    """Equal widths would put every reply under six minutes in the first of ten bars."""
    values = np.concatenate([[0.0], np.geomspace(0.8, 3600.0, 40)])
    assert values.max() / values[values > 0].min() > LOG_SPREAD
    got = latency_histogram(pd.Series(values), pd.Series(["m"] * len(values)), bins=10)
    ratios = got["bin_end"] / got["bin_start"]
    assert np.allclose(ratios, ratios.iloc[0])
    assert got["pairs"].sum() == len(values) and len(got) >= 6  # the fast replies spread over several bars
    widths = np.diff(latency_edges(np.array([1.0, 2.0, 3.0]), 4))
    assert np.allclose(widths, widths[0])  # a narrow spread: equal widths


def test_one_far_slower_reply_does_not_set_the_scale():
    """60 replies of 0.2–3 s and one of 44.7 s: a few readable bars over the fast replies, the
    slow one counted in the last (not 40 one-second bars with every reply in the first two)."""
    values = np.concatenate([np.linspace(0.2, 3.0, 60), [44.7]])
    got = latency_histogram(pd.Series(values), pd.Series(["m"] * len(values)))
    assert got["pairs"].sum() == len(values)
    assert len(got) <= 10 and got["bin_end"].max() < 10
    assert got["pairs"].max() < len(values) / 2  # the fast replies spread over several bars
    axis = histogram_bars(got, "model", "seconds")["xAxis"]
    assert axis["axisLabel"]["interval"] != 0 and axis["axisLabel"]["hideOverlap"]  # labels never overlap
