"""``/_sandbox/faults``: read, replace and clear the fault injection plan while the sandbox runs.

The body of ``POST`` is ``sandbox.faults.FaultPlan``::

    {"seed": 7, "rules": [{"pathPrefix": "/api/customers", "method": "POST",
                           "latencyMs": 50, "jitterMs": 10, "rateLimit": 0.05, "retryAfter": 1,
                           "errorRate": 0.1, "errorStatus": 500, "dropAfterCommit": 0.05}]}

Every rule field is optional (a rule without ``pathPrefix`` covers all of ``/api``); the first
matching rule decides. ``POST`` replaces the whole plan (rules given at start-up included) and
restarts the random generator and the counters; ``DELETE`` clears it. ``GET`` answers the plan with
the effective seed, ``requests`` (requests a rule matched) and ``injected`` (count per kind).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from sandbox.core.deps import AdminGuard
from sandbox.faults import FaultPlan, FaultState

router = APIRouter(prefix="/_sandbox", dependencies=[AdminGuard], include_in_schema=False)


def _faults(request: Request) -> FaultState:
    faults: FaultState = request.app.state.faults
    return faults


@router.get("/faults")
def read_faults(request: Request) -> dict[str, Any]:
    return _faults(request).snapshot()


@router.post("/faults")
def replace_faults(body: FaultPlan, request: Request) -> dict[str, Any]:
    faults = _faults(request)
    faults.configure(body)
    return faults.snapshot()


@router.delete("/faults", status_code=204)
def clear_faults(request: Request) -> Response:
    _faults(request).configure(FaultPlan(seed=0))
    return Response(status_code=204)
