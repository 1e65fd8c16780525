"""Crafting hostile and damaged rows inside REAL checkpoint stores.

Everything starts from a store written by real graphs through a real
``SqliteSaver`` (``tests/conftest.py``): a thread is cloned under a new id with
plain SQL, then one of its rows is edited. Checkpoint blobs are unpacked with
their msgpack extension values kept as opaque ``RawExt`` (never rebuilt), edited
as plain Python data, and packed again, so everything that is not edited stays
byte-for-byte what LangGraph wrote.

Example:
    >>> ed = StoreEditor(copy_of_store)                       # doctest: +SKIP
    >>> ed.clone_thread("acme:web:sess-001", "hostile:x")     # doctest: +SKIP
    >>> ed.edit_latest("hostile:x", lambda cp: cp["channel_values"]["messages"].append(
    ...     hostile_ext(1, "os.system", marker_dir)))          # doctest: +SKIP
    >>> ed.close()                                            # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ormsgpack

CANARY_MODULE = "tests.loaders.canary_pkg"
# A module that does not exist anywhere: importing it can only fail, but a
# decoder that even TRIES (a meta-path lookup) is caught by the import recorder.
GHOST_MODULE = "tl_no_such_pkg.models"
HOSTILE_MODULES = (CANARY_MODULE, GHOST_MODULE.split(".")[0])

TARGETS = ("os.system", "subprocess.Popen", "builtins.eval", "builtins.__import__", "canary", "ghost")
EXT_CODES = tuple(range(8))
HUMAN = ("langchain_core.messages.human", "HumanMessage")
# (code, target) pairs whose payload carries message fields: the loader reads them as a plain message.
LOADS_AS_DATA = {(c, t) for c in (2, 4, 5) for t in ("canary", "ghost")}
AI = ("langchain_core.messages.ai", "AIMessage")


class RawExt:
    """An msgpack extension value kept as found: code + undecoded payload bytes."""

    __slots__ = ("code", "data")

    def __init__(self, code: int, data: bytes) -> None:
        self.code = code
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawExt) and (self.code, self.data) == (other.code, other.data)

    def __hash__(self) -> int:
        return hash((self.code, self.data))

    def __repr__(self) -> str:
        return f"RawExt({self.code}, {len(self.data)} bytes)"

    def fields(self) -> Any:
        """The payload array of this extension value (nested extensions kept raw)."""
        return unpack(self.data)


def _default(obj: Any) -> Any:
    if isinstance(obj, RawExt):
        return ormsgpack.Ext(obj.code, obj.data)
    raise TypeError(f"cannot pack {type(obj).__name__}")


def unpack(blob: bytes) -> Any:
    """msgpack → Python, extension values left as `RawExt` (nothing rebuilt, nothing imported)."""
    return ormsgpack.unpackb(blob, ext_hook=RawExt, option=ormsgpack.OPT_NON_STR_KEYS)


def pack(obj: Any) -> bytes:
    """Python (with `RawExt` anywhere) → msgpack, as LangGraph would write it."""
    return ormsgpack.packb(obj, default=_default, option=ormsgpack.OPT_NON_STR_KEYS)


def ext(code: int, payload: Any) -> RawExt:
    """An extension value whose payload is `payload` packed (raw `bytes` are used as they are)."""
    return RawExt(code, payload if isinstance(payload, bytes) else pack(payload))


def message(module: str, cls: str, fields: dict) -> RawExt:
    """A pydantic-v2 message as LangGraph stores it: ext 5 of `[module, class, fields, method]`."""
    return ext(5, [module, cls, fields, "model_validate_json"])


def human(content: Any, mid: str | None, **extra: Any) -> RawExt:
    fields = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": "human", "name": None, "id": mid}
    fields.update(extra)
    return message(*HUMAN, fields)


def ai(content: Any, mid: str | None, **extra: Any) -> RawExt:
    fields = {
        "content": content, "additional_kwargs": {}, "response_metadata": {"model_name": "gpt-test"}, "type": "ai",
        "name": None, "id": mid, "tool_calls": [], "invalid_tool_calls": [], "usage_metadata": None,
    }
    fields.update(extra)
    return message(*AI, fields)


# --- payloads that name callables -------------------------------------------------


def marker(marker_dir: str | os.PathLike, target: str, code: int) -> Path:
    return Path(marker_dir) / f"fired-{target}-{code}"


def _target(target: str, code: int, marker_dir: str | os.PathLike) -> tuple[str, str, Any, Any, Any]:
    """(module, name, single arg, positional args, keyword args) of a payload that would
    leave the file `marker(...)` (or a canary marker) if it were ever called."""
    m = str(marker(marker_dir, target, code))
    if target == "os.system":
        return "os", "system", f"touch '{m}'", [f"touch '{m}'"], {"command": f"touch '{m}'"}
    if target == "subprocess.Popen":
        argv = ["touch", m]
        return "subprocess", "Popen", argv, [argv], {"args": argv}
    if target == "builtins.eval":
        expr = f"open({m!r}, 'w').close()"
        return "builtins", "eval", expr, [expr], {"source": expr}
    if target == "builtins.__import__":
        return "builtins", "__import__", CANARY_MODULE, [CANARY_MODULE], {"name": CANARY_MODULE}
    if target == "canary":
        kw = {"type": "human", "content": f"canary {code} says hi", "id": f"canary-{code}"}
        return CANARY_MODULE, "Canary", "x", ["x"], kw
    if target == "ghost":
        kw = {"type": "human", "content": f"ghost {code} says hi", "id": f"ghost-{code}"}
        return GHOST_MODULE, "Ghost", "x", ["x"], kw
    raise KeyError(target)


def hostile_payload(code: int, target: str, marker_dir: str | os.PathLike) -> Any:
    """The payload array an extension of `code` would carry to call `target`."""
    module, name, single, pos, kw = _target(target, code, marker_dir)
    if code == 0:
        return [module, name, single]
    if code == 1:
        return [module, name, pos]
    if code in (2, 4):
        return [module, name, kw]
    if code == 3:
        return [module, name, single, "fromisoformat" if target == "canary" else "__call__"]
    if code == 5:
        return [module, name, kw, "model_validate_json"]
    if code == 6:
        return [f"{module}.{name}", [1], "C", pack(single)]
    if code == 7:
        # A DeltaChannel snapshot is the msgpack of a value: here, a code-1 constructor call.
        return RawExt(1, pack(hostile_payload(1, target, marker_dir)))
    raise KeyError(code)


def hostile_ext(code: int, target: str, marker_dir: str | os.PathLike) -> RawExt:
    payload = hostile_payload(code, target, marker_dir)
    return RawExt(code, pack(payload))


def deep_ext_payload(levels: int = 400, arrays: int = 1000) -> bytes:
    """A message whose additional_kwargs nest an extension value `levels` deep, each level
    inside `arrays` nested arrays: decoded by re-entering ormsgpack from its ext hook, this
    430 kB payload overflowed the C stack (a segfault) before loaders.decode.unpack was fixed."""
    p = pack(["m", "HumanMessage", {"type": "human", "content": "x"}])
    for _ in range(levels):
        body = b"\x91" * arrays + ormsgpack.packb(ormsgpack.Ext(2, p))
        fields = (b"\x83" + pack("type") + pack("human") + pack("content") + pack("deep")
                  + pack("additional_kwargs") + b"\x81" + pack("a") + body)
        p = b"\x94" + pack("m") + pack("HumanMessage") + fields + pack("model_validate_json")
    return p


def deep_array_message(depth: int = 100_000) -> bytes:
    fields = (b"\x83" + pack("type") + pack("human") + pack("content") + pack("deep")
              + pack("additional_kwargs") + b"\x81" + pack("a") + b"\x91" * depth + b"\xc0")
    return b"\x94" + pack("langchain_core.messages.human") + pack("HumanMessage") + fields + pack("model_validate_json")


class _PickleBomb:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch '{self.path}'",))


def pickle_bomb(path: str | os.PathLike) -> bytes:
    """Pickle bytes whose unpickling runs `touch path` (references `posix.system`, not this module)."""
    return pickle.dumps(_PickleBomb(str(path)))


def lc_envelope(id_path: list[str], kwargs: dict) -> dict:
    """A LangChain `lc: 1` constructor envelope (the legacy `json` serde format)."""
    return {"lc": 1, "type": "constructor", "id": id_path, "kwargs": kwargs}


# --- editing a real store ---------------------------------------------------------


class StoreEditor:
    """Plain-SQL edits of a COPY of a SqliteSaver store (never through LangGraph)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.con = sqlite3.connect(self.path, isolation_level=None)
        self.con.execute("BEGIN")

    def close(self) -> None:
        self.con.execute("COMMIT")
        # Leave a plain single file behind: fold the WAL back in, then close.
        self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.con.close()

    def clone_thread(self, src: str, dst: Any) -> None:
        """Copy every checkpoint and write of thread `src` under the id `dst` (any SQL value)."""
        self.con.execute(
            "INSERT INTO checkpoints SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints WHERE thread_id = ?",
            [dst, src],
        )
        cols = [r[1] for r in self.con.execute("SELECT * FROM pragma_table_info('writes')")]
        rest = ", ".join(c for c in cols if c != "thread_id")
        self.con.execute(f"INSERT INTO writes (thread_id, {rest}) SELECT ?, {rest} FROM writes WHERE thread_id = ?", [dst, src])

    def root_ids(self, thread: Any) -> list[str]:
        return [r[0] for r in self.con.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id", [thread])]

    def latest(self, thread: Any) -> str:
        return self.root_ids(thread)[-1]

    def row(self, thread: Any, cid: str) -> tuple[str, bytes, bytes]:
        """(type, checkpoint blob, metadata) of one root checkpoint."""
        return self.con.execute(
            "SELECT type, checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
            [thread, cid],
        ).fetchone()

    def set(self, thread: Any, cid: str, **cols: Any) -> None:
        """UPDATE columns of one root checkpoint row (`type`, `checkpoint`, `metadata`, `thread_id`, ...)."""
        sets = ", ".join(f"{c} = ?" for c in cols)
        n = self.con.execute(
            f"UPDATE checkpoints SET {sets} WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
            [*cols.values(), thread, cid],
        ).rowcount
        assert n == 1, (thread, cid, n)

    def edit(self, thread: Any, cid: str, fn: Callable[[dict], Any]) -> None:
        """Unpack a checkpoint (extensions raw), let `fn` edit it in place (or return a replacement), pack it back."""
        type_, blob, _ = self.row(thread, cid)
        assert type_ == "msgpack"
        cp = unpack(blob)
        out = fn(cp)
        self.set(thread, cid, checkpoint=pack(cp if out is None else out))

    def edit_latest(self, thread: Any, fn: Callable[[dict], Any]) -> str:
        cid = self.latest(thread)
        self.edit(thread, cid, fn)
        return cid

    def edit_latest_message(self, thread: Any, index: int, fn: Callable[[dict], Any]) -> str:
        """Edit the `fields` dict of message `index` of the latest root checkpoint."""

        def edit(cp: dict) -> None:
            msgs = cp["channel_values"]["messages"]
            payload = msgs[index].fields()
            out = fn(payload[2])
            if out is not None:
                payload[2] = out
            msgs[index] = RawExt(msgs[index].code, pack(payload))

        return self.edit_latest(thread, edit)

    def add_write(self, thread: Any, cid: str, channel: str, type_: str, value: bytes, task_id: str = "hostile-task", idx: int = 0) -> None:
        cols = {r[1] for r in self.con.execute("SELECT * FROM pragma_table_info('writes')")}
        if "task_path" in cols:
            self.con.execute(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) "
                "VALUES (?, '', ?, ?, '', ?, ?, ?, ?)", [thread, cid, task_id, idx, channel, type_, value])
        else:
            self.con.execute(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) "
                "VALUES (?, '', ?, ?, ?, ?, ?, ?)", [thread, cid, task_id, idx, channel, type_, value])


