"""`transcript-lens`: one tree (load, transcript, report, app) over the composition root and analytics.

`load` writes the derived tables (through `transcript_lens.load`) and so does its old
name `python -m loaders`; `transcript` / `report` are analytics' own subcommands.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import transcript_lens
from transcript_lens import cli
from transcript_lens.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run_module(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`python -m …` in a fresh interpreter (what the console script and the old forms run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSCRIPT_LENS_")}
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def tables(db: Path) -> dict[str, list[tuple]]:
    """Every table's rows, sorted; `loads` (times, paths of this load) left out."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
        return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in names if t != "loads"}
    finally:
        con.close()


@pytest.fixture(scope="module")
def loaded(sqlite_store, tmp_path_factory) -> tuple[Path, str]:
    """`transcript-lens load` of the session store (a fresh interpreter): (database, stdout)."""
    db = tmp_path_factory.mktemp("cli") / "lens.duckdb"
    proc = run_module("transcript_lens", "load", str(sqlite_store.path), "--db", str(db), "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    return db, proc.stdout


def test_help_lists_every_command(capsys):
    proc = run_module("transcript_lens", "--help")  # (the module's entry point, in a fresh interpreter)
    assert proc.returncode == 0, proc.stderr
    listed = proc.stdout.split("positional arguments:")[1].split("options:")[0].split()
    assert {"load", "transcript", "report", "app"} <= set(listed)
    for command in ("load", "transcript", "report", "app"):  # (the same parser: in this process)
        with pytest.raises(SystemExit) as exc:
            main([command, "--help"])
        assert exc.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: transcript-lens {command} ")


def test_version_is_the_packages():
    proc = run_module("transcript_lens", "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"transcript-lens {transcript_lens.__version__}"


def test_an_unknown_command_is_a_usage_error_naming_them_all(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["lod"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'lod'" in err and all(c in err for c in ("'load'", "'transcript'", "'report'", "'app'"))


def test_load_writes_the_database_with_its_derived_tables_and_prints_the_summary(loaded, sqlite_store):
    db, out = loaded
    threads = len(sqlite_store.manifest)
    assert out.startswith(f"loaded {threads} threads, ") and f" into {db} in " in out and out.endswith("row errors)\n")
    got = tables(db)
    assert len(got["threads"]) == threads
    assert len(got["conversation_metrics"]) == threads  # analytics.derived, written by the composition root
    assert {"risk_figures", "thread_day_metrics", "latency_pair_rows"} <= set(got)


def test_python_m_loaders_gives_the_same_tables(loaded, sqlite_store, tmp_path):
    db, _ = loaded
    again = tmp_path / "again.duckdb"
    proc = run_module("loaders", str(sqlite_store.path), "--db", str(again), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"loaded {len(sqlite_store.manifest)} threads, ")
    assert tables(again) == tables(db)


def test_load_mistakes_are_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not a checkpoint store\n")
    assert main(["load", str(tmp_path / "notes.txt"), "--db", str(tmp_path / "x.duckdb"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert not (tmp_path / "x.duckdb").exists()


def test_a_postgres_load_without_psycopg_names_the_extra(tmp_path):
    without = "import sys; sys.modules['psycopg'] = None; from transcript_lens.cli import main; sys.exit(main())"
    proc = subprocess.run([sys.executable, "-c", without, "load", "postgresql://reader@127.0.0.1:9/app",
                           "--db", str(tmp_path / "x.duckdb"), "--quiet"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == "error: live Postgres sources need psycopg: pip install 'transcript-lens[postgres]'\n"


def test_transcript_and_report_read_the_loaded_database(loaded, sqlite_store, tmp_path, capsys):
    db, _ = loaded
    thread = sqlite_store.thread("simple_chat")
    assert main(["transcript", "--db", str(db), "--thread", thread, "--speaker", "user", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["role"] for r in rows} == {"user"} and rows[0]["thread_id"] == thread
    out = tmp_path / "conversations.csv"
    assert main(["report", "conversations", "--db", str(db), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    with out.open(newline="") as fh:
        assert len(list(csv.DictReader(fh))) == len(sqlite_store.manifest)


@pytest.mark.parametrize("argv, first_line", [
    (["report", "conversations"], "thread_id,"),
    (["diff", "--thread", "{thread}", "--with-thread", "{other}", "--format", "csv"], "row,status,"),
    (["annotations", "export"], None),
])
def test_out_dash_is_stdout_for_every_command_that_writes_a_file(loaded, sqlite_store, tmp_path, monkeypatch, capfd,
                                                                  argv, first_line):
    db, _ = loaded
    monkeypatch.chdir(tmp_path)
    argv = [a.format(thread=sqlite_store.thread("simple_chat"), other=sqlite_store.thread("edit")) for a in argv]
    at = 2 if argv[0] == "annotations" else 1
    assert main([*argv[:at], "--db", str(db), *argv[at:], "--out", "-"]) == 0
    out = capfd.readouterr().out
    assert not (tmp_path / "-").exists()
    if first_line is not None:
        assert out.splitlines()[0].startswith(first_line), out[:200]


def test_analytics_mistakes_are_one_line_and_exit_2_under_both_names(tmp_path):
    for prog in ("transcript_lens", "analytics"):
        proc = run_module(prog, "transcript", "--db", str(tmp_path / "nope.duckdb"), "--thread", "a:b:c")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


class _Exec(Exception):
    pass


@pytest.fixture
def exec_spy(monkeypatch):
    """`app` replaces the process with Streamlit: record the command instead."""
    calls = []

    def execve(path, argv, env):
        calls.append((path, argv, env))
        raise _Exec

    monkeypatch.setattr(cli.os, "execve", execve)
    for name in ("TRANSCRIPT_LENS_DB", "TRANSCRIPT_LENS_CACHE"):
        monkeypatch.delenv(name, raising=False)
    return calls


def test_app_runs_streamlit_on_the_checkouts_app_on_loopback(loaded, exec_spy):
    db, _ = loaded
    with pytest.raises(_Exec):
        main(["app", "--db", str(db), "--port", "8599", "--headless"])
    [(path, argv, env)] = exec_spy
    assert path == sys.executable and argv[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert argv[4] == str(ROOT / "app.py")  # a checkout (or an editable install) runs the repo's app.py
    assert {"--server.address=127.0.0.1", "--server.port=8599", "--server.headless=true"} <= set(argv)
    assert "--server.maxUploadSize=2048" in argv  # .streamlit/config.toml, whatever the working directory
    assert argv[-3:] == ["--", "--db", str(db.resolve())]
    assert "TRANSCRIPT_LENS_CACHE" not in env  # a checkout keeps its .cache/


def test_app_shows_no_error_details_and_a_read_only_server_takes_small_uploads_only(loaded, exec_spy, monkeypatch):
    from ui import access

    db, _ = loaded
    monkeypatch.delenv(access.READ_ONLY_ENV, raising=False)
    for flags in ([], ["--read-only"]):
        with pytest.raises(_Exec):
            main(["app", "--db", str(db), *flags])
    (_, served, _), (_, read_only, _) = exec_spy
    assert "--client.showErrorDetails=none" in served and "--client.showErrorDetails=none" in read_only
    assert "--server.maxUploadSize=2048" in served
    assert f"--server.maxUploadSize={access.OBSERVED_UPLOAD_MB}" in read_only and access.OBSERVED_UPLOAD_MB <= 20


def test_app_without_a_database_leaves_the_demo_to_the_app_in_a_checkout(exec_spy):
    with pytest.raises(_Exec):
        main(["app", "--host", "0.0.0.0"])
    [(_, argv, _)] = exec_spy
    assert "--server.address=0.0.0.0" in argv
    assert "--" not in argv  # no --db: the app opens $TRANSCRIPT_LENS_DB or builds the demo itself
    assert not any(a.startswith("--server.port") or a == "--server.headless=true" for a in argv)


def test_app_refuses_a_missing_database_in_one_line(tmp_path, exec_spy, capsys):
    assert main(["app", "--db", str(tmp_path / "nope.duckdb")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no Transcript Lens database at ") and "\n" not in err
    assert exec_spy == []


def test_app_without_streamlit_says_which_extra(monkeypatch, exec_spy, capsys):
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: None if name == "streamlit" else real(name))
    assert main(["app"]) == 2
    assert capsys.readouterr().err.strip() == "error: the app needs streamlit: pip install 'transcript-lens[app]'"
    assert exec_spy == []


def test_a_registered_kinds_own_option_is_a_load_flag_with_its_declared_help(monkeypatch):
    # "One module + one registration": the CLI (and the app) offer an option from its declaration.
    import argparse
    from dataclasses import dataclass, field

    from loaders import registry
    from loaders.source import SourceOptions
    from tests.loaders.example_source import JsonlDirSource

    @dataclass(frozen=True, slots=True)
    class ShelfOptions(SourceOptions):
        shelf: str | None = field(default=None, metadata={"label": "Shelf", "help": "the shelf to read"})

    class Shelved(JsonlDirSource):
        kind, options_class = "shelved", ShelfOptions

    monkeypatch.setattr(registry, "_SOURCES", dict(registry.sources()))
    registry.register(Shelved())
    from transcript_lens.cli import configure_load

    parser = argparse.ArgumentParser()
    configure_load(parser)
    assert "the shelf to read (shelved)" in " ".join(parser.format_help().split())
    args = parser.parse_args(["x", "--db", "y", "--shelf", "top"])
    assert args.option_shelf == "top" and args.option_schema is None


def test_the_app_cache_is_the_env_s_else_the_checkout_s_else_the_user_s(monkeypatch, tmp_path):
    import transcript_lens
    from ui import database

    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "c"))
    assert transcript_lens.cache_dir() == database.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("TRANSCRIPT_LENS_CACHE")
    assert transcript_lens.is_checkout() and transcript_lens.cache_dir() == transcript_lens.app_dir() / ".cache"
    monkeypatch.setattr(transcript_lens, "is_checkout", lambda: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert database.cache_dir() == tmp_path / "xdg" / "transcript-lens"
    assert database.DEMO_SOURCE == transcript_lens.demo_store()


@pytest.mark.parametrize("masked", [False, True])
def test_a_reader_that_went_away_ends_the_command_quietly(loaded, masked):
    """Output to a pipe nobody reads (`| head` done): no traceback, the SIGPIPE exit status."""
    db, _ = loaded
    with duckdb.connect(str(db), read_only=True) as con:
        thread = con.execute("SELECT min(thread_id) FROM threads").fetchone()[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSCRIPT_LENS_")}
    redact = ["--redact"] if masked else []
    for argv in (["search", "the", "--format", "csv"], ["transcript", "--thread", thread, "--format", "json"]):
        read, write = os.pipe()
        os.close(read)  # (gone before the command starts: its first write fails, every time)
        try:
            proc = subprocess.run([sys.executable, "-m", "transcript_lens", *argv, "--db", str(db), *redact], cwd=ROOT,
                                  env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
        finally:
            os.close(write)
        assert proc.returncode == 141 and "Traceback" not in proc.stderr, (argv, proc.stderr[-2000:])
        assert len(proc.stderr.splitlines()) <= 1  # (search's summary line, on stderr by design)


def test_report_table_prints_the_apps_headers_and_formats_and_the_csv_keeps_machine_values(loaded, tmp_path, capsys):
    from analytics.formats import duration, minute_text
    from analytics.reporting.readable import CONVERSATION_COLUMNS

    db, _ = loaded
    out = tmp_path / "conversations.csv"
    assert main(["report", "conversations", "--db", str(db), "--out", str(out)]) == 0
    capsys.readouterr()
    with out.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert "duration_s" in rows[0] and float(rows[0]["duration_s"]) >= 0  # the CSV: column names, seconds
    assert main(["report", "conversations", "--db", str(db), "--table"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.startswith("Thread ") and all(c.label in header for c in CONVERSATION_COLUMNS)
    assert "thread_id" not in header and "duration_s" not in header
    assert len(lines) == len(rows)
    for row, line in zip(rows, lines):
        assert line.startswith(row["thread_id"] + " ")
        if row["last_ts"]:
            assert minute_text(row["last_ts"]) in line and row["last_ts"] not in line  # to the minute, not ISO text
        if row["duration_s"]:
            assert f" {duration(float(row['duration_s']))} " in f" {line} "  # "43 m 07 s", not 2587.335
        assert f"{int(row['input_tokens']):,}" in line.split()
    assert any(r["duration_s"] and float(r["duration_s"]) >= 60 for r in rows)  # (a duration in minutes is checked)


def test_report_table_is_for_the_kinds_that_have_one(loaded, capsys):
    db, _ = loaded
    assert main(["report", "daily", "--db", str(db), "--table"]) == 2
    assert "no --table form" in capsys.readouterr().err
