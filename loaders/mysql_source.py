"""Sources: a MySQL / MariaDB database written by `langgraph-checkpoint-mysql`, live or as a `mysqldump`.

The MySQL savers (`PyMySQLSaver`, `AIOMySQLSaver`, `AsyncMySQLSaver`) keep the
PostgresSaver layout in three tables: `checkpoints` (the checkpoint as JSON text
without its non-primitive channel values), `checkpoint_blobs` (those values,
keyed by channel version) and `checkpoint_writes`, plus a `checkpoint_ns_hash`
column (MD5 of the namespace) in each key. So both kinds stage the rows into
the exports' staging file (`loaders.pg_export.stage`) and read it back exactly as
a Postgres export is read (`StagedReader`, `pg_rows.assemble`): the same tables,
the same row errors, DeltaChannel threads rebuilt the same way.

- `mysql`: a live database, `mysql://user:password@host:port/database` (also
  `mariadb://`; `?unix_socket=` as the saver takes it). Read inside one
  `READ ONLY` transaction `WITH CONSISTENT SNAPSHOT` (REPEATABLE READ), one
  table after the other, streamed (an unbuffered cursor): every table is read
  in the same snapshot while agents keep writing. Needs PyMySQL (the `mysql` extra).
- `mysql-dump`: a `mysqldump --hex-blob` file (maybe gzipped): its `INSERT INTO`
  statements of the three tables, parsed line by line (mysqldump escapes newlines
  inside values, so a row never spans lines), columns named by the dump's
  `CREATE TABLE` (or the INSERT's own column list).

MySQL compares the savers' `VARCHAR` keys case-insensitively (`utf8mb4_general_ci`);
the rows keep their exact text, and the stage orders them by code point, as
everywhere else.

>>> MysqlSource().describe("mysql://app:s3cret@db:3306/agents")
'mysql://app:***@db:3306/agents'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from loaders.dsn import DsnSpec, first_line, mask_dsn
from loaders.pg_export.archive import capped_lines, open_maybe_gzip, read_head
from loaders.pg_export.rows import channel_filter, source_columns
from loaders.pg_export.sources import staged_reader
from loaders.pg_export.stage import Stage, StageLoader
from loaders.pg_export.staged_reader import StagedReader
from loaders.pg_rows import SinceOptions
from loaders.records import SourceError, max_blob_bytes, oversized_tag_sql
from loaders.source import Source

MYSQL_PREFIXES = ("mysql://", "mariadb://")
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def _wanted(table: str) -> tuple[tuple[str | None, ...], str | None, tuple[str, ...] | None]:
    """The columns a table's stager takes (None: not in this schema), the column its
    channel filter reads, and the channels it keeps (`loaders.pg_export.rows`).

    A write's `task_path` is not taken: the MySQL saver's `get_tuple` hands a checkpoint's
    pending writes over ordered by `(task_id, idx)` (`langgraph.checkpoint.mysql.utils.
    deserialize_pending_writes`), and the runtime replays a DeltaChannel's writes in that
    order (`BaseCheckpointSaver.get_delta_channel_history`); staged without it, the rebuild
    (`loaders.delta`) orders them so too, and gives what `graph.get_state()` gives there."""
    channels = channel_filter(table)
    columns = tuple(None if c == "task_path" else c for c in source_columns(table, False))
    return columns, ("channel" if channels else None), channels


# --- live -------------------------------------------------------------------------------


def connect_args(dsn: str) -> dict:
    """PyMySQL's arguments for a `mysql://` DSN (what `PyMySQLSaver.parse_conn_string` reads).

    >>> sorted(connect_args("mysql://app:p%40ss@db:3307/agents?unix_socket=/run/m.sock").items())
    [('database', 'agents'), ('host', 'db'), ('password', 'p@ss'), ('port', 3307), ('unix_socket', '/run/m.sock'), ('user', 'app')]
    """
    parts = urlsplit(dsn)
    query = dict(parse_qsl(parts.query))
    database = unquote(parts.path[1:]) if parts.path else ""
    if not database:
        raise SourceError(f"{mask_dsn(dsn)}: no database named (expected mysql://user:password@host:port/database)")
    args = {"host": parts.hostname or "127.0.0.1", "user": unquote(parts.username or "") or None,
            "password": unquote(parts.password or ""), "database": database, "port": parts.port or 3306}
    if "unix_socket" in query:
        args["unix_socket"] = query["unix_socket"]
    return args


def _stage_live(stage: Stage, dsn: str, where: str, options: SinceOptions) -> bool:
    import pymysql  # (the `mysql` extra: imported only when a database is opened)
    from pymysql.cursors import SSCursor

    try:
        con = pymysql.connect(**connect_args(dsn), charset="utf8mb4", cursorclass=SSCursor, connect_timeout=10)
    except pymysql.Error as exc:
        raise SourceError(f"{where}: cannot connect ({first_line(exc, dsn)})") from None
    try:
        with con.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur.execute("START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT")
            cur.execute("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = DATABASE()")
            columns: dict[str, set[str]] = {}
            for table, column in cur.fetchall():
                columns.setdefault(table, set()).add(column)
        _check_tables(columns, where)
        threads = list(options.threads)
        for table in TABLES:
            wanted, channel_col, channels = _wanted(table)
            present = [c for c in wanted if c is not None and c in columns[table]]
            select = ", ".join(_column(table, c) if c in present else "NULL" for c in wanted)
            clauses, params = [], []
            if channels:
                clauses.append(f"`{channel_col}` IN ({', '.join(['%s'] * len(channels))})")
                params += channels
            if threads:  # (MySQL compares case-insensitively: the staged reader keeps the exact ones)
                clauses.append(f"thread_id IN ({', '.join(['%s'] * len(threads))})")
                params += threads
            query = f"SELECT {select} FROM `{table}`" + (f" WHERE {' AND '.join(clauses)}" if clauses else "")
            loader = StageLoader(stage, table, False, where)
            with con.cursor() as cur:
                cur.execute(query, params)
                # One row at a time off the unbuffered cursor: the stage loader batches them by
                # bytes, where a batch of rows would hold that many blobs of any size at once.
                for raw in cur:
                    loader.add(raw, sum(len(v) for v in raw if isinstance(v, (bytes, str))))
            loader.flush()
        con.rollback()
    except pymysql.Error as exc:
        raise SourceError(f"{where}: reading the checkpoint tables failed ({first_line(exc, dsn)})") from None
    finally:
        con.close()
    return False


def _column(table: str, column: str) -> str:
    """A column of the live query: a blob or write value over `records.max_blob_bytes()` stays on
    the server (its type becomes the oversized marker, its value empty; LENGTH is in bytes)."""
    if table == "checkpoints" or column not in ("type", "blob"):
        return f"`{column}`"
    cap = max_blob_bytes()
    if column == "type":
        return oversized_tag_sql("LENGTH(`blob`)", "`type`", cap, concat=True)
    return f"CASE WHEN LENGTH(`blob`) > {cap} THEN X'' ELSE `blob` END"


def _check_tables(columns: dict[str, set[str]], where: str) -> None:
    if "checkpoints" not in columns:
        raise SourceError(f"{where}: no checkpoints table (expected a database written by langgraph-checkpoint-mysql)")
    for table in TABLES:
        wanted = [c for c in _wanted(table)[0] if c is not None]
        lacking = [c for c in wanted if c not in columns.get(table, ())]
        if lacking:
            raise SourceError(f"{where}: table {table} lacks column(s) {', '.join(lacking)} (a shallow saver's "
                              "tables, or not langgraph-checkpoint-mysql's)")


class MysqlSource(DsnSpec, Source):
    """A live MySQL / MariaDB database written by `langgraph-checkpoint-mysql` (a `mysql://` DSN)."""

    kind = "mysql"
    label = "MySQL / MariaDB database written by langgraph-checkpoint-mysql (a mysql:// DSN)"
    options_class = SinceOptions

    def detect(self, spec: str) -> bool:
        return spec.startswith(MYSQL_PREFIXES)

    def open_reader(self, spec: str, options: SinceOptions) -> StagedReader:
        where = mask_dsn(spec)
        return staged_reader(where, options, lambda stage: _stage_live(stage, spec, where, options))


# --- mysqldump --------------------------------------------------------------------------

_DUMP_MARKERS = (b"-- MySQL dump", b"-- MariaDB dump")
_CREATE_RE = re.compile(rb"^CREATE TABLE `((?:[^`]|``)+)` \(")
_COLUMN_RE = re.compile(rb"^\s+`((?:[^`]|``)+)` ")
_INSERT_RE = re.compile(rb"^(?:INSERT|REPLACE)(?: IGNORE)? INTO `((?:[^`]|``)+)`(?: \(([^)]*)\))? VALUES\s*")
# One value of a VALUES tuple: a quoted string (backslash escapes, '' doubled), an
# introducer (_binary, _utf8mb4) before one, hex (0x… or X'…'), NULL, a number.
_VALUE_RE = re.compile(
    rb"\s*(?:(?P<intro>_[a-z0-9]+\s*)?'(?P<s>[^'\\]*(?:(?:\\.|'')[^'\\]*)*)'|0x(?P<hex>[0-9A-Fa-f]*)|[Xx]'(?P<xhex>[0-9A-Fa-f]*)'"
    rb"|(?P<null>NULL)|(?P<num>-?[0-9][0-9.eE+-]*))\s*"
)
_ESCAPES = {b"0": b"\0", b"b": b"\b", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"Z": b"\x1a", b"'": b"'", b'"': b'"', b"\\": b"\\"}
_ESCAPE_RE = re.compile(rb"\\(.)|''", re.DOTALL)


def _unescape(raw: bytes) -> bytes:
    r"""A mysqldump string's bytes (`\n`, `\'`, `''`, … undone; `\%` and `\_` keep their backslash).

    >>> _unescape(rb"a\nb\\c''d\%")
    b"a\nb\\c'd\\%"
    """
    if b"\\" not in raw and b"''" not in raw:
        return raw
    return _ESCAPE_RE.sub(lambda m: b"'" if m.group(0) == b"''" else _ESCAPES.get(m.group(1), b"\\" + m.group(1)), raw)


def _values(line: bytes, pos: int, where: str, line_no: int) -> Iterator[tuple[list, int]]:
    """The tuples of a VALUES list from `pos`: `(values, end)`; a value is bytes (strings, hex), None or a number's text."""
    n = len(line)
    while pos < n:
        while pos < n and line[pos] in b" \t\r\n,":
            pos += 1
        if pos >= n or line[pos] == ord(";"):
            return
        if line[pos] != ord("("):
            raise SourceError(f"{where}: line {line_no}: expected a ( of a VALUES tuple at column {pos + 1}")
        pos += 1
        values: list = []
        while True:
            m = _VALUE_RE.match(line, pos)
            if m is None:
                raise SourceError(f"{where}: line {line_no}: a value mysqldump does not write at column {pos + 1} "
                                  "(dumped without --hex-blob, or an edited file?)")
            if m.group("s") is not None:
                values.append(_unescape(m.group("s")))
            elif m.group("hex") is not None or m.group("xhex") is not None:
                digits = m.group("hex") or m.group("xhex") or b""
                if len(digits) % 2:
                    raise SourceError(f"{where}: line {line_no}: a hex value of an odd number of digits at column "
                                      f"{pos + 1} (a damaged or edited file?)")
                values.append(bytes.fromhex(digits.decode()))
            elif m.group("null") is not None:
                values.append(None)
            else:
                values.append(m.group("num").decode())
            pos = m.end()
            if pos < n and line[pos] == ord(","):
                pos += 1
                continue
            if pos < n and line[pos] == ord(")"):
                pos += 1
                break
            raise SourceError(f"{where}: line {line_no}: a VALUES tuple not closed at column {pos + 1} (a truncated file?)")
        yield values, pos


