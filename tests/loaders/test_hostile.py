"""Hostile and damaged rows inside a REAL SqliteSaver store (contract §2, §10; contract §7.7, §6.2).

One store is built per module: the session store written by real graphs, plus
~70 threads cloned from its `simple_chat` thread with one crafted row each
(`hostile_util.StoreEditor`). It is loaded twice — in-process (workers=1) under
recorders for every way code could run, and through `python -m loaders` in a
subprocess — and every test below reads those two databases.

`test_the_crafted_payloads_are_live_under_langgraphs_default_decoder` proves the
payloads are real: LangGraph's default `JsonPlusSerializer` (and `SqliteSaver`
on the same store) DOES fire the canaries that the loader never fires.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import json
import os
import pickle
import posix
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import oracle
from tests.loaders.hostile_util import (
    CANARY_MODULE,
    EXT_CODES,
    HOSTILE_MODULES,
    LOADS_AS_DATA,
    TARGETS,
    RawExt,
    StoreEditor,
    deep_array_message,
    deep_ext_payload,
    ext,
    hostile_ext,
    human,
    lc_envelope,
    message,
    pack,
    pickle_bomb,
    tree_fingerprint,
    unpack,
)
from tests.loaders.util import load_db, rows

ROOT = Path(__file__).resolve().parents[2]
MESSAGE_COLS = ", ".join(oracle.MESSAGE_KEYS)


@dataclass
class Case:
    """What one crafted thread must produce."""

    errors: list[tuple[str, str, str | None]] = field(default_factory=list)  # (stage, reason regex, checkpoint id)
    keep: int | None = 0  # leading messages of the source thread that must load unchanged; None = thread not loaded
    shown_as: str | None = None  # the thread id as load_errors shows it, when it is not the id itself


def build_hostile_store(ed: StoreEditor, src: str, mdir: Path) -> dict[str, Case]:
    """Clone `src` once per case and craft one row in each clone. Returns the expectations."""
    cases: dict[str, Case] = {}
    latest = ed.latest(src)
    n = len(unpack(ed.row(src, latest)[1])["channel_values"]["messages"])

    def clone(t: str, **kw) -> Case:
        ed.clone_thread(src, t)
        cases[t] = Case(**kw)
        return cases[t]

    def append(t: str, *items) -> None:
        ed.edit_latest(t, lambda cp: cp["channel_values"]["messages"].extend(items))

    # --- ext payloads naming callables, every code 0-7 -------------------------------
    for c in EXT_CODES:
        t = f"hostile:list:c{c}"
        case = clone(t, keep=n)
        append(t, *(hostile_ext(c, tg, mdir) for tg in TARGETS))
        for tg in TARGETS:
            if (c, tg) not in LOADS_AS_DATA:
                why = "no type" if c in (2, 4, 5) else f"extension value of code {c}"
                case.errors.append(("message", why, latest))

        t = f"hostile:nested:c{c}"
        clone(t, keep=n)
        append(t, human(
            [{"type": "text", "text": f"nested {c}"}, hostile_ext(c, "os.system", mdir)], f"nested-{c}",
            additional_kwargs={tg: hostile_ext(c, tg, mdir) for tg in TARGETS},
            response_metadata={"hostile": [hostile_ext(c, tg, mdir) for tg in TARGETS]},
        ))

        t = f"hostile:write:c{c}"
        clone(t, keep=n)
        interrupt = ext(2, ["langgraph.types", "Interrupt", {"value": {tg: hostile_ext(c, tg, mdir) for tg in TARGETS}, "id": f"int-{c}"}])
        ed.add_write(t, latest, "__interrupt__", "msgpack", pack([interrupt]), idx=0)
        ed.add_write(t, latest, "__error__", "msgpack", pack(hostile_ext(c, "os.system", mdir)), idx=1)
        ed.add_write(t, latest, "messages", "msgpack", pack([hostile_ext(c, tg, mdir) for tg in TARGETS]), idx=2)

    t = "hostile:metadata"
    clone(t, keep=n)
    md = {"source": "loop", "step": 7, "parents": {},
          "writes": {"agent": lc_envelope(["os", "system"], {"command": f"touch '{mdir}/metadata'"})},
          "canary": lc_envelope([*CANARY_MODULE.split("."), "Canary"], {})}
    ed.set(t, latest, metadata=json.dumps(md).encode())

    t = "hostile:other-channel"
    clone(t, keep=n)
    ed.edit_latest(t, lambda cp: cp["channel_values"].__setitem__(
        "tl_hostile", [hostile_ext(c, tg, mdir) for c in EXT_CODES for tg in TARGETS]))

    t = "hostile:checkpoint-is-ext"
    clone(t, keep=n - 2, errors=[("checkpoint", "checkpoint is a Ext", latest)])
    ed.set(t, latest, checkpoint=pack(hostile_ext(1, "os.system", mdir)))
    t = "hostile:messages-is-ext"
    clone(t, keep=n - 2, errors=[("messages", "messages channel is a Ext", latest)])
    ed.edit_latest(t, lambda cp: cp["channel_values"].__setitem__("messages", hostile_ext(1, "subprocess.Popen", mdir)))
    t = "hostile:values-is-ext"
    clone(t, keep=n - 2, errors=[("checkpoint", "channel_values is not a mapping", latest)])
    ed.edit_latest(t, lambda cp: cp.__setitem__("channel_values", hostile_ext(0, "builtins.eval", mdir)))

    # --- type tags that are never decoded ----------------------------------------------
    t = "hostile:pickle"
    clone(t, keep=n - 2, errors=[("checkpoint", "pickle", latest), ("write", "pickle", latest)])
    ed.set(t, latest, type="pickle", checkpoint=pickle_bomb(mdir / "pickle-checkpoint"))
    ed.add_write(t, latest, "__interrupt__", "pickle", pickle_bomb(mdir / "pickle-write"))
    t = "hostile:encrypted"
    # Without a key: one row error for the thread, naming both tags and what to pass (loaders.cipher).
    clone(t, keep=n - 2, errors=[("checkpoint", r"^2 encrypted values \(json\+aes, msgpack\+aes\) not decrypted: no key given", None)])
    ed.set(t, latest, type="msgpack+aes", checkpoint=bytes(range(48)) + pack({"v": 4}))
    ed.add_write(t, latest, "__interrupt__", "json+aes", bytes(range(40)))
    t = "hostile:unknown-tag"
    clone(t, keep=n - 2, errors=[("checkpoint", "unknown serialization type 'yaml'", latest)])
    ed.set(t, latest, type="yaml", checkpoint=b"v: 4\n")
    t = "hostile:legacy-json"
    clone(t, keep=0, errors=[("message", "no type", latest), ("message", "no type", latest)])
    legacy = {
        "v": 1, "id": latest, "ts": "2025-01-01T10:00:00+00:00", "channel_versions": {}, "versions_seen": {},
        "channel_values": {"messages": [
            lc_envelope(["langchain", "schema", "messages", "HumanMessage"], {"content": "hello from legacy json", "id": "legacy-1"}),
            lc_envelope(["langchain_core", "messages", "ai", "AIMessage"], {"content": "legacy answer", "id": "legacy-2"}),
            lc_envelope(["os", "system"], {"command": f"touch '{mdir}/legacy-json'"}),
            lc_envelope([], {"content": "an envelope without a class"}),
            lc_envelope(["langchain", "schema", "messages", "HumanMessage"], {"content": "lone \ud800 surrogate", "id": "legacy-3"}),
        ]},
    }
    ed.set(t, latest, type="json", checkpoint=json.dumps(legacy).encode())

    # --- damaged rows: wrong types, truncation, bit flips ---------------------------
    def damage(t: str, errors, keep=n, **kw) -> None:
        clone(t, keep=keep, errors=errors, **kw)

    blob = ed.row(src, latest)[1]
    damage("damage:truncated", [("checkpoint", "invalid msgpack", latest)], keep=n - 2)
    ed.set("damage:truncated", latest, checkpoint=blob[: len(blob) // 2])
    damage("damage:bitflip-type", [("checkpoint", "invalid msgpack", latest)], keep=n - 2)
    ed.set("damage:bitflip-type", latest, checkpoint=b"\xc1" + blob[1:])
    at = blob.index(b"It's jane@example.com")
    damage("damage:bitflip-utf8", [("message", "invalid message payload", latest)], keep=n - 2)
    ed.set("damage:bitflip-utf8", latest, checkpoint=blob[:at] + b"\xff" + blob[at + 1:])
    damage("damage:ts-int", [("checkpoint", "ts is a int", latest)], keep=n - 1)
    ed.edit_latest("damage:ts-int", lambda cp: cp.__setitem__("ts", 12345))
    damage("damage:ts-garbage", [("checkpoint", "unreadable ts 'yesterday'", latest)], keep=n - 1)
    ed.edit_latest("damage:ts-garbage", lambda cp: cp.__setitem__("ts", "yesterday"))
    damage("damage:ts-huge", [("checkpoint", "unreadable ts 'yyyy", latest)], keep=n - 1)  # reasons stay short
    ed.edit_latest("damage:ts-huge", lambda cp: cp.__setitem__("ts", "y" * 100_000))
    damage("damage:type-huge", [("checkpoint", "unknown serialization type 'zzzz", latest)], keep=n - 2)
    ed.set("damage:type-huge", latest, type="z" * 100_000)
    damage("damage:checkpoint-is-list", [("checkpoint", "checkpoint is a list", latest)], keep=n - 2)
    ed.edit_latest("damage:checkpoint-is-list", lambda cp: [cp])
    damage("damage:values-not-map", [("checkpoint", "channel_values is not a mapping", latest)], keep=n - 2)
    ed.edit_latest("damage:values-not-map", lambda cp: cp.__setitem__("channel_values", [1, 2]))
    damage("damage:messages-not-list", [("messages", "messages channel is a dict", latest)], keep=n - 2)
    ed.edit_latest("damage:messages-not-list", lambda cp: cp["channel_values"].__setitem__("messages", {"a": 1}))
    for name, md, why in [
        ("array", b"[1, 2]", "not a JSON object"),
        ("nan", b'{"source": "loop", "step": NaN, "parents": {}}', "NaN"),
        ("infinity", b'{"source": "loop", "step": 7, "score": -Infinity}', "Infinity"),
        ("invalid", b'{"source": "loop", ', "metadata is not valid JSON"),
        ("utf8", b'{"source": "\xff"}', "not UTF-8"),
        ("int", 5, "metadata is a int"),
    ]:
        stage = "checkpoints" if name == "invalid" else "metadata"  # the DuckDB-side JSON gate reports by table
        damage(f"damage:metadata-{name}", [(stage, why, latest)])
        ed.set(f"damage:metadata-{name}", latest, metadata=md)
    last = n - 1  # an AIMessage
    for name, edit, why in [
        ("content-number", lambda f: f.__setitem__("content", 42), "content is a int"),
        ("content-map", lambda f: f.__setitem__("content", {"text": "hi"}), "content is a dict"),
        ("id-int", lambda f: f.__setitem__("id", 7), "id is a int"),
        ("type-int", lambda f: f.__setitem__("type", 3), "type is a int"),
        ("name-list", lambda f: f.__setitem__("name", ["bot"]), "name is a list"),
        ("tool-calls-str", lambda f: f.__setitem__("tool_calls", "call them all"), "tool_calls is a str"),
        ("usage-strings", lambda f: f.__setitem__("usage_metadata", {"input_tokens": "106", "output_tokens": "24", "total_tokens": "130"}),
         "usage_metadata.input_tokens is a str"),
        ("usage-list", lambda f: f.__setitem__("usage_metadata", [1, 2]), "usage_metadata is a list"),
        ("usage-huge", lambda f: f["usage_metadata"].__setitem__("output_tokens", 2**64 - 1), "output_tokens is out of the 64-bit range"),
        ("fields-not-map", lambda f: "just a string", "fields are not a mapping"),
    ]:
        damage(f"damage:{name}", [("message", why, latest)], keep=last)
        ed.edit_latest_message(f"damage:{name}", last, edit)

    damage("damage:no-type", [("message", "no type", latest)])
    append("damage:no-type", message("x.y", "Z", {"content": "who am I"}))
    damage("damage:payload-short", [("message", "not a \\[module, class, fields\\] array", latest)])
    append("damage:payload-short", ext(5, ["only-one"]))
    damage("damage:payload-garbage", [("message", "invalid message payload", latest)])
    append("damage:payload-garbage", RawExt(5, b"\xc1\xc1\xc1"))
    damage("damage:element-is-int", [("message", "holds a int", latest)])
    append("damage:element-is-int", 17)
    damage("damage:huge-declared-array", [("message", "invalid message payload", latest)])
    append("damage:huge-declared-array", RawExt(5, b"\xdd\xff\xff\xff\xff\xc0"))
    damage("damage:huge-declared-map", [("checkpoint", "invalid msgpack", latest)], keep=n - 2)
    ed.set("damage:huge-declared-map", latest, checkpoint=b"\xdf\xff\xff\xff\xff" + b"\xa1k\xc0")
    damage("damage:deep-arrays-checkpoint", [("checkpoint", "invalid msgpack", latest)], keep=n - 2)
    ed.set("damage:deep-arrays-checkpoint", latest, checkpoint=b"\x91" * 100_000 + b"\xc0")
    damage("damage:deep-arrays-message", [("message", "invalid message payload", latest)])
    append("damage:deep-arrays-message", RawExt(5, deep_array_message()))
    damage("damage:deep-ext-nesting", [("message", "nested too deeply", latest)])
    append("damage:deep-ext-nesting", RawExt(5, deep_ext_payload()))
    surrogate = human("lone XYZ surrogate", "sur-1")
    damage("damage:surrogate-in-msgpack", [("message", "invalid message payload", latest)])
    append("damage:surrogate-in-msgpack", RawExt(5, surrogate.data.replace(b"XYZ", "\ud800".encode("utf-8", "surrogatepass"))))
    # NUL is kept verbatim (DuckDB VARCHAR holds it): loads, no error.
    damage("damage:nul-in-text", [], keep=n)
    append("damage:nul-in-text", human("before\x00after", "nul-1"), human("a class name but no type field", "no-type-1", type=None))
    # A message without `type` but with a known class loads as that class (plain data).
    ed.edit_latest_message("damage:nul-in-text", n + 1, lambda f: f.pop("type"))

    # --- damaged key columns -----------------------------------------------------------
    roots = ed.root_ids(src)
    ed.clone_thread(src, "tmp")
    bad_id = b"hostile:\xff\xfe-thread"
    ed.con.execute("UPDATE checkpoints SET thread_id = CAST(? AS TEXT) WHERE thread_id = 'tmp'", [bad_id])
    ed.con.execute("UPDATE writes SET thread_id = CAST(? AS TEXT) WHERE thread_id = 'tmp'", [bad_id])
    shown = bad_id.decode("utf-8", "replace")
    cases[shown] = Case([("checkpoint", "thread_id is not valid UTF-8", cid) for cid in roots], keep=None)
    blob_id = b"hostile:blob-thread"
    ed.clone_thread(src, blob_id)
    cases[f"x'{blob_id.hex()}'"] = Case([("checkpoint", "thread_id is a bytes", cid) for cid in roots], keep=None)

    damage("damage:checkpoint-id-blob", [("checkpoint", "checkpoint_id is a bytes", f"x'{latest.encode().hex()}'")], keep=n - 2)
    ed.set("damage:checkpoint-id-blob", latest, checkpoint_id=latest.encode())
    damage("damage:checkpoint-ns-utf8", [("checkpoint", "checkpoint_ns is not valid UTF-8", latest)], keep=n - 2)
    ed.con.execute("UPDATE checkpoints SET checkpoint_ns = CAST(X'ff' AS TEXT) WHERE thread_id = ? AND checkpoint_id = ?",
                   ["damage:checkpoint-ns-utf8", latest])
    damage("damage:parent-blob", [("checkpoint", "parent_checkpoint_id is a bytes", latest)])
    ed.set("damage:parent-blob", latest, parent_checkpoint_id=b"\x00\x01")
    damage("damage:type-blob", [("checkpoint", "serialization type is a bytes", latest)], keep=n - 2)
    ed.set("damage:type-blob", latest, type=b"msgpack")
    damage("damage:checkpoint-is-text", [("checkpoint", "value is a str", latest)], keep=n - 2)
    ed.set("damage:checkpoint-is-text", latest, checkpoint="not a blob")
    return cases


@dataclass
class Hostile:
    path: Path
    folder: Path
    marker_dir: Path
    cases: dict[str, Case]
    source_thread: str
    folder_before: dict


@pytest.fixture(scope="module")
def hostile(sqlite_store, copy_store, tmp_path_factory) -> Hostile:
    work = tmp_path_factory.mktemp("hostile")
    markers = work / "markers"
    markers.mkdir()
    path = copy_store(sqlite_store.path, work / "store", "hostile.sqlite")
    src = sqlite_store.thread("simple_chat")
    ed = StoreEditor(path)
    try:
        cases = build_hostile_store(ed, src, markers)
    finally:
        ed.close()
    return Hostile(path, path.parent, markers, cases, src, tree_fingerprint(path.parent))


class _ImportRecorder(importlib.abc.MetaPathFinder):
    """Sees every import of a module not yet in sys.modules (and every failed attempt)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname, path, target=None):
        self.names.append(fullname)


