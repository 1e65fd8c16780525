"""`import analytics` and a whole load stay free of pandas until a DataFrame is asked for.

A load through `transcript_lens.load` imports analytics for its derived tables; pandas there
would cost the loading process CPU its workers need (analytics/_pandas.py).
Each check runs in a fresh interpreter: this one has imported pandas long ago.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_LOAD_THEN_READ = """
import json, sys
import analytics, analytics.metrics, analytics.resume, analytics.contents, analytics.scope, analytics.reporting.cli, analytics.reporting.kinds, analytics.observed
import transcript_lens
after_import = "pandas" in sys.modules
summary = transcript_lens.load(sys.argv[1], sys.argv[2], workers=2)
after_load = "pandas" in sys.modules
con = analytics.connect(sys.argv[2])
derived = con.execute("SELECT count(*) FROM conversation_metrics").fetchall()[0][0]
thread = con.execute("SELECT thread_id FROM messages ORDER BY thread_id LIMIT 1").fetchall()[0][0]
frame = analytics.read(con, thread)
print(json.dumps({"after_import": after_import, "after_load": after_load, "threads": summary.threads,
                  "derived": derived, "frame": type(frame).__module__, "rows": len(frame),
                  "after_read": "pandas" in sys.modules}))
"""


def test_importing_analytics_and_loading_do_not_import_pandas_and_reads_still_give_dataframes(sqlite_store, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_THEN_READ, str(sqlite_store.path), str(tmp_path / "lazy.duckdb")],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["after_import"] is False
    assert got["after_load"] is False
    # The load did write the tables whose SQL it took from analytics ...
    assert got["threads"] > 0 and got["derived"] == got["threads"]
    # ... and a read still answers with a pandas DataFrame, importing pandas then.
    assert got["frame"].startswith("pandas") and got["rows"] > 0
    assert got["after_read"] is True
