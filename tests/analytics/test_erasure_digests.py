"""The digests an erasure keeps of what it looked for (`analytics.erasure.digests`): found again in
any ASCII case and in each form the scan looks for, across the chunks a file is read in, never
kept as text, and no longer looked for once the tombstone is lifted."""

from __future__ import annotations

import json

import pytest

from analytics.erasure import digests
from analytics.erasure.scan import Place
from analytics.workspace.store import Workspace, now

TEXT = 'Frank "the tank" Okonkwö <frank@example.net>'
UPPER = "".join(c.upper() if c.isascii() else c for c in TEXT)  # (ASCII letters fold; ö and Ö are other bytes)


def _workspace(tmp_path, texts=(TEXT,)) -> Workspace:
    ws = Workspace(tmp_path / "w.sqlite")
    with ws.write() as conn:
        (tid,) = conn.execute("INSERT INTO tombstones (kind, value, reason, by, at) VALUES "
                              "('thread', 't1', 'r', 'dpo', ?) RETURNING tombstone_id", (now(),)).fetchone()
        digests.keep(conn, tid, texts)
    return ws


def _standing(ws: Workspace):
    with ws.read() as conn:
        return digests.standing(conn)


def test_each_form_is_found_again_in_any_case_and_the_workspace_keeps_no_text(tmp_path):
    ws = _workspace(tmp_path)
    assert not any(raw in ws.path.read_bytes() for raw in (TEXT.encode(), b"frank@example.net"))
    kept = _standing(ws)
    written = {
        "a.txt": f"said {UPPER} twice".encode(),
        "a.json": json.dumps({"note": f"x {TEXT} y"}).encode(),
        "a.csv": ('id,note\n1,"x ' + TEXT.replace('"', '""') + '"\n').encode(),
    }
    for name, data in written.items():
        (tmp_path / name).write_bytes(data)
    found = digests.recovered([Place(tmp_path / n, "export") for n in written], kept)
    assert found == {TEXT, UPPER}  # (as written in the text file; the JSON and CSV forms decoded)


def test_a_text_across_the_chunks_of_a_file_is_found(tmp_path, monkeypatch):
    ws = _workspace(tmp_path)
    kept = _standing(ws)
    monkeypatch.setattr(digests, "_CHUNK", 64)
    for at in range(50, 70):
        data = b"." * at + TEXT.encode() + b"." * 10
        assert digests.found_in(data, kept) == {TEXT}, at
    assert digests.found_in(b"." * 200, kept) == set()


def test_a_lifted_tombstone_s_digests_are_not_looked_for(tmp_path):
    ws = _workspace(tmp_path)
    assert _standing(ws)
    with ws.write() as conn:
        conn.execute("UPDATE tombstones SET lifted_at = ?, lifted_by = 'dpo'", (now(),))
    assert _standing(ws) is None


@pytest.mark.parametrize("what", ["database", "app version"])
def test_files_the_erasure_rewrites_are_not_searched(tmp_path, what):
    kept = _standing(_workspace(tmp_path))
    (tmp_path / "f").write_bytes(TEXT.encode())
    assert digests.recovered([Place(tmp_path / "f", what)], kept) == set()
    assert digests.recovered([Place(tmp_path / "f", "export")], kept) == {TEXT}
