"""Completing the sandbox's consent page over HTTP, as a person's browser would."""

from __future__ import annotations

from html.parser import HTMLParser

import httpx


class _Form(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "input" and a.get("type") == "hidden":
            self.hidden[a["name"]] = a["value"]


def approve(authorize_url: str, biller_id: str, *, follow: bool) -> httpx.Response:
    """Open the login page, choose ``biller_id``, approve; ``follow`` the redirect or not."""
    with httpx.Client(follow_redirects=follow, timeout=30) as browser:
        page = browser.get(authorize_url)
        page.raise_for_status()
        form = _Form()
        form.feed(page.text)
        root = str(page.url.copy_with(path="/", query=None)).rstrip("/")
        return browser.post(
            f"{root}/auth/login",
            data={**form.hidden, "biller_id": biller_id, "decision": "approve"},
        )
