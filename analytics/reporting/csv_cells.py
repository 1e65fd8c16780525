"""A CSV cell as a spreadsheet opens it: text that starts like a formula stays text.

Spreadsheet apps (Excel, LibreOffice, Google Sheets) run a cell that starts with `=`, `+`,
`-` or `@` as a formula, and skip a leading tab or carriage return before deciding. Store
text is anyone's (a user's message, a tool's name), so every CSV the tool writes — reports,
`search` and `transcript --format csv`, the app's downloads — writes such a text cell with a
`'` in front, the prefix OWASP's CSV-injection advice names and spreadsheets show as
text. Numbers are left alone: a number column is never text, and a text cell that is one
whole number (`-12`, `+3.5e2`, a value read back from a CSV as text) is not a formula.

One rule, two spellings of it: `cell` for Python values (a DataFrame's cells) and
`sql_cell` for a DuckDB column, both built from `FORMULA_START` and `NUMBER`.

>>> [cell(v) for v in ("=1+2", "-12", "-1 234", "@SUM(A1)", "\\t=x", "plain", "", None, -5)]
["'=1+2", '-12', "'-1 234", "'@SUM(A1)", "'\\t=x", 'plain', '', None, -5]
"""

from __future__ import annotations

import re
from typing import Any

from analytics import _pandas as pd

#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_START = "=+-@\t\r"
#: A whole number as text (signed, decimal, exponent): kept as it is.
NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

_NUMBER = re.compile(NUMBER)
_START_CLASS = "[" + "".join({"\t": r"\t", "\r": r"\r", "-": r"\-"}.get(c, c) for c in FORMULA_START) + "]"


def cell(value: Any) -> Any:
    """`value` as a CSV cell holds it: a text starting like a formula gets a `'` in front."""
    if isinstance(value, str) and value and value[0] in FORMULA_START and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def sql_cell(column: str) -> str:
    """The SQL of `column` (a quoted VARCHAR column) as `cell` writes it."""
    return (f"CASE WHEN regexp_matches({column}, '^{_START_CLASS}') AND NOT regexp_full_match({column}, '{NUMBER}') "
            f"THEN '''' || {column} ELSE {column} END")


def frame_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every text cell as `cell` writes it (number columns as they are).

    >>> frame_cells(pd.DataFrame({"t": ["=cmd", "ok"], "n": [-1, 2]})).to_dict("list")
    {'t': ["'=cmd", 'ok'], 'n': [-1, 2]}
    """
    text = [c for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c].dtype)]
    if not text:
        return frame
    return frame.assign(**{c: frame[c].map(cell) for c in text})
