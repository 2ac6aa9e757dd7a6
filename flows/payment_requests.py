"""Import payment requests from a finance team's file, and settle the jobs imports leave open."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from prefect import flow, get_run_logger
from prefect.client.schemas.objects import State
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner

from tasks.common.approval import ApprovalRefused, require_approval
from tasks.common.outcome import end_run
from tasks.common.session import BillerSession, open_biller
from tasks.common.workers import current_run_id
from tasks.common.write_once import SendBudget
from tasks.payment_requests.artifacts import publish_import, publish_settled
from tasks.payment_requests.jobs import Submission
from tasks.payment_requests.outcome import full_sync_facts, import_outcome, settled_outcome
from tasks.payment_requests.prepare import ImportOptions, PreparedImport
from tasks.payment_requests.steps import (
    prepare_import,
    settle_jobs,
    settle_open_imports,
    submit_chunk,
)
from tasks.payment_requests.summary import (
    ImportStatus,
    ImportSummary,
    begin_sending,
    finish,
    plan,
)

# Chunks of one biller are processed by the service one after another; four in flight keeps the
# upload busy without holding many connections (bounded, as every task runner here must be).
MAX_PARALLEL_CHUNKS = 4


@flow(
    name="import-payment-requests",
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_PARALLEL_CHUNKS),  # type: ignore[arg-type]
    log_prints=False,
)
def import_payment_requests(
    file: Path,
    biller: str,
    dry_run: bool = True,
    on_bad_rows: Literal["reject_file", "skip"] = "reject_file",
    chunk_size: int = 500,
    delete_missing: bool = False,
    sheet: str = "",
    force: bool = False,
) -> State[Any]:
    """Import a CSV or XLSX file of payment requests for one biller.

    Ends in a state named for its outcome (Dry run, Completed, Completed with rejections,
    Rejected, Already imported, Pending, Approval refused); the summary and the report are the
    run's artifacts. A full sync pauses for an approval form.

    Args:
        file: Full path of the file on the worker's disk (the machine running this flow, e.g.
            /srv/billops/inbox/june.csv), CSV or XLSX. The reports are written next to it.
        biller: Name of the biller's credential block (the list shows those that existed at
            deploy time; `billops auth login --block NAME` creates one).
        dry_run: On: check and report only, nothing is sent. Off: send to the service.
        on_bad_rows: reject_file sends nothing when any row is bad; skip sends the good rows
            and reports the bad ones.
        chunk_size: Rows per bulk-import job (1 to 10,000, the service's limit).
        delete_missing: Full sync: the whole file as one job, deleting the payment requests
            earlier imports created that are not in this file. Pauses for an approval.
        sheet: XLSX only: the sheet to read; empty means the first sheet.
        force: Import again a file whose exact content was imported before.
    """
    options = ImportOptions(
        dry_run, on_bad_rows, chunk_size, delete_missing, sheet.strip() or None, force
    )
    run_id = current_run_id()
    with open_biller(biller) as session:
        prepared = prepare_import(session, file, options)
        decided = plan(prepared, options)
        if decided.send and delete_missing:
            try:
                decision = require_approval(
                    session.ledger,
                    action="delete-missing payment requests",
                    subject=f"{biller}:{file.name}",
                    consequence="deletes payment requests",
                    facts=full_sync_facts(prepared),
                )
            except ApprovalRefused as exc:
                refused = ImportSummary(
                    str(file), biller, ImportStatus.REFUSED, run_id, message=f"{exc}"
                )
                return end_run(import_outcome(refused), data=refused)
            get_run_logger().info("full sync %s", decision.message)
        budget = SendBudget()  # each chunk sent at most 3 times in this run, first send included
        chunks = _submit_chunks(session, prepared, run_id, options, budget) if decided.send else []
        settled = settle_jobs(session, [c.key for c in chunks], budget) if decided.send else []
        summary = finish(
            session.ledger,
            prepared,
            decided,
            summary=ImportSummary(str(file), biller, ImportStatus.DRY_RUN, run_id, chunks=chunks),
            biller_id=session.biller_id,
            dry_run=dry_run,
            settled=settled,
            budget=budget,
            client=session.client,
        )
    outcome = import_outcome(summary)
    for chunk in chunks:
        get_run_logger().info(
            "chunk %d (%d rows): %s, job %s",
            chunk.chunk_index,
            chunk.rows,
            chunk.state,
            chunk.job_id or "-",
        )
    get_run_logger().info("%s: %s — %s", file.name, outcome.name, outcome.message)
    publish_import(summary, outcome)
    return end_run(outcome, data=summary)


def _submit_chunks(
    session: BillerSession,
    prepared: PreparedImport,
    run_id: str,
    options: ImportOptions,
    budget: SendBudget,
) -> list[Submission]:
    """One task per chunk, at most ``MAX_PARALLEL_CHUNKS`` in flight."""
    begin_sending(session.ledger, prepared, biller_id=session.biller_id, run_id=run_id)
    futures = [
        submit_chunk.submit(
            session,
            chunk,
            run_id=run_id,
            file_sha256=prepared.parsed.sha256,
            delete_missing=options.delete_missing,
            generation=prepared.generation,
            budget=budget,
            existed_before=prepared.existed_before,
        )
        for chunk in prepared.chunks
    ]
    # Every chunk finishes (or fails) before any failure propagates: the client must stay open
    # while a sibling chunk is mid-send.
    wait(futures)
    return [future.result() for future in futures]


@flow(name="poll-import-jobs", log_prints=False)
def poll_import_jobs(biller: str) -> State[Any]:
    """Settle the bulk-import jobs a biller's earlier runs left open (crashes, timeouts, unknowns).

    Args:
        biller: Name of the biller's credential block.
    """
    with open_biller(biller) as session:
        settled = settle_open_imports(session)
    submissions = [Submission.of(op) for op in settled]
    outcome = settled_outcome(submissions)
    get_run_logger().info("%s: %s — %s", biller, outcome.name, outcome.message)
    publish_settled(biller, submissions)
    return end_run(outcome, data=submissions)
