"""A label a globex reviewer defined is not shown to a user the app maps to acme, on Review and in
the Conversations page's "Has label" choices, even after an unscoped session of the same server
read the label set (the app caches it per scope) (docs/privacy.md, "The review workspace")."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from analytics import workspace as ws_api
from analytics.policy import TENANTS_ENV
from tests.analytics.pii_store import load_pii_db
from tests.pages.conftest import APP, TIMEOUT, _v2_router, open_page  # noqa: F401 - (the autouse router)
from tests.pages.test_privacy import serve, shown

SECRET = "GLOBEXSECRETLABEL"


@pytest.fixture(scope="module")
def pii_db(tmp_path_factory):
    return load_pii_db(tmp_path_factory.mktemp("pii-review-labels"))


def test_a_user_mapped_to_acme_is_not_offered_a_globex_label(pii_db, tmp_path, monkeypatch):
    db = serve(pii_db, tmp_path, monkeypatch)
    monkeypatch.setenv(TENANTS_ENV, "globex")
    ws_api.define_label(db, SECRET, "#654321")
    monkeypatch.delenv(TENANTS_ENV)
    for page in ("review", "conversations"):  # an unscoped session reads the whole set first
        assert SECRET in shown(open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), page)), page
    config = tmp_path / "deploy.toml"
    config.write_text('[app]\n[app.users]\n"*@acme.com" = ["acme"]\n')
    monkeypatch.setenv("TRANSCRIPT_LENS_CONFIG", str(config))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.user = {"email": "ana@acme.com", "is_logged_in": True}
    for page in ("review", "conversations"):
        text = shown(open_page(at, page))
        assert "good answer" in text or page == "conversations", page
        assert SECRET not in text, page
