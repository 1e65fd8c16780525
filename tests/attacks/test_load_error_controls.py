"""A failed load's one-line error quotes the store — a zip member's name, a CSV header's cells —
and printed them raw: `ESC ] 52 ; c ; … BEL` in a header cell wrote the reader's clipboard
(xterm, kitty, iTerm2, tmux), `ESC ] 0 ; … BEL` set the title. The load command prints through
the one terminal rule (`analytics.terminal.visible`): each control character shown escaped."""

from __future__ import annotations

import zipfile

import pytest

from tests.attacks.harness import attack

OSC52, TITLE = "\x1b]52;c;ZWNobyBwd25lZA==\x07", "\x1b]0;HDR\x07"
MEMBERS = {
    "header": [("checkpoints.csv", f"thread_id,{OSC52},{TITLE}\n"), ("writes.csv", "a\n")],
    "member": [("\x1b]0;ZIPMEMBER\x07/checkpoints.csv", "thread_id\n"), ("writes.csv", "a\n")],
}


@pytest.mark.parametrize("case", MEMBERS)
def test_a_failed_loads_error_shows_control_characters_escaped(tmp_path, case):
    source, db = tmp_path / "evil.zip", tmp_path / "out.duckdb"
    with zipfile.ZipFile(source, "w") as z:
        for name, text in MEMBERS[case]:
            z.writestr(name, text)
    out = attack(["load", str(source), "--db", str(db)], tmp_path)
    out.refused(str(source))
    assert "\x1b" not in out.stderr and "\x07" not in out.stderr and "\\x1b]" in out.stderr, out.stderr
