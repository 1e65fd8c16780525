"""Hostile payloads and damaged exports in the Postgres layouts (live DSN, COPY CSV, pg_dump).

A real `PostgresSaver` database (pg_util.fresh_database) gets crafted rows
written with plain SQL — hostile msgpack extension values in `checkpoint_blobs`
and `checkpoint_writes`, `lc` envelopes in the metadata JSONB, pickle / encrypted
/ unknown type tags — then is exported with `\\copy ... CSV HEADER` and
`pg_dump`. All three are loaded through the Postgres engineer's readers: nothing
named in a payload is imported or called, the three loads agree, and the
untouched threads equal the saver's own view (computed before any crafting).
Damaged exports (missing table, malformed bytea, truncated dumps) fail through
the CLI in one line with exit code 2 and leave an existing database byte-identical.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

from analytics.dblock import database_lock
from loaders.__main__ import main
from storegen import run_scenarios
from tests import oracle
from tests.loaders.hostile_util import (
    CANARY_MODULE,
    EXT_CODES,
    LOADS_AS_DATA,
    TARGETS,
    RawExt,
    deep_ext_payload,
    ext,
    hostile_ext,
    human,
    lc_envelope,
    pack,
    pickle_bomb,
    tree_fingerprint,
    unpack,
)
from tests.loaders.pg_util import export_csv, fresh_database, oracle_saver, pg_dump, saver_for
from tests.loaders.util import load_db, rows

ROOT = Path(__file__).resolve().parents[2]
THREADS = {"acme:web:sess-001": "simple_chat", "initech:support:sess-021": "interrupt_pending"}
SRC = "acme:web:sess-001"
MESSAGE_COLS = ", ".join(oracle.MESSAGE_KEYS)


def _columns(con, table: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s "
        "ORDER BY ordinal_position", [table])]


def _clone(con, src: str, dst: str) -> None:
    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        rest = ", ".join(c for c in _columns(con, table) if c != "thread_id")
        con.execute(f"INSERT INTO {table} (thread_id, {rest}) SELECT %s, {rest} FROM {table} WHERE thread_id = %s", [dst, src])


def _latest(con, thread: str) -> tuple[str, str]:
    """(checkpoint id, messages version) of the latest root checkpoint."""
    return con.execute(
        "SELECT checkpoint_id, checkpoint -> 'channel_versions' ->> 'messages' FROM checkpoints "
        "WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1", [thread]).fetchone()


def _messages_blob(con, thread: str, version: str) -> list:
    (blob,) = con.execute("SELECT blob FROM checkpoint_blobs WHERE thread_id = %s AND channel = 'messages' AND version = %s",
                          [thread, version]).fetchone()
    return unpack(bytes(blob))


def _set_blob(con, thread: str, version: str, type_: str, blob: bytes) -> None:
    n = con.execute("UPDATE checkpoint_blobs SET type = %s, blob = %s WHERE thread_id = %s AND channel = 'messages' AND version = %s",
                    [type_, blob, thread, version]).rowcount
    assert n == 1


def _write(con, thread: str, cid: str, channel: str, type_: str, blob: bytes, idx: int = 0) -> None:
    con.execute("INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) "
                "VALUES (%s, '', %s, 'hostile-task', %s, %s, %s, %s)", [thread, cid, idx, channel, type_, blob])


def craft(con, mdir: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Crafted threads → expected (stage, reason regex, checkpoint id) errors."""
    cases: dict[str, list] = {}
    latest, version = _latest(con, SRC)

    def clone(t: str, errors=()) -> list:
        _clone(con, SRC, t)
        cases[t] = list(errors)
        return cases[t]

    original = _messages_blob(con, SRC, version)
    for c in EXT_CODES:
        t = f"pg:list:c{c}"
        errs = clone(t)
        _set_blob(con, t, version, "msgpack", pack(original + [hostile_ext(c, tg, mdir) for tg in TARGETS]))
        for tg in TARGETS:
            if (c, tg) not in LOADS_AS_DATA:
                errs.append(("message", "no type" if c in (2, 4, 5) else f"extension value of code {c}", latest))
    clone("pg:nested")
    nested = human("nested everywhere", "pg-nested",
                   additional_kwargs={f"c{c}:{tg}": hostile_ext(c, tg, mdir) for c in EXT_CODES for tg in TARGETS})
    _set_blob(con, "pg:nested", version, "msgpack", pack(original + [nested]))
    clone("pg:write")
    interrupt = ext(2, ["langgraph.types", "Interrupt", {"value": {tg: hostile_ext(1, tg, mdir) for tg in TARGETS}, "id": "pg-int"}])
    _write(con, "pg:write", latest, "__interrupt__", "msgpack", pack([interrupt]))
    _write(con, "pg:write", latest, "__error__", "msgpack", pack(hostile_ext(0, "os.system", mdir)), idx=1)
    clone("pg:metadata")
    md = {"source": "loop", "step": 7, "parents": {}, "writes": {"x": lc_envelope(["os", "system"], {"command": f"touch '{mdir}/md'"})}}
    con.execute("UPDATE checkpoints SET metadata = %s::jsonb WHERE thread_id = 'pg:metadata' AND checkpoint_id = %s", [json.dumps(md), latest])
    clone("pg:pickle-blob", [("messages", "pickle", latest)])
    _set_blob(con, "pg:pickle-blob", version, "pickle", pickle_bomb(mdir / "pickle-blob"))
    clone("pg:pickle-write", [("write", "pickle", latest)])
    _write(con, "pg:pickle-write", latest, "__interrupt__", "pickle", pickle_bomb(mdir / "pickle-write"))
    clone("pg:encrypted-blob", [("messages", "encrypted", latest)])
    _set_blob(con, "pg:encrypted-blob", version, "msgpack+aes", bytes(range(64)))
    clone("pg:unknown-tag", [("messages", "unknown serialization type 'yaml'", latest)])
    _set_blob(con, "pg:unknown-tag", version, "yaml", b"- a\n")
    clone("pg:blob-is-ext", [("messages", "is a Ext, not a list", latest)])
    _set_blob(con, "pg:blob-is-ext", version, "msgpack", pack(hostile_ext(1, "os.system", mdir)))
    clone("pg:truncated-blob", [("messages", "invalid msgpack", latest)])
    good = pack(original)
    _set_blob(con, "pg:truncated-blob", version, "msgpack", good[: len(good) // 2])
    clone("pg:deep-ext", [("message", "nested too deeply", latest)])
    _set_blob(con, "pg:deep-ext", version, "msgpack", pack(original + [RawExt(5, deep_ext_payload())]))
    clone("pg:metadata-array", [("metadata", "not (a JSON|an) object", latest)])
    con.execute("UPDATE checkpoints SET metadata = '[1, 2]'::jsonb WHERE thread_id = 'pg:metadata-array' AND checkpoint_id = %s", [latest])
    return cases


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    d = tmp_path_factory.mktemp("pg_hostile")
    mdir = d / "markers"
    mdir.mkdir()
    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            for tid, scenario in THREADS.items():
                run_scenarios(saver, threads={tid: scenario})
        with oracle_saver(dsn) as saver:
            expected = oracle.expected_messages(saver)  # before any crafting
        with psycopg.connect(dsn, autocommit=True) as con:
            cases = craft(con, mdir)
        csv = export_csv(dsn, d / "csv")
        dump = pg_dump(dsn, d / "data.sql")
        custom = pg_dump(dsn, d / "data.dump", "-Fc")
        exports_before = tree_fingerprint(d)
        dbs = {}
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TL_CANARY_DIR", str(mdir))
            mp.delenv("TL_CANARY_IMPORTED", raising=False)
            for kind, src in (("live", dsn), ("csv", csv), ("dump", dump)):
                dbs[kind] = d / f"{kind}.duckdb"
                load_db(src, dbs[kind], workers=1)
            env_imported = os.environ.get("TL_CANARY_IMPORTED")
        cli_db = d / "cli.duckdb"
        env = {**os.environ, "TL_CANARY_DIR": str(mdir), "PYTHONPATH": str(ROOT)}
        cli = subprocess.run([sys.executable, "-m", "loaders", dsn, "--db", str(cli_db), "--quiet"],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)
        yield SimpleNamespace(dsn=dsn, dir=d, mdir=mdir, cases=cases, expected=expected, csv=csv, dump=dump, custom=custom,
                              dbs=dbs, env_imported=env_imported, cli=cli, cli_db=cli_db, exports_before=exports_before)


def test_nothing_is_imported_or_called_from_any_postgres_layout(pg):
    assert pg.cli.returncode == 0, pg.cli.stderr
    assert not list(pg.mdir.iterdir())
    assert CANARY_MODULE not in sys.modules and pg.env_imported is None
    assert {k: v for k, v in tree_fingerprint(pg.dir).items() if k.startswith(("csv/", "data."))} == {
        k: v for k, v in pg.exports_before.items() if k.startswith(("csv/", "data."))}  # exports never written


def test_live_csv_dump_and_cli_loads_agree(pg):
    sqls = ["SELECT thread_id, checkpoint_ns, checkpoint_id, stage, reason FROM load_errors ORDER BY ALL",
            f"SELECT {MESSAGE_COLS}, additional_kwargs FROM messages ORDER BY thread_id, ordinal",
            "SELECT thread_id, interrupt_pending, interrupt_value, message_count FROM threads ORDER BY thread_id"]
    for sql in sqls:
        live = rows(pg.dbs["live"], sql)
        assert rows(pg.dbs["csv"], sql) == live
        assert rows(pg.dbs["dump"], sql) == live
        assert rows(pg.cli_db, sql) == live


def test_every_crafted_row_is_reported_and_the_untouched_threads_equal_the_oracle(pg):
    db = pg.dbs["live"]
    errors = rows(db, "SELECT thread_id, checkpoint_id, stage, reason FROM load_errors")
    for thread, expected in pg.cases.items():
        got = [e for e in errors if e["thread_id"] == thread]
        for stage, why, cid in expected:
            match = next((e for e in got if e["stage"] == stage and re.search(why, e["reason"]) and e["checkpoint_id"] == cid), None)
            assert match is not None, f"{thread}: no {stage} error matching {why!r}; got {got}"
            got.remove(match)
        assert got == [], f"{thread}: unexpected {got}"
    assert {e["thread_id"] for e in errors} <= set(pg.cases)
    got = rows(db, f"SELECT {MESSAGE_COLS} FROM messages WHERE thread_id IN (SELECT unnest(?)) ORDER BY thread_id, ordinal",
               [sorted(THREADS)])
    assert got == pg.expected
    # The first messages of every crafted thread are the source thread's, as the saver wrote them.
    src = [(r["ordinal"], r["content"], r["message_id"]) for r in pg.expected if r["thread_id"] == SRC]
    for thread in pg.cases:
        mine = [(r["ordinal"], r["content"], r["message_id"])
                for r in rows(db, "SELECT ordinal, content, message_id FROM messages WHERE thread_id = ? ORDER BY ordinal", [thread])]
        assert mine[:4] == src[:4], thread


def test_hostile_values_load_as_plain_data(pg):
    db = pg.dbs["live"]
    for c in (2, 4, 5):
        got = rows(db, "SELECT role, content FROM messages WHERE thread_id = ? AND message_id LIKE '%-' || ? ORDER BY ordinal",
                   [f"pg:list:c{c}", str(c)])
        assert [(r["role"], r["content"]) for r in got] == [("user", f"canary {c} says hi"), ("user", f"ghost {c} says hi")]
    (m,) = rows(db, "SELECT additional_kwargs FROM messages WHERE message_id = 'pg-nested'")
    assert len(json.loads(m["additional_kwargs"])) == len(EXT_CODES) * len(TARGETS)
    (t,) = rows(db, "SELECT interrupt_pending, interrupt_value FROM threads WHERE thread_id = 'pg:write'")
    ((value,),) = json.loads(t["interrupt_value"])
    assert t["interrupt_pending"] and value["id"] == "pg-int" and set(value["value"]) == set(TARGETS)
    (cp,) = rows(db, "SELECT metadata FROM checkpoints WHERE thread_id = 'pg:metadata' AND is_latest")
    assert json.loads(cp["metadata"])["writes"]["x"]["id"] == ["os", "system"]


def test_a_non_string_ts_is_reported(pg, tmp_path):
    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            run_scenarios(saver, threads={SRC: "simple_chat"})
        with psycopg.connect(dsn, autocommit=True) as con:
            latest, _ = _latest(con, SRC)
            con.execute("UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{ts}', '12345') WHERE checkpoint_id = %s", [latest])
        db = tmp_path / "ts.duckdb"
        load_db(dsn, db, workers=1)
    assert rows(db, "SELECT count(*) AS n FROM load_errors WHERE stage = 'checkpoint' AND reason LIKE '%ts%'")[0]["n"] == 1


# --- damaged exports through the CLI ------------------------------------------------


def _bad_export(case: str, pg, d: Path) -> Path:
    if case == "csv-missing-table":
        csv = Path(shutil.copytree(pg.csv, d / "csv"))
        (csv / "checkpoint_blobs.csv").unlink()
        return csv
    if case == "csv-malformed-bytea":
        csv = Path(shutil.copytree(pg.csv, d / "csv"))
        lines = (csv / "checkpoint_blobs.csv").read_text().splitlines(keepends=True)
        i = next(i for i, ln in enumerate(lines) if ",messages," in ln and "\\x" in ln)
        lines[i] = lines[i].replace("\\x", "\\xZZ", 1)
        (csv / "checkpoint_blobs.csv").write_text("".join(lines))
        return csv
    if case == "csv-zip-missing-table":
        import zipfile
        with zipfile.ZipFile(d / "export.zip", "w") as zf:
            for p in pg.csv.iterdir():
                if p.name != "checkpoint_writes.csv":
                    zf.write(p, p.name)
        return d / "export.zip"
    if case == "dump-truncated":
        data = pg.dump.read_bytes()
        (d / "cut.sql").write_bytes(data[: data.index(b"COPY public.checkpoint_blobs") + 3000])
        return d / "cut.sql"
    if case == "dump-custom-truncated":
        data = pg.custom.read_bytes()
        (d / "cut.dump").write_bytes(data[: len(data) // 2])
        return d / "cut.dump"
    raise KeyError(case)


BAD_EXPORTS = {
    "csv-missing-table": r"no CSV of checkpoint_blobs \(expected",
    "csv-malformed-bytea": r"malformed bytea",
    "csv-zip-missing-table": r"no CSV of checkpoint_writes \(expected",
    "dump-truncated": r"(ends inside the COPY block|fields|missing table)",
    "dump-custom-truncated": r"(pg_restore failed|malformed|ends inside|truncated)",
}


@pytest.mark.parametrize("case", sorted(BAD_EXPORTS))
def test_a_damaged_export_fails_in_one_line_and_keeps_the_database(case, pg, tmp_path, capsys):
    existing = tmp_path / "db" / "existing.duckdb"
    existing.parent.mkdir()
    shutil.copyfile(pg.dbs["live"], existing)
    with database_lock(existing):  # (the lock file every load through the CLI leaves: never removed)
        pass
    before = tree_fingerprint(existing.parent)
    source = _bad_export(case, pg, tmp_path)
    rc = main([str(source), "--db", str(existing), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {source}") and re.search(BAD_EXPORTS[case], line), line
    assert tree_fingerprint(existing.parent) == before
