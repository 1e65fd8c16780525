"""What the browser tests share: Debian's Chromium through Playwright, and `streamlit run app.py` on a free port.

    with app_server(env) as url:
        page = browser.new_page(); page.goto(url); settle(page)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from debian_chromium import CHROMIUM, launch_options  # noqa: E402  (the one browser: bench/debian_chromium.py)


def require_chromium() -> None:
    """Skip the module without Chromium (fail in CI, where scripts/test-services.sh installs it)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI (scripts/test-services.sh installs it)", pytrace=False)
        pytest.skip(f"{CHROMIUM} is not installed", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, seconds: float = 10) -> None:
    """Terminate `proc`, and kill it if it has not ended after `seconds`."""
    proc.terminate()
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def app_server(env: dict[str, str], log_path: Path, script: str = "app.py") -> Iterator[str]:
    """`streamlit run app.py` (or another `script`) with `env`, headless on a free port; yields its address."""
    port = free_port()
    with log_path.open("w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log.seek(0)
                pytest.fail(f"streamlit did not start:\n{log.read()}")
            time.sleep(0.3)
        try:
            yield url
        finally:
            stop_process(proc)


@contextmanager
def chromium() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(**launch_options())
        try:
            yield b
        finally:
            b.close()


def settle(page) -> None:
    """Wait until the script run a click or keypress started is over (what Streamlit's own e2e tests do)."""
    page.wait_for_timeout(300)  # the rerun request reaches the server before the state flips
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()
