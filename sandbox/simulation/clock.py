"""What the service does as time passes, run day by day when the sandbox's clock advances.

``advance(sessions, target)`` moves the clock one calendar day at a time. For each day it sets the
clock to that day (same time of day), commits, then runs the day's steps in order, each step in
its own transaction so a failing step names itself and leaves earlier steps' work committed.
Steps are plain functions ``step(session, day, moment)``; ``moment`` is the fixed time of the
day's batch run (06:00 UTC), which simulation-made timestamps use so that the same seed and clock
start give the same data whatever the day a test runs. Steps take the sandbox clock from
``state.now(session)`` only through the domain functions they call (which then read the
simulated day).

The order of a day: mandates move first (a mandate that activates today can collect today),
then schedules generate, then collections run, then invoices fall overdue, then payouts.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy.orm import Session, sessionmaker

from sandbox.core import ids, state
from sandbox.core.db import session_scope

Step = Callable[[Session, date, datetime], None]
BATCH_TIME = time(6, 0, tzinfo=UTC)


def steps() -> list[tuple[str, Step]]:
    """The day's steps, in order (imported here so the modules can import this one)."""
    from sandbox.simulation import collections as sim_collections
    from sandbox.simulation import mandates as sim_mandates
    from sandbox.simulation import payouts as sim_payouts
    from sandbox.simulation import schedules as sim_schedules

    return [
        ("mandates", sim_mandates.run_day),
        ("schedules", sim_schedules.run_day),
        ("collections", sim_collections.run_day),
        ("overdue", sim_collections.mark_overdue),
        ("payouts", sim_payouts.run_day),
    ]


def batch_moment(day: date) -> datetime:
    return datetime.combine(day, BATCH_TIME)


MAX_ADVANCE = timedelta(days=3660)


class ClockAdvanceRefused(ValueError):
    """The clock cannot go back, nor jump more than MAX_ADVANCE (each day is simulated)."""


def advance(
    sessions: sessionmaker[Session], *, by: timedelta, until: datetime | None = None
) -> datetime:
    """Move the clock forward ``by`` (or to ``until``, whichever is later), simulating every
    calendar day crossed; returns the new time. The clock never goes back."""
    with session_scope(sessions) as session:
        offset = state.clock_offset(session)
        current = state.now(session)
    if until is not None and until < current:
        raise ClockAdvanceRefused(f"the clock is at {current.isoformat()}; it cannot go back")
    target = max(current + by, until or current)
    if target - current > MAX_ADVANCE:
        raise ClockAdvanceRefused(f"advance at most {MAX_ADVANCE.days} days per call")
    if target <= current:
        return current
    day = current.date()
    while day < target.date():
        day += timedelta(days=1)
        moment = min(datetime.combine(day, current.timetz()), target)
        # Offsets move by exact differences, so the clock never loses the time these steps took.
        _set_offset(sessions, offset + (moment - current))
        # A day is simulated once per database (the clock never goes back): its seed is unique.
        with ids.seeded(f"day:{day.isoformat()}"):
            for _name, run in steps():
                with session_scope(sessions) as session:
                    run(session, day, batch_moment(day))
    _set_offset(sessions, offset + (target - current))
    return target


def _set_offset(sessions: sessionmaker[Session], offset: timedelta) -> None:
    with session_scope(sessions) as session:
        state.set_clock_offset(session, offset)


def pin_clock(sessions: sessionmaker[Session], start: date) -> None:
    """Start the clock at ``start`` (batch time) unless it was set before: the state survives a
    restart, and a pinned start makes a run reproducible on any day."""
    with session_scope(sessions) as session:
        if state.clock_is_set(session):
            return
        state.set_clock_offset(session, batch_moment(start) - datetime.now(UTC))
