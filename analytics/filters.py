"""The one filter object every analytics function accepts.

The app, the CLI and a notebook filter alike because they all build a
`Filters` and hand it over; SQL fragments come back as `(sql, params)` with
values bound, never formatted in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timezone

from analytics.catalog import THREAD_COLUMNS_IN_METRICS
from analytics.errors import BadRequest
from analytics.conversation_outcomes.signals import OUTCOMES, SIGNALS
from analytics.text_match import contains_params, contains_sql


def as_utc(value: datetime | None) -> datetime | None:
    """Naive datetimes are UTC (the CLI and the app say so).

    >>> as_utc(datetime(2025, 1, 1)).tzinfo
    datetime.timezone.utc
    """
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=timezone.utc)


def day_window(first: date | None, last: date | None) -> tuple[datetime | None, datetime | None]:
    """A closed range of UTC days → `since`/`until` datetimes (the whole last day included).

    The window `metrics` answers from its per-day tables (whole UTC days); a
    missing end leaves that side open.

    >>> day_window(date(2025, 1, 1), date(2025, 1, 2))[1].isoformat()
    '2025-01-02T23:59:59.999999+00:00'
    """
    since = datetime.combine(first, time.min, timezone.utc) if first else None
    until = datetime.combine(last, time.max, timezone.utc) if last else None
    return since, until


def metadata_pointer(key: str) -> str:
    """The JSON pointer of a top-level metadata key (RFC 6901: `~` → `~0`, `/` → `~1`).

    >>> metadata_pointer("a/b~c")
    '/a~1b~0c'
    """
    return "/" + key.replace("~", "~0").replace("/", "~1")


def _one_of(column: str, values: tuple[str | None, ...], params: list) -> str:
    """`column` is one of `values`, None among them matching NULL (the list's parameter appended)."""
    named = [v for v in values if v is not None]
    clauses = [f"{column} IN (SELECT unnest(?))"] if named else []
    params.extend([named] if named else [])
    clauses += [f"{column} IS NULL"] if None in values else []
    return " OR ".join(clauses)


@dataclass(frozen=True)
class Filters:
    """Which conversations (and messages) a question is about.

    - `tenants` / `sub_tenants`: keep threads whose tenant / sub-tenant is one of these, None
      among them keeping the threads that have none (a thread id outside the key pattern);
    - `since` / `until`: keep threads active in the window (inclusive), and, for
      message-level figures, messages whose `ts` is in it;
    - `text`: keep threads with a message whose content contains it (case-insensitive, any
      script: `analytics.text_match`, the rule Search uses);
    - `thread_ids`: keep only these threads (empty: no restriction);
    - `within`: keep only these threads when it is not None, an empty tuple keeping none
      (a set computed elsewhere, e.g. the threads carrying a review label);
    - `stale`: keep only threads whose transcript is not their latest root checkpoint's
      (`threads.stale_reason`: the latest did not decode; docs/contract.md);
    - `models`: keep threads with a message naming one of these models (`messages.model`);
    - `metadata`: `(key, value)` pairs, all of which the metadata of the thread's transcript
      checkpoint (`threads.transcript_checkpoint_id`) holds: its top-level `key` as text
      (`json_extract_string`: a number 1.1 is `"1.1"`, a boolean `"true"`), e.g.
      `(("app_version", "1.1"),)`;
    - `outcomes`: keep threads whose outcome is one of these (`conversation_signals.outcome`,
      docs/outcomes.md);
    - `signals`: keep threads on which any of these signals fired (`conversation_signals`).

    The last two read the table a load writes; a name outside `OUTCOMES` / `SIGNALS` is refused.

    >>> Filters(tenants=("acme",)).thread_where()
    ('(t.tenant_id IN (SELECT unnest(?)))', [['acme']])
    >>> Filters(tenants=("acme", None)).thread_where()
    ('(t.tenant_id IN (SELECT unnest(?)) OR t.tenant_id IS NULL)', [['acme']])
    """

    tenants: tuple[str | None, ...] = ()
    sub_tenants: tuple[str | None, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    text: str | None = None
    thread_ids: tuple[str, ...] = ()
    within: tuple[str, ...] | None = None
    stale: bool = False
    models: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()
    outcomes: tuple[str, ...] = ()
    signals: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "since", as_utc(self.since))
        object.__setattr__(self, "until", as_utc(self.until))
        for name in ("tenants", "sub_tenants", "thread_ids", "models", "outcomes", "signals"):
            object.__setattr__(self, name, tuple(getattr(self, name) or ()))
        object.__setattr__(self, "metadata", tuple((str(k), str(v)) for k, v in (self.metadata or ())))
        for name, known in (("outcomes", OUTCOMES), ("signals", SIGNALS)):
            unknown = [v for v in getattr(self, name) if v not in known]
            if unknown:
                raise BadRequest(f"unknown {name} {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
        if self.within is not None:
            object.__setattr__(self, "within", tuple(self.within))

    def thread_where(self, alias: str = "t", grams: str | None = None) -> tuple[str, list]:
        """SQL predicate over a `threads` row aliased `alias`, with its parameters. `grams`: the
        text index's test for the text (`analytics.text_index.grams_where`), on a connection whose
        index is current: the text is then looked for only in the messages it keeps."""
        return self._where(alias, {}, grams)

    def metrics_where(self, alias: str = "cm") -> tuple[str, list]:
        """The same threads as `thread_where`, as a predicate over their `conversation_metrics` row
        (which copies every `threads` column a condition reads: `THREAD_COLUMNS_IN_METRICS`), no join.

        >>> Filters(since=datetime(2025, 1, 1)).metrics_where()[0]
        '(cm.last_checkpoint_ts >= ?)'
        """
        return self._where(alias, THREAD_COLUMNS_IN_METRICS)

    def _where(self, alias: str, names: dict[str, str], grams: str | None = None) -> tuple[str, list]:
        """The predicate, each `threads` column named as the row names it (`names`; else its own name)."""
        first_ts, last_ts = (f"{alias}.{names.get(c, c)}" for c in ("first_ts", "last_ts"))
        clauses: list[str] = []
        params: list = []
        for column, values in (("tenant_id", self.tenants), ("sub_tenant_id", self.sub_tenants)):
            if values:
                clauses.append(_one_of(f"{alias}.{column}", values, params))
        if self.thread_ids:
            clauses.append(f"{alias}.thread_id IN (SELECT unnest(?))")
            params.append(list(self.thread_ids))
        if self.within is not None:
            clauses.append(f"{alias}.thread_id IN (SELECT unnest(?::VARCHAR[]))")
            params.append(list(self.within))
        if self.stale:
            clauses.append(f"{alias}.stale_reason IS NOT NULL")  # (the same name in `conversation_metrics`)
        if self.outcomes:
            clauses.append(f"{alias}.thread_id IN (SELECT thread_id FROM conversation_signals "
                           "WHERE outcome IN (SELECT unnest(?::VARCHAR[])))")
            params.append(list(self.outcomes))
        if self.signals:
            # Column names from SIGNALS (checked in __post_init__), never the caller's text.
            fired = " OR ".join(SIGNALS[SIGNALS.index(s)] for s in self.signals)
            clauses.append(f"{alias}.thread_id IN (SELECT thread_id FROM conversation_signals WHERE {fired})")
        if self.since is not None:
            clauses.append(f"{last_ts} >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"{first_ts} <= ?")
            params.append(self.until)
        if self.models:
            clauses.append(f"{alias}.thread_id IN (SELECT thread_id FROM thread_model_metrics WHERE model IN (SELECT unnest(?)))")
            params.append(list(self.models))
        for key, value in self.metadata:
            from analytics.masking import shown_whole_sql

            # A JSON pointer names the key whatever characters it holds (`~` and `/` escaped). Under
            # masking a key or value holding a personal value matches nothing (no guess confirmed).
            clauses.append(
                f"EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = {alias}.thread_id AND c.checkpoint_ns = '' "
                f"AND c.checkpoint_id = {alias}.transcript_checkpoint_id AND json_extract_string(c.metadata, ?) = ? "
                f"AND {shown_whole_sql('? || chr(10) || json_extract_string(c.metadata, ?)')})")
            params.extend([metadata_pointer(key), value, key, metadata_pointer(key)])
        if self.text:
            # The one rule of finding a text (analytics.text_match), as Search finds it.
            if grams is None:
                clauses.append(f"{alias}.thread_id IN (SELECT thread_id FROM messages WHERE {contains_sql('content')})")
            else:  # (materialised: the content of the rows the index keeps, and no other, is read)
                clauses.append(f"{alias}.thread_id IN (WITH candidates AS MATERIALIZED (SELECT thread_id, content "
                               f"FROM search_text WHERE {grams}) SELECT thread_id FROM candidates "
                               f"WHERE {contains_sql('content')})")
            params.extend(contains_params(self.text))
        if not clauses:
            return "TRUE", []
        return " AND ".join(f"({c})" for c in clauses), params

    def key_parts(self) -> tuple[str, ...]:
        """The thread-key columns whose values alone decide which threads pass, when they do:
        `tenants` / `sub_tenants` and no other condition; else `()`.

        Each such condition is on its own column, so a row of any table carrying these columns
        (the thread's own key parts) belongs to a passing thread exactly when each of its values
        is one of the passing threads' values: a filter on the row's columns, not a join on its
        thread id.

        >>> Filters(tenants=("acme",)).key_parts(), Filters(tenants=("acme",), text="x").key_parts()
        (('tenant_id',), ())
        """
        if (self.since is not None or self.until is not None or self.text or self.thread_ids or self.within is not None
                or self.stale or self.models or self.metadata or self.outcomes or self.signals
                or None in self.tenants or None in self.sub_tenants):
            return ()  # (a NULL compares to no value: "no tenant" is a condition on the thread)
        return tuple(c for c, values in (("tenant_id", self.tenants), ("sub_tenant_id", self.sub_tenants)) if values)

    def threads_sql(self) -> tuple[str, list]:
        """The `threads` rows that pass, as a query (alias `t` inside).

        >>> Filters().threads_sql()
        ('SELECT t.* FROM threads t WHERE TRUE', [])
        """
        where, params = self.thread_where("t")
        return f"SELECT t.* FROM threads t WHERE {where}", params

    def message_where(self, alias: str = "m") -> tuple[str, list]:
        """SQL predicate over a `messages` row: its thread passes and its ts is in the window.

        >>> Filters().message_where("m")
        ('(TRUE)', [])
        """
        thread_sql, params = self.thread_where("t")
        window, window_params = self._window_clauses(f"{alias}.ts")
        # Every message's thread is a `threads` row (as analytics.metrics assumes): without a thread
        # condition, no semi-join of every message with every thread (1.4 s of a search at 10M messages).
        passes = ["TRUE"] if thread_sql == "TRUE" else [f"{alias}.thread_id IN (SELECT t.thread_id FROM threads t WHERE {thread_sql})"]
        clauses = [*passes, *window]
        return " AND ".join(f"({c})" for c in clauses), [*params, *window_params]

    def window_where(self, column: str) -> tuple[str, list]:
        """SQL predicate: `column` within [since, until], inclusive (NULL is outside any window).

        >>> Filters(since=datetime(2025, 1, 1, tzinfo=timezone.utc)).window_where("m.ts")[0]
        'TRUE AND m.ts >= ?'
        """
        clauses, params = self._window_clauses(column)
        return " AND ".join(["TRUE", *clauses]), params

    def _window_clauses(self, column: str) -> tuple[list[str], list]:
        clauses, params = [], []
        if self.since is not None:
            clauses.append(f"{column} >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"{column} <= ?")
            params.append(self.until)
        return clauses, params


@dataclass(frozen=True)
class Range:
    """`column` within [low, high], inclusive; a None end is open. A thread whose value is
    NULL (e.g. no latency pair) is outside every range that has an end.

    >>> range_where((Range("tool_calls", 1, None),), ("tool_calls",), "cm")
    ('(cm.tool_calls >= ?)', [1])
    """

    column: str
    low: float | None = None
    high: float | None = None


def range_where(ranges: tuple[Range, ...], known: tuple[str, ...], alias: str) -> tuple[str, list]:
    """SQL predicate for `ranges` over a row aliased `alias`; a column outside `known` is refused.

    Column names come from `known` (a code constant), never from the caller's text.
    """
    clauses: list[str] = []
    params: list = []
    for r in ranges:
        if r.column not in known:
            raise BadRequest(f"cannot filter on {r.column!r}; range columns: {', '.join(known)}")
        column = known[known.index(r.column)]
        for value, op in ((r.low, ">="), (r.high, "<=")):
            if value is not None:
                clauses.append(f"{alias}.{column} {op} ?")
                params.append(value)
    if not clauses:
        return "TRUE", []
    return "(" + " AND ".join(clauses) + ")", params
