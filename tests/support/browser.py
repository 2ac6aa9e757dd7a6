"""Debian's chromium driven by Playwright for the browser tests (``browser`` marker)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
# These flags make chromium start here: no sandbox as root, and no background network calls
# (the machine has no network; they would fail or hang).
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """A launched chromium; skips the test with the reason when chromium is not installed."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM}: run `make browser-deps`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()
