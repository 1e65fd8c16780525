"""A canary: importing this package has side effects, and so does calling anything in it.

Hostile checkpoint payloads name this package (`tests.loaders.canary_pkg`) as
the module of a class or callable. A decoder that imports what a payload names
(LangGraph's default `JsonPlusSerializer` does, contract §6.2) fires the canary:

- on import: sets ``os.environ["TL_CANARY_IMPORTED"] = "1"`` and creates the
  file ``imported-<pid>`` in the folder named by ``$TL_CANARY_DIR`` (if set);
- on a call of ``fire`` or construction of ``Canary``: creates ``called-<pid>``.

The tests assert that no marker exists, that ``sys.modules`` never gains this
package and that the environment variable stays unset after loading stores
full of such payloads, and (to prove the payloads are real) that LangGraph's
default decoder DOES fire it.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_DIR = "TL_CANARY_DIR"
ENV_IMPORTED = "TL_CANARY_IMPORTED"


def _mark(kind: str) -> None:
    folder = os.environ.get(ENV_DIR)
    if folder:
        Path(folder, f"{kind}-{os.getpid()}").write_text(kind)


os.environ[ENV_IMPORTED] = "1"
_mark("imported")


def fire(*args, **kwargs):
    """Any call leaves a marker."""
    _mark("called")
    return {"fired": True}


class Canary:
    """Any construction leaves a marker (also via pydantic-style `construct` / `model_construct`)."""

    def __init__(self, *args, **kwargs):
        _mark("called")

    @classmethod
    def construct(cls, *args, **kwargs):
        return cls()

    @classmethod
    def model_construct(cls, *args, **kwargs):
        return cls()

    @classmethod
    def fromisoformat(cls, value):
        return cls()