# --- fingerprints -----------------------------------------------------------------


def sha256(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_fingerprint(folder: str | os.PathLike) -> dict[str, tuple[int, str]]:
    """relative path → (mode, sha256) of every file under `folder`, subfolders included."""
    out = {}
    root = Path(folder)
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(root))] = (p.stat().st_mode, sha256(p))
    return out


def new_modules(before: set[str]) -> set[str]:
    return set(sys.modules) - before


# --- a live agent ------------------------------------------------------------------


def live_writer(path: str, stop: str, progress: str, threads: int = 4, autocheckpoint: int = 20) -> None:
    """Run a one-node chat graph in a loop through `SqliteSaver` on `path` until the file `stop` exists.

    Meant for another OS process (`python -c "from tests.loaders.hostile_util import live_writer; ..."`):
    a live agent writing while a load reads. A low `wal_autocheckpoint` makes the WAL
    checkpoint and restart often, as a busy store does. `progress` gets the turn count.
    """
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import START, MessagesState, StateGraph

    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")
    # (synchronous stays FULL: a live agent's saver commits at a disk's pace; without fsync the writer
    # restarts the -wal faster than any copy of it can finish, which no real deployment does)

    def reply(state: MessagesState) -> dict:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"echo {n}: {state['messages'][-1].content[:20]}", id=f"ai-{n}")]}

    g = StateGraph(MessagesState)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    graph = g.compile(checkpointer=saver)
    i = 0
    try:
        while not os.path.exists(stop):
            cfg = {"configurable": {"thread_id": f"live:{i % threads}"}}
            graph.invoke({"messages": [HumanMessage(content=f"turn {i} " + "x" * 3000, id=f"h-{i}")]}, cfg)
            i += 1
            # Replaced, not rewritten: a reader polling the file never sees it empty.
            Path(f"{progress}.tmp").write_text(str(i))
            os.replace(f"{progress}.tmp", progress)
    finally:
        conn.close()


