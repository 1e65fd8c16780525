"""A Transcript Lens dataset: the database's tables as a folder of Parquet files.

    lens/                              the folder named by `--db` with `--format parquet`
      CURRENT                          the name of the current version (replaced atomically)
      v-20261202T081500-3f2a…/         one version: every table of one load
        _tables.json                   {table: {"partition_by": [...], "comment": …}}
        messages/tenant=acme/month=2025-06/r0.parquet
        threads/r0.parquet             (every table is a folder of parts)
        …
      .lens.duckdb                     the working database the versions are exported from
                                       (kept: it is what `--incremental` updates)

A version is written beside the current one and becomes current only when
`CURRENT` is replaced (`os.replace`), so a reader sees one whole load or the one
before, never a mix; the previous version is kept for readers still on it.
`messages` is hive-partitioned by tenant and month (`tenant`, `month`: extra
path keys, beside the row's own `tenant_id` and `ts`; a thread key without a
tenant is `tenant=_none`, a message without a time `month=none`): a query on
some tenants or months reads only their folders. The files are plain Parquet,
readable as they are by DuckDB, Polars, Spark or Trino.

>>> write_version(con, "lens/")  # doctest: +SKIP
>>> table_sources("lens/")["messages"].glob  # doctest: +SKIP
'lens/v-…/messages/**/*.parquet'
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from loaders.records import TargetError

CURRENT = "CURRENT"
#: What `CURRENT` and `_tables.json` may name: a version folder (`new_version`) and a table.
_VERSION_NAME = re.compile(r"v-[0-9A-Za-z_-]+")
_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]*")
TABLES_FILE = "_tables.json"
WORK_DB = ".lens.duckdb"
#: Hive partition keys per table, each an SQL expression over the row (our own text, never data).
PARTITIONS: dict[str, dict[str, str]] = {
    "messages": {"tenant": "coalesce(tenant_id, '_none')", "month": "coalesce(strftime(ts, '%Y-%m'), 'none')"},
}


class TableSource(NamedTuple):
    """Where one table of the current version is: a glob of its Parquet parts."""

    glob: str
    partition_by: tuple[str, ...]
    comment: str | None


def is_dataset(path: str | os.PathLike) -> bool:
    """True for a folder holding a Transcript Lens dataset (its `CURRENT` pointer)."""
    return (Path(path) / CURRENT).is_file()


def refuse_foreign_folder(folder: Path) -> None:
    """A load writes versions into its folder: a non-empty folder that is not a dataset is refused."""
    if folder.is_file():
        raise TargetError(f"not a folder, so no dataset written there: {folder} (name a folder for --format parquet)")
    if folder.is_dir() and any(folder.iterdir()) and not is_dataset(folder) and not (folder / WORK_DB).exists():
        raise TargetError(f"not a Transcript Lens dataset, so not written into: {folder} (name a new or empty folder)")


def new_version(folder: Path) -> Path:
    """A fresh, empty version folder (not current until `commit_version`)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    path = folder / f"v-{stamp}-{uuid.uuid4().hex[:12]}"
    path.mkdir(parents=True)
    return path


def copy_table(con, table: str, version: Path, part: str = "r0", source: str | None = None) -> None:
    """Write `table` (or the query `source`, with the table's columns) as Parquet part(s) named
    `part` under `version/table/`, hive-partitioned as `PARTITIONS` says. `con`'s session
    time zone must be UTC (the month of a message is its UTC month)."""
    target = version / table
    target.mkdir(parents=True, exist_ok=True)
    query = source or f'SELECT * FROM "{table}"'
    keys = PARTITIONS.get(table)
    if not keys:
        con.execute(f"COPY ({query}) TO ? (FORMAT parquet)", [str(target / f"{part}.parquet")]).fetchall()
        return
    # (a file name pattern cannot be a parameter: `part` is ours, r<digits>)
    extra = ", ".join(f"{expr} AS {key}" for key, expr in keys.items())
    con.execute(
        f"COPY (SELECT *, {extra} FROM ({query})) TO ? "
        f"(FORMAT parquet, PARTITION_BY ({', '.join(keys)}), OVERWRITE_OR_IGNORE, FILENAME_PATTERN '{part}_{{i}}')",
        [str(target)],
    ).fetchall()
    if not any(target.rglob("*.parquet")):
        # No rows: one empty part under placeholder keys keeps the table's columns readable.
        empty = target.joinpath(*(f"{key}=none" for key in keys))
        empty.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY (SELECT * FROM ({query}) WHERE false) TO ? (FORMAT parquet)", [str(empty / f"{part}.parquet")]).fetchall()


def write_tables_file(version: Path, comments: dict[str, str | None], load_id: int | None = None) -> None:
    """Record the version's tables (partition keys and the comment each carries: a derived
    table's query fingerprint) and the load it holds; written last, once every part is there."""
    tables = {t: {"partition_by": list(PARTITIONS.get(t, {})), "comment": c} for t, c in sorted(comments.items())}
    (version / TABLES_FILE).write_text(json.dumps({"load_id": load_id, "tables": tables}, indent=1))


