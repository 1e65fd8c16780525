"""An example source kind, written as an extension would be: a folder of JSON-lines dumps.

The folder holds `manifest.json` (`{"format": "checkpoint-jsonl/1"}`) and one
`*.jsonl` file per thread, one row per line as a SqliteSaver stores it, the
bytes in base64:

    {"table": "checkpoints", "thread_id": …, "checkpoint_ns": …, "checkpoint_id": …,
     "parent_checkpoint_id": …, "type": "msgpack", "checkpoint": "<base64>", "metadata": "<JSON text>"}
    {"table": "writes", "thread_id": …, "checkpoint_ns": …, "checkpoint_id": …, "task_id": …,
     "idx": …, "channel": …, "type": …, "value": "<base64>"}

It is the whole kind: registered with one line, `loaders.register(JsonlDirSource())`
(tests/loaders/test_conformance.py), and held to the conformance kit (`loaders.conformance`);
`dump_sqlite_store` writes the kit's graphs in its format.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from loaders import Capabilities, Source, SourceError, SourceOptions, SourceReader
from loaders.records import SPECIAL_CHANNELS, ThreadBundle, weighted_ranges
from loaders.source import SPLIT_MIN_BYTES
from loaders.bundles import bundle_thread

FORMAT = "checkpoint-jsonl/1"
_CHECKPOINT = ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata")
_WRITE = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value")


class JsonlDirSource(Source):
    kind = "jsonl-dir"
    label = "folder of JSON-lines checkpoint dumps (one file per thread)"

    def detect(self, spec: str) -> bool:
        manifest = Path(spec) / "manifest.json"
        try:
            return manifest.is_file() and json.loads(manifest.read_text()).get("format") == FORMAT
        except (ValueError, AttributeError):
            return False

    def open_reader(self, spec: str, options: SourceOptions) -> JsonlDirReader:
        if not self.detect(spec):
            raise SourceError(f"{Path(spec).resolve()}: not a folder of checkpoint dumps (expected manifest.json of {FORMAT})")
        return JsonlDirReader(Path(spec), options)


class JsonlDirReader(SourceReader):
    capabilities = Capabilities(split=True)

    def __init__(self, folder: Path, options: SourceOptions) -> None:
        self.folder, self.options = folder, options
        self.files: dict[str, Path] = {}  # thread id → its file, read from each file's first line
        for file in sorted(folder.glob("*.jsonl")):
            with file.open() as fh:
                self.files[json.loads(fh.readline())["thread_id"]] = file

    def _selected(self, only: frozenset[str] | None) -> list[str]:
        wanted = self.options.wanted(only)
        ids = sorted(self.files) if wanted is None else [t for t in wanted if t in self.files]
        return [t for t in ids if self.thread_range.contains(t)]

    def _rows(self, thread_id: str) -> tuple[list[tuple], list[tuple]]:
        checkpoints, writes = [], []
        with self.files[thread_id].open() as fh:
            rows = [json.loads(line) for line in fh]
        for row in rows:
            if row["table"] == "checkpoints":
                checkpoints.append(tuple(row[c] for c in _CHECKPOINT[:5]) + (base64.b64decode(row["checkpoint"]), row["metadata"]))
            elif row["channel"] in SPECIAL_CHANNELS:
                writes.append(tuple(row[c] for c in _WRITE[:7]) + (base64.b64decode(row["value"]),))
        return sorted(checkpoints, key=lambda r: r[1:3]), sorted(writes, key=lambda r: r[1:5])

    def describe(self) -> str:
        return str(self.folder.resolve())

    def thread_count(self) -> int:
        return len(self._selected(None))

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        for thread_id in sorted(self.files):
            yield from (r[:3] for r in self._rows(thread_id)[0])

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        for thread_id in self._selected(only):
            yield bundle_thread(thread_id, *self._rows(thread_id))

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        weights = [(t, self.files[t].stat().st_size) for t in self._selected(None)]
        if sum(w for _, w in weights) < min_bytes:
            return [(None, None)]
        return weighted_ranges(weights, n)

    def close(self) -> None:
        pass


def dump_sqlite_store(store: Path, folder: Path) -> Path:
    """A SqliteSaver file's rows as the example kind's folder of JSON-lines dumps (one file per thread)."""
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"format": FORMAT}))
    files: dict[str, list[str]] = {}
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        for table, blob in (("checkpoints", "checkpoint"), ("writes", "value")):
            cur = con.execute(f"SELECT * FROM {table}")
            for values in cur:
                row = {"table": table, **dict(zip((d[0] for d in cur.description), values))}
                row[blob] = base64.b64encode(row[blob]).decode()
                if isinstance(row.get("metadata"), bytes):
                    row["metadata"] = row["metadata"].decode()
                files.setdefault(row["thread_id"], []).append(json.dumps(row))
    finally:
        con.close()
    for i, thread_id in enumerate(sorted(files)):
        (folder / f"{i:04d}.jsonl").write_text("\n".join(files[thread_id]) + "\n")
    return folder
