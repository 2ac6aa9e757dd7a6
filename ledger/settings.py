"""Settings of billops itself, read from the environment (``BILLOPS_*``).

They live beside the ledger because they say where billops keeps its state (the ledger database,
the token recovery files, the sandbox file), and every layer that keeps state (blocks, tasks,
flows, the CLI) may import the ledger package; ``billops.settings`` re-exports them.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class BillerImportSettings(BaseModel):
    """One biller's own import rules (any left out take the defaults for all billers)."""

    max_row_amount: Decimal | None = Field(default=None, gt=0)
    max_file_amount: Decimal | None = Field(default=None, gt=0)
    formula_cells: Literal["flag", "reject"] | None = None


class BillopsSettings(BaseSettings):
    """Where billops keeps its files. ``BILLOPS_HOME`` moves all of them at once."""

    model_config = SettingsConfigDict(env_prefix="BILLOPS_")

    home: Path = Field(default_factory=lambda: Path.home() / ".billops")
    ledger_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the ledger (BILLOPS_LEDGER_URL); default a SQLite file "
        "under BILLOPS_HOME. The CLI and every deployment must use the same one.",
    )
    token_journal: Literal["local", "ledger"] = Field(
        default="local",
        description="Where new refresh-token sets wait until their credential block has them "
        "(BILLOPS_TOKEN_JOURNAL): 'local', files under BILLOPS_HOME/recovery (one machine); "
        "'ledger', the ledger's table ledger_token_journal, encrypted with "
        "BILLOPS_TOKEN_JOURNAL_KEY (several machines; docs/credentials.md).",
    )
    token_journal_key: SecretStr | None = Field(
        default=None,
        description="The Fernet key that encrypts the ledger's token journal "
        "(BILLOPS_TOKEN_JOURNAL_KEY); kept in the workers' environment, never in the database.",
    )

    bulk_import_columns: dict[str, str] | None = Field(
        default=None,
        description="Column names of the service's bulk-import file, as JSON "
        '(BILLOPS_BULK_IMPORT_COLUMNS=\'{"amount": "totalAmount", ...}\'): field -> column. '
        "Default: the contract's columns. The real service's layout is not public, so this is "
        "where it is adapted without a code change.",
    )

    import_max_row_amount: Decimal = Field(
        default=Decimal("100000.00"),
        gt=0,
        description="The most one imported payment request may ask for, in pounds "
        "(BILLOPS_IMPORT_MAX_ROW_AMOUNT); a row above it is refused with the reason.",
    )
    import_max_file_amount: Decimal = Field(
        default=Decimal("10000000.00"),
        gt=0,
        description="The most one file's valid rows may add up to, in pounds "
        "(BILLOPS_IMPORT_MAX_FILE_AMOUNT); a file above it is refused whole.",
    )
    import_formula_cells: Literal["flag", "reject"] = Field(
        default="flag",
        description="Text that starts like a spreadsheet formula (=, +, -, @, tab, CR): 'flag' "
        "notes it in the report and sends it with a leading apostrophe; 'reject' refuses the row.",
    )
    import_billers: dict[str, BillerImportSettings] = Field(
        default_factory=dict,
        description="Per-biller import rules by credential block name, as JSON "
        '(BILLOPS_IMPORT_BILLERS=\'{"acme": {"max_row_amount": "250000"}}\').',
    )

    undo_approver_must_differ: bool = Field(
        default=False,
        description="Four eyes on undo (BILLOPS_UNDO_APPROVER_MUST_DIFFER=true): `billops "
        "undo-import --apply` refuses an --approve-as naming the login that runs the command.",
    )

    def import_rules_of(self, block: str) -> BillerImportSettings:
        """The import rules of one biller: its own where set, else the defaults for all."""
        own = self.import_billers.get(block, BillerImportSettings())
        return BillerImportSettings(
            max_row_amount=own.max_row_amount or self.import_max_row_amount,
            max_file_amount=own.max_file_amount or self.import_max_file_amount,
            formula_cells=own.formula_cells or self.import_formula_cells,
        )

    @property
    def sandbox_database_url(self) -> str:
        return f"sqlite:///{self.home / 'sandbox.db'}"

    @property
    def ledger_database_url(self) -> str:
        return self.ledger_url or f"sqlite:///{self.home / 'ledger.db'}"

    @property
    def recovery_dir(self) -> Path:
        """The local recovery journal: new token sets wait here until their block has them
        (files mode 0600 in a 0700 directory; docs/credentials.md)."""
        return self.home / "recovery"
