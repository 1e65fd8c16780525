"""DeltaChannel threads (contract §2.3, §7.16): the messages channel rebuilt as the runtime rebuilds it.

- `replay`: the rebuild itself, from a thread's checkpoints and its `messages` writes, with
  the reducer LangGraph ships for messages (its docstring has the rules);
- `read`: what the rebuild needs, read from each kind of store (SQLite, Postgres and its exports).

This package is the public face of `replay`: a reader asks `marked(bundle)` of every thread
and, for the rare thread it marks, calls `read`'s function for its kind.

>>> from loaders import delta
>>> delta.MARK
'counters_since_delta_snapshot'
"""

from __future__ import annotations

from loaders.delta.replay import (  # noqa: F401
    CHANNEL, FAILED, MARK, NOTHING, OVERWRITE, REMOVE_ALL, DeltaCheckpoint, DeltaWrite, apply, marked, rebuild,
    stored_value,
)
