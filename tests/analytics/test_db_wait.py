"""`analytics.connect` waits while another process holds the database's write lock (an
incremental load editing the file in place) instead of failing at once."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest

from analytics import db as adb

_HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("BEGIN"); con.execute("INSERT INTO t VALUES (2)")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
con.execute("COMMIT"); con.close()
"""


def _holder(path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture()
def path(tmp_path):
    p = tmp_path / "x.duckdb"
    con = duckdb.connect(str(p))
    con.execute("CREATE TABLE t (i INTEGER)")
    con.execute("INSERT INTO t VALUES (1)")
    con.close()
    return p


def test_a_reader_waits_for_the_writer_and_sees_its_commit(path):
    proc = _holder(path, 1.5)
    try:
        con = adb._open_read_only(path)
        assert sorted(r[0] for r in con.execute("SELECT i FROM t").fetchall()) == [1, 2]
        con.close()
    finally:
        proc.wait(30)


def test_a_reader_gives_up_after_the_wait(path, monkeypatch):
    monkeypatch.setattr(adb, "LOCK_WAIT_SECONDS", 0.3)
    proc = _holder(path, 5)
    try:
        with pytest.raises(duckdb.IOException, match="lock"):
            adb._open_read_only(path)
    finally:
        proc.kill()
        proc.wait(30)
