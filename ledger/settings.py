"""Settings of billops itself, read from the environment (``BILLOPS_*``).

They live beside the ledger because they say where billops keeps its state (the ledger database,
the token recovery files, the sandbox file), and every layer that keeps state (blocks, tasks,
flows, the CLI) may import the ledger package; ``billops.settings`` re-exports them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class BillopsSettings(BaseSettings):
    """Where billops keeps its files. ``BILLOPS_HOME`` moves all of them at once."""

    model_config = SettingsConfigDict(env_prefix="BILLOPS_")

    home: Path = Field(default_factory=lambda: Path.home() / ".billops")
    ledger_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the ledger (BILLOPS_LEDGER_URL); default a SQLite file "
        "under BILLOPS_HOME. The CLI and every deployment must use the same one.",
    )

    bulk_import_columns: dict[str, str] | None = Field(
        default=None,
        description="Column names of the service's bulk-import file, as JSON "
        '(BILLOPS_BULK_IMPORT_COLUMNS=\'{"amount": "totalAmount", ...}\'): field -> column. '
        "Default: the contract's columns. The real service's layout is not public, so this is "
        "where it is adapted without a code change.",
    )

    @property
    def sandbox_database_url(self) -> str:
        return f"sqlite:///{self.home / 'sandbox.db'}"

    @property
    def ledger_database_url(self) -> str:
        return self.ledger_url or f"sqlite:///{self.home / 'ledger.db'}"

    @property
    def recovery_dir(self) -> Path:
        """Token sets that could not be saved to their block wait here (files mode 0600)."""
        return self.home / "recovery"
