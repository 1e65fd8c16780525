"""Deterministic ids for generated stores.

Three sources of randomness end up on disk: message ids (``add_messages`` calls
``uuid.uuid4()``), checkpoint ids (uuid6: time + ``random.getrandbits``) and
channel versions (``random.random()``). :func:`deterministic` pins all three so a
seed reproduces a store.

Example:
    >>> with deterministic("0:acme:web:s1") as ids:
    ...     a = ids.uuid4()
    >>> with deterministic("0:acme:web:s1") as ids:
    ...     a == ids.uuid4()
    True
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from unittest import mock

import langgraph.checkpoint.base.id as _lg_id
import langgraph.graph.message as _lg_message

_ALNUM = string.ascii_letters + string.digits


class IdSource:
    """A seeded generator of uuid4s and provider-style ids.

    Example:
        >>> IdSource(1).token(6)
        'iK2ZWe'
    """

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def token(self, n: int) -> str:
        return "".join(self.rng.choice(_ALNUM) for _ in range(n))

    def hex(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))


_unseeded = IdSource()
_current: list[IdSource] = []


def current_ids() -> IdSource:
    """The active seeded source, or an unseeded one outside :func:`deterministic`."""
    return _current[-1] if _current else _unseeded


@contextmanager
def deterministic(seed: int | str) -> Iterator[IdSource]:
    """Seed ``random``, uuid6 state and ``add_messages`` ids for one block.

    The global ``random`` state is restored afterwards so callers (tests,
    hypothesis) are not affected.
    """
    ids = IdSource(f"ids:{seed}")
    saved_state = random.getstate()
    saved_v6 = _lg_id._last_v6_timestamp
    random.seed(f"random:{seed}")
    # uuid6 bumps ids past the last one it issued; a previous thread written at a
    # later simulated time would otherwise leak into this thread's ids.
    _lg_id._last_v6_timestamp = None
    fake_uuid = SimpleNamespace(uuid4=ids.uuid4, UUID=uuid.UUID)
    _current.append(ids)
    try:
        with mock.patch.object(_lg_message, "uuid", fake_uuid):
            yield ids
    finally:
        _current.remove(ids)
        random.setstate(saved_state)
        if saved_v6 is not None and (
            _lg_id._last_v6_timestamp is None or _lg_id._last_v6_timestamp < saved_v6
        ):
            _lg_id._last_v6_timestamp = saved_v6
