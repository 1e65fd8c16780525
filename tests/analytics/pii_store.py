"""A store full of planted personal data, written by a real graph through a real SqliteSaver.

Two tenants (acme, globex). Personal values stand in user messages, assistant
replies, tool-call arguments, tool results and a pending interrupt's value, next to
decoys (order numbers, a digit run failing Luhn, a version string, ISO times) that
masking must leave alone.

    path = build_pii_store(tmp_path / "pii.sqlite")
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from langchain_core.tools import tool
from langgraph.types import Command

from storegen import Clock, deterministic
from storegen.build import open_sqlite_saver, remove_store
from storegen.clock import UTC
from storegen.graphs import build_agent_graph
from storegen.models import Reply, ScriptedChatModel
from storegen.scenarios import say, thread_config

# Planted per tenant: every one must be gone from any masked output.
PLANTED = {
    "acme": ["dana.scully@fbi.example.org", "(415) 555-2671", "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00",
             "192.168.10.77", "123-45-6789", "+44 20 7946 0958"],
    "globex": ["fox.mulder@globex.example.com", "+1 212-555-0199", "5500 0055 5555 5559", "GB82WEST12345698765432",
               "2001:db8::42", "536-22-8726", "020 7946 0123"],
}
# Must survive masking, as written.
DECOYS = ["A-1043", "1234 5678 9012 3456", "v2.4.1.9", "2025-03-05T19:45:00Z"]


@tool
def update_contact(email: str, phone: str) -> str:
    """Update the customer's contact details."""
    return f"Contact updated: email={email}, phone={phone}."


@tool
def charge_card(card: str, iban: str) -> str:
    """Charge a card; refund to an IBAN."""
    return f"Charged card {card}; refunds go to {iban}."


def _thread(saver, tenant: str, n: int, values: list[str], start: dt.datetime) -> str:
    email, phone, card, iban, ip, ssn, phone2 = values
    model = ScriptedChatModel(replies=[
        Reply("", [("update_contact", {"email": email, "phone": phone})]),
        Reply(f"Done: I saved {email} and {phone}. Your order A-1043 ships on 2025-03-05T19:45:00Z."),
        Reply("", [("charge_card", {"card": card, "iban": iban})]),
        Reply(f"Charged {card}. Login seen from {ip}; client v2.4.1.9."),
    ])
    graph = build_agent_graph(model, [update_contact, charge_card], saver, approve_tools=("charge_card",))
    thread_id = f"{tenant}:web:s{n}"
    with deterministic(thread_id), Clock(start) as clock:
        cfg = thread_config(thread_id)
        say(graph, cfg, f"Hi, I'm reachable at {email} or {phone}; my SSN is {ssn}.", clock, think=0)
        say(graph, cfg, f"Please charge {card} (not 1234 5678 9012 3456) and refund to {iban}. Call {phone2}.", clock)
        if n == 1:  # the other thread waits on the approval: its interrupt value holds the card and IBAN
            clock.advance(30)
            graph.invoke(Command(resume={"approved": True}), cfg, durability="sync")
    return thread_id


def build_pii_store(path: str | Path) -> Path:
    """Two threads per tenant; returns `path`."""
    remove_store(path)
    saver = open_sqlite_saver(path)
    start = dt.datetime(2025, 3, 5, 9, 0, tzinfo=UTC)
    try:
        for i, (tenant, values) in enumerate(PLANTED.items()):
            for n in (1, 2):
                _thread(saver, tenant, n, values, start + dt.timedelta(hours=3 * i + n))
    finally:
        saver.conn.close()
    return Path(path)


def load_pii_db(folder: Path) -> Path:
    """`build_pii_store` in `folder`, loaded by the real loader into `folder/lens.duckdb`; its path."""
    import transcript_lens

    db = folder / "lens.duckdb"
    transcript_lens.load(build_pii_store(folder / "pii.sqlite"), db)
    return db


# One thread with a personal value in every field a command or page can show.
EMAIL = "alice.pii@acme-mail.com"
GLUED = "carol@acme-mail.com-h0"  # in the thread id: the session id is an email with a suffix
PHONE = "+44 7700 900456"
CARD = "4111 1111 1111 1111"
IBAN = "de89-3704-0044-0532-0130-00"
NAME = "Carol Danvers"
THREAD = f"acme:web:{GLUED}"
SECRETS = [EMAIL, GLUED, "carol@acme-mail.com", PHONE, "7700 900456", "7700900456", CARD, "4111111111111111", IBAN,
           "DE89370400440532013000", NAME]


def build_pii_in_every_field(path: str | Path) -> Path:
    """One thread whose id, metadata, messages and tool arguments hold personal values; returns `path`."""
    remove_store(path)
    saver = open_sqlite_saver(path)
    model = ScriptedChatModel(replies=[
        Reply("", [("update_contact", {"email": EMAIL, "phone": PHONE})]),
        Reply(f"Saved {EMAIL} for {NAME}."),
        Reply("", [("charge_card", {"card": CARD, "iban": IBAN})]),
        Reply(f"Charged {CARD}; refunds to {IBAN}."),
    ])
    graph = build_agent_graph(model, [update_contact, charge_card], saver)
    try:
        with deterministic(THREAD), Clock(dt.datetime(2025, 3, 5, 9, 0, tzinfo=UTC)) as clock:
            cfg = thread_config(THREAD, user_email=EMAIL, caller=PHONE)  # copied into checkpoint metadata
            say(graph, cfg, f"I am {NAME}: mail me at {EMAIL} or call {PHONE}, cc {GLUED}, thanks. Order A-1043.", clock, think=0)
            say(graph, cfg, f"Please charge {CARD} and refund to {IBAN}.", clock)
    finally:
        saver.conn.close()
    return Path(path)
