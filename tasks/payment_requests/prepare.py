"""Preparing an import: read and validate the file against the biller's customers, note whether
this exact file was imported before, and cut the good rows into bulk-import chunks."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

from billing_api import BillingClient
from ledger import FileState, Ledger, PaymentRequestSeen
from ledger.settings import BillopsSettings
from tasks.common.working_days import london_today
from tasks.payment_requests.customers import CustomerDirectory
from tasks.payment_requests.jobs import LIST_PAGE_SIZE
from tasks.payment_requests.known import KnownPaymentRequests, sync_known, would_delete
from tasks.payment_requests.model import Chunk, ParsedFile
from tasks.payment_requests.rowcheck import ImportRules
from tasks.payment_requests.screen import pounds
from tasks.payment_requests.service_file import MAX_ROWS_PER_FILE, make_chunks
from tasks.payment_requests.validate import parse_payment_request_file

FILE_KIND = "payment_requests"
OnBadRows = Literal["reject_file", "skip"]


@dataclass(frozen=True)
class ImportOptions:
    """What shapes one import (the flow's parameters; see its docstring)."""

    dry_run: bool = True
    on_bad_rows: OnBadRows = "reject_file"
    chunk_size: int = 500
    delete_missing: bool = False
    sheet: str | None = None
    force: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.chunk_size <= MAX_ROWS_PER_FILE:
            raise ValueError(
                f"chunk_size must be between 1 and {MAX_ROWS_PER_FILE:,} (got {self.chunk_size})"
            )


@dataclass(frozen=True)
class PreparedImport:
    """A file read and validated against the biller's customers, cut into chunks.

    ``generation`` is the import round its writes belong to: the round an unfinished earlier
    run started (so a rerun resumes it), or the next one for a file imported before (used only
    when it is imported again on purpose).
    """

    parsed: ParsedFile
    chunks: list[Chunk]
    seen_before: str | None
    generation: int = 0
    deletions: Deletions | None = None
    existed_before: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Deletions:
    """What a full sync of the file would delete, and what it would keep although missing."""

    deleted: list[PaymentRequestSeen]
    kept: list[PaymentRequestSeen]

    def total(self) -> Decimal:
        """The amounts of the payment requests it would delete, added up exactly."""
        return pounds(sum(seen.amount_pennies for seen in self.deleted))


def import_rules(block: str) -> ImportRules:
    """The biller's import rules from settings (``BILLOPS_IMPORT_*``), by credential block."""
    own = BillopsSettings().import_rules_of(block)
    assert own.max_row_amount and own.max_file_amount and own.formula_cells
    return ImportRules(own.max_row_amount, own.max_file_amount, own.formula_cells)


def prepare(
    client: BillingClient,
    ledger: Ledger,
    *,
    file: Path,
    biller_id: str,
    options: ImportOptions,
    rules: ImportRules,
) -> PreparedImport:
    """Read and validate the file; note whether this exact file was imported before.

    What the service holds is checked against the ledger's copy, brought up to date first with
    what changed since the last look (``known.py``); chunks are cut only for a run that sends.
    """
    customers = CustomerDirectory.from_records(
        (c.id, c.external_id, c.name) for c in client.customers.list(page_size=LIST_PAGE_SIZE)
    )
    sync_known(client, ledger, biller_id)
    parsed = parse_payment_request_file(
        file,
        customers=customers,
        today=london_today(),
        biller=biller_id,
        sheet=options.sheet,
        known=KnownPaymentRequests(ledger, biller_id),
        rules=rules,
    )
    seen = ledger.file_seen(parsed.sha256, biller=biller_id, kind=FILE_KIND)
    seen_before, generation = None, 0
    if seen is not None:
        generation = seen.generation
    if seen is not None and seen.state is FileState.IMPORTED:
        generation += 1
        seen_before = (
            f"{file.name} was already imported on {seen.created_at:%Y-%m-%d %H:%M} UTC "
            f"by run {seen.run_id}"
        )
    whole_file = options.delete_missing
    size = max(len(parsed.good), 1) if whole_file else options.chunk_size
    if whole_file and size > MAX_ROWS_PER_FILE:
        raise ValueError(
            f"a full sync (delete_missing) sends the whole file as one job, and the service takes "
            f"at most {MAX_ROWS_PER_FILE:,} rows per job; {file.name} has {size:,} valid rows"
        )
    deletions = None
    if whole_file:
        deletions = Deletions(*would_delete(ledger, biller_id, parsed.good.column("external_id")))
    chunks = [] if options.dry_run else make_chunks(parsed.good, size=size, mapping=_mapping())
    existing = KnownPaymentRequests(ledger, biller_id).by_external_id(
        parsed.good.column("external_id")
    )
    return PreparedImport(
        parsed=parsed,
        chunks=chunks,
        seen_before=seen_before,
        generation=generation,
        deletions=deletions,
        existed_before=frozenset(existing),
    )


def _mapping() -> dict[str, str] | None:
    return BillopsSettings().bulk_import_columns


def record_file(
    ledger: Ledger,
    prepared: PreparedImport,
    *,
    biller_id: str,
    run_id: str,
    state: FileState,
    report_csv: Path | None,
) -> None:
    """Write down what this run made of the file (first seen, or seen again)."""
    parsed = prepared.parsed
    report_path = str(report_csv) if report_csv is not None else None
    generation = prepared.generation
    if ledger.file_seen(parsed.sha256, biller=biller_id, kind=FILE_KIND) is None:
        ledger.record_file(
            sha256=parsed.sha256,
            name=parsed.path.name,
            size=parsed.path.stat().st_size,
            folder=str(parsed.path.parent),
            biller=biller_id,
            kind=FILE_KIND,
            run_id=run_id,
            state=state,
            report_path=report_path,
            generation=generation,
        )
    else:
        ledger.update_file(
            parsed.sha256,
            biller=biller_id,
            kind=FILE_KIND,
            state=state,
            report_path=report_path,
            run_id=run_id,
            generation=generation,
        )
