"""Tables of webhooks: an app's subscriptions and settings, the event outbox, one delivery per
matching subscription, and its attempts.

``WebhookEvent`` rows are written by :func:`sandbox.webhooks.events.emit` in the transaction of the
state change that causes them (an event exists exactly when the change committed). The delivery
worker (:mod:`sandbox.webhooks.delivery`) fans each event out to ``WebhookDelivery`` rows, one per
enabled subscription that lists the kind, of every app the biller has authorised, and records each
HTTP attempt as a ``WebhookAttempt``. Times named ``*_at`` on deliveries and attempts are wall time
(receivers check them against their own clocks); ``occurred_at`` is the sandbox clock.

No foreign keys to ``webhooks``: the history of a deleted subscription stays readable.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base


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


class WebhookEvent(Base):
    """An event of one kind (``invoice``...) and name (``INVOICE_PAID``...) for one biller."""

    __tablename__ = "webhook_events"
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    biller_id: Mapped[str] = mapped_column(String(36), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    type: Mapped[str] = mapped_column(String(64))
    # The payload's entity ids (``{"invoiceId": ..., "customerId": ...}``) and, for kinds that
    # carry more than ids (``payout``), the extra payload fields.
    ids: Mapped[dict[str, Any]]
    extra: Mapped[dict[str, Any] | None]
    occurred_at: Mapped[datetime]
    emitted_at: Mapped[datetime]
    fanned_out: Mapped[bool] = mapped_column(default=False)


class WebhookDelivery(Base):
    """One event for one subscription; ``status``: PENDING, RETRYING, SUCCEEDED, FAILED (attempts
    or the retry window used up) or CANCELLED (the subscription was disabled or deleted)."""

    __tablename__ = "webhook_deliveries"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    event_id: Mapped[str] = mapped_column(String(36), index=True)
    client_id: Mapped[str] = mapped_column(String(64), index=True)
    webhook_id: Mapped[str] = mapped_column(String(36))
    url: Mapped[str] = mapped_column(String(2048))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    last_status_code: Mapped[int | None]
    last_error: Mapped[str | None] = mapped_column(String(500))


class WebhookAttempt(Base):
    """One HTTP POST of a delivery; ``instance_id`` is its ``adfin-webhook-instance-id``."""

    __tablename__ = "webhook_attempts"
    instance_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    delivery_id: Mapped[str] = mapped_column(String(36), index=True)
    number: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime]
    duration_ms: Mapped[float]
    status_code: Mapped[int | None]
    error: Mapped[str | None] = mapped_column(String(500))
    succeeded: Mapped[bool]
    signed: Mapped[bool]
    # The wait before the next attempt (None when this one was the last).
    next_delay_seconds: Mapped[float | None]


Index("ix_webhook_deliveries__due", WebhookDelivery.status, WebhookDelivery.next_attempt_at)
Index("ix_webhook_events__pending", WebhookEvent.fanned_out, WebhookEvent.seq)
