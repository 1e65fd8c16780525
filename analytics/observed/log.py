"""The observed rehydrate log (contract §5.5): one JSON object per rehydrated entry, in the runtime's words.

A runtime logs what it put back into its recency window after a restart. It
names things its own way, so each field is looked up under several names, at
the top level first and then in `metadata` (where a runtime keeps the
`speaker` / `turn_id` shape of its live turns):

| field | names read (first found wins) |
|---|---|
| thread | `thread_id`; or `tenant_id` / `sub_tenant_id` / `session_id` |
| speaker | `speaker`, `role` (`human` / `ai` read as `user` / `assistant`) |
| content | `content`, `text` |
| position | `position`, `index` |
| message id | `message_id`, `turn_id` |
| time | `resume_at`, `recorded_at`, `ts`, `timestamp`, `time`, `logged_at`: ISO 8601 (no offset = UTC) or epoch seconds / milliseconds / microseconds (a number or a string of digits) |
| checkpoint | `checkpoint_id` |
| source | `metadata.source` (else a top-level `source`) |

`parse_observed` reads a file without a database: good lines become
`ObservedEntry`s, bad ones `LineError`s with their 1-based line number (what
could be read of a bad line is kept, so it still counts against its resume).

>>> log = parse_observed(b'{"thread_id": "t", "role": "human", "text": "hi", "index": 0, "recorded_at": 1741000000}')
>>> log.entries[0].speaker, log.entries[0].at.isoformat(), log.entries[0].time_field
('user', '2025-03-03T11:06:40+00:00', 'recorded_at')
"""

from __future__ import annotations

import io
import json
import numbers
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any, Union

from analytics import _pandas as pd
from analytics.errors import BadRequest
from analytics.filters import as_utc
from analytics.jsonlines import bounded
from analytics.jsontext import loads as json_loads
from analytics.user_files import MAX_JSONL_BYTES, open_user_file

__all__ = [
    "LineError", "ObservedEntry", "ObservedLog", "Source", "TIME_FIELDS", "parse_observed", "parse_time_value",
    "template_lines",
]  # fmt: skip

#: The names a line's time goes by, in the order they are looked for.
TIME_FIELDS: tuple[str, ...] = ("resume_at", "recorded_at", "ts", "timestamp", "time", "logged_at")
_SPEAKER_FIELDS = ("speaker", "role")
_CONTENT_FIELDS = ("content", "text")
_POSITION_FIELDS = ("position", "index")
_ID_FIELDS = ("message_id", "turn_id")
_THREAD_FIELDS = ("thread_id", "tenant_id", "sub_tenant_id", "session_id", "checkpoint_id")
#: LangChain's message types, as a runtime may log them, read as the speakers they are (contract §3.3).
SPEAKER_ALIASES = {"human": "user", "ai": "assistant"}

_TEXT_WIDTH = 200
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

Source = Union[str, os.PathLike, bytes, IO[str], IO[bytes], "ObservedLog"]


@dataclass(frozen=True)
class ObservedEntry:
    """One well-formed line: a rehydrated entry as the runtime reports it.

    `thread_id` is as given, or None when the line names the thread by
    `tenant_id` / `sub_tenant_id` / `session_id`; `at` is the line's time and
    `time_field` the name it was found under; `source` is `metadata.source`.
    """

    line: int
    speaker: str
    content: str
    position: int
    thread_id: str | None = None
    tenant_id: str | None = None
    sub_tenant_id: str | None = None
    session_id: str | None = None
    checkpoint_id: str | None = None
    at: datetime | None = None
    time_field: str | None = None
    message_id: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class LineError:
    """A line that cannot be compared: its number, why, and its text (shortened).

    The thread / time / position fields are filled when the line names them
    readably, so the error counts against the window it belongs to.
    """

    line: int
    error: str
    text: str
    thread_id: str | None = None
    tenant_id: str | None = None
    sub_tenant_id: str | None = None
    session_id: str | None = None
    checkpoint_id: str | None = None
    at: datetime | None = None
    time_field: str | None = None
    position: int | None = None
    kind: str = "malformed"


@dataclass(frozen=True)
class ObservedLog:
    """A parsed observed JSONL: the good lines and the bad ones.

    >>> log = parse_observed(io.BytesIO(b'{"thread_id": "t", "speaker": "user", "content": "hi", "position": 0}\\n{'))
    >>> len(log.entries), [e.line for e in log.errors]
    (1, [2])
    """

    entries: tuple[ObservedEntry, ...] = ()
    errors: tuple[LineError, ...] = field(default=())


