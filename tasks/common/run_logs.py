"""The service client's and the credentials' log lines in the run's logs, where operators look
(``docs/conventions.md`` §15 Logs).

Prefect copies only its own loggers into a run's logs: the client's retry warnings ("HTTP 429;
retrying"), the token manager's CRITICAL recovery line and the credential blocks' warnings reached
the worker's terminal and nothing else. :func:`send_client_logs_to_runs` attaches Prefect's API
log handler to those loggers for records made inside a flow or task run (outside a run — a
command at a terminal, a test — there is no run to send them to, and they stay where they were).
Jobs get it through ``tasks.common.session.biller_session``; it is safe to call again.
"""

from __future__ import annotations

import logging

from prefect.context import FlowRunContext, TaskRunContext
from prefect.logging.handlers import APILogHandler

CLIENT_LOGGERS = ("billing_api", "blocks")


class RunLogHandler(APILogHandler):
    """Prefect's API log handler, for records made inside a run only."""

    def emit(self, record: logging.LogRecord) -> None:
        if FlowRunContext.get() is None and TaskRunContext.get() is None:
            return
        super().emit(record)


def send_client_logs_to_runs() -> None:
    """Attach :class:`RunLogHandler` to the client's and the blocks' loggers (once)."""
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(h, APILogHandler) for h in logger.handlers):
            logger.addHandler(RunLogHandler())
