"""Compressed bombs in every container the loaders take, and endless lines: refused in one
line naming the limit (docs/security.md, "Bounded memory and disk"), within the memory
budget, nothing written outside the target, the temp folder left empty."""

from __future__ import annotations

import gzip
import zipfile

import pytest

from loaders.pg_export.archive import INFLATE_FLOOR, RATIO_CHECK_FROM
from tests.attacks.bombs import MB, bzip2_bomb, gzip_bomb, zip_with
from tests.attacks.harness import attack

BIG = 1200 * MB  # over the memory budget once decompressed: a reader holding it whole fails


# The header lines COPY ... WITH (FORMAT csv, HEADER true) writes for PostgresSaver's tables.
_HEADERS = {
    "checkpoints": "thread_id,checkpoint_ns,checkpoint_id,parent_checkpoint_id,type,checkpoint,metadata",
    "checkpoint_blobs": "thread_id,checkpoint_ns,channel,version,type,blob",
    "checkpoint_writes": "thread_id,checkpoint_ns,checkpoint_id,task_id,idx,channel,type,blob,task_path",
}


def _header(table: str) -> bytes:
    return (_HEADERS[table] + "\n").encode()


def _csv_members(but: str) -> dict[str, bytes]:
    return {f"{t}.csv": _header(t) for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes") if t != but}


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_DEFLATED], ids=["bzip2", "deflate"])
def test_a_copy_csv_zip_bomb_is_refused_before_it_is_inflated(tmp_path, method):
    bomb = zip_with(tmp_path / "export.zip", _csv_members("checkpoints"), "checkpoints.csv", method,
                    BIG if method == zipfile.ZIP_BZIP2 else INFLATE_FLOOR + MB, _header("checkpoints"))
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(bomb), "--db", str(db)], tmp_path)
    out.refused("decompresses to more than", "64 MiB").within_budget().wrote_only([db])


