"""The notebooks/ walk-throughs run top to bottom in a fresh kernel, on a database built in tmp_path,
and show what they say: the app's charts as plotly figures, conversations as the app draws them."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.notebook.tables import tables, unlike_the_app

ROOT = Path(__file__).resolve().parents[2]
PLOTLY = "application/vnd.plotly.v1+json"


@pytest.fixture(scope="module", params=["analyst.ipynb", "qa_review.ipynb"])
def executed(request, tmp_path_factory, monkeypatch_module):
    tmp = tmp_path_factory.mktemp("walkthrough")
    monkeypatch_module.setenv("TMPDIR", str(tmp))  # the kernel's tempfile: the database is built here
    nb = nbformat.read(ROOT / "notebooks" / request.param, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    return request.param, nb, tmp


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _outputs(nb, needle: str) -> list[dict]:
    return next(c for c in nb.cells if c.cell_type == "code" and needle in c.source).outputs


def _data(outputs, kind: str) -> list:
    return [o["data"][kind] for o in outputs if kind in o.get("data", {})]


def test_the_walkthrough_runs_without_errors_on_its_own_database(executed):
    name, nb, tmp = executed
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    said = "".join(o.get("text", "") for o in _outputs(nb, "transcript_lens.load("))
    assert "0 load errors" in said and str(tmp) in said
    assert not any(tmp.iterdir())  # and removes it at the end


def test_the_walkthrough_shows_figures_and_transcripts(executed):
    name, nb, _ = executed
    figures = [f for c in nb.cells if c.cell_type == "code" for f in _data(c.outputs, PLOTLY)]
    transcripts = [h for c in nb.cells if c.cell_type == "code" for h in _data(c.outputs, "text/html") if "tl-nb" in h]
    if name == "analyst.ipynb":
        assert len(figures) >= 7 and len(transcripts) >= 3
        roles = {t["name"] for t in _data(_outputs(nb, 'figures["messages_by_role"]'), PLOTLY)[0]["data"]}
        assert {"user", "assistant"} <= roles
        removed = _data(_outputs(nb, 'lens.transcript(db, "initech:helpdesk:sess-5006")'), "text/html")[0]
        assert "tl-marker-removed" in removed
        assert "tl-focus" in _data(_outputs(nb, "hit = found.hits[0]"), "text/html")[0]
    else:
        assert len(figures) == 2 and len(transcripts) == 1
        assert any(s["type"] == "rect" for s in figures[0]["layout"]["shapes"])  # the resume point
        assert "tl-marker-interrupt" in transcripts[0] and "message id" in transcripts[0]
        assert "tl-marker-restart" not in transcripts[0]  # (its idle gap is the wait for a person)
        progress = _data(_outputs(nb, "workspace.progress(db)"), "text/plain")[0]
        assert "highest resume risk" in progress


def test_tables_show_empty_cells_and_number_messages_from_1(executed):
    """A table reads as the app's: no NaN / <NA> / None in a cell, no pandas row numbers from 0,
    a message by its number in the transcript, not its 0-based ordinal (`lens_notebook.table`)."""
    name, nb, _ = executed
    drawn = tables(nb)
    assert len(drawn) >= 4
    assert [unlike_the_app(t) for t in drawn if unlike_the_app(t)] == []
