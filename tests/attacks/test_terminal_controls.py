"""Store text printed by `transcript` and `search` reaches the terminal with its control
characters shown as escapes, not run (docs/security.md, "What leaves the tool"): an escape
sequence in a message, a tool's name or a thread id would otherwise set the window title,
clear the screen, write over the lines above or reorder text (a bidi override). A document
printed for a program (`--format csv` / `json`) to a file or a pipe keeps the data."""

from __future__ import annotations

import io
import json

import pytest

from analytics.terminal import CONTROL, document_output, visible, visible_output
from tests.attacks.harness import attack, run_cli
from tests.attacks.stores import store_with_messages

TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[1A"
C1 = "\x9b31m"
BIDI = "\u202egnp.exe\u202c \u2066x\u2069"
THREAD = f"acme:web:s1{TITLE}"
TEXT = f"refund {TITLE}{CLEAR} hidden\rover {C1} {BIDI} del\x7f end"
DECOY = "tab\there, line\nbreak and ünïcödé — “quotes” 😀"  # printable text stays as written


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("terminal")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [{"type": "human", "content": TEXT, "id": "m1"},
                                {"type": "ai", "content": DECOY, "id": "m2"},
                                {"type": "tool", "content": "refund ok", "name": f"lookup{CLEAR}",
                                 "tool_call_id": "c1", "id": "m3"}], thread_id=THREAD)
    attack(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def _raw_controls(text: str) -> list[str]:
    return sorted(set(CONTROL.findall(text)))


@pytest.mark.parametrize("argv", [["transcript", "--thread", THREAD], ["search", "refund"],
                                  ["transcript", "--thread", THREAD, "--redact"]])
def test_text_output_shows_control_characters_as_escapes(lens, tmp_path, argv):
    out = run_cli([*argv, "--db", str(lens)], tmp_path).succeeded()
    assert _raw_controls(out.stdout) == [] and _raw_controls(out.stderr) == []
    assert "\\x1b]0;pwned\\x07" in out.stdout + out.stderr
    if argv[0] == "transcript":
        assert "\\u202egnp.exe" in out.stdout and "\\x9b31m" in out.stdout and "lookup\\x1b[2J" in out.stdout
        assert "ünïcödé — “quotes” 😀" in out.stdout


def test_a_missing_thread_named_in_an_error_is_shown_escaped(lens, tmp_path):
    out = run_cli(["transcript", "--thread", f"nope{TITLE}", "--db", str(lens)], tmp_path)
    assert _raw_controls(out.stdout + out.stderr) == []


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_document_to_a_pipe_keeps_the_data(lens, tmp_path, fmt):
    out = run_cli(["transcript", "--thread", THREAD, "--db", str(lens), "--format", fmt], tmp_path).succeeded()
    if fmt == "json":
        assert [r["content"] for r in json.loads(out.stdout)][:2] == [TEXT, DECOY]
    else:
        assert TITLE in out.stdout and BIDI in out.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_document_to_a_terminal_is_shown_escaped(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    with visible_output():
        with document_output():
            print(TEXT)
            import sys

            sys.stdout.buffer.write(TEXT.encode()[:9])  # a character cut between two writes stays whole
            sys.stdout.buffer.write(TEXT.encode()[9:])
    assert terminal.getvalue() == visible(TEXT) + "\n" + visible(TEXT)
    assert _raw_controls(terminal.getvalue()) == []
