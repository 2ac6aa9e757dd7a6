"""What both credential blocks share: environments, their API roots, timestamps, and the
synchronous load and save of a named block."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from prefect.blocks.abstract import CredentialsBlock

Environment = Literal["production", "staging", "sandbox"]

# The real hosts (docs/service.md §1 Environments and hosts). The sandbox has no fixed address,
# so it has no default.
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


B = TypeVar("B", bound=CredentialsBlock)


def load_named(cls: type[B], name: str) -> B:
    """``cls.load(name)`` run synchronously even when called from async code's worker thread."""
    loaded = cls.load(name, _sync=True)  # type: ignore[call-arg]
    if not isinstance(loaded, cls):
        raise TypeError(f"block {name!r} did not load as {cls.__name__}")
    return loaded


def save_named(block: CredentialsBlock, name: str, *, overwrite: bool) -> None:
    """``block.save(name)`` run synchronously (see :func:`load_named`)."""
    block.save(name, overwrite=overwrite, _sync=True)  # type: ignore[call-arg]
