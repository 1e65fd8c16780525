"""The command line's text tables (`search`, `transcript`, `report … --table`) keep every column under
its header when a cell holds a control character (printed as a visible escape, `\\x1b`, four
characters for one), a wide character (`日本`, two columns of a terminal each) or a combining accent
(none), or a value masked to a placeholder (`--redact`): widths are those of what is printed (docs/security.md, "What leaves the tool")."""

from __future__ import annotations

import unicodedata

import pytest

from tests.attacks.harness import attack, run_cli
from tests.attacks.stores import store_with_messages

THREAD = "acme:web:\x1b]0;pwned\x07\u65e5\u672c-jose\u0301"
PLAIN = "acme:web:plain"
MAILED = "acme:web:bob.table@example.com"  # masked (`--redact`) to a placeholder of another width


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("terminal-tables")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [{"type": "human", "content": "refund \x1b[2J now \u65e5\u672c\u8a9e\x7f please", "id": "m1"},
                                {"type": "ai", "content": "", "id": "m2",
                                 "tool_calls": [{"name": "lookup", "args": {}, "id": "c1", "type": "tool_call"}]},
                                {"type": "tool", "content": "refund ok", "name": "look\x1b[1Aup\u65e5",
                                 "tool_call_id": "c1", "id": "m3"}], thread_id=THREAD)
    store_with_messages(store, [{"type": "human", "content": "refund plain", "id": "m1"}], thread_id=PLAIN)
    store_with_messages(store, [{"type": "human", "content": "refund to 4111 1111 1111 1111 日", "id": "m1"}],
                        thread_id=MAILED)
    attack(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def _columns(text: str) -> int:
    """A terminal's columns for `text` (wide characters two, combining and format characters none)."""
    return sum(0 if unicodedata.category(c) in ("Mn", "Me", "Cf") else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def _starts(line: str, at: int) -> str:
    """What `line` shows from terminal column `at` on (a combining accent stays with its letter before)."""
    for i in range(len(line) + 1):
        if _columns(line[:i]) >= at and (i == len(line) or _columns(line[i])):
            return line[i:]
    return ""


def _table(stdout: str, header: str) -> tuple[str, list[str]]:
    lines = [line for line in stdout.splitlines() if line and not line.startswith("#")]
    head = next(line for line in lines if header in line)
    return head, lines[lines.index(head) + 1:]


@pytest.mark.parametrize("argv,column,value", [
    (["search", "refund"], "message", r"\d"),
    (["report", "conversations", "--table"], "Last active (UTC)", r"\d{4}-"),
    (["transcript", "--thread", THREAD], "ts (UTC)", r"\d{4}-"),
    (["search", "refund", "--redact"], "message", r"\d"),
    (["report", "conversations", "--table", "--redact"], "Last active (UTC)", r"\d{4}-"),
])
def test_every_row_keeps_its_columns_under_their_headers(lens, tmp_path, argv, column, value):
    import re

    out = run_cli([*argv, "--db", str(lens)], tmp_path).succeeded()
    head, rows = _table(out.stdout, column)
    at = _columns(head[:head.index(column)])
    assert rows and "\\x1b" in out.stdout, out.stdout
    assert "--redact" not in argv or ("bob.table" not in out.stdout and "<EMAIL_" in out.stdout), out.stdout
    shifted = [row for row in rows if not re.match(value, _starts(row, at)) or _starts(row, at - 2)[:2] != "  "]
    assert not shifted, "\n".join([head, *rows])
