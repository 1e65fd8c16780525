"""An app download as it leaves: built under its session's policy, logged, or refused.

A download's bytes are built when the button is clicked, on a thread of the server
that is not the session's script thread (no session state, no `st.user` there). So
everything about the session is captured when the button is drawn — the database,
the session's policy, the user, the page's query parameters — and the click builds
the bytes under that policy (`analytics.policy.reading_as`), then appends the export
log (`analytics.export_log.record_export`, origin `app`) before handing them over. When
the log cannot be written, the click fails and nothing is downloaded; the button is
drawn disabled beforehand when the workspace's folder is not writable (`refusal`).

>>> csv_rows(b"a,b\\n1,2\\n3,\\"x\\ny\\"\\n")
2
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from analytics.export_log import Actor, os_user, record_export
from analytics.policy import Policy, effective, reading_as
from analytics.workspace.store import workspace_path


@dataclass(frozen=True)
class Origin:
    """The session a download is drawn for (captured on its script thread)."""

    db_path: str | None
    policy: Policy | None = None
    user: str | None = None
    params: Mapping[str, list[str]] = field(default_factory=dict)


def csv_rows(data: bytes) -> int:
    """Rows of a CSV with a header (quoted line breaks inside values counted once), a field of
    any size: the line ends outside quotes are counted (a `""` inside a quoted value opens and
    closes at once), not parsed by the `csv` module, whose fields stop at 128 KB.

    >>> csv_rows(b'a\\n"' + b"x" * 200_000 + b'"\\n'), csv_rows(b"a,b\\n1,2"), csv_rows(b"")
    (1, 1, 0)
    """
    outside = data.split(b'"')[0::2]  # the text between quoted stretches
    ends = sum(part.count(b"\n") for part in outside)
    lines = ends + (1 if data and not data.endswith(b"\n") else 0)
    return max(0, lines - 1)


def what_of(file_name: str) -> str:
    """The export log's `what` for a download: its file name up to the first `-` or `.`.

    >>> what_of("transcript-acme_web_s1.csv"), what_of("search.csv")
    ('transcript', 'search')
    """
    return Path(file_name).stem.split("-", 1)[0]


def refusal(origin: Origin) -> str | None:
    """Why downloads cannot be logged, so are off (None: they can): the workspace file
    cannot be written, or its folder cannot take a new one."""
    if origin.db_path is None:
        return "no database is open"
    path = workspace_path(origin.db_path)
    writable = os.access(path, os.W_OK) if path.exists() else path.parent.is_dir() and os.access(path.parent, os.W_OK)
    if not writable:
        return f"downloads are off: the export log {path} cannot be written"
    return None


def deferred(build: Callable[[], bytes | str], file_name: str, origin: Origin,
             rows: int | None = None) -> Callable[[], bytes]:
    """What the button calls on click: the bytes built under the session's policy, logged first."""

    def make() -> bytes:
        with reading_as(origin.policy):
            data = build()
        data = data.encode("utf-8") if isinstance(data, str) else data
        record_export(
            origin.db_path, what_of(file_name),
            arguments={"file": file_name, **{k: v for k, v in origin.params.items()}},
            rows=rows if rows is not None else csv_rows(data) if file_name.endswith(".csv") else None,
            masked=effective(origin.policy).redact, target=file_name,
            actor=Actor(origin.user or os_user(), "app"),
        )  # raises ExportRefused: the click then fails and nothing is handed over
        return data

    return make
