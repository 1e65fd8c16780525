"""What the notebook tests read of a table a cell drew: its HTML cells, missing values and row numbers."""

from __future__ import annotations

import re

#: A cell showing a missing value as pandas spells it.
MISSING = re.compile(r"<td[^>]*>\s*(?:nan|NaN|&lt;NA&gt;|<NA>|None|NaT)\s*</td>")
#: A row heading holding pandas' own row number (0, 1, 2…).
ROW_NUMBER = re.compile(r"<th[^>]*>\s*\d+\s*</th>\s*<td")
#: A column headed with a stored 0-based position.
ORDINAL = re.compile(r"<th[^>]*>\s*ordinal\s*</th>")


def tables(nb) -> list[str]:
    """The HTML of every table the executed notebook's cells drew (a transcript draws none)."""
    return [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "<table" in o.get("data", {}).get("text/html", "")]


def unlike_the_app(html: str) -> list[str]:
    """What a table shows that the app's tables do not: missing values spelt out, rows numbered
    from 0, positions counted from 0."""
    return [what for what, pattern in (("missing values", MISSING), ("row numbers", ROW_NUMBER),
                                      ("0-based positions", ORDINAL)) if pattern.search(html)]