def version_load_id(folder: str | os.PathLike) -> int | None:
    """The load the dataset's current version was exported from."""
    return _tables_file(current_version(folder)).get("load_id")


def _tables_file(version: Path) -> dict:
    return json.loads((version / TABLES_FILE).read_text())


def commit_version(folder: Path, version: Path, keep: int = 1) -> None:
    """Make `version` current (one `os.replace` of the pointer), then remove all versions but
    it and the `keep` newest before it (readers may still be on those)."""
    tmp = folder / f"{CURRENT}.tmp-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    tmp.write_text(version.name + "\n")
    with tmp.open("rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, folder / CURRENT)
    older = sorted((p for p in folder.glob("v-*") if p.is_dir() and p != version), key=lambda p: p.name)
    for old in older[: max(0, len(older) - keep)]:
        shutil.rmtree(old, ignore_errors=True)


def write_version(con, folder: str | os.PathLike, tables: Iterable[str] | None = None, load_id: int | None = None,
                  keep: int = 1) -> Path:
    """Export every table of `con`'s database (or `tables`) as a new version of the dataset at
    `folder` and make it current, keeping the `keep` newest versions before it (an erasure
    keeps none). Returns the version folder.

    >>> write_version(duckdb.connect("lens.duckdb", read_only=True), "lens/")  # doctest: +SKIP
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    con.execute("SET TimeZone = 'UTC'").fetchall()
    comments = dict(con.execute(
        "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'"
    ).fetchall())
    wanted = sorted(comments if tables is None else tables)
    version = new_version(folder)
    try:
        for table in wanted:
            copy_table(con, table, version)
        write_tables_file(version, {t: comments.get(t) for t in wanted}, load_id)
    except BaseException:
        shutil.rmtree(version, ignore_errors=True)
        raise
    commit_version(folder, version, keep=keep)
    return version


def current_version(folder: str | os.PathLike) -> Path:
    """The current version folder of the dataset at `folder`."""
    folder = Path(folder)
    try:
        name = (folder / CURRENT).read_text().strip()
    except FileNotFoundError:
        raise FileNotFoundError(f"no Transcript Lens dataset at {folder} (no {CURRENT} file)") from None
    if not _VERSION_NAME.fullmatch(name):  # (a folder of its own, never a path out of it)
        raise TargetError(f"not a Transcript Lens dataset: {folder / CURRENT} names {name[:80]!r}, not a version folder")
    return folder / name


def table_sources(folder: str | os.PathLike) -> dict[str, TableSource]:
    """{table: where its Parquet parts are} in the dataset's current version. A table is named
    as a load names one (lower-case letters, digits, `_`): the name goes into a view's SQL and
    its folder's path, and `_tables.json` is the folder's, not ours."""
    version = current_version(folder)
    tables = _tables_file(version)["tables"]
    for table in tables:
        if not isinstance(table, str) or not _TABLE_NAME.fullmatch(table):
            raise TargetError(f"not a Transcript Lens dataset: {version / TABLES_FILE} names a table {table!r}")
    return {t: _source(version, t, spec.get("comment")) for t, spec in tables.items()}


def _source(version: Path, table: str, comment: str | None = None) -> TableSource:
    return TableSource(str(version / table / "**" / "*.parquet"), tuple(PARTITIONS.get(table, {})), comment)


def create_views(con, sources: dict[str, TableSource]) -> None:
    """A view per table over its Parquet parts, named as the table, carrying its comment (a
    derived table's fingerprint), without the partition keys: the table as a database holds it."""
    for table, src in sources.items():
        # Names and keys are the catalogue's and ours; the path is quoted as an SQL string.
        drop = f" EXCLUDE ({', '.join(src.partition_by)})" if src.partition_by else ""
        hive = "true" if src.partition_by else "false"
        glob = src.glob.replace("'", "''")
        con.execute(f"CREATE VIEW \"{table}\" AS SELECT *{drop} FROM read_parquet('{glob}', hive_partitioning = {hive})")
        if src.comment:
            con.execute(f"COMMENT ON VIEW \"{table}\" IS '{src.comment.replace(chr(39), chr(39) * 2)}'")


def version_views(con, version: Path, tables: Iterable[str]) -> None:
    """`create_views` for some tables of a version being written (it has no table list yet)."""
    create_views(con, {t: _source(version, t) for t in tables})


def export_load(work: Path, folder: Path, load_id: int) -> Path | None:
    """Export the working database as a new current version, unless the current one was
    already made from its load `load_id` (an incremental load that found nothing new)."""
    from loaders.writer import connect_read_only

    if is_dataset(folder):
        if _tables_file(current_version(folder)).get("load_id") == load_id:
            return None
    con = connect_read_only(work)
    try:
        version = write_version(con, folder, load_id=load_id)
    finally:
        con.close()
    return version
