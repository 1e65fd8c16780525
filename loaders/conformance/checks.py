"""The checks of the source conformance kit: what every source kind must do, as functions any suite runs.

Every check takes a `Case` (a spec of one kind holding the conformance graphs,
`loaders.conformance.write_graphs`) and a `Context`: every other case (whose
specs the kind must not claim) and the reference database (the graphs'
SqliteSaver store, loaded). A kind conforms when all of `CHECKS` pass. What
they hold a kind to:

- declarations: a `Source` with kind, label, options class; its reader's
  capabilities are what it implements, and the others raise `NotSupported`;
- detect: true on its specs (auto-detected as its kind), false on every other kind's;
- describe: no secret of the spec in anything shown or stored;
- options: an option the kind does not take is a `SourceError` naming the kind;
  `threads` selects;
- reader: threads in id order, each once, no errors; `thread_count` and
  `checkpoint_keys` agree with `threads()`; `only` selects; `key_digests` (if
  declared) is the pipeline's text of the keys;
- split (if declared): the ranges cover every thread once, in order, read
  through `narrow` on one reader (and through `handoff`, if declared);
- load: the tables (threads, checkpoints, messages, message_versions, subgraph_messages,
  message_events, load_errors) equal the reference's; an incremental reload of
  the unchanged source reads nothing and changes nothing; a split load across
  two workers gives the same tables.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

try:
    import pytest
except ImportError as exc:  # a test kit: it runs under pytest
    raise ImportError(
        "the source conformance kit runs under pytest: pip install 'transcript-lens[conformance]'"
    ) from exc

import loaders
from loaders import Capabilities, NotSupported, Source, SourceError, SourceOptions, SourceReader
from loaders.conformance.tables import assert_same_tables, rows


@dataclass(frozen=True)
class Case:
    """A spec of one kind that holds the conformance graphs."""

    name: str
    kind: str
    spec: str
    secrets: tuple[str, ...] = ()  # text of the spec that must never be shown or stored
    detected: bool = True  # False: only read with its kind named (a keyword DSN)
    # The tables a load must give when the kind's saver stores other values than SqliteSaver
    # does (the Redis savers drop config keys from metadata); None: the context's reference.
    reference_db: Path | None = None

    @property
    def source(self) -> Source:
        return loaders.sources()[self.kind]

    def open(self, options=None) -> SourceReader:
        return self.source.open(self.spec, options)

    def load(self, db: Path, **kw) -> loaders.LoadSummary:
        return loaders.load(self.spec, db, kind=None if self.detected else self.kind, **kw)


@dataclass
class Context:
    """What a check compares a case with, and where it works."""

    cases: list[Case]  # cases of every kind: a kind must refuse the specs of the others
    reference_db: Path  # the graphs' SqliteSaver store, loaded
    tmp_path: Path
    monkeypatch: pytest.MonkeyPatch

    def reference_threads(self) -> list[str]:
        return sorted(r["thread_id"] for r in rows(self.reference_db, "SELECT thread_id FROM threads"))


def force_split(monkeypatch: pytest.MonkeyPatch, reader_class: type[SourceReader], fork: bool = True) -> None:
    """Split small stores anyway (`split(n)` refuses under `min_bytes` of work); forked workers inherit it,
    and what else the test patched. Forked always: a process that still runs other threads (a Dask
    cluster's, left by an earlier test in the same pytest worker) would start a fork server, whose
    workers see none of it (the damaged-page tests failed so after test_distributed); `fork=False`:
    as the loader chooses."""
    from loaders import jobs

    split = reader_class.split
    monkeypatch.setattr(reader_class, "split", lambda self, n, min_bytes=0: split(self, n, min_bytes=0))
    if fork:
        monkeypatch.setattr(jobs, "mp_context", lambda: jobs.mp.get_context("fork"))


def key_digest(keys: list[tuple[str, str]]) -> str:
    """`loaders.digests` key text of one thread's `(checkpoint_ns, checkpoint_id)` keys."""
    return "".join(f"{len(ns)}:{ns}{len(cid)}:{cid}" for ns, cid in sorted(keys))


_CAPABILITY_CALLS: dict[str, Callable[[SourceReader], object]] = {
    "split": lambda r: r.split(2),
    "handoff": lambda r: r.handoff(),
    "key_digests": lambda r: list(r.key_digests()),
}


def check_declarations(case: Case, ctx: Context) -> None:
    source = case.source
    assert isinstance(source, Source) and source.kind == case.kind
    assert isinstance(source.label, str) and source.label.strip()
    assert issubclass(source.options_class, SourceOptions)
    # Upload endings: bare, lower-case (the app's upload widget offers them as they are).
    assert all(isinstance(s, str) and s and s == s.lower() and "." not in s for s in source.upload_suffixes)
    if Path(case.spec).is_file() and Path(case.spec).suffix:
        assert Path(case.spec).suffix[1:] in source.upload_suffixes, "a one-file spec its kind cannot take as an upload"
    with case.open() as reader:
        assert isinstance(reader, SourceReader)
        assert isinstance(reader.capabilities, Capabilities)
        for name in (f.name for f in fields(Capabilities)):
            implemented = getattr(type(reader), name) is not getattr(SourceReader, name)
            assert implemented == getattr(reader.capabilities, name), name
            if not implemented:
                with pytest.raises(NotSupported):
                    _CAPABILITY_CALLS[name](reader)
        if not reader.capabilities.split:
            with pytest.raises(NotSupported):
                reader.narrow((None, None))


def check_detect(case: Case, ctx: Context) -> None:
    source = case.source
    if case.detected:
        assert source.detect(case.spec)
        assert loaders.resolve(case.spec).kind == case.kind
    for other in ctx.cases:
        if other.kind != case.kind:
            assert not source.detect(other.spec), other.name


def check_describe(case: Case, ctx: Context) -> None:
    source = case.source
    shown = [
        source.describe(case.spec), source.short_name(case.spec), source.redact(f"failed: {case.spec}", case.spec),
        loaders.describe(case.spec, case.kind), loaders.redact(f"failed: {case.spec}", case.spec),
    ]
    with case.open() as reader:
        shown.append(reader.describe())
    for text in shown:
        for secret in case.secrets:
            assert secret not in text


def check_options(case: Case, ctx: Context) -> None:
    source = case.source
    assert source.options() == source.options_class()
    with pytest.raises(SourceError, match=f"the {case.kind} source kind takes no option no_such_option"):
        source.options({"no_such_option": 1})
    for other in loaders.sources().values():
        for name in set(other.options_class.names()) - set(source.options_class.names()):
            with pytest.raises(SourceError, match=f"the {case.kind} source kind takes no option {name}"):
                case.load(ctx.tmp_path / "refused.duckdb", options={name: "x"})
    assert not (ctx.tmp_path / "refused.duckdb").exists()
    wanted = ctx.reference_threads()[1:3]
    with case.open({"threads": (*wanted, "no:such:thread")}) as reader:
        assert [b.thread_id for b in reader.threads()] == wanted
        assert reader.thread_count() in (None, len(wanted))


def check_reader(case: Case, ctx: Context) -> None:
    with case.open() as reader:
        bundles = list(reader.threads())
        ids = [b.thread_id for b in bundles]
        assert ids == ctx.reference_threads()  # in id order, each once
        assert [e for b in bundles for e in b.errors] == []
        assert reader.thread_count() in (None, len(ids))
        keys = sorted((c.thread_id, c.checkpoint_ns, c.checkpoint_id) for b in bundles for c in b.checkpoints)
        assert sorted(reader.checkpoint_keys()) == keys
        some = frozenset(ids[2:5])
        assert [b.thread_id for b in reader.threads(some)] == sorted(some)
        assert list(reader.threads(frozenset())) == []
        if reader.capabilities.key_digests:
            per_thread: dict[str, list] = {}
            for t, ns, cid in keys:
                per_thread.setdefault(t, []).append((ns, cid))
            assert dict(reader.key_digests()) == {t: key_digest(k) for t, k in per_thread.items()}


def check_split(case: Case, ctx: Context) -> None:
    with case.open() as reader:
        if not reader.capabilities.split:
            return
        everything = [b.thread_id for b in reader.threads()]
        ranges = reader.split(3, min_bytes=0)
        assert 1 < len(ranges) <= 3
        assert ranges[0][0] is None and ranges[-1][1] is None
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        readers = [reader]
        if reader.capabilities.handoff and (handoff := reader.handoff()) is not None:
            readers.append(pickle.loads(pickle.dumps(handoff))(case.source.options()))
        try:
            for one in readers:  # as a worker does: one reader, its ranges one after another
                parts = []
                for r in ranges:
                    one.narrow(r)
                    parts.append([b.thread_id for b in one.threads()])
                    assert one.thread_count() in (None, len(parts[-1]))
                assert all(parts) and [t for p in parts for t in p] == everything
        finally:
            for one in readers[1:]:
                one.close()


def _assert_no_secret(case: Case, db: Path) -> None:
    for row in rows(db, "SELECT * FROM loads"):
        for secret in case.secrets:
            assert all(secret not in str(v) for v in row.values())


def check_load(case: Case, ctx: Context) -> None:
    db = ctx.tmp_path / "full.duckdb"
    summary = case.load(db, workers=1)
    assert (summary.source_kind, summary.errors, summary.mode) == (case.kind, 0, "full")
    assert_same_tables(db, case.reference_db or ctx.reference_db, with_errors=True, json_columns=("metadata",))
    _assert_no_secret(case, db)
    totals: list = []
    again = case.load(db, incremental=True, workers=1, progress=lambda done, total: totals.append(total))
    # Nothing changed. A source with a change token (`SourceReader.change_token`) finds that
    # out before reading anything; else only the threads waiting on a human are read again
    # (their pending interrupt can change without a new checkpoint; loaders.pipeline._changed_threads).
    with case.open() as reader:
        tokened = reader.change_token() is not None
    waiting = rows(db, "SELECT count(*) AS n FROM threads WHERE interrupt_pending")[0]["n"]
    assert again.mode == "incremental"
    assert (again.changed, totals) == (0, []) if tokened else totals[0] == waiting == again.changed
    assert_same_tables(db, case.reference_db or ctx.reference_db, with_errors=True, json_columns=("metadata",))


def check_split_load(case: Case, ctx: Context) -> None:
    with case.open() as reader:
        if not reader.capabilities.split:
            return
        force_split(ctx.monkeypatch, type(reader))
    db = ctx.tmp_path / "split.duckdb"
    case.load(db, workers=2)
    assert_same_tables(db, case.reference_db or ctx.reference_db, with_errors=True, json_columns=("metadata",))


CHECKS = [
    check_declarations, check_detect, check_describe, check_options, check_reader, check_split, check_load,
    check_split_load,
]


def check_name(check: Callable) -> str:
    """A check's name without its prefix, for test ids: `check_load` → `load`."""
    return check.__name__.removeprefix("check_")
