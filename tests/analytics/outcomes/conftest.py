"""One store of scripted conversations in four languages, each written to fire one signal or to
look like one without firing (a decoy), loaded once for the module's tests."""

from __future__ import annotations

import datetime as dt
import shutil
import unicodedata

import pytest

import transcript_lens
from storegen import Reply
from tests.analytics.outcomes.stores import START, Resume, Script, Unanswered, User, write_store
from tests.oracle import expected_messages, open_sqlite

H = 3600.0
END = START + dt.timedelta(days=2)  # the store's latest checkpoint time (thread `z:end`)


def _lookup(order: str) -> Reply:
    return Reply("", [("lookup_order", {"order_id": order})])


def _refund() -> Reply:
    return Reply("", [("issue_refund", {"order_id": "B-2211", "amount": 89.0, "reason": "broken"})])


#: thread -> (script, {signal: the text each message it points at contains}, outcome)
CASES: dict[str, tuple[Script, dict[str, list[str]], str]] = {
    "en:abandoned": (
        Script([Reply("Which order do you mean?")], [User("Where is my order?", 0), Unanswered("It is A-1043, I need the invoice")]),
        {"abandoned": ["I need the invoice"]}, "abandoned"),
    "en:recent-unanswered": (  # decoy: idle 10 minutes at the store's end
        Script([Reply("Which order do you mean?")], [User("Where is my order?", 0), Unanswered("It is A-1043 please hurry", 60)],
               start=END - dt.timedelta(minutes=12)),
        {}, "unknown"),
    "de:closing": (
        Script([Reply("Ihre Bestellung A-1043 wurde versandt."), Reply("Gern geschehen!")],
               [User("Wo ist meine Bestellung A-1043?", 0), User("Danke, tschüss!")]),
        {"resolved_closing": ["tschüss"]}, "resolved"),
    "fr:closing-unanswered": (  # decoy for abandoned: a closing needs no reply
        Script([Reply("Votre commande est en route.")], [User("Où est ma commande A-1043 ?", 0), Unanswered("Merci, au revoir")]),
        {"resolved_closing": ["au revoir"]}, "resolved"),
    "en:thanks-but": (  # decoy for closing: thanks, but a question
        Script([Reply("It shipped yesterday.")], [User("Where is my order A-1043?", 0), Unanswered("Thanks, but when will it arrive?")]),
        {"abandoned": ["when will it arrive"]}, "abandoned"),
    "es:gave-up": (
        Script([Reply("Lo siento, no pude encontrar su pedido en el sistema.")], [User("¿Dónde está mi pedido A-7777?", 0)]),
        {"dropped_after_failure": ["no pude encontrar"]}, "failed"),
    "en:cascade": (
        Script([_lookup("X-1"), _lookup("X-2")], [User("Find my orders X-1 and X-2", 0, ends=True)]),
        {"tool_error_cascade": ["X-1 not found", "X-2 not found"], "dropped_after_failure": ["X-2 not found"]}, "failed"),
    "en:error-then-reply": (  # failed by the outcome rule alone: the last tool result failed, no signal fired
        Script([_lookup("X-9"), Reply("Here is the tracking page for your orders.")], [User("Where is my order X-9?", 0)]),
        {}, "failed"),
    "en:recovered": (  # decoy: one tool error, then an answer
        Script([_lookup("X-1"), _lookup("A-1043"), Reply("Found it: A-1043 shipped with UPS and arrives Thursday.")],
               [User("Find my order X-1, or maybe A-1043", 0)]),
        {}, "resolved"),
    "en:loop": (
        Script([_lookup("A-1043"), _lookup("A-1043"), _lookup("A-1043"), Reply("Your order shipped.")],
               [User("Where is A-1043?", 0)]),
        {"agent_loop": ["", "", ""]}, "resolved"),
    "en:twice": (  # decoy: the same call twice is not a loop
        Script([_lookup("A-1043"), _lookup("A-1043"), Reply("Your order shipped.")], [User("Where is A-1043?", 0)]),
        {}, "resolved"),
    "en:paging": (  # decoy: one tool, other arguments each time
        Script([Reply("", [("search_docs", {"query": q})]) for q in ("refund policy", "refund page 2", "refund page 3")]
               + [Reply("Refunds take 3 to 5 business days once approved.")], [User("How long do refunds take?", 0)]),
        {}, "resolved"),
    "de:human": (
        Script([Reply("Ich prüfe das für Sie."), Reply("Ich verbinde Sie weiter.")],
               [User("Mein Paket ist verspätet", 0), User("Ich möchte mit einem Menschen sprechen")]),
        {"user_frustration": ["Menschen"]}, "resolved"),
    "fr:wrong-nfd": (
        Script([Reply("Redémarrez le routeur."), Reply("Essayez de le réinitialiser.")],
               [User("Mon internet est coupé", 0), User(unicodedata.normalize("NFD", "ÇA NE MARCHE PAS"))]),
        {"user_frustration": ["MARCHE"]}, "resolved"),
    "en:rephrase": (
        Script([Reply("Let me look into it."), Reply("Could you share the order number, please?")],
               [User("Where is my order A-1043?", 0), User("where is my order A-1043??")]),
        {"user_frustration": ["where is my order A-1043??"]}, "resolved"),
    "en:negated": (  # decoys: a negated request for a human, a quoted complaint
        Script([Reply("Sure, resetting now."), Reply("The status page shows everything is up.")],
               [User("No need to talk to a person, just reset my password", 0),
                User('My colleague wrote "useless" on the status page, is it down?')]),
        {}, "resolved"),
    "es:repetition": (
        Script([Reply("Estoy revisando el estado de su pedido ahora mismo."),
                Reply("Estoy revisando el estado de su pedido ahora mismo, un momento.")],
               [User("¿Dónde está mi pedido?", 0), User("¿Y cuándo llega?")]),
        {"repetition": ["un momento"]}, "resolved"),
    "en:short-replies": (  # decoy: short replies repeated are not compared
        Script([Reply("Yes, it is done."), Reply("Yes, it is done."), Reply("Yes, it is done.")], [User("Note A", 0), User("Note B"), User("Note C")]),
        {}, "resolved"),
    "en:hitl-slow": (
        Script([_refund(), Reply("The refund of $89.00 is approved.")],
               [User("Refund B-2211 please, it arrived broken", 0), Resume({"approved": True}, 5 * H)]),
        {"slow_hitl": [""]}, "resolved"),
    "en:hitl-fast": (  # decoy: answered within the service level
        Script([_refund(), Reply("The refund of $89.00 is approved.")],
               [User("Refund B-2211 please, it arrived broken", 0), Resume({"approved": True}, 25 * 60)]),
        {}, "resolved"),
    "de:hitl-waiting": (
        Script([_refund()], [User("Bitte erstatten Sie B-2211, es kam kaputt an", 0)]),
        {"slow_hitl": [""]}, "waiting"),
    "de:hitl-waiting-recent": (  # decoy: waiting, but for less than the service level
        Script([_refund()], [User("Bitte erstatten Sie B-2211, es kam kaputt an", 0)], start=END - dt.timedelta(hours=1)),
        {}, "waiting"),
    "z:end": (Script([Reply("Hello! How can I help?")], [User("Hello there", 0)], start=END), {}, "resolved"),
}


