"""The conditions a delinquency policy is written in, one small model per kind.

Each condition is a one-key mapping in the YAML file (``- days_overdue: 30``). The vocabulary is
Kill Bill's overdue configuration, anchored explicitly (README, "Pausing collection for delinquent
customers"):

- ``days_overdue: N`` — at least N days since the oldest unpaid due date (an invoice's due date,
  a standalone payment request's pay-by date), counted in Europe/London days;
- ``failed_attempts: N`` or ``{count: N, within_days: D}`` — at least N failed direct-debit
  collections observed (in the last D days);
- ``unpaid_amount_at_least`` / ``unpaid_amount_below`` — what the customer owes in total, pounds;
- ``overdue_amount_at_least`` / ``overdue_amount_below`` — what is owed past its due date;
- ``unpaid_invoices_at_least`` / ``unpaid_invoices_below`` — how many debts are unpaid (invoices,
  and payment requests raised without an invoice);
- ``mandate_status: [CANCELLED, NONE, ...]`` — the current mandate's status (``NONE``: none);
- ``new_mandate: true`` — a usable mandate (PENDING or ACTIVE) other than the one the customer had
  on entering the state (leave conditions only);
- ``after_days: N`` — N days in the state (leave conditions only: the expiry);
- ``on_date: YYYY-MM-DD`` — from that day on.

Amounts are ``Decimal`` pounds with at most two decimals, never float.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

MANDATE_STATUSES = ("NONE", "CREATED", "PENDING", "ACTIVE", "CANCELLED", "MIGRATING")
# Conditions that describe a stay in a state, so they mean nothing before one is entered.
LEAVE_ONLY = ("after_days", "new_mandate")


def whole_number(value: Any) -> Any:
    """A number of days or things, never a yes/no: YAML reads ``true`` and ``yes`` as booleans,
    which pydantic would take for 1 (``days_overdue: yes`` meant one day overdue)."""
    if isinstance(value, bool):
        raise ValueError("a whole number is expected (e.g. 30), not a yes/no value")
    return value


Count = Annotated[int, BeforeValidator(whole_number), Field(ge=1)]
Days = Annotated[int, BeforeValidator(whole_number), Field(ge=0)]
Number = Annotated[int, BeforeValidator(whole_number), Field(ge=0)]
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def pounds(value: Decimal) -> str:
    """``£1,234.50``: how amounts are shown in reasons and reports."""
    return f"£{value:,.2f}"


def parse_pounds(value: Any) -> Decimal:
    """An amount in pounds from the policy (``50``, ``'50.00'``, ``'£1,000'``), exactly."""
    if isinstance(value, bool) or not isinstance(value, int | str | Decimal):
        raise ValueError(f"an amount in pounds is expected (e.g. '50.00'), got {value!r}")
    shown = f"'{value}'"
    text = str(value).strip().lstrip("£")
    # A comma only groups thousands, as in the finance files (docs/conventions.md §1.1): taking
    # every comma out read a decimal comma "10,50" as £1,050.00 and "5.000,00" as £5.00.
    if "," in text and not _THOUSANDS.fullmatch(text.strip()):
        raise ValueError(
            f"{shown}: a comma may only separate thousands (e.g. '1,000.50'); "
            "write pence after a point"
        )
    try:
        amount = Decimal(text.replace(",", ""))
    except ArithmeticError:
        raise ValueError(f"{shown} is not an amount in pounds (e.g. '50.00')") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{shown} must be a positive amount in pounds")
    try:
        exact = amount.quantize(Decimal("0.01"))
    except ArithmeticError:  # more digits than a Decimal holds: '1e30' once was a traceback
        raise ValueError(f"{shown} is too large for an amount in pounds") from None
    if amount != exact:
        raise ValueError(f"{shown} has more than two decimal places (pounds and pence)")
    return exact


class FailedAttempts(BaseModel):
    """At least ``count`` failed collections, within the last ``within_days`` days (or ever)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: Count
    within_days: Count | None = None


