"""The demo database: the bundled store (`transcript_lens.demo_store`) loaded into the app's
cache folder, built when missing and again when the store or the code that writes it changed.

The command line builds it before the app starts (so a first run says so on the terminal);
the app (`ui.database`) finds the same file.

>>> demo_db().name
'demo.duckdb'
"""

from __future__ import annotations

from pathlib import Path

import transcript_lens


def demo_db() -> Path:
    """Where the demo database is: `demo.duckdb` in `transcript_lens.cache_dir()`."""
    return transcript_lens.cache_dir() / "demo.duckdb"


def _writer_code_mtime_ns() -> int:
    """Newest change to the code that decides what a load writes (the loader, and analytics' derived tables)."""
    root = Path(__file__).resolve().parents[1]
    files = [*(root / "loaders").rglob("*.py"), *(root / "analytics").rglob("*.py")]  # (derived tables live in subpackages)
    return max((f.stat().st_mtime_ns for f in files if f.exists()), default=0)


def demo_is_stale(source: Path | None = None, target: Path | None = None) -> bool:
    """Missing, or older than the bundled store or than the loader code (an upgrade rebuilds it)."""
    source, target = source or transcript_lens.demo_store(), target or demo_db()
    if not target.exists():
        return True
    built = target.stat().st_mtime_ns
    return built < source.stat().st_mtime_ns or built < _writer_code_mtime_ns()


def ensure_demo_db(source: Path | None = None, target: Path | None = None) -> Path:
    """Build the demo DuckDB from the bundled store when it is missing or older than the store."""
    source, target = source or transcript_lens.demo_store(), target or demo_db()
    if not source.exists():
        raise FileNotFoundError(f"the bundled demo store {source} is missing; open a database with --db PATH")
    if demo_is_stale(source, target):
        # The loader writes atomically, so two processes building at once both leave a valid file.
        transcript_lens.load(str(source), target)
    return target
