"""The conformance kit as a source author uses it: docs/sources.md's lines, run as written in a
suite of their own (outside this repository's tests), on the example kind; and what the kit needs.

`run_documented_kit` is shared with tests/transcript_lens/test_packaging.py, which runs the same
lines against the installed wheel.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loaders import conformance

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted([*(ROOT / "loaders" / "conformance").glob("*.py"), *(ROOT / "storegen").glob("*.py")])

# The stand-in for the author's module: the example kind, and its writer of the graphs.
_MY_SOURCE_TAIL = """

MySource = JsonlDirSource


def write_my_store(store, folder):
    return dump_sqlite_store(store, folder / "dumps")
"""
# The same, but the writer loses one thread: the kit must fail it.
_LOSES_A_THREAD = _MY_SOURCE_TAIL.replace(
    'return dump_sqlite_store(store, folder / "dumps")',
    'dumps = dump_sqlite_store(store, folder / "dumps")\n    sorted(dumps.glob("*.jsonl"))[0].unlink()\n    return dumps',
)


def documented_snippet() -> str:
    """The Python block after docs/sources.md's `conformance-snippet` marker."""
    text = (ROOT / "docs" / "sources.md").read_text()
    match = re.search(r"<!-- conformance-snippet:[^\n]*-->\n```python\n(.*?)```", text, re.S)
    assert match, "docs/sources.md has no conformance snippet"
    return match.group(1)


def run_documented_kit(
    python: str, folder: Path, env: dict[str, str], tail: str = _MY_SOURCE_TAIL
) -> subprocess.CompletedProcess:
    """docs/sources.md's lines as `folder/test_my_source.py`, the example kind as `folder/my_source.py`,
    run by `python -m pytest` in `folder` (its own rootdir: no conftest or setting of this repository)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_my_source.py").write_text(documented_snippet())
    (folder / "my_source.py").write_text((ROOT / "tests" / "loaders" / "example_source.py").read_text() + tail)
    return subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--basetemp", str(folder / "tmp"),
         "test_my_source.py"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=900,
    )


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "PYTEST_"))}


def test_the_documented_lines_pass_the_example_kind(tmp_path):
    proc = run_documented_kit(sys.executable, tmp_path / "suite", _env())
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert f"{len(conformance.CHECKS)} passed" in proc.stdout


def test_the_documented_lines_fail_a_kind_that_loses_a_thread(tmp_path):
    proc = run_documented_kit(sys.executable, tmp_path / "suite", _env(), tail=_LOSES_A_THREAD)
    failed = set(re.findall(r"FAILED test_my_source\.py::test_my_kind_conforms\[(\w+)\]", proc.stdout))
    assert proc.returncode == 1 and {"reader", "load"} <= failed, proc.stdout[-4000:]


def test_the_kit_imports_nothing_from_the_tests():
    for path in SHIPPED:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            assert not [n for n in names if n.split(".")[0] == "tests"], f"{path.relative_to(ROOT)}:{node.lineno}"


def test_the_checks_import_without_langgraph():
    code = ("import sys\nfor m in ('langgraph', 'langchain_core', 'storegen'): sys.modules[m] = None\n"
            "from loaders import conformance\nprint(len(conformance.CHECKS))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == [str(len(conformance.CHECKS))], proc.stderr


def test_writing_the_graphs_without_langgraph_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "langgraph.graph", None)
    wanted = r"cannot import langgraph\.graph: pip install 'transcript-lens\[conformance\]'"
    with pytest.raises(ImportError, match=wanted):
        conformance.write_reference(tmp_path)
    assert not (tmp_path / "graphs.sqlite").exists()


def test_comparing_two_loads_opens_each_database_once(graphs_reference, tmp_path, monkeypatch):
    import shutil

    import duckdb

    from loaders.conformance import tables

    other = tmp_path / "other.duckdb"
    shutil.copyfile(graphs_reference, other)
    opened = []
    connect = duckdb.connect
    monkeypatch.setattr(tables.duckdb, "connect", lambda db, **kw: opened.append(db) or connect(db, **kw))
    tables.assert_same_tables(graphs_reference, other, with_errors=True, json_columns=("metadata",))
    assert sorted(opened) == sorted([str(graphs_reference), str(other)])
    # and it still tells a difference: one message less in the copy
    con = duckdb.connect(str(other))
    con.execute("DELETE FROM messages WHERE ordinal = (SELECT max(ordinal) FROM messages)")
    con.close()
    with pytest.raises(AssertionError, match="messages"):
        tables.assert_same_tables(graphs_reference, other)
