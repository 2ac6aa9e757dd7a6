"""Fault injection: the plan (what to inject, with what probability) and the ASGI middleware
that applies it. ``billops sandbox serve --faults`` parses its string with :func:`parse_faults`."""

from sandbox.faults.middleware import ConnectionDropped, FaultMiddleware, SandboxFastAPI
from sandbox.faults.plan import FaultPlan, FaultRule, FaultSpecError, FaultState, parse_faults

__all__ = [
    "ConnectionDropped",
    "FaultMiddleware",
    "FaultPlan",
    "FaultRule",
    "FaultSpecError",
    "FaultState",
    "SandboxFastAPI",
    "parse_faults",
]
