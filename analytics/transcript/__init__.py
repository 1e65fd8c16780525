"""One thread's transcript: read under the query contract (contract §4), and in context.

- `reading`: `read` (a `TranscriptQuery` over one thread), `threads` and `search_threads`
  (the transcript picker's lists), staleness, and the time parsing every query shares;
- `context`: `in_context`, the whole transcript with reply latencies and what happened
  between messages (pauses, restarts, removals, edits, interrupts);
- `cli`: `python -m analytics transcript`.

This package is the public face of `reading`: `analytics.transcript.X` is each of its public
names.

>>> import analytics
>>> analytics.read.__module__
'analytics.transcript.reading'
"""

from __future__ import annotations

from analytics.transcript.reading import (  # noqa: F401
    NO_FILTERS, SEARCH_COLUMNS, SPEAKERS, STALENESS_COLUMNS, THREAD_COLUMNS, TRANSCRIPT_COLUMNS, Speaker,
    TranscriptQuery, parse_time, read, search_threads, stale_note, staleness, threads,
)
