"""A biller on a sandbox of its own whose customers pay by direct debit (and card), with the
finance team's two downloads — the payout export and the bank statement — and the job run on
them, as a person would each morning.

The customers, invoices, clock and card page come from the delinquency suite's scenario (same
documented test accounts: pays, fails, fails late); the sandbox's own truth about payouts comes
from its event log (``PAYOUT_PAID`` carries each payout whole) and its late failures
(``DD_PAYMENT_LATE_FAILED``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.delinquency.scenario import Scenario, new_scenario, ok
from tests.support.sandbox_admin import SandboxAdmin

# The bank import refuses statement lines dated after today, so the sandbox's days are in the
# past: a Monday about ten weeks ago (sixty simulated days and a few more end before today).
START = date.today() - timedelta(days=75 + (date.today() - timedelta(days=75)).weekday())
PENNY = Decimal("0.01")
Rows = list[dict[str, str]]


def pennies(value: object) -> int:
    return int((Decimal(str(value)) * 100).to_integral_value())


@dataclass
class PayoutScenario:
    """One biller, its finance folder, and the job."""

    base: Scenario
    folder: Path

    @property
    def admin(self) -> SandboxAdmin:
        return self.base.admin

    def today(self) -> date:
        return self.base.today()

    def advance(self, days: int) -> date:
        return self.base.advance(days)

    def export(self, name: str, params: dict[str, str]) -> bytes:
        answer = self.admin.http.get(
            f"/_sandbox/exports/{name}", params={"billerId": self.base.biller_id, **params}
        )
        assert answer.status_code == 200, answer.text
        return answer.content

    def payout_report(self, last: date | None = None, *, name: str = "") -> Path:
        """The payout export from :data:`START` to ``last`` (default today), in the folder."""
        last = last or self.today()
        path = self.folder / (name or f"payouts-{last}.csv")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.export("payouts.csv", {"from": str(START), "to": str(last)}))
        return path

    def bank_statement(self, last: date, *, layout: str = "generic", name: str = "") -> Path:
        """The bank statement from :data:`START` to ``last``, in a bank's layout."""
        path = self.folder / (name or f"statement-{layout}-{last}.csv")
        path.parent.mkdir(parents=True, exist_ok=True)
        params = {"from": str(START), "to": str(last), "layout": layout}
        path.write_bytes(self.export("bank_statement.csv", params))
        return path

    def run(
        self,
        report: Path | None = None,
        bank: Path | None = None,
        *,
        start: date | None = None,
        end: date | None = None,
    ) -> tuple[Any, Any]:
        """The flow on these files: (its final state, what it returns)."""
        from flows.payouts import reconcile_payouts

        state = reconcile_payouts(
            biller=self.base.block,
            payout_report=report,
            bank_file=bank,
            period_start=start,
            period_end=end,
            return_state=True,
        )
        return state, state.result(raise_on_failure=False)

    # --- the sandbox's truth -------------------------------------------------------------------
    def events(self, event_type: str) -> list[dict[str, Any]]:
        found = ok(
            self.admin.http.get(
                "/_sandbox/webhooks/events",
                params={"billerId": self.base.biller_id, "eventType": event_type, "limit": 1000},
            )
        )["events"]
        return [dict(e["payload"]) for e in found]

    def paid_payouts(self) -> list[dict[str, Any]]:
        """Every payout the sandbox paid, as its PAYOUT_PAID event carried it."""
        return [e["payout"] for e in self.events("PAYOUT_PAID")]

    def late_failures(self) -> set[str]:
        """Ids of the payments that failed after they were paid."""
        return {str(e["paymentId"]) for e in self.events("DD_PAYMENT_LATE_FAILED")}

    # --- what billops kept ----------------------------------------------------------------------
    def results(self, subject: str | None = None) -> dict[str, Any]:
        from tasks.common.session import open_ledger

        with open_ledger() as ledger:
            return {r.subject_id: r for r in ledger.payout_results(self.base.biller_id, subject)}

    def ledger_counts(self) -> dict[str, int]:
        """Rows the ledger holds for the biller, per payout table, and the items its payouts'
        blocks hold (``payout_items``)."""
        from sqlalchemy import text

        from tasks.common.session import open_ledger

        tables = ("ledger_payouts", "ledger_payout_credits", "ledger_payout_results")
        with open_ledger() as ledger, ledger.engine.connect() as connection:
            counts = {
                table: int(
                    connection.execute(
                        text(f"SELECT COUNT(*) FROM {table} WHERE biller = :b"),  # noqa: S608
                        {"b": self.base.biller_id},
                    ).scalar_one()
                )
                for table in tables
            }
            counts["payout_items"] = ledger.all_payout_items(self.base.biller_id)[0].num_rows
        return counts


