"""Log in to a biller of a local sandbox in one step: what ``billops demo`` and ``billops sandbox
login`` do.

The same steps as ``billops auth login`` (state + PKCE, a loopback listener for the redirect, one
code exchange, the block saved), with the sandbox's consent page approved over HTTP where a person
would click "Approve" in a browser — acceptable for the sandbox only, whose billers are made up.
The app's credentials come from what ``billops sandbox serve --seed-demo`` wrote
(``$BILLOPS_HOME/sandbox-demo.json``, mode 0600), so nothing secret is typed or printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEMO_FILE_NAME = "sandbox-demo.json"


class SandboxLoginError(Exception):
    """The demo credentials are missing or do not name the biller asked for."""


@dataclass(frozen=True)
class SandboxApp:
    """The sandbox app and billers ``--seed-demo`` created."""

    client_id: str
    client_secret: str
    billers: list[dict[str, Any]]

    def find_biller(self, wanted: str) -> dict[str, Any]:
        """A biller by id, exact name or block-style name (case does not matter)."""
        key = wanted.strip().casefold()
        for biller in self.billers:
            names = {str(biller["billerId"]).casefold(), str(biller["name"]).casefold()}
            if key in names or key == block_name_for(str(biller["name"])):
                return biller
        known = ", ".join(f"{b['name']!r} ({b['billerId']})" for b in self.billers)
        raise SandboxLoginError(f"no biller {wanted!r} in the sandbox demo; it has {known}")


def block_name_for(biller_name: str) -> str:
    """A credential block name from a biller's name: ``Acme Ltd`` → ``acme-ltd``."""
    slug = "".join(c if c.isalnum() else "-" for c in biller_name.casefold())
    return "-".join(part for part in slug.split("-") if part)


def read_demo_app(path: Path) -> SandboxApp:
    """The app's credentials and billers from ``sandbox-demo.json``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return SandboxApp(str(data["clientId"]), str(data["clientSecret"]), list(data["billers"]))
    except FileNotFoundError:
        raise SandboxLoginError(
            f"{path} does not exist: start the sandbox with demo data first "
            "(billops sandbox serve --seed-demo)"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SandboxLoginError(f"{path} is not a sandbox demo file ({exc})") from None


def login_to_sandbox(root: str, app: SandboxApp, biller_id: str, block: str) -> None:
    """Authorize ``biller_id`` for ``app`` on the sandbox at ``root``; save block ``block``."""
    from billing_api.oauth import ClientCredentials, OAuthClient
    from blocks.admin import save_login
    from blocks.login import code_from_redirect, loopback_listener, prepare_login
    from sandbox.oauth.consent_robot import approve_consent

    settings = {
        "environment": "sandbox",
        "base_url": f"{root}/api",
        "login_url": f"{root}/auth/login",
        "client_id": app.client_id,
        "client_secret": app.client_secret,
    }
    with loopback_listener(None) as listener:
        request = prepare_login(
            settings["login_url"], client_id=app.client_id, redirect_uri=listener.redirect_uri
        )
        approve_consent(request.authorize_url, biller_id)
        code = code_from_redirect(listener.wait(30), request.state)
    oauth = OAuthClient(settings["base_url"], ClientCredentials(app.client_id, app.client_secret))
    with oauth:
        tokens = oauth.exchange_code(
            code, redirect_uri=request.redirect_uri, code_verifier=request.code_verifier
        )
    save_login(block, settings, tokens.to_token_set(0))
