"""Payout-report layouts: which column of the console's payout export holds what, as data.

The real console's export columns are not public (``docs/service.md`` §6 Payouts), so the layout
is a small YAML file a finance person can read and edit, like the bank profiles. The shipped ones
are in ``profiles/`` beside this module (``sandbox``: the sandbox's own export, one row per payout
item; ``generic``: the names other exports commonly use); a user's go in
``$BILLOPS_HOME/payout-profiles/NAME.yaml`` and override a shipped one of the same name:

```yaml
name: my-console
source: what this layout is and where it came from
columns:                      # canonical field: the header names that mean it
  payout_id: [Payout]
  reference: [Bank ref]
  arrival_date: [Paid on]
  payout_amount: [Payout total]
  item_type: [Line type]
  item_amount: [Line amount]
  invoice_number: [Invoice]
item_types:                   # the words the export uses for each kind of line
  PAYMENT: [Payment, Collected]
  DEDUCTION: [Failed payment deduction]
deductions: negative          # how deduction lines are signed: negative, positive or either
```

A file's layout is the first profile (user ones first) whose required columns its header has.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tasks.common.finance_files import ColumnGroup, ColumnSpec

SHIPPED = Path(__file__).resolve().parent / "profiles"
REQUIRED = ("payout_id", "arrival_date", "payout_amount", "item_amount")
OPTIONAL = (
    "reference",
    "item_type",
    "invoice_number",
    "payment_request_number",
    "payment_id",
    "invoice_id",
    "payment_request_id",
    "customer",
    "description",
)
DOCUMENTS = (
    "invoice_number",
    "payment_request_number",
    "invoice_id",
    "payment_request_id",
    "payment_id",
)
FIELDS = REQUIRED + OPTIONAL
PAYMENT, DEDUCTION = "PAYMENT", "DEDUCTION"


def _default_types() -> dict[Literal["PAYMENT", "DEDUCTION"], list[str]]:
    return {"PAYMENT": [PAYMENT], "DEDUCTION": [DEDUCTION]}


class ReportProfileError(ValueError):
    """A layout file that cannot be used; the message names the file and the key."""


class ReportProfile(BaseModel):
    """One payout-report layout (see the module docstring for the keys)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9_][a-z0-9_-]*$", description="The layout's name.")
    source: str = Field(description="What this layout is and where it came from.")
    columns: dict[str, list[str]] = Field(description="Field: the header names that mean it.")
    item_types: dict[Literal["PAYMENT", "DEDUCTION"], list[str]] = Field(
        default_factory=_default_types,
        description="The words the export uses for payment and deduction lines.",
    )
    deductions: Literal["negative", "positive", "either"] = Field(
        default="negative", description="How deduction lines are signed in the export."
    )
    origin: str = Field(default="shipped", exclude=True)

    @field_validator("columns")
    @classmethod
    def _known_fields(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = sorted(set(value) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}; fields are {', '.join(FIELDS)}")
        missing = [name for name in REQUIRED if not value.get(name)]
        if missing:
            raise ValueError(f"required field(s) {missing} need at least one header name")
        if not any(value.get(name) for name in DOCUMENTS):
            raise ValueError(f"name at least one of {', '.join(DOCUMENTS)}")
        return value

    @functools.cached_property
    def spec(self) -> ColumnSpec:
        """The layout as the finance-file reader's column spec (headers matched loosely)."""
        aliases = {name: self.columns[name] for name in FIELDS if self.columns.get(name)}
        named = tuple(n for n in DOCUMENTS if n in aliases)
        group = ColumnGroup(named[0], named)  # a document to check at the service
        return ColumnSpec(aliases=aliases, required=REQUIRED, groups=(group,))

    def kind_of(self, word: str) -> str | None:
        """PAYMENT or DEDUCTION for an item-type cell (case and spacing ignored)."""
        wanted = " ".join(word.split()).casefold()
        for kind, words in self.item_types.items():
            if any(" ".join(w.split()).casefold() == wanted for w in words):
                return kind
        return None


def user_profile_folder() -> Path:
    """``$BILLOPS_HOME/payout-profiles`` (may not exist)."""
    from ledger.settings import BillopsSettings

    return BillopsSettings().home / "payout-profiles"


def load_report_profile(path: Path, origin: str = "user") -> ReportProfile:
    """A layout from its YAML file; :class:`ReportProfileError` naming the file and the key."""
    try:
        # libyaml's loader where PyYAML has it: the same safe subset, a tenth of the time.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ReportProfileError(f"{path}: cannot be read as YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ReportProfileError(f"{path}: a payout layout is a YAML mapping (name, columns, ...)")
    try:
        return ReportProfile.model_validate({**data, "origin": origin})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(top)'}: {error['msg']}"
            for error in exc.errors()
        )
        raise ReportProfileError(f"{path}: {problems}") from exc


def available_report_profiles(folder: Path | None = None) -> list[ReportProfile]:
    """The user's layouts first, then the shipped ones they do not replace."""
    user_folder = folder if folder is not None else user_profile_folder()
    users = (
        [load_report_profile(p) for p in sorted(user_folder.glob("*.yaml"))]
        if user_folder.is_dir()
        else []
    )
    taken = {p.name for p in users}
    shipped = [
        load_report_profile(p, origin="shipped")
        for p in sorted(SHIPPED.glob("*.yaml"))
        if p.stem not in taken
    ]
    return users + [p for p in shipped if p.name not in taken]


def find_report_profile(name_or_path: str) -> ReportProfile:
    """A layout by name, or from a YAML file's path."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return load_report_profile(path)
    for profile in available_report_profiles():
        if profile.name == name_or_path:
            return profile
    names = ", ".join(p.name for p in available_report_profiles())
    raise ReportProfileError(f"no payout layout named {name_or_path!r}; layouts: {names}")
