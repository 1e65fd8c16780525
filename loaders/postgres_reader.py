"""The reader of a live Postgres database (see `loaders.postgres_source`)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
from psycopg import sql

from loaders.pg_rows import (
    JS_TS_PATTERN,
    JS_TS_TO_KEY,
    KEY_COLUMNS,
    KEY_SHOWN,
    MESSAGES,
    SINCE_KEY_SQL,
    SPECIAL_CHANNELS,
    TABLES,
    TS_PATTERN,
    BlobRow,
    DEFERRED_METADATA,
    INLINE_METADATA_BYTES,
    CheckpointRow,
    Deferred,
    OversizedKeys,
    PostgresOptions,
    WriteRow,
    assemble,
    table_shape,
)
from loaders.dsn import first_line, mask_dsn
from loaders.records import KEY_MAX_BYTES, SourceError, ThreadBundle, max_blob_bytes, oversized_tag_sql
from loaders.source import SPLIT_MIN_BYTES, Capabilities, SourceReader
from loaders.transform.limits import METADATA_MAX_CHARS

# Rows per FETCH. Blob rows hold a whole message list each, so fewer of them, and a blob
# over INLINE_BLOB_BYTES comes by key, alone, when it is decoded (`pg_rows.Deferred`): a
# FETCH holds at most 100 MiB of blobs (100 blobs of 60 MB in one took a load to 1.4 GB).
# A special write's value over INLINE_WRITE_BYTES comes the same way (30 values of 30 MB
# in one FETCH of writes took 1.8 GB): a FETCH of writes holds at most 2,000 × 16 KiB of
# values beside their keys.
CHUNK_ROWS = 2000
BLOB_CHUNK_ROWS = 100
INLINE_BLOB_BYTES = 1 << 20
INLINE_WRITE_BYTES = 16 << 10

_COLUMNS_SQL = """
SELECT c.relname, a.attname, has_table_privilege(c.oid, 'SELECT')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = %s AND c.relname = ANY(%s) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
"""
# The schema a PostgresSaver on this connection uses: the one its unqualified `checkpoints`
# resolves to through the search_path (the DSN's `options=-csearch_path=…`, PGOPTIONS, the
# role's or database's setting), else the first schema of the path (where setup() creates it).
_SAVER_SCHEMA_SQL = """
SELECT coalesce(
    (SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = to_regclass('checkpoints')),
    current_schema(), 'public')
"""
_SCHEMAS_WITH_CHECKPOINTS_SQL = """
SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = 'checkpoints' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY 1
"""

# The checkpoint JSONB is reduced on the server to what the transcript needs:
# channel_versions, versions_seen and friends never cross the wire.
_CHECKPOINTS_SQL = """
SELECT thread_id, checkpoint_ns, {cid}, {parent},
       -- a non-string ts is passed on as its JSON text, so the transform reports it as unreadable;
       -- a ts is 32 characters: a longer one is as unreadable cut short, and not sent whole
       left(CASE WHEN jsonb_typeof(checkpoint -> 'ts') = 'string' THEN checkpoint ->> 'ts' ELSE (checkpoint -> 'ts')::text END, 256),
       {messages_version},
       NULLIF(jsonb_typeof(checkpoint), 'object'),
       {metadata}
FROM {checkpoints} CROSS JOIN LATERAL (SELECT metadata::text AS md) AS m {where}
ORDER BY thread_id COLLATE "C", checkpoint_ns COLLATE "C", {cid} COLLATE "C"
"""
_BLOBS_SQL = """
SELECT thread_id, checkpoint_ns, {version}, {type},
       CASE WHEN octet_length(blob) > {inline} THEN NULL ELSE {blob} END,
       octet_length(blob) > {inline} AND octet_length(blob) <= {cap}
FROM {blobs} WHERE channel = %s AND octet_length({version}) <= {key_max} {and_where}
ORDER BY thread_id COLLATE "C"
"""
_WRITES_SQL = """
SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, {type},
       CASE WHEN octet_length(blob) > {inline} THEN NULL ELSE {blob} END,
       CASE WHEN octet_length(blob) > {inline} AND octet_length(blob) <= {cap} THEN octet_length(blob) END
