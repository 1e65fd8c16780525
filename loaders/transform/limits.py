"""The per-thread limits of the transform, and the row errors that say where a thread passed one.

A thread's rows are held in memory until it is staged, so what one thread may cost is
bounded whatever the store: its metadata's length, its message lists' entries in all
(`records.max_list_entries`) and its `message_events` (`records.max_thread_events`).
"""

from __future__ import annotations

import re
from array import array  # noqa: F401  (the doctests' lists)
from itertools import accumulate
from operator import itemgetter

from loaders.records import LoadError, RawCheckpoint, list_entries_reason

# DuckDB parses a checkpoint's metadata JSON at ingest (step, source, run_id), which takes
# several times its size in memory at once under the writer's memory limit: metadata
# longer than this is reported and not loaded (its checkpoint still is). Real metadata is
# a few hundred bytes; a LangGraph 0.2 checkpoint's `writes` in it, some kilobytes.
METADATA_MAX_CHARS = 8 << 20


# DuckDB's JSON parse of deeply nested metadata takes memory by the level: a 2 MB value of a
# million nested arrays ran the writer out of its memory limit and failed the whole load.
# Metadata nested deeper than this (arrays and objects, counted outside strings) is reported
# and not loaded (its checkpoint still is). Real metadata nests a few levels (a LangGraph 0.2
# checkpoint's `writes`, messages and their tool calls, about ten); Python's own JSON parser,
# which the analytics may use on it, stops near 1,000.
METADATA_MAX_DEPTH = 512
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def metadata_too_long(chars: int) -> str:
    """The reason metadata of `chars` characters is not loaded (over `METADATA_MAX_CHARS`)."""
    return (f"metadata is {chars} characters long, over the {METADATA_MAX_CHARS}-character limit; "
            "not loaded (step, source and run_id are NULL)")


def metadata_depth(text: str) -> int:
    """How deep arrays and objects nest in the JSON `text`, brackets inside strings not counted.

    >>> metadata_depth('{"a": [[1], {"b": "[[[x"}]}'), metadata_depth("{}"), metadata_depth('"x"')
    (3, 1, 0)
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def metadata_too_deep(text: str) -> str | None:
    """The reason the metadata JSON `text` is not loaded when it nests deeper than
    `METADATA_MAX_DEPTH`, else None. Cheap for real metadata: fewer brackets in all than the
    limit cannot nest past it, and only then are they counted (C-speed passes, no parse).

    >>> metadata_too_deep('{"a": 1}') is None, metadata_too_deep('{"a":' + '[' * 600 + ']' * 600 + '}')[:40]
    (True, 'metadata nests 601 levels deep, over the')
    """
    if text.count("[") + text.count("{") <= METADATA_MAX_DEPTH:
        return None
    depth = metadata_depth(text)
    if depth <= METADATA_MAX_DEPTH:
        return None
    return (f"metadata nests {depth} levels deep, over the {METADATA_MAX_DEPTH}-level limit; "
            "not loaded (step, source and run_id are NULL)")


_messages = itemgetter(RawCheckpoint._fields.index("messages"))


def within_list_entries(thread_id: str, cps: list[RawCheckpoint], cap: int, errors: list[LoadError]) -> list[RawCheckpoint]:
    """`cps` with the checkpoints whose message lists pass `cap` entries in all (by namespace
    and id) damaged: they load without messages, and the first one is a row error.

    A Postgres-shaped store keeps a list once per version and any number of checkpoints may
    name it: the entries loaded are not bounded by the store's size, as a SqliteSaver's are.

    >>> cp = RawCheckpoint("t", "", "c1", None, None, array("i", [0, 1]))
    >>> errors = []
    >>> [c.damaged for c in within_list_entries("t", [cp, cp._replace(checkpoint_id="c2")], 3, errors)]
    [False, True]
    >>> errors[0].reason.startswith("the thread's message lists hold more than 3 entries")
    True
    """
    if sum(map(len, filter(None, map(_messages, cps)))) <= cap:
        return cps
    out = list(cps)
    entries = 0
    first = True
    for i in sorted(range(len(out)), key=lambda i: (out[i].checkpoint_ns, out[i].checkpoint_id)):
        cp = out[i]
        if cp.damaged:
            continue
        # (one past the limit without a messages channel is cut too: else it would be the transcript's)
        entries += len(cp.messages) if cp.messages is not None else 0
        if entries > cap:
            if first:
                errors.append(LoadError(thread_id, cp.checkpoint_ns, cp.checkpoint_id, "messages",
                                        f"{list_entries_reason(cap)}: this checkpoint and the later ones load without messages"))
                first = False
            out[i] = cp._replace(messages=None, damaged=True)
    return out


def events_over_error(thread_id: str, checkpoint_id: str, cap: int) -> LoadError:
    """The row error of a thread whose `message_events` pass `cap` at root checkpoint `checkpoint_id`
    (event rows are held until the thread is staged, and a list reordered at every checkpoint
    makes an event of every entry each time).

    >>> events_over_error("t", "c9", 5).reason.split(":")[0]
    'message events of this checkpoint and the later ones not recorded'
    """
    return LoadError(thread_id, "", checkpoint_id, "messages", (
        "message events of this checkpoint and the later ones not recorded: the thread's events pass "
        f"the per-thread limit of {cap:,} (TRANSCRIPT_LENS_MAX_THREAD_EVENTS)"))