def test_a_zip_member_that_lies_about_its_size_is_refused(tmp_path):
    """Declared small, inflating to gigabytes: no more than the declared size is ever inflated."""
    bomb = zip_with(tmp_path / "export.zip", _csv_members("checkpoints"), "checkpoints.csv", zipfile.ZIP_BZIP2,
                    BIG, _header("checkpoints"))
    with zipfile.ZipFile(bomb) as zf:
        declared = zf.getinfo("checkpoints.csv")
    raw = bomb.read_bytes()
    # Rewrite the size in the central directory and local header (both 32-bit fields here).
    big = declared.file_size.to_bytes(4, "little")
    raw = raw.replace(big, (4096).to_bytes(4, "little"))
    bomb.write_bytes(raw)
    out = attack(["load", str(bomb), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused("checkpoints.csv", "declared size").within_budget().wrote_only([tmp_path / "out.duckdb"])


def test_a_gzipped_csv_in_an_export_folder_is_capped_when_decompressed(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    for name, body in _csv_members("checkpoints").items():
        (folder / name).write_bytes(body)
    (folder / "checkpoints.csv.gz").write_bytes(gzip_bomb(_header("checkpoints"), INFLATE_FLOOR + MB))
    out = attack(["load", str(folder), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused("checkpoints.csv.gz", "decompresses to more than", "64 MiB").within_budget().wrote_only([tmp_path / "out.duckdb"])


@pytest.mark.parametrize("damage", ["bomb", "truncated"])
def test_a_gzipped_csv_in_an_export_zip_is_refused_naming_the_zip_and_the_member(tmp_path, damage):
    """Not the temporary file it is extracted to: the user never sees that path."""
    data = gzip_bomb(_header("checkpoints"), INFLATE_FLOOR + MB)
    if damage == "truncated":
        data = data[: len(data) // 2]
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, body in _csv_members("checkpoints").items():
            zf.writestr(f"dump/{name}", body)
        zf.writestr("dump/checkpoints.csv.gz", data)
    out = attack(["load", str(path), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    words = ("decompresses to more than", "64 MiB") if damage == "bomb" else ("unreadable",)
    out.refused(f"{path}: dump/checkpoints.csv.gz: ", *words).within_budget().wrote_only([tmp_path / "out.duckdb"])
    assert ".attack-tmp" not in out.stderr and "transcript-lens-stage" not in out.stderr, out.stderr


_PG_HEAD = (b"--\n-- PostgreSQL database dump\n--\n"
            b"COPY public.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            b"checkpoint, metadata) FROM stdin;\n")
_MYSQL_HEAD = b"-- MySQL dump 10.13\n--\nINSERT INTO `checkpoints` VALUES ('"


@pytest.mark.parametrize("head, name, line", [(_PG_HEAD, "dump.sql.gz", 5), (_MYSQL_HEAD, "dump.sql.gz", 3)],
                         ids=["pg_dump", "mysqldump"])
def test_an_endless_line_in_a_gzipped_dump_is_refused_at_the_line_limit(tmp_path, head, name, line):
    dump = tmp_path / name
    dump.write_bytes(gzip_bomb(head, BIG))
    out = attack(["load", str(dump), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused(f"line {line} is longer than 64 MiB", "longest line").within_budget().wrote_only([tmp_path / "out.duckdb"])


def test_an_endless_line_in_a_plain_dump_is_refused_at_the_line_limit(tmp_path):
    dump = tmp_path / "dump.sql"
    with dump.open("wb") as fh:
        fh.write(_MYSQL_HEAD)
        for _ in range(5):
            fh.write(b"a" * (16 * MB))
    out = attack(["load", str(dump), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused("line 3 is longer than 64 MiB").within_budget().wrote_only([tmp_path / "out.duckdb"])


def test_a_gzip_bomb_of_a_plain_dump_is_refused_past_the_decompressed_limit(tmp_path):
    """Short lines (no line limit met), but more decompressed data than the compressed size allows."""
    dump = tmp_path / "dump.sql.gz"
    dump.write_bytes(gzip.compress(_PG_HEAD[:-len(b"COPY")].rstrip(b"C"), mtime=0) + gzip_bomb(b"", INFLATE_FLOOR + MB, b"-" * 65535 + b"\n"))
    out = attack(["load", str(dump), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused("decompresses to more than 64 MiB").within_budget().wrote_only([tmp_path / "out.duckdb"])


def test_a_gzip_bomb_far_under_its_limit_is_refused_once_past_the_floor(tmp_path):
    """A gzip of a few MB allows hundreds of MB (100 times its size), but this one inflates about
    1,000 times: it is refused once past 128 MiB, by the ratio of what was read so far, not after
    hundreds of MB of rows were parsed and staged (minutes for tiny rows)."""
    dump = tmp_path / "dump.sql.gz"
    dump.write_bytes(gzip.compress(_PG_HEAD[:-len(b"COPY")].rstrip(b"C"), mtime=0) + gzip_bomb(b"", 60 * INFLATE_FLOOR, b"-" * 63 + b"\n"))
    assert dump.stat().st_size * 100 > 2 * RATIO_CHECK_FROM  # (its whole limit: twice that and more)
    out = attack(["load", str(dump), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused("decompresses to more than 100 times its compressed size", "past the 128 MiB allowed whatever the ratio")
    out.within_budget().wrote_only([tmp_path / "out.duckdb"])


def test_a_zip_listing_more_entries_than_an_export_holds_is_refused_before_it_is_listed(tmp_path):
    from loaders.pg_export.archive import MAX_ZIP_ENTRIES

    bomb = tmp_path / "export.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_STORED) as zf:
        for name, body in _csv_members("").items():
            zf.writestr(name, body)
        for i in range(MAX_ZIP_ENTRIES):
            zf.writestr(f"x/{i}", b"")
    out = attack(["load", str(bomb), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused(f"{MAX_ZIP_ENTRIES + 3:,} entries", f"{MAX_ZIP_ENTRIES:,}-entry limit").within_budget()
    out.wrote_only([tmp_path / "out.duckdb"])


def test_a_quoted_field_of_millions_of_lines_is_cut_in_linear_time(tmp_path):
    """A CSV field opened with a quote and holding 10 million newlines: finding where a row ends
    counts each byte's quotes once (it counted them again for every newline: never finished)."""
    folder = tmp_path / "export"
    folder.mkdir()
    for name, body in _csv_members("checkpoints").items():
        (folder / name).write_bytes(body)
    with (folder / "checkpoints.csv").open("wb") as fh:
        fh.write(_header("checkpoints") + b't,,c,,j,"' + b"a\n" * (10 << 20) + b'",{}\n')
    db = tmp_path / "out.duckdb"
    # (the timeout only ends a hang)
    out = attack(["load", str(folder), "--db", str(db)], tmp_path, timeout=300)
    out.refused("checkpoints.csv").within_budget().wrote_only([db])


def _long_header(kind: bytes, size: int) -> bytes:
    """A tar header block announcing a GNU long name (b"L") or a PAX extended header (b"x") of `size` bytes."""
    import tarfile

    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = kind, size
    return info._create_header(info.get_info(), tarfile.GNU_FORMAT, "utf-8", "surrogateescape")


@pytest.mark.parametrize("kind", [b"L", b"x"], ids=["gnu-long-name", "pax"])
@pytest.mark.parametrize("compression", ["bz2", "gz"])
def test_a_compressed_tar_whose_first_header_is_huge_is_refused_unread(tmp_path, kind, compression):
    """A pg_dump -Ft archive is an uncompressed tar whose first member is toc.dat: detection reads
    its first 512-byte header block and nothing more. (tarfile's own detection decompressed the
    tar and read a long-name or PAX header whole: 2 KB of bzip2 asked for gigabytes.)"""
    head = _long_header(kind, BIG)
    data = bzip2_bomb(head, BIG)[0] if compression == "bz2" else gzip_bomb(head, BIG, b"\0")
    bomb = tmp_path / f"dump.tar.{compression}"
    bomb.write_bytes(data)
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(bomb), "--db", str(db)], tmp_path)
    out.refused("not a recognised checkpoint source").within_budget().wrote_only([db])


@pytest.mark.parametrize("method, words", [(93, "zip method 93"), ("encrypted", "is encrypted")], ids=["zstd", "encrypted"])
def test_a_zip_member_no_reader_here_can_open_is_refused_naming_it(tmp_path, method, words):
    """A zstd (method 93) or encrypted member: one line naming the file and the member, not zipfile's own error."""
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            zf.writestr(f"{table}.csv", _header(table))
    raw = bytearray(path.read_bytes())
    for sig, method_at, flags_at in ((b"PK\x03\x04", 8, 6), (b"PK\x01\x02", 10, 8)):  # local headers, central directory
        at = raw.find(sig)
        while at >= 0:
            if method == "encrypted":
                raw[at + flags_at] |= 1
            else:
                raw[at + method_at:at + method_at + 2] = method.to_bytes(2, "little")
            at = raw.find(sig, at + 4)
    path.write_bytes(bytes(raw))
    out = attack(["load", str(path), "--db", str(tmp_path / "out.duckdb")], tmp_path)
    out.refused(words, ".csv").within_budget().wrote_only([tmp_path / "out.duckdb"])
