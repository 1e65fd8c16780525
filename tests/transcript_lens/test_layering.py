"""The loader knows nothing of the query layer: no file of loaders/ imports `analytics` or
`transcript_lens`, except loaders/__main__.py (`python -m loaders`, a shell over the
composition root's CLI)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOADERS = ROOT / "loaders"
FORBIDDEN = ("analytics", "transcript_lens")
# Every module of the package, subpackages included (loaders/pg_export/).
FILES = sorted(p for p in LOADERS.rglob("*.py") if p.name != "__main__.py" or p.parent != LOADERS)
MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in FILES
)

_IMPORT_ALL = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
import loaders
loaders.sources()  # the registry, entry-point plugins included
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("analytics", "transcript_lens"))))
"""


def _top(name: str | None) -> str:
    return (name or "").split(".")[0]


def imported_names(path: Path) -> list[tuple[int, str]]:
    """Every module an `import`, `from … import` or `importlib.import_module("…")` in the file names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.lineno, node.module or ""))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")):
            found.append((node.lineno, node.args[0].value))
    return sorted(found)


def test_importing_every_loader_module_imports_neither_analytics_nor_the_composition_root():
    assert {"loaders.pipeline", "loaders.postgres_reader", "loaders.pg_export.dump"} <= set(MODULES)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", _IMPORT_ALL, *MODULES], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_no_file_of_loaders_but_main_imports_analytics_or_transcript_lens():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in FILES
        for line, name in imported_names(path) if _top(name) in FORBIDDEN
    ]
    assert offenders == []


def test_the_check_sees_the_import_forms_it_forbids(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import analytics.derived\nfrom transcript_lens import load\n"
        "def f():\n    from analytics import metrics\n    return importlib.import_module('analytics.views')\n"
        "from . import analytics_like\nimport analyticsish\n"
    )
    assert [n for _, n in imported_names(sample) if _top(n) in FORBIDDEN] == [
        "analytics.derived", "transcript_lens", "analytics", "analytics.views",
    ]
    assert [n for _, n in imported_names(LOADERS / "__main__.py") if _top(n) in FORBIDDEN] == ["transcript_lens.cli"]


_QUERY_SIDE = """
import json, sys
import analytics, analytics.frames, analytics.catalog, analytics.reporting.kinds, analytics.reporting.cli
print(json.dumps(sorted(m for m in sys.modules if m.startswith("loaders"))))
"""


def test_the_query_layer_reads_the_column_catalogue_without_importing_the_loader():
    # `loaders.catalog` alone: no pipeline, no source, no C extension (loaders/__init__.py is lazy).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", _QUERY_SIDE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["loaders", "loaders.catalog"]
