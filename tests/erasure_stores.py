"""A store for erasure tests: real chat graphs through a real SqliteSaver, one thread of which
says something no other thread says (the text an erasure must leave nowhere)."""

from __future__ import annotations

from pathlib import Path

from storegen import Reply, ScriptedChatModel, build_chat_graph, build_sqlite_store, clock_scope, open_sqlite_saver
from storegen.scenarios import say, thread_config

THREADS = {
    "acme:web:sess-001": "simple_chat",
    "acme:web:sess-002": "simple_chat",
    "globex:mobile:sess-010": "simple_chat",
    "initech:support:sess-020": "simple_chat",
}
GONE = "acme:web:sess-001"
#: Said in GONE only: what a scan for the erased text looks for.
SECRET_ASK = "My locker code is QUINCE-48213-PLOVER and my backup mail is zed.okonkwo@larkspur-mail.org"
SECRET_REPLY = "Noted the locker code QUINCE-48213-PLOVER; nobody else will ever see it, Mr Okonkwo."


def build_erasure_store(path: str | Path) -> Path:
    """Write the store: the four threads' chats, then one more turn of GONE with the secret."""
    build_sqlite_store(path, threads=THREADS)
    saver = open_sqlite_saver(path)
    try:
        model = ScriptedChatModel(base_latency=0.0, seconds_per_char=0.0, replies=[Reply(SECRET_REPLY)])
        with clock_scope() as clock:
            say(build_chat_graph(model, saver), thread_config(GONE), SECRET_ASK, clock)
    finally:
        saver.conn.close()
    return Path(path)


def files_holding(root: Path, needles: tuple[str, ...] = ("QUINCE-48213-PLOVER", "zed.okonkwo@larkspur")) -> list[Path]:
    """Every file under `root` whose bytes hold one of the needles (a plain byte scan, for the tests)."""
    raw = [n.encode() for n in needles]
    return sorted(p for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in raw))
