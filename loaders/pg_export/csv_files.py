"""Which CSV files of a folder or zip are a COPY export, and of which table (by name and header)."""

from __future__ import annotations

import csv
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import IO

from loaders.pg_export.archive import gunzipped, is_zip, open_maybe_gzip, open_member, open_zip, regular_file
from loaders.pg_export.rows import expected_columns
from loaders.pg_rows import MIGRATIONS, TABLES
from loaders.records import SourceError


def table_of(columns: list[str]) -> str | None:
    """Which checkpoint table a CSV header belongs to, by its distinguishing columns."""
    cols = set(columns)
    if {"task_id", "idx", "channel", "blob"} <= cols:
        return "checkpoint_writes"
    if {"checkpoint", "metadata", "thread_id"} <= cols:
        return "checkpoints"
    if {"channel", "blob", "thread_id"} <= cols:
        return "checkpoint_blobs"
    if cols == {"v"}:
        return MIGRATIONS
    return None


def csv_table_name(name: str) -> str | None:
    """The table a file is named after (`<table>.csv`, `<table>.csv.gz`); None for no CSV."""
    base = name.rsplit("/", 1)[-1]
    for suffix in (".csv", ".csv.gz"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return None


def read_header(fh: IO[bytes], name: str) -> list[str]:
    first = fh.readline(1 << 16)
    if not first:
        raise SourceError(f"{name}: empty file (expected a CSV header line from COPY ... WITH (FORMAT csv, HEADER true))")
    try:
        text = first.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        raise SourceError(f"{name}: not UTF-8 text (expected a CSV header line)") from None
    row = next(csv.reader([text]), [])
    return [c.strip() for c in row]


def _zip_members(zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [
        m for m in zf.infolist()
        if not m.is_dir() and not m.filename.startswith("__MACOSX/") and csv_table_name(m.filename) is not None
    ]


def csv_candidates(path: Path) -> list[str]:
    """Names of the CSV files a folder or zip holds (for detection)."""
    if path.is_dir():  # (links too: `collect_csv_files` refuses them, never follows them)
        return [p.name for p in sorted(path.iterdir())
                if (p.is_symlink() or p.is_file()) and csv_table_name(p.name) is not None]
    if is_zip(path):
        with open_zip(path, str(path)) as zf:
            return [m.filename for m in _zip_members(zf)]
    return []


def looks_like_export(path: Path) -> bool:
    """A folder or zip holding a CSV named after a checkpoint table, or with the header of one;
    or one table's CSV alone (claimed, so that opening it can say what to pass instead)."""
    if path.is_dir() and (path / "toc.dat").is_file():
        return False  # a pg_dump directory archive
    if path.is_file() and csv_table_name(path.name) is not None and not is_zip(path):
        try:
            with open_maybe_gzip(path) as fh:
                return table_of(read_header(fh, path.name)) is not None
        except (OSError, EOFError, SourceError):
            return False
    try:
        names = csv_candidates(path)
    except (OSError, zipfile.BadZipFile):
        return False
    if any(csv_table_name(n) in (*TABLES, MIGRATIONS) for n in names):
        return True
    for name in names:
        try:
            if path.is_dir():
                with open_maybe_gzip(regular_file(path / name, str(path))) as fh:
                    header = read_header(fh, name)
            else:
                with open_zip(path, str(path)) as zf, open_member(path, zf, name) as fh:
                    header = read_header(fh, name)
        except (OSError, EOFError, SourceError, zipfile.BadZipFile):
            continue
        if table_of(header) is not None:
            return True
    return False


def collect_csv_files(path: Path, tmp: str) -> dict[str, tuple[Path, list[str]]]:
    """{table: (CSV file on disk, its header)}; zip members needed are extracted into `tmp`."""
    where = str(path.resolve())
    if path.is_file() and not is_zip(path) and csv_table_name(path.name) is not None:
        raise SourceError(
            f"{where}: one table's CSV; pass the folder (or .zip) holding "
            f"{', '.join(t + '.csv' for t in TABLES)} instead"
        )
    if not path.is_dir() and not is_zip(path):
        what = "not a folder or .zip" if path.exists() else "no such file or folder"
        raise SourceError(f"{where}: {what} (expected a folder or .zip of COPY CSV files)")
    try:
        zf = open_zip(path, where) if not path.is_dir() else None
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(f"{where}: unreadable zip file ({exc})") from None
    try:
        if zf is None:
            names = csv_candidates(path)
        else:
            names = [m.filename for m in _zip_members(zf)]
        found: dict[str, tuple[str, list[str]]] = {}
        for name in names:
            try:
                with (open_maybe_gzip(regular_file(path / name, where)) if zf is None
                      else gunzipped(open_member(path, zf, name), zf.getinfo(name).compress_size, f"{where}: {name}")) as fh:
                    header = read_header(fh, name)
            except (OSError, EOFError, zipfile.BadZipFile) as exc:
                raise SourceError(f"{where}: {name}: unreadable ({exc})") from None
            table = table_of(header)
            named = csv_table_name(name)
            if named in (*TABLES, MIGRATIONS) and table != named:
                what = f"that of {table}" if table else "not that of any checkpoint table"
                raise SourceError(
                    f"{where}: {name}: its header ({', '.join(header)}) is {what} "
                    f"(expected the columns of {named}: {', '.join(expected_columns(named))})"
                )
            if table is None:
                continue  # some other CSV beside the export
            if table in found:
                raise SourceError(f"{where}: both {found[table][0]} and {name} hold {table} rows")
            found[table] = (name, header)
        missing = [t for t in TABLES if t not in found]
        if missing:
            raise SourceError(
                f"{where}: no CSV of {', '.join(missing)} (expected {', '.join(t + '.csv' for t in TABLES)} "
                "written by COPY <table> TO ... WITH (FORMAT csv, HEADER true))"
            )
        if zf is None:
            return {t: (path / name, header) for t, (name, header) in found.items() if t in TABLES}
        out = {}
        for table in TABLES:
            name, header = found[table]
            # DuckDB reads files, not zip members: only the three needed are extracted, a gzipped
            # one decompressed on the way (capped; a refusal names the member, not the extracted file).
            target = Path(tempfile.mkdtemp(dir=tmp)) / name.rsplit("/", 1)[-1].removesuffix(".gz")
            try:
                with (gunzipped(open_member(path, zf, name), zf.getinfo(name).compress_size, f"{where}: {name}") as src,
                      target.open("wb") as dst):
                    shutil.copyfileobj(src, dst, 1 << 20)
            except (OSError, EOFError, zlib.error) as exc:  # (a damaged gzip or zip member; a full disk)
                target.unlink(missing_ok=True)
                raise SourceError(f"{where}: {name}: unreadable ({exc})") from None
            except BaseException:
                target.unlink(missing_ok=True)
                raise
            out[table] = (target, header)
        return out
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise SourceError(f"{where}: unreadable zip file ({exc})") from None
    finally:
        if zf is not None:
            zf.close()
