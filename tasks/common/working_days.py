"""Working days in England and Wales, for every job that counts them (``docs/conventions.md``
§3 Time): weekdays that are not bank holidays, from the ``holidays`` package's UK calendar,
subdivision ENG. Bacs moves money on these days only, so payouts arrive on them
(``docs/service.md`` §6 Payouts). And today there (:func:`london_today`), the day jobs date by.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

import holidays
import numpy as np

LONDON = ZoneInfo("Europe/London")


def london_today() -> date:
    """Today in Europe/London, the service's business day (``docs/conventions.md`` §3 Time)."""
    return datetime.now(LONDON).date()


@lru_cache(maxsize=64)
def bank_holidays(year: int) -> frozenset[date]:
    """England-and-Wales bank holidays of ``year``."""
    return frozenset(holidays.country_holidays("GB", subdiv="ENG", years=year))


def is_working_day(day: date) -> bool:
    """A weekday that is not an England-and-Wales bank holiday."""
    return day.weekday() < 5 and day not in bank_holidays(day.year)


def add_working_days(day: date, count: int) -> date:
    """The working day ``count`` working days after ``day`` (before it when negative)."""
    step = 1 if count >= 0 else -1
    remaining = abs(count)
    while remaining:
        day += timedelta(days=step)
        if is_working_day(day):
            remaining -= 1
    return day


def _holiday_array(first: date, last: date) -> np.ndarray:
    days = [d for year in range(first.year, last.year + 1) for d in bank_holidays(year)]
    return np.array(sorted(days), dtype="datetime64[D]")


def working_days_between(first: date, last: date) -> int:
    """Working days after ``first`` up to and including ``last`` (negative when ``last`` is
    earlier): 0 for the same day, 1 from a Friday to the next Monday."""
    if last < first:
        return -working_days_between(last, first)
    holidays_seen = _holiday_array(first, last)
    start = np.datetime64(first + timedelta(days=1), "D")
    end = np.datetime64(last + timedelta(days=1), "D")
    return int(np.busday_count(start, end, holidays=holidays_seen))


def working_day_numbers(days: np.ndarray) -> np.ndarray:
    """Each ``datetime64[D]`` day as the count of working days since 1970-01-01 up to it (for
    distances between many days at once: subtract two numbers)."""
    if len(days) == 0:
        return np.zeros(0, dtype=np.int64)
    first = date(1970, 1, 1)
    last = (days.max() + np.timedelta64(1, "D")).astype(date)
    holidays_seen = _holiday_array(first, last)
    epoch = np.datetime64(first, "D")
    plus_one = days.astype("datetime64[D]") + np.timedelta64(1, "D")
    return np.busday_count(epoch, plus_one, holidays=holidays_seen).astype(np.int64)
