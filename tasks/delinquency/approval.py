"""Runs with nobody to ask: the nightly schedule runs the job inside :func:`unattended`.

Such a run applies on its own only where the biller's policy allows it (``apply.automatic``) and
the plan is within the cap; otherwise it plans and reports. A person's approval comes from the
pause form or the CLI's ``--approve-as`` (:mod:`tasks.common.approval`), never a run parameter.
``unattended`` is a context variable of the calling process, so no form field or deployment
parameter can set it either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_unattended: ContextVar[bool] = ContextVar("billops_delinquency_unattended", default=False)


@contextmanager
def unattended() -> Iterator[None]:
    """Runs of the job started inside this block have nobody to ask (the nightly schedule)."""
    token = _unattended.set(True)
    try:
        yield
    finally:
        _unattended.reset(token)


def is_unattended() -> bool:
    """True inside :func:`unattended`."""
    return _unattended.get()