# --- whole stores written by real graphs, then damaged -------------------


def saver_store(path: str | os.PathLike, threads: dict[str, str], *, encoding: str | None = None,
                ddl: str | None = None, **run: Any) -> Path:
    """A fresh SqliteSaver file holding storegen's scenarios for `threads` ({thread_id: scenario}).

    `encoding` (`PRAGMA encoding`, e.g. "UTF-16le") and `ddl` (tables of our own, which the
    saver's `CREATE TABLE IF NOT EXISTS` then keeps) are applied before the saver's setup;
    `run` goes to `storegen.run_scenarios` (`start=`, say). The same `threads` give the same rows.
    """
    from langgraph.checkpoint.sqlite import SqliteSaver

    from storegen import remove_store, run_scenarios

    path = Path(path)
    remove_store(path)
    conn = sqlite3.connect(path, check_same_thread=False)
    if encoding is not None:
        conn.execute(f"PRAGMA encoding = '{encoding}'")
    if ddl is not None:
        conn.executescript(ddl)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous = OFF")
    try:
        run_scenarios(saver, threads=threads, **run)
    finally:
        conn.close()  # (the last connection checkpoints the WAL into the file)
    return path


def add_threads(path: str | os.PathLike, threads: dict[str, str], **run: Any) -> None:
    """Run more of storegen's scenarios into an existing store (its tables as they are)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from storegen import run_scenarios

    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA synchronous = OFF")  # no fsync per commit (storegen.open_sqlite_saver): the same bytes
    try:
        run_scenarios(SqliteSaver(conn), threads=threads, **run)
    finally:
        conn.close()


def table_pages(path: str | os.PathLike, table: str) -> dict[str, list[int]]:
    """{page type ('internal', 'leaf', 'overflow'): page numbers} of one b-tree, from `dbstat`."""
    con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        out: dict[str, list[int]] = {}
        for pageno, kind in con.execute("SELECT pageno, pagetype FROM dbstat WHERE name = ? ORDER BY pageno", [table]):
            out.setdefault(kind, []).append(pageno)
        return out
    finally:
        con.close()


def damage_pages(path: str | os.PathLike, spots: list[tuple[int, int, int]], rng) -> None:
    """Overwrite bytes with random ones: `spots` are (page number from 1, offset in the page, length)."""
    with open(path, "r+b") as fh:
        fh.seek(16)
        size = int.from_bytes(fh.read(2), "big")
        size = 65536 if size == 1 else size
        for page, offset, length in spots:
            fh.seek((page - 1) * size + offset)
            fh.write(bytes(rng.randrange(256) for _ in range(length)))
