"""The app as a shared service (ui.session, ui.downloads, ui.sidebar): each session reads under
its own policy — its "Mask personal data" switch, its signed-in user's tenants — on every page
and in every download, and a restricted deployment refuses what it must.

The database is `pii_store`'s: two tenants whose threads hold planted personal data, written by
a real graph through a real SqliteSaver and loaded by the real loader. A download's bytes are
built by the very callable the page handed to `st.download_button` (AppTest has no server to
click it on), called on the test's thread as the server calls it on one of its own.
"""

from __future__ import annotations

import io

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import analytics
from tests.analytics.pii_store import DECOYS, PLANTED, load_pii_db
from tests.pages.conftest import APP, TIMEOUT, open_page
from ui import session

ACME, GLOBEX = "acme:web:s1", "globex:web:s1"


@pytest.fixture(scope="module")
def pii_db(tmp_path_factory):
    return load_pii_db(tmp_path_factory.mktemp("pii-app"))


@pytest.fixture()
def served(pii_db, tmp_path, monkeypatch):
    """The pii database (a private copy: its export log is this test's) as the app's --db."""
    return serve(pii_db, tmp_path, monkeypatch)


def serve(source, tmp_path, monkeypatch):
    """A private copy of the database at `source` as the app's --db, no deployment setting left."""
    db = tmp_path / "pii.duckdb"
    db.write_bytes(source.read_bytes())
    for name in ("TRANSCRIPT_LENS_REDACT", "TRANSCRIPT_LENS_TENANTS", "TRANSCRIPT_LENS_CONFIG",
                 "TRANSCRIPT_LENS_READ_ONLY", "TRANSCRIPT_LENS_SOURCE_ROOTS", "TRANSCRIPT_LENS_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(db))
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    return db


@pytest.fixture()
def downloads(monkeypatch) -> dict:
    """{key: the `data` callable} of every download button the app draws."""
    made: dict = {}
    original = st.download_button

    def recording(label, data, *args, **kwargs):
        made[kwargs.get("key")] = data
        return original(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", recording)
    return made


def shown(at) -> str:
    """Everything the run drew, as text (every element's message, tables included)."""
    parts: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    parts += [d.value.to_csv() for d in at.dataframe]
    return "\n".join(parts)


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT)


def test_the_mask_switch_masks_the_transcript_and_its_download(served, downloads):
    at = open_page(_app(), "transcript", thread=ACME)
    assert not at.exception, at.exception
    assert PLANTED["acme"][0] in shown(at)  # unmasked by default on a server that does not force it
    at.toggle(key=session.MASK_KEY).set_value(True).run()
    assert not at.exception, at.exception
    text = shown(at)
    assert not [v for v in PLANTED["acme"] if v in text]
    assert "<EMAIL_" in text and "A-1043" in text  # placeholders, decoys kept
    data = downloads["transcript.csv"]().decode()
    assert "<EMAIL_" in data and not [v for v in PLANTED["acme"] if v in data]
    assert [d for d in DECOYS if d in data]
    log = analytics.exports(served)
    assert list(zip(log.origin, log.what, log.masked)) == [("app", "transcript", True)]
    assert log.rows.iloc[0] == len(pd.read_csv(io.StringIO(data)))


def test_a_deployment_that_masks_offers_no_switch(served, monkeypatch):
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT", "1")
    at = open_page(_app(), "transcript", thread=GLOBEX)
    assert session.MASK_KEY not in [t.key for t in at.toggle]
    assert any("masked on this server" in c.value for c in at.caption)
    assert not [v for v in PLANTED["globex"] if v in shown(at)]


def _users_config(tmp_path) -> str:
    path = tmp_path / "deploy.toml"
    path.write_text('[app]\n[app.users]\n"*@acme.com" = ["acme"]\n')
    return str(path)


def test_a_user_mapped_to_one_tenant_sees_nothing_of_another(served, tmp_path, monkeypatch, downloads):
    # Another session of the same server first reads everything: its cached answers must not
    # be served to the scoped user (the cache is the process's, shared by every session).
    for page, params in (("conversations", {}), ("search", {"q": "charge"})):
        assert "globex:web:s2" in shown(open_page(_app(), page, **params))
    monkeypatch.setenv("TRANSCRIPT_LENS_CONFIG", _users_config(tmp_path))
    at = _app()
    at.user = {"email": "ana@acme.com", "is_logged_in": True}
    pages = {}
    for page, params in (("conversations", {}), ("search", {"q": "charge"}), ("transcript", {"thread": GLOBEX})):
        pages[page] = open_page(at, page, **params)
        assert not at.exception, at.exception
        text = shown(at)
        assert not [v for v in PLANTED["globex"] if v in text], page
        if page == "transcript":  # the link's own thread id is echoed in the refusal, nothing more
            assert any(f"No thread `{GLOBEX}`" in w.value for w in at.warning)
            text = text.replace(GLOBEX, "").replace("globex%3Aweb%3As1", "")  # (also links carrying it, the picker's text box, holding the link's id)
        assert "globex" not in text, page
    conversations = pages["conversations"]
    assert any("Signed in as **ana@acme.com** · sees acme" in c.value for c in conversations.caption)
    open_page(at, "conversations")
    rows = pd.read_csv(io.BytesIO(downloads["conversations.csv"]()))
    assert set(rows["Thread"]) == {"acme:web:s1", "acme:web:s2"}  # (the CSV is the table: its headers)
    open_page(at, "search", q="charge")
    hits = pd.read_csv(io.BytesIO(downloads["search.csv"]()))
    assert len(hits) and set(hits["Thread"]) <= {"acme:web:s1", "acme:web:s2"}
    assert set(analytics.exports(served).who) == {"ana@acme.com"}


def test_a_user_the_mapping_does_not_name_sees_no_thread(served, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSCRIPT_LENS_CONFIG", _users_config(tmp_path))
    at = _app()
    at.user = {"email": "eve@elsewhere.org", "is_logged_in": True}
    open_page(at, "conversations")
    assert not at.exception, at.exception
    text = shown(at)
    assert "acme:web" not in text and "globex:web" not in text


def test_a_read_only_deployment_hides_loading(served, monkeypatch):
    at = open_page(_app(), "overview")
    assert any(e.label == "Load a source" for e in at.expander)
    monkeypatch.setenv("TRANSCRIPT_LENS_READ_ONLY", "1")
    at = open_page(_app(), "overview")
    assert not at.exception, at.exception
    assert not any(e.label == "Load a source" for e in at.expander)


def test_source_folders_refuse_a_path_outside_them_naming_it(served, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSCRIPT_LENS_SOURCE_ROOTS", str(tmp_path / "stores"))
    (tmp_path / "stores").mkdir()
    at = open_page(_app(), "overview")
    at.text_input(key="load.spec").set_value(str(served)).run()
    at.button(key="load.go").click().run()
    assert any(f"{served} is outside the folders this app may read" in e.value for e in at.error)
    at.text_input(key="load.spec").set_value("postgresql://app:secret@db/agents").run()
    at.button(key="load.go").click().run()
    assert any("loads databases by name only" in e.value for e in at.error)


def test_a_named_source_loads_by_its_name(served, pii_db, tmp_path, monkeypatch):
    config = tmp_path / "deploy.toml"
    store = pii_db.parent / "pii.sqlite"
    config.write_text(f'[app]\nsource_roots = ["{tmp_path / "stores"}"]\n[app.sources]\npii = "{store}"\n')
    monkeypatch.setenv("TRANSCRIPT_LENS_CONFIG", str(config))
    at = open_page(_app(), "overview")
    at.selectbox(key="load.named").set_value("pii").run()
    at.button(key="load.go").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    flash = [s.value for s in at.success]
    assert flash and flash[0].startswith("loaded 4 threads") and str(store) not in flash[0] and "pii" in flash[0]


def test_downloads_are_off_when_the_export_log_cannot_be_written(served, tmp_path, monkeypatch, downloads):
    monkeypatch.setenv("TRANSCRIPT_LENS_WORKSPACE", str(tmp_path / "missing" / "ws.sqlite"))
    at = open_page(_app(), "conversations")
    assert not at.exception, at.exception
    (button,) = at.get("download_button")
    assert button.proto.disabled and "export log" in button.proto.help
    with pytest.raises(analytics.AnalyticsError, match="export refused"):
        downloads["conversations.csv"]()  # a click that got through anyway: nothing handed over


def test_a_served_app_shows_database_names_not_server_paths(served, monkeypatch):
    at = open_page(_app(), "overview")
    assert str(served) in shown(at)  # on your own machine the file's path is shown
    monkeypatch.setenv("TRANSCRIPT_LENS_READ_ONLY", "1")
    at = open_page(_app(), "overview")
    assert not at.exception, at.exception
    text = shown(at)
    assert served.name in text and str(served.parent) not in text
    store = str(served.parent.parent)  # the loaded store's folder (the pii fixture's) is not named either
    assert all(store not in line for line in text.splitlines() if "pii.sqlite" in line)


def test_a_served_app_tells_a_visitor_who_loads_or_opens_a_file_its_name_not_the_folders(served, pii_db, tmp_path,
                                                                                          monkeypatch):
    stores = tmp_path / "stores"
    stores.mkdir()
    (stores / "pii.sqlite").write_bytes((pii_db.parent / "pii.sqlite").read_bytes())
    (stores / "copy.duckdb").write_bytes(served.read_bytes())
    monkeypatch.setenv("TRANSCRIPT_LENS_SOURCE_ROOTS", str(stores))
    cache = tmp_path / "cache"
    for typed, says in ((stores / "pii.sqlite", "loaded 4 threads"), (stores / "copy.duckdb", "Opened copy.duckdb")):
        at = open_page(_app(), "overview")
        at.text_input(key="load.spec").set_value(str(typed)).run()
        at.button(key="load.go").click().run()
        assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
        flash = [s.value for s in at.success]
        assert flash and flash[0].startswith(says) and typed.name in flash[0], flash
        assert str(stores) not in flash[0] and str(cache) not in flash[0], flash


def test_a_link_to_an_unknown_database_does_not_list_the_known_ones(served):
    from ui import database

    at = _app()
    at.query_params["db"] = "nope"
    at.run()
    [warning] = [w.value for w in at.sidebar.warning]
    assert "“nope”, which this server does not know" in warning
    assert not any(name in warning for name in database.known_databases()), warning


@pytest.fixture(scope="module")
def pii_everywhere_db(tmp_path_factory):
    import transcript_lens
    from tests.analytics.pii_store import build_pii_in_every_field

    folder = tmp_path_factory.mktemp("pii-everywhere")
    db = folder / "lens.duckdb"
    transcript_lens.load(build_pii_in_every_field(folder / "pii.sqlite"), db)
    return db


def test_a_masking_session_masks_labels_and_file_names_and_finds_no_part_of_a_value(
        pii_everywhere_db, tmp_path, monkeypatch):
    # The thread id itself holds an email: the picker's label and every download's name mask it,
    # and typing a part of a masked value into the picker's find box finds nothing.
    from tests.analytics.pii_store import GLUED, NAME, SECRETS, THREAD

    db = tmp_path / "lens.duckdb"
    db.write_bytes(pii_everywhere_db.read_bytes())
    for name in ("TRANSCRIPT_LENS_TENANTS", "TRANSCRIPT_LENS_CONFIG", "TRANSCRIPT_LENS_READ_ONLY",
                 "TRANSCRIPT_LENS_SOURCE_ROOTS", "TRANSCRIPT_LENS_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(db))
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT", "1")
    config = tmp_path / "redact.toml"
    config.write_text(f'[redact]\nterms = ["{NAME}"]\n', encoding="utf-8")
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT_CONFIG", str(config))
    names: list[str] = []
    original = st.download_button

    def recording(label, data, *args, **kwargs):
        names.append(kwargs.get("file_name"))
        return original(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", recording)
    at = open_page(_app(), "transcript", thread=THREAD)  # the stored key, linked: refused, and not echoed
    assert not at.exception, at.exception
    from ui.thread_picker import RAW_ID_REFUSED

    assert [w for w in at.warning if w.value == RAW_ID_REFUSED] and not [s for s in SECRETS if s in shown(at)]
    from analytics.masking import mask_text
    from analytics.policy import Policy

    at = open_page(_app(), "transcript", thread=mask_text(THREAD, Policy(redact=True)))  # the key the app shows
    assert not at.exception, at.exception
    assert not [w for w in at.warning if "No thread" in w.value]
    text = shown(at)
    assert "<EMAIL_" in text and not [s for s in SECRETS if s in text]
    assert names and not [n for n in names if "@" in n or "carol" in n], names
    at = open_page(_app(), "transcript")  # no thread picked: the list is what the find box matches
    picker = next(t for t in at.text_input if t.label == "Find threads")
    threads = lambda: next(s for s in at.selectbox if s.label == "Thread").options  # noqa: E731
    for probe in ("carol@", GLUED.split("@")[1]):
        picker.set_value(probe).run()
        assert not at.exception, at.exception
        assert not [o for o in threads() if "EMAIL" in o], probe
    picker.set_value("Order A-1043").run()  # text shown unmasked is still found
    assert [o for o in threads() if "EMAIL" in o]


def test_under_masking_the_conversations_text_filter_finds_no_part_of_a_value(served, monkeypatch):
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT", "1")
    email = PLANTED["acme"][0]
    for typed, found in ((email, 0), (email.split("@")[0], 0), ("@" + email.split("@")[1], 0), ("A-1043", 4)):
        at = open_page(_app(), "conversations", q=typed)
        text = shown(at)
        assert not [v for v in PLANTED["acme"] + PLANTED["globex"] if v in text and v != typed]  # (the box shows what was typed)
        rows = sum(len(d.value) for d in at.dataframe)
        assert (rows > 0) == bool(found), (typed, rows)
