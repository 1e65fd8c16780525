"""A DataFrame in a notebook cell as the app's tables show it.

Jupyter draws a frame with its missing values spelt out (`NaN`, `<NA>`, `None`, `NaT`) and
pandas' row numbers counting from 0 beside a transcript that counts its messages from 1.
`table(frame)` draws missing values as empty cells, leaves pandas' row numbers out (0, 1, 2…, or
those a filter left; a named index stays), and shows a stored 0-based `ordinal` as the message's number in the
transcript ("Message N": a `message` column, ordinal + 1), as the app does; in a terminal, the
same as text.

>>> import pandas as pd
>>> shown = table(pd.DataFrame({"ordinal": [0, 4], "note": ["ok", None], "score": [1.5, float("nan")]}))
>>> shown.frame["message"].tolist()
[1, 5]
>>> html = shown._repr_html_().lower()
>>> "nan" in html or "none" in html, "row_heading" in html
(False, False)
>>> print(shown)
 message note  score
       1   ok    1.5
       5
>>> print(table(pd.DataFrame({"n": [3, 4]}, index=pd.Index(["acme", "globex"], name="tenant"))))
        n
tenant
acme    3
globex  4
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Table:
    """A frame as `table` shows it (`frame`: its columns as shown, values as they are)."""

    frame: pd.DataFrame

    @property
    def _named_rows(self) -> bool:
        """Whether the index names the rows (a named index: shown); an unnamed one is pandas' row
        numbers (0, 1, 2…, or what a filter left of them: 3, 7, 12), not shown."""
        return any(name is not None for name in self.frame.index.names)

    def _repr_html_(self) -> str:
        style = self.frame.style.format(na_rep="")
        return (style if self._named_rows else style.hide(axis="index")).to_html()

    def __repr__(self) -> str:
        text = self.frame.to_string(index=self._named_rows, na_rep="")
        return "\n".join(line.rstrip() for line in text.splitlines())


def table(frame: pd.DataFrame) -> Table:
    """`frame` to draw in a cell (module docstring)."""
    shown = frame
    if "ordinal" in shown.columns and "message" not in shown.columns:
        at = list(shown.columns).index("ordinal")
        shown = shown.drop(columns=["ordinal"])
        shown.insert(at, "message", frame["ordinal"] + 1)
    return Table(shown)
