"""``BillerCredentials``: a biller's OAuth connection, kept in a Prefect block.

The block is the :class:`billing_api._tokens.TokenStore` of the refresh procedure
(ARCHITECTURE rule 4): ``read()`` loads the stored document fresh from the Prefect API, ``lock()``
holds the block's global concurrency limit, and ``write()`` saves a new token set only if the
stored rotation counter is still the one the caller read. Prefect blocks have no compare-and-swap
of their own (``save(overwrite=True)`` is last-writer-wins, prefect-notes §1.3), so that check is
only sound *inside* the lock: ``write()`` is only ever called there.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from prefect.blocks.abstract import CredentialsBlock
from pydantic import Field, SecretStr, model_validator

from blocks._common import (
    CredentialsConfigError,
    Environment,
    check_aware,
    default_recovery_dir,
    resolve_base_url,
    sandbox_login_url,
)
from blocks._lock import DEFAULT_TIMEOUT_SECONDS, LIMIT_PREFIX, refresh_lock

if TYPE_CHECKING:
    from billing_api._client import BillingClient
    from billing_api._tokens import TokenManager, TokenSet
    from billing_api.oauth import OAuthClient

DOCS_URL = "https://github.com/billops/billops/blob/main/README.md#credential-blocks"


B = TypeVar("B", bound=CredentialsBlock)


def _load_named(cls: type[B], name: str) -> B:
    """``cls.load(name)`` run synchronously even when called from async code's worker thread."""
    loaded = cls.load(name, _sync=True)  # type: ignore[call-arg]
    if not isinstance(loaded, cls):
        raise TypeError(f"block {name!r} did not load as {cls.__name__}")
    return loaded


def _save_named(block: CredentialsBlock, name: str, *, overwrite: bool) -> None:
    """``block.save(name)`` run synchronously (see :func:`_load_named`)."""
    block.save(name, overwrite=overwrite, _sync=True)  # type: ignore[call-arg]


