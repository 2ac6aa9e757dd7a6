"""A person clicking "Approve" on the sandbox's consent page, done over HTTP.

``billops demo`` logs in through the real authorization-code flow; where a person would open the
login URL in a browser and approve, the demo calls :func:`approve_consent`, which submits the same
form a browser would. Following the redirect delivers the code to the login's loopback listener.
"""

from __future__ import annotations

from html.parser import HTMLParser

import httpx


class _ConsentForm(HTMLParser):
    """The consent form's hidden fields and the billers offered."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}
        self.billers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        fields = {k: v or "" for k, v in attrs}
        if tag == "input" and fields.get("type") == "hidden":
            self.hidden[fields["name"]] = fields["value"]
        elif tag == "input" and fields.get("type") == "radio":
            self.billers.append(fields["value"])


class ConsentError(Exception):
    """The consent page did not offer what was asked for."""


def approve_consent(login_url: str, biller_id: str, *, timeout: float = 10.0) -> httpx.Response:
    """Open the login URL, choose ``biller_id`` and approve; returns the page landed on."""
    with httpx.Client(follow_redirects=True, timeout=timeout) as browser:
        page = browser.get(login_url)
        if page.status_code != 200:
            raise ConsentError(f"the consent page answered {page.status_code}")
        form = _ConsentForm()
        form.feed(page.text)
        if biller_id not in form.billers:
            raise ConsentError(f"biller {biller_id} is not offered on the consent page")
        action = str(page.url.copy_with(query=None))
        return browser.post(
            action, data={**form.hidden, "biller_id": biller_id, "decision": "approve"}
        )