FROM {writes} WHERE channel = ANY(%s) {and_where}
ORDER BY thread_id COLLATE "C", checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C", task_id COLLATE "C", idx
"""



def _capped_value() -> dict[str, sql.Composable]:
    """The `type` and `blob` columns of a blob or write row with a value over
    `records.max_blob_bytes()` replaced by the oversized marker: `octet_length` of a
    TOASTed value is read from its pointer, so such a value is never detoasted or sent."""
    cap = max_blob_bytes()
    return {"type": sql.SQL(oversized_tag_sql("octet_length(blob)", "type", cap)),
            "blob": sql.SQL("CASE WHEN octet_length(blob) > {} THEN NULL ELSE blob END").format(sql.Literal(cap))}


# One table's share of `PostgresReader._oversized_sql`: `k` is the first key column over the
# limit (index into pg_rows.KEY_COLUMNS), `v` its value, which stays on the server.
_OVERSIZED_ARM_SQL = """
SELECT CASE WHEN k = 0 THEN NULL ELSE thread_id END AS tid, {table_name}::text AS tbl, k, count(*), max(octet_length(v)),
       left(min(v COLLATE "C"), {shown})
FROM (SELECT thread_id, k, CASE k {value} END AS v
      FROM (SELECT *, CASE {first} END AS k FROM {table} {where}) AS keyed
      WHERE k IS NOT NULL) AS oversized