@dataclass
class InProcess:
    db: Path
    calls: list
    imports: list[str]
    new_modules: set[str]
    env_imported: str | None


@pytest.fixture(scope="module")
def in_process(hostile, sqlite_store, tmp_path_factory) -> InProcess:
    out = tmp_path_factory.mktemp("hostile_db")
    # A clean load first, so that lazily imported modules are already imported.
    load_db(sqlite_store.path, out / "warm.duckdb", workers=1)
    calls: list = []

    def refuse(name):
        def f(*a, **k):
            calls.append((name, a, k))
            raise RuntimeError(f"{name} called during a load")
        return f

    def record(name, real):
        def f(*a, **k):
            calls.append((name, a, k))
            return real(*a, **k)
        return f

    real_import = builtins.__import__
    imported: list[str] = []

    def recording_import(name, *a, **k):
        imported.append(name)
        return real_import(name, *a, **k)

    finder = _ImportRecorder()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TL_CANARY_DIR", str(hostile.marker_dir))
        mp.delenv("TL_CANARY_IMPORTED", raising=False)
        for mod, names in [(os, ["system", "popen", "execv", "execve", "execvp", "spawnv", "posix_spawn"]),
                           (posix, ["system"]), (subprocess, ["Popen", "run", "call", "check_output"]),
                           (pickle, ["loads", "load"])]:
            for n in names:
                if hasattr(mod, n):
                    mp.setattr(mod, n, refuse(f"{mod.__name__}.{n}"))
        mp.setattr(builtins, "eval", record("builtins.eval", builtins.eval))
        mp.setattr(builtins, "exec", record("builtins.exec", builtins.exec))
        mp.setattr(builtins, "__import__", recording_import)
        mp.setattr(importlib, "import_module", record("importlib.import_module", importlib.import_module))
        before = set(sys.modules)
        sys.meta_path.insert(0, finder)
        try:
            load_db(hostile.path, out / "hostile.duckdb", workers=1)
        finally:
            sys.meta_path.remove(finder)
        new = set(sys.modules) - before
        env_imported = os.environ.get("TL_CANARY_IMPORTED")
    return InProcess(out / "hostile.duckdb", calls, [*imported, *finder.names], new, env_imported)


