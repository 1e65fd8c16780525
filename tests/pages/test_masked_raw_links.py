"""In a masking session a thread is addressed by its masked id only: a link that names a thread
by its stored id holding a personal value (`?thread=acme:web:alice.pii@example.com`, typed by
hand) is refused on the Transcript explorer and on Resume QA with a message that does not echo
it, opens nothing, and leaves the address bar (docs/privacy.md, "What masking covers")."""

from __future__ import annotations

import pytest

from tests.pages.conftest import open_page
from tests.pages.test_masked_keys import PLANTED, THREADS, _app, keys_db, masking  # noqa: F401 (fixtures)
from tests.pages.test_privacy import shown
from ui.thread_picker import RAW_ID_REFUSED

RAW = "acme:web:alice.pii@example.com"


@pytest.mark.parametrize("page", ["transcript", "resume_qa"])
def test_a_raw_thread_id_in_the_url_is_refused_without_echo(masking, page):  # noqa: F811
    at = open_page(_app(), page, thread=RAW)
    assert not at.exception, at.exception
    text = shown(at)
    assert [v for v in PLANTED if v in text] == []
    assert RAW_ID_REFUSED in [w.value for w in at.warning]
    assert THREADS[RAW] not in text  # the thread is not opened
    assert at.query_params.get("thread") in (None, [], "")  # and the address bar no longer holds it


def test_a_thread_id_holding_nothing_personal_still_opens(masking):  # noqa: F811
    at = open_page(_app(), "transcript", thread="acme:web:plain")
    assert not at.exception, at.exception
    assert RAW_ID_REFUSED not in [w.value for w in at.warning]
    assert THREADS["acme:web:plain"] in shown(at)
