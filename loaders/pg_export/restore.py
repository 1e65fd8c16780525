"""pg_dump's archive formats (custom, directory, tar): `pg_restore --data-only -f -`
turns them into plain SQL, streamed into `dump.stage_dump`."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

from loaders.pg_export.archive import Capped, inflate_limit
from loaders.pg_export.dump import stage_dump
from loaders.pg_export.stage import Stage
from loaders.records import SourceError


def stage_archive(stage: Stage, path: Path, archive: str, where: str, schema: str | None) -> bool:
    """Stage a pg_dump archive through pg_restore; returns `shallow`."""
    exe = shutil.which("pg_restore")
    if exe is None:
        raise SourceError(
            f"{where}: a pg_dump {archive}-format archive; reading it needs pg_restore (PostgreSQL client tools) "
            "on PATH, which was not found. Install the PostgreSQL client, or export with "
            "pg_dump --data-only (plain SQL) instead"
        )
    err_path = Path(stage.dir) / "pg_restore.err"
    with err_path.open("wb") as err:
        # stderr goes to a file: a pipe nobody reads could fill and stall pg_restore.
        proc = subprocess.Popen([exe, "--data-only", "-f", "-", str(path.resolve())], stdout=subprocess.PIPE, stderr=err)
        # What pg_restore writes is decompressed data: capped like any other.
        size = sum(f.stat().st_size for f in path.iterdir() if f.is_file()) if path.is_dir() else path.stat().st_size
        out = io.BufferedReader(Capped(proc.stdout, inflate_limit(size), where), 1 << 16)
        try:
            shallow = stage_dump(stage, out, where, schema, restore_failed=lambda: _restore_error(proc, err_path))
        except BaseException:
            proc.kill()
            raise
        finally:
            proc.stdout.close()
            proc.wait()
    failure = _restore_error(proc, err_path)
    if failure:
        raise SourceError(f"{where}: pg_restore failed: {failure}")
    return shallow


def _restore_error(proc: subprocess.Popen, err_path: Path) -> str | None:
    if proc.poll() is None:
        proc.wait()
    if proc.returncode == 0:
        return None
    text = err_path.read_text("utf-8", "replace").strip()
    return (text.splitlines() or [f"exit status {proc.returncode}"])[-1][:300]
