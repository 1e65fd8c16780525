"""The one place sources are registered, and where the app asks about them.

Built-in sources register here exactly as an extension would: call
`register(source)` with a `loaders.source.Source`, or expose an entry point
in the group `transcript_lens.sources` naming one (or its class). The
built-ins are named below the same way (`module:Class`) and loaded with the
entry points on the first `sources()` / `resolve()`, so importing the package
(for `loaders.catalog`, say) opens no source module.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from loaders.records import SourceError
from loaders.source import Source, SourceOptions

_SOURCES: dict[str, Source] = {}
_entry_points_loaded = False
# Detection order: the first kind whose `detect` accepts a spec is the one.
BUILTINS = (
    "loaders.sqlite.reader:SqliteSource",
    "loaders.postgres_source:PostgresSource",
    "loaders.pg_export:PgCsvSource",
    "loaders.pg_export:PgDumpSource",
    "loaders.mysql_source:MysqlSource",
    "loaders.mysql_source:MysqlDumpSource",
    "loaders.redis.source:RedisSource",
    "loaders.mongo:MongoSource",
    "loaders.mongo:MongoDumpSource",
)


def _load(target: str) -> object:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def register(source: Source) -> Source:
    """Make a source kind available to `load()`, the CLI and the app (a kind registered
    again is replaced).

    >>> register(SqliteSource())  # doctest: +SKIP
    """
    if not isinstance(source, Source):
        raise TypeError(f"{source!r} is not a loaders.source.Source (the contract a source kind implements)")
    for attr in ("kind", "label"):
        value = getattr(source, attr, None)
        if not isinstance(value, str) or not value.strip():
            raise TypeError(f"{type(source).__name__}.{attr} must be a non-empty string")
    if not (isinstance(source.options_class, type) and issubclass(source.options_class, SourceOptions)):
        raise TypeError(f"{type(source).__name__}.options_class must be a SourceOptions subclass")
    _SOURCES[source.kind] = source
    return source


def sources() -> dict[str, Source]:
    """Every registered source, by kind, in registration order."""
    global _entry_points_loaded
    if not _entry_points_loaded:
        _entry_points_loaded = True
        # Kinds registered before this first call keep their place after the built-ins
        # (a built-in's kind registered again is replaced, as `register` says).
        early = dict(_SOURCES)
        _SOURCES.clear()
        found = [_load(target) for target in BUILTINS]
        found += [ep.load() for ep in entry_points(group="transcript_lens.sources")]
        for item in found:
            register(item() if isinstance(item, type) else item)  # a Source, or its class
        for source in early.values():
            register(source)
    return dict(_SOURCES)


def resolve(spec: str, kind: str | None = None) -> Source:
    """The source for `spec`: the named kind, or the first whose `detect` accepts it.

    A spec no kind accepts is a `SourceError`: `<path>: no such file` for a path that does not exist.
    """
    known = sources()
    if kind is not None:
        if kind not in known:
            raise SourceError(f"unknown source kind {kind!r} (known: {', '.join(known)})")
        return known[kind]
    for source in known.values():
        try:
            if source.detect(spec):
                return source
        except OSError:
            continue
    if "://" not in spec and not os.path.lexists(spec):
        # A path (no kind's URL): the likeliest mistake is a typo, so say that, not "unrecognised".
        raise SourceError(f"{redact(spec, spec)}: no such file")
    raise SourceError(
        f"{redact(spec, spec)}: not a recognised checkpoint source (expected one of: {', '.join(known)})"
    )


def redact(text: str, spec: str) -> str:
    """`text` with every secret that any registered kind finds in `spec` replaced by `***`
    (for a spec no kind claims, or a message that may quote it).

    >>> import loaders
    >>> loaders.redact("host=db password=s3cret: bad", "host=db password=s3cret")
    'host=db password=***: bad'
    """
    for source in sources().values():
        text = source.redact(text, spec)
    return text


def describe(spec: str, kind: str | None = None) -> str:
    """`spec` as its kind shows it (a DSN's password masked); a spec of no known kind
    with every secret any kind finds in it masked.

    >>> import loaders
    >>> loaders.describe("postgresql://app:s3cret@db/agents")
    'postgresql://app:***@db/agents'
    """
    try:
        source = resolve(spec, kind)
    except SourceError:
        return redact(spec, spec)
    return source.describe(spec)
