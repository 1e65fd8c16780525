"""Charts for the pages: ECharts option dicts (`st.echarts_chart`), built from frames in chart shape.

Why ECharts: the browser parses plotly.js (4.7 MB) before drawing the first plotly
chart of a visit, a single main-thread task of 1–4 s under load in headless
Chromium (bench/bench_render.py: a page with one plotly chart froze 2–4 s; four
ECharts charts 0.3–0.6 s, drawn in half the time). The Resume QA timeline and a
thread's branch tree are ECharts charts too: no page loads plotly.js.

Every builder returns a plain, JSON-compatible dict (numbers as Python floats and
ints, missing values as None); `ui.render.chart` draws it. Period axes are
categories named the way people read them ("Mar 3, 2025", "wk of Mar 3, 2025",
"Mar 2025").

- `axes`: the frame, axes and period names every chart shares, and `height`;
- `shapes`: bars, histograms, lines, grouped bars;
- `trends`: counts per period (Overview, outcomes, topics and patterns);
- `pages`: one page's charts (Conversations, the Overview's top lists, Compare);
- `threads`: one thread's checkpoints (the Resume QA timeline, the branch tree).

The pages call them as `charts.<name>`: this package names every builder and table once.

>>> from ui import charts
>>> charts.height({})
340
"""

from ui.charts.axes import (HEIGHT, LABEL_LINE, LABEL_PX, LEGEND_ROW, PeriodLabels, bin_grid, bin_labels, height,
                            period_label, period_labels, wrap_label)
from ui.charts.pages import (COMPARE_CHARTS, CONVERSATION_CHARTS, INTERVAL_COLOUR, TOP_LISTS, compare_chart,
                             conversations_chart, top_list)
from ui.charts.shapes import bars, grouped_bars, histogram_bars, lines
from ui.charts.threads import (TIMELINE_COLORS, TIMELINE_SOURCE_WORDS, TIMELINE_SYMBOLS, TREE_SYMBOLS, branch_tree,
                               resume_timeline)
from ui.charts.trends import OUTCOME_COLORS, outcome_trend, period_trend, trend

__all__ = [
    "HEIGHT", "LABEL_LINE", "LABEL_PX", "LEGEND_ROW", "PeriodLabels", "bin_grid", "bin_labels", "height",
    "period_label", "period_labels", "wrap_label",
    "COMPARE_CHARTS", "CONVERSATION_CHARTS", "INTERVAL_COLOUR", "TOP_LISTS", "compare_chart", "conversations_chart",
    "top_list",
    "bars", "grouped_bars", "histogram_bars", "lines",
    "TIMELINE_COLORS", "TIMELINE_SOURCE_WORDS", "TIMELINE_SYMBOLS", "TREE_SYMBOLS", "branch_tree", "resume_timeline",
    "OUTCOME_COLORS", "outcome_trend", "period_trend", "trend",
]
