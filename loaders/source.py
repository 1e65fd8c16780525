"""The source contract: what a kind of checkpoint store must provide to be loaded.

A source kind is a `Source` (how to recognise a spec, how to show it without
secrets, which options it takes, how to open it) and the `SourceReader` it
opens (threads in id order, one at a time). Optional reader capabilities are
declared in `SourceReader.capabilities`, never probed: the pipeline asks the
declaration, and a method that is not declared raises `NotSupported`.

A new kind is one module (a `Source` and its reader) and one registration
(`loaders.register(MySource())`, or an entry point in `transcript_lens.sources`);
the built-ins register the same way. `tests/loaders/conformance.py` is the kit
every kind passes; docs/sources.md walks through an example.

>>> class Dumps(Source):  # doctest: +SKIP
...     kind, label = "dumps", "a folder of checkpoint dumps"
...     def detect(self, spec): ...
...     def open_reader(self, spec, options): return DumpsReader(spec, options)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from loaders.records import SourceError, ThreadBundle

# Below this much work a split load costs more (starting workers) than it saves.
SPLIT_MIN_BYTES = 32 << 20


class NotSupported(NotImplementedError):
    """A reader was asked for a capability it does not declare."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """The optional methods a reader implements; each field is named after its method.

    - `split`: `split(n)` cuts the threads into id ranges and `narrow(range)` then
      reads one of them, so `n` worker processes can share a load;
    - `handoff`: `handoff()` tells a worker how to open what this reader already
      staged or copied (None: the worker opens the source itself);
    - `key_digests`: `key_digests()` gives one key text per thread (cheaper than
      `checkpoint_keys()` for incremental loads; see `loaders.digests`).
    """

    split: bool = False
    handoff: bool = False
    key_digests: bool = False

    def declared(self) -> list[str]:
        """
        >>> Capabilities(split=True).declared()
        ['split']
        """
        return [f.name for f in fields(self) if getattr(self, f.name)]


class ThreadRange(NamedTuple):
    """`[lo, hi)` over thread ids (None: unbounded), one worker's share of a split load."""

    lo: str | None = None
    hi: str | None = None

    def contains(self, thread_id: str) -> bool:
        """
        >>> ThreadRange("b", "d").contains("c"), ThreadRange("b").contains("a")
        (True, False)
        """
        return (self.lo is None or thread_id >= self.lo) and (self.hi is None or thread_id < self.hi)

    def sql(self, column: str = "thread_id") -> tuple[list[str], list]:
        """The range as SQL predicates with `?` parameters.

        >>> ThreadRange("b", None).sql()
        (['thread_id >= ?'], ['b'])
        """
        clauses, params = [], []
        if self.lo is not None:
            clauses.append(f"{column} >= ?")
            params.append(self.lo)
        if self.hi is not None:
            clauses.append(f"{column} < ?")
            params.append(self.hi)
        return clauses, params


@dataclass(frozen=True, slots=True)
class SourceOptions:
    """What a caller may ask of every source kind. A kind that takes more subclasses
    this (`loaders.pg_rows.PostgresOptions`) and names it in `Source.options_class`."""

    threads: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "threads", tuple(self.threads))

    def wanted(self, only: frozenset[str] | None = None) -> list[str] | None:
        """The thread subset to read: `threads` intersected with the pipeline's `only`; None = all.

        >>> SourceOptions(threads=("a", "b")).wanted(frozenset({"b", "c"}))
        ['b']
        """
        wanted = set(self.threads)
        if only is not None:
            wanted = (wanted & only) if wanted else set(only)
        elif not wanted:
            return None
        return sorted(wanted)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """
        >>> SourceOptions.names()
        ('threads',)
        """
        return tuple(f.name for f in fields(cls))


class OptionSpec(NamedTuple):
    """One source option as the CLI and the app offer it: declared once, on the kind's
    options class (a dataclass field's `metadata`: label, help, placeholder)."""

    name: str
    label: str
    help: str
    placeholder: str
    kinds: tuple[str, ...]  # the registered kinds that take it


def option_specs(kinds: Mapping[str, Source]) -> list[OptionSpec]:
    """Every option beyond `threads` that some kind in `kinds` takes, in declaration order.

    >>> from loaders import sources
    >>> [o.name for o in option_specs(sources())]
    ['since', 'schema', 'key_prefix', 'database', 'checkpoint_collection', 'writes_collection']
    """
    found: dict[str, tuple[Any, list[str]]] = {}
    for kind, source in kinds.items():
        for f in fields(source.options_class):
            if f.name in SourceOptions.names():
                continue
            found.setdefault(f.name, (f, []))[1].append(kind)
    return [
        OptionSpec(name, f.metadata.get("label", name), f.metadata.get("help", ""), f.metadata.get("placeholder", ""),
                   tuple(kinds_of))
        for name, (f, kinds_of) in found.items()
    ]


def _given(options: SourceOptions) -> dict[str, Any]:
    """The fields of `options` that differ from their defaults (what a caller asked for)."""
    out = {}
    for f in fields(options):
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        value = getattr(options, f.name)
        if value != default:
            out[f.name] = value
    return out


