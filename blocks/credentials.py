"""``BillerCredentials``: a biller's OAuth connection, kept in a Prefect block.

The block is the ``billing_api.TokenStore`` of the refresh procedure (``docs/credentials.md``):
``read()`` reads the stored document fresh from the Prefect API, ``refresh_lock()`` is the block's
lock on the ledger's database (``blocks/_lock.py``), and ``write()`` saves a new token set only if
the stored rotation counter is still the one the caller read. Prefect blocks have no
compare-and-swap of their own (docs/conventions.md §13 Prefect facts), so that check is only
sound *inside* the lock: ``write()`` is only ever called there. Reads and writes go through one
long-lived Prefect client (``blocks/_prefect_api.py``) and fail with ``TokenStoreError`` naming
the block and the Prefect API.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from prefect.blocks.abstract import CredentialsBlock
from pydantic import Field, PrivateAttr, SecretStr, ValidationError, model_validator

from billing_api import StaleTokenSet, TokenSet, TokenStoreError, holding
from blocks._common import (
    CredentialsConfigError,
    Environment,
    check_aware,
    load_named,
    resolve_base_url,
    sandbox_login_url,
)
from blocks._lock import DEFAULT_TIMEOUT_SECONDS, LIMIT_PREFIX, refresh_lock_for
from blocks._prefect_api import read_document, update_document

if TYPE_CHECKING:
    from billing_api import (
        BillingClient,
        OAuthClient,
        RefreshLock,
        TokenJournal,
        TokenManager,
    )

DOCS_URL = "https://github.com/billops/billops/blob/main/README.md#credential-blocks"


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
    # The rotation this instance last read from, or wrote to, the stored document.
    _synced_rotation: int | None = PrivateAttr(None)

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
        return load_named(cls, name)

    # --- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The block document's name (the store's name in logs and the recovery journal)."""
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
        """The command that saves a journal's token set into this block when no worker runs."""
        return f"billops auth recover --block {self.name}"

    @property
    def unlock_command(self) -> str:
        """The command that frees the refresh lock of a holder that is gone."""
        return f"billops auth unlock --block {self.name}"

    @property
    def lock_name(self) -> str:
        """The name of the lock that serialises this block's refreshes."""
        return LIMIT_PREFIX + self.name

    # --- TokenStore -----------------------------------------------------------------------
    def read(self) -> TokenSet:
        """The token set as stored now (read from the Prefect API, never a cache)."""
        return self._read_stored().token_set()

    def _read_stored(self) -> BillerCredentials:
        document = read_document(self.name, self.get_block_type_slug())
        try:
            stored = type(self).model_validate(document.data)
        except ValidationError as error:
            fields = ", ".join(".".join(map(str, e["loc"])) for e in error.errors())
            raise TokenStoreError(
                self.name, f"credential block {self.name!r} holds invalid fields: {fields}"
            ) from None
        self._block_document_id = document.id
        self._adopt_tokens(stored)
        self._synced_rotation = stored.rotation
        return stored

    def refresh_lock(self) -> RefreshLock:
        """This block's refresh lock on the ledger's database (``blocks/_lock.py``)."""
        return refresh_lock_for(self.lock_name)

    def lock(
        self, timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> contextlib.AbstractContextManager[None]:
        """Hold the refresh lock (for ``billops auth`` writes; workers wait with re-reads)."""
        return holding(
            self.refresh_lock(),
            timeout=timeout,
            store=self.name,
            unlock_command=self.unlock_command,
        )

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        """Save ``tokens`` if the stored rotation is still ``expected_rotation``.

        Raises ``StaleTokenSet`` otherwise. Call it only while holding the refresh lock: Prefect
        has no conditional write, so the check is sound only there. Under the lock, the rotation
        this instance last read or wrote *is* the stored one (every writer holds the lock), so
        the document is only read again when this instance has not seen it yet.
        """
        if self._synced_rotation is None or self._block_document_id is None:
            self.read()
        if self._synced_rotation != expected_rotation:
            raise StaleTokenSet(
                f"block {self.name!r} is at rotation {self._synced_rotation}, "
                f"expected {expected_rotation}"
            )
        document_id = self._block_document_id
        assert isinstance(document_id, UUID)  # set by a read
        self._synced_rotation = None  # until the update is known to have landed
        update_document(self.name, document_id, _token_fields(tokens), _secrets(tokens))
        self.set_tokens(tokens)
        self._synced_rotation = tokens.rotation

    # --- conversions ----------------------------------------------------------------------
    def token_set(self) -> TokenSet:
        """This instance's token fields as a ``TokenSet``."""
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
        from billing_api import ClientCredentials, OAuthClient

        return OAuthClient(
            self.api_url,
            ClientCredentials(self.client_id, self.client_secret.get_secret_value()),
        )

    def get_token_manager(
        self, *, journal: TokenJournal | None = None, **options: Any
    ) -> TokenManager:
        """The refresh procedure over this block, its journal under ``$BILLOPS_HOME/recovery``.

        ``options`` go to ``TokenManager`` (``lock_timeout``, ``reread_seconds``, ...).
        """
        from billing_api import TokenManager
        from blocks._journal import default_journal

        return TokenManager(
            self,
            self.get_oauth_client(),
            journal=journal or default_journal(),
            **options,
        )

    def get_client(self, **options: Any) -> BillingClient:
        """A ready ``BillingClient`` whose token store is this block.

        ``options`` go to ``BillingClient`` (``timeout``, ``max_retries``).
        """
        from billing_api import BillingClient, RefreshingAuth

        self.name  # noqa: B018 - fail now, with a clear message, if the block was never saved
        return BillingClient(self.api_url, RefreshingAuth(self.get_token_manager()), **options)


def _token_fields(tokens: TokenSet) -> dict[str, Any]:
    """The block's token fields as its stored document keeps them (JSON values)."""

    def iso(value: datetime | None) -> str | None:
        return value.isoformat() if value is not None else None

    return {
        "refresh_token": tokens.refresh_token,
        "access_token": tokens.access_token,
        "access_token_expires_at": iso(tokens.access_token_expires_at),
        "access_token_lifetime": tokens.access_token_lifetime,
        "rotation": tokens.rotation,
        "last_refreshed_at": iso(tokens.last_refreshed_at),
    }


def _secrets(tokens: TokenSet) -> tuple[str | None, ...]:
    return (tokens.refresh_token, tokens.access_token)
