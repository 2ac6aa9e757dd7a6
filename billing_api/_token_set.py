"""Token sets, the ``TokenStore`` protocol, and the recovery file (see ``_tokens`` for the
refresh procedure that uses them).

A :class:`TokenSet` is one credential's tokens plus the rotation counter that the store's
compare-and-swap checks. Its ``repr`` masks every secret. The recovery file holds a token set that
could not be stored: mode 0600 in a 0700 directory, written atomically.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from billing_api._exceptions import BillingApiError

__all__ = [
    "MARGIN_FRACTION",
    "MAX_MARGIN_SECONDS",
    "RECOVERY_DIR_ENV",
    "StaleTokenSet",
    "TokenSet",
    "TokenStore",
    "default_recovery_dir",
    "read_recovery_file",
    "recovery_file_path",
    "scrub",
    "token_set_from_dict",
    "token_set_to_dict",
    "utc_now",
    "write_recovery_file",
]

# An access token is renewed when less than min(60 s, 10% of its lifetime) remains.
MAX_MARGIN_SECONDS = 60.0
MARGIN_FRACTION = 0.10
RECOVERY_DIR_ENV = "BILLOPS_HOME"


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def _mask(secret: str | None) -> str:
    return "None" if secret is None else "'***'"


@dataclass(frozen=True)
class TokenSet:
    """One credential's tokens as stored, with the rotation counter the CAS compares."""

    refresh_token: str
    access_token: str | None = None
    access_token_expires_at: datetime | None = None  # aware UTC
    access_token_lifetime: float | None = None  # seconds, as granted (``expires_in``)
    rotation: int = 0  # +1 on every successful refresh
    last_refreshed_at: datetime | None = None

    def __post_init__(self) -> None:
        for name in ("access_token_expires_at", "last_refreshed_at"):
            value = getattr(self, name)
            if value is not None and value.utcoffset() is None:
                raise ValueError(f"TokenSet.{name} must be timezone-aware, got {value!r}")

    def __repr__(self) -> str:
        return (
            f"TokenSet(refresh_token={_mask(self.refresh_token)}, "
            f"access_token={_mask(self.access_token)}, "
            f"access_token_expires_at={self.access_token_expires_at!r}, "
            f"access_token_lifetime={self.access_token_lifetime!r}, "
            f"rotation={self.rotation!r}, last_refreshed_at={self.last_refreshed_at!r})"
        )

    __str__ = __repr__

    def renewal_margin(self) -> float:
        """Seconds before expiry at which the access token counts as spent."""
        if self.access_token_lifetime is None:
            return MAX_MARGIN_SECONDS
        return min(MAX_MARGIN_SECONDS, MARGIN_FRACTION * self.access_token_lifetime)

    def access_token_usable(self, now: datetime) -> bool:
        """True when there is an access token with more than the renewal margin left.

        A token without a known expiry counts as usable: the service always sends
        ``expires_in``, and if it ever did not, a 401 still triggers one refresh (rather than
        rotating the refresh token on every request).
        """
        if self.access_token is None:
            return False
        if self.access_token_expires_at is None:
            return True
        remaining = (self.access_token_expires_at - now).total_seconds()
        return remaining > self.renewal_margin()


class StaleTokenSet(BillingApiError):
    """``TokenStore.write`` refused: the stored rotation counter moved since it was read."""


