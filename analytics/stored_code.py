"""A database a reader opens is data, never code that runs.

A DuckDB file can hold views and macros, and DuckDB runs a view's query whenever it is read,
with the file and network access of the process reading it: a `messages` view over
`read_text('/etc/passwd')` would put a server's files in a transcript, one over an `http://`
address would fetch it; a generated column's expression is computed whenever the column is read
(a setting's value, or text repeated a million times). Transcript Lens writes plain tables only
(`loaders.catalog`), so a database holding a view, a macro, a sequence, a type or a generated
column of its own did not come from a load: it is refused
(`StoredCode`, one line naming the file and the objects). And every connection a reader opens
has DuckDB's file and network access and its extension downloads turned off
(`without_outside_access`) before the first query, so nothing a file holds can reach outside
it; a Parquet dataset's connection may read its own folder only (`analytics.db.open_dataset`).

>>> import duckdb; con = duckdb.connect()
>>> _ = con.execute("CREATE MACRO twice(x) AS 2 * x")
>>> stored_code(con)
['macro twice']
"""

from __future__ import annotations

import os

import duckdb

from analytics.errors import NotADatabase

#: The objects of a database's own catalogue that a load never writes, in one query.
_STORED_CODE = """
    SELECT 'view ' || view_name FROM duckdb_views()
     WHERE NOT internal AND NOT temporary AND database_name = current_database()
    UNION ALL SELECT DISTINCT 'macro ' || function_name FROM duckdb_functions()
     WHERE NOT internal AND database_name = current_database() AND function_type IN ('macro', 'table_macro')
    UNION ALL SELECT 'sequence ' || sequence_name FROM duckdb_sequences()
     WHERE NOT temporary AND database_name = current_database()
    UNION ALL SELECT 'type ' || type_name FROM duckdb_types()
     WHERE NOT internal AND database_name = current_database()
    UNION ALL SELECT 'generated column ' || table_name || '.' || column_name FROM information_schema.columns
     WHERE is_generated = 'ALWAYS' AND table_catalog = current_database()
    ORDER BY 1
"""


class StoredCode(NotADatabase):
    """The database holds views or macros of its own: Transcript Lens does not read it."""


def stored_code(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The views, macros, sequences, types and generated columns `con`'s database holds ('view messages', …)."""
    return [row[0] for row in con.execute(_STORED_CODE).fetchall()]


def refuse_stored_code(con: duckdb.DuckDBPyConnection, where: str | os.PathLike) -> None:
    """Raise `StoredCode` when `con`'s database holds anything `stored_code` names."""
    found = stored_code(con)
    if found:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        raise StoredCode(f"{where} is not opened: it holds {shown}, which a Transcript Lens load never writes "
                         "(a database's own queries could read files or addresses outside it)")


def without_outside_access(con: duckdb.DuckDBPyConnection, allowed: str | os.PathLike | None = None) -> None:
    """Turn off, for every connection to `con`'s database, DuckDB's reading and writing of files and
    addresses other than the database (`allowed`: a folder it may still read) and its downloading
    and loading of extensions. DuckDB cannot turn file access back on while the database is open.

    >>> con = duckdb.connect(); without_outside_access(con)
    >>> try:
    ...     con.execute("SELECT * FROM read_text('/etc/hostname')")
    ... except duckdb.PermissionException as exc:
    ...     print(str(exc).splitlines()[0])
    Permission Error: Cannot access file "/etc/hostname" - file system operations are disabled by configuration
    """
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    if allowed is not None:
        con.execute("SET allowed_directories = ?", [[os.path.join(os.fspath(allowed), "")]])
    con.execute("SET enable_external_access = false")
