"""One biller's night: every job for that biller, one after the other, under the biller's limits.

1. the bank statements waiting in its inbox folder(s), recorded as the nightly bank rule allows
   (``import-waiting-bank-statements``);
2. the payout reports waiting there, reconciled — or, with none, its payouts reconciled with
   what the ledger holds (``reconcile-waiting-payout-reports``; reads only);
3. every other file still there — payment-request files, files a stopped night left in
   ``processing/``, files no job recognises — processed as the inbox does
   (``flows/nightly_files.py``);
4. the import jobs left open, settled (``poll-import-jobs``);
5. collection paused or resumed for delinquent customers, applied only where the biller's
   policy allows it unattended and within its cap (``pause-delinquent-customers``).

It runs under a slot of the service app's global concurrency limit and of the biller's own
(limit 1), so a second night of the same biller waits for the first (``tasks/nightly/limits.py``).
The first job that cannot do its work (the service down, a dead credential) ends the night
there: the rest would fail the same way, and a retry runs them all again (each job's writes are
kept once by the ledger). The night's line (jobs, rows, payments, pauses, duration, outcome) is a
table artifact on the run, which the coordinator reads back; the run ends ``Failed`` when the
biller's night failed, so the coordinator tries it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, cast

from prefect import flow, get_run_logger
from prefect.client.schemas.objects import State
from prefect.states import Failed

from flows.bank_inbox import import_waiting_bank_statements
from flows.delinquency import pause_delinquent_customers
from flows.nightly_files import FilesTally, take_waiting_files
from flows.payment_requests import poll_import_jobs
from flows.payouts_inbox import reconcile_waiting_payout_reports
from ledger import OperationState
from tasks.bank_payments._record import KIND as PAYMENT_KIND  # the bank job's writes
from tasks.common.outcome import COMPLETED, REJECTED, WITH_REJECTIONS, Outcome, end_run
from tasks.common.reports import publish_table
from tasks.common.session import load_biller_block, open_ledger
from tasks.common.workers import current_run_id
from tasks.delinquency.approval import unattended
from tasks.delinquency.verdict import DelinquencyRun
from tasks.nightly.children import announce_process, this_process
from tasks.nightly.limits import night_slots
from tasks.nightly.night import BillerResult, JobLine, artifact_key_of, artifact_row, night_of
from tasks.payment_requests.jobs import Submission

FAILED_NIGHT = "Biller failed"


class BillerNightFailed(Exception):
    """A job of the biller's night could not do its work; the message says which and why, and
    ``result`` (once the night has ended) what the night did until then."""

    def __init__(self, message: str, result: BillerResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def _pairs(data: Any) -> str:
    """``file: status, ...`` from a step's ``[(file, status), ...]``."""
    return ", ".join(f"{name}: {status}" for name, status in data or []) or "none waiting"


@dataclass
class _Night:
    """What the jobs of one night report, as they go."""

    biller: str
    began: datetime = field(default_factory=lambda: datetime.now(UTC))
    jobs: list[JobLine] = field(default_factory=list)
    bank: str = ""
    payouts: str = ""
    files: FilesTally = field(default_factory=FilesTally)
    settled: list[Submission] = field(default_factory=list)
    delinquency: DelinquencyRun | None = None
    error: str = ""

    def run(self, job: str, step: Callable[[], State[Any]]) -> Any:
        """Run one job's subflow; its named state becomes the job's line and its data is
        returned. Raises when the job could not do its work (the night stops there)."""
        state = step()
        ok = state.is_completed()
        self.jobs.append(JobLine(job, str(state.name), state.message or "", ok))
        if not ok:
            raise BillerNightFailed(f"{job}: {state.name}: {state.message or ''}".rstrip(": "))
        return state.result(raise_on_failure=False)

    def result(self, seconds: float, payments: int) -> BillerResult:
        still_open = sum(not s.state.settled for s in self.settled)
        dlq = self.delinquency
        # A refused file or a refused policy did nothing: the night goes on, but its outcome
        # says so (a named state an automation can catch, docs/conventions.md §8).
        rejected = bool(self.files.failed) or (dlq is not None and dlq.state == REJECTED)
        outcome = FAILED_NIGHT if self.error else (WITH_REJECTIONS if rejected else COMPLETED)
        return BillerResult(
            self.biller,
            not self.error,
            imports_settled=len(self.settled) - still_open,
            imports_open=still_open,
            error=self.error,
            delinquency=f"{dlq.state}: {dlq.message}" if dlq is not None else "",
            bank=self.bank,
            payouts=self.payouts,
            jobs=tuple(self.jobs),
            rows=self.files.rows,
            payments=payments,
            pauses=dlq.by_outcome.get("done", 0) if dlq is not None else 0,
            seconds=seconds,
            outcome=outcome,
            worker=this_process(),
            run_id=current_run_id(),
            files=tuple(f"{name}: {status}" for _, name, status in self.files.done),
        )


