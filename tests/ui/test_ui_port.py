"""``billops ui --port N``: the Prefect UI served on port N asks the API on port N (never
Prefect's default 4200, where someone else's server could answer), and stopping ``billops ui``
stops its server. What the page asks for is only visible in a browser (Debian's chromium)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.billops_server import ROOT, clean_env, free_port, wait_until
from tests.support.browser import chromium_browser


@dataclass
class ServedUI:
    process: subprocess.Popen[str]
    url: str
    port: int


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def served_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedUI]:
    tmp = tmp_path_factory.mktemp("ui")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "billops.cli", "ui", "--port", str(port), "--home", str(tmp / "p")],
        env=clean_env(tmp / "p", tmp / "b"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_until(lambda: _answers(url) or process.poll() is not None, 180), "no UI"
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        yield ServedUI(process, url, port)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)


def test_the_ui_settings_name_the_port_it_is_served_on(served_ui: ServedUI) -> None:
    settings = httpx.get(f"{served_ui.url}/ui-settings", timeout=10).json()

    assert settings["api_url"] == f"{served_ui.url}/api"


@pytest.mark.browser
def test_the_page_asks_the_api_on_its_own_port(served_ui: ServedUI) -> None:
    asked: list[str] = []
    with chromium_browser() as browser:
        page: Any = browser.new_page()
        page.on("request", lambda request: asked.append(request.url))
        page.goto(f"{served_ui.url}/dashboard", wait_until="networkidle", timeout=90_000)
        page.close()

    api_calls = [url for url in asked if "/api/" in url]
    assert any(url.startswith(f"{served_ui.url}/api/") for url in api_calls), asked
    assert not any(":4200" in url for url in asked), [u for u in asked if ":4200" in u]


def test_stopping_billops_ui_stops_its_server(served_ui: ServedUI) -> None:
    served_ui.process.send_signal(signal.SIGTERM)

    served_ui.process.wait(timeout=60)
    assert not _answers(served_ui.url)  # nothing left serving: no orphaned server
