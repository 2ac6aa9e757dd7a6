"""Ordinary spending on the business bank account: rent, software, utilities, bank charges,
fuel and supplies, drawn per biller and day (:mod:`sandbox.exports.drafts`)."""

from __future__ import annotations

from datetime import date, time, timedelta

from sandbox.core.working_days import is_working_day, next_working_day
from sandbox.exports import layouts as bl
from sandbox.exports.drafts import Draft, pounds_of, seeded_random

# (counterparty, category, kind, day of month, pennies low, pennies high)
_MONTHLY = (
    ("XERO UK", "SOFTWARE", bl.DIRECT_DEBIT, 5, 3_000, 7_000),
    ("GOOGLE *WORKSPACE", "SOFTWARE", bl.CARD, 2, 1_140, 4_560),
    ("SLACK TECHNOLOGIES", "SOFTWARE", bl.CARD, 14, 630, 2_520),
    ("BRITISH GAS", "UTILITIES", bl.DIRECT_DEBIT, 18, 6_000, 24_000),
    ("BT GROUP PLC", "UTILITIES", bl.DIRECT_DEBIT, 22, 3_500, 9_000),
    ("ADOBE SYSTEMS", "SOFTWARE", bl.CARD, 9, 1_998, 6_500),
)
_FUEL = ("SHELL", "BP", "ESSO", "TEXACO", "JET")
_TOWNS = ("LEEDS", "BRISTOL", "READING", "YORK", "DERBY", "BATH", "OXFORD")
_SUPPLIES = ("AMAZON MKTPLACE", "SCREWFIX", "TESCO STORES", "ROYAL MAIL", "STAPLES", "RYMAN")


def _month_day(day: date, day_of_month: int, months_back: int) -> date:
    """``day_of_month`` of the month ``months_back`` before ``day``'s (clipped to its end)."""
    first = day.replace(day=1)
    for _ in range(months_back):
        first = (first - timedelta(days=1)).replace(day=1)
    last = ((first + timedelta(days=32)).replace(day=1) - timedelta(days=1)).day
    return first.replace(day=min(day_of_month, last))


def _scheduled(day: date, day_of_month: int) -> bool:
    """Whether a monthly debit set for ``day_of_month`` is taken on ``day``: on that day, or the
    next working day when it is not one (which can fall in the next month)."""
    return any(next_working_day(_month_day(day, day_of_month, back)) == day for back in (0, 1))


def spending(biller_id: str, day: date) -> list[Draft]:
    profile = seeded_random(biller_id, "profile")
    rent = profile.randint(90_000, 240_000)
    landlord = profile.choice(("BRIGHTWELL PROPERTY LTD", "OAKRIDGE ESTATES", "HARBOUR LETTINGS"))
    vendors = [v for v in _MONTHLY if profile.random() < 0.7]
    prices = {v[0]: profile.randint(v[4], v[5]) for v in vendors}
    rng = seeded_random(biller_id, "spending", day.isoformat())
    drafts: list[Draft] = []
    month = day.strftime("%b %Y").upper()
    if _scheduled(day, 1):
        drafts.append(
            Draft(bl.STANDING_ORDER, landlord, f"RENT {month}", -pounds_of(rent), "RENT", time(5))
        )
        fee = rng.randint(650, 1_200)
        drafts.append(
            Draft(bl.CHARGE, "SERVICE CHARGES", month, -pounds_of(fee), "BANK_CHARGES", time(5))
        )
    for name, category, kind, day_of_month, _low, _high in vendors:
        # Cards are charged on the day itself; Bacs debits wait for a working day.
        due = day.day == day_of_month if kind == bl.CARD else _scheduled(day, day_of_month)
        if due:
            reference = f"{name[:3]}{profile.randint(100000, 999999)}"
            drafts.append(
                Draft(kind, name, reference, -pounds_of(prices[name]), category, time(7, 30))
            )
    if is_working_day(day) and rng.random() < 0.3:
        station = f"{rng.choice(_FUEL)} {rng.choice(_TOWNS)}"
        at = time(rng.randint(7, 19), rng.randint(0, 59))
        drafts.append(
            Draft(bl.CARD, station, "", -pounds_of(rng.randint(3_500, 8_500)), "FUEL", at)
        )
    if rng.random() < 0.2:
        shop = rng.choice(_SUPPLIES)
        at = time(rng.randint(8, 22), rng.randint(0, 59))
        amount = -pounds_of(rng.randint(499, 15_000))
        drafts.append(Draft(bl.CARD, shop, "", amount, "SUPPLIES", at))
    return drafts
