"""Time, injected: a clock tests move by hand, and a sleep that records instead of waiting."""

from __future__ import annotations

from datetime import datetime, timedelta

from billing_api import utc_now


class Clock:
    """An injected clock that tests move by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.value = start or utc_now()

    def __call__(self) -> datetime:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += timedelta(seconds=seconds)


class Sleeps:
    """Records the delays a client asks for, never waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
