"""Waiting for the service: exponential backoff with a cap, and a deadline for the whole wait.

Used wherever a job waits on something the service does in its own time (a bulk-import job to
finish, another worker's send to be recorded). A wait that runs past its deadline raises
:class:`PollDeadlineExceeded`; what was being waited on stays in the ledger for the next run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tasks.common.crash_points import crash_point

T = TypeVar("T")


@dataclass
class PollSettings:
    """Exponential backoff between polls, with a cap and a deadline for the whole wait."""

    first_delay: float = 0.5
    max_delay: float = 10.0
    deadline: float = 1800.0
    sleep: Callable[[float], None] = field(default=time.sleep)
    clock: Callable[[], float] = field(default=time.monotonic)


class PollDeadlineExceeded(Exception):
    """A wait did not end in time; what it waited on stays in the ledger for the next run."""


class Backoff:
    """One wait's delays: the first, then doubling up to the cap, until the deadline."""

    def __init__(self, settings: PollSettings) -> None:
        self._settings = settings
        self._started = settings.clock()
        self._delay = settings.first_delay

    @property
    def elapsed(self) -> float:
        """Seconds since the wait began."""
        return self._settings.clock() - self._started

    def pause(self) -> bool:
        """Sleep the next delay and return True, or return False if it would pass the deadline."""
        if self.elapsed + self._delay > self._settings.deadline:
            return False
        self._settings.sleep(self._delay)
        self._delay = min(self._delay * 2, self._settings.max_delay)
        return True


def poll_until(
    fetch: Callable[[], T],
    is_final: Callable[[T], bool],
    settings: PollSettings,
    *,
    describe: Callable[[T], str],
    on_poll: Callable[[T], None] | None = None,
) -> T:
    """Call ``fetch`` until ``is_final`` says its answer is final, backing off in between.

    ``describe(answer)`` says what is still unfinished, for the deadline's error message.
    """
    backoff = Backoff(settings)
    while True:
        answer = fetch()
        if on_poll is not None:
            on_poll(answer)
        crash_point("mid_poll")
        if is_final(answer):
            return answer
        if not backoff.pause():
            raise PollDeadlineExceeded(
                f"{describe(answer)} after {settings.deadline:.0f} s; it stays in the ledger and "
                "the next run polls it"
            )
