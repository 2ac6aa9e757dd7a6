"""A person connects a biller in a real browser (Debian's chromium via Playwright): the consent
page, the biller choice, Approve, and the loopback redirect a command-line login listens on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import chromium_browser
from tests.support.loopback import loopback_receiver
from tests.support.sandbox_admin import SandboxAdmin

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as chromium:
        yield chromium


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
