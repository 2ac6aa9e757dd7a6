"""What both credential blocks share: environments, their API roots, the recovery directory and
the "is this access token still usable" rule."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

Environment = Literal["production", "staging", "sandbox"]

# service-facts §1 [C]: the real hosts. The sandbox has no fixed address, so it has no default.
DEFAULT_BASE_URLS: dict[str, str] = {
    "production": "https://api.adfin.com/api",
    "staging": "https://api.staging.adfin.com/api",
}


class CredentialsConfigError(ValueError):
    """A credential block's settings are wrong; the message names the field."""


def resolve_base_url(environment: str, base_url: str | None) -> str:
    """The API root for ``environment``: the given one (checked) or the real host's default."""
    if base_url is None or not base_url.strip():
        default = DEFAULT_BASE_URLS.get(environment)
        if default is None:
            raise CredentialsConfigError(
                f"base_url is required for environment {environment!r}: give the sandbox's "
                "API root, e.g. http://127.0.0.1:8765/api"
            )
        return default
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CredentialsConfigError(f"base_url {url!r} is not an http(s) URL")
    if not parts.path.endswith("/api"):
        raise CredentialsConfigError(f"base_url {url!r} must be the API root, ending in /api")
    return url


def sandbox_login_url(base_url: str) -> str:
    """The sandbox's consent page: its root (``base_url`` without ``/api``) + ``/auth/login``."""
    return base_url[: -len("/api")] + "/auth/login"


def check_aware(value: datetime | None, field: str) -> datetime | None:
    """Timestamps are timezone-aware UTC; a naive one is refused (its zone would be a guess)."""
    if value is None:
        return None
    if value.tzinfo is None or value.utcoffset() is None:
        raise CredentialsConfigError(f"{field} must be timezone-aware (UTC), got {value!r}")
    return value.astimezone(UTC)


def default_recovery_dir() -> Path:
    """``$BILLOPS_HOME/recovery`` (default ``~/.billops/recovery``).

    The same place as ``billops.settings.BillopsSettings().recovery_dir``; it is computed here
    because ``blocks`` must not import the CLI package (imports point down only).
    """
    home = os.environ.get("BILLOPS_HOME")
    return (Path(home) if home else Path.home() / ".billops") / "recovery"


def token_usable(
    expires_at: datetime | None, lifetime: float | None, now: datetime, *, has_token: bool
) -> bool:
    """True when more than min(60 s, 10% of the granted lifetime) remains (issue 5 §2)."""
    if not has_token or expires_at is None:
        return False
    margin = 60.0 if lifetime is None else min(60.0, 0.1 * lifetime)
    return (expires_at - now).total_seconds() > margin
