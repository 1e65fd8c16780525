"""LangGraph.js stores for the loader's tests: written by Node through the real JS savers
(storegen/js/write_stores.mjs), with what those savers read back as the oracle's input.

`JsSaverView` holds the JS savers' own `list`/`getTuple` answers, dumped as JSON by the same
script, behind the two calls tests/oracle.py makes (`list`, `get_tuple`): the oracle's rules
(latest root checkpoint, a message's time, roles) then apply to the JS reading unchanged.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest
from langgraph.checkpoint.base import CheckpointTuple

JS_DIR = Path(__file__).resolve().parents[2] / "storegen" / "js"


def write_js_stores(out: Path, sqlite: Path | None = None, postgres: str | None = None) -> dict[str, list[dict]]:
    """Run the JS store writer; returns its dump, `{"sqlite": [...], "postgres": [...]}`."""
    node = shutil.which("node")
    if node is None or not (JS_DIR / "node_modules" / "@langchain" / "langgraph").is_dir():
        pytest.fail("Node or storegen/js/node_modules missing: `make test` runs `npm ci` there (README)")
    dump = out / "js_dump.json"
    args = [node, str(JS_DIR / "write_stores.mjs"), "--dump", str(dump)]
    if sqlite is not None:
        args += ["--sqlite", str(sqlite)]
    if postgres is not None:
        args += ["--postgres", postgres]
    proc = subprocess.run(args, cwd=JS_DIR, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"write_stores.mjs failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(dump.read_text())


class JsSaverView:
    """A JS saver's dumped reading, answering `list` and `get_tuple` as a saver would (read-only).

    Messages are the dumped field dicts (`type`, `id`, `name`, `content`, ...), which
    tests/oracle.py reads as it reads a strict decoder's field dicts.
    """

    def __init__(self, dumped: list[dict[str, Any]]):
        self.tuples = [self._tuple(d) for d in dumped]

    @staticmethod
    def _tuple(d: dict[str, Any]) -> CheckpointTuple:
        conf = {"thread_id": d["thread_id"], "checkpoint_ns": d["checkpoint_ns"], "checkpoint_id": d["checkpoint_id"]}
        values = {} if d["messages"] is None else {"messages": d["messages"]}
        parent = d["parent_checkpoint_id"]
        return CheckpointTuple(
            config={"configurable": conf},
            checkpoint={"id": d["checkpoint_id"], "ts": d["ts"], "channel_values": values, "channel_versions": d["channel_versions"]},
            metadata=d["metadata"],
            parent_config=None if parent is None else {"configurable": {**conf, "checkpoint_id": parent}},
            pending_writes=[(task, channel, None) for task, channel in d["pending_writes"]],
        )

    def list(self, config: dict | None) -> Iterator[CheckpointTuple]:
        want = (config or {}).get("configurable", {})
        for tup in sorted(self.tuples, key=lambda t: t.config["configurable"]["checkpoint_id"], reverse=True):
            conf = tup.config["configurable"]
            if all(conf.get(k) == v for k, v in want.items()):
                yield tup

    def get_tuple(self, config: dict) -> CheckpointTuple | None:
        want = dict(config["configurable"])
        want.setdefault("checkpoint_ns", "")
        return next(self.list({"configurable": want}), None)
