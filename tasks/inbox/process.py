"""One claimed file from start to finish: settings, kind, content check, the job, the report,
the outcome folder. The jobs themselves (and the detectors) are passed in by the flow, so this
package stays free of other jobs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from billing_api import (
    OutcomeUnknown,
    RateLimited,
    ReauthorizationRequired,
    RequestTimeout,
    ServerError,
    TokenStoreError,
    TransportError,
    utc_now,
)
from ledger import Ledger
from tasks.common.outcome import PENDING
from tasks.inbox.claim import Claimed, put_away
from tasks.inbox.classify import Classified, Detector, Unclassifiable, classify
from tasks.inbox.layout import FileKind
from tasks.inbox.ledger_files import Seen, begin, check_content, finish, sha256_of
from tasks.inbox.outcome import REPORT_SUFFIX, Outcome, write_report
from tasks.inbox.settings import InboxSettings, InboxSettingsError, read_settings

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobResult:
    """What a job made of a file: ``status`` names it, ``failed`` sends it to ``failed/``."""

    status: str
    failed: bool
    message: str
    run_id: str | None = None
    next_step: str = ""


Runner = Callable[[Path, str, InboxSettings], JobResult]


class WritesInDoubt(Exception):
    """The job ran but left writes whose outcome it could not learn (a bank payment sent, its
    answer lost, the service not answering the question after). The file is not done: like a
    job that could not run, it stays in processing/ with its record open and the run fails, so
    the night's retry or the next scan resumes it and asks the service (``docs/conventions.md``
    §8). Put away in processed/, nothing would ever resume those writes."""


# The job could not run at all: the credential, its store or the service was unavailable. That
# says nothing about the file, so the file is not failed: it stays in processing/ with its
# ledger record open, the error goes up (the run fails, a night's retry or the next scan resumes
# the file), and nobody is told to fix a file that has nothing wrong with it.
COULD_NOT_RUN: tuple[type[BaseException], ...] = (
    ReauthorizationRequired,
    TokenStoreError,
    TransportError,
    OutcomeUnknown,
    ServerError,
    RateLimited,
    RequestTimeout,
    WritesInDoubt,
)


def raise_if_in_doubt(state: Any) -> None:
    """Raise :class:`WritesInDoubt` for a bank run that ended ``Pending``: payments in doubt."""
    if state.is_completed() and str(state.name) == PENDING:
        raise WritesInDoubt(str(state.message or PENDING))


def raise_if_could_not_run(state: Any) -> None:
    """Re-raise the error of a job's Failed or Crashed state (a flow called with
    ``return_state=True``) when it is one of :data:`COULD_NOT_RUN`."""
    if state.is_completed() or not (state.is_failed() or state.is_crashed()):
        return
    error = state.result(raise_on_failure=False)
    if isinstance(error, COULD_NOT_RUN):
        raise error


# Two copies of one content in one process are processed one after the other: the second then
# finds the first recorded, and is reported as a duplicate.
_content_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def _content_lock(key: str) -> threading.Lock:
    with _guard:
        return _content_locks.setdefault(key, threading.Lock())


@dataclass(frozen=True)
class _Context:
    """What every step of one file shares."""

    claimed: Claimed
    ledger: Ledger
    block: str
    run_id: str | None

    def outcome(
        self, kind: str | None, status: str, failed: bool, message: str, **more: Any
    ) -> Outcome:
        return Outcome(
            self.claimed.path.name, self.block, kind, status, failed, message, self.run_id, **more
        )


def process_claimed(
    claimed: Claimed,
    ledger: Ledger,
    *,
    detectors: Mapping[FileKind, Detector],
    runners: Mapping[FileKind, Runner],
    run_id: str | None,
) -> Outcome | None:
    """Process ``claimed`` and put it away; None when the same content is being processed by
    another process right now (the file stays in ``processing/`` for a later pass)."""
    try:
        settings = read_settings(claimed.root / claimed.biller)
    except InboxSettingsError as exc:
        here = _Context(claimed, ledger, claimed.biller, run_id)
        failed = here.outcome(None, "settings unreadable", True, str(exc))
        return _done(claimed, replace(failed, next_step="fix inbox.yaml"))
    here = _Context(claimed, ledger, settings.block or claimed.biller, run_id)
    try:
        kind = classify(claimed.path, claimed.kind, detectors)
    except Unclassifiable as exc:
        message, _, details = str(exc).partition("\n")
        unknown = here.outcome(None, "not recognised", True, message)
        return _done(
            claimed,
            replace(
                unknown, details=details.splitlines(), next_step="drop it in its kind's folder"
            ),
        )
    sha = sha256_of(claimed.path)
    with _content_lock(f"{here.block}:{sha}"):
        return _process_content(here, kind, sha, runners, settings)


def _process_content(
    here: _Context,
    kind: Classified,
    sha: str,
    runners: Mapping[FileKind, Runner],
    settings: InboxSettings,
) -> Outcome | None:
    """The content check, then the job (under the content's lock)."""
    claimed, ledger, block = here.claimed, here.ledger, here.block
    check = check_content(ledger, sha256=sha, block=block, kind=kind.kind, path=claimed.path)
    if check.seen == Seen.BUSY:
        claimed.release()
        return None
    if check.seen == Seen.DUPLICATE and check.record is not None:
        seen = check.record
        message = (
            f"the same content was processed on {seen.created_at:%Y-%m-%d %H:%M} UTC "
            f"(as {seen.name}, run {seen.run_id or '-'}, {seen.state.value}); "
            "it was not processed again"
        )
        duplicate = here.outcome(kind.kind.value, "duplicate", False, message, sha256=sha)
        return _done(claimed, replace(duplicate, next_step="nothing: a changed file is new"))
    begin(
        ledger,
        sha256=sha,
        block=block,
        kind=kind.kind,
        path=claimed.path,
        original=claimed.path.name,
        run_id=here.run_id,
    )
    result = _run_job(runners, kind.kind, claimed.path, block, settings)
    outcome = replace(
        here.outcome(kind.kind.value, result.status, result.failed, result.message, sha256=sha),
        run_id=result.run_id or here.run_id,
        next_step=result.next_step,
        details=[kind.reason],
    )
    moved = _put_away(claimed, outcome)
    report = moved.with_name(moved.name + REPORT_SUFFIX)
    finish(
        ledger,
        sha256=sha,
        block=block,
        kind=kind.kind,
        ok=not result.failed,
        report=report,
        run_id=outcome.run_id,
    )
    return outcome


def _run_job(
    runners: Mapping[FileKind, Runner],
    kind: FileKind,
    path: Path,
    block: str,
    settings: InboxSettings,
) -> JobResult:
    runner = runners.get(kind)
    if runner is None:
        return JobResult("no job", True, f"no {kind.value} job is installed in this billops")
    try:
        return runner(path, block, settings)
    except COULD_NOT_RUN:
        raise  # not the file's fault: it stays in processing/ for the next pass
    except Exception as exc:  # the job's own error is the file's outcome, in its report
        _log.warning("%s: the %s job failed: %s", path.name, kind.value, type(exc).__name__)
        return JobResult(
            "job failed",
            True,
            f"{type(exc).__name__}: {exc}",
            next_step="read the message above, fix the file, drop it again",
        )


def _put_away(claimed: Claimed, outcome: Outcome) -> Path:
    """Report beside the file, then move both to their outcome folder; the file's new path."""
    now = utc_now()
    write_report(claimed.path, outcome, now)
    moved = put_away(claimed, failed=outcome.failed, on=now.date())
    _log.info("%s/%s: %s", claimed.biller, outcome.file, outcome.status)
    return moved


def _done(claimed: Claimed, outcome: Outcome) -> Outcome:
    _put_away(claimed, outcome)
    return outcome
