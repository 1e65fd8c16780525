"""A view shared or saved on any page of the navigation opens that page: the link's address is
the app's base address (the current page's path taken off) plus the page, and a saved view
links to the page's own file."""

from __future__ import annotations

import pytest

from ui import nav, review


@pytest.mark.parametrize("page", nav.PAGES, ids=lambda p: p.url_path)
def test_a_link_made_on_any_page_names_the_page_once(page):
    here = f"http://host:8501/{page.url_path}?tenant=acme"
    assert review.app_address(here) == "http://host:8501"
    assert review.app_address(f"http://host:8501/under/a/path/{page.url_path}") == "http://host:8501/under/a/path"


def test_a_view_saved_on_any_page_opens_that_page():
    assert {p.url_path: p.file for p in nav.PAGES} == review.PAGE_FILES
