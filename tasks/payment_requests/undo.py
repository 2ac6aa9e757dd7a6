"""Undo an import: void the payment requests one import run created, with an approval on record.

Only requests the run *created* are voided (an update of an existing request is not undone: the
earlier values are not kept by the service). Requests that can no longer be voided (paid, already
void) are reported, not forced. Every void is written to the audit table with approver and reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from billing_api import ApiError, BillingClient
from ledger import Ledger
from tasks.payment_requests.model import RowStatus


@dataclass(frozen=True)
class UndoResult:
    """One payment request the undo looked at."""

    payment_request_id: str
    external_id: str
    outcome: str  # VOIDED, WOULD_VOID, or NOT_VOIDED with the reason in ``detail``
    detail: str = ""


def created_by_run(ledger: Ledger, run_id: str) -> list[tuple[str, str]]:
    """``(payment request id, externalId)`` of every request the run created."""
    return sorted(
        {
            (item.payment_request_id, item.external_id)
            for item in ledger.items_for_run(run_id)
            if item.status == RowStatus.CREATED and item.payment_request_id
        }
    )


def undo_import(
    client: BillingClient,
    ledger: Ledger,
    *,
    run_id: str,
    approver: str,
    reason: str,
    dry_run: bool = True,
) -> list[UndoResult]:
    """Void what the run created (or, in a dry run, list it)."""
    targets = created_by_run(ledger, run_id)
    if dry_run:
        return [UndoResult(pr_id, ext, "WOULD_VOID") for pr_id, ext in targets]
    ledger.audit(
        actor=approver,
        action="approve:undo-import",
        subject=f"run:{run_id}",
        reason=reason,
        approver=approver,
        comment=reason,
        run_id=run_id,
        details={"payment_requests": len(targets)},
    )
    results = []
    for pr_id, ext in targets:
        try:
            client.payment_requests.void(pr_id)
        except ApiError as exc:
            results.append(UndoResult(pr_id, ext, "NOT_VOIDED", str(exc)))
            continue
        ledger.audit(
            actor=approver,
            action="void-payment-request",
            subject=f"payment_request:{pr_id}",
            reason=reason,
            approver=approver,
            run_id=run_id,
            details={"undo_of_run": run_id, "external_id": ext},
        )
        results.append(UndoResult(pr_id, ext, "VOIDED"))
    return results
