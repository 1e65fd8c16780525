"""README.md's figures of the demo store are the demo's own: its conversations, and the line
`transcript-lens load demo/demo.sqlite` prints (threads, checkpoints, messages)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

import transcript_lens

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_counts_the_demo_as_a_load_of_it_does(tmp_path):
    db = tmp_path / "demo.duckdb"
    transcript_lens.load(str(transcript_lens.demo_store()), db)
    with duckdb.connect(str(db), read_only=True) as con:
        threads, checkpoints, messages = con.execute(
            "SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM messages)"
        ).fetchone()
    text = README.read_text()
    said = [int(n) for n in re.findall(r"demo/demo\.sqlite` \((\d+) conversations", text)]
    assert said == [threads]
    loaded = re.findall(r"loaded (\d+) threads, (\d+) checkpoints, (\d+) messages from sqlite /…/demo/demo\.sqlite", text)
    assert [tuple(map(int, line)) for line in loaded] == [(threads, checkpoints, messages)]
    assert re.findall(r"threads: 100%\S* (\d+)/(\d+)", text) == [(str(threads), str(threads))]
