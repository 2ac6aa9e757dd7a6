"""The sandbox's own state: run-time config overrides and the clock.

The clock is wall time plus an offset kept in the database, so it survives a restart and is the
same for every worker of one sandbox. Code and token lifetimes and every business date read
:func:`now`; webhook delivery timestamps and retry schedules use wall time instead, because a
receiver checks them against its own clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.config import RuntimeConfig
from sandbox.models import StateEntry

_CONFIG_KEY = "runtime_config"
_CLOCK_KEY = "clock"


def _read(session: Session, key: str) -> dict[str, Any] | None:
    entry = session.scalar(select(StateEntry).where(StateEntry.key == key))
    return entry.value if entry else None


def _write(session: Session, key: str, value: dict[str, Any]) -> None:
    entry = session.get(StateEntry, key)
    if entry is None:
        session.add(StateEntry(key=key, value=value))
    else:
        entry.value = value


def runtime_config(session: Session, defaults: RuntimeConfig) -> RuntimeConfig:
    """The start-up config with the overrides of ``POST /_sandbox/config`` applied."""
    overrides = _read(session, _CONFIG_KEY) or {}
    return defaults.model_copy(update=overrides)


def update_runtime_config(
    session: Session, defaults: RuntimeConfig, changes: dict[str, Any]
) -> RuntimeConfig:
    """Validate and store ``changes`` (camelCase names, as the admin API takes them)."""
    current = runtime_config(session, defaults)
    merged = RuntimeConfig.model_validate({**current.model_dump(by_alias=True), **changes})
    overrides = {
        name: value
        for name, value in merged.model_dump().items()
        if value != getattr(defaults, name)
    }
    _write(session, _CONFIG_KEY, overrides)
    return merged


def clock_offset(session: Session) -> timedelta:
    value = _read(session, _CLOCK_KEY) or {}
    return timedelta(seconds=float(value.get("offsetSeconds", 0)))


def clock_is_set(session: Session) -> bool:
    return _read(session, _CLOCK_KEY) is not None


def set_clock_offset(session: Session, offset: timedelta) -> None:
    _write(session, _CLOCK_KEY, {"offsetSeconds": offset.total_seconds()})


def now(session: Session) -> datetime:
    """The sandbox's current time (aware UTC)."""
    return datetime.now(UTC) + clock_offset(session)
