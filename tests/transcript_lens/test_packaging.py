"""The package as users get it: pyproject's ranges against the pinned lock, the sdist and the
wheel built from it (what `pip install transcript-lens` installs), and that wheel installed
into a fresh virtualenv, run from another folder.

Builds with this interpreter's setuptools and pip (--no-build-isolation, --no-index): nothing
is downloaded. The fresh virtualenv sees this one's packages through a .pth line (never its
.pth files: an editable install of the project here stays invisible there), so the wheel's
own code is what runs.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tarfile
import time
import tomllib
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import transcript_lens
from loaders import _native

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = ("loaders", "analytics", "ui", "transcript_lens", "storegen", "lens_notebook")
APP_FILES = ["app.py", *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))),
             "demo/demo.sqlite", ".streamlit/config.toml"]
C_SOURCES = ["loaders/_scan.c", "loaders/_readahead.c", "loaders/_mpscan.h", "loaders/_columns.h"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRANSCRIPT_LENS_", "PYTHONPATH", "PIP_"))}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1", **extra}


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 180), **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


# --- the declared dependencies against the lock ----------------------------------------


def _lock(path: Path) -> dict[str, Requirement]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            pins.update(_lock(path.parent / line[3:].strip()))
        elif line:
            req = Requirement(line)
            pins[canonicalize_name(req.name)] = req
    return pins


def _declared(*groups: str) -> list[Requirement]:
    project = PYPROJECT["project"]
    lines = [*project["dependencies"]] if "runtime" in groups else []
    for group in groups:
        lines += project["optional-dependencies"].get(group, [])
    return [r for r in map(Requirement, lines) if canonicalize_name(r.name) != canonicalize_name(project["name"])]


@pytest.mark.parametrize(("lock", "groups"), [
    ("requirements.txt", ("runtime", "postgres", "mysql", "redis", "mongodb", "aes", "app", "notebook")),   # what `make app` installs
    # what `make test` installs
    ("requirements-dev.txt", ("runtime", "postgres", "mysql", "redis", "mongodb", "aes", "app", "dask", "conformance", "dev")),
])
def test_the_pinned_lock_satisfies_every_declared_range(lock, groups):
    pins = _lock(ROOT / lock)
    for req in _declared(*groups):
        pin = pins.get(canonicalize_name(req.name))
        if not req.specifier:
            continue  # unranged (numpy: pandas' own requirement decides)
        assert pin is not None, f"{req} is declared but {lock} pins no version of it"
        [version] = [s.version for s in pin.specifier if s.operator == "=="]
        assert req.specifier.contains(version), f"{lock} pins {pin}, outside pyproject's {req}"
        assert req.extras <= pin.extras, f"{lock} pins {pin} without the extras of {req}"
    every_group = ("runtime", "postgres", "mysql", "redis", "mongodb", "aes", "app", "dask", "conformance", "dev")
    declared = {canonicalize_name(r.name) for r in _declared(*every_group)}
    assert set(pins) - declared == set(), f"{lock} pins packages pyproject.toml does not declare"


def test_the_version_is_single_sourced():
    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "loaders.version.__version__"}
    assert PYPROJECT["project"]["scripts"] == {"transcript-lens": "transcript_lens.cli:main"}


# --- sdist and wheel --------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path
    work: Path

    def wheel_names(self) -> set[str]:
        with zipfile.ZipFile(self.wheel) as zf:
            return set(zf.namelist())

    def wheel_text(self, suffix: str) -> str:
        with zipfile.ZipFile(self.wheel) as zf:
            [name] = [n for n in zf.namelist() if n.endswith(suffix)]
            return zf.read(name).decode()


def _copy_source(dst: Path) -> None:
    """The files a clone has (tracked, plus untracked but not ignored: a change under way)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                                capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        ignore = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".cache",
                                        "*.so", "*.pyd", ".pytest_cache", ".hypothesis", "*.duckdb*")
        shutil.copytree(ROOT, dst, ignore=ignore)
        return
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    """The sdist of a copy of the tree, and the wheel pip builds from that sdist."""
    work = tmp_path_factory.mktemp("packaging")
    src = work / "src"
    _copy_source(src)
    backend = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    name = _run([sys.executable, "-c", backend, str(work / "dist")], cwd=src, env=_env()).stdout.split()[-1]
    sdist = work / "dist" / name
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
          "-w", str(work / "wheels"), str(sdist)], cwd=work, env=_env())
    [wheel] = (work / "wheels").glob("*.whl")
    return Built(sdist, wheel, work)


def test_the_sdist_has_what_the_wheel_is_built_from(built):
    with tarfile.open(built.sdist) as tf:
        top = f"transcript_lens-{transcript_lens.__version__}/"
        names = {n.removeprefix(top) for n in tf.getnames()}
    assert {"pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "requirements.txt",
            *C_SOURCES, *APP_FILES} <= names
    assert not [n for n in names if n.endswith((".so", ".pyd"))]


