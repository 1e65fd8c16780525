"""The AppTests of this folder share one scan of the installed packages (tests/apptest_scan.py)."""

from __future__ import annotations

import importlib.metadata

from streamlit.testing.v1 import AppTest

SCRIPT = "import streamlit as st\nst.write('scanned')\n"


def test_a_new_apptest_reads_no_package_metadata_again(monkeypatch):
    AppTest.from_string(SCRIPT).run()  # (the process's one scan, when no AppTest ran before it)
    read = []
    distributions = importlib.metadata.distributions
    monkeypatch.setattr(importlib.metadata, "distributions", lambda *a, **k: read.append(a) or distributions(*a, **k))
    at = AppTest.from_string(SCRIPT).run()
    assert not at.exception and [m.value for m in at.markdown] == ["scanned"]
    assert read == []
