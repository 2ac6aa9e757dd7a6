"""Working days in England and Wales: weekdays that are not bank holidays (the ``holidays``
package's UK calendar, subdivision ENG). Bacs moves money on these days only."""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache

import holidays


@lru_cache(maxsize=64)
def _bank_holidays(year: int) -> frozenset[date]:
    return frozenset(holidays.country_holidays("GB", subdiv="ENG", years=year))


def is_working_day(day: date) -> bool:
    return day.weekday() < 5 and day not in _bank_holidays(day.year)


def add_working_days(day: date, count: int) -> date:
    """The working day ``count`` working days after ``day`` (before it when negative)."""
    step = 1 if count >= 0 else -1
    remaining = abs(count)
    while remaining:
        day += timedelta(days=step)
        if is_working_day(day):
            remaining -= 1
    return day


def next_working_day(day: date) -> date:
    """``day`` itself when it is a working day, else the next one."""
    while not is_working_day(day):
        day += timedelta(days=1)
    return day
