"""The public names of `analytics` stay its functions whatever is imported first: no
submodule or subpackage shares a public name (importing it would bind the module over the
function, `import analytics.x as m` would give the function): `analytics.diff()` is defined
in analytics/history/diff.py, and a module analytics/diff.py may not come back.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import analytics
import analytics.workspace

ROOT = Path(__file__).resolve().parents[2]


def test_no_submodule_is_named_like_a_public_name():
    for package in (analytics, analytics.workspace):
        submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
        assert not submodules & set(package._NAMES), package.__name__


_EVERY_MODULE_FIRST = """
import importlib, json, pkgutil, types
import analytics
for info in pkgutil.walk_packages(analytics.__path__, "analytics."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
print(json.dumps({name: (isinstance(getattr(analytics, name), types.ModuleType), getattr(analytics, name).__module__)
                  for name in analytics._NAMES}))
"""


def test_every_public_name_is_its_function_after_every_module_was_imported():
    proc = subprocess.run([sys.executable, "-c", _EVERY_MODULE_FIRST], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    modules = {name: module for name, (is_module, module) in got.items() if is_module}
    assert not modules, f"public names bound to modules: {modules}"
    for name in ("diff", "branches", "backlog", "search", "retention", "exports", "outcomes", "topics"):
        assert got[name][1] == analytics._NAMES[name], name
