"""A report's CSV as an app download holds it: the columns a page shows under its headers, in
the words and the one time format of the app's downloads (`ui.formats.readable` does the same for
a frame: a time to the second in UTC, `ui.formats.CSV_TIME`, a flag as yes / no).

DuckDB rewrites the report's text (ISO-8601 UTC times, `true`/`false`, numbers) as it reads it,
so a download of every row never passes through pandas.

>>> csv_header("Duration", "duration"), csv_header("Last active (UTC)", "time"), csv_header("Messages", "count")
('Duration (s)', 'Last active (UTC)', 'Messages')
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

import duckdb

from analytics.reporting.writer import write_csv_rows
from ui.models.outcomes import OUTCOME_LABELS, SIGNAL_LABELS, why_text

#: How the CSV writes a column of each kind (`analytics.reporting.readable.Shown.kind`, and `text`
#: for the rest) from a report's text: a time to the second in UTC (`ui.formats.CSV_TIME`'s text),
#: a flag yes / no.
CELLS = {
    "time": "replace(left({c}, 19), 'T', ' ')",
    "flag": "CASE {c} WHEN 'true' THEN 'yes' WHEN 'false' THEN 'no' END",
    "stale": "CASE WHEN coalesce({c}, '') <> '' THEN 'stale' END",
}
#: The unit a number column's header carries in the CSV.
CSV_UNITS = {"seconds": "s", "duration": "s"}


def csv_header(label: str, kind: str) -> str:
    """A column's header in the CSV: the table's header, with the unit of its numbers."""
    unit = CSV_UNITS.get(kind)
    return f"{label} ({unit})" if unit else label


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def csv_cell(column: str, kind: str) -> str:
    """The SQL of a report's column (`column`, text) as the download writes a column of `kind`."""
    c = '"' + column.replace('"', '""') + '"'
    if kind == "outcome":
        cases = " ".join(f"WHEN {_sql_text(k)} THEN {_sql_text(v)}" for k, v in OUTCOME_LABELS.items())
        return f"CASE {c} {cases} END"
    if kind == "signals":  # the report's `a;b` as the table's "a label, b label"
        cases = " ".join(f"WHEN {_sql_text(k)} THEN {_sql_text(v)}" for k, v in SIGNAL_LABELS.items())
        return (f"nullif(array_to_string(list_transform(string_split(coalesce({c}, ''), ';'), lambda s: CASE s {cases} "
                "ELSE s END), ', '), '')")
    if kind == "why":  # the report's `outcome_reason` as the table's Why (`why_text`, a function of this connection)
        return f"tl_why({c})"
    return CELLS.get(kind, "{c}").format(c=c)


def readable_report(report: Path, shown: Iterable[tuple[str, str, str]]) -> bytes:
    """The CSV at `report` (a report's) as the download's bytes: the columns `shown` names
    (name, header, kind), in its order, each under its header and written as its kind."""
    cells = ", ".join(f'{csv_cell(name, kind)} AS "{csv_header(label, kind).replace(chr(34), chr(34) * 2)}"'
                      for name, label, kind in shown)
    with tempfile.TemporaryDirectory(prefix="tl-download-") as tmp:
        out = Path(tmp) / "download.csv"
        con = duckdb.connect()
        con.create_function("tl_why", lambda reason: why_text(reason) or None, ["VARCHAR"], "VARCHAR",
                            null_handling="special")
        try:  # (paths are handed to DuckDB as values, never spliced into SQL text)
            rel = con.sql(f"SELECT {cells} FROM read_csv($src, all_varchar = true, header = true)",
                          params={"src": str(report)})
            write_csv_rows(rel, out)
        finally:
            con.close()
        return out.read_bytes()
