"""A DataFrame in a notebook cell as the app's tables show it.

Jupyter draws a frame with its missing values spelt out (`NaN`, `<NA>`, `None`, `NaT`) and
pandas' row numbers counting from 0 beside a transcript that counts its messages from 1.
`table(frame)` draws it as the app's tables and downloads read (`ui.formats.readable`): each
column under its header (`thread_id` as "Thread", or as `labels` names it), times to the second
with "(UTC)" in the header, flags as yes / no; missing values as empty cells, pandas' row numbers
left out (0, 1, 2…, or those a filter left; a named index stays), and a stored 0-based `ordinal`
as the message's number in the transcript ("Message N": a `message` column, ordinal + 1). In a
terminal, the same as text.

>>> import pandas as pd
>>> shown = table(pd.DataFrame({"ordinal": [0, 4], "note": ["ok", None], "score": [1.5, float("nan")],
...                             "edited": [True, False]}))
>>> shown.frame["message"].tolist()
[1, 5]
>>> html = shown._repr_html_().lower()
>>> "nan" in html or "none" in html or "true" in html, "row_heading" in html
(False, False)
>>> print(shown)
 Message Note  Score Edited
       1   ok    1.5    yes
       5                 no
>>> last = pd.to_datetime(["2025-03-12 16:50:03.774274"], utc=True)
>>> print(table(pd.DataFrame({"thread_id": ["acme:web:s1"], "last_ts": last})))
     Thread    Last: time (UTC)
acme:web:s1 2025-03-12 16:50:03
>>> print(table(pd.DataFrame({"n": [3, 4]}, index=pd.Index(["acme", "globex"], name="tenant_id"))))
        N
Tenant
acme    3
globex  4
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ui.formats import header, readable


@dataclass(frozen=True)
class Table:
    """A frame as `table` shows it (`frame`: its columns and values as they are; `labels`: headers
    by column, as `ui.formats.readable` takes them)."""

    frame: pd.DataFrame
    labels: Any = None

    @property
    def _named_rows(self) -> bool:
        """Whether the index names the rows (a named index: shown); an unnamed one is pandas' row
        numbers (0, 1, 2…, or what a filter left of them: 3, 7, 12), not shown."""
        return any(name is not None for name in self.frame.index.names)

    @property
    def shown(self) -> pd.DataFrame:
        """The frame as drawn: `readable`'s headers and values, a named index under its header."""
        shown = readable(self.frame, self.labels)
        shown.index.names = [header(n) if isinstance(n, str) else n for n in self.frame.index.names]
        return shown

    def _repr_html_(self) -> str:
        style = self.shown.style.format(na_rep="")
        return (style if self._named_rows else style.hide(axis="index")).to_html()

    def __repr__(self) -> str:
        text = self.shown.to_string(index=self._named_rows, na_rep="")
        return "\n".join(line.rstrip() for line in text.splitlines())


def table(frame: pd.DataFrame, labels: Any = None) -> Table:
    """`frame` to draw in a cell (module docstring), its columns headed as `labels` names them
    (a column name → a header), else as the app heads them."""
    shown = frame
    if "ordinal" in shown.columns and "message" not in shown.columns:
        at = list(shown.columns).index("ordinal")
        shown = shown.drop(columns=["ordinal"])
        shown.insert(at, "message", frame["ordinal"] + 1)
    return Table(shown, labels)
