"""A biller on a sandbox of its own, with customers who sign mandates with the documented test
accounts, direct-debit invoices, a clock to advance, and the job to run on the sandbox's day.

Everything goes over HTTP: the contract API (every answer checked against the contract), the
hosted mandate and card pages, and the admin API for the clock and the counters.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from tests.support.sandbox_admin import SandboxAdmin

# The documented test accounts (README, "The sandbox").
ACCOUNTS = {
    "pays": ("Jane Doe", "10-88-00", "00012345"),
    "fails": ("Sam Short", "10-88-00", "00066601"),
    "cancels": ("Carl Cancel", "10-88-00", "00066602"),
    "fails_late": ("Lee Late", "10-88-00", "00066603"),
}
LONDON = ZoneInfo("Europe/London")
PAUSE_OPS = ("payment_requests.pause_collection", "payment_requests.resume_collection")


def ok(response: httpx.Response, status: int | tuple[int, ...] = (200, 201)) -> Any:
    wanted = (status,) if isinstance(status, int) else status
    assert response.status_code in wanted, f"{response.request.url}: {response.text}"
    return response.json() if response.content else None


@dataclass
class Scenario:
    """One biller: its credential block, its API client, and the customers made so far."""

    admin: SandboxAdmin
    block: str
    biller_id: str
    api: httpx.Client
    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_hand: int = 0  # pause calls made by "an operator", not by billops

    # --- set-up ------------------------------------------------------------------------------
    def customer(self, label: str, account: str | None, name: str = "") -> dict[str, Any]:
        """A customer whose mandate is signed with ``account`` (a key of :data:`ACCOUNTS`)."""
        body = {
            "name": name or f"{label} {uuid.uuid4().hex[:4]}",
            "externalId": f"EXT-{label}",
            "people": [{"firstName": label, "email": f"{label.lower()}@example.com"}],
        }
        made = ok(self.api.post("/customers", json=body))
        if account is not None:
            mandate = ok(self.api.put(f"/customers/{made['id']}/directdebitmandates", json={}))
            holder, sort_code, number = ACCOUNTS[account]
            form = {
                "account_holder": holder,
                "sort_code": sort_code,
                "account_number": number,
                "confirm": "yes",
            }
            signed = self.admin.http.post(f"/dd-mandate/{mandate['id']}", data=form)
            assert signed.status_code == 200, signed.text
        self.customers[label] = made
        return made

    def invoice(self, label: str, pounds: str, due_in_days: int) -> dict[str, Any]:
        """A direct-debit invoice of the customer, sent (activated); returns it fresh."""
        customer = self.customers[label]
        due = self.today() + timedelta(days=due_in_days)
        body = {
            "customer": {"id": customer["id"]},
            "description": f"Service for {label}",
            "dueDate": due.isoformat(),
            "items": [
                {"description": "Service", "quantity": 1, "unitAmount": float(pounds), "taxRate": 0}
            ],
        }
        made = ok(self.api.post("/invoices", json=body))
        activation = {"collectionMethod": "DIRECT_DEBIT_PAYMENT"}
        ok(self.api.put(f"/invoices/{made['id']}:activate", json=activation))
        return self.get_invoice(made["id"])

    # --- observe -----------------------------------------------------------------------------
    def today(self) -> date:
        """The sandbox's day in Europe/London (what the job evaluates the policy for)."""
        now = datetime.fromisoformat(ok(self.admin.http.get("/_sandbox/clock"))["now"])
        return now.astimezone(LONDON).date()

    def advance(self, days: int = 1) -> date:
        self.admin.advance_clock(days=days)
        return self.today()

    def get_invoice(self, invoice_id: str) -> dict[str, Any]:
        return dict(ok(self.api.get(f"/invoices/{invoice_id}")))

    def request_of(self, invoice: dict[str, Any]) -> dict[str, Any]:
        """The (first) payment request of an invoice, fresh."""
        pr_id = self.get_invoice(invoice["id"])["paymentRequests"][0]["id"]
        return dict(ok(self.api.get(f"/payment_requests/{pr_id}")))

    def auto_collect(self, invoice: dict[str, Any]) -> dict[str, Any]:
        """The AUTO_COLLECT collection state of the invoice's payment request."""
        methods = self.request_of(invoice)["collection"]["methods"]
        return next(m for m in methods if m["method"] == "AUTO_COLLECT")

    def calls(self) -> dict[str, int]:
        """How often the biller's pause and resume operations were called, by operation id."""
        requests = self.admin.biller_stats(self.biller_id).get("requests", {})
        return {op: int(requests.get(op, 0)) for op in PAUSE_OPS}

    def standings(self) -> dict[str, Any]:
        """Each customer's standing in the ledger, by label."""
        from tasks.common.session import open_ledger

        labels = {c["id"]: label for label, c in self.customers.items()}
        with open_ledger() as ledger:
            return {
                labels.get(s.customer_id, s.customer_id): s
                for s in ledger.delinquency_standings(self.biller_id)
            }

    def state_of(self, label: str) -> str:
        found = self.standings().get(label)
        return found.state if found is not None else ""

    def operations(self) -> list[Any]:
        """Every delinquency operation billops recorded for this biller."""
        from tasks.common.session import open_ledger

        with open_ledger() as ledger:
            return ledger.delinquency_operations(
                self.biller_id, [c["id"] for c in self.customers.values()]
            )

    def run(
        self, policy: Path | None, *, apply: bool = True, approver: str | None = "Dana Tester"
    ) -> tuple[Any, Any]:
        """The job for the sandbox's day: (its final state, what it reports)."""
        from contextlib import nullcontext

        from flows.delinquency import pause_delinquent_customers
        from tasks.common.approval import approved_from_cli
        from tasks.delinquency.verdict import DelinquencyStopped

        approval = approved_from_cli(approver, "test run") if approver else nullcontext()
        with approval:
            state = pause_delinquent_customers(
                biller=self.block,
                policy=policy,
                dry_run=not apply,
                as_of=self.today(),
                return_state=True,
            )
        result = state.result(raise_on_failure=False)
        if isinstance(result, DelinquencyStopped):
            result = result.run
        return state, result

    # --- act ---------------------------------------------------------------------------------
    def pay_by_card(self, invoice: dict[str, Any]) -> None:
        """The customer pays the invoice's payment request on the hosted card page."""
        pr = self.request_of(invoice)
        form = {
            "cardholder_name": "Pat Payer",
            "card_number": "4000 0566 5566 5556",
            "expiry": "03/30",
            "cvc": "737",
        }
        paid = self.admin.http.post(f"/pay/{pr['id']}", data=form)
        assert paid.status_code == 200, paid.text

    def import_payment(self, invoice: dict[str, Any]) -> None:
        """The biller records a payment received outside the service (payments:import)."""
        fresh = self.get_invoice(invoice["id"])
        body = {
            "invoiceId": fresh["id"],
            "amount": float(Decimal(str(fresh["dueAmount"]))),  # the contract: a JSON number
            "reference": f"BANK-{fresh['invoiceNo']}",
        }
        ok(self.api.post("/payments:import", json=body))

    def pause_by_hand(self, invoice: dict[str, Any]) -> None:
        """An operator pauses the invoice's collection in the console."""
        pr = self.request_of(invoice)
        body = {"collectionMethods": ["AUTO_COLLECT"]}
        ok(self.api.put(f"/payment_requests/{pr['id']}:pause_collection", json=body), 204)
        self.by_hand += 1

    def resume_by_hand(self, invoice: dict[str, Any]) -> None:
        """An operator resumes the invoice's collection in the console (the call it makes)."""
        pr = self.request_of(invoice)
        body = {"collectionMethods": ["AUTO_COLLECT"]}
        ok(self.api.put(f"/payment_requests/{pr['id']}:resume_collection", json=body), 204)


@contextmanager
def new_scenario(admin: SandboxAdmin) -> Iterator[Scenario]:
    """A fresh biller with its credential block (needs the Prefect harness)."""
    from blocks import BillerCredentials

    tokens = admin.connect_biller(f"Delinquency Biller {uuid.uuid4().hex[:4]}")
    api = httpx.Client(
        base_url=f"{admin.root}/api",
        headers=tokens.headers,
        timeout=30,
        event_hooks=admin.api.event_hooks,
    )
    block = f"dlq-{uuid.uuid4().hex[:10]}"
    BillerCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=tokens.app.client_id,
        client_secret=tokens.app.client_secret,
        refresh_token=tokens.refresh_token,
    ).save(block)
    try:
        yield Scenario(admin=admin, block=block, biller_id=tokens.biller_id, api=api)
    finally:
        api.close()


def write_policy(folder: Path, text: str) -> Path:
    path = folder / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return path
