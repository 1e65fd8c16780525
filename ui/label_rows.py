"""Labels along a chart's x axis, each on a row of its own when it would cover its neighbour.

A chart's labels at points of its x axis (Resume QA's "resume #N" lines) are drawn centred on
their point; two points closer than half their labels' widths draw them over each other. `rows`
places each label on the lowest row where it clears the one before it, from the chart's value
range and the narrowest width it is drawn at (`PLOT_PX`, its plot area in a 1000 px window beside
the sidebar), up to `MAX_ROWS`; a label that fits on none is not drawn (None: its line still is,
and the table under the chart lists every point).

>>> rows([0, 1, 50, 100], ["resume #1", "resume #2", "resume #3", "resume #4"], 0, 100)
[0, 1, 0, 0]
>>> rows([10, 10, 10, 10], ["a long label"] * 4, 0, 100)
[0, 1, 2, None]
"""

from __future__ import annotations

from collections.abc import Sequence

#: The plot area's narrowest width, in pixels, and a label's width per character (12 px text).
PLOT_PX, CHAR_PX, PAD_PX = 500, 6.5, 12
#: Rows of labels at most.
MAX_ROWS = 3
#: The height of a row of labels, in pixels.
ROW_PX = 16


def rows(xs: Sequence[float], labels: Sequence[str], low: float, high: float, margin: float = 0.04) -> list[int | None]:
    """The row of each label (0: next to the axis' end), in the order given; `low`..`high` is the
    data's range, which the axis widens by `margin` of it each side (ECharts' `boundaryGap`)."""
    span = (high - low) or 1.0
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ends: list[float] = []  # where the last label of each row ends, in pixels
    out: list[int | None] = [None] * len(xs)
    for i in order:
        centre = PLOT_PX * (margin + (xs[i] - low) / span) / (1 + 2 * margin)
        half = (len(labels[i]) * CHAR_PX + PAD_PX) / 2
        row = next((r for r, end in enumerate(ends) if end <= centre - half), None)
        if row is None and len(ends) < MAX_ROWS:
            ends.append(float("-inf"))
            row = len(ends) - 1
        if row is not None:
            ends[row] = centre + half
            out[i] = row
    return out
