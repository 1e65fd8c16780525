"""AppTests of the router (app.py) and the shared sidebar: which database is open, loading a source."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

import analytics
from analytics.policy import Policy
from tests.pages.conftest import APP, ROOT, TIMEOUT, metric, open_page
from ui.database import display_name
from ui import database

_original_init = PagesManager.__init__  # before the conftest shim patches it


def sidebar_text(at) -> str:
    return "\n".join(str(getattr(e, "value", "")) for e in [*at.sidebar.markdown, *at.sidebar.caption])


def load(at, spec: str):
    at.sidebar.text_input(key="load.spec").set_value(spec)
    at.sidebar.button(key="load.go").click().run()
    return at


def test_fresh_start_opens_the_bundled_demo(app, con):
    at = app.run()
    assert not at.exception
    threads, messages = con.execute("select (select count(*) from threads), (select count(*) from messages)").fetchone()
    text = sidebar_text(at)
    assert "demo.duckdb** (bundled demo)" in text
    assert f"{threads:,} threads · {messages:,} messages" in text
    assert [t.value for t in at.title] == ["Overview"]  # the default page
    assert metric(at, "Threads") == f"{threads:,}"
    assert "db" not in at.query_params  # the demo is not a loads-folder database: no path in the URL


def test_demo_database_is_rebuilt_when_missing_or_older_than_the_store(tmp_path):
    source = tmp_path / "demo.sqlite"
    shutil.copyfile(database.DEMO_SOURCE, source)
    target = tmp_path / "cache" / "demo.duckdb"
    assert database.demo_is_stale(source, target)
    database.ensure_demo_db(source, target)
    built = target.stat().st_mtime_ns
    assert not database.demo_is_stale(source, target)
    database.ensure_demo_db(source, target)
    assert target.stat().st_mtime_ns == built  # up to date: not rebuilt
    later = time.time() + 5
    os.utime(source, (later, later))  # the store changed after the database was built
    assert database.demo_is_stale(source, target)
    database.ensure_demo_db(source, target)
    assert target.stat().st_mtime_ns > built
    with analytics.connect(target) as con:
        assert con.execute("select count(*) from threads").fetchone()[0] > 0


def test_command_line_and_env_choose_the_database(tmp_path, demo_db, monkeypatch):
    copy = tmp_path / "picked.duckdb"
    shutil.copyfile(demo_db, copy)
    assert database.configured_db(["--db", str(copy)], {}) == copy
    assert database.configured_db([], {"TRANSCRIPT_LENS_DB": str(copy)}) == copy
    assert database.configured_db(["--db", "a.duckdb"], {"TRANSCRIPT_LENS_DB": "b.duckdb"}) == Path("a.duckdb")
    assert database.configured_db([], {}) is None

    monkeypatch.setattr("sys.argv", ["app.py", "--db", str(copy)])
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert "**picked.duckdb**" in sidebar_text(at)

    monkeypatch.setattr("sys.argv", ["app.py"])
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(copy))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert "**picked.duckdb**" in sidebar_text(at)


def test_missing_database_is_an_error_with_the_load_panel_still_there(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(tmp_path / "nothing.duckdb"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert any("nothing.duckdb" in e.value for e in at.error)
    assert at.sidebar.text_input(key="load.spec") is not None


def test_bad_source_shows_an_error_and_keeps_the_open_database(app, tmp_cache, con):
    at = app.run()
    threads = metric(at, "Threads")
    before = sidebar_text(at)
    load(at, "/no/such/store.sqlite")
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert errors and "/no/such/store.sqlite" in errors[0] and "unchanged" in errors[0]
    assert sidebar_text(at) == before  # still the demo
    assert metric(at, "Threads") == threads
    assert not list(tmp_cache.glob("loads/*.duckdb"))  # nothing half-written was left to open


def test_damaged_source_file_is_an_error_too(app, tmp_cache, tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a checkpoint store" * 100)
    at = load(app.run(), str(junk))
    assert not at.exception
    assert any("junk.sqlite" in e.value for e in at.sidebar.error)
    assert "(bundled demo)" in sidebar_text(at)


def test_loading_a_source_opens_it_and_links_it(app, tmp_cache, con):
    at = load(app.run(), str(database.DEMO_SOURCE))
    assert not at.exception, at.exception
    name = at.query_params.get("db")
    assert name and (tmp_cache / "loads" / name).is_file()
    text = sidebar_text(at)
    assert f"**{display_name(name)}**" in text and "(bundled demo)" not in text
    assert any(s.value.startswith("loaded ") for s in at.sidebar.success)
    assert metric(at, "Threads") == f"{con.execute('select count(*) from threads').fetchone()[0]:,}"

    # A link carrying db= opens that database in a new session; a bad name falls back with a warning.
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params["db"] = name
    assert f"**{display_name(name)}**" in sidebar_text(fresh.run())
    bad = AppTest.from_file(APP, default_timeout=TIMEOUT)
    bad.query_params["db"] = "../../etc/passwd"
    bad.run()
    assert "(bundled demo)" in sidebar_text(bad)
    assert any("“../../etc/passwd”, which this server does not know" in w.value for w in bad.sidebar.warning)


def test_an_existing_duckdb_is_opened_not_loaded(app, tmp_cache, tmp_path, demo_db):
    copy = tmp_path / "mine.duckdb"
    shutil.copyfile(demo_db, copy)
    at = load(app.run(), str(copy))
    assert not at.exception
    assert "**mine.duckdb**" in sidebar_text(at)
    assert not (tmp_cache / "loads").exists()
    # It gets a name a link can carry (never its path), and a new session on that link opens it.
    name = at.query_params["db"]
    assert name.startswith("mine-") and "/" not in name and str(tmp_path) not in name
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params["db"] = name
    assert "**mine.duckdb**" in sidebar_text(fresh.run())


def test_sidebar_offers_every_registered_source_kind(app):
    import loaders

    at = app.run()
    assert at.sidebar.selectbox(key="load.kind").options == ["auto-detect", *loaders.sources()]


def test_resume_qa_page_is_in_navigation_when_present(app):
    if not (ROOT / "pages" / "resume_qa.py").exists():
        pytest.skip("pages/resume_qa.py is not written yet")
    at = open_page(app, "resume_qa")
    assert not at.exception, at.exception


def test_router_guard_deep_link(demo_db, monkeypatch):
    """On a fresh server Streamlit starts in v1 mode (pages/ folder): a deep link runs the page
    file alone. The guard switches to the router and reruns the same page with its params."""
    from streamlit.runtime import pages_manager

    monkeypatch.setattr(pages_manager.PagesManager, "__init__", _original_init)  # undo the conftest shim
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.query_params.update({"thread": "acme:web:sess-1001", "speaker": "user", "index": "0"})
    at.switch_page("pages/transcript.py").run()  # AppTest restarts in v1 mode on every run
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Transcript explorer"]
    assert "(bundled demo)" in sidebar_text(at)  # the router's sidebar was drawn
    assert at.selectbox(key="transcript.thread").value == "acme:web:sess-1001"



def test_an_uploaded_store_is_saved_and_loaded(app, tmp_cache):
    at = app.run()
    store = database.DEMO_SOURCE.read_bytes()
    at.sidebar.get("file_uploader")[0].upload("mystore.sqlite", store, "application/octet-stream")
    at.run()
    at.sidebar.button(key="load.go").click().run()
    assert not at.exception, at.exception
    saved = list((tmp_cache / "uploads").glob("*-mystore.sqlite"))
    assert len(saved) == 1 and saved[0].read_bytes() == database.DEMO_SOURCE.read_bytes()
    assert not at.sidebar.error, [e.value for e in at.sidebar.error]
    name = at.query_params.get("db")
    assert name and "mystore.sqlite-" in name and f"**{display_name(name)}**" in sidebar_text(at)  # (mystore.sqlite)


def test_a_replaced_database_is_read_fresh_even_while_the_old_one_is_open(tmp_cache, demo_db):
    """DuckDB hands a re-opened path the instance still open for it; ui.cache must not answer from it."""
    import duckdb

    from ui import cache

    path = tmp_cache / "loads" / "replaced.duckdb"
    path.parent.mkdir()
    shutil.copyfile(demo_db, path)
    before = cache.database_info(database.ref(path))
    in_flight = analytics.connect(path)  # another session still reading the old version
    staged = path.with_name("staged.duckdb")
    shutil.copyfile(demo_db, staged)
    with duckdb.connect(str(staged)) as con:
        con.execute("DELETE FROM threads WHERE tenant_id = 'acme'")
    staged.replace(path)  # what the loader's atomic swap does
    after = cache.database_info(database.ref(path))
    acme = in_flight.execute("select count(*) from threads where tenant_id = 'acme'").fetchone()[0]
    expected = before["threads"] - acme
    assert after["threads"] == expected < before["threads"]
    assert in_flight.execute("select count(*) from threads").fetchone()[0] == before["threads"]
    in_flight.close()


def test_demo_database_is_rebuilt_when_the_loader_code_is_newer(tmp_path, monkeypatch):
    source = tmp_path / "demo.sqlite"
    shutil.copyfile(database.DEMO_SOURCE, source)
    target = tmp_path / "cache" / "demo.duckdb"
    database.ensure_demo_db(source, target)
    assert not database.demo_is_stale(source, target)
    # An upgrade that changes what a load writes must not keep serving the old database.
    from transcript_lens import demo

    monkeypatch.setattr(demo, "_writer_code_mtime_ns", lambda: target.stat().st_mtime_ns + 1)
    assert database.demo_is_stale(source, target)


def test_load_options_reach_the_loader(app, tmp_cache):
    """Thread-key pattern and incremental reload from the load panel, as the CLI offers them."""
    pattern = r"^(?P<tenant>[^:]*):(?P<session>.*)$"  # no sub-tenant: "acme:web:s1" → session "web:s1"
    at = app.run()
    at.sidebar.text_input(key="load.pattern").set_value(pattern)
    load(at, str(database.DEMO_SOURCE))
    assert not at.exception, at.exception
    db = tmp_cache / "loads" / at.query_params.get("db")
    con = analytics.connect(db)
    try:
        subs, colon_sessions = con.execute(
            "SELECT count(sub_tenant_id), count(*) FILTER (WHERE session_id LIKE '%:%') FROM threads"
        ).fetchall()[0]
        assert subs == 0 and colon_sessions > 0
        assert con.execute("SELECT thread_key_pattern FROM loads").fetchall() == [(pattern,)]
    finally:
        con.close()

    at.sidebar.checkbox(key="load.incremental").check()
    load(at, str(database.DEMO_SOURCE))
    assert not at.exception, at.exception
    # Incremental, and the bundled store has not changed: the loader says so and writes nothing.
    assert any("nothing changed" in s.value for s in at.sidebar.success), [s.value for s in at.sidebar.success]
    con = analytics.connect(db)
    try:
        assert [m for (m,) in con.execute("SELECT mode FROM loads ORDER BY load_id").fetchall()] == ["full"]
    finally:
        con.close()


def test_a_bad_thread_key_pattern_is_an_error_and_keeps_the_open_database(app, tmp_cache):
    at = app.run()
    before = sidebar_text(at)
    at.sidebar.text_input(key="load.pattern").set_value("(")
    load(at, str(database.DEMO_SOURCE))
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert errors and "invalid thread-key pattern" in errors[0] and "unchanged" in errors[0]
    assert sidebar_text(at) == before
    assert not list(tmp_cache.glob("loads/*.duckdb"))


def test_the_postgres_schema_option_reads_that_schema(app, tmp_cache):
    from storegen import run_scenarios
    from tests.loaders.pg_util import fresh_database, saver_for

    with fresh_database() as dsn:
        with saver_for(dsn, "agents") as saver:
            run_scenarios(saver, threads={"acme:web:pg-1": "simple_chat"})
        at = load(app.run(), dsn)  # public holds no checkpoint tables
        errors = [e.value for e in at.sidebar.error]
        assert errors and "agents" in errors[0] and "unchanged" in errors[0]
        at.sidebar.text_input(key="load.schema").set_value("agents")
        load(at, dsn)
        assert not at.exception, at.exception
        db = tmp_cache / "loads" / at.query_params.get("db")
        con = analytics.connect(db)
        try:
            assert con.execute("SELECT thread_id FROM threads").fetchall() == [("acme:web:pg-1",)]
        finally:
            con.close()


def everything_shown(at) -> str:
    """All the sidebar shows (text, messages, labels, status) and the URL's query, not what was typed in."""
    shown = [str(getattr(node, "proto", "")) for node in at.sidebar if getattr(node, "type", "") != "text_input"]
    return "\n".join([*shown, repr(dict(at.query_params))])


