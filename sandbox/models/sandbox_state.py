"""Tables of the sandbox's own state: run-time overrides, the clock, the request counters."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base


class StateEntry(Base):
    """Key/value state of the sandbox itself: run-time config overrides, the clock offset."""

    __tablename__ = "sandbox_state"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[dict[str, Any]]


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
