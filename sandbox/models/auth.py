"""Tables of apps, billers and OAuth: grants, authorization codes, refresh and access tokens.

Secrets (client secrets, codes, tokens) are stored as SHA-256 digests only: the sandbox can check a
presented value but a dump of its database hands nothing out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base


class App(Base):
    """An application (platform) registered with the service: OAuth client id and secret."""

    __tablename__ = "apps"
    client_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    secret_digest: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(255))
    redirect_uri: Mapped[str] = mapped_column(String(2048))
    created_at: Mapped[datetime]


class Biller(Base):
    """A biller. ``document`` holds the contract's biller fields other than id, status and times."""

    __tablename__ = "billers"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    status: Mapped[str] = mapped_column(String(32))
    channel_biller_id: Mapped[str] = mapped_column(String(64))
    document: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Grant(Base):
    """One authorisation of an app by a biller; every code and token descends from one grant."""

    __tablename__ = "grants"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    client_id: Mapped[str] = mapped_column(ForeignKey("apps.client_id", ondelete="CASCADE"))
    biller_id: Mapped[str] = mapped_column(ForeignKey("billers.id", ondelete="CASCADE"))
    scope: Mapped[str] = mapped_column(String(512))
    read_only: Mapped[bool]
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]
    revoked_reason: Mapped[str | None] = mapped_column(String(64))


class AuthorizationCode(Base):
    __tablename__ = "authorization_codes"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    grant_id: Mapped[str] = mapped_column(ForeignKey("grants.id", ondelete="CASCADE"))
    redirect_uri: Mapped[str | None] = mapped_column(String(2048))
    code_challenge: Mapped[str | None] = mapped_column(String(128))
    code_challenge_method: Mapped[str | None] = mapped_column(String(8))
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class RefreshToken(Base):
    """A single-use refresh token: ``used_at`` is set by the conditional UPDATE that rotates it."""

    __tablename__ = "refresh_tokens"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    grant_id: Mapped[str] = mapped_column(ForeignKey("grants.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class AccessToken(Base):
    """A bearer token: ``kind`` is ``biller`` (from a grant) or ``platform`` (client creds)."""

    __tablename__ = "access_tokens"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    client_id: Mapped[str] = mapped_column(ForeignKey("apps.client_id", ondelete="CASCADE"))
    grant_id: Mapped[str | None] = mapped_column(
        ForeignKey("grants.id", ondelete="CASCADE"), index=True
    )
    biller_id: Mapped[str | None] = mapped_column(String(36))
    read_only: Mapped[bool]
    scope: Mapped[str] = mapped_column(String(512))
    expires_at: Mapped[datetime]


Index("ix_grants__client_biller", Grant.client_id, Grant.biller_id)
