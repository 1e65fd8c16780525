"""End to end, in Chromium: a model filter cleared on Compare stays cleared. The demo's first visit
compares its two models; a link whose `a_model` is present with no value (a shared link, a saved
view) opens cohort A on any model, and the navigation keeps it so (the browser keeps the empty param).

The app runs on a private cache folder: the demo database it builds there is this test's own.
"""

from __future__ import annotations

from tests.e2e.test_signals_browser import browser, server  # noqa: F401  (the fixtures: the app and Chromium)
from tests.e2e.util import settle


def chips(page, key: str) -> int:
    """The chosen values (tags) the multiselect of widget key `key` shows, once cohort B's model (in
    every state here) is drawn and the count holds still: the page's widgets come after its first
    paint, and a run that redraws them can leave one without its tags for a moment."""
    page.locator(".st-key-compare-b_model [data-tag-index]").first.wait_for()
    tags = page.locator(f".st-key-{key} [data-tag-index]")
    idle = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
    seen = None
    for _ in range(60):  # (two reads 0.5 s apart, the script idle at both, agreeing: at most 30 s)
        idle.wait_for()
        count = tags.count()
        if count == seen:
            return count
        seen = count
        page.wait_for_timeout(500)
    raise AssertionError(f"the tags of {key} kept changing")


def test_a_cleared_model_survives_a_shared_link_and_the_navigation(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/compare")
    page.get_by_role("heading", name="Compare", exact=True).wait_for()
    settle(page)
    assert chips(page, "compare-a_model") == 1 and chips(page, "compare-b_model") == 1  # the default pair

    page.goto(f"{server}/compare?a_model=")  # a shared link with model A cleared
    page.get_by_role("heading", name="Compare", exact=True).wait_for()
    settle(page)
    assert chips(page, "compare-a_model") == 0 and chips(page, "compare-b_model") == 1
    assert "a_model=" in page.url

    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Overview").click()
    page.get_by_role("heading", name="Overview", exact=True).wait_for()
    settle(page)
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Compare").click()
    page.wait_for_url("**/compare*")
    page.get_by_role("heading", name="Compare", exact=True).wait_for()
    settle(page)
    assert "a_model=" in page.url
    assert chips(page, "compare-a_model") == 0 and chips(page, "compare-b_model") == 1
    page.close()