@pytest.fixture(scope="module")
def cli(hostile, tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile_cli")
    db = work / "cli.duckdb"
    (work / "spy").mkdir()
    (work / "spy" / "sitecustomize.py").write_text(_SPY)
    env = {**os.environ, "TL_CANARY_DIR": str(hostile.marker_dir), "TL_SPY_OUT": str(work / "spy.json"),
           "PYTHONPATH": os.pathsep.join([str(work / "spy"), str(ROOT)])}
    env.pop("TL_CANARY_IMPORTED", None)
    proc = subprocess.run([sys.executable, "-m", "loaders", str(hostile.path), "--db", str(db), "--quiet"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)
    return db, proc, json.loads((work / "spy.json").read_text())


# Loaded first thing in the CLI subprocess: records every import attempt (also
# failed ones), the modules loaded at exit, and refuses+records os.system & co.
_SPY = r"""
import atexit, json, os, posix, subprocess, sys
attempts, calls = [], []
class _Spy:
    def find_spec(self, name, path=None, target=None):
        attempts.append(name)
sys.meta_path.insert(0, _Spy())
def _refuse(name):
    def f(*a, **k):
        calls.append(name)
        raise RuntimeError(name + " called during a load")
    return f
for mod, names in ((os, ("system", "popen", "execv", "execve")), (posix, ("system",)), (subprocess, ("Popen",))):
    for n in names:
        setattr(mod, n, _refuse(mod.__name__ + "." + n))
@atexit.register
def _dump():
    with open(os.environ["TL_SPY_OUT"], "w") as fh:
        json.dump({"attempts": attempts, "modules": sorted(sys.modules), "calls": calls}, fh)
"""


def _errors_by_thread(db) -> dict[str, list[dict]]:
    out = defaultdict(list)
    for r in rows(db, "SELECT thread_id, checkpoint_ns, checkpoint_id, stage, reason FROM load_errors"):
        out[r["thread_id"]].append(r)
    return out


def _messages(db, thread: str) -> list[dict]:
    return rows(db, "SELECT * FROM messages WHERE thread_id = ? ORDER BY ordinal", [thread])


# --- nothing runs ------------------------------------------------------------------


def _hostile_text(value) -> bool:
    text = repr(value)
    return any(m in text for m in (*HOSTILE_MODULES, "fired-", "pickle-", "legacy-json", "/metadata"))


def test_nothing_named_in_a_payload_is_imported_or_called_in_process(hostile, in_process):
    assert not list(hostile.marker_dir.iterdir())
    assert CANARY_MODULE not in sys.modules and in_process.env_imported is None
    assert not [n for n in in_process.imports if n.split(".")[0] in {m.split(".")[0] for m in HOSTILE_MODULES}]
    refused = [c for c in in_process.calls if not c[0].startswith(("builtins.", "importlib."))]
    assert refused == []  # os.system, posix.system, subprocess.*, pickle.loads, os.exec*: never
    assert [c for c in in_process.calls if _hostile_text(c)] == []  # eval / exec / import_module: never with payload text
    # The loader imported nothing at all that a clean load had not imported already.
    assert in_process.new_modules == set()


def test_cli_load_fires_nothing_and_agrees_with_the_in_process_load(hostile, in_process, cli):
    db, proc, spy = cli
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("loaded ") and "row errors, see load_errors" in proc.stdout
    assert not list(hostile.marker_dir.iterdir())
    roots = {m.split(".")[0] for m in HOSTILE_MODULES}
    assert "loaders.decode" in spy["modules"]  # the spy saw the load
    assert not [n for n in spy["attempts"] + spy["modules"] if n.split(".")[0] in roots]
    assert spy["calls"] == []
    for sql in ("SELECT thread_id, checkpoint_ns, checkpoint_id, stage, reason FROM load_errors ORDER BY ALL",
                f"SELECT {MESSAGE_COLS}, tool_calls, additional_kwargs, response_metadata FROM messages ORDER BY thread_id, ordinal",
                "SELECT * FROM threads ORDER BY thread_id"):
        assert rows(db, sql) == rows(in_process.db, sql)


def test_the_source_folder_is_untouched_by_both_loads(hostile, in_process, cli):
    assert tree_fingerprint(hostile.folder) == hostile.folder_before


_PROOF = r"""
import json, os, sys, sqlite3, time, importlib.abc
from pathlib import Path
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from tests.loaders.hostile_util import EXT_CODES, TARGETS, CANARY_MODULE, GHOST_MODULE, hostile_ext, pack
mdir = Path(sys.argv[1])
tried = []
class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        tried.append(name)
sys.meta_path.insert(0, Spy())
serde = JsonPlusSerializer()   # the default: what SqliteSaver() uses
fired = []
for code in EXT_CODES:
    for target in TARGETS:
        for p in mdir.iterdir():
            p.unlink()
        sys.modules.pop(CANARY_MODULE, None)
        del tried[:]
        try:
            got = serde.loads_typed(("msgpack", pack([hostile_ext(code, target, mdir)])))
        except Exception:
            got = None
        for _ in range(200):  # a Popen'd `touch` runs in a child: give it time to
            if "<Popen" not in repr(got) or any(mdir.iterdir()):
                break
            time.sleep(0.02)
        if any(mdir.iterdir()) or (target == "ghost" and GHOST_MODULE.split(".")[0] in tried):
            fired.append([code, target])
# The crafted STORE is live too: LangGraph's own saver on a copy of it.
for p in mdir.iterdir():
    p.unlink()
from langgraph.checkpoint.sqlite import SqliteSaver
saver = SqliteSaver(sqlite3.connect(sys.argv[2], check_same_thread=False))
saver.get_tuple({"configurable": {"thread_id": "hostile:list:c1"}})
store_fired = sorted(p.name for p in mdir.iterdir())
import pickle
pickle.loads(Path(sys.argv[3]).read_bytes())
print(json.dumps({"fired": fired, "store": store_fired, "pickle": (mdir / "pickle-proof").exists()}))
"""


def test_the_crafted_payloads_are_live_under_langgraphs_default_decoder(hostile, copy_store, tmp_path):
    """Honesty check: the canaries the loader never fires DO fire under LangGraph's default decoder."""
    mdir = tmp_path / "markers"
    mdir.mkdir()
    store = copy_store(hostile.path, tmp_path / "copy")
    bomb = tmp_path / "bomb.pickle"
    bomb.write_bytes(pickle_bomb(mdir / "pickle-proof"))
    env = {**os.environ, "TL_CANARY_DIR": str(mdir), "PYTHONPATH": str(ROOT)}
    env.pop("LANGGRAPH_STRICT_MSGPACK", None)
    proc = subprocess.run([sys.executable, "-c", _PROOF, str(mdir), str(store), str(bomb)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    fired = {tuple(x) for x in out["fired"]}
    # Every constructor-style code (0, 1, 2, 4, 5, and 7 wrapping 1) runs what it names.
    for code in (0, 1, 2, 4, 5, 7):
        for target in ("os.system", "subprocess.Popen", "builtins.__import__", "canary", "ghost"):
            assert (code, target) in fired, (code, target)
    assert {(0, "builtins.eval"), (1, "builtins.eval"), (7, "builtins.eval")} <= fired
    # EXT 3 (method) and 6 (numpy) do not name callables that LangGraph would run.
    assert not {f for f in fired if f[0] in (3, 6)}
    assert out["store"] and out["pickle"]


# --- what is reported --------------------------------------------------------------


def test_every_damaged_row_is_reported_with_thread_checkpoint_and_reason(hostile, in_process):
    actual = _errors_by_thread(in_process.db)
    for thread, case in hostile.cases.items():
        got = list(actual.pop(thread, []))
        for stage, why, cid in case.errors:
            match = next((e for e in got if e["stage"] == stage and re.search(why, e["reason"])
                          and (cid is None or e["checkpoint_id"] == cid)), None)
            assert match is not None, f"{thread}: no {stage} error matching {why!r} at {cid}; got {got}"
            got.remove(match)
        assert got == [], f"{thread}: unexpected errors {got}"
    assert dict(actual) == {}, "errors for untouched threads"
    # One line per reason, no stack traces, no payload dumps.
    for r in rows(in_process.db, "SELECT reason FROM load_errors"):
        assert "\n" not in r["reason"] and len(r["reason"]) < 300


def test_untouched_threads_equal_the_oracle(hostile, in_process, oracle_rows, sqlite_store):
    got = rows(in_process.db, f"SELECT {MESSAGE_COLS} FROM messages WHERE thread_id IN (SELECT unnest(?)) ORDER BY thread_id, ordinal",
               [sorted(sqlite_store.manifest)])
    assert got == oracle_rows


def test_every_other_message_of_a_damaged_thread_loads(hostile, in_process, oracle_rows):
    source = [r for r in oracle_rows if r["thread_id"] == hostile.source_thread]
    loaded = {r["thread_id"] for r in rows(in_process.db, "SELECT thread_id FROM threads")}
    cols = ("ordinal", "role", "content", "message_id", "ts", "checkpoint_id")
    by_thread = defaultdict(list)
    for r in rows(in_process.db, "SELECT * FROM messages ORDER BY thread_id, ordinal"):
        by_thread[r["thread_id"]].append(r)
    for thread, case in hostile.cases.items():
        if case.keep is None:
            assert thread not in loaded
            continue
        assert thread in loaded, thread
        got = [tuple(r[c] for c in cols) for r in by_thread[thread][: case.keep]]
        assert got == [tuple(r[c] for c in cols) for r in source[: case.keep]], thread


def test_hostile_extension_values_load_as_plain_data(hostile, in_process):
    db = in_process.db
    for c in EXT_CODES:
        msgs = _messages(db, f"hostile:list:c{c}")
        loaded = [m for m in msgs if m["message_id"] in (f"canary-{c}", f"ghost-{c}")]
        if c in (2, 4, 5):
            assert [(m["role"], m["content"]) for m in loaded] == [("user", f"canary {c} says hi"), ("user", f"ghost {c} says hi")]
        else:
            assert loaded == []

        (nested,) = [m for m in _messages(db, f"hostile:nested:c{c}") if m["message_id"] == f"nested-{c}"]
        assert nested["content"].startswith(f"nested {c}")
        kwargs = json.loads(nested["additional_kwargs"])
        assert set(kwargs) == set(TARGETS)
        assert json.loads(nested["response_metadata"])["hostile"]
        if c in (0, 1, 2, 4, 5):
            # the constructor's argument, as data: e.g. the shell command is a string, not a call
            assert "touch" in json.dumps(kwargs["os.system"])

        (thread,) = rows(db, "SELECT interrupt_pending, interrupt_value FROM threads WHERE thread_id = ?", [f"hostile:write:c{c}"])
        assert thread["interrupt_pending"] is True
        ((value,),) = json.loads(thread["interrupt_value"])  # one write holding one Interrupt
        assert value["id"] == f"int-{c}" and set(value["value"]) == set(TARGETS)

    (cp,) = rows(db, "SELECT metadata FROM checkpoints WHERE thread_id = 'hostile:metadata' AND is_latest")
    assert json.loads(cp["metadata"])["writes"]["agent"]["id"] == ["os", "system"]  # an envelope stays an envelope


def test_legacy_json_envelopes_load_as_messages_and_lone_surrogates_become_fffd(in_process):
    got = [(m["ordinal"], m["role"], m["content"], m["message_id"]) for m in _messages(in_process.db, "hostile:legacy-json")]
    assert got == [
        (0, "user", "hello from legacy json", "legacy-1"),
        (1, "assistant", "legacy answer", "legacy-2"),
        (4, "user", "lone \ufffd surrogate", "legacy-3"),
    ]


def test_nul_is_kept_verbatim_and_a_typeless_message_loads_by_its_class(hostile, in_process):
    msgs = {m["message_id"]: m for m in _messages(in_process.db, "damage:nul-in-text")}
    assert msgs["nul-1"]["content"] == "before\x00after" and msgs["nul-1"]["content_chars"] == 12
    assert (msgs["no-type-1"]["role"], msgs["no-type-1"]["lc_type"]) == ("user", "human")


def test_a_50_mb_message_loads(sqlite_store, copy_store, tmp_path, oracle_rows):
    src = copy_store(sqlite_store.path, tmp_path / "big")
    text = ("0123456789abcdef" * 4096) * 763  # ~50 MB
    ed = StoreEditor(src)
    try:
        ed.clone_thread(sqlite_store.thread("simple_chat"), "big:message")
        ed.edit_latest("big:message", lambda cp: cp["channel_values"]["messages"].append(human(text, "big-1")))
    finally:
        ed.close()
    assert src.stat().st_size > 50_000_000
    db = tmp_path / "big.duckdb"
    summary = load_db(src, db, workers=1)
    assert summary.errors == 0
    (m,) = rows(db, "SELECT content_chars, md5(content) AS h FROM messages WHERE message_id = 'big-1'")
    assert m["content_chars"] == len(text)
    import hashlib
    assert m["h"] == hashlib.md5(text.encode()).hexdigest()
    got = rows(db, f"SELECT {MESSAGE_COLS} FROM messages WHERE thread_id <> 'big:message' ORDER BY thread_id, ordinal")
    assert got == oracle_rows
