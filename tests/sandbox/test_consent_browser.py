"""A person connects a biller in a real browser (Debian's chromium via Playwright): the consent
page, the biller choice, Approve, and the loopback redirect a command-line login listens on."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.loopback import loopback_receiver
from tests.support.sandbox_admin import SandboxAdmin

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM}: run `make browser-deps`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def test_person_approves_in_the_browser_and_the_cli_gets_a_code(
    browser, admin: SandboxAdmin, tmp_path
) -> None:
    app = admin.create_app(name="billops CLI")
    admin.create_biller("First Biller Ltd")
    chosen = admin.create_biller("Browser Biller Ltd")
    with loopback_receiver() as receiver:
        page = browser.new_page()
        page.goto(
            f"{admin.root}/auth/login?client_id={app.client_id}"
            f"&redirect_uri={receiver.redirect_uri}&state=browser-1"
        )
        assert page.title() == "Connect billops CLI"
        page.get_by_label("Browser Biller Ltd").check()
        page.get_by_role("button", name="Approve").click()
        page.wait_for_selector("#done")
        page.screenshot(path=str(tmp_path / "after-approve.png"))
        page.close()
    query = receiver.received[0]
    assert query["state"] == "browser-1"
    assert admin.biller_behind_code(app, query["code"], receiver.redirect_uri) == chosen
