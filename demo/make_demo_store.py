"""Regenerate ``demo/demo.sqlite``: a small, realistic SqliteSaver store.

Run from the repo root:

    .venv/bin/python demo/make_demo_store.py [--out PATH]

Everything is written by real LangGraph graphs through a real ``SqliteSaver``
(scripted chat models only), under a frozen, manually advanced clock over two
weeks of simulated time (2025-03-03 .. 2025-03-16), with seeded ids — running
it twice gives the same bytes. At the end the WAL is folded in and the file is
switched to ``journal_mode=DELETE`` so the committed file is self-contained.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

import storegen.scenarios as scenarios  # noqa: E402
from storegen import (  # noqa: E402
    CLAUDE,
    CODING_TOOLS,
    GPT,
    HELPDESK_TOOLS,
    SUPPORT_TOOLS,
    UTC,
    Clock,
    Reply,
    ScriptedChatModel,
    build_agent_graph,
    build_chat_graph,
    deterministic,
    open_sqlite_saver,
    remove_store,
    say,
    thread_config,
)

DEMO_PATH = ROOT / "demo" / "demo.sqlite"
SEED = "demo-v1"
MONDAY = dt.datetime(2025, 3, 3, tzinfo=UTC)
TOOLS = {"support": SUPPORT_TOOLS, "coding": CODING_TOOLS, "helpdesk": HELPDESK_TOOLS}


def at(day: int, hh: int, mm: int = 0) -> dt.datetime:
    """Simulated start time: ``day`` days after Monday 2025-03-03, UTC."""
    return MONDAY + dt.timedelta(days=day, hours=hh, minutes=mm)


def R(content: str, *calls: tuple[str, dict[str, Any]], model: str | None = None) -> Reply:
    return Reply(content, calls, model=model)


def call(name: str, **args: Any) -> tuple[str, dict[str, Any]]:
    return (name, args)


@dataclass
class Dialogue:
    """A plain tool-using conversation: per turn, the user's text and the model's replies."""

    thread_id: str
    start: dt.datetime
    kind: str  # support | coding | helpdesk
    turns: list[tuple[str, list[Reply]]]
    gaps: list[float] = field(default_factory=list)  # user think time (s) before turns 2..n
    model: str = GPT


# --- plain conversations ----------------------------------------------------------------------

DIALOGUES: list[Dialogue] = [
    Dialogue("acme:web:sess-1001", at(0, 9, 12), "support", [
        ("Hi, my cat knocked the Acme SmartLamp off the shelf and now it only blinks purple. Help?", [
            R("Oh no, poor lamp! Purple blinking means it lost its Wi-Fi pairing after the fall. Hold the power button "
              "for 10 seconds until it flashes white, then re-add it in the Acme Home app."),
        ]),
        ("It flashed white and now it works again!", [
            R("Great news! If it starts blinking purple again, the tilt sensor may be damaged — it's covered by the "
              "2-year warranty, cats included."),
        ]),
    ], gaps=[240]),
    Dialogue("acme:web:sess-1002", at(0, 10, 5), "support", [
        ("Where is my order A-1043? It was supposed to arrive yesterday.", [
            R("", call("lookup_order", order_id="A-1043")),
            R("", call("track_shipment", tracking="1Z999AA10123456784")),
            R("Order A-1043 shipped with UPS and left Louisville, KY. The carrier now estimates delivery on Thursday "
              "by 8pm — sorry for the delay."),
        ]),
        ("ok thanks", [R("You're welcome! I'll be here if it doesn't show up by Thursday evening.")]),
    ], gaps=[55]),
    Dialogue("acme:web:sess-1003", at(0, 14, 40), "support", [
        ("I was charged twice for order D-4120.", [
            R("", call("lookup_order", order_id="D-4120")),
            R("I see one order D-4120 for $249.00. The second charge is most likely a card pre-authorisation that your "
              "bank releases within 3 business days. If it's still there on Friday, send me a screenshot of the statement."),
        ]),
    ]),
    Dialogue("acme:web:sess-1004", at(1, 8, 55), "support", [
        ("Can I change the delivery address for C-3307? I'm moving next week.", [
            R("", call("lookup_order", order_id="C-3307")),
            R("Yes — C-3307 is still processing, so the address can be changed. Open the order page, click "
              "“Edit shipping address”, and save before it ships (usually within 24 hours)."),
        ]),
        ("Done, it accepted the new address.", [R("Perfect, the new address is on the order. Good luck with the move!")]),
    ], gaps=[310]),
    Dialogue("acme:web:sess-1005", at(1, 16, 20), "support", [
        ("Order A-9989 is a week late. This is ridiculous.", [
            R("", call("lookup_order", order_id="A-9989"), call("track_shipment", tracking="JD014600006281230")),
            R("I'm sorry — A-9989 is stuck in customs at the DHL hub in Leipzig and is 6 days late. I can refund the "
              "shipping or the full order; which would you prefer?"),
        ]),
        ("Full refund please, I bought it elsewhere.", [
            R("", call("issue_refund", order_id="A-9989", amount=42.5, reason="delivery 6 days late")),
            R("Done: $42.50 is refunded to your card (3–5 business days). If the parcel still arrives, just refuse "
              "it and it will come back to us."),
        ]),
    ], gaps=[95]),
    Dialogue("acme:web:sess-1006", at(3, 11, 0), "support", [
        ("Do you ship to Norway?", [
            R("Yes, we ship to Norway with DHL Express (2–4 business days). Import VAT of 25% is collected on "
              "delivery for orders over NOK 3,000."),
        ]),
    ]),
    Dialogue("acme:web:sess-1007", at(4, 13, 30), "support", [
        ("What's the status of order Z-1234?", [
            R("", call("lookup_order", order_id="Z-1234")),
            R("I can't find an order Z-1234. Acme order numbers start with A–E followed by four digits — could you "
              "check your confirmation email?"),
        ]),
        ("Sorry, it's E-5581.", [
            R("", call("lookup_order", order_id="E-5581")),
            R("E-5581 was returned to us and the $35.99 refund was issued on the day the return arrived. It can take "
              "up to 5 business days to appear on your statement."),
        ]),
    ], gaps=[130]),
    Dialogue("acme:mobile:sess-3001", at(2, 19, 45), "support", [
        ("the app crashes when i open my orders tab", [
            R("Sorry about that! Version 4.12.0 of the Android app has a crash on the Orders tab that version 4.12.1 "
              "fixes. Please update from the Play Store and try again."),
        ]),
        ("updated, works now", [R("Great, thanks for letting me know!")]),
    ], gaps=[420], model=CLAUDE),
    Dialogue("acme:mobile:sess-3002", at(8, 7, 50), "support", [
        ("Is order B-2211 delivered? Tracking says delivered but I have nothing.", [
            R("", call("lookup_order", order_id="B-2211")),
            R("USPS marked B-2211 as delivered on Monday. Please check with neighbours and your building's mailroom; "
              "if it hasn't turned up in 48 hours, reply here and I'll open a carrier claim.", model=CLAUDE),
        ]),
    ], model=CLAUDE),
    Dialogue("umbrella:eu:sess-7001", at(5, 9, 5), "support", [
        ("Hello, I need the invoice for order D-4120 with our VAT number DE811234567.", [
            R("", call("lookup_order", order_id="D-4120")),
            R("I've requested a corrected invoice for D-4120 with VAT number DE811234567. It will be emailed to the "
              "account address within one business day."),
        ]),
    ]),
    Dialogue("umbrella:eu:sess-7002", at(9, 15, 10), "support", [
        ("Do your products have CE marking?", [
            R("Yes. All Acme devices sold in the EU carry CE marking; the declarations of conformity are on each "
              "product page under “Downloads”.", model=CLAUDE),
        ]),
        ("And RoHS?", [R("Yes, all of them are RoHS 3 (EU 2015/863) compliant as well.", model=CLAUDE)]),
    ], gaps=[75], model=CLAUDE),
    Dialogue("umbrella:eu:sess-7003", at(12, 10, 30), "support", [
        ("Where's my order C-3307? You said it would ship yesterday.", [
            R("", call("lookup_order", order_id="C-3307")),
            R("C-3307 is still processing — one item is back-ordered until Wednesday. I've flagged the order so it "
              "ships the same day the item arrives."),
        ]),
        ("Can you split it and send what you have?", [
            R("Done — the in-stock items will ship today and the back-ordered one follows on Wednesday at no extra cost."),
        ]),
    ], gaps=[200]),
    Dialogue("globex:api:sess-2101", at(0, 11, 30), "coding", [
        ("How do I paginate through /v2/events? I only get 100 results.", [
            R("", call("search_docs", query="pagination of list endpoints")),
            R("List endpoints are cursor-paginated. Pass `cursor=` from the previous response's `next_cursor` and "
              "stop when it is null:\n\n```python\ncursor = None\nwhile True:\n    page = client.get('/v2/events', "
              "params={'cursor': cursor})\n    yield from page['data']\n    cursor = page['next_cursor']\n    if "
              "cursor is None:\n        break\n```", model=CLAUDE),
        ]),
    ], model=CLAUDE),
    Dialogue("globex:api:sess-2102", at(1, 10, 15), "coding", [
        ("We keep getting HTTP 429 from your API during nightly syncs.", [
            R("", call("search_docs", query="rate limit 429")),
            R("429 means you hit the rate limit. Read the `Retry-After` header and back off exponentially (e.g. "
              "1s, 2s, 4s… capped at 60s). Spreading the nightly sync over 10 minutes usually removes the 429s entirely.",
              model=CLAUDE),
        ]),
        ("Is there a higher limit on the enterprise plan?", [
            R("Yes: 600 requests/minute instead of 120. Your account manager can enable it.", model=CLAUDE),
        ]),
    ], gaps=[160], model=CLAUDE),
    Dialogue("globex:api:sess-2103", at(3, 15, 0), "coding", [
        ("Our webhook signature check fails for every event. We use the JSON body to compute the HMAC.", [
            R("", call("search_docs", query="webhook signature")),
            R("That's the bug: the HMAC-SHA256 must be computed over the *raw* request body bytes, before JSON "
              "parsing — re-serialising changes whitespace and key order. In Flask use `request.get_data()`.",
              model=CLAUDE),
        ]),
        ("That fixed it, thanks!!", [R("Glad it works now!", model=CLAUDE)]),
    ], gaps=[600], model=CLAUDE),
    Dialogue("globex:api:sess-2104", at(6, 9, 40), "coding", [
        ("Can you run the tests in tests/unit and tell me what fails?", [
            R("", call("run_tests", path="tests/unit")),
            R("48 passed, 1 failed: `test_parse_dates` expects 2025-03-01 but gets 2025-02-28 — a local-time vs UTC "
              "conversion issue. Convert with `.astimezone(timezone.utc)` before calling `.date()`.", model=CLAUDE),
        ]),
        ("And the integration tests?", [
            R("", call("run_tests", path="tests/integration")),
            R("The integration suite didn't start: the `pg_dsn` fixture is missing. Set `PG_DSN` or add the fixture "
              "to `tests/integration/conftest.py`.", model=CLAUDE),
        ]),
    ], gaps=[90], model=CLAUDE),
    Dialogue("globex::sess-2201", at(7, 17, 5), "coding", [
        ("Which timezone does the API use for created_at?", [
            R("", call("search_docs", query="timezone of dates")),
            R("All timestamps are ISO 8601 in UTC, e.g. `2025-03-10T17:05:00Z`. Parse them with "
              "`datetime.fromisoformat()` (Python 3.11+ accepts the trailing Z)."),
        ]),
    ]),
    Dialogue("globex::sess-2202", at(10, 8, 20), "coding", [
        ("How do I retry a node that calls a flaky service?", [
            R("", call("search_docs", query="retry policy for nodes")),
            R("Give the node a retry policy: `builder.add_node('fetch', fetch, retry_policy=RetryPolicy(max_attempts=3))`."
              " It retries on exceptions with exponential backoff and jitter."),
        ]),
        ("Can I retry only on TimeoutError?", [
            R("Yes: `RetryPolicy(retry_on=TimeoutError)` (a class, a tuple of classes or a predicate function)."),
        ]),
    ], gaps=[140]),
    Dialogue("initech:helpdesk:sess-5001", at(0, 8, 35), "helpdesk", [
        ("VPN keeps disconnecting every few minutes since this morning", [
            R("", call("check_service_status", service="vpn")),
            R("There is a known incident: the eu-2 VPN gateway is overloaded and failing over. Until it's fixed, "
              "switch GlobalProtect to the eu-1 gateway (Settings → Gateway → eu-1)."),
        ]),
        ("eu-1 works, thanks", [R("Great. I'll post in #it-status once eu-2 is healthy again.")]),
    ], gaps=[180]),
    Dialogue("initech:helpdesk:sess-5002", at(2, 13, 10), "helpdesk", [
        ("Outlook says my mailbox is full", [
            R("", call("check_service_status", service="email")),
            R("Email is operating normally, so it's your mailbox quota (50 GB). Archive old mail with "
              "File → Tools → Clean Up Old Items, or empty Deleted Items — that usually frees several GB."),
        ]),
    ]),
    Dialogue("initech:helpdesk:sess-5003", at(4, 10, 45), "helpdesk", [
        ("Is the badge reader system down?", [
            R("", call("check_service_status", service="badges")),
            R("I can't see the badge system in my monitoring. I've opened a ticket for the facilities team.",
              call("create_ticket", summary="Badge readers possibly down (reported by user)", priority="P2")),
            R("Ticket created — facilities will call you within 30 minutes."),
        ]),
    ]),
    Dialogue("initech:helpdesk:sess-5004", at(11, 9, 0), "helpdesk", [
        ("New laptop, how do I get access to the shared drive?", [
            R("Request the “Finance Share – Read” group in the access portal (portal.initech.local → Access). "
              "Your manager approves it, and access appears within an hour after the next login."),
        ]),
        ("my manager is on vacation", [
            R("Then the approval falls back to the deputy listed in the org chart. I've opened a ticket so the team can "
              "follow up.", call("create_ticket", summary="Shared drive access, manager on vacation", priority="P4")),
            R("Ticket created; the service desk will chase the deputy approval for you."),
        ]),
    ], gaps=[260]),
]


# --- conversations that went wrong: each shows an outcome signal (docs/outcomes.md) ---------------

WENT_WRONG: list[Dialogue] = [
    # agent loop (one tool, the same arguments, 3 calls in one turn), then the user asks for a person
    Dialogue("acme:web:sess-1010", at(6, 15, 0), "support", [
        ("Where is order D-4120? The tracking hasn't changed in 4 days.", [
            R("", call("lookup_order", order_id="D-4120")),
            R("", call("track_shipment", tracking="771234567890")),
            R("", call("track_shipment", tracking="771234567890")),
            R("", call("track_shipment", tracking="771234567890")),
            R("Your parcel is in transit and should arrive Thursday by 8pm."),
        ]),
        ("That answer is useless, the tracking page has said the same since Monday. I want to talk to a real person.", [
            R("I understand. I've flagged D-4120 for our shipping team; a colleague will email you within one "
              "business day."),
        ]),
    ], gaps=[95]),
    # tool error cascade (two failed runs in a row), then the assistant gives up: failed
    Dialogue("globex:api:sess-2108", at(8, 14, 0), "coding", [
        ("Run the integration tests for the payments service, please.", [
            R("", call("run_tests", path="tests/integration/payments")),
            R("", call("run_tests", path="tests/integration/payments -x")),
            R("Sorry, I couldn't run the integration tests: pytest stops on a missing `pg_dsn` fixture both times."),
        ]),
    ], model=CLAUDE),
    # the user repeats the question, the assistant repeats its reply word for word
    Dialogue("initech:helpdesk:sess-5007", at(5, 10, 0), "helpdesk", [
        ("My SSO login keeps looping back to the sign-in page", [
            R("", call("check_service_status", service="sso")),
            R("SSO is operational. Clear your browser cookies for login.initech.local and sign in again in a "
              "private window."),
        ]),
        ("my SSO login still keeps looping back to the sign-in page", [
            R("SSO is operational. Clear your browser cookies for login.initech.local and sign in again in a "
              "private window."),
        ]),
        ("ok, trying a private window now", [
            R("If it keeps looping there too, I'll open a ticket for the identity team."),
        ]),
    ], gaps=[420, 150]),
    # the order is not found and the assistant gives up: the conversation ends there (failed)
    Dialogue("umbrella:eu:sess-7004", at(7, 9, 30), "support", [
        ("Where is my order Z-1234? I paid two weeks ago.", [
            R("", call("lookup_order", order_id="Z-1234")),
            R("I'm sorry, I couldn't find an order Z-1234. Please check the number in your confirmation email."),
        ]),
    ]),
]


def unanswered_question(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    """The user asks a follow-up and the reply never comes (the model call fails): abandoned."""
    model = ScriptedChatModel(replies=[
        R("Yes, we ship to Canada with UPS Standard (5–8 business days); duties are paid at checkout."),
    ], model_name=GPT)
    graph = build_agent_graph(model, SUPPORT_TOOLS, saver)
    cfg = thread_config(thread_id)
    say(graph, cfg, "Do you ship to Canada?", clock, think=0)
    try:
        say(graph, cfg, "How much is shipping for a 3 kg parcel to Toronto?", clock, think=90)
    except RuntimeError:  # the scripted model has no reply left: the run stops after saving the question
        pass
    else:
        raise AssertionError(f"{thread_id}: the follow-up was answered")


def late_approval(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    """A refund approved 5 h 20 min after it was requested: past the 4 h human-in-the-loop service level."""
    approval_flow(saver, thread_id, clock, "I returned order E-5581 last week. When do I get my money back?", [
        R("", call("lookup_order", order_id="E-5581")),
        R("Your return of E-5581 has arrived. I've requested the refund of $35.99; a supervisor approves it.",
          call("issue_refund", order_id="E-5581", amount=35.99, reason="returned")),
        R("Your $35.99 refund for E-5581 was approved and is on its way back to your card."),
        R("You're welcome, have a nice day!"),
    ], dt.timedelta(hours=5, minutes=20), "supervisor-1", ("thanks", 600))


# --- conversations that exercise a particular store feature -----------------------------------


def pending_refund(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    """A refund waits for a supervisor: ``interrupt()`` left pending (acme)."""
    model = ScriptedChatModel(replies=[
        R("", call("lookup_order", order_id="B-2211")),
        R("I'm so sorry it arrived broken. I've requested a full refund of $89.00; a supervisor has to approve "
          "refunds over $50, usually within the hour.",
          call("issue_refund", order_id="B-2211", amount=89.0, reason="arrived broken")),
    ])
    graph = build_agent_graph(model, SUPPORT_TOOLS, saver, approve_tools=["issue_refund"])
    say(graph, thread_config(thread_id), "My order B-2211 arrived broken, the glass carafe is shattered. I want a refund.",
        clock, think=0)


def approved_refund(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    """The same approval flow, resumed 38 minutes later with ``Command(resume=...)``."""
    approval_flow(saver, thread_id, clock,
                  "My headphones from order A-1043 came with a dented case. Can I get a partial refund?", [
        R("", call("lookup_order", order_id="A-1043")),
        R("I'm sorry about the dented case. I've requested a partial refund of $20.00; a supervisor will approve it shortly.",
          call("issue_refund", order_id="A-1043", amount=20.0, reason="cosmetic damage")),
        R("Your $20.00 refund for A-1043 was approved and is on its way back to your card."),
        R("You're welcome, enjoy the headphones!"),
    ], dt.timedelta(minutes=38), "supervisor-3", ("thank you!", 300))


def approval_flow(saver: SqliteSaver, thread_id: str, clock: Clock, question: str, replies: list[Reply],
                  wait: dt.timedelta, reviewer: str, closing: tuple[str, float]) -> None:
    """A refund that waits for a supervisor's ``interrupt()``, resumed after `wait` with
    ``Command(resume=...)``; then the user's `closing` (text, think time in seconds)."""
    graph = build_agent_graph(ScriptedChatModel(replies=replies), SUPPORT_TOOLS, saver, approve_tools=["issue_refund"])
    cfg = thread_config(thread_id)
    say(graph, cfg, question, clock, think=0)
    clock.advance(wait.total_seconds())
    graph.invoke(Command(resume={"approved": True, "reviewer": reviewer}), cfg, durability="sync")
    say(graph, cfg, closing[0], clock, think=closing[1])