def test_the_wheel_holds_the_packages_the_app_and_the_extension_sources(built):
    names = built.wheel_names()
    assert built.wheel.name.startswith(f"transcript_lens-{transcript_lens.__version__}-")
    for package in PACKAGES:
        # Every module, subpackages included (ui/models/ was once left out of the wheel).
        modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / package).rglob("*.py") if "_app" not in p.parts}
        assert modules <= names, modules - names
    assert {f"transcript_lens/_app/{f}" for f in APP_FILES} <= names
    assert set(C_SOURCES) <= names
    compiled = {n.split("/")[1].split(".")[0] for n in names if n.startswith("loaders/_") and n.endswith((".so", ".pyd"))}
    built_here = {name for name, mod in (("_scan", _native.scan), ("_readahead", _native.readahead)) if mod is not None}
    assert built_here <= compiled  # what this machine can compile (make test: both), the wheel has compiled
    assert not {n for n in names if n.split("/")[0] in ("tests", "bench", "demo", "pages")}
    entry_points = built.wheel_text(".dist-info/entry_points.txt")
    assert "[console_scripts]\ntranscript-lens = transcript_lens.cli:main" in entry_points
    metadata = built.wheel_text(".dist-info/METADATA")
    for line in ("Requires-Dist: duckdb", "Requires-Dist: pandas", "Provides-Extra: app", "Provides-Extra: postgres",
                 'Requires-Dist: streamlit>=1.67; extra == "app"', "Provides-Extra: conformance",
                 'Requires-Dist: langgraph-checkpoint-sqlite>=3.1; extra == "conformance"'):
        assert line in metadata


# --- the wheel installed ----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _health(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as resp:
            return resp.read().decode()
    except OSError:
        return None


def _install_wheel(built: Built, name: str) -> tuple[Path, Path]:
    """A fresh virtualenv `built.work/name` with the wheel installed: (the venv, its site-packages)."""
    venv = built.work / name
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # The dependencies: this environment's, appended after the venv's own site-packages.
    here = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "_dependencies.pth").write_text("".join(f"{p}\n" for p in here))
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
          str(built.wheel)], env=_env())
    return venv, site


_WHERE = """
import json, analytics, loaders, transcript_lens, ui
print(json.dumps({m.__name__: m.__file__ for m in (analytics, loaders, transcript_lens, ui)}
                 | {"app_dir": str(transcript_lens.app_dir()), "checkout": transcript_lens.is_checkout()}))
"""

_APPTEST = """
import json, sys
from streamlit.testing.v1 import AppTest
import transcript_lens
at = AppTest.from_file(str(transcript_lens.app_dir() / "app.py"), default_timeout=60).run()
print(json.dumps({"exception": [e.value for e in at.exception], "titles": [t.value for t in at.title]}))
"""


@pytest.mark.slow
def test_the_installed_wheel_loads_and_serves_from_another_folder(built):
    venv, site = _install_wheel(built, "venv")
    python = venv / "bin" / "python"

    elsewhere = built.work / "elsewhere"
    elsewhere.mkdir()
    where = json.loads(_run([str(python), "-c", _WHERE], cwd=elsewhere, env=_env()).stdout)
    assert all(Path(where[m]).is_relative_to(site) for m in ("analytics", "loaders", "transcript_lens", "ui")), where
    assert where["app_dir"] == str(site / "transcript_lens" / "_app") and where["checkout"] is False

    db = elsewhere / "demo.duckdb"
    out = _run([str(venv / "bin" / "transcript-lens"), "load", str(ROOT / "demo" / "demo.sqlite"), "--db", db.name],
               cwd=elsewhere, env=_env()).stdout
    assert out.startswith("loaded ") and out.strip().endswith("(0 row errors)")
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        threads, metrics = con.execute("SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM conversation_metrics)").fetchone()
    assert threads > 0 and metrics == threads

    # The bundled app renders its default page from the installed copy.
    seen = json.loads(_run([str(python), "-c", _APPTEST], cwd=elsewhere, timeout=120,
                           env=_env(TRANSCRIPT_LENS_DB=str(db), TRANSCRIPT_LENS_CACHE=str(built.work / "cache"))
                           ).stdout.strip().splitlines()[-1])
    assert seen == {"exception": [], "titles": ["Overview"]}

    # `transcript-lens app` with no database: builds the demo database in the user's cache, serves on loopback.
    port, cache = _free_port(), built.work / "xdg"
    log = (built.work / "app.log").open("w+")
    proc = subprocess.Popen([str(venv / "bin" / "transcript-lens"), "app", "--headless", "--port", str(port)],
                            cwd=elsewhere, env=_env(XDG_CACHE_HOME=str(cache), HOME=str(built.work)),
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while (health := _health(port)) != "ok" and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        log.seek(0)
        assert health == "ok", log.read()
        assert (cache / "transcript-lens" / "demo.duckdb").is_file()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.slow
def test_the_installed_wheel_runs_the_documented_conformance_kit(built):
    """docs/sources.md's lines, in a folder of their own, against the kit the wheel installed."""
    from tests.loaders.test_conformance_kit import run_documented_kit

    venv, site = _install_wheel(built, "kit-venv")
    python = venv / "bin" / "python"
    where = _run([str(python), "-c", "import loaders.conformance as c, storegen as s; print(c.__file__, s.__file__)"],
                 cwd=built.work, env=_env()).stdout.split()
    assert all(Path(f).is_relative_to(site) for f in where), where
    proc = run_documented_kit(str(python), built.work / "kit-suite", _env())
    assert proc.returncode == 0 and " passed" in proc.stdout, proc.stdout[-4000:] + proc.stderr[-2000:]