class SourceReader(ABC):
    """An opened source. Readers stream: one thread in memory at a time.

    Subclasses implement the abstract methods, and declare in `capabilities`
    the optional ones they implement (`split` with `narrow`, `handoff`,
    `key_digests`); declaring one without implementing it, or the reverse, is
    a TypeError when the class is defined.
    """

    capabilities: ClassVar[Capabilities] = Capabilities()
    # The share of threads `threads()`, `thread_count()` and `split()` read (`narrow`).
    thread_range: ThreadRange = ThreadRange()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = set(cls.capabilities.declared())
        for name in (f.name for f in fields(Capabilities)):
            implemented = getattr(cls, name) is not getattr(SourceReader, name)
            if implemented != (name in declared):
                what = "declares" if name in declared else "implements"
                lacks = "does not implement" if name in declared else "does not declare"
                raise TypeError(f"{cls.__qualname__} {what} {name}() but {lacks} it (see SourceReader.capabilities)")

    @abstractmethod
    def describe(self) -> str:
        """The source as it may be shown and stored (no secrets)."""

    @abstractmethod
    def thread_count(self) -> int | None:
        """How many threads `threads()` will yield, if cheap to know (for progress)."""

    @abstractmethod
    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        """Every `(thread_id, checkpoint_ns, checkpoint_id)` that `threads()` loads, for incremental loads."""

    @abstractmethod
    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        """Yield every thread (or only these) of `thread_range`, ordered by thread id."""

    @abstractmethod
    def close(self) -> None:
        """Release what `open` took (connections, staged copies); safe to call twice."""

    # --- optional: declared in `capabilities` --------------------------------------

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        """Up to `n` thread-id ranges `[lo, hi)` of about equal work, covering every
        thread once, in order; `[(None, None)]` when under `min_bytes` of work."""
        raise self._unsupported("split")

    def narrow(self, thread_range: tuple[str | None, str | None]) -> None:
        """Read only the threads of one range of `split()` from now on (same snapshot)."""
        if not self.capabilities.split:
            raise self._unsupported("split")
        self.thread_range = ThreadRange(*thread_range)

    def handoff(self) -> Callable[[SourceOptions], SourceReader] | None:
        """How a worker process opens what this reader staged (picklable), or None:
        the worker opens the source itself."""
        raise self._unsupported("handoff")

    def key_digests(self) -> Iterator[tuple[str, str]]:
        """`(thread_id, key text)` per thread: `loaders.digests` key text of its checkpoint keys."""
        raise self._unsupported("key_digests")

    def change_token(self) -> str | None:
        """A text that changes whenever the source's content may have (a file's size and
        modification time, say), taken when the reader opened; None when there is no cheap
        one. An incremental load whose token equals the previous load's reads nothing more."""
        return None

    def _unsupported(self, name: str) -> NotSupported:
        return NotSupported(f"{type(self).__name__} does not declare the {name} capability")

    def __enter__(self) -> SourceReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Source(ABC):
    """A kind of source: how to recognise it, show it, and open it.

    Subclasses set `kind` (the name users pass as `--kind` and the `loads`
    table stores), `label` (what it is, for people) and, if they take options
    beyond `SourceOptions`, `options_class`; and implement `detect` and
    `open_reader`; a kind that can be one uploaded file names its endings in
    `upload_suffixes`. A spec that holds secrets (a DSN's password) overrides
    `describe` and `secrets`.
    """

    kind: ClassVar[str]
    label: ClassVar[str]
    options_class: ClassVar[type[SourceOptions]] = SourceOptions
    # File name endings (no dot) of a source of this kind that can be uploaded as one file
    # (the app's upload widget offers every registered kind's); () for a server or a folder.
    upload_suffixes: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def detect(self, spec: str) -> bool:
        """True when `spec` (a path or a DSN) is this kind of source; never raises for another kind's spec."""

    @abstractmethod
    def open_reader(self, spec: str, options: SourceOptions) -> SourceReader:
        """Open it read-only with checked options (an `options_class`); raise `SourceError`
        naming the source and what was expected."""

    def open(self, spec: str, options: SourceOptions | Mapping[str, Any] | None = None) -> SourceReader:
        """Open `spec` with `options` (see `options()`)."""
        return self.open_reader(spec, self.options(options))

    def options(self, given: SourceOptions | Mapping[str, Any] | None = None) -> SourceOptions:
        """`given` as this kind's options: an `options_class`, any `SourceOptions`, or a
        mapping (None values = not given). An option this kind does not take is an error.

        >>> from loaders import sources
        >>> sources()["sqlite"].options({"schema": "app"})
        Traceback (most recent call last):
        ...
        loaders.records.SourceError: the sqlite source kind takes no option schema (its options: threads)
        """
        cls = self.options_class
        if given is None:
            return cls()
        if type(given) is cls:
            return given
        values = _given(given) if isinstance(given, SourceOptions) else {k: v for k, v in given.items() if v is not None}
        unknown = sorted(set(values) - set(cls.names()))
        if unknown:
            raise SourceError(
                f"the {self.kind} source kind takes no option {', '.join(unknown)} (its options: {', '.join(cls.names())})"
            )
        return cls(**values)

    def describe(self, spec: str) -> str:
        """`spec` as it may be shown: what the user gave, without secrets."""
        return spec

    def secrets(self, spec: str) -> list[str]:
        """The secrets written in `spec` (a password), to scrub from messages."""
        return []

    def redact(self, text: str, spec: str) -> str:
        """`text` (an error message, say) with the secrets of `spec` replaced by `***`."""
        for secret in sorted(self.secrets(spec), key=len, reverse=True):
            text = text.replace(secret, "***")
        return text

    def short_name(self, spec: str) -> str:
        """A short name for files made from this source (no secrets): the last path part."""
        return Path(spec.rstrip("/")).name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} kind={self.kind!r}>"


__all__ = [
    "SPLIT_MIN_BYTES", "Capabilities", "NotSupported", "OptionSpec", "Source", "SourceOptions", "SourceReader",
    "ThreadRange", "option_specs",
]
