"""Wrong, partial and damaged Postgres sources fail at open() with a clear error, and touch no database."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from loaders import SourceError, SourceOptions
from loaders.pg_export.copy_text import copy_text_field
from loaders.registry import resolve
from storegen import run_scenarios
from tests.loaders.pg_util import dsn_for, export_csv, fresh_database, pg_dump, saver_for, table_rows, zip_folder
from tests.loaders.util import folder_fingerprint, load_db, rows

THREADS = {"acme:web:sess-001": "simple_chat", "initech:support:sess-021": "interrupt_pending"}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            for tid, scenario in THREADS.items():
                run_scenarios(saver, threads={tid: scenario})
        d = tmp_path_factory.mktemp("pg_small")
        csv = export_csv(dsn, d / "csv")
        plain = pg_dump(dsn, d / "data.sql")
        custom = pg_dump(dsn, d / "data.dump", "-Fc")
        good = d / "good.duckdb"
        load_db(dsn, good)
        yield SimpleNamespace(dsn=dsn, csv=csv, plain=plain, custom=custom, dir=d, good=good)


@pytest.fixture()
def target(small, tmp_path):
    """An existing database that every failing load must leave byte-identical."""
    folder = tmp_path / "db"
    folder.mkdir()
    db = folder / "existing.duckdb"
    shutil.copyfile(small.good, db)
    before = folder_fingerprint(folder)
    yield db
    assert folder_fingerprint(folder) == before


def _csv_copy(small, tmp_path: Path) -> Path:
    return Path(shutil.copytree(small.csv, tmp_path / "csv"))


def test_missing_table(small, tmp_path, target):
    csv = _csv_copy(small, tmp_path)
    (csv / "checkpoint_writes.csv").unlink()
    with pytest.raises(SourceError, match=r"csv: no CSV of checkpoint_writes \(expected checkpoints.csv"):
        load_db(csv, target)
    zip_path = zip_folder(csv, tmp_path / "partial.zip")
    with pytest.raises(SourceError, match=r"partial.zip: no CSV of checkpoint_writes"):
        load_db(zip_path, target)


def test_a_single_csv_file_asks_for_its_folder(small, target):
    with pytest.raises(SourceError, match=r"checkpoints.csv: one table's CSV; pass the folder \(or .zip\) holding checkpoints.csv"):
        load_db(small.csv / "checkpoints.csv", target)


def test_csv_of_another_table(small, tmp_path, target):
    csv = _csv_copy(small, tmp_path)
    shutil.copyfile(csv / "checkpoint_writes.csv", csv / "checkpoints.csv")
    with pytest.raises(SourceError, match=r"checkpoints.csv: its header \(thread_id, .*\) is that of checkpoint_writes"):
        load_db(csv, target)
    (csv / "checkpoints.csv").write_text("id,name\n1,x\n")
    with pytest.raises(SourceError, match=r"checkpoints.csv: its header \(id, name\) is not that of any checkpoint table"):
        load_db(csv, target)


def test_files_are_recognised_by_header_not_name(small, tmp_path):
    csv = _csv_copy(small, tmp_path)
    for i, name in enumerate(["checkpoints.csv", "checkpoint_blobs.csv", "checkpoint_writes.csv"]):
        (csv / name).rename(csv / f"export_{i}.csv")
    (csv / "notes.csv").write_text("a,b\n1,2\n")
    db = tmp_path / "renamed.duckdb"
    load_db(csv, db)
    assert table_rows(db, "messages") == table_rows(small.good, "messages")


@pytest.mark.parametrize("cut", ["mid_row", "mid_quoted_field"])
def test_truncated_csv(small, tmp_path, target, cut):
    csv = _csv_copy(small, tmp_path)
    name = "checkpoint_blobs.csv" if cut == "mid_row" else "checkpoints.csv"
    data = (csv / name).read_bytes()
    if cut == "mid_row":
        end = data.rindex(b"\n", 0, len(data) - 1)
        data = data[: end + 40]  # the last row stops after a few fields
    else:
        data = data[: data.rindex(b'{""v""') + 30]  # inside a quoted JSON field
    (csv / name).write_bytes(data)
    with pytest.raises(SourceError, match=rf"{name}: .*(Line|line|malformed|JSON)"):
        load_db(csv, target)


def test_malformed_bytea(small, tmp_path, target):
    csv = _csv_copy(small, tmp_path)
    lines = (csv / "checkpoint_blobs.csv").read_text().splitlines(keepends=True)
    i = next(i for i, ln in enumerate(lines) if ",messages," in ln)
    lines[i] = lines[i].rstrip("\n")[:-1] + "\n"  # odd number of hex digits
    (csv / "checkpoint_blobs.csv").write_text("".join(lines))
    with pytest.raises(SourceError, match=r"checkpoint_blobs.csv: checkpoint_blobs row \(thread_id='.*'\): blob is malformed bytea"):
        load_db(csv, target)


def test_null_where_postgres_has_not_null(small, tmp_path, target):
    csv = _csv_copy(small, tmp_path)
    lines = (csv / "checkpoints.csv").read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace(',"",', ",,", 1)  # checkpoint_ns "" → NULL
    (csv / "checkpoints.csv").write_text("".join(lines))
    with pytest.raises(SourceError, match=r"checkpoints.csv: checkpoints row .*: checkpoint_ns is NULL"):
        load_db(csv, target)


def test_csv_null_and_empty_string_are_told_apart(small, tmp_path):
    csv = _csv_copy(small, tmp_path)
    with gzip.open(tmp_path / "checkpoints.csv.gz", "wb") as gz:
        gz.write((csv / "checkpoints.csv").read_bytes())
    (csv / "checkpoints.csv").unlink()
    shutil.move(tmp_path / "checkpoints.csv.gz", csv / "checkpoints.csv.gz")
    db = tmp_path / "gz.duckdb"
    load_db(csv, db)
    got = rows(db, "SELECT checkpoint_ns, parent_checkpoint_id FROM checkpoints WHERE parent_checkpoint_id IS NULL")
    assert got and all(r["checkpoint_ns"] == "" for r in got)  # "" stayed '', the empty field stayed NULL
    assert table_rows(db, "checkpoints") == table_rows(small.good, "checkpoints")


def test_not_a_dump(tmp_path, target):
    junk = tmp_path / "notes.sql"
    junk.write_text("SELECT 1;\n-- nothing to see\n")
    with pytest.raises(SourceError, match=r"notes.sql: not a recognised checkpoint source \(expected one of: sqlite, postgres, postgres-csv, pg-dump"):
        load_db(junk, target)
    with pytest.raises(SourceError, match=r"notes.sql: not a pg_dump file"):
        load_db(junk, target, kind="pg-dump")
    fake = tmp_path / "fake.dump"
    fake.write_bytes(b"PGDMP" + b"\x00" * 64)
    with pytest.raises(SourceError, match=r"fake.dump: pg_restore failed: .*"):
        load_db(fake, target)


def test_truncated_plain_dump(small, tmp_path, target):
    data = small.plain.read_bytes()
    cut = tmp_path / "cut.sql"
    cut.write_bytes(data[: data.index(b"COPY public.checkpoint_blobs") + 2000])
    with pytest.raises(SourceError, match=r"cut.sql: (ends inside the COPY block of checkpoint_blobs|line \d+: .* fields)"):
        load_db(cut, target)
    cut.write_bytes(data[: data.index(b"COPY public.checkpoint_writes")])
    with pytest.raises(SourceError, match=r"cut.sql: missing tables checkpoints, checkpoint_writes"):
        load_db(cut, target)


def test_dump_made_with_inserts(small, tmp_path, target):
    dump = pg_dump(small.dsn, tmp_path / "inserts.sql", "--inserts")
    with pytest.raises(SourceError, match=r"no COPY data .*made with --inserts"):
        load_db(dump, target)


def test_custom_dump_without_pg_restore_on_path(small, tmp_path, target, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SourceError, match=r"data.dump: a pg_dump custom-format archive; reading it needs pg_restore .* on PATH"):
        load_db(small.custom, target)


def test_truncated_custom_dump(small, tmp_path, target):
    cut = tmp_path / "cut.dump"
    data = small.custom.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match=r"cut.dump: .*pg_restore failed"):
        load_db(cut, target)


def _bundles(src) -> list:
    reader = resolve(str(src)).open(str(src), SourceOptions())
    try:
        return list(reader.threads())
    finally:
        reader.close()


def test_directory_tar_and_gzip_dumps_read_like_the_database(small, tmp_path):
    expected = _bundles(small.dsn)
    directory = tmp_path / "dir"
    subprocess.run(["pg_dump", "--data-only", "-Fd", "-f", str(directory), small.dsn], check=True, capture_output=True)
    tar = pg_dump(small.dsn, tmp_path / "data.tar", "-Ft")
    gz = tmp_path / "data.sql.gz"
    gz.write_bytes(gzip.compress(small.plain.read_bytes()))
    for src in (directory, tar, gz):
        assert resolve(str(src)).kind == "pg-dump"
        assert _bundles(src) == expected, src


def test_zip_with_a_folder_inside(small, tmp_path):
    zip_path = tmp_path / "nested.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        for p in small.csv.iterdir():
            zf.write(p, f"backup/2025-03-03/{p.name}")
    assert resolve(str(zip_path)).kind == "postgres-csv"
    assert _bundles(zip_path) == _bundles(small.dsn)


def test_zip_of_gzipped_csv_files(small, tmp_path):
    zip_path = tmp_path / "gz.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        for p in small.csv.iterdir():
            zf.writestr(f"backup/{p.name}.gz", gzip.compress(p.read_bytes()))
    assert resolve(str(zip_path)).kind == "postgres-csv"
    assert _bundles(zip_path) == _bundles(small.dsn)


def test_live_errors_name_the_database_without_its_password(small, tmp_path, target):
    wrong = dsn_for("tl_does_not_exist").replace("postgres@", "postgres:hunter2@")
    with pytest.raises(SourceError, match=r"postgres:\*\*\*@.*/tl_does_not_exist: cannot connect") as err:
        load_db(wrong, target)
    assert "hunter2" not in str(err.value)
    # libpq quotes a malformed token of the DSN, here the password itself.
    with pytest.raises(SourceError, match=r"cannot connect \(invalid percent-encoded token") as err:
        load_db("postgresql://postgres:hun%zzter2@127.0.0.1/x", target)
    assert "hun" not in str(err.value)
    with fresh_database() as empty:
        with pytest.raises(SourceError, match=r"no checkpoints table \(expected a database written by PostgresSaver\)"):
            load_db(empty, target)


def test_cli_reports_a_bad_source_and_exits_2(tmp_path):
    wrong = dsn_for("tl_does_not_exist").replace("postgres@", "postgres:hunter2@")
    proc = subprocess.run(
        [sys.executable, "-m", "loaders", wrong, "--db", str(tmp_path / "x.duckdb"), "--quiet"],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 2
    assert "cannot connect" in proc.stderr and "hunter2" not in proc.stderr + proc.stdout
    assert not (tmp_path / "x.duckdb").exists()


def test_copy_text_escapes():
    assert copy_text_field(rb"\N") is None
    assert copy_text_field(b"") == ""
    assert copy_text_field(rb"a\tb\nc\rd\\e\bf\fg\vh") == "a\tb\nc\rd\\e\bf\fg\vh"
    assert copy_text_field(rb"\\x00ff") == "\\x00ff"  # bytea hex in text format
    assert copy_text_field(rb"\101\x42\303\244") == "ABä"  # octal / hex bytes, then UTF-8
    assert copy_text_field(rb"\q") == "q"  # any other escaped character is itself


def test_resolve_names_every_kind(small):
    assert resolve(small.dsn).kind == "postgres"
    assert resolve(small.dsn.replace("postgresql://", "postgres://")).kind == "postgres"
    assert resolve(str(small.csv)).kind == "postgres-csv"
    assert resolve(str(small.plain)).kind == "pg-dump"
    assert resolve(str(small.custom)).kind == "pg-dump"


def test_subset_options_apply_to_exports(small):
    src = resolve(str(small.plain)).open(str(small.plain), SourceOptions(threads=("initech:support:sess-021",)))
    try:
        bundles = list(src.threads())
    finally:
        src.close()
    assert [b.thread_id for b in bundles] == ["initech:support:sess-021"]
    assert any(w.channel == "__interrupt__" for w in bundles[0].writes)


def test_an_export_larger_than_the_staging_memory_loads(small, tmp_path, monkeypatch):
    """DuckDB sized its CSV buffer from an unbounded max_line_size, i.e. the whole file:
    a 1.4 GB export failed with 'could not allocate block of size 1.3 GiB'. Scaled down
    here: a 40 MB export under a 24 MB staging limit."""
    from loaders.pg_export import csv_stage

    csv = _csv_copy(small, tmp_path)
    header, *body = (csv / "checkpoint_blobs.csv").read_text().splitlines(keepends=True)
    copies = []
    k = 0
    while sum(map(len, copies)) < 40 << 20:  # the same blob rows under new thread ids
        copies.extend(ln.replace("acme:web:sess-001", f"acme:web:copy-{k}", 1) for ln in body if ln.startswith("acme:web:sess-001,"))
        k += 1
    (csv / "checkpoint_blobs.csv").write_text(header + "".join(body) + "".join(copies))
    monkeypatch.setattr(csv_stage, "CSV_MEMORY_LIMIT", "24MB")
    monkeypatch.setattr(csv_stage, "CSV_MAX_ROW", 1 << 20)
    db = tmp_path / "big.duckdb"
    load_db(csv, db)  # blobs of threads without checkpoints are never read: same result
    assert table_rows(db, "messages") == table_rows(small.good, "messages")


def test_a_row_over_the_csv_row_limit_is_named(small, tmp_path, target, monkeypatch):
    from loaders.pg_export import csv_stage

    csv = _csv_copy(small, tmp_path)
    lines = (csv / "checkpoint_blobs.csv").read_text().splitlines(keepends=True)
    longest = max(range(len(lines)), key=lambda i: len(lines[i]))
    monkeypatch.setattr(csv_stage, "CSV_MAX_ROW", len(lines[longest]) - 2)
    with pytest.raises(SourceError, match=rf"checkpoint_blobs.csv: line {longest + 1} is longer than .* load that database live"):
        load_db(csv, target)


def test_a_quoted_field_never_closed_is_named_with_the_line_it_starts_on(small, tmp_path, target, monkeypatch):
    """Its rows are lines of their own inside the quotes: no line is long, the row is."""
    from loaders.pg_export import csv_stage

    csv = _csv_copy(small, tmp_path)
    lines = (csv / "checkpoint_blobs.csv").read_text().count("\n")
    with (csv / "checkpoint_blobs.csv").open("a") as fh:
        fh.write('acme:web:sess-001,,messages,"' + "a\n" * (1 << 20))
    monkeypatch.setattr(csv_stage, "CSV_MAX_ROW", 1 << 20)
    monkeypatch.setattr(csv_stage, "CSV_PIECE", 1 << 16)
    with pytest.raises(SourceError, match=rf"checkpoint_blobs.csv: the row starting at line {lines + 1} runs past 1 MB"):
        load_db(csv, target)
