"""The app's Search page in a masking session sends no hit's stored thread key to the browser:
a hit is drawn as a button (the server opens the conversation when it is pressed), not a link
whose address carries the key — a thread key can hold an e-mail, and the reader never opened
that thread (docs/privacy.md: "search-hit links" are masked; only the address bar of the thread
one opens carries its key). Unmasked, a hit stays a link (open it in a new tab, copy it)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.analytics.pii_store import GLUED, THREAD
from tests.pages.conftest import APP, TIMEOUT, open_page
from tests.pages.test_privacy import pii_everywhere_db, serve, shown  # noqa: F401 (the fixture: a key holding an e-mail)


@pytest.fixture()
def app_env(pii_everywhere_db, tmp_path, monkeypatch):  # noqa: F811
    serve(pii_everywhere_db, tmp_path, monkeypatch)
    monkeypatch.delenv("TRANSCRIPT_LENS_REDACT_CONFIG", raising=False)
    return monkeypatch


def test_a_masked_search_draws_no_hit_link_holding_a_thread_key(app_env):
    app_env.setenv("TRANSCRIPT_LENS_REDACT", "1")
    at = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "search", q="A-1043")
    text = shown(at)
    assert "<EMAIL_" in text and "Message" in text  # a hit is drawn, its caption masked
    assert GLUED not in text and GLUED.replace("@", "%40") not in text

    [hit] = [b for b in at.button if "Message" in str(b.label)]
    hit.click().run()  # the server opens the one pressed: its masked key goes to the address bar
    assert not at.exception, at.exception
    opened = shown(at)
    assert "transcript?thread=acme%3Aweb%3A" in opened
    assert GLUED not in opened and GLUED.replace("@", "%40") not in opened


def test_an_unmasked_search_hit_is_a_link(app_env):
    app_env.delenv("TRANSCRIPT_LENS_REDACT", raising=False)
    at = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "search", q="A-1043")
    assert GLUED.replace("@", "%40") in shown(at) or GLUED in shown(at)
    assert THREAD.split(":")[0] in shown(at)
