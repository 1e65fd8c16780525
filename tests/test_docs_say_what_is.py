"""Docs and code say what is; history lives in git (CONTRIBUTING.md, "Working here").

The clearest marks of a history written into the tree fail here: a work session or ticket
by number ("session 12", "issue 35"), "this round", "the lead engineer", and in the docs
"this branch" and a commit hash ("main at a91ad79"). A figure measured against other code
names that code by what it lacks ("without the checks"), and a command that needs such a
checkout takes it as a placeholder (`REV`).

Each rule matches a phrase that has no other meaning here; a user's session (`sess-1001`,
"this session's policy"), a ticket-like column (`issue_refund`), a thread's branch in code
(ui/history.py: "Download this branch") and hex that is not a word of its own (UUIDs, paths,
`0x…`, digests longer than a commit's 40 digits) pass.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve()

#: Everywhere: docs and code (comments, docstrings, messages).
EVERYWHERE = {
    "a session by number": re.compile(r"\bsessions? #?\d+\b", re.I),
    "an issue by number": re.compile(r"\bissues? #?\d+\b", re.I),
    "'this round'": re.compile(r"\bthis round\b", re.I),
    "'the lead engineer'": re.compile(r"\blead engineer\b", re.I),
}
#: In docs only: code speaks of a thread's branches ("this branch") and holds hex constants.
DOCS_ONLY = {
    "'this branch'": re.compile(r"\bthis branch\b", re.I),
    # 7 to 40 hex digits with at least one letter and one digit, a word of its own (not part of
    # a path, an identifier, a UUID or a version folder's name).
    "a commit hash": re.compile(r"(?<![\w/.:-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/-])"),
}

DOC_SUFFIXES = {".md", ".rst", ".txt"}
CODE_SUFFIXES = {".py", ".c", ".h", ".js", ".mjs", ".ts", ".sh", ".toml", ".cfg", ".ini", ".ipynb"}
CODE_NAMES = {"Makefile"}
SKIP_DIRS = {".git", ".venv", "node_modules", "build", "dist", ".cache", "out", "__pycache__", ".hypothesis"}


def _files() -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(ROOT):  # follows no symbolic link (.venv, node_modules)
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in names:
            path = Path(folder) / name
            if path.suffix in DOC_SUFFIXES | CODE_SUFFIXES or name in CODE_NAMES:
                found.append(path)
    return sorted(found)


def _hits(text: str, rules: dict[str, re.Pattern]) -> list[tuple[int, str, str]]:
    hits = []
    for n, line in enumerate(text.splitlines(), 1):
        for what, rule in rules.items():
            if m := rule.search(line):
                hits.append((n, what, m.group(0)))
    return hits


def _rules(path: Path) -> dict[str, re.Pattern]:
    return {**EVERYWHERE, **DOCS_ONLY} if path.suffix in DOC_SUFFIXES else EVERYWHERE


def test_the_scan_covers_the_docs_and_the_code():
    files = {p.relative_to(ROOT).as_posix() for p in _files()}
    for named in ("README.md", "CONTRIBUTING.md", "docs/performance.md", "docs/scale.md",
                  "loaders/pipeline.py", "analytics/scope.py", "ui/nav.py", "bench/bench_pages.py",
                  "loaders/_scan.c", "Makefile"):  # fmt: skip
        assert named in files
    assert not any(".venv/" in f or "node_modules/" in f for f in files)


def test_no_history_markers_in_docs_or_code():
    found = []
    for path in _files():
        if path == HERE:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}:{n}: {what}: {text!r}" for n, what, text in _hits(text, _rules(path))]
    assert not found, "history written into the tree (say what is; history lives in git):\n" + "\n".join(found)


@pytest.mark.parametrize("line", [
    "**What changed in this round** (each with tests)",
    "before = main at a91ad79 on the database built at this branch's base",
    "the code without them (b685311) against the code with them",
    "git archive 807a5de | tar -x -C /tmp/before",
    "docs/performance.md is a log with about 60 session 12 references",
    "as asked in issue 35, and Issue #7",
    "shared with the lead engineer's benchmarks",
    "In a faster period (commit e4785bc), the same script",
])  # fmt: skip
def test_the_markers_catch_history(line):
    assert _hits(line, {**EVERYWHERE, **DOCS_ONLY})


@pytest.mark.parametrize("line", [
    "erase every thread of this session (`--session S`); session `sess-1001`",
    "`lookup_order`, `track_shipment`, `issue_refund`",
    "`00000000-0000-0000-0000-000000000000` for the global `Command(resume=…)`",
    "  v-20261202T081500-3f2a9c…/           one version = one load",
    "value of 200 MiB (209715245 bytes) not read",
    "key d41d8cd98f00b204e9800998ecf8427e0123456789abcdef (a digest, not a commit)",
    "0x7fffffff, the C scanner's limit; ISO dates 20250305",
])  # fmt: skip
def test_the_markers_leave_what_is_alone(line):
    assert not _hits(line, {k: v for k, v in {**EVERYWHERE, **DOCS_ONLY}.items() if k != "'this branch'"})
