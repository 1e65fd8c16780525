"""The human-in-the-loop backlog (contract §3.10): threads waiting on an `interrupt()`.

A thread waits when its latest root checkpoint carries an `__interrupt__`
write (`threads.interrupt_pending`). It has waited since that checkpoint's
`ts` (the interrupt was raised by the task that ran from it), up to a
reference time: the newest checkpoint `ts` in the database (`until="store"`,
the default: a snapshot's "now", so a store loaded last week reads the same
today) or the wall clock (`until="now"`). The interrupt's value is what the
graph asked a human (an approval request with its action and amount, a
question): `interrupt_value` is its JSON, `request` the scalar fields of the
first one, flattened (`action=issue_refund · args.amount=89.0`).

(A resume accepted while its task has not finished yet still counts as
waiting: the loader does not read `__resume__` writes into the database,
contract §12 D11.)

>>> backlog("lens.duckdb").sort_values("waited_s", ascending=False).head()  # doctest: +SKIP
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.frames import fetch_frame, typed

__all__ = ["BACKLOG_COLUMNS", "UNTIL", "backlog", "interrupt_values", "request_text"]

#: Reference times for `waited_s`.
UNTIL: tuple[str, ...] = ("store", "now")

#: Columns of `backlog()`.
BACKLOG_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "tenant_id": "str",
    "sub_tenant_id": "str",
    "session_id": "str",
    "waiting_since": "datetime64[us, UTC]",
    "waited_s": "float64",
    "request": "str",
    "interrupts": "int64",
    "interrupt_id": "str",
    "interrupt_value": "str",
    "checkpoint_id": "str",
    "last_message_role": "str",
    "last_message": "str",
    "messages": "int64",
    "reference_ts": "datetime64[us, UTC]",
}

_BACKLOG_SQL = """
SELECT t.thread_id, t.tenant_id, t.sub_tenant_id, t.session_id, c.ts AS waiting_since,
       t.interrupt_value AS raw_value, t.transcript_checkpoint_id AS checkpoint_id, t.message_count AS messages,
       (SELECT arg_max(m.role, m.ordinal) FROM messages AS m WHERE m.thread_id = t.thread_id) AS last_message_role,
       (SELECT arg_max(m.content, m.ordinal) FROM messages AS m WHERE m.thread_id = t.thread_id) AS last_message,
       (SELECT max(last_ts) FROM threads) AS store_ts
FROM threads AS t
LEFT JOIN checkpoints AS c ON c.thread_id = t.thread_id AND c.checkpoint_id = t.transcript_checkpoint_id AND c.is_root
WHERE t.interrupt_pending AND ({where})
ORDER BY t.thread_id
"""


def interrupt_values(raw: Any) -> list[dict]:
    """The pending interrupts of a `threads.interrupt_value`, each `{value, id}`.

    The column holds one entry per `__interrupt__` write, each a list of
    `Interrupt`s (`{value, id, …}`; older LangGraph: `{value, resumable, ns, when}`).

    >>> interrupt_values('[[{"value": {"action": "refund"}, "id": "i1"}]]')
    [{'value': {'action': 'refund'}, 'id': 'i1'}]
    """
    try:
        writes = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return [{"value": raw, "id": None}]
    out = []
    for write in writes if isinstance(writes, list) else [writes]:
        for item in write if isinstance(write, list) else [write]:
            if isinstance(item, dict) and "value" in item:
                out.append({"value": item["value"], "id": item.get("id") if isinstance(item.get("id"), str) else None})
            else:
                out.append({"value": item, "id": None})
    return out


def request_text(value: Any, width: int = 240) -> str:
    """An interrupt value's scalar fields as `path=value` pairs (a plain value as it is), shortened.

    >>> request_text({"question": "Approve?", "action": "issue_refund", "args": {"amount": 89.0}})
    'question=Approve? · action=issue_refund · args.amount=89.0'
    """
    pairs: list[str] = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, dict):
            for k, sub in v.items():
                walk(sub, f"{path}.{k}" if path else str(k))
        elif isinstance(v, list):
            for i, sub in enumerate(v):
                walk(sub, f"{path}[{i}]")
        else:
            pairs.append(f"{path}={v}" if path else str(v))

    walk(value, "")
    text = " · ".join(" ".join(p.split()) for p in pairs)
    return text if len(text) <= width else text[: width - 1] + "…"


def backlog(con_or_path: ConOrPath, filters: Filters = Filters(), until: str = "store") -> pd.DataFrame:
    """Threads waiting on an `interrupt()`, longest wait first. Columns: `BACKLOG_COLUMNS`.

    `waiting_since` is the ts of the checkpoint the interrupt is keyed on (the
    latest root checkpoint); `waited_s` runs from there to `reference_ts`: the
    newest checkpoint ts in the database (`until="store"`) or now (`until="now"`).
    `request` is the first interrupt's value flattened (`request_text`),
    `interrupt_value` the JSON of every pending interrupt's value, `interrupts`
    how many there are; `last_message` is the transcript's last message (often
    the tool call waiting for approval).

    >>> backlog("lens.duckdb", Filters(tenants=("acme",)), until="now")[["thread_id", "waited_s"]]  # doctest: +SKIP
    """
    if until not in UNTIL:
        raise BadRequest(f"until must be one of {', '.join(UNTIL)}; got {until!r}")
    where, params = filters.thread_where("t")
    with connection(con_or_path) as con:
        # `where` is Filters' own SQL with placeholders; the values stay bound.
        frame = fetch_frame(con, _BACKLOG_SQL.format(where=where), params)
    if frame.empty:
        return typed(frame, BACKLOG_COLUMNS)
    reference = pd.Timestamp(datetime.now(timezone.utc)) if until == "now" else frame["store_ts"].iloc[0]
    pending = [interrupt_values(raw) for raw in frame["raw_value"].tolist()]
    frame = frame.assign(
        reference_ts=reference,
        waited_s=(pd.Timestamp(reference) - frame["waiting_since"]).dt.total_seconds(),
        interrupts=[len(p) for p in pending],
        interrupt_id=[p[0]["id"] if p else None for p in pending],
        interrupt_value=[json.dumps([i["value"] for i in p], ensure_ascii=False) if p else None for p in pending],
        request=[request_text(p[0]["value"]) if p else None for p in pending],
    ).sort_values(["waited_s", "thread_id"], ascending=[False, True], na_position="last", kind="stable")
    return typed(frame, BACKLOG_COLUMNS)
