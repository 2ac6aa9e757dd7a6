"""The demo's payout step: a month of direct debits paid out, one of them failing after it was
paid out, reconciled from the finance team's two downloads.

Two customers of the biller sign mandates on the hosted page with the documented test accounts
(one whose debits are paid, one whose debits fail late, the README's "The sandbox"), and are sent
direct-debit invoices. The sandbox's days pass until a payout deducts the late failure; then the
biller downloads the payout export and its bank statement up to yesterday (the morning view: the
bank shows days that are over) and reconciles them. The summary ties out, and the picture of
payouts, bank credits and money in transit is written beside the reports.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from billops.demo_bank import sandbox_today

# The documented test accounts (sort code, account number): paid, paid then failed late.
ACCOUNTS = {"Pat Payer": "00012345", "Lee Late": "00066603"}
INVOICES = (("Pat Payer", "2450.00", 5), ("Lee Late", "120.00", 5), ("Pat Payer", "1880.00", 18))
STEP_DAYS, MAX_DAYS = 5, 45
SHOWN_DAYS = 60


def _signed_customers(root: str, client: Any) -> dict[str, str]:
    """The two customers, their mandates signed on the hosted page as each payer would."""
    made: dict[str, str] = {}
    for name, account in ACCOUNTS.items():
        customer = client.customers.create(name=f"{name} (payouts)")
        mandate = client.mandates.create(str(customer.id))
        form = {
            "account_holder": name,
            "sort_code": "10-88-00",
            "account_number": account,
            "confirm": "yes",
        }
        signed = httpx.post(f"{root}/dd-mandate/{mandate.id}", data=form, timeout=30)
        signed.raise_for_status()
        made[name] = str(customer.id)
    return made


def _send_invoices(root: str, block: str) -> None:
    from blocks import BillerCredentials

    client = BillerCredentials.load_named(block).get_client()
    try:
        customers = _signed_customers(root, client)
        today = sandbox_today(root)
        for name, pounds, due_in in INVOICES:
            item = {"description": "Monthly service", "quantity": 1, "unitAmount": float(pounds)}
            invoice = client.invoices.create(
                customer=customers[name], items=[item], due_date=today + timedelta(days=due_in)
            )
            client.invoices.activate(str(invoice.id), collection_method="DIRECT_DEBIT_PAYMENT")
    finally:
        client.close()


def _export(root: str, name: str, **params: str) -> bytes:
    answer = httpx.get(f"{root}/_sandbox/exports/{name}", params=params, timeout=60)
    answer.raise_for_status()
    return answer.content


def _payout_rows(root: str, biller_id: str) -> list[dict[str, str]]:
    today = sandbox_today(root)
    period = {"from": str(today - timedelta(days=SHOWN_DAYS)), "to": str(today)}
    text = _export(root, "payouts.csv", billerId=biller_id, **period).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _advance(root: str, days: int) -> None:
    httpx.post(
        f"{root}/_sandbox/clock/advance", json={"days": days}, timeout=120
    ).raise_for_status()


def _wait_for_a_deduction(root: str, biller_id: str) -> int:
    """Let the days pass until a payout deducts a late failure, then to a morning with a payout
    of its own (still in transit: the statement ends yesterday); returns the days passed."""
    passed = 0
    while passed < MAX_DAYS:
        _advance(root, STEP_DAYS)
        passed += STEP_DAYS
        if any(row["Item type"] == "DEDUCTION" for row in _payout_rows(root, biller_id)):
            break
    for _ in range(STEP_DAYS * 2):
        today = str(sandbox_today(root))
        if any(row["Arrival date"] == today for row in _payout_rows(root, biller_id)):
            break
        _advance(root, 1)
        passed += 1
    return passed


def reconcile_the_month(
    root: str, biller_id: str, block: str, folder: Path, console: Console, *, step: int = 9
) -> Any:
    """The payout step (see the module docstring); returns the reconciliation's result."""
    from flows.payouts import reconcile_payouts

    _send_invoices(root, block)
    console.print(
        f"{step}. {block}: two direct-debit payers (one whose debit fails after it is paid out) "
        "are sent invoices; the days pass…"
    )
    passed = _wait_for_a_deduction(root, biller_id)
    today = sandbox_today(root)
    finance = folder / "payouts"
    finance.mkdir(parents=True, exist_ok=True)
    start = str(today - timedelta(days=SHOWN_DAYS))
    report = finance / f"payouts-{today}.csv"
    report.write_bytes(
        _export(root, "payouts.csv", billerId=biller_id, **{"from": start, "to": str(today)})
    )
    yesterday = today - timedelta(days=1)
    bank = finance / f"statement-{yesterday}.csv"
    statement = _export(
        root,
        "bank_statement.csv",
        billerId=biller_id,
        layout="barclays",
        **{"from": start, "to": str(yesterday)},
    )
    bank.write_bytes(statement)
    console.print(
        f"   {passed} days later ({today:%d/%m/%Y}) it downloads the payout export and its bank "
        f"statement up to yesterday, and reconciles them:"
    )
    result: Any = reconcile_payouts(
        biller=block, payout_report=report, bank_file=bank, period_end=today
    )
    _print_result(result, console)
    return result


def _print_result(result: Any, console: Console) -> None:
    def pounds(pennies: int) -> str:
        return f"£{Decimal(pennies) / 100:,.2f}"

    counts = ", ".join(f"{n} {state}" for state, n in result.counts.items())
    console.print(f"   {result.state}: {counts}", highlight=False)
    console.print(
        f"   in transit {pounds(result.opening)} + collected {pounds(result.collected)} − "
        f"deductions {pounds(result.deductions)} − paid out {pounds(result.paid_out)} = "
        f"{pounds(result.closing)} in transit",
        highlight=False,
    )
    with Path(result.files["reconciliation"]).open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["deductions_explained"]:
                console.print(f"   • deduction: {row['deductions_explained']}", highlight=False)
    console.print(f"   picture: {result.files['picture']}", highlight=False)
    console.print(f"   every payout: {result.files['reconciliation']}", highlight=False)
