"""Run the command line on a hostile input and judge the outcome as docs/security.md promises it.

`attack(argv, workdir)` runs `transcript-lens ARGV` in a subprocess (`tests.attacks.measure`) with
its own empty temp folder and HOME inside `workdir`, and returns an `Outcome`: exit code, output,
peak memory, and every file the run left or changed under `workdir` and in its temp folder. The
checks every attack makes are methods of the outcome:

    out = attack(["load", str(bomb), "--db", str(db)], tmp_path)
    out.refused("decompressed")      # exit 2 (or 1), one line naming the limit, no traceback
    out.within_budget()              # peak memory under MEMORY_BUDGET_MB
    out.wrote_only([db])             # nothing else written, temp folder left empty

`run_cli(argv, workdir)` runs the same command line in this process, for the checks of what a
command prints and writes (masking): no interpreter start and import per call, no peak memory
(`within_budget` fails on it). What a subprocess alone shows, memory and a crash, needs `attack`.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The documented budget (docs/security.md): any input under 100 MB loads or is refused within it.
MEMORY_BUDGET_MB = 1024
TIMEOUT_S = 600


def _tree(folder: Path) -> dict[Path, tuple[int, int]]:
    """Every file under `folder` with its size and mtime (what a run may have written)."""
    out = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except FileNotFoundError:
                continue
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


@dataclass
class Outcome:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    peak_mb: float
    written: list[Path] = field(default_factory=list)  # new or changed files under the work folder
    leftover_tmp: list[Path] = field(default_factory=list)  # files the run left in its temp folder

    def _where(self) -> str:
        return f"transcript-lens {' '.join(self.argv)}\nexit {self.returncode}\nstderr: {self.stderr[-3000:]}"

    def no_traceback(self) -> Outcome:
        assert "Traceback" not in self.stderr + self.stdout, self._where()
        return self

    def refused(self, *words: str) -> Outcome:
        """Exit non-zero with one line of error that holds each of `words` (case-insensitive)."""
        self.no_traceback()
        assert self.returncode not in (0, None) and self.returncode > 0, self._where()
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, self._where()
        for word in words:
            assert word.lower() in lines[0].lower(), self._where()
        return self

    def succeeded(self) -> Outcome:
        self.no_traceback()
        assert self.returncode == 0, self._where()
        return self

    def within_budget(self, budget_mb: float = MEMORY_BUDGET_MB) -> Outcome:
        assert 0 < self.peak_mb <= budget_mb, f"peak {self.peak_mb:.0f} MB over {budget_mb} MB\n{self._where()}"
        return self

    def wrote_only(self, allowed: list[Path]) -> Outcome:
        """Nothing written under the work folder but `allowed` (files, or folders and what is in them),
        and nothing left in the run's temp folder."""
        allowed = [Path(a) for a in allowed]

        def ok(p: Path) -> bool:
            return any(p == a or a in p.parents or p.name.startswith(a.name + ".") and p.parent == a.parent
                       for a in allowed)

        stray = [p for p in self.written if not ok(p)]
        assert not stray, f"wrote {stray}\n{self._where()}"
        assert not self.leftover_tmp, f"left in its temp folder: {self.leftover_tmp}\n{self._where()}"
        return self

    def never_prints(self, *secrets: str) -> Outcome:
        for secret in secrets:
            assert secret not in self.stdout and secret not in self.stderr, f"{secret!r} printed\n{self._where()}"
        return self


def _dirs(workdir: Path) -> tuple[Path, Path]:
    """The run's own temp folder and HOME under `workdir`, made."""
    tmp, home = workdir / ".attack-tmp", workdir / ".attack-home"
    tmp.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    return tmp, home


def _outcome(argv: list[str], workdir: Path, before: dict, code: int, out: str, err: str, peak_kb: int) -> Outcome:
    tmp, home = workdir / ".attack-tmp", workdir / ".attack-home"
    after = _tree(workdir)
    written = sorted(p for p, sig in after.items()
                     if before.get(p) != sig and not any(d == p or d in p.parents for d in (tmp, home)))
    leftover = sorted(p for p in after if tmp in p.parents)
    return Outcome(list(argv), code, out, err, peak_kb / 1024, written, leftover)