def edited_reply(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    """An operator corrects a wrong phone extension in place (``update_state``, same id)."""
    model = ScriptedChatModel(replies=[
        R("For hardware problems call the service desk at extension 4401, available 7:00–19:00."),
        R("Yes, the desk can also arrange a loaner laptop while yours is repaired."),
    ])
    graph = build_chat_graph(model, saver)
    cfg = thread_config(thread_id)
    say(graph, cfg, "What number do I call for a broken laptop screen?", clock, think=0)
    say(graph, cfg, "Can I get a replacement while it's repaired?", clock, think=70)
    clock.advance(minutes=21)
    wrong = graph.get_state(cfg).values["messages"][1]
    graph.update_state(cfg, {"messages": [wrong.model_copy(update={
        "content": "For hardware problems call the service desk at extension 4410, available 7:00–19:00."})]},
        as_node="chat")


def trimmed_chat(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    """A long helpdesk chat whose ``trim`` node removes old messages (``RemoveMessage``)."""
    model = ScriptedChatModel(replies=[
        R("Hi! What can I help you with?"),
        R("Which printer — the one on floor 3 near the kitchen?"),
        R("That printer has a fuser error; facilities has a ticket open for it."),
        R("Use the floor 2 printer in the meantime: it's called PRN-F2-EAST in the print dialog."),
        R("Then the driver isn't installed yet. Open Software Center and install “Floor 2 printers”."),
        R("You're all set then. The floor 3 printer should be back tomorrow morning."),
    ], model_name=GPT)
    graph = build_chat_graph(model, saver, trim_to=6)
    cfg = thread_config(thread_id)
    for think, text in [(0, "hello"), (40, "the printer doesn't work"), (25, "yes that one"),
                        (60, "where else can I print?"), (120, "PRN-F2-EAST doesn't show up for me"),
                        (300, "installed, printed fine")]:
        say(graph, cfg, text, clock, think=think)


def regenerated_answer(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    """The user regenerates an answer: a replay from the checkpoint before it (``source: fork``)."""
    model = ScriptedChatModel(replies=[
        R("Use `graph.stream(inputs, stream_mode=\"messages\")` and print each token's `.content`."),
        R("Yes: pass `stream_mode=[\"messages\", \"updates\"]` and you get `(mode, chunk)` tuples.", model=GPT),
        R("Pass a list: `for mode, chunk in graph.stream(inputs, stream_mode=[\"messages\", \"updates\"]):` — each item "
          "is a `(mode, chunk)` tuple, so you can route tokens and node updates separately.", model=CLAUDE),
    ], model_name=CLAUDE)
    graph = build_chat_graph(model, saver)
    cfg = thread_config(thread_id)
    say(graph, cfg, "How do I stream tokens to my frontend?", clock, think=0)
    say(graph, cfg, "Can I get node updates and tokens at the same time?", clock, think=150)
    before = next(s for s in graph.get_state_history(cfg) if s.next == ("chat",) and len(s.values["messages"]) == 3)
    clock.advance(seconds=40)  # the user clicks "regenerate"
    graph.invoke(None, before.config, durability="sync")


def subgraph_research(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    scenarios.scenario_subgraph(saver, thread_id, clock)


def list_content_photo(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    scenarios.scenario_list_content(saver, thread_id, clock)


def legacy_kiosk(saver: SqliteSaver, thread_id: str, clock: Clock) -> None:
    scenarios.scenario_operator_add(saver, thread_id, clock)


Feature = Callable[[SqliteSaver, str, Clock], None]

FEATURES: list[tuple[str, dt.datetime, str, Feature]] = [
    ("acme:web:sess-1008", at(9, 16, 50), "pending_interrupt", pending_refund),
    ("acme:mobile:sess-3003", at(5, 12, 15), "resumed_interrupt", approved_refund),
    ("acme:mobile:sess-3004", at(10, 18, 30), "list_content", list_content_photo),
    ("initech:helpdesk:sess-5005", at(6, 14, 0), "edit", edited_reply),
    ("initech:helpdesk:sess-5006", at(8, 11, 25), "remove_message", trimmed_chat),
    ("globex:api:sess-2105", at(7, 10, 0), "fork", regenerated_answer),
    ("globex:api:sess-2106", at(9, 9, 30), "subgraph", subgraph_research),
    ("faq-kiosk-lobby", at(12, 12, 0), "operator_add", legacy_kiosk),
    ("acme:web:sess-1009", at(4, 11, 0), "abandoned", unanswered_question),
    ("acme:mobile:sess-3005", at(3, 9, 0), "slow_hitl", late_approval),
]
RESTART = ("globex:api:sess-2107", at(11, 16, 45))  # continued in a second OS process ~3 h later


def run_dialogue(saver: SqliteSaver, d: Dialogue, clock: Clock) -> None:
    replies = [r for _, rs in d.turns for r in rs]
    model = ScriptedChatModel(replies=replies, model_name=d.model)
    graph = build_agent_graph(model, TOOLS[d.kind], saver)
    cfg = thread_config(d.thread_id)
    for i, (text, _) in enumerate(d.turns):
        say(graph, cfg, text, clock, think=0 if i == 0 else (d.gaps[i - 1] if i - 1 < len(d.gaps) else 60))
    if model.calls != len(replies):
        raise AssertionError(f"{d.thread_id}: {model.calls} model calls for {len(replies)} scripted replies")


def build_demo(path: Path) -> dict[str, str]:
    """Write every demo thread into a fresh store at ``path``; return ``{thread_id: kind}``."""
    scenarios.RECORD_PID = False  # pids differ per run; keep the file reproducible
    remove_store(path)
    saver = open_sqlite_saver(path)
    jobs: list[tuple[dt.datetime, str, str, Callable[[Clock], None]]] = []
    for d in DIALOGUES:
        jobs.append((d.start, d.thread_id, f"chat_{d.kind}", lambda c, d=d: run_dialogue(saver, d, c)))
    for d in WENT_WRONG:
        jobs.append((d.start, d.thread_id, "went_wrong", lambda c, d=d: run_dialogue(saver, d, c)))
    for tid, start, kind, fn in FEATURES:
        jobs.append((start, tid, kind, lambda c, fn=fn, tid=tid: fn(saver, tid, c)))
    rtid, rstart = RESTART
    jobs.append((rstart, rtid, "restart_second_process",
                 lambda c: scenarios.scenario_second_process(saver, rtid, c, location=str(path))))
    manifest: dict[str, str] = {}
    try:
        for start, tid, kind, job in sorted(jobs, key=lambda j: (j[0], j[1])):
            with deterministic(f"{SEED}:{tid}"), Clock(start) as clock:
                job(clock)
            manifest[tid] = kind
    finally:
        saver.conn.close()
    return manifest


def canonical_copy(src: Path, dst: Path) -> None:
    """Copy the saver's rows into a fresh file in primary-key order, journal_mode=DELETE.

    LangGraph saves writes from a background thread, so the INSERT order (and
    thus the page layout) varies from run to run although the rows do not. The
    rows are copied verbatim into tables created by ``SqliteSaver.setup()`` itself.
    """
    remove_store(dst)
    conn = sqlite3.connect(dst)
    try:
        SqliteSaver(conn).setup()
        conn.execute("ATTACH DATABASE ? AS src", (str(src),))
        conn.execute("INSERT INTO checkpoints SELECT * FROM src.checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id")
        conn.execute("INSERT INTO writes SELECT * FROM src.writes "
                     "ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx")
        conn.commit()
        conn.execute("DETACH DATABASE src")
        conn.execute("PRAGMA journal_mode=DELETE")  # self-contained file: no -wal/-shm needed
        conn.execute("VACUUM")
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEMO_PATH)
    out: Path = ap.parse_args(argv).out
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "demo.sqlite"
        manifest = build_demo(work)
        out.parent.mkdir(parents=True, exist_ok=True)
        canonical_copy(work, out)
    conn = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    n_ckpt, n_threads = conn.execute("SELECT count(*), count(DISTINCT thread_id) FROM checkpoints").fetchone()
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    print(f"wrote {out} ({os.path.getsize(out) / 1e6:.2f} MB, journal_mode={mode}): "
          f"{n_threads} threads, {n_ckpt} checkpoints")
    by_kind = Counter(manifest.values())
    for kind in sorted(by_kind):
        tids = [t for t, k in manifest.items() if k == kind]
        print(f"  {kind:24s} {by_kind[kind]:3d}  {', '.join(tids)}")
    tenants = Counter(t.split(":")[0] if t.count(":") >= 2 else "(no tenant)" for t in manifest)
    print("  tenants: " + ", ".join(f"{k}={v}" for k, v in sorted(tenants.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