def test_the_sidebar_shows_a_source_as_its_kind_describes_it():
    from ui import sidebar

    for spec, secret in [
        ("postgresql://app:S3cret@db/agents", "S3cret"),
        ("postgresql://app@db/agents?sslmode=require&password=S3cret", "S3cret"),
        ("postgres://app@db/agents?password=p%40S3cret", "S3cret"),
        ("host=db dbname=agents password=S3cret", "S3cret"),
        ("host=db dbname=agents password='S3 cret'", "S3 cret"),
    ]:
        for kind in (None, "postgres", "no-such-kind"):
            assert secret not in sidebar.shown(spec, kind), (spec, kind)
        assert secret not in sidebar._reason(RuntimeError(f"cannot use {spec}"), spec)
    assert sidebar.shown("/data/store.sqlite", "sqlite") == "/data/store.sqlite"


def test_a_dsn_password_never_appears_in_the_sidebar(app, tmp_cache):
    from storegen import run_scenarios
    from tests.loaders.pg_util import fresh_database, saver_for

    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            run_scenarios(saver, threads={"acme:web:pg-1": "simple_chat"})
        parts = urlsplit(dsn)
        url = dsn.replace("postgresql://postgres@", "postgresql://postgres:S3cret-user@") + "?password=S3cret-query"
        keyword = f"host={parts.hostname} port={parts.port} dbname={parts.path[1:]} user=postgres password=S3cret-kw"
        missing = url.replace(parts.path, "/tl_no_such_database")
        at = app.run()
        for spec, kind, loads in [
            (url, "auto-detect", True), (keyword, "postgres", True),  # loaded: the source is shown under the database
            (keyword, "auto-detect", True),  # a keyword DSN is detected as postgres too
            (missing, "auto-detect", False),  # the server refuses: an error naming it
        ]:
            at.sidebar.selectbox(key="load.kind").set_value(kind)
            load(at, spec)
            assert not at.exception, at.exception
            assert bool(at.sidebar.success) == loads and bool(at.sidebar.error) != loads, (spec, kind)
            text = everything_shown(at)
            assert "S3cret" not in text, (spec, kind)
            assert ("dbname=" if spec == keyword else "postgres") in text  # the source itself was shown
        assert at.query_params.get("db", "").startswith("postgres-")


