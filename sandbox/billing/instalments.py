"""Instalment plans: the dates a cadence yields and the split of an amount over them.

The contract's ``InstalmentCadence`` [I semantics]: ``INTERVAL`` (every ``frequency`` units from
``startDate`` to ``endDate`` inclusive), ``INTERVAL_COUNT`` (``count`` of them), ``DAY_OF_MONTH``
(that day, clipped to the month's end, each month, ``count`` times or up to ``endDate``) and
``CUSTOM`` (the listed ``dates``). Month steps keep the start day, clipped to the month's end.
The split: each instalment is ``amount / count`` rounded down to the penny and the last takes the
remainder, so they sum exactly to the amount.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any

from sandbox.core.bodies import Fields, date_value
from sandbox.core.money import PENNY

CADENCE_TYPES = ("INTERVAL", "INTERVAL_COUNT", "DAY_OF_MONTH", "CUSTOM")
TIME_UNITS = ("SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR")
PLAN_UNITS = ("DAY", "WEEK", "MONTH", "YEAR")
MAX_INSTALMENTS = 60
MIN_INSTALMENT = Decimal("1.00")


@dataclass(frozen=True)
class Instalment:
    sequence: int
    due_date: date
    amount: Decimal


class PlanError(ValueError):
    """A cadence that yields no usable plan; ``field`` names the offending part."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field
        self.detail = detail


def parse_cadence(fields: Fields) -> dict[str, Any]:
    """The cadence as stored (JSON-ready, normalised); 422 naming the broken field."""
    kind = fields.choice("type", CADENCE_TYPES, required=True)
    cadence: dict[str, Any] = {"type": kind}
    if kind == "CUSTOM":
        raw = fields.array("dates", required=True, max_items=MAX_INSTALMENTS + 1)
        if not raw:
            fields.fail("dates", "must list at least one date")
        where = fields.path("dates")
        dates = sorted({date_value(value, f"{where}[{i}]") for i, value in enumerate(raw)})
        cadence["dates"] = [d.isoformat() for d in dates]
        return cadence
    unit = fields.choice("timeUnit", TIME_UNITS, required=kind != "DAY_OF_MONTH")
    if unit is not None and unit not in PLAN_UNITS:
        fields.fail("timeUnit", f"instalments need one of {', '.join(PLAN_UNITS)}")
    start = fields.date("startDate", required=True)
    assert start is not None
    end = fields.date("endDate", required=kind == "INTERVAL")
    count = fields.integer("count", minimum=1, maximum=MAX_INSTALMENTS)
    frequency = fields.integer("frequency", minimum=1, maximum=1000) or 1
    day = fields.integer("dayOfMonth", minimum=1, maximum=31)
    if kind == "INTERVAL_COUNT" and count is None:
        fields.fail("count", "is required for INTERVAL_COUNT")
    if kind == "DAY_OF_MONTH":
        if day is None:
            fields.fail("dayOfMonth", "is required for DAY_OF_MONTH")
        if count is None and end is None:
            fields.fail("count", "DAY_OF_MONTH needs count or endDate")
    optional = {"endDate": end.isoformat() if end else None, "count": count, "dayOfMonth": day}
    cadence.update(timeUnit=unit or "MONTH", frequency=frequency, startDate=start.isoformat())
    # Absent rather than null: the contract's cadence fields are not nullable.
    cadence.update({key: value for key, value in optional.items() if value is not None})
    return cadence


def add_months(start: date, months: int, day: int | None = None) -> date:
    """``start`` moved by ``months``, on ``day`` (default the start's day) clipped to the month."""
    index = start.year * 12 + start.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day or start.day, last))


def _step(start: date, unit: str, n: int) -> date:
    if unit == "DAY":
        return start + timedelta(days=n)
    if unit == "WEEK":
        return start + timedelta(weeks=n)
    return add_months(start, n * (12 if unit == "YEAR" else 1))


def _dates(cadence: dict[str, Any]) -> list[date]:
    if cadence["type"] == "CUSTOM":
        return [date.fromisoformat(d) for d in cadence["dates"]]
    start = date.fromisoformat(cadence["startDate"])
    end = date.fromisoformat(cadence["endDate"]) if cadence.get("endDate") else None
    count = cadence.get("count")
    frequency = int(cadence.get("frequency") or 1)
    if cadence["type"] == "DAY_OF_MONTH":
        day = int(cadence["dayOfMonth"])
        first = add_months(start, 0, day)
        if first < start:
            first = add_months(start, 1, day)

        def nth(i: int) -> date:
            return add_months(first, i * frequency, day)
    else:

        def nth(i: int) -> date:
            return _step(start, cadence["timeUnit"], i * frequency)

    out: list[date] = []
    # One more than allowed, so a cadence that runs too long is noticed without running forever.
    while len(out) <= MAX_INSTALMENTS and (count is None or len(out) < count):
        moment = nth(len(out))
        if end is not None and moment > end:
            break
        out.append(moment)
    return out


def instalment_dates(cadence: dict[str, Any]) -> list[date]:
    """The due dates of a parsed cadence; :class:`PlanError` when there are none or too many."""
    try:
        dates = _dates(cadence)
    except (OverflowError, ValueError) as exc:
        raise PlanError("cadence", "the cadence runs past the last representable date") from exc
    if not dates:
        raise PlanError("cadence", "the cadence yields no instalment date")
    if len(dates) > MAX_INSTALMENTS:
        raise PlanError("cadence", f"the cadence yields more than {MAX_INSTALMENTS} instalments")
    return dates


def split(amount: Decimal, count: int) -> list[Decimal]:
    """``count`` penny amounts summing exactly to ``amount``: equal shares rounded down, the
    remainder on the last."""
    share = (amount / count).quantize(PENNY, rounding=ROUND_DOWN)
    return [share] * (count - 1) + [amount - share * (count - 1)]


def plan(amount: Decimal, cadence: dict[str, Any]) -> list[Instalment]:
    """The instalments of ``amount`` by ``cadence``; :class:`PlanError` when unusable."""
    dates = instalment_dates(cadence)
    amounts = split(amount, len(dates))
    if min(amounts) < MIN_INSTALMENT:
        raise PlanError("cadence", f"instalments would be below {MIN_INSTALMENT} GBP")
    return [Instalment(i + 1, d, a) for i, (d, a) in enumerate(zip(dates, amounts, strict=True))]
