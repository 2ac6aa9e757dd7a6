"""OAuth 2.0 as the service does it: apps, authorization codes, grants and rotating tokens.

- Authorization codes are single use and expire (``codeTtl``). A second use answers
  ``invalid_grant`` and revokes every token issued from that code's grant, as RFC 6749 §4.1.2 asks.
- Refresh tokens are single use. Rotation is a conditional ``UPDATE ... WHERE used_at IS NULL``
  whose row count decides the winner, so two concurrent refreshes with the same token can never
  both succeed, on SQLite or PostgreSQL. What a replay does besides failing follows
  ``refreshReusePolicy`` (see :class:`sandbox.config.RuntimeConfig`).
- Client credentials give a platform token and no refresh token.
- Revoking a refresh token leaves the access tokens already issued valid until they expire [C].

Every function takes the session and the sandbox time ``now`` explicitly; none commits.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from sandbox.config import RuntimeConfig
from sandbox.core.errors import OAuthError
from sandbox.models import AccessToken, App, AuthorizationCode, Grant, RefreshToken

BILLER_SCOPE = "openid profile email phone offline_access"
PLATFORM_SCOPE = (
    "create:client_credentials read:client_credentials "
    "update:client_credentials delete:client_credentials"
)
DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback"
_LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
_PKCE_ALPHABET = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@dataclass(frozen=True)
class Principal:
    """Who a bearer token speaks for."""

    kind: str  # "biller" or "platform"
    client_id: str
    biller_id: str | None
    read_only: bool

    @property
    def owner(self) -> str:
        return f"biller:{self.biller_id}" if self.kind == "biller" else f"app:{self.client_id}"


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _new_token(prefix: str, nbytes: int = 32) -> str:
    return prefix + secrets.token_urlsafe(nbytes)


# --- apps ---------------------------------------------------------------------------------------


def create_app(
    session: Session, *, name: str, redirect_uri: str | None, now: datetime
) -> tuple[App, str]:
    """Register an app; returns it with its client secret (shown once, stored as a digest)."""
    secret = _new_token("sbx_cs_")
    app = App(
        client_id=_new_token("sbx_ci_", 12),
        secret_digest=digest(secret),
        name=name,
        redirect_uri=redirect_uri or DEFAULT_REDIRECT_URI,
        created_at=now,
    )
    session.add(app)
    return app, secret


def authenticate_client(session: Session, client_id: str, client_secret: str) -> App | None:
    app = session.get(App, client_id)
    if app is None or not hmac.compare_digest(app.secret_digest, digest(client_secret)):
        return None
    return app


def is_loopback_redirect(uri: str) -> bool:
    """``http://127.0.0.1:<any port>/...`` and friends, as RFC 8252 §7.3 allows native apps."""
    parts = urlsplit(uri)
    return parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS and not parts.fragment


def is_allowed_redirect(app: App, uri: str) -> bool:
    return uri == app.redirect_uri or is_loopback_redirect(uri)


# --- codes --------------------------------------------------------------------------------------


def issue_code(
    session: Session,
    *,
    app: App,
    biller_id: str,
    redirect_uri: str | None,
    scope: str | None,
    read_only: bool,
    code_challenge: str | None,
    code_challenge_method: str | None,
    now: datetime,
    config: RuntimeConfig,
) -> str:
    """Create a grant and its authorization code; returns the code."""
    if code_challenge and (code_challenge_method or "plain") not in ("S256", "plain"):
        raise ValueError("code_challenge_method must be S256 or plain")
    grant = Grant(
        id=str(uuid.uuid4()),
        client_id=app.client_id,
        biller_id=biller_id,
        scope=scope or BILLER_SCOPE,
        read_only=read_only,
        created_at=now,
    )
    code = _new_token("sbx_code_", 24)
    session.add(grant)
    session.flush()  # the code row refers to the grant (no ORM relationship orders the inserts)
    session.add(
        AuthorizationCode(
            digest=digest(code),
            grant_id=grant.id,
            redirect_uri=redirect_uri,
            code_challenge=code_challenge,
            code_challenge_method=(code_challenge_method or "plain") if code_challenge else None,
            expires_at=now + timedelta(seconds=config.code_ttl),
        )
    )
    return code


def _pkce_matches(code: AuthorizationCode, verifier: str | None) -> bool:
    if code.code_challenge is None:
        return True
    if not verifier or not 43 <= len(verifier) <= 128 or set(verifier) - _PKCE_ALPHABET:
        return False
    if code.code_challenge_method == "S256":
        hashed = hashlib.sha256(verifier.encode("ascii")).digest()
        expected = base64.urlsafe_b64encode(hashed).rstrip(b"=").decode("ascii")
    else:
        expected = verifier
    return hmac.compare_digest(expected, code.code_challenge)


