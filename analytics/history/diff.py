"""A message-aligned comparison of two transcripts: two branches, two checkpoints, two threads.

Each side is read under the query contract (contract §4; `TranscriptQuery`,
whose `checkpoint_id` picks any root checkpoint), then aligned
(`analytics.align`: the same message id, the same speaker and text, the same
text, then a recognisably similar text in place). Each row of the answer is one
message of either side:

- `same`: on both sides, unchanged;
- `edited`: on both sides (same id, or recognisably the same text in the
  same place) with another text, role, tool calls or name (contract §3.7's
  rule); `text_diff` shows the text change inline (`[-old-]{+new+}`);
- `removed`: only on the left; `added`: only on the right.

`moved` marks a pair out of order relative to the others. Rows follow the
right side's order, with left-only messages where they stood.

>>> frame = diff("lens.duckdb", TranscriptQuery("t", checkpoint_id="1ef…"), "t")  # doctest: +SKIP
>>> frame.status.value_counts()  # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from analytics import _pandas as pd
from analytics.align import merged_order, pair
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.frames import typed
from analytics.textdiff import inline
from analytics.transcript import TranscriptQuery, read

__all__ = ["DIFF_COLUMNS", "DIFF_STATUSES", "Side", "diff", "diff_counts"]

#: Every `status`, in the order a summary lists them.
DIFF_STATUSES: tuple[str, ...] = ("same", "edited", "added", "removed")

#: Columns of `diff()`.
DIFF_COLUMNS: dict[str, str] = {
    "row": "int64",
    "status": "str",
    "moved": "bool",
    "changed": "str",
    "matched_by": "str",
    "left_ordinal": "Int64",
    "right_ordinal": "Int64",
    "left_role": "str",
    "right_role": "str",
    "left_content": "str",
    "right_content": "str",
    "text_diff": "str",
    "left_message_id": "str",
    "right_message_id": "str",
    "left_ts": "datetime64[us, UTC]",
    "right_ts": "datetime64[us, UTC]",
    "left_tool_calls": "str",
    "right_tool_calls": "str",
    "left_name": "str",
    "right_name": "str",
}


@dataclass(frozen=True)
class Side:
    """One message as the aligner sees it (`analytics.align.Item`)."""

    message_id: str | None
    speaker: str
    content: str


def _query(side: TranscriptQuery | str) -> TranscriptQuery:
    if isinstance(side, TranscriptQuery):
        return side
    if isinstance(side, str):
        return TranscriptQuery(side)
    raise BadRequest(f"a side of a diff is a TranscriptQuery or a thread id, got {type(side).__name__}")


def _calls(value: object) -> object:
    # Tool calls compared as values: the same calls with their keys in another order are no edit.
    if not isinstance(value, str) or not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _changed(a: dict, b: dict) -> list[str]:
    """What differs between two paired messages (contract §3.7: role, text, tool calls, name)."""
    out = []
    if (a["content"] or "") != (b["content"] or ""):
        out.append("content")
    if a["role"] != b["role"]:
        out.append("role")
    if _calls(a["tool_calls"]) != _calls(b["tool_calls"]):
        out.append("tool_calls")
    if _text(a["name"]) != _text(b["name"]):
        out.append("name")
    return out


def diff(con_or_path: ConOrPath, left: TranscriptQuery | str, right: TranscriptQuery | str) -> pd.DataFrame:
    """Compare two transcripts message by message. Columns: `DIFF_COLUMNS`.

    `left` / `right` are `TranscriptQuery`s (any thread, any root checkpoint,
    any speaker filter) or thread ids (their transcripts). Each row is one
    message: `status` (`same`, `edited`, `added`, `removed`), `moved`,
    `changed` (for `edited`: `content`, `role`, `tool_calls`, `name`, comma
    separated), `matched_by`, both sides' ordinal, role, content, id, ts, tool
    calls and name, and `text_diff` (the content change inline, for an edited text).
    Raises what `read` raises (`NotFound` for an unknown thread or checkpoint).

    >>> diff("lens.duckdb", "acme:web:s1", "acme:web:s2").status.tolist()  # doctest: +SKIP
    """
    lq, rq = _query(left), _query(right)
    with connection(con_or_path) as con:
        lf, rf = read(con, lq), read(con, rq)
    lrows, rrows = lf.to_dict("records"), rf.to_dict("records")

    def items(rows: list[dict]) -> list[Side]:
        return [Side(_text(r["message_id"]), r["role"], r["content"] or "") for r in rows]

    alignment = pair(items(lrows), items(rrows))
    out = []
    for i, j in merged_order(len(lrows), len(rrows), alignment):
        a = lrows[i] if i is not None else None
        b = rrows[j] if j is not None else None
        changes = _changed(a, b) if a is not None and b is not None else []
        status = "removed" if b is None else "added" if a is None else "edited" if changes else "same"
        out.append({
            "row": len(out),
            "status": status,
            "moved": j is not None and j in alignment.moved,
            "changed": ", ".join(changes) or None,
            "matched_by": alignment.how.get(j) if a is not None and b is not None else None,
            **{f"left_{k}": (a or {}).get(c) for k, c in _SIDE_FIELDS},
            **{f"right_{k}": (b or {}).get(c) for k, c in _SIDE_FIELDS},
            "text_diff": inline(a["content"], b["content"]) if "content" in changes else None,
        })  # fmt: skip
    return typed(pd.DataFrame(out), DIFF_COLUMNS)


_SIDE_FIELDS = (
    ("ordinal", "ordinal"),
    ("role", "role"),
    ("content", "content"),
    ("message_id", "message_id"),
    ("ts", "ts"),
    ("tool_calls", "tool_calls"),
    ("name", "name"),
)


def diff_counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many rows of a `diff()` answer have each status, plus `moved`.

    >>> diff_counts(pd.DataFrame({"status": ["same", "edited"], "moved": [False, True]}))
    {'same': 1, 'edited': 1, 'added': 0, 'removed': 0, 'moved': 1}
    """
    counts = {s: int((frame["status"] == s).sum()) for s in DIFF_STATUSES}
    counts["moved"] = int(frame["moved"].sum())
    return counts
