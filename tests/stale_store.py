"""A SQLite store whose threads are stale when it is loaded without its key (or with a wrong one).

Real graphs (storegen's chat graph and scripted model) through real `SqliteSaver`s on one
file: one saver plain, one whose serde is LangGraph's own `EncryptedSerializer`
(`from_pycryptodome_aes`, as tests/loaders/test_encrypted.py writes them). Threads:

- `acme:web:mixed`: two turns written plain, then one encrypted (encryption switched on
  mid-thread): without the key the transcript is the last plain checkpoint's;
- `acme:web:secret`: every checkpoint encrypted: without the key no root checkpoint decodes;
- `globex:app:plain`: plain only, never stale.

What is expected is read back through LangGraph's own `get_tuple` (tests/oracle.py's way).

>>> store = write_stale_store(tmp_path / "stale.sqlite")  # doctest: +SKIP
>>> store.latest["acme:web:mixed"] > store.last_plain["acme:web:mixed"]  # doctest: +SKIP
True
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from storegen import DEFAULT_START, Clock, Reply, ScriptedChatModel, build_chat_graph, clock_scope, say, thread_config
from tests import oracle

KEY = "k3y-0f-16-bytes!"  # 16 characters: LANGGRAPH_AES_KEY's UTF-8 bytes are the key
WRONG = "another-key-16by"
MIXED, SECRET, PLAIN = "acme:web:mixed", "acme:web:secret", "globex:app:plain"


@dataclass(frozen=True)
class StaleStore:
    path: Path
    #: thread → its greatest root checkpoint id (what `get_tuple` reads)
    latest: dict[str, str]
    #: thread → its greatest root checkpoint written plain (None: none was)
    last_plain: dict[str, str | None]

    def contents(self, thread_id: str, checkpoint_id: str | None, key: str = KEY) -> list[str]:
        """The message texts of a root checkpoint, read by LangGraph itself (with the key)."""
        if checkpoint_id is None:
            return []
        saver = _saver(sqlite3.connect(self.path, check_same_thread=False), encrypting(key))
        try:
            tup = saver.get_tuple(thread_config(thread_id, checkpoint_id))
        finally:
            saver.conn.close()
        return [oracle.content_text(m.content) for m in tup.checkpoint["channel_values"]["messages"]]


def encrypting(key: str = KEY) -> EncryptedSerializer:
    return EncryptedSerializer.from_pycryptodome_aes(serde=oracle.strict_serde(), key=key.encode())


def _saver(conn: sqlite3.Connection, serde) -> SqliteSaver:
    saver = SqliteSaver(conn, serde=serde)
    saver.setup()
    return saver


def _turns(saver: SqliteSaver, thread_id: str, texts: list[str], clock: Clock) -> str:
    model = ScriptedChatModel(base_latency=0.0, seconds_per_char=0.0,
                              replies=[Reply(f"Answer to: {t}") for t in texts])
    graph = build_chat_graph(model, saver)
    for text in texts:
        say(graph, thread_config(thread_id), text, clock, think=60)
    return saver.get_tuple(thread_config(thread_id)).config["configurable"]["checkpoint_id"]


def write_stale_threads(plain, secret) -> tuple[dict[str, str], dict[str, str | None]]:
    """The three threads through two savers of one store (any kind): `plain` serializes as is,
    `secret` through `encrypting()`; (latest, last_plain) as `StaleStore` holds them."""
    with clock_scope(DEFAULT_START) as clock:
        last_plain = {
            MIXED: _turns(plain, MIXED, ["Where is my order A-1043?", "It was due on Monday."], clock),
            SECRET: None,
            PLAIN: _turns(plain, PLAIN, ["How do I export a report?"], clock),
        }
        latest = {
            MIXED: _turns(secret, MIXED, ["Please refund it."], clock),
            SECRET: _turns(secret, SECRET, ["My card number changed.", "Update it please."], clock),
            PLAIN: last_plain[PLAIN],
        }
    return latest, last_plain


def write_stale_store(path: str | Path) -> StaleStore:
    path = Path(path)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        latest, last_plain = write_stale_threads(_saver(conn, oracle.strict_serde()), _saver(conn, encrypting()))
    finally:
        conn.close()
    return StaleStore(path, latest, last_plain)


def load_without_key(store: StaleStore, db: Path) -> Path:
    """`store` loaded into `db` with no AES key in the environment: its encrypted threads are stale."""
    import os

    import transcript_lens

    saved = os.environ.pop("LANGGRAPH_AES_KEY", None)
    try:
        transcript_lens.load(str(store.path), db, workers=1)
    finally:
        if saved is not None:
            os.environ["LANGGRAPH_AES_KEY"] = saved
    return db
