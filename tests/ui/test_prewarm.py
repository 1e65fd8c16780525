"""The background prewarm of a newly opened database ends before the interpreter does.

A daemon thread still inside DuckDB while Python finalizes aborts the process
(seen once in CI: an AppTest run printed its page, then died with SIGABRT)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

_EXIT_DURING_PREWARM = """
import atexit, json, sys, threading
from ui import cache, database
# Registered first, so it runs last (atexit is LIFO): after the prewarm's own handler.
atexit.register(lambda: print(json.dumps(sorted(t.name for t in threading.enumerate() if t.name.startswith("prewarm-")))))
cache.prewarm(database.ref(sys.argv[1]))
"""


def test_an_exit_while_prewarming_waits_for_it_and_ends_cleanly(loaded):
    proc = subprocess.run([sys.executable, "-c", _EXIT_DURING_PREWARM, str(loaded)], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []  # no prewarm thread left alive