def long_script(turns: int, pause_before: int) -> Script:
    """`turns` user turns of two conversational messages each, with a three-hour pause (a restart)
    before turn `pause_before`."""
    steps = [User(f"ask{i} alpha{i} bravo{i} charlie{i}", 3 * H if i == pause_before else 30) for i in range(turns)]
    return Script([Reply(f"reply{i} delta{i} echo{i} foxtrot{i}") for i in range(turns)], steps)


# Restarted after 52 conversational messages: the rebuilt window (50) starts at the second question.
CASES["en:lost-context"] = (long_script(28, 26), {"lost_context": ["ask1 "]}, "resolved")
# Decoy: restarted after 26 messages (all rebuilt), the thread passes 50 later without a restart.
CASES["en:restart-then-long"] = (long_script(28, 13), {}, "resolved")


@pytest.fixture(scope="package")
def signal_store(tmp_path_factory):
    """(source path, database path, oracle rows by thread) of the `CASES` store."""
    folder = tmp_path_factory.mktemp("outcomes")
    src, db = folder / "src.sqlite", folder / "lens.duckdb"
    write_store(src, {t: script for t, (script, _, _) in CASES.items()})
    transcript_lens.load(src, db, workers=1)
    copy = folder / "oracle.sqlite"
    shutil.copy(src, copy)
    rows: dict[str, list[dict]] = {}
    for row in expected_messages(open_sqlite(copy)):
        rows.setdefault(row["thread_id"], []).append(row)
    return src, db, rows