@runtime_checkable
class TokenStore(Protocol):
    """Where one credential's token set lives (a Prefect block, a file, ...)."""

    def read(self) -> TokenSet:
        """The token set as stored now (never a cached copy)."""
        ...

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The per-credential refresh lock; it must span processes (and machines, if shared)."""
        ...

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        """Store ``tokens`` if the stored rotation is still ``expected_rotation``.

        Raises :class:`StaleTokenSet` otherwise.
        """
        ...

    @property
    def reauthorize_command(self) -> str | None:
        """The command a person runs to log in again, e.g. ``billops auth login --block acme``."""
        ...

    @property
    def name(self) -> str:
        """A short name for log lines and the recovery file (no secrets)."""
        ...


# --- serialisation and the recovery file ----------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _parse_time(value: Any, field_name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"token set field {field_name!r} must be an ISO 8601 string or null")
    parsed = datetime.fromisoformat(value)
    if parsed.utcoffset() is None:
        raise ValueError(f"token set field {field_name!r} has no timezone: {value!r}")
    return parsed.astimezone(UTC)


def token_set_to_dict(tokens: TokenSet) -> dict[str, Any]:
    """A JSON-ready dict of ``tokens`` (it holds the secrets: write it only where owners read)."""
    return {
        "refresh_token": tokens.refresh_token,
        "access_token": tokens.access_token,
        "access_token_expires_at": _iso(tokens.access_token_expires_at),
        "access_token_lifetime": tokens.access_token_lifetime,
        "rotation": tokens.rotation,
        "last_refreshed_at": _iso(tokens.last_refreshed_at),
    }


def token_set_from_dict(data: Any, *, source: str = "token set") -> TokenSet:
    """The inverse of :func:`token_set_to_dict`; errors name ``source`` and the field."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}")
    refresh = data.get("refresh_token")
    if not isinstance(refresh, str) or not refresh:
        raise ValueError(f"{source}: field 'refresh_token' is missing or not a string")
    access = data.get("access_token")
    if access is not None and not isinstance(access, str):
        raise ValueError(f"{source}: field 'access_token' must be a string or null")
    lifetime = data.get("access_token_lifetime")
    if lifetime is not None and (
        isinstance(lifetime, bool) or not isinstance(lifetime, int | float)
    ):
        raise ValueError(f"{source}: field 'access_token_lifetime' must be a number or null")
    rotation = data.get("rotation", 0)
    if isinstance(rotation, bool) or not isinstance(rotation, int) or rotation < 0:
        raise ValueError(f"{source}: field 'rotation' must be a non-negative integer")
    try:
        expires_at = _parse_time(data.get("access_token_expires_at"), "access_token_expires_at")
        refreshed_at = _parse_time(data.get("last_refreshed_at"), "last_refreshed_at")
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None
    return TokenSet(
        refresh_token=refresh,
        access_token=access,
        access_token_expires_at=expires_at,
        access_token_lifetime=float(lifetime) if lifetime is not None else None,
        rotation=rotation,
        last_refreshed_at=refreshed_at,
    )


def default_recovery_dir() -> Path:
    """``$BILLOPS_HOME/recovery``, or ``~/.billops/recovery`` when ``BILLOPS_HOME`` is unset."""
    home = os.environ.get(RECOVERY_DIR_ENV)
    base = Path(home) if home else Path.home() / ".billops"
    return base / "recovery"


def recovery_file_path(recovery_dir: Path, store_name: str) -> Path:
    """``<recovery_dir>/<store name>.json``; characters unsafe in a file name become ``_``."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", store_name).lstrip(".") or "credential"
    return recovery_dir / f"{safe}.json"


def write_recovery_file(recovery_dir: Path, store_name: str, tokens: TokenSet) -> Path:
    """Write ``tokens`` to the recovery file, mode 0600 in a 0700 directory, atomically."""
    recovery_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = recovery_file_path(recovery_dir, store_name)
    payload = json.dumps({"store": store_name, **token_set_to_dict(tokens)}, indent=2)
    # mkstemp creates the file 0600; write, fsync, then rename over any older recovery file.
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=recovery_dir)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    return target


def read_recovery_file(path: Path) -> TokenSet:
    """The token set saved by :func:`write_recovery_file` (for ``billops auth recover``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"recovery file {path}: not valid JSON (line {error.lineno}, column {error.colno})"
        ) from None
    return token_set_from_dict(data, source=f"recovery file {path}")


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every given secret replaced by ``***`` (for messages of foreign errors)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