def standard_customers(sc: Scenario) -> dict[str, list[dict[str, Any]]]:
    """Customers with every behaviour a payout shows: good payers, a failing one (paid by card
    instead), and a late-failing one; invoices due over the next weeks."""
    for label, account in (
        ("Jane", "pays"),
        ("Jill", "pays"),
        ("Sam", "fails"),
        ("Lee", "fails_late"),
    ):
        sc.customer(label, account)
    return {
        "Jane": [sc.invoice("Jane", "120.00", 6), sc.invoice("Jane", "80.40", 20)]
        + [sc.invoice("Jane", "95.00", 38), sc.invoice("Jane", "130.00", 50)],
        "Jill": [sc.invoice("Jill", "55.55", 9), sc.invoice("Jill", "210.10", 26)]
        + [sc.invoice("Jill", "44.44", 44), sc.invoice("Jill", "70.70", 57)],
        "Sam": [sc.invoice("Sam", "99.99", 8)],
        "Lee": [sc.invoice("Lee", "100.00", 6), sc.invoice("Lee", "60.25", 24)],
    }


@contextmanager
def new_payout_scenario(admin: SandboxAdmin, folder: Path) -> Iterator[PayoutScenario]:
    """A fresh biller with its credential block (needs the Prefect harness)."""
    with new_scenario(admin) as base:
        yield PayoutScenario(base, folder)


def payout_total(payouts: list[dict[str, Any]], after: date) -> int:
    """Pennies of the payouts arriving after ``after``."""
    return sum(
        pennies(p["amount"]) for p in payouts if date.fromisoformat(p["arrivalDate"]) > after
    )


def yesterday(day: date) -> date:
    return day - timedelta(days=1)


@dataclass
class Month:
    """A biller's month on the sandbox and its two downloads (as the sandbox wrote them): the
    payout export up to the sandbox's today, the bank statement up to yesterday."""

    scenario: PayoutScenario
    report: Path
    bank: Path
    folder: Path

    def rows(self, path: Path) -> tuple[list[str], Rows]:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            return list(reader.fieldnames or []), list(reader)

    def edited(self, path: Path, name: str, change: Callable[[Rows], Rows]) -> Path:
        header, rows = self.rows(path)
        out = io.StringIO()
        writer = csv.DictWriter(out, header, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(change(rows))
        target = self.folder / name
        target.write_text(out.getvalue(), encoding="utf-8")
        return target

    def payouts(self) -> Rows:
        """One row per payout of the report (its first line)."""
        seen: dict[str, dict[str, str]] = {}
        for row in self.rows(self.report)[1]:
            seen.setdefault(row["Payout ID"], row)
        return list(seen.values())


def month_on(admin: SandboxAdmin, folder: Path) -> Iterator[Month]:
    """Fifty-two days of the standard customers (the failing payer pays by card instead), and
    that morning's two downloads. The sandbox's clock is left on that day: tests edit the files
    and never move it."""
    with new_payout_scenario(admin, folder / "finance") as sc:
        invoices = standard_customers(sc.base)
        sc.advance(12)
        sc.base.pay_by_card(invoices["Sam"][0])
        today = sc.advance(40)
        report = sc.payout_report(today)
        bank = sc.bank_statement(yesterday(today))
        yield Month(sc, report, bank, sc.folder)
