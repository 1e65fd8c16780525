"""notebooks/explore.ipynb runs top to bottom in a fresh kernel and answers its questions.

The notebook checks its own answers against the contract (asserts in its
cells), so an error output anywhere fails this test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

from tests.notebook.tables import tables, unlike_the_app

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"


def test_python3_kernel_runs_this_interpreter():
    # jupyter_client swaps a bare `python` argv[0] for sys.executable; anything
    # else must be this venv's interpreter, or the kernel would lack our packages.
    spec = KernelSpecManager().get_kernel_spec("python3")
    assert (
        spec.argv[0] in {"python", "python3", sys.executable}
        or Path(spec.argv[0]).resolve() == Path(sys.executable).resolve()
    )


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    if not (ROOT / "demo" / "demo.sqlite").is_file():
        pytest.skip("demo/demo.sqlite is not there (storegen builds it)")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        # Run where a user would open it; the notebook finds the repo root itself.
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    return nb


def _outputs(nb, needle: str) -> list[dict]:
    cell = next(c for c in nb.cells if c.cell_type == "code" and needle in c.source)
    return cell.outputs


def _text(outputs: list[dict]) -> str:
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
    return "\n".join(parts)


def test_notebook_runs_without_errors(executed):
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []


def test_notebook_answers_its_questions(executed):
    assert "0 load errors" in _text(_outputs(executed, "transcript_lens.load("))
    first = _text(_outputs(executed, 'print(first_question["content"].item())'))
    last = _text(_outputs(executed, 'print(last_reply["content"].item())'))
    assert first.strip() and last.strip() and first != last
    window = _text(_outputs(executed, "window = read("))
    assert "2025-03-08 12:5" in window


def test_notebook_shows_a_plotly_chart(executed):
    outputs = _outputs(executed, "px.bar(")
    figures = [
        o["data"]["application/vnd.plotly.v1+json"]
        for o in outputs
        if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    assert len(figures) == 1
    traces = figures[0]["data"]
    roles = {t["name"] for t in traces}
    assert {"user", "assistant"} <= roles
    assert json.dumps(figures[0]).count('"type": "bar"') >= 2


def test_tables_show_empty_cells_and_number_messages_from_1(executed):
    """A read's rows as the app shows them: no NaN / <NA> / None in a cell, no pandas row numbers
    from 0, a message by its number in the transcript (the read's own `index` stays: it is the
    query's position in the speaker's view, contract §4)."""
    drawn = tables(executed)
    assert len(drawn) >= 6
    assert [unlike_the_app(t) for t in drawn if unlike_the_app(t)] == []
