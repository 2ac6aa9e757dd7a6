"""Every secret the sandbox has handed out, for a test's secret scan (``GET /_sandbox/secrets``).

Client secrets, authorization codes and tokens are kept as SHA-256 digests only (see
``sandbox/models/auth.py``), so they are listed as digests: a scan hashes each token-shaped piece
of the text it reads and looks it up, and finds a token rotated by a process the test never saw.
Webhook signing secrets and target credentials are kept in clear (the service signs and
authenticates with them) and are listed as they are.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.models import AccessToken, App, AuthorizationCode, RefreshToken
from sandbox.models.webhooks import AppWebhookSettings

# What each kind of token starts with (``tokens._new_token``'s prefixes; refresh tokens look
# like the real service's ``v1.<opaque>``): a scan takes these, then the urlsafe alphabet.
TOKEN_PREFIXES = ("sbx_cs_", "sbx_code_", "sbx_at_", "sbx_pt_", "v1.")


def issued_secrets(session: Session) -> dict[str, Any]:
    """``digests``: SHA-256 hex digests of every client secret, authorization code, access and
    refresh token issued; ``clear``: every webhook signing secret and target credential set;
    ``prefixes``: what a token starts with."""
    digests: list[str] = list(session.scalars(select(App.secret_digest)))
    for column in (AuthorizationCode.digest, RefreshToken.digest, AccessToken.digest):
        digests += session.scalars(select(column))
    clear: list[str] = []
    for row in session.scalars(select(AppWebhookSettings)):
        clear += [
            value for value in (row.signing_secret, row.basic_password, row.api_key_value) if value
        ]
    return {
        "digests": sorted(set(digests)),
        "clear": sorted(set(clear)),
        "prefixes": TOKEN_PREFIXES,
    }