def _files(night: _Night, biller: str) -> None:
    try:
        night.files = take_waiting_files(biller)
    except Exception as exc:  # reading the inbox itself failed (a disk, the ledger)
        night.jobs.append(JobLine("other files", "Failed", f"{type(exc).__name__}: {exc}", False))
        raise BillerNightFailed(f"other files: {type(exc).__name__}: {exc}") from exc
    done = night.files.done
    words = ", ".join(f"{name}: {status}" for _, name, status in done) or "none waiting"
    night.jobs.append(JobLine("other files", f"{len(done)} file(s)", words))


def _jobs(night: _Night, biller: str) -> None:
    """The biller's jobs in order (module docstring); the first that fails raises."""
    night.bank = _pairs(
        night.run("bank", lambda: import_waiting_bank_statements(biller=biller, return_state=True))
    )
    night.payouts = _pairs(
        night.run(
            "payouts", lambda: reconcile_waiting_payout_reports(biller=biller, return_state=True)
        )
    )
    _files(night, biller)
    night.settled = cast(
        list[Submission],
        night.run("settle imports", lambda: poll_import_jobs(biller=biller, return_state=True)),
    )
    with unattended():  # nobody to ask: applies only where the policy allows, within its cap
        night.delinquency = cast(
            DelinquencyRun,
            night.run(
                "delinquency",
                lambda: pause_delinquent_customers(biller=biller, dry_run=False, return_state=True),
            ),
        )


def payments_sent(block: str, since: datetime) -> int:
    """Customer payments this process sent to the service since ``since`` and the service
    confirmed, by the ledger (whichever step recorded them: a waiting statement, or one a
    stopped night left in ``processing/``)."""
    mine = this_process() + ":"
    with open_ledger() as ledger:
        billers = [b for b, name in ledger.biller_blocks().items() if name == block]
        operations = [
            op
            for biller in billers
            for op in ledger.operations(
                biller=biller, kinds=[PAYMENT_KIND], states=[OperationState.CONFIRMED]
            )
        ]
    return sum(
        1
        for op in operations
        if op.sent_at is not None and op.sent_at >= since and (op.claimed_by or "").startswith(mine)
    )


@flow(name="nightly-biller", log_prints=False)
def nightly_biller(biller: str, night: date | None = None) -> State[Any]:
    """One biller's night: its waiting bank statements, payout reports and other inbox files, the
    import jobs left open and the delinquency policy (applied only where it allows it
    unattended), under the biller's limits. Started by the nightly run for every biller; also
    runnable on its own.

    Args:
        biller: Name of the biller's credential block.
        night: The night this run belongs to (default today in Europe/London); the nightly run
            keys each biller's run by it, so a rerun the same night finds it.
    """
    announce_process()
    which = night or night_of()
    logger = get_run_logger()
    record = _Night(biller)
    started = time.monotonic()
    try:
        client_id = load_biller_block(biller).client_id
        with night_slots(biller, client_id) as limits:
            logger.info("%s, night of %s: slots of %s held", biller, which, ", ".join(limits))
            _jobs(record, biller)
    except BillerNightFailed as exc:  # the night's line says what failed; the run fails below
        record.error = str(exc)
    except Exception as exc:  # the credential, the limits: the night could not start
        record.error = f"{type(exc).__name__}: {exc}"
    try:
        payments = payments_sent(biller, record.began)
    except Exception as exc:  # no ledger to read: the night failed already, and says why
        logger.warning("%s: payments recorded tonight not counted: %s", biller, exc)
        payments = 0
    result = record.result(time.monotonic() - started, payments)
    publish_table(
        [artifact_row(result, which)],
        key=artifact_key_of(biller),
        description=f"{biller}, night of {which}: {result.outcome}",
    )
    if not result.ok:
        logger.error("%s: %s", biller, result.error)
        failure = BillerNightFailed(result.error, result)
        return Failed(name=FAILED_NIGHT, message=result.error, data=failure)
    words = "; ".join(job.text() for job in result.jobs)
    logger.info("%s: %s — %s", biller, result.outcome, words)
    return end_run(Outcome(result.outcome, words, attention=result.outcome != COMPLETED), result)
