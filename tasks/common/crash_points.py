"""Named crash points, a test-only switch for proving crash safety.

``BILLOPS_CRASH_AT=<point>`` makes the process fail at that point the first time it is reached:
by default it raises :class:`SimulatedCrash` (a ``BaseException``, so no ``except Exception`` of
ours can tidy up after it, as with a real crash); with ``BILLOPS_CRASH_MODE=kill`` the process
SIGKILLs itself. Unset (always, in production) every point is a no-op. The points are where a crash
leaves the ledger in a state a rerun must settle: ``after_intent`` (intent recorded, nothing sent),
``after_send`` (the service has the write, the ledger does not know its id), ``mid_poll`` (job
known, not finished), ``after_outcome`` (outcome recorded, reports not written). The write-once
protocol and the polling loop (``tasks/common``) pass through them, so every job has them.
"""

from __future__ import annotations

import os
import signal

CRASH_POINTS = ("after_intent", "after_send", "mid_poll", "after_outcome")
CRASH_ENV = "BILLOPS_CRASH_AT"
MODE_ENV = "BILLOPS_CRASH_MODE"


class SimulatedCrash(BaseException):
    """Raised at a crash point; derives from BaseException so ordinary handlers let it through."""


def crash_point(name: str) -> None:
    """Crash here when ``BILLOPS_CRASH_AT`` names this point; otherwise do nothing."""
    if name not in CRASH_POINTS:
        raise ValueError(f"unknown crash point {name!r}; known: {', '.join(CRASH_POINTS)}")
    if os.environ.get(CRASH_ENV) != name:
        return
    # One crash per process: the rerun (a new process, or the test's second call) runs through.
    del os.environ[CRASH_ENV]
    if os.environ.get(MODE_ENV) == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise SimulatedCrash(name)
