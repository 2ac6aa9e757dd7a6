"""How an import ends: whether anything is to be sent, and the summary people read.

:func:`plan` decides, from the prepared file and the options, whether the run sends (a file
imported before, a dry run, a file rejected whole or with no valid row send nothing);
:func:`finish` writes the reports, records the file in the ledger and says what the run did.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum

from billing_api import BillingClient
from ledger import FileState, ItemOutcome, Ledger, Operation
from tasks.common.write_once import SendBudget
from tasks.payment_requests.jobs import Submission
from tasks.payment_requests.known import sync_known
from tasks.payment_requests.model import RowStatus
from tasks.payment_requests.prepare import ImportOptions, PreparedImport, record_file
from tasks.payment_requests.reports import Deletion, ImportReport, deletion_of
from tasks.payment_requests.request_details import first_job_created, request_details
from tasks.payment_requests.steps import write_reports


class ImportStatus(StrEnum):
    """How one import run ended."""

    IMPORTED = "imported"
    PARTIAL = "partial"  # the good rows imported, bad rows skipped
    REJECTED = "rejected"  # bad rows: nothing sent
    DRY_RUN = "dry_run"
    ALREADY_IMPORTED = "already_imported"
    PENDING = "pending"  # some jobs still open: the next run (or poll-import-jobs) settles them
    REFUSED = "refused"  # the approval was refused or never given in time: nothing sent


@dataclass
class ImportSummary:
    """The result of one import run, as the CLI prints it and the UI shows it."""

    file: str
    biller: str
    status: ImportStatus
    run_id: str
    message: str = ""
    report: ImportReport | None = None
    chunks: list[Submission] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    """Whether the run sends; when it does not, how it ends and why."""

    send: bool
    status: ImportStatus = ImportStatus.IMPORTED
    message: str = ""


def plan(prepared: PreparedImport, options: ImportOptions) -> Plan:
    """Send only a file not imported before (or forced), applied, with rows worth sending."""
    if prepared.seen_before and not options.force:
        return Plan(
            False,
            ImportStatus.ALREADY_IMPORTED,
            f"{prepared.seen_before} (--force to import it again)",
        )
    parsed = prepared.parsed
    # A bad file is rejected whole by default; with `skip`, only when no row is left to send.
    rejected = bool(parsed.problems) and (options.on_bad_rows == "reject_file" or not parsed.rows)
    if rejected:
        return Plan(
            False,
            ImportStatus.REJECTED,
            f"{len(parsed.problems)} problem(s) in the file: nothing was sent "
            "(fix the rows, or use on_bad_rows=skip to import the good ones)",
        )
    if options.dry_run:
        return Plan(False, ImportStatus.DRY_RUN, "dry run: nothing was sent (--apply to import)")
    if not parsed.rows:
        return Plan(False, ImportStatus.DRY_RUN, "no valid rows: nothing was sent")
    return Plan(True)


def deletion_facts(prepared: PreparedImport) -> tuple[str, str]:
    """What a full sync deletes, with the count and total (a fact for the approval form)."""
    deletions = prepared.deletions
    if deletions is None or not deletions.deleted:
        return ("deleted", "nothing the ledger knows of (payment requests earlier imports made)")
    kept = f"; {len(deletions.kept)} more kept (submitted or paid)" if deletions.kept else ""
    return (
        "deleted",
        f"{len(deletions.deleted)} payment request(s) earlier imports made that the file no "
        f"longer lists, £{deletions.total():,.2f} in all{kept} (the dry run's report lists them)",
    )


def begin_sending(ledger: Ledger, prepared: PreparedImport, *, biller_id: str, run_id: str) -> None:
    """Record the file as being imported before its first chunk goes (a crash leaves it so)."""
    record_file(
        ledger,
        prepared,
        biller_id=biller_id,
        run_id=run_id,
        state=FileState.IMPORTING,
        report_csv=None,
    )


def _title(prepared: PreparedImport) -> str:
    return f"Payment requests: {prepared.parsed.path.name}"


def finish(
    ledger: Ledger,
    prepared: PreparedImport,
    decided: Plan,
    *,
    summary: ImportSummary,
    biller_id: str,
    dry_run: bool,
    settled: list[Operation],
    budget: SendBudget | None = None,
    client: BillingClient | None = None,
) -> ImportSummary:
    """The run's summary, reports written and the file recorded, whether it sent or not.

    ``budget`` is the run's (its resends are counted in the summary); with ``client``, what the
    run wrote joins the ledger's copy of the biller's payment requests at once, so the next
    import pays for it no more.
    """
    if decided.send:
        budget = budget or SendBudget()
        _finish_sent(
            ledger,
            prepared,
            settled,
            summary=summary,
            biller_id=biller_id,
            budget=budget,
            client=client,
        )
        if client is not None:
            sync_known(client, ledger, biller_id)
        return summary
    return _finish_unsent(
        ledger, prepared, decided, summary=summary, biller_id=biller_id, dry_run=dry_run
    )


def _planned_deletions(prepared: PreparedImport) -> list[Deletion]:
    if prepared.deletions is None:
        return []
    return [
        *(deletion_of(seen, "WOULD_DELETE") for seen in prepared.deletions.deleted),
        *(deletion_of(seen, "WOULD_KEEP", "submitted or paid") for seen in prepared.deletions.kept),
    ]


def _finish_unsent(
    ledger: Ledger,
    prepared: PreparedImport,
    decided: Plan,
    *,
    summary: ImportSummary,
    biller_id: str,
    dry_run: bool,
) -> ImportSummary:
    """Report a run that sent nothing; a file applied but rejected (or empty) is recorded."""
    summary.status, summary.message = decided.status, decided.message
    if decided.status is ImportStatus.ALREADY_IMPORTED:
        return summary
    rejected = decided.status is ImportStatus.REJECTED
    summary.report = write_reports(
        prepared.parsed,
        {},
        dry_run=not rejected,
        sent=False,
        title=_title(prepared),
        biller=summary.biller,
        deletions=[] if rejected else _planned_deletions(prepared),
        dry_run_report=dry_run,
    )
    if not dry_run:
        state = FileState.REJECTED if rejected else FileState.IMPORTED
        record_file(
            ledger,
            prepared,
            biller_id=biller_id,
            run_id=summary.run_id,
            state=state,
            report_csv=summary.report.report_csv,
        )
    return summary


def _answers(
    ledger: Ledger, settled: list[Operation], run_id: str
) -> tuple[dict[str, ItemOutcome], list[ItemOutcome]]:
    """This import's answers by externalId (rows), and its deletions (items without a row).

    An answer an earlier run recorded (a rerun resuming it, or a chunk another file already
    sent) keeps its status and says whose it is, so no report claims it for this run.
    """
    rows: dict[str, ItemOutcome] = {}
    deleted: list[ItemOutcome] = []
    for op in settled:
        for item in ledger.items(op.key):
            if item.run_id not in (None, run_id):
                item = replace(
                    item, errors=[*item.errors, f"answered to the earlier run {item.run_id}"]
                )
            if item.row_number is None and item.status in (
                RowStatus.DELETED,
                RowStatus.NOT_DELETED,
            ):
                deleted.append(item)
            else:
                rows[item.external_id] = item
    return rows, deleted


def _deletions_done(prepared: PreparedImport, deleted: list[ItemOutcome]) -> list[Deletion]:
    known = (
        {}
        if prepared.deletions is None
        else {
            s.payment_request_id: s for s in [*prepared.deletions.deleted, *prepared.deletions.kept]
        }
    )
    done = []
    for item in deleted:
        seen = known.get(item.payment_request_id or "")
        errors = "; ".join(item.errors)
        if seen is not None:
            done.append(deletion_of(seen, item.status, errors))
        else:
            done.append(
                Deletion(
                    item.status,
                    item.payment_request_id or "",
                    item.external_id,
                    "",
                    Decimal(0),
                    errors,
                )
            )
    return done


def _finish_sent(
    ledger: Ledger,
    prepared: PreparedImport,
    settled: list[Operation],
    *,
    summary: ImportSummary,
    biller_id: str,
    budget: SendBudget,
    client: BillingClient | None = None,
) -> ImportSummary:
    """Report a run that sent its chunks: every row's outcome, and the file's state; with
    ``client``, each payment request's number, status and payment link as the service shows
    them now."""
    parsed = prepared.parsed
    rows, deleted = _answers(ledger, settled, summary.run_id)
    deletions = _deletions_done(prepared, deleted)
    gone = [d.payment_request_id for d in deletions if d.outcome == RowStatus.DELETED]
    ledger.forget_payment_requests(biller_id, gone)
    summary.report = write_reports(
        parsed,
        rows,
        dry_run=False,
        sent=True,
        title=_title(prepared),
        biller=summary.biller,
        existed_before=prepared.existed_before,
        deletions=deletions,
        resent=budget.resent(),
        details=(
            request_details(client, first_job_created(client, settled))
            if client is not None
            else None
        ),
    )
    finished = all(op.state.settled for op in settled)
    if finished:
        summary.status = ImportStatus.PARTIAL if parsed.problems else ImportStatus.IMPORTED
    else:
        summary.status = ImportStatus.PENDING
        summary.message = "some jobs are still open; `billops run poll-import-jobs` settles them"
    if budget.resent():
        resent = f"{budget.resent()} chunk send(s) repeated after a lost answer"
        summary.message = f"{summary.message}; {resent}" if summary.message else resent
    record_file(
        ledger,
        prepared,
        biller_id=biller_id,
        run_id=summary.run_id,
        state=FileState.IMPORTED if finished else FileState.IMPORTING,
        report_csv=summary.report.report_csv,
    )
    return summary