def is_mysql_dump(path: Path) -> bool:
    if not path.is_file():
        return False
    head = read_head(path)
    return any(m in head for m in _DUMP_MARKERS) or re.search(rb"^INSERT INTO `checkpoints` ", head, re.MULTILINE) is not None


def _text(value, column: str, where: str, line_no: int):
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise SourceError(f"{where}: line {line_no}: {column} is not UTF-8 text") from None


def _stage_dump(stage: Stage, fh, where: str) -> bool:
    """Stage a dump's rows of the checkpoint tables, a line (`archive.MAX_LINE` at most) at a time."""
    created: dict[str, list[str]] = {}
    creating: str | None = None
    loader: StageLoader | None = None
    seen: set[str] = set()
    plan = None  # (positions of the stager's columns, channel position, channels, binary columns)
    for line_no, line in enumerate(capped_lines(fh, where), 1):
        if creating is not None:
            if m := _COLUMN_RE.match(line):
                created[creating].append(m.group(1).replace(b"``", b"`").decode())
                continue
            creating = None
        if loader is None:
            if m := _CREATE_RE.match(line):
                creating = m.group(1).replace(b"``", b"`").decode()
                created[creating] = []
                continue
            m = _INSERT_RE.match(line)
            if m is None:
                continue
            table = m.group(1).decode()
            if table not in TABLES:
                continue
            names = [c.strip().strip("`") for c in m.group(2).decode().split(",")] if m.group(2) else created.get(table)
            if not names:
                raise SourceError(f"{where}: line {line_no}: INSERT INTO {table} without its columns (no CREATE TABLE "
                                  "before it: dump with the table definitions, or with --complete-insert)")
            wanted, channel_col, channels = _wanted(table)
            lacking = [c for c in wanted if c is not None and c not in names]
            if lacking:
                raise SourceError(f"{where}: table {table} lacks column(s) {', '.join(lacking)} (not langgraph-checkpoint-mysql's tables)")
            plan = ([names.index(c) if c in names else None for c in wanted],
                    names.index(channel_col) if channel_col else None, {c.encode() for c in channels or ()},
                    [c == "blob" for c in wanted], len(names), wanted)
            loader = StageLoader(stage, table, False, where)
            seen.add(table)
            pos = m.end()
        else:
            pos = 0
        positions, channel_at, channels, is_binary, width, wanted = plan
        end = pos
        for values, end in _values(line, pos, where, line_no):
            if len(values) != width:
                raise SourceError(f"{where}: line {line_no}: {len(values)} values in a row of {width} columns")
            if channel_at is not None and values[channel_at] not in channels:
                continue
            raw = tuple(None if p is None else values[p] if binary else _text(values[p], name, where, line_no)
                        for p, binary, name in zip(positions, is_binary, wanted))
            loader.add(raw, sum(len(v) for v in raw if isinstance(v, (bytes, str))), line_no)
        if line.rstrip()[-1:] == b";" and line[end:].strip() in (b";", b""):
            loader.flush()
            loader = None
    if loader is not None:
        raise SourceError(f"{where}: the last INSERT INTO statement is not ended with ; (a truncated file?)")
    if "checkpoints" not in seen and "checkpoints" not in created:
        raise SourceError(f"{where}: no checkpoints table in the dump (expected a mysqldump of a langgraph-checkpoint-mysql database)")
    return False


class MysqlDumpSource(Source):
    """A `mysqldump --hex-blob` of a `langgraph-checkpoint-mysql` database (plain SQL, maybe gzipped)."""

    kind = "mysql-dump"
    label = "mysqldump --hex-blob of a MySQL / MariaDB database written by langgraph-checkpoint-mysql"
    upload_suffixes = ("sql",)
    options_class = SinceOptions

    def detect(self, spec: str) -> bool:
        return is_mysql_dump(Path(spec))

    def open_reader(self, spec: str, options: SinceOptions) -> StagedReader:
        path = Path(spec)
        where = str(path.resolve())
        if not is_mysql_dump(path):
            raise SourceError(f"{where}: not a mysqldump file (expected the SQL of mysqldump --hex-blob)")

        def fill(stage: Stage) -> bool:
            with open_maybe_gzip(path) as fh:
                return _stage_dump(stage, fh, where)

        return staged_reader(where, options, fill)


__all__ = ["MysqlDumpSource", "MysqlSource", "connect_args", "is_mysql_dump"]