def _revoke_grant(session: Session, grant: Grant, *, reason: str, now: datetime) -> None:
    grant.revoked_at = now
    grant.revoked_reason = reason
    session.execute(
        update(RefreshToken)
        .where(RefreshToken.grant_id == grant.id, RefreshToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )


def exchange_code(
    session: Session,
    *,
    app: App,
    code: str,
    redirect_uri: str | None,
    code_verifier: str | None,
    now: datetime,
    config: RuntimeConfig,
) -> tuple[dict[str, Any], str]:
    """The ``authorization_code`` grant; returns the token response and the biller's owner key."""
    row = session.get(AuthorizationCode, digest(code))
    grant = session.get(Grant, row.grant_id) if row else None
    if row is None or grant is None or grant.client_id != app.client_id:
        raise OAuthError("invalid_grant", "unknown authorization code")
    owner = f"biller:{grant.biller_id}"
    claimed = session.execute(
        update(AuthorizationCode)
        .where(AuthorizationCode.digest == row.digest, AuthorizationCode.used_at.is_(None))
        .values(used_at=now)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        # A replayed code: refuse it and revoke what the first use obtained (RFC 6749 §4.1.2).
        _revoke_grant(session, grant, reason="authorization_code_reuse", now=now)
        session.execute(
            update(AccessToken).where(AccessToken.grant_id == grant.id).values(expires_at=now)
        )
        raise OAuthError("invalid_grant", "authorization code already used", owner=owner)
    if row.expires_at <= now:
        raise OAuthError("invalid_grant", "authorization code expired", owner=owner)
    if row.redirect_uri is not None and redirect_uri != row.redirect_uri:
        raise OAuthError(
            "invalid_grant", "redirect_uri does not match the authorization request", owner=owner
        )
    if not _pkce_matches(row, code_verifier):
        raise OAuthError("invalid_grant", "code_verifier does not match", owner=owner)
    return _issue_biller_tokens(session, grant=grant, now=now, config=config), owner


def rotate_refresh_token(
    session: Session, *, app: App, refresh_token: str, now: datetime, config: RuntimeConfig
) -> tuple[dict[str, Any], str]:
    """The ``refresh_token`` grant: a new pair; the presented token is dead afterwards."""
    row = session.get(RefreshToken, digest(refresh_token))
    grant = session.get(Grant, row.grant_id) if row else None
    if row is None or grant is None or grant.client_id != app.client_id:
        raise OAuthError("invalid_grant", "unknown refresh token")
    owner = f"biller:{grant.biller_id}"
    if grant.revoked_at is not None or row.revoked_at is not None:
        raise OAuthError("invalid_grant", "refresh token revoked", owner=owner)
    claimed = session.execute(
        update(RefreshToken)
        .where(
            RefreshToken.digest == row.digest,
            RefreshToken.used_at.is_(None),
            RefreshToken.revoked_at.is_(None),
        )
        .values(used_at=now)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        if config.refresh_reuse_policy == "revoke_family":
            _revoke_grant(session, grant, reason="refresh_token_reuse", now=now)
        raise OAuthError(
            "invalid_grant",
            "refresh token already used: each refresh returns a new one, store it",
            owner=owner,
        )
    return _issue_biller_tokens(session, grant=grant, now=now, config=config), owner


def _issue_biller_tokens(
    session: Session, *, grant: Grant, now: datetime, config: RuntimeConfig
) -> dict[str, Any]:
    access = _new_token("sbx_at_")
    refresh = _new_token("v1.", 48)  # the real service's refresh tokens look like v1.<opaque>
    session.add(
        AccessToken(
            digest=digest(access),
            kind="biller",
            client_id=grant.client_id,
            grant_id=grant.id,
            biller_id=grant.biller_id,
            read_only=grant.read_only,
            scope=grant.scope,
            expires_at=now + timedelta(seconds=config.access_token_ttl),
        )
    )
    session.add(RefreshToken(digest=digest(refresh), grant_id=grant.id, created_at=now))
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": config.access_token_ttl,
        "refresh_token": refresh,
        "scope": grant.scope,
    }


def issue_platform_token(
    session: Session, *, app: App, now: datetime, config: RuntimeConfig
) -> dict[str, Any]:
    """The ``client_credentials`` grant: a platform token, never a refresh token."""
    access = _new_token("sbx_pt_")
    session.add(
        AccessToken(
            digest=digest(access),
            kind="platform",
            client_id=app.client_id,
            grant_id=None,
            biller_id=None,
            read_only=False,
            scope=PLATFORM_SCOPE,
            expires_at=now + timedelta(seconds=config.platform_token_ttl),
        )
    )
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": config.platform_token_ttl,
        "scope": PLATFORM_SCOPE,
    }


def revoke_refresh_token(session: Session, *, app: App, token: str, now: datetime) -> None:
    """RFC 7009: an unknown token is not an error; another app's token is refused."""
    row = session.get(RefreshToken, digest(token))
    if row is None:
        return
    grant = session.get(Grant, row.grant_id)
    if grant is None or grant.client_id != app.client_id:
        raise OAuthError("unauthorized_client", "the token was not issued to this client")
    if row.revoked_at is None:
        row.revoked_at = now


def authenticate_bearer(session: Session, token: str, now: datetime) -> Principal | None:
    row = session.get(AccessToken, digest(token))
    if row is None or row.expires_at <= now:
        return None
    return Principal(
        kind=row.kind, client_id=row.client_id, biller_id=row.biller_id, read_only=row.read_only
    )


def grant_for(session: Session, *, client_id: str, biller_id: str) -> Grant | None:
    """The newest live grant of ``client_id`` by ``biller_id`` (``GET /oauth2/authorization``)."""
    return session.scalars(
        select(Grant)
        .where(
            Grant.client_id == client_id,
            Grant.biller_id == biller_id,
            Grant.revoked_at.is_(None),
        )
        .order_by(Grant.created_at.desc())
    ).first()
