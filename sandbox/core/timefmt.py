"""How the sandbox writes times: ISO 8601 UTC, milliseconds and ``Z`` (the contract's choice)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