class Condition(BaseModel):
    """One condition: exactly one of the fields is set (the YAML key names it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    days_overdue: Days | None = None
    failed_attempts: FailedAttempts | None = None
    unpaid_amount_at_least: Decimal | None = None
    unpaid_amount_below: Decimal | None = None
    overdue_amount_at_least: Decimal | None = None
    overdue_amount_below: Decimal | None = None
    unpaid_invoices_at_least: Count | None = None
    unpaid_invoices_below: Count | None = None
    mandate_status: tuple[str, ...] | None = None
    new_mandate: Literal[True] | None = None
    after_days: Days | None = None
    on_date: date | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_key(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(
                f"a condition is a mapping with one key (e.g. 'days_overdue: 30'), got {data!r}"
            )
        if len(data) != 1:
            keys = ", ".join(map(str, data)) or "none"
            raise ValueError(f"a condition has exactly one key; this one has {keys}")
        key, value = next(iter(data.items()))
        if value is None and key in cls.model_fields:
            # "- days_overdue:" with the number forgotten: every field would be None, and the
            # condition would have no kind at all.
            raise ValueError(f"{key}: give a value (e.g. 'days_overdue: 30')")
        if key == "failed_attempts" and isinstance(value, int) and not isinstance(value, bool):
            return {key: {"count": value}}
        return data

    @field_validator(
        "unpaid_amount_at_least",
        "unpaid_amount_below",
        "overdue_amount_at_least",
        "overdue_amount_below",
        mode="before",
    )
    @classmethod
    def _amounts(cls, value: Any) -> Decimal | None:
        return None if value is None else parse_pounds(value)

    @field_validator("mandate_status", mode="before")
    @classmethod
    def _statuses(cls, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        values = [value] if isinstance(value, str) else value
        # Strings only: a blank entry (None) was once read as the status "NONE".
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) for v in values)
        ):
            raise ValueError("a list of mandate statuses, e.g. [CANCELLED, NONE]")
        statuses = tuple(str(v).strip().upper() for v in values)
        unknown = [s for s in statuses if s not in MANDATE_STATUSES]
        if unknown:
            raise ValueError(
                f"unknown mandate status {', '.join(unknown)}; use {', '.join(MANDATE_STATUSES)}"
            )
        return statuses

    @property
    def kind(self) -> str:
        """The YAML key of this condition."""
        return next(name for name, value in self if value is not None)

    @property
    def value(self) -> Any:
        """The condition's threshold (or list, or date) as written."""
        return getattr(self, self.kind)

    def describe(self) -> str:
        """The condition in words, as the plan and ``billops delinquency status`` show it."""
        value = self.value
        match self.kind:
            case "days_overdue":
                return f"oldest unpaid due date at least {value} days ago"
            case "failed_attempts":
                window = f" in {value.within_days} days" if value.within_days else ""
                return f"at least {value.count} failed collections{window}"
            case "unpaid_amount_at_least":
                return f"unpaid at least {pounds(value)}"
            case "unpaid_amount_below":
                return f"unpaid below {pounds(value)}"
            case "overdue_amount_at_least":
                return f"overdue at least {pounds(value)}"
            case "overdue_amount_below":
                return f"overdue below {pounds(value)}"
            case "unpaid_invoices_at_least":
                return f"at least {value} unpaid debts"
            case "unpaid_invoices_below":
                return f"fewer than {value} unpaid debts"
            case "mandate_status":
                return f"mandate {' or '.join(value)}"
            case "new_mandate":
                return "a new usable mandate"
            case "after_days":
                return f"{value} days in the state"
            case _:
                return f"from {value.isoformat()}"


class ConditionGroup(BaseModel):
    """Conditions combined: every one of ``all`` holds, and one of ``any`` (when there are any).

    Written as a plain list (all must hold, as in Kill Bill) or as ``{all: [...], any: [...]}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    all: tuple[Condition, ...] = ()
    any: tuple[Condition, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _list_means_all(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"all": data}
        return data

    @model_validator(mode="after")
    def _not_empty(self) -> ConditionGroup:
        if not self.all and not self.any:
            raise ValueError("give at least one condition (under 'all' or 'any')")
        return self

    @property
    def conditions(self) -> tuple[Condition, ...]:
        """Every condition of the group, ``all`` first."""
        return self.all + self.any

    def describe(self) -> str:
        """The group in words."""
        parts = [" and ".join(c.describe() for c in self.all)] if self.all else []
        if self.any:
            parts.append("(" + " or ".join(c.describe() for c in self.any) + ")")
        return " and ".join(parts)
