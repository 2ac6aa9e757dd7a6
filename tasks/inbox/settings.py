"""A biller folder's ``inbox.yaml``: optional, every key optional.

```yaml
block: acme-ltd            # the biller's credential block (default: the folder's name)
bank_apply_exact: false    # ask the bank job to record exact matches without an approval
on_bad_rows: reject_file   # payment-request files: reject_file (default) or skip
```

A bank statement dropped in the inbox is recorded as the bank job's approval rules allow
(``docs/conventions.md`` §10 Dry run and approval): exact, full matches go without an approval
only where the biller's bank settings allow it (``$BILLOPS_HOME/bank-settings/<block>.yaml``:
``auto_apply_exact: true``), whether or not ``bank_apply_exact`` asks for it; everything else
waits for an approval — the run's form when the file's run is a deployment's, otherwise nothing
is recorded and the report (the preview) says how to approve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from tasks.inbox.layout import SETTINGS_FILE


class InboxSettingsError(ValueError):
    """``inbox.yaml`` is unreadable; the message names the file, the line or key, and why."""


class InboxSettings(BaseModel):
    """One biller folder's settings."""

    model_config = ConfigDict(extra="forbid")

    block: str | None = None
    bank_apply_exact: bool = False
    on_bad_rows: Literal["reject_file", "skip"] = "reject_file"


def read_settings(folder: Path) -> InboxSettings:
    """The settings of a biller folder (defaults when it has no ``inbox.yaml``)."""
    path = folder / SETTINGS_FILE
    if not path.is_file():
        return InboxSettings()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise InboxSettingsError(f"{path}{where}: not valid YAML") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InboxSettingsError(f"{path}: cannot be read ({exc})") from None
    if not isinstance(data, dict):
        raise InboxSettingsError(f"{path}: expected keys (block, bank_apply_exact, on_bad_rows)")
    try:
        return InboxSettings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise InboxSettingsError(f"{path}: {problems}") from None


def block_of(folder: Path) -> str:
    """The credential block of a biller folder."""
    return read_settings(folder).block or folder.name
