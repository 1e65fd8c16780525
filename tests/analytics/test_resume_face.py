"""`analytics.resume` is the public face of the resume QA parts: every public name of each, the same object, imported explicitly."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from analytics import resume
from tests.conftest import ROOT

PARTS = ("resume.chain", "resume.rehydrate", "resume.timelines", "resume.risk_figures")


def test_every_public_name_of_a_part_is_a_name_of_resume():
    for part in PARTS:
        module = importlib.import_module(f"analytics.{part}")
        assert module.__all__, part
        for name in module.__all__:
            assert getattr(resume, name) is getattr(module, name), (part, name)
            assert name in dir(resume)
    # Each name lives in one part only.
    names = [n for part in PARTS for n in importlib.import_module(f"analytics.{part}").__all__]
    assert len(names) == len(set(names))


def test_the_shared_names_and_an_unknown_one():
    from analytics.resume import chain, common, rehydrate

    assert chain.require_thread is common.require_thread and rehydrate.DEFAULT_CAP == resume.DEFAULT_CAP == 50
    # The face names what it exports, statically: no lookup on first use.
    assert set(resume.__all__) >= {n for part in PARTS for n in importlib.import_module(f"analytics.{part}").__all__}
    assert not hasattr(resume, "__getattr__")
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        resume.no_such_name  # noqa: B018
    assert not hasattr(resume, "_risks_materialized")  # private names stay in their part


@pytest.mark.parametrize("first", ["analytics.resume.risk_figures", "analytics.resume.timelines", "analytics.resume"])
def test_any_part_can_be_imported_first(first):
    code = f"import {first}; from analytics.resume import materialize_risks, timeline, expected_window; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
