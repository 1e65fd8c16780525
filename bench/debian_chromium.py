"""The one browser of the browser tests, the benches and the scripts: Debian's Chromium
(`/usr/bin/chromium`, installed by scripts/test-services.sh), driven through Playwright, never
a Chromium Playwright downloaded into ~/.cache/ms-playwright. Every launch passes
`launch_options()` (tests/test_one_chromium.py checks each `.launch(` in tests/, bench/ and scripts/).

>>> launch_options("--headless=new")["executable_path"]
'/usr/bin/chromium'
>>> browser = playwright.chromium.launch(**launch_options())  # doctest: +SKIP
"""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
#: Flags for a headless run in a container: no sandbox (root), no GPU, no calls home.
ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run")


def launch_options(*extra: str) -> dict:
    """The keyword arguments of `playwright.chromium.launch` (sync or async): Debian's executable,
    `ARGS` and `extra` flags."""
    return {"executable_path": CHROMIUM, "args": [*ARGS, *extra]}