class BillerCredentials(CredentialsBlock):
    """A biller's connection to the invoicing service: OAuth app, rotating refresh token and the
    cached access token. ``get_client()`` returns a ready ``BillingClient`` that refreshes under
    a lock shared by every process using this block.

    Example:
        Load the stored credentials and call the service:
        ```python
        from blocks import BillerCredentials

        credentials = BillerCredentials.load("BLOCK_NAME")
        client = credentials.get_client()
        biller = client.biller.retrieve()
        ```
    """

    _block_type_name: ClassVar[str] = "Billops Biller Credentials"
    _block_type_slug: ClassVar[str] = "billops-biller-credentials"
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
    login_url: str | None = Field(
        default=None,
        description=(
            "Authorize (consent) page used by `billops auth login`; the sandbox's is its "
            "/auth/login, for production and staging it must be given."
        ),
    )
    redirect_uri: str | None = Field(
        default=None,
        description=(
            "Redirect URI registered with the service for this app (a loopback URI on the "
            "sandbox may use any port)."
        ),
    )
    client_id: str = Field(description="OAuth client id of the app.")
    client_secret: SecretStr = Field(description="OAuth client secret of the app.")
    refresh_token: SecretStr = Field(
        description="Current single-use refresh token; replaced on every refresh."
    )
    access_token: SecretStr | None = Field(
        default=None, description="Cached access token, shared by every worker of this block."
    )
    access_token_expires_at: datetime | None = Field(
        default=None, description="When the cached access token expires (UTC)."
    )
    access_token_lifetime: float | None = Field(
        default=None,
        description="Lifetime of the cached access token as granted (expires_in), in seconds.",
    )
    rotation: int = Field(
        default=0, ge=0, description="How many times the refresh token has been rotated."
    )
    last_refreshed_at: datetime | None = Field(
        default=None, description="When the refresh token was last rotated (UTC)."
    )

    @model_validator(mode="after")
    def _check(self) -> BillerCredentials:
        self.base_url = resolve_base_url(self.environment, self.base_url)
        if self.login_url is None and self.environment == "sandbox":
            self.login_url = sandbox_login_url(self.base_url)
        self.access_token_expires_at = check_aware(
            self.access_token_expires_at, "access_token_expires_at"
        )
        self.last_refreshed_at = check_aware(self.last_refreshed_at, "last_refreshed_at")
        return self

    @classmethod
    def load_named(cls, name: str) -> BillerCredentials:
        """``load(name)``, synchronously and typed (``load`` is typed as maybe-a-coroutine)."""
        return _load_named(cls, name)

    # --- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The block document's name (the store's name in logs and the recovery file)."""
        name = self._block_document_name
        if not name:
            raise CredentialsConfigError(
                f"this {type(self).__name__} has not been saved: save it under a name first "
                "(block.save('acme')) so workers can share it"
            )
        return name

    @property
    def api_url(self) -> str:
        """The API root (``base_url`` after defaults)."""
        if self.base_url is None:  # the validator always fills it
            raise CredentialsConfigError("base_url is not set")
        return self.base_url

    @property
    def reauthorize_command(self) -> str | None:
        """The command a person runs when the refresh token is dead."""
        return f"billops auth login --block {self.name}"

    @property
    def recover_command(self) -> str:
        """The command that restores a recovery file into this block."""
        return f"billops auth recover --block {self.name}"

    @property
    def lock_name(self) -> str:
        """The global concurrency limit that serialises this block's refreshes."""
        return LIMIT_PREFIX + self.name

    # --- TokenStore -----------------------------------------------------------------------
    def read(self) -> TokenSet:
        """The token set as stored now (a fresh load from the Prefect API, never a cache)."""
        stored = _load_named(type(self), self.name)
        self._adopt_tokens(stored)
        return stored.token_set()

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The cross-process refresh lock (GCL of 1, created when missing, ``strict=True``)."""
        return refresh_lock(self.lock_name, timeout_seconds=DEFAULT_TIMEOUT_SECONDS)

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        """Save ``tokens`` if the stored rotation is still ``expected_rotation``.

        Raises ``StaleTokenSet`` otherwise. Call it only while holding :meth:`lock`: the check
        and the save are two API calls, atomic only under the lock.
        """
        from billing_api._tokens import StaleTokenSet

        stored = _load_named(type(self), self.name)
        if stored.rotation != expected_rotation:
            raise StaleTokenSet(
                f"block {self.name!r} is at rotation {stored.rotation}, "
                f"expected {expected_rotation}"
            )
        stored.set_tokens(tokens)
        _save_named(stored, self.name, overwrite=True)
        self._adopt_tokens(stored)

    # --- conversions ----------------------------------------------------------------------
    def token_set(self) -> TokenSet:
        """This instance's token fields as a ``TokenSet``."""
        from billing_api._tokens import TokenSet

        return TokenSet(
            refresh_token=self.refresh_token.get_secret_value(),
            access_token=self.access_token.get_secret_value() if self.access_token else None,
            access_token_expires_at=self.access_token_expires_at,
            access_token_lifetime=self.access_token_lifetime,
            rotation=self.rotation,
            last_refreshed_at=self.last_refreshed_at,
        )

    def set_tokens(self, tokens: TokenSet) -> None:
        """Put ``tokens`` into this instance's fields (does not save)."""
        self.refresh_token = SecretStr(tokens.refresh_token)
        self.access_token = SecretStr(tokens.access_token) if tokens.access_token else None
        self.access_token_expires_at = check_aware(
            tokens.access_token_expires_at, "access_token_expires_at"
        )
        self.access_token_lifetime = tokens.access_token_lifetime
        self.rotation = tokens.rotation
        self.last_refreshed_at = check_aware(tokens.last_refreshed_at, "last_refreshed_at")

    def _adopt_tokens(self, other: BillerCredentials) -> None:
        # Keep this instance current so a later save() of it cannot write back stale tokens.
        self.set_tokens(other.token_set())

    # --- clients --------------------------------------------------------------------------
    def get_oauth_client(self) -> OAuthClient:
        """The token-endpoint client of this app."""
        from billing_api.oauth import ClientCredentials, OAuthClient

        return OAuthClient(
            self.api_url,
            ClientCredentials(self.client_id, self.client_secret.get_secret_value()),
        )

    def get_token_manager(self, *, recovery_dir: Path | None = None) -> TokenManager:
        """The refresh procedure over this block (recovery files under ``$BILLOPS_HOME``)."""
        from billing_api._tokens import TokenManager

        return TokenManager(
            self,
            self.get_oauth_client(),
            recovery_dir=recovery_dir or default_recovery_dir(),
        )

    def get_client(self, *, recovery_dir: Path | None = None, **options: Any) -> BillingClient:
        """A ready ``BillingClient`` whose token store is this block.

        ``options`` go to ``BillingClient`` (``timeout``, ``max_retries``).
        """
        from billing_api._auth import RefreshingAuth
        from billing_api._client import BillingClient

        self.name  # noqa: B018 - fail now, with a clear message, if the block was never saved
        auth = RefreshingAuth(self.get_token_manager(recovery_dir=recovery_dir))
        return BillingClient(self.api_url, auth, **options)
