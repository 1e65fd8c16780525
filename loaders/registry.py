"""The one place sources are registered.

Built-in sources register here exactly as an extension would: call
`register(source)`, or expose an entry point in the group
`transcript_lens.sources` whose object is a `Source`.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from loaders.records import Source, SourceError

_SOURCES: dict[str, Source] = {}
_entry_points_loaded = False


def register(source: Source) -> Source:
    """Make a source kind available to `load()` and the CLI.

    >>> register(SqliteSource())  # doctest: +SKIP
    """
    _SOURCES[source.kind] = source
    return source


def sources() -> dict[str, Source]:
    """Every registered source, by kind, in registration order."""
    global _entry_points_loaded
    if not _entry_points_loaded:
        _entry_points_loaded = True
        for ep in entry_points(group="transcript_lens.sources"):
            register(ep.load())
    return dict(_SOURCES)


def resolve(spec: str, kind: str | None = None) -> Source:
    """The source for `spec`: the named kind, or the first whose `detect` accepts it."""
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
    raise SourceError(
        f"{spec}: not a recognised checkpoint source (expected one of: {', '.join(known)})"
    )