GROUP BY thread_id, k
"""

# Boundaries where the running total of blob bytes (in "C" order of thread id)
# crosses k/n of the whole; the first thread of a range is its lower bound.
_SPLIT_SQL = """
WITH per_thread AS (
    SELECT thread_id COLLATE "C" AS thread_id, sum(octet_length(blob)) AS bytes
    FROM {blobs} WHERE channel = %s {and_where} GROUP BY 1
), running AS (
    SELECT thread_id, sum(bytes) OVER (ORDER BY thread_id) - bytes AS before, sum(bytes) OVER () AS total
    FROM per_thread
)
SELECT min(thread_id) FROM running, generate_series(1, %s - 1) AS k
WHERE total > 0 AND before >= total * k / %s AND before > 0
GROUP BY k ORDER BY k
"""


class PostgresReader(SourceReader):
    """An open read-only snapshot of one schema's checkpoint tables: `--schema`, else the one a
    PostgresSaver connected with the same DSN would use (its search_path). Split loads: each
    worker opens its own (no handoff), reading its ranges in one snapshot of its own."""

    capabilities = Capabilities(split=True)

    def __init__(self, dsn: str, options: PostgresOptions) -> None:
        self.options = options
        self.where = mask_dsn(dsn)
        self.schema = options.schema  # None: the connection's (see _SAVER_SCHEMA_SQL), once connected
        self._since = options.since_ts
        self.conn: psycopg.Connection | None = None
        try:
            self.conn = psycopg.connect(dsn, autocommit=False, application_name="transcript-lens")
        except psycopg.Error as exc:
            raise SourceError(f"{self.where}: cannot connect ({first_line(exc, dsn)})") from None
        except Exception as exc:  # noqa: BLE001 - a malformed DSN raises ProgrammingError or ValueError
            raise SourceError(f"{self.where}: not a usable Postgres DSN ({first_line(exc, dsn)})") from None
        try:
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            if self.schema is None:
                self.schema = self.conn.execute(_SAVER_SCHEMA_SQL).fetchone()[0]
            self.shallow = self._check_schema()
        except psycopg.Error as exc:
            self.close()
            raise SourceError(f"{self.where}: cannot read the checkpoint tables ({first_line(exc)})") from None
        except BaseException:
            self.close()
            raise

    def _table(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, name)

    def _check_schema(self) -> bool:
        columns: dict[str, set[str]] = {}
        denied: set[str] = set()
        for table, column, can_select in self.conn.execute(_COLUMNS_SQL, (self.schema, [*TABLES])):
            columns.setdefault(table, set()).add(column)
            if not can_select:
                denied.add(table)
        where = f"{self.where} (schema {self.schema})"
        if "checkpoints" not in columns:
            others = [s for (s,) in self.conn.execute(_SCHEMAS_WITH_CHECKPOINTS_SQL) if s != self.schema]
            hint = f"; schemas with a checkpoints table: {', '.join(others)} (pick one with --schema)" if others else ""
            raise SourceError(f"{where}: no checkpoints table (expected a database written by PostgresSaver){hint}")
        shallow = table_shape(columns, where)
        self._has_task_path = "task_path" in columns.get("checkpoint_writes", ())
        if denied:
            raise SourceError(f"{where}: no SELECT privilege on {', '.join(sorted(denied))}")
        return shallow

    def describe(self) -> str:
        return self.where if self.schema == "public" else f"{self.where} (schema {self.schema})"

    # --- filters -------------------------------------------------------------------

    def _keys(self, table: str) -> list[sql.Composable]:
        """The key columns of `table` that are capped (`pg_rows.KEY_COLUMNS`), as SQL."""
        return [
            sql.SQL("(checkpoint ->> 'id')") if self.shallow and name == "checkpoint_id" and table == "checkpoints"
            else sql.Identifier(name)
            for name in KEY_COLUMNS[table]
        ]

    def _filter(self, only: frozenset[str] | None, table: str | None = None) -> tuple[sql.Composable | None, list]:
        """The rows to read: of the threads asked for (`only`, `--threads`, the range, `--since`),
        and of `table`, only those whose keys are within `KEY_MAX_BYTES` (octet_length: the
        others are never fetched; `_oversized_sql` counts them)."""
        clauses: list[sql.Composable] = [
            sql.SQL("octet_length({}) <= {}").format(key, sql.Literal(KEY_MAX_BYTES)) for key in self._keys(table)
        ] if table is not None else []
        params: list = []
        ids = self.options.wanted(only)
        if ids is not None:
            # A hashed semi-join: `= ANY(array)` would scan the array per row.
            clauses.append(sql.SQL("thread_id IN (SELECT unnest(%s::text[]))"))
            params.append(ids)
        lo, hi = self.thread_range
        if lo is not None:
            clauses.append(sql.SQL('thread_id COLLATE "C" >= %s'))
            params.append(lo)
        if hi is not None:
            clauses.append(sql.SQL('thread_id COLLATE "C" < %s'))
            params.append(hi)
        if self._since is not None:
            clauses.append(
                sql.SQL(
                    "thread_id IN (SELECT thread_id FROM {cp} WHERE " + SINCE_KEY_SQL + " ~ %s "
                    "AND (" + SINCE_KEY_SQL + ') COLLATE "C" >= %s)'
                ).format(cp=self._table("checkpoints"))
            )
            params += [JS_TS_PATTERN, JS_TS_TO_KEY, TS_PATTERN, JS_TS_PATTERN, JS_TS_TO_KEY, self._since]
        if not clauses:
            return None, []
        return sql.SQL(" AND ").join(clauses), params

    def _checkpoint_sql(self, where: sql.Composable | None) -> sql.Composed:
        if self.shallow:
            cid, parent = sql.SQL("(checkpoint ->> 'id')"), sql.SQL("NULL::text")
            version = sql.SQL("CASE WHEN checkpoint -> 'channel_versions' ? 'messages' THEN '' END")
        else:
            cid, parent = sql.SQL("checkpoint_id"), sql.SQL("parent_checkpoint_id")
            # (A version over the key limit is cut to one byte more: it names no blob that is read,
            # and `pg_rows.build_bundle` reports it.)
            version = sql.SQL("left(checkpoint -> 'channel_versions' ->> 'messages', {})").format(sql.Literal(KEY_MAX_BYTES + 1))
        # Metadata longer than the transform loads stays on the server, as the marker
        # `pg_rows._metadata` reports (a checkpoint row is fetched 2,000 at a time).
        # Metadata over INLINE_METADATA_BYTES comes by key, alone, when its thread is assembled.
        deferred = sql.SQL("CASE WHEN octet_length(md) > {} THEN {} || octet_length(md) ELSE md END").format(
            sql.Literal(INLINE_METADATA_BYTES), sql.Literal(DEFERRED_METADATA))
        metadata = sql.SQL(oversized_tag_sql("length(md)", "{deferred}", METADATA_MAX_CHARS)).format(deferred=deferred)
        return sql.SQL(_CHECKPOINTS_SQL).format(
            cid=cid, parent=parent, messages_version=version, checkpoints=self._table("checkpoints"), metadata=metadata,
            where=sql.SQL("WHERE ") + where if where is not None else sql.SQL(""),
        )

    # --- reading -------------------------------------------------------------------

    def _stream(self, name: str, query: sql.Composable, params: list, chunk: int, binary: bool = False):
        cur = self.conn.cursor(name=name, binary=binary)
        cur.itersize = chunk
        try:
            cur.execute(query, params)
            yield from cur
        finally:
            try:
                cur.close()
            except psycopg.Error:
                pass  # the transaction already failed; close() rolls it back

    def thread_count(self) -> int | None:
        where, params = self._filter(None, "checkpoints")
        query = sql.SQL("SELECT count(DISTINCT thread_id) FROM {cp} {where}").format(
            cp=self._table("checkpoints"), where=sql.SQL("WHERE ") + where if where is not None else sql.SQL(""),
        )
        return self._guard(lambda: self.conn.execute(query, params).fetchone()[0])

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        """Up to `n` thread-id ranges `[lo, hi)` holding about equal `messages` blob bytes.

        Computed on the server (only the boundaries come back); `octet_length`
        of a TOASTed value is read from its pointer, not detoasted. Under
        `min_bytes` of blobs nothing is split: starting workers would cost more
        than it saves. Each worker then reads its range in its own snapshot.
        """
        if n <= 1:
            return [(None, None)]
        where, params = self._filter(None, "checkpoint_blobs")
        and_where = sql.SQL("AND ") + where if where is not None else sql.SQL("")
        total_sql = sql.SQL("SELECT coalesce(sum(octet_length(blob)), 0) FROM {blobs} WHERE channel = %s {and_where}").format(
            blobs=self._table("checkpoint_blobs"), and_where=and_where,
        )
        if self._guard(lambda: self.conn.execute(total_sql, [MESSAGES, *params]).fetchone()[0]) < min_bytes:
            return [(None, None)]
        query = sql.SQL(_SPLIT_SQL).format(blobs=self._table("checkpoint_blobs"), and_where=and_where)
        bounds = [b for (b,) in self._guard(lambda: self.conn.execute(query, [MESSAGES, *params, n, n]).fetchall())]
        edges: list[str | None] = [None, *dict.fromkeys(b for b in bounds if b is not None), None]
        return [(edges[i], edges[i + 1]) for i in range(len(edges) - 1)]

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        cid = self._keys("checkpoints")[2]
        capped, params = self._filter(None, "checkpoints")
        query = sql.SQL("SELECT thread_id, checkpoint_ns, {cid} FROM {cp} WHERE {cid} IS NOT NULL AND {capped}").format(
            cid=cid, cp=self._table("checkpoints"), capped=capped,
        )
        try:
            yield from self._stream("tl_keys", query, params, CHUNK_ROWS)
        except psycopg.Error as exc:
            raise SourceError(f"{self.where}: reading checkpoint keys failed ({first_line(exc)})") from None

    def _oversized_sql(self, only: frozenset[str] | None) -> tuple[sql.Composed, list]:
        """Per thread and table, the rows `_filter` leaves out for a key over `KEY_MAX_BYTES`:
        how many, the longest's size and first characters (never the key itself; an
        oversized thread id is grouped by on the server and shown only by its start)."""
        arms, params = [], []
        cap = sql.Literal(KEY_MAX_BYTES)
        # (Only the channels that are read: the other rows are skipped whatever their keys.)
        for table, channels in (("checkpoints", None), ("checkpoint_blobs", [MESSAGES]), ("checkpoint_writes", list(SPECIAL_CHANNELS))):
            keys = self._keys(table)
            where, more = self._filter(only)
            conditions = [where] if where is not None else []
            if channels is not None:
                conditions.insert(0, sql.SQL("channel = ANY(%s)"))
                more = [channels, *more]
            first = sql.SQL(" ").join(
                sql.SQL("WHEN octet_length({}) > {} THEN {}").format(key, cap, sql.Literal(i)) for i, key in enumerate(keys)
            )
            value = sql.SQL(" ").join(sql.SQL("WHEN {} THEN {}").format(sql.Literal(i), key) for i, key in enumerate(keys))
            arms.append(sql.SQL(_OVERSIZED_ARM_SQL).format(
                table_name=sql.Literal(table), first=first, value=value, table=self._table(table),
                where=sql.SQL("WHERE ") + sql.SQL(" AND ").join(conditions) if conditions else sql.SQL(""),
                shown=sql.Literal(KEY_SHOWN),
            ))
            params += more
        query = sql.SQL("SELECT * FROM ({}) AS arms ORDER BY tid COLLATE \"C\" NULLS FIRST, tbl, k").format(
            sql.SQL(" UNION ALL ").join(arms))
        return query, params

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        where, params = self._filter(only, "checkpoints")
        blob_where, blob_params = self._filter(only, "checkpoint_blobs")
        write_where, write_params = self._filter(only, "checkpoint_writes")
        blobs_sql = sql.SQL(_BLOBS_SQL).format(
            version=sql.SQL("''::text") if self.shallow else sql.SQL("version"),
            blobs=self._table("checkpoint_blobs"), and_where=sql.SQL("AND ") + blob_where, **_capped_value(),
            inline=sql.Literal(INLINE_BLOB_BYTES), cap=sql.Literal(max_blob_bytes()), key_max=sql.Literal(KEY_MAX_BYTES),
        )
        writes_sql = sql.SQL(_WRITES_SQL).format(writes=self._table("checkpoint_writes"), and_where=sql.SQL("AND ") + write_where,
                                                 inline=sql.Literal(INLINE_WRITE_BYTES), cap=sql.Literal(max_blob_bytes()),
                                                 **_capped_value())
        oversized_sql, oversized_params = self._oversized_sql(only)
        streams = [
            self._stream("tl_checkpoints", self._checkpoint_sql(where), params, CHUNK_ROWS),
            self._stream("tl_blobs", blobs_sql, [MESSAGES, *blob_params], BLOB_CHUNK_ROWS, binary=True),
            self._stream("tl_writes", writes_sql, [list(SPECIAL_CHANNELS), *write_params], CHUNK_ROWS, binary=True),
            self._stream("tl_oversized", oversized_sql, oversized_params, CHUNK_ROWS),
        ]
        oversized = (OversizedKeys(tid, table, KEY_COLUMNS[table][k], n, longest, begins)
                     for tid, table, k, n, longest, begins in streams[3])
        try:
            yield from assemble(
                map(CheckpointRow._make, streams[0]), self._blob_rows(streams[1]), self._write_rows(streams[2]),
                self.where, oversized, self._delta_writes, self._fetch_blob, self._fetch_metadata,
            )
        except psycopg.Error as exc:
            raise SourceError(f"{self.where}: reading checkpoints failed ({first_line(exc)})") from None
        finally:
            for stream in streams:
                stream.close()

    def _blob_rows(self, rows) -> Iterator[BlobRow]:
        """`BlobRow`s of the blob stream; a large blob as its `Deferred` (fetched when decoded)."""
        for thread_id, ns, version, type_, blob, deferred in rows:
            if deferred:
                blob = Deferred(self._fetch_blob, (thread_id, ns, version))
            yield BlobRow(thread_id, ns, version, type_, blob)

    def _write_rows(self, rows) -> Iterator[WriteRow]:
        """`WriteRow`s of the writes stream; a large value as its `Deferred` (fetched when decoded,
        its size known, so that `records.SpecialWritesTail` keeps the same writes)."""
        for *head, type_, blob, deferred_size in rows:
            if deferred_size is not None:
                blob = Deferred(self._fetch_write, tuple(head[:5]), deferred_size)
            yield WriteRow(*head, type_, blob)

    def _fetch_write(self, thread_id: str, ns: str, cid: str, task_id: str, idx: int, channel: str | None = None) -> bytes | None:
        """One write's value by its key (and channel, when given), in the load's snapshot."""
        query = sql.SQL("SELECT blob FROM {writes} WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s "
                        "AND task_id = %s AND idx = %s AND channel = coalesce(%s::text, channel)").format(
                            writes=self._table("checkpoint_writes"))
        with self.conn.cursor(binary=True) as cur:
            row = cur.execute(query, [thread_id, ns, cid, task_id, idx, channel]).fetchone()
        return None if row is None else row[0]

    def _fetch_metadata(self, thread_id: str, ns: str, cid: str) -> str | None:
        """One checkpoint's metadata as JSON text, by its key, in the load's snapshot."""
        query = sql.SQL("SELECT metadata::text FROM {cp} WHERE thread_id = %s AND checkpoint_ns = %s AND {cid} = %s").format(
            cp=self._table("checkpoints"), cid=self._keys("checkpoints")[2])
        row = self.conn.execute(query, [thread_id, ns, cid]).fetchone()
        return None if row is None else row[0]

    def _fetch_blob(self, thread_id: str, ns: str, version: str) -> bytes | None:
        """One `messages` blob by its key, in the load's snapshot while its cursors stream."""
        query = sql.SQL("SELECT blob FROM {blobs} WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s{version}").format(
            blobs=self._table("checkpoint_blobs"),
            version=sql.SQL("") if self.shallow else sql.SQL(" AND version = %s"))
        params = [thread_id, ns, MESSAGES] + ([] if self.shallow else [version])
        with self.conn.cursor(binary=True) as cur:
            row = cur.execute(query, params).fetchone()
        return None if row is None else row[0]

    def _delta_writes(self, thread_id: str) -> Iterator[tuple]:
        """A DeltaChannel thread's `messages` writes (`loaders.delta.read.WriteRows`), streamed in
        the load's snapshot while its cursors stream (rare: only threads `delta.marked` are asked),
        in key order; a value over INLINE_WRITE_BYTES as its `Deferred`, fetched only if it is read."""
        cap = sql.Literal(KEY_MAX_BYTES)
        query = sql.SQL(
            "SELECT checkpoint_ns, checkpoint_id, {path}, task_id, idx, {type}, "
            "CASE WHEN octet_length(blob) > {inline} THEN NULL ELSE {blob} END, "
            "CASE WHEN octet_length(blob) > {inline} AND octet_length(blob) <= {blob_cap} THEN octet_length(blob) END "
            "FROM {writes} WHERE thread_id = %s AND channel = %s AND octet_length(checkpoint_ns) <= {cap} "
            "AND octet_length(checkpoint_id) <= {cap} AND octet_length(task_id) <= {cap} "
            'ORDER BY checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C", task_id COLLATE "C", idx'
        ).format(path=sql.Identifier("task_path") if self._has_task_path else sql.SQL("''"),
                 writes=self._table("checkpoint_writes"), cap=cap, inline=sql.Literal(INLINE_WRITE_BYTES),
                 blob_cap=sql.Literal(max_blob_bytes()), **_capped_value())
        try:
            for ns, cid, path, task_id, idx, type_, blob, deferred_size in self._stream(
                    "tl_delta_writes", query, [thread_id, MESSAGES], CHUNK_ROWS, binary=True):
                if deferred_size is not None:
                    blob = Deferred(self._fetch_write, (thread_id, ns, cid, task_id, idx, MESSAGES), deferred_size)
                yield ns, cid, path, task_id, idx, type_, blob
        except psycopg.Error as exc:
            raise SourceError(f"{self.where}: reading DeltaChannel writes failed ({first_line(exc)})") from None

    def _guard(self, fn):
        try:
            return fn()
        except psycopg.Error as exc:
            raise SourceError(f"{self.where}: query failed ({first_line(exc)})") from None

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()  # rolls the read-only transaction back
            except psycopg.Error:
                pass
            self.conn = None

