"""``PlatformCredentials``: an app's client-credentials grant (webhook management)."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from prefect.blocks.abstract import CredentialsBlock
from pydantic import Field, SecretStr, model_validator

from blocks._common import (
    CredentialsConfigError,
    Environment,
    check_aware,
    load_named,
    resolve_base_url,
    save_named,
)
from blocks._lock import DEFAULT_TIMEOUT_SECONDS, PLATFORM_LIMIT_PREFIX, refresh_lock_for
from blocks._platform_auth import PlatformTokenProvider
from blocks.credentials import DOCS_URL
from blocks.webhook_settings import WebhookReceiverSettings

if TYPE_CHECKING:
    from billing_api import BillingClient, OAuthClient


class PlatformCredentials(CredentialsBlock):
    """An app's platform access (OAuth client-credentials grant), needed for webhook management.
    The access token is cached in the block and renewed by one worker at a time.

    Example:
        Load the stored credentials and list the app's webhooks:
        ```python
        from blocks import PlatformCredentials

        platform = PlatformCredentials.load("BLOCK_NAME")
        client = platform.get_client()
        ```
    """

    _block_type_name: ClassVar[str] = "Billops Platform Credentials"
    _block_type_slug: ClassVar[str] = "billops-platform-credentials"
    _documentation_url: ClassVar[str] = DOCS_URL  # type: ignore[assignment]

    environment: Environment = Field(
        default="production",
        description="Which service: production, staging or a local sandbox.",
    )
    base_url: str | None = Field(
        default=None,
        description=(
            "API root ending in /api; defaults to the real host of production or staging "
            "and is required for a sandbox."
        ),
    )
    client_id: str = Field(description="OAuth client id of the app.")
    client_secret: SecretStr = Field(description="OAuth client secret of the app.")
    scope: str | None = Field(
        default=None, description="Scope to ask for, if the service needs one (usually none)."
    )
    access_token: SecretStr | None = Field(
        default=None, description="Cached platform access token, shared by every worker."
    )
    access_token_expires_at: datetime | None = Field(
        default=None, description="When the cached access token expires (UTC)."
    )
    access_token_lifetime: float | None = Field(
        default=None,
        description="Lifetime of the cached access token as granted (expires_in), in seconds.",
    )
    webhooks: WebhookReceiverSettings | None = Field(
        default=None,
        description="The webhook receiver's secrets and options (billops webhooks setup).",
    )

    @model_validator(mode="after")
    def _check(self) -> PlatformCredentials:
        self.base_url = resolve_base_url(self.environment, self.base_url)
        self.access_token_expires_at = check_aware(
            self.access_token_expires_at, "access_token_expires_at"
        )
        return self

    @classmethod
    def load_named(cls, name: str) -> PlatformCredentials:
        """``load(name)``, synchronously and typed (``load`` is typed as maybe-a-coroutine)."""
        return load_named(cls, name)

    @property
    def name(self) -> str:
        """The block document's name."""
        name = self._block_document_name
        if not name:
            raise CredentialsConfigError(
                "this PlatformCredentials has not been saved: save it under a name first"
            )
        return name

    @property
    def api_url(self) -> str:
        """The API root (``base_url`` after defaults)."""
        if self.base_url is None:  # the validator always fills it
            raise CredentialsConfigError("base_url is not set")
        return self.base_url

    @property
    def lock_name(self) -> str:
        """The name of the lock that serialises renewals of the cached token."""
        return PLATFORM_LIMIT_PREFIX + self.name

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Hold the renewal lock (on the ledger's database, like the biller blocks')."""
        from billing_api import holding

        return holding(
            refresh_lock_for(self.lock_name),
            timeout=DEFAULT_TIMEOUT_SECONDS,
            store=self.name,
            unlock_command=f"billops auth unlock --platform-block {self.name}",
        )

    def read_cached(self) -> tuple[str | None, datetime | None, float | None]:
        """The cached token as stored now (fresh load): token, expiry, lifetime."""
        stored = load_named(type(self), self.name)
        token = stored.access_token.get_secret_value() if stored.access_token else None
        return token, stored.access_token_expires_at, stored.access_token_lifetime

    def write_cached(self, token: str, expires_at: datetime | None, lifetime: float | None) -> None:
        """Save a new token into the stored block (called under :meth:`lock`)."""
        stored = load_named(type(self), self.name)
        stored.access_token = SecretStr(token)
        stored.access_token_expires_at = check_aware(expires_at, "access_token_expires_at")
        stored.access_token_lifetime = lifetime
        save_named(stored, self.name, overwrite=True)
        self.access_token = stored.access_token
        self.access_token_expires_at = stored.access_token_expires_at
        self.access_token_lifetime = lifetime

    def save_webhook_settings(self, settings: WebhookReceiverSettings) -> None:
        """Save the receiver's settings into the stored block (the rest of it as stored now),
        under the block's lock so a concurrent token renewal is not overwritten."""
        with self.lock():
            stored = load_named(type(self), self.name)
            stored.webhooks = settings
            save_named(stored, self.name, overwrite=True)
        self.webhooks = settings

    def get_oauth_client(self) -> OAuthClient:
        """The token-endpoint client of this app."""
        from billing_api import ClientCredentials, OAuthClient

        return OAuthClient(
            self.api_url,
            ClientCredentials(self.client_id, self.client_secret.get_secret_value()),
        )

    def get_token_provider(self) -> PlatformTokenProvider:
        """Cached platform tokens for this app (memory, then block, then the token endpoint)."""
        self.name  # noqa: B018 - fail now, with a clear message, if the block was never saved
        return PlatformTokenProvider(self, self.get_oauth_client(), scope=self.scope)

    def get_client(self, **options: Any) -> BillingClient:
        """A ready ``BillingClient`` authenticated with the app's platform token.

        ``options`` go to ``BillingClient`` (``timeout``, ``max_retries``).
        """
        from billing_api import BillingClient, RefreshingAuth

        return BillingClient(self.api_url, RefreshingAuth(self.get_token_provider()), **options)
