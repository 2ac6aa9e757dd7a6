"""A biller's bank-statement settings: a small YAML file a finance person can read, in
``$BILLOPS_HOME/bank-settings/<credential block>.yaml`` (none: every default).

```yaml
# the nightly run may record exact, full matches on its own (no approval); default false
auto_apply_exact: true
# the payment service's payouts, other credits, the biller's own accounts (classify rules)
classify:
  payout_payers: "^(ADFIN|ADFIN LTD)\\b"
  own_names: [WIDGET CO RESERVE]
# more words people type for a document prefix
reference_aliases:
  INV: [BILL, FACTURE]
```

Every error names the file and the key (and the line where YAML says it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tasks.bank_payments._classify import ClassifyRules


class BankSettingsError(ValueError):
    """A settings file that cannot be used; the message names the file and the key."""


class BankSettings(BaseModel):
    """What a biller has chosen for its bank statements (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    auto_apply_exact: bool = Field(
        default=False,
        description=(
            "The unattended nightly run records exact, full matches without an approval; "
            "everything else still waits for a person."
        ),
    )
    classify: ClassifyRules = Field(default_factory=ClassifyRules)
    reference_aliases: dict[str, list[str]] = Field(
        default_factory=dict,
        description="More words people type for a document prefix (INV: [BILL]).",
    )


def settings_folder() -> Path:
    """``$BILLOPS_HOME/bank-settings`` (may not exist)."""
    from ledger.settings import BillopsSettings

    return BillopsSettings().home / "bank-settings"


def settings_path(block: str, folder: Path | None = None) -> Path:
    """Where the settings of the biller behind credential block ``block`` are kept."""
    return (folder or settings_folder()) / f"{block}.yaml"


def load_settings(block: str, folder: Path | None = None) -> BankSettings:
    """The biller's settings, or the defaults when it has no file."""
    path = settings_path(block, folder)
    if not path.is_file():
        return BankSettings()
    return read_settings(path)


def read_settings(path: Path) -> BankSettings:
    """Settings from ``path``; :class:`BankSettingsError` naming the file and the key."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise BankSettingsError(f"{path}:{where}: not valid YAML ({exc.problem})") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BankSettingsError(f"{path}: cannot be read ({exc})") from exc
    if data is None:
        return BankSettings()
    if not isinstance(data, dict):
        raise BankSettingsError(f"{path}: bank settings are a YAML mapping (auto_apply_exact, ...)")
    try:
        return BankSettings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(top)'}: {error['msg']}"
            for error in exc.errors()
        )
        raise BankSettingsError(f"{path}: {problems}") from exc
