"""What the notebook tests read of a table a cell drew: its HTML cells, missing values and row numbers."""

from __future__ import annotations

import re

#: A cell showing a missing value as pandas spells it.
MISSING = re.compile(r"<td[^>]*>\s*(?:nan|NaN|&lt;NA&gt;|<NA>|None|NaT)\s*</td>")
#: A row heading holding pandas' own row number (0, 1, 2…).
ROW_NUMBER = re.compile(r"<th[^>]*>\s*\d+\s*</th>\s*<td")
#: A column headed with a stored 0-based position.
ORDINAL = re.compile(r"<th[^>]*>\s*ordinal\s*</th>")
#: A column headed with its snake_case name (`thread_id`, `risk_score`), not the app's header.
RAW_NAME = re.compile(r"<th[^>]*>\s*[a-z][a-z0-9]*(?:_[a-z0-9]+)+\s*</th>")
#: A flag as Python writes it, where the app says yes / no.
PYTHON_BOOL = re.compile(r"<td[^>]*>\s*(?:True|False)\s*</td>")
#: A time with microseconds or a UTC offset, where the app writes it to the second (UTC in the header).
LONG_TIME = re.compile(r"<td[^>]*>\s*\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+|[+-]\d\d:\d\d)")


def tables(nb) -> list[str]:
    """The HTML of every table the executed notebook's cells drew (a transcript draws none)."""
    return [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "<table" in o.get("data", {}).get("text/html", "")]


def unlike_the_app(html: str) -> list[str]:
    """What a table shows that the app's tables do not: missing values spelt out, rows numbered
    from 0, positions counted from 0, columns under their raw names, True / False, times to the
    microsecond."""
    return [what for what, pattern in (("missing values", MISSING), ("row numbers", ROW_NUMBER),
                                      ("0-based positions", ORDINAL), ("raw column names", RAW_NAME),
                                      ("True / False", PYTHON_BOOL), ("long times", LONG_TIME))
            if pattern.search(html)]