# ---------------------------------------------------------------------------
# field lookup


def _lookup(obj: dict, names: tuple[str, ...]) -> tuple[str | None, Any]:
    """(name, value) of the first of `names` present at the top level, else in `metadata`."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    for where in (obj, meta):
        for name in names:
            if name in where and where[name] is not None:
                return name, where[name]
    return None, None


def _opt_str(obj: dict, names: tuple[str, ...]) -> str | None:
    name, value = _lookup(obj, names)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    return value


def _id(obj: dict) -> str | None:
    # A runtime's turn ids may be numbers: they are compared as text.
    name, value = _lookup(obj, _ID_FIELDS)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{name} must be a string, got {type(value).__name__}")


def parse_time_value(value: Any, what: str = "time") -> datetime:
    """An ISO 8601 string or an epoch number (seconds, ms, µs or ns, told apart by size) as UTC.

    >>> parse_time_value(1741000000).isoformat(), parse_time_value("1741000000500").isoformat()
    ('2025-03-03T11:06:40+00:00', '2025-03-03T11:06:40.500000+00:00')
    >>> parse_time_value("2025-03-03T11:06:40Z").isoformat()
    '2025-03-03T11:06:40+00:00'
    """
    if isinstance(value, bool):
        raise ValueError(f"{what} must be an ISO 8601 string or an epoch number, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            try:
                return as_utc(datetime.fromisoformat(text))
            except ValueError:
                raise ValueError(f"{what} {value!r} is neither an ISO 8601 date/time nor an epoch number") from None
        value = number
    if isinstance(value, numbers.Real):
        seconds = float(value)
        # Epoch seconds reach 1e11 only in the year 5138: larger values are ms, then µs, then ns.
        for scale in (1, 1e3, 1e6, 1e9):
            if abs(seconds) < 1e11 * scale:
                return _EPOCH + timedelta(microseconds=round(seconds / scale * 1e6))
        raise ValueError(f"{what} {value!r} is out of range for an epoch time")
    raise ValueError(f"{what} must be an ISO 8601 string or an epoch number, got {type(value).__name__}")


def _time(obj: dict) -> tuple[datetime | None, str | None]:
    name, value = _lookup(obj, TIME_FIELDS)
    if value is None:
        return None, None
    try:
        return parse_time_value(value, name), name
    except OverflowError:
        raise ValueError(f"{name} {value!r} is out of range for a date") from None


def _position(obj: dict) -> int:
    name, position = _lookup(obj, _POSITION_FIELDS)
    if isinstance(position, bool) or not isinstance(position, numbers.Integral) or position < 0:
        raise ValueError(f"{name or 'position'} must be an integer >= 0, got {position!r}")
    return int(position)


def _identity(obj: dict) -> dict:
    """What a bad line names readably (thread, checkpoint, time, position); an unreadable field is left out."""
    out: dict[str, Any] = {}
    for key in _THREAD_FIELDS:
        _, value = _lookup(obj, (key,))
        if isinstance(value, str):
            out[key] = value
    if out.get("sub_tenant_id") == "":
        out["sub_tenant_id"] = None
    try:
        out["at"], out["time_field"] = _time(obj)
    except ValueError:
        pass
    try:
        out["position"] = _position(obj)
    except ValueError:
        pass
    return out


def _entry(number: int, obj: dict) -> ObservedEntry:
    ident = {key: _opt_str(obj, (key,)) for key in _THREAD_FIELDS}
    if ident["sub_tenant_id"] == "":
        ident["sub_tenant_id"] = None  # an empty sub-tenant is NULL in the database (contract §3)
    if not ident["thread_id"] and not ident["session_id"]:
        raise ValueError("names no thread: give thread_id, or tenant_id / sub_tenant_id / session_id")
    name, speaker = _lookup(obj, _SPEAKER_FIELDS)
    if not isinstance(speaker, str) or not speaker:
        raise ValueError("speaker must be a non-empty string" + (" (missing)" if speaker is None else ""))
    name, content = _lookup(obj, _CONTENT_FIELDS)
    if not isinstance(content, str):
        raise ValueError(f"{name or 'content'} must be a string" + (" (missing)" if content is None else ""))
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ValueError(f"metadata must be an object, got {type(metadata).__name__}")
    source = (metadata or {}).get("source", obj.get("source"))
    if source is not None and not isinstance(source, str):
        raise ValueError(f"metadata.source must be a string, got {type(source).__name__}")
    at, time_field = _time(obj)
    return ObservedEntry(
        line=number,
        speaker=SPEAKER_ALIASES.get(speaker, speaker),
        content=content,
        position=_position(obj),
        at=at,
        time_field=time_field,
        message_id=_id(obj),
        source=source,
        **ident,
    )


# ---------------------------------------------------------------------------
# reading a file


def _lines(source: Source) -> Iterator[str]:
    """The text lines of `source`, read one at a time (`str.splitlines`' line ends, a leading BOM dropped)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"no observed JSONL file at {path}")
        with open_user_file(path, "observed JSONL file", MAX_JSONL_BYTES) as fh:
            yield from _split(fh)
    elif isinstance(source, (bytes, bytearray)):
        yield from _split(io.BytesIO(source))
    elif hasattr(source, "read"):  # a file object, or a Streamlit upload
        yield from _split(source if hasattr(source, "readline") else io.BytesIO(source.read()))
    else:
        raise BadRequest(f"observed must be a path, bytes or a file object, got {type(source).__name__}")


def _split(fh: IO[bytes] | IO[str]) -> Iterator[str]:
    first = True
    for chunk in iter(fh.readline, fh.read(0)):
        if isinstance(chunk, (bytes, bytearray)):
            # Invalid UTF-8 becomes U+FFFD: the line still gets a number and, if broken, an error.
            # (A chunk ends at a newline byte, which no multi-byte character holds.)
            chunk = bytes(chunk).decode("utf-8-sig" if first else "utf-8", errors="replace")
        first = False
        yield from chunk.splitlines()


def parse_observed(source: Source) -> ObservedLog:
    """Read an observed JSONL (path, bytes or file object) into entries and line errors.

    Blank lines are skipped; every other line is one JSON object (module
    docstring). A line that is not valid JSON, not an object, or lacks or
    mistypes a field becomes a `LineError` with its 1-based line number.

    >>> parse_observed(b'{"session_id": "s", "speaker": "user", "content": "x", "position": -1}').errors[0].error
    'position must be an integer >= 0, got -1'
    """
    if isinstance(source, ObservedLog):
        return source
    entries: list[ObservedEntry] = []
    errors: list[LineError] = []
    what = f"observed log {Path(source).name}" if isinstance(source, (str, os.PathLike)) else "the observed log"
    for number, text in enumerate(bounded(_lines(source), what), start=1):
        if not text.strip():
            continue
        short = text if len(text) <= _TEXT_WIDTH else text[: _TEXT_WIDTH - 1] + "…"
        try:
            obj = json_loads(text)
        except ValueError as exc:
            errors.append(LineError(number, f"not valid JSON: {exc}", short))
            continue
        if not isinstance(obj, dict):
            errors.append(LineError(number, f"not a JSON object but a {type(obj).__name__}", short))
            continue
        try:
            entries.append(_entry(number, obj))
        except ValueError as exc:
            errors.append(LineError(number, str(exc), short, **_identity(obj)))
    return ObservedLog(tuple(entries), tuple(errors))


# ---------------------------------------------------------------------------
# the expected window as a template of the format


def template_lines(window: pd.DataFrame, thread_id: str, recorded_at: Any = None) -> bytes:
    """An expected window (`expected_window()` rows) as observed JSONL lines: what a faithful
    runtime would log for that rehydrate, the template a runtime's log can be held to.

    `recorded_at` (the resume point's first post-restart checkpoint ts), when given, is
    written on every line, so the file attributes itself by time as well as by checkpoint.

    >>> w = pd.DataFrame({"checkpoint_id": ["c1"], "position": [0], "speaker": ["user"], "content": ["hi"],
    ...                   "message_id": ["m1"], "source": ["resume_rehydrate"]})
    >>> template_lines(w, "t").decode()
    '{"thread_id": "t", "checkpoint_id": "c1", "position": 0, "speaker": "user", "content": "hi", "message_id": "m1", "metadata": {"source": "resume_rehydrate", "turn_id": "m1"}}\\n'
    """
    at = None if recorded_at is None or pd.isna(recorded_at) else pd.Timestamp(recorded_at).isoformat()
    lines = []
    for w in window.itertuples(index=False):
        mid = None if pd.isna(w.message_id) else w.message_id
        line: dict[str, Any] = {
            "thread_id": thread_id,
            "checkpoint_id": w.checkpoint_id,
            "position": int(w.position),
            "speaker": w.speaker,
            "content": w.content,
            "message_id": mid,
            "metadata": {"source": w.source, "turn_id": mid},
        }
        if at is not None:
            line["recorded_at"] = at
        lines.append(json.dumps(line, ensure_ascii=False))
    return "".join(line + "\n" for line in lines).encode()
