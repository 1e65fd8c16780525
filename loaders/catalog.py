"""The loader's tables, declared once: every table and column with its DuckDB type,
nullability and a one-line meaning.

Everything else about the schema comes from here: the DDL a load runs (`ddl()`),
the Arrow schemas of the staged parts (`Table.staging_schema`), the `_scan.stage`
column kinds (`Table.stage_kinds`), which columns DuckDB computes at ingest
(`Column.derived`) and which JSON text a source passes through unchecked
(`Column.passthrough_json`), the golden schema's lines (`describe()`) and the
column tables of docs/schema.md (`render_doc`). The tables analytics writes at
load time are declared the same way in `analytics/catalog.py` (analytics imports
these record types; the loader never imports analytics).

Change a column here, then `UPDATE_GOLDEN=1 pytest tests/loaders/test_schema_golden.py`,
`python scripts/schema_doc.py` (rewrites docs/schema.md's tables) and bump
`SCHEMA_VERSION`.

>>> from loaders import catalog
>>> catalog.table("messages").column("ts").type.ddl
'TIMESTAMPTZ'
>>> catalog.table("load_errors").stage_kinds
'sssss'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

#: Stored in `meta` by every load; bump it on any change to the tables below.
SCHEMA_VERSION = "5"


@dataclass(frozen=True)
class SqlType:
    """A DuckDB column type as the project uses it.

    `ddl` is its spelling in CREATE TABLE, `duckdb` what DuckDB reports for it
    (`information_schema.columns.data_type`, `str()` of a relation's type);
    `arrow` and `kind` are how a staged part carries it (the Arrow type, and
    `_scan.stage`'s letter for that column); None for types that are never staged.
    The Arrow type is named (`arrow_spec`, see `_arrow_type`) and made on first use:
    what only reads the catalogue (an incremental load that finds nothing new) does
    not import pyarrow (~0.2 s).
    """

    ddl: str
    duckdb: str
    arrow_spec: str | None = None
    kind: str | None = None
    #: The pandas dtype a query layer frame gives the column (nullable where SQL is).
    pandas: str = "object"

    @property
    def arrow(self) -> pa.DataType | None:
        return None if self.arrow_spec is None else _arrow_type(self.arrow_spec)


@functools.cache
def _arrow_type(spec: str) -> pa.DataType:
    """`"int32"` → `pa.int32()`; `"timestamp[us, UTC]"`, `"list<int32>"` as their names say."""
    import pyarrow as pa

    if spec == "timestamp[us, UTC]":
        return pa.timestamp("us", tz="UTC")
    if spec.startswith("list<"):
        return pa.list_(_arrow_type(spec[5:-1]))
    return getattr(pa, spec)()


VARCHAR = SqlType("VARCHAR", "VARCHAR", "string", "s", "str")
#: Text of strict JSON (written by `loaders.decode.to_json`, or passed through and validated).
JSON = SqlType("JSON", "JSON", "string", "s", "str")
INTEGER = SqlType("INTEGER", "INTEGER", "int32", "i", "Int64")
BIGINT = SqlType("BIGINT", "BIGINT", "int64", "l", "Int64")
BOOLEAN = SqlType("BOOLEAN", "BOOLEAN", "bool_", "b", "boolean")
#: Staged as integer microseconds since the epoch, UTC (`loaders.transform.timestamps.ts_micros`).
TIMESTAMPTZ = SqlType("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", "timestamp[us, UTC]", "l", "datetime64[us, UTC]")
#: Staged from `array('i')` values.
INTEGER_LIST = SqlType("INTEGER[]", "INTEGER[]", "list<int32>", "L")
#: Only in tables written by SQL (analytics' derived tables).
DOUBLE = SqlType("DOUBLE", "DOUBLE", pandas="float64")
DATE = SqlType("DATE", "DATE")


@dataclass(frozen=True)
class Column:
    """One column: `name`, `type`, whether it may be NULL, and what it holds (`doc`, one line).

    `derived`: a DuckDB expression over the staged row that fills the column at
    ingest (the staged value is a NULL placeholder). `passthrough_json`: JSON text
    a source hands over as it is; the ingest stores it only when it is valid JSON
    and reports it in `load_errors` otherwise. `staged=False`: not in the staged
    parts at all; the writer binds the load's id (`load_errors.load_id`).
    `personal`: free text or JSON from the conversation (what a user, a model or a tool
    wrote), masked when data is read with redaction on (`analytics.policy`).
    """

    name: str
    type: SqlType
    nullable: bool
    doc: str
    derived: str | None = None
    passthrough_json: bool = False
    staged: bool = True
    personal: bool = False

    def ddl(self) -> str:
        return f"{self.name} {self.type.ddl}{'' if self.nullable else ' NOT NULL'}"


@dataclass(frozen=True)
class Table:
    """One table: its columns in order, primary key, a one-line `doc`, and whether a
    load stages its rows as Arrow parts (`staged`; `loads` and `meta` are written directly)."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    staged: bool = False
    _by_name: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {c.name: c for c in self.columns}
        if len(by_name) != len(self.columns):
            raise ValueError(f"{self.name}: a column is declared twice")
        for key in self.primary_key:
            if key not in by_name or by_name[key].nullable:
                raise ValueError(f"{self.name}: primary key {key!r} must be a NOT NULL column")
        object.__setattr__(self, "_by_name", by_name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def dtypes(self) -> dict[str, str]:
        """Each column's pandas dtype (`SqlType.pandas`), in order: what a frame of the table's rows is typed with.

        >>> table("threads").dtypes()["last_ts"], table("threads").dtypes()["message_count"]
        ('datetime64[us, UTC]', 'Int64')
        """
        return {c.name: c.type.pandas for c in self.columns}

    def column(self, name: str) -> Column:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"{self.name} has no column {name!r}") from None

    def pick(self, *names: str) -> tuple[str, ...]:
        """`names`, each checked to be a column of this table (a list kept in another order elsewhere).

        >>> table("threads").pick("thread_id", "message_count")
        ('thread_id', 'message_count')
        """
        for name in names:
            self.column(name)
        return names

    def ddl(self) -> str:
        lines = [f"    {c.ddl()}" for c in self.columns]
        if self.primary_key:
            lines.append(f"    PRIMARY KEY ({', '.join(self.primary_key)})")
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n" + ",\n".join(lines) + "\n);\n"

    @property
    def staged_columns(self) -> tuple[Column, ...]:
        """The columns of a staged row, in order (a transform's tuples have exactly these)."""
        return tuple(c for c in self.columns if c.staged)

    @property
    def staging_schema(self) -> pa.Schema:
        import pyarrow as pa

        return pa.schema([(c.name, c.type.arrow) for c in self.staged_columns])

    @property
    def stage_kinds(self) -> str:
        """`_scan.stage`'s column kinds for this table's staged rows."""
        return "".join(c.type.kind for c in self.staged_columns)

    def describe(self) -> str:
        """One line per column as DuckDB reports it: `table.column TYPE[ NOT NULL]`."""
        return "".join(f"{self.name}.{c.name} {c.type.duckdb}{'' if c.nullable else ' NOT NULL'}\n" for c in self.columns)

    def markdown(self) -> str:
        """The column table docs/schema.md shows for it."""
        rows = [  # (a `|` in a cell, code spans included, is written `\|`)
            f"| {c.name} | {c.type.ddl}{'' if c.nullable else ' NOT NULL'} | {c.doc.replace('|', chr(92) + '|')}"
            f"{' (personal: masked when redacting)' if c.personal else ''} |"
            for c in self.columns
        ]
        return "\n".join(["| column | type | meaning |", "|---|---|---|", *rows]) + "\n"


def _c(name: str, type_: SqlType, doc: str, *, null: bool = True, **kw) -> Column:
    return Column(name, type_, null, doc, **kw)


# --- columns several tables share (one declaration each) ---------------------------------

THREAD_ID = _c("thread_id", VARCHAR, "LangGraph thread id", null=False)
TENANT_ID = _c(
    "tenant_id", VARCHAR,
    "tenant part of the thread key (`tenant:sub:session`); NULL when the key does not match the pattern",
)
SUB_TENANT_ID = _c("sub_tenant_id", VARCHAR, "sub-tenant part; NULL when empty or when the key does not match")
SESSION_ID = _c(
    "session_id", VARCHAR,
    "session part (the remainder, may contain `:`); the whole thread id when the key does not match",
)
_KEY = (THREAD_ID, TENANT_ID, SUB_TENANT_ID, SESSION_ID)

# The decoded message, in `messages` and `message_versions` alike.
LC_TYPE = _c(
    "lc_type", VARCHAR,
    "the message's own `type` field as stored (`human`, `ai`, `tool`, `system`, `chat`, `function`, `AIMessageChunk`, …)",
)
ROLE = _c(
    "role", VARCHAR,
    "`user` / `assistant` / `tool` / `system` / `other` (human, ai, tool, system and their chunks; anything else is `other`)",
    null=False,
)
NAME = _c("name", VARCHAR, "the message's `name` field", personal=True)
CONTENT = _c("content", VARCHAR, "text: a string as-is; a list of blocks → its text parts joined with `\\n`", personal=True)
CONTENT_CHARS = _c("content_chars", INTEGER, "length of `content` in characters")
NON_TEXT_BLOCKS = _c("non_text_blocks", INTEGER, "content blocks that are not text (images, files, …), counted not inlined")
MEDIA = _c(
    "media", JSON,
    "the content blocks that are not text, one marker each: `[{type, url, mime_type, inline}]` (`image_url` blocks as "
    "`image`; `url` the URL a block names, never fetched; `inline` when it carries its bytes, which are not kept); "
    "NULL when none",
    personal=True,
)
TOOL_CALLS = _c("tool_calls", JSON, "assistant tool calls as stored (`[{name, args, id, type}]`); NULL when none", personal=True)
TOOL_CALL_COUNT = _c("tool_call_count", INTEGER, "number of tool calls of an assistant message (0 otherwise)")
TOOL_CALL_ID = _c("tool_call_id", VARCHAR, "for a tool message, the call it answers")
TOOL_STATUS = _c("tool_status", VARCHAR, "for a tool message, `success` / `error` as stored")

CHAT_ROLE = _c("chat_role", VARCHAR, "the free-text `role` of a `ChatMessage` (or of a plain-dict message); NULL otherwise")
INPUT_TOKENS = _c("input_tokens", BIGINT, "`usage_metadata.input_tokens`")
OUTPUT_TOKENS = _c("output_tokens", BIGINT, "`usage_metadata.output_tokens`")
TOTAL_TOKENS = _c("total_tokens", BIGINT, "`usage_metadata.total_tokens`")
MODEL = _c("model", VARCHAR, "`response_metadata.model_name` (else `model`, else `model_id`)")

CHECKPOINT_NS = _c(
    "checkpoint_ns", VARCHAR, "`''` for the root graph, `node:task_id[|node:task_id…]` for subgraphs", null=False
)


def enclosing_namespace(ns: str, parents: Any) -> str | None:
    """The namespace a subgraph run of `ns` started from, as its `metadata.parents` names it; None when unknown.

    The longest key of `parents` that starts `ns` (`''`, the root, for a top-level run): so
    `tools:<id>|1`, a second call inside one task, hangs from the root, and
    `research:<id>|fetch:<id>` from `research:<id>`. (What `checkpoint_ns` means, used by the
    loader's `subgraph_messages` and the query layer's subgraph runs alike.)

    >>> enclosing_namespace("research:a|fetch:b", {"": "c1", "research:a": "c2"})
    'research:a'
    >>> enclosing_namespace("tools:t|1", {"": "c1"}), enclosing_namespace("x:y", None)
    ('', None)
    """
    if not isinstance(parents, dict):
        return None
    keys = [k for k in parents if isinstance(k, str) and k != ns and (k == "" or ns.startswith(k + "|"))]
    return max(keys, key=len) if keys else None


def _from_metadata(name: str, type_: SqlType, doc: str) -> Column:
    """A checkpoint column holding a field of its metadata JSON when the field has that type, else NULL.

    DuckDB computes it at ingest: metadata is JSON text already, and parsing it in
    Python per checkpoint is the slow way.
    """
    if type_ is INTEGER:
        expr = (
            f"CASE WHEN json_type(metadata, '$.{name}') IN ('BIGINT', 'UBIGINT') "
            f"THEN TRY_CAST(json_extract(metadata, '$.{name}') AS INTEGER) END"
        )
    elif type_ is VARCHAR:
        expr = f"CASE WHEN json_type(metadata, '$.{name}') = 'VARCHAR' THEN json_extract_string(metadata, '$.{name}') END"
    else:
        raise ValueError(f"metadata.{name}: no extraction for {type_.ddl}")
    return Column(name, type_, True, doc, derived=expr)


# --- the tables, in the order the DDL creates them ----------------------------------------

META = Table(
    "meta",
    "`key` / `value` pairs: `schema_version`, `tool_version`, `source_token`, `vacuum_debt`",
    (
        _c("key", VARCHAR, "`schema_version`, `tool_version`, `source_token` (the source's change token at the "
           "last load: an incremental load that finds it unchanged reads nothing more), or `vacuum_debt` "
           "(`loads,rows`: incremental loads, and rows they deleted, since DuckDB last merged row groups; "
           "`loaders.writer.VACUUM_AFTER_ROWS`)", null=False),
        _c("value", VARCHAR, "its value"),
    ),
    primary_key=("key",),
)

LOADS = Table(
    "loads",
    "one row per load into this path (kept across re-runs)",
    (
        _c("load_id", INTEGER, "1, 2, … per load into this path", null=False),
        _c("source", VARCHAR, "path or DSN of the source, with the password masked", null=False),
        _c("source_kind", VARCHAR, "the source kind read (docs/sources.md): `sqlite`, `postgres`, `postgres-csv`, `pg-dump`, "
           "`mysql`, `mysql-dump`, `redis`, `mongodb`, `mongo-dump`, or an extension's kind", null=False),
        _c("mode", VARCHAR, "`full` / `incremental`", null=False),
        _c("started_at", TIMESTAMPTZ, "when the load started", null=False),
        _c("finished_at", TIMESTAMPTZ, "when it finished"),
        _c("status", VARCHAR, "`ok`", null=False),
        _c("threads", INTEGER, "rows in `threads` after the load"),
        _c("checkpoints", INTEGER, "rows in `checkpoints` after the load"),
        _c("messages", INTEGER, "rows in `messages` after the load"),
        _c("errors", INTEGER, "rows this load added to `load_errors`"),
        _c("thread_key_pattern", VARCHAR, "the regular expression that split thread ids into tenant, sub-tenant, session"),
        _c("tool_version", VARCHAR, "version of the loader"),
        _c("options", JSON, "the source options the load was given"),
    ),
    primary_key=("load_id",),
)

LOAD_ERRORS = Table(
    "load_errors",
    "one row per damaged row that was skipped",
    (
        _c("load_id", INTEGER, "the load that skipped it", null=False, staged=False),
        _c("thread_id", VARCHAR, "its thread, when known"),
        _c("checkpoint_ns", VARCHAR, "its checkpoint namespace, when known"),
        _c("checkpoint_id", VARCHAR, "its checkpoint, when known"),
        _c("stage", VARCHAR, "`checkpoint`, `metadata`, `messages`, `message`, `write`, `source`, or the table whose JSON was invalid", null=False),
        _c("reason", VARCHAR, "what was wrong", null=False, personal=True),
    ),
    staged=True,
)

THREADS = Table(
    "threads",
    "one row per thread",
    (
        *_KEY,
        _c("first_ts", TIMESTAMPTZ, "smallest ts of any root checkpoint"),
        _c("last_ts", TIMESTAMPTZ, "greatest ts of any root checkpoint"),
        _c("checkpoint_count", INTEGER, "checkpoints in all namespaces", null=False),
        _c("root_checkpoint_count", INTEGER, "checkpoints with `checkpoint_ns = ''`", null=False),
        _c("subgraph_checkpoint_count", INTEGER, "checkpoints in other namespaces", null=False),
        _c("namespace_count", INTEGER, "distinct namespaces, root included", null=False),
        _c("message_count", INTEGER, "rows in `messages`", null=False),
        _c(
            "latest_checkpoint_id", VARCHAR,
            "greatest root checkpoint id, decoded or not (the checkpoint LangGraph's `get_tuple` reads)",
        ),
        _c(
            "transcript_checkpoint_id", VARCHAR,
            "the root checkpoint the transcript, current branch and pending interrupt come from: the greatest root "
            "checkpoint id that decoded; NULL when none did",
        ),
        _c(
            "stale_reason", VARCHAR,
            "why the transcript is not the latest root checkpoint's (`latest root checkpoint <id> not decoded: "
            "<its load_errors reason>`, or `the thread was cut short: <reason>` past the checkpoints a load reads); "
            "NULL when it is (docs/contract.md §3.11)",
            personal=True,
        ),
        _c(
            "latest_is_leaf", BOOLEAN,
            "false when some checkpoint names the transcript's checkpoint as its parent (ids out of order: clock skew between writers)",
        ),
        _c("branch_count", INTEGER, "root leaves (1 for a linear thread)", null=False),
        _c("fork_count", INTEGER, "root checkpoints with more than one child", null=False),
        _c("interrupt_pending", BOOLEAN, "the transcript's checkpoint carries an `__interrupt__` write", null=False),
        _c("interrupt_value", JSON, "the pending interrupt's value(s)", personal=True),
        _c("removed_message_count", INTEGER, "`removed` events on the current branch", null=False),
        _c("edited_message_count", INTEGER, "`edited` events on the current branch", null=False),
    ),
    primary_key=("thread_id",),
    staged=True,
)

CHECKPOINTS = Table(
    "checkpoints",
    "every checkpoint of every namespace",
    (
        THREAD_ID,
        CHECKPOINT_NS,
        _c("checkpoint_id", VARCHAR, "checkpoint id (UUIDv6)", null=False),
        _c("parent_checkpoint_id", VARCHAR, "the checkpoint it was written from; NULL for the first of a namespace"),
        _c("ts", TIMESTAMPTZ, "the checkpoint's own `ts` (wall clock of the writing process)"),
        _from_metadata("step", INTEGER, "`metadata.step`"),
        _from_metadata("source", VARCHAR, "`metadata.source`: `input` / `loop` / `update` / `fork`"),
        _from_metadata("run_id", VARCHAR, "`metadata.run_id` when present (names a run / process)"),
        _c(
            "message_count", INTEGER,
            "length of `state['messages']` at this checkpoint; NULL when the checkpoint has no messages channel",
        ),
        _c(
            "message_versions", INTEGER_LIST,
            "the message list as `message_versions.version` numbers, in order (root checkpoints only; NULL for subgraphs)",
        ),
        _c("is_root", BOOLEAN, "`checkpoint_ns = ''`", null=False),
        _c("is_latest", BOOLEAN, "greatest checkpoint id of its (thread, namespace)", null=False),
        _c("is_leaf", BOOLEAN, "no checkpoint of the thread names it as parent", null=False),
        _c("on_current_branch", BOOLEAN, "root checkpoint on the parent chain of the transcript's checkpoint (`threads.transcript_checkpoint_id`)", null=False),
        _c(
            "branch_root_id", VARCHAR,
            "for a root checkpoint off the current branch: the checkpoint on the current branch its branch hangs from; NULL otherwise",
        ),
        _c("has_interrupt", BOOLEAN, "an `__interrupt__` write is keyed on this checkpoint", null=False),
        # JSON text in SqliteSaver, JSONB in Postgres: passed through, not written by `to_json`.
        _c("metadata", JSON, "the whole checkpoint metadata (NULL when it is not valid JSON: see `load_errors`)", passthrough_json=True,
           personal=True),
    ),
    staged=True,
)

MESSAGES = Table(
    "messages",
    "the transcript of every thread, one row per message",
    (
        *_KEY,
        _c("ordinal", INTEGER, "0-based position in the latest root checkpoint's message list", null=False),
        ROLE,
        LC_TYPE,
        CHAT_ROLE,
        NAME,
        CONTENT,
        CONTENT_CHARS,
        NON_TEXT_BLOCKS,
        MEDIA,
        _c("message_id", VARCHAR, "the message's `id`; NULL when it has none"),
        _c(
            "ts", TIMESTAMPTZ,
            "`ts` of the oldest root checkpoint (any branch; smallest ts, tie → smallest checkpoint id) whose messages "
            "contain this id; NULL when the message has no id",
        ),
        _c("checkpoint_id", VARCHAR, "the checkpoint that gave `ts`"),
        TOOL_CALLS,
        TOOL_CALL_COUNT,
        TOOL_CALL_ID,
        TOOL_STATUS,
        INPUT_TOKENS,
        OUTPUT_TOKENS,
        TOTAL_TOKENS,
        MODEL,
        _c("usage_metadata", JSON, "the whole `usage_metadata`"),
        _c("response_metadata", JSON, "the whole `response_metadata`", personal=True),
        _c("additional_kwargs", JSON, "the whole `additional_kwargs`", personal=True),
        _c("version", INTEGER, "the `message_versions.version` of this exact payload"),
    ),
    staged=True,
)

MESSAGE_VERSIONS = Table(
    "message_versions",
    "every distinct message payload a thread's root checkpoints hold",
    (
        THREAD_ID,
        _c("version", INTEGER, "number of this payload within the thread (0-based, in order of first appearance)", null=False),
        _c("message_id", VARCHAR, "message id (several versions share one id when a message was edited)"),
        LC_TYPE,
        ROLE,
        NAME,
        CONTENT,
        CONTENT_CHARS,
        NON_TEXT_BLOCKS,
        MEDIA,
        TOOL_CALLS,
        TOOL_CALL_COUNT,
        TOOL_CALL_ID,
        TOOL_STATUS,
        CHAT_ROLE,
        INPUT_TOKENS,
        OUTPUT_TOKENS,
        TOTAL_TOKENS,
        MODEL,
        _c("first_checkpoint_id", VARCHAR, "oldest root checkpoint (smallest ts, tie → smallest id) holding this exact payload"),
        _c("first_ts", TIMESTAMPTZ, "its ts"),
    ),
    staged=True,
)

MESSAGE_EVENTS = Table(
    "message_events",
    "how the root message list changed from checkpoint to checkpoint",
    (
        THREAD_ID,
        _c("checkpoint_id", VARCHAR, "the checkpoint where the change is seen", null=False),
        _c("parent_checkpoint_id", VARCHAR, "the checkpoint compared against"),
        _c("ts", TIMESTAMPTZ, "ts of `checkpoint_id`"),
        _c(
            "event", VARCHAR,
            "`added` (new id), `edited` (same id, different content, role or tool calls), `removed` (id gone from the "
            "list), `reordered` (same ids, different order)",
            null=False,
        ),
        _c("message_id", VARCHAR, "message id (NULL for messages without id)"),
        _c("position", INTEGER, "position in the list at `checkpoint_id` (at the parent for `removed`)"),
        _c("version", INTEGER, "version at `checkpoint_id` (NULL for `removed`)"),
        _c("previous_version", INTEGER, "version at the parent (NULL for `added`)"),
    ),
    staged=True,
)

SUBGRAPH_MESSAGES = Table(
    "subgraph_messages",
    "what each subgraph run said: the messages of its namespace's latest checkpoint that the list it started "
    "from does not hold (never part of a transcript)",
    (
        THREAD_ID,
        CHECKPOINT_NS,
        _c("checkpoint_id", VARCHAR, "the namespace's latest checkpoint (greatest id), whose list this is", null=False),
        _c("ordinal", INTEGER, "0-based position in that list", null=False),
        ROLE,
        LC_TYPE,
        NAME,
        CONTENT,
        CONTENT_CHARS,
        NON_TEXT_BLOCKS,
        MEDIA,
        _c("message_id", VARCHAR, "the message's `id`; NULL when it has none"),
        _c(
            "ts", TIMESTAMPTZ,
            "`ts` of the oldest checkpoint of this namespace (smallest ts, tie → smallest id) holding this exact payload",
        ),
        TOOL_CALLS,
        TOOL_CALL_COUNT,
        TOOL_CALL_ID,
        TOOL_STATUS,
        INPUT_TOKENS,
        OUTPUT_TOKENS,
        TOTAL_TOKENS,
        MODEL,
    ),
    staged=True,
)

THREAD_DIGESTS = Table(
    "thread_digests",
    "what the loads read of each thread: a digest of its checkpoint keys (an incremental load re-reads a thread "
    "only when the source's digest differs)",
    (
        THREAD_ID,
        _c("key_digest", VARCHAR, "md5 of the thread's checkpoint keys, ordered by namespace then id (`loaders.digests`)",
           null=False),
        _c("load_id", INTEGER, "the load that read the thread", null=False),
    ),
    primary_key=("thread_id",),
)

TABLES: tuple[Table, ...] = (
    META, LOADS, LOAD_ERRORS, THREADS, CHECKPOINTS, MESSAGES, MESSAGE_VERSIONS, MESSAGE_EVENTS, SUBGRAPH_MESSAGES,
    THREAD_DIGESTS,
)
_BY_NAME = {t.name: t for t in TABLES}

#: Staged rows of skipped, damaged source rows (`LoadError` records; the writer adds the load id).
ERROR_TABLE = LOAD_ERRORS.name
#: The tables of a thread's rows (an incremental load replaces a thread's rows in each).
DATA_TABLES: tuple[str, ...] = tuple(t.name for t in TABLES if t.staged and t is not LOAD_ERRORS)


def table(name: str) -> Table:
    """The loader's table `name`."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no table {name!r} in the loader's catalogue") from None


def ddl() -> str:
    """The DDL of every table (`CREATE TABLE IF NOT EXISTS`, so it runs on an existing database too)."""
    return "\n".join(t.ddl() for t in TABLES)


def staging_schemas() -> dict[str, pa.Schema]:
    """{table: Arrow schema of its staged parts} for every staged table (the data tables, then errors)."""
    return {name: _BY_NAME[name].staging_schema for name in (*DATA_TABLES, ERROR_TABLE)}


@functools.cache
def stage_kinds() -> dict[pa.DataType, str]:
    """`_scan.stage`'s kind for each staged Arrow type (`loaders.parts._kinds`), made at the first
    call: it holds Arrow types (see `SqlType`), and importing the catalogue imports no pyarrow."""
    return {t.arrow: t.kind for t in (VARCHAR, JSON, INTEGER, BIGINT, BOOLEAN, TIMESTAMPTZ, INTEGER_LIST)}


def describe(tables: Iterable[Table] = TABLES) -> str:
    """The golden file's lines (`tests/loaders/golden/schema.txt`): by table name, then column order."""
    return "".join(t.describe() for t in sorted(tables, key=lambda t: t.name))


_BLOCK = re.compile(r"<!-- catalog: (?P<name>[a-z_]+) -->\n.*?<!-- /catalog -->\n", re.S)


def doc_blocks(text: str) -> list[str]:
    """The table names of the generated blocks in a document, in order."""
    return [m.group("name") for m in _BLOCK.finditer(text)]


def render_doc(text: str, tables: Iterable[Table]) -> str:
    """`text` with the block of each of `tables` regenerated:

        <!-- catalog: messages -->
        ## messages — the transcript of every thread, one row per message
        | column | type | meaning | …
        <!-- /catalog -->

    Prose outside the blocks is kept; blocks of other tables are left as they are.
    """
    by_name = {t.name: t for t in tables}

    def block(m: re.Match) -> str:
        t = by_name.get(m.group("name"))
        if t is None:
            return m.group(0)
        return f"<!-- catalog: {t.name} -->\n## {t.name} — {t.doc}\n\n{t.markdown()}<!-- /catalog -->\n"

    return _BLOCK.sub(block, text)
