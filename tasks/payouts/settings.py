"""A biller's payout-reconciliation settings: a small YAML file a finance person can read, in
``$BILLOPS_HOME/payout-settings/<credential block>.yaml`` (none: every default).

```yaml
# a payout's credit is expected within this many working days of its arrival date; a payout
# older than that with no credit is missing_in_bank (younger: in_transit)
window_working_days: 3
# the accounts of the journal export (clearing-account method)
journal:
  clearing_account: Adfin clearing
  bank_account: Business current account
  receivables_account: Accounts receivable
  differences_account: Payout differences
```

The payment service's credits are recognised on the bank statement by the biller's bank settings
(``$BILLOPS_HOME/bank-settings/<block>.yaml``, ``classify``), as the bank import recognises them.
Every error names the file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class PayoutSettingsError(ValueError):
    """A settings file that cannot be used; the message names the file and the key."""


class JournalAccounts(BaseModel):
    """The accounts of the journal export."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    clearing_account: str = Field(
        default="Adfin clearing",
        description="Where the service's collections wait until a payout moves them to the bank.",
    )
    bank_account: str = Field(default="Bank", description="The account payouts arrive in.")
    receivables_account: str = Field(
        default="Accounts receivable",
        description="Where a failed payment's invoice is owed again (a deduction).",
    )
    differences_account: str = Field(
        default="Payout differences",
        description="A suspense account for what the bank credited more or less than a payout.",
    )


class PayoutSettings(BaseModel):
    """What a biller has chosen for its payout reconciliation (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window_working_days: int = Field(
        default=3,
        ge=0,
        le=30,
        description="Working days after a payout's arrival date that its credit may take.",
    )
    journal: JournalAccounts = Field(default_factory=JournalAccounts)


def settings_path(block: str, folder: Path | None = None) -> Path:
    """Where the settings of the biller behind credential block ``block`` are kept."""
    if folder is None:
        from ledger.settings import BillopsSettings

        folder = BillopsSettings().home / "payout-settings"
    return folder / f"{block}.yaml"


def load_payout_settings(block: str, folder: Path | None = None) -> PayoutSettings:
    """The biller's settings, or the defaults when it has no file."""
    path = settings_path(block, folder)
    return read_payout_settings(path) if path.is_file() else PayoutSettings()


def read_payout_settings(path: Path) -> PayoutSettings:
    """Settings from ``path``; :class:`PayoutSettingsError` naming the file and the key."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise PayoutSettingsError(f"{path}:{where}: not valid YAML ({exc.problem})") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PayoutSettingsError(f"{path}: cannot be read ({exc})") from exc
    if data is None:
        return PayoutSettings()
    if not isinstance(data, dict):
        raise PayoutSettingsError(f"{path}: payout settings are a YAML mapping")
    try:
        return PayoutSettings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(top)'}: {error['msg']}"
            for error in exc.errors()
        )
        raise PayoutSettingsError(f"{path}: {problems}") from exc