def test_an_encrypted_store_loads_with_its_key_file(app, tmp_cache, tmp_path, monkeypatch):
    """The load panel's "AES key file" reaches the loader; without it each thread says what to pass."""
    from tests.loaders import conformance
    from tests.loaders.test_encrypted import KEY, encrypting, sqlite_saver

    monkeypatch.delenv("LANGGRAPH_AES_KEY", raising=False)
    store = tmp_path / "secret.sqlite"
    saver = sqlite_saver(store, encrypting())
    try:
        conformance.write_awkward_threads(saver)
    finally:
        saver.conn.close()
    key = tmp_path / "aes.key"
    key.write_text(KEY + "\n")
    at = load(app.run(), str(store))
    assert "6 row errors" in sidebar_text(at)  # one per thread, naming what to pass
    at.sidebar.text_input(key="load.aes_key_file").set_value(str(key))
    at.sidebar.button(key="load.go").click().run()
    assert not at.exception, at.exception
    text = sidebar_text(at)
    assert "6 threads · 24 messages" in text and "row error" not in text and KEY not in text


def test_a_page_offers_to_refresh_once_a_load_changed_its_database(tmp_cache, demo_db):
    """`transcript-lens load --watch` changes the file under an open page: the sidebar's timed
    check (a fragment) sees a newer version and offers a refresh; an up-to-date page shows nothing."""
    from streamlit.testing.v1 import AppTest

    path = tmp_cache / "loads" / "watched.duckdb"
    path.parent.mkdir()
    shutil.copyfile(demo_db, path)
    shown = database.ref(path)

    def notice(shown: tuple) -> None:
        from ui import database, sidebar

        sidebar._newer_database_notice(database.DbRef(*shown))

    at = AppTest.from_function(notice, args=(tuple(shown),), default_timeout=TIMEOUT).run()
    assert not at.info and not at.button
    assert database.newer(shown) is None
    masked = shown._replace(policy=Policy(redact=True, tenants=frozenset({"acme"})))  # a served, masking session's
    assert database.newer(masked) is None
    staged = path.with_name("staged.duckdb")
    shutil.copyfile(demo_db, staged)
    staged.replace(path)  # a load's swap (an in-place load changes size and mtime the same way)
    assert database.newer(shown) == database.ref(path)
    at.run()
    assert "reloaded" in at.info[0].value and at.button[0].label == "Refresh"


def test_the_app_opens_a_parquet_dataset_folder(tmp_path, tmp_cache, monkeypatch):
    """`transcript-lens app --db DIR` on a `--format parquet` folder: the same pages, read from the files."""
    import transcript_lens

    folder = tmp_path / "lens"
    summary = transcript_lens.load(database.DEMO_SOURCE, folder, format="parquet")
    monkeypatch.setattr("sys.argv", ["app.py", "--db", str(folder)])
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception and not at.sidebar.error, [e.value for e in at.sidebar.error]
    assert "**lens**" in sidebar_text(at) and f"{summary.threads:,} threads" in sidebar_text(at)
    at.switch_page("pages/conversations.py").run()
    assert not at.exception
    assert len(at.dataframe[0].value) == summary.threads
