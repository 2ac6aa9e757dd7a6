"""``billops undo-import RUN``: void the payment requests an import run created (with approval).

Without ``--apply`` it lists what it would void — number, customer, amount and reference of each
payment request, as the service shows it now — so the person approving sees what they approve.
With ``BILLOPS_UNDO_APPROVER_MUST_DIFFER=true`` the approver must be someone other than the login
running the command (four eyes). Exit codes: 0 ok, 1 failed (or some could not be voided), 2
usage error.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from billops.console import LazyConsole

if TYPE_CHECKING:
    from billing_api import BillingClient
    from ledger import Ledger

# Paths and ids printed whole (a wrapped id cannot be copied).
console = LazyConsole(soft_wrap=True)


@dataclass(frozen=True)
class Shown:
    """What a person recognises a payment request by."""

    number: str
    customer: str
    amount: str
    reference: str
    status: str


def describe_request(client: BillingClient, payment_request_id: str) -> Shown:
    """The payment request as the service shows it now (or why it cannot be shown)."""
    from billing_api import ApiError

    try:
        request = client.payment_requests.retrieve(payment_request_id)
    except ApiError as exc:
        return Shown("?", f"(not shown: {exc})", "", "", "")
    customer = request.customer
    return Shown(
        number=request.payment_request_no,
        customer=(customer.name or customer.id) if customer else "-",
        amount=f"£{request.total_amount:,.2f}",
        reference=request.reference or "-",
        status=str(request.status),
    )


def _same_person(approver: str, login: str) -> bool:
    def norm(name: str) -> str:
        return "".join(name.split()).casefold()

    return norm(approver) == norm(login)


def _check_approval(apply: bool, approve_as: str | None, reason: str | None) -> None:
    from billops.settings import BillopsSettings

    if not apply:
        return
    if not (approve_as and approve_as.strip() and reason and reason.strip()):
        console.print(
            "[red]refused:[/red] voiding payment requests needs an approval: "
            "--approve-as NAME --reason TEXT"
        )
        raise typer.Exit(1)
    login = getpass.getuser()
    if BillopsSettings().undo_approver_must_differ and _same_person(approve_as, login):
        console.print(
            f"[red]refused:[/red] {approve_as!r} is the login running this command ({login}); "
            "BILLOPS_UNDO_APPROVER_MUST_DIFFER asks for someone else's approval"
        )
        raise typer.Exit(1)


def _require_rows(ledger: Ledger, run_id: str) -> None:
    """Fail when the ledger holds no row of ``run_id``: a mistyped id must not read as an undo
    with nothing to do (exit 0)."""
    if ledger.items_for_run(run_id):
        return
    console.print(
        f"[red]failed:[/red] the ledger at {ledger.url} holds no settled row of run {run_id!r}: "
        "check the id (an applied import prints it as `run: ID`); a dry run records none, and "
        "an import whose jobs are open gets them from `billops run poll-import-jobs`",
        highlight=False,
    )
    raise typer.Exit(1)


def undo_import_command(
    run_id: Annotated[str, typer.Argument(help="The import's run id (printed in its summary).")],
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
    approve_as: Annotated[
        str | None, typer.Option(help="Your name: voiding needs an approval on record.")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why, recorded with the approval.")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Void them (default: list only).")] = False,
) -> None:
    """Void the payment requests an import run created; lists them unless --apply.

    Exit codes: 0 ok, 1 failed (or some could not be voided), 2 usage error.
    """
    _check_approval(apply, approve_as, reason)
    from ledger import LedgerError
    from tasks.common.session import UnknownBiller, load_biller_block, open_ledger
    from tasks.payment_requests.undo import undo_import

    try:
        ledger = open_ledger()
        client = load_biller_block(biller).get_client()
    except (LedgerError, UnknownBiller) as exc:
        console.print(f"[red]failed:[/red] {exc}")
        raise typer.Exit(1) from None
    try:
        _require_rows(ledger, run_id)
        results = undo_import(
            client,
            ledger,
            run_id=run_id,
            approver=approve_as or "",
            reason=reason or "",
            dry_run=not apply,
        )
        shown = {
            r.payment_request_id: describe_request(client, r.payment_request_id) for r in results
        }
    finally:
        client.close()
        ledger.close()
    if not results:
        console.print(f"run {run_id} created no payment requests (nothing to undo)")
        return
    console.print(f"  {'OUTCOME':<11} {'NUMBER':<10} {'CUSTOMER':<28} {'AMOUNT':>12}  REFERENCE")
    for r in results:
        s = shown[r.payment_request_id]
        detail = f"  ({r.detail})" if r.detail else ""
        console.print(
            f"  {r.outcome:<11} {s.number:<10} {s.customer[:28]:<28} {s.amount:>12}  "
            f"{s.reference}  [{r.payment_request_id}, {s.status}]{detail}"
        )
    not_voided = sum(r.outcome == "NOT_VOIDED" for r in results)
    console.print(f"{len(results)} payment request(s); {not_voided} could not be voided")
    raise typer.Exit(1 if not_voided else 0)
