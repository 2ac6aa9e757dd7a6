"""Tables of the sandbox (SQLAlchemy 2 typed mapping).

Secrets (client secrets, codes, tokens) are stored as SHA-256 digests only: the sandbox can check a
presented value but a dump of its database hands nothing out.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    TypeDecorator,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s__%(column_0_N_name)s",
    "uq": "uq_%(table_name)s__%(column_0_N_name)s",
    "ck": "ck_%(table_name)s__%(constraint_name)s",
    "fk": "fk_%(table_name)s__%(column_0_N_name)s__%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every dialect (SQLite has no time zones: store naive UTC there)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("timestamps must carry a time zone")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Money(TypeDecorator[Decimal]):
    """Exact pounds on every dialect: stored as whole pennies (SQLite has no exact decimal)."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> int | None:
        if value is None:
            return None
        pennies = Decimal(value) * 100
        if pennies != pennies.to_integral_value():
            raise ValueError(f"money must have at most 2 decimal places, got {value}")
        return int(pennies)

    def process_result_value(self, value: int | None, dialect: Dialect) -> Decimal | None:
        return None if value is None else (Decimal(value) / 100).quantize(Decimal("0.01"))


class DecimalText(TypeDecorator[Decimal]):
    """An exact decimal that is not money (a tax rate such as 17.5), stored as text."""

    impl = String(32)
    cache_ok = True

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> str | None:
        return None if value is None else str(Decimal(value))

    def process_result_value(self, value: str | None, dialect: Dialect) -> Decimal | None:
        return None if value is None else Decimal(value)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        datetime: UtcDateTime(),
        date: Date(),
        Decimal: Money(),
        dict[str, Any]: JSON(),
        list[Any]: JSON(),
    }


class StateEntry(Base):
    """Key/value state of the sandbox itself: run-time config overrides, the clock offset."""

    __tablename__ = "sandbox_state"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[dict[str, Any]]


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


class Webhook(Base):
    """A webhook subscription of an app (``/apps/{clientId}/webhooks``)."""

    __tablename__ = "webhooks"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    client_id: Mapped[str] = mapped_column(
        ForeignKey("apps.client_id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(String(2048))
    name: Mapped[str | None] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(String(1024))
    events: Mapped[list[str]] = mapped_column(JSON)
    enabled: Mapped[bool]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class AppWebhookSettings(Base):
    """App-wide webhook settings: the signing secret (``PUT .../webhooks/digest``) and the
    credentials presented to the app's target URLs (``PUT .../webhooks/auth``).

    Unlike the app's client secret these are kept in clear: the service does not only check
    them, it signs deliveries and authenticates to the targets with them.
    """

    __tablename__ = "app_webhook_settings"
    client_id: Mapped[str] = mapped_column(
        ForeignKey("apps.client_id", ondelete="CASCADE"), primary_key=True
    )
    signing_secret: Mapped[str | None] = mapped_column(String(128))
    basic_username: Mapped[str | None] = mapped_column(String(255))
    basic_password: Mapped[str | None] = mapped_column(String(1024))
    api_key_header: Mapped[str | None] = mapped_column(String(255))
    api_key_value: Mapped[str | None] = mapped_column(String(4096))
    updated_at: Mapped[datetime]


class Counter(Base):
    """What the service saw, for ``GET /_sandbox/stats``.

    ``owner`` is ``biller:<id>``, ``app:<clientId>`` or ``anonymous``; ``name`` the counter family
    (``token_grants``, ``invalid_grant``, ``requests``, ``bulk_import_jobs``) and ``key`` its member
    (a grant type, an operationId).
    """

    __tablename__ = "counters"
    owner: Mapped[str] = mapped_column(String(80), primary_key=True)
    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    key: Mapped[str] = mapped_column(String(120), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


Index("ix_grants__client_biller", Grant.client_id, Grant.biller_id)