def run_cli(argv: list[str], workdir: Path) -> Outcome:
    """`transcript-lens ARGV` in this process, as `attack` runs it (its folder, TMPDIR and HOME),
    stdout and stderr captured; an exception that escapes is printed as the interpreter would."""
    from transcript_lens.cli import main

    workdir = Path(workdir)
    tmp, home = _dirs(workdir)
    before = _tree(workdir)
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    saved_env = {k: os.environ.get(k) for k in ("TMPDIR", "HOME")}
    saved_tmp = tempfile.tempdir
    os.environ.update(TMPDIR=str(tmp), HOME=str(home))
    tempfile.tempdir = None  # read again from TMPDIR
    try:
        with contextlib.chdir(workdir), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv)) or 0
            except SystemExit as exc:  # argparse and explicit exits, as tests.attacks.measure maps them
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, int) and exc.code is not None:
                    print(exc.code, file=sys.stderr)
            except Exception:  # noqa: BLE001 - what the interpreter prints and exits 1 on
                traceback.print_exc()
                code = 1
    finally:
        tempfile.tempdir = saved_tmp
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8", errors="replace"))
    return _outcome(argv, workdir, before, code, texts[0], texts[1], 0)


def attack(argv: list[str], workdir: Path, env: dict[str, str] | None = None, stdin: str | None = None,
           timeout: float = TIMEOUT_S) -> Outcome:
    """Run `transcript-lens ARGV` measured, with TMPDIR and HOME of its own under `workdir`."""
    workdir = Path(workdir)
    tmp, home = _dirs(workdir)
    peak_file = tmp.parent / ".attack-peak"
    before = _tree(workdir)
    run_env = {**os.environ, "TMPDIR": str(tmp), "HOME": str(home), "TL_PEAK_FILE": str(peak_file),
               "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "tests.attacks.measure", *argv], capture_output=True, text=True,
                          cwd=workdir, env=run_env, input=stdin, timeout=timeout)
    peak_kb = int(peak_file.read_text()) if peak_file.exists() else 0
    peak_file.unlink(missing_ok=True)
    return _outcome(argv, workdir, before, proc.returncode, proc.stdout, proc.stderr, peak_kb)


def loaded_thread(folder: Path, messages: list, thread_id: str) -> Path:
    """A database in `folder` loaded (by `transcript-lens load`) from a SqliteSaver store holding one
    thread of `messages`, written by a real graph; its path.

    >>> loaded_thread(tmp_path, [HumanMessage("hi")], "acme:web:s1")  # doctest: +SKIP
    PosixPath('…/lens.duckdb')
    """
    from tests.attacks.stores import store_with_messages

    store, db = Path(folder) / "store.sqlite", Path(folder) / "lens.duckdb"
    store_with_messages(store, messages, thread_id=thread_id)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def said_in_a_thread(folder: Path, texts: list[str]) -> Path:
    """A database in `folder` of one thread in which a user says each of `texts` and the assistant
    `noted end` (`loaded_thread`)."""
    from langchain_core.messages import AIMessage, HumanMessage

    return loaded_thread(folder, [*(HumanMessage(t) for t in texts), AIMessage("noted end")], "acme:web:said")


def found_unmasked_only(db: Path, probe: str) -> None:
    """Assert that `probe` finds its message in `db` unmasked, and no message and no conversation
    under masking (docs/privacy.md, "Search under masking")."""
    import analytics
    from analytics.policy import Policy, reading_as

    assert analytics.search(str(db), probe).total >= 1, probe
    with reading_as(Policy(redact=True)):
        assert analytics.search(str(db), probe).total == 0, probe
        assert analytics.conversations(str(db), analytics.Filters(text=probe)).empty, probe


def left_as_written(texts: list[str]) -> None:
    """Assert that one redactor leaves each of `texts` as it is (look-alikes of a personal value)."""
    from analytics.redact import Redactor

    r = Redactor()
    assert [r.text(text) for text in texts] == texts


def said_lens(name: str, texts: list[str]):
    """A module's fixture `lens`: a database of one thread in which a user says each of `texts`
    (`said_in_a_thread`), made once in a folder named `name`."""
    import pytest

    @pytest.fixture(scope="module")
    def lens(tmp_path_factory):
        return said_in_a_thread(tmp_path_factory.mktemp(name), texts)

    return lens
