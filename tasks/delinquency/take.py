"""Taking a snapshot: read the service through the client's pagination, compare with the previous
run's snapshot for failed collections, and store it in the ledger; or read one back.

Reads only (safe to retry). Lists ask for unpaid statuses only (``docs/service.md`` §5 Lists:
pages of 200), so a biller's paid history is never read. Customers carry their current mandate
(``directDebitMandate``), so mandates need no calls of their own; tags named by the policy are
resolved through the customer list's ``tagIds`` filter.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

import pandas as pd

from billing_api import BillingClient
from ledger import Ledger
from ledger.delinquency import SnapshotHeader
from tasks.delinquency.policy import Policy
from tasks.delinquency.snapshot import (
    UNPAID_INVOICE_STATUSES,
    UNPAID_REQUEST_STATUSES,
    Snapshot,
    customer_frame,
    customer_row,
    failure_frame,
    invoice_row,
    item_frame,
    normalise_customers,
    normalise_items,
    observe_failures,
    payment_request_row,
)

PAGE_SIZE = 200


class SnapshotError(Exception):
    """The snapshot cannot be taken as asked (the message says why and what to do)."""


def _tags_by_customer(client: BillingClient, tags: Iterable[str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for tag in sorted(set(tags)):
        for customer in client.customers.list(tag_ids=[tag], page_size=PAGE_SIZE):
            found.setdefault(customer.id, []).append(tag)
    return {cid: tuple(names) for cid, names in found.items()}


Rows = list[dict[str, Any]]


def read_service(client: BillingClient, policy: Policy) -> tuple[Rows, Rows]:
    """The customers and open debts rows of the biller, as the service says them now."""
    tags = _tags_by_customer(client, [*policy.include.tags, *policy.exclude.tags])
    customers = [
        customer_row(c, tags.get(c.id, ())) for c in client.customers.list(page_size=PAGE_SIZE)
    ]
    items: list[dict[str, Any]] = []
    for invoice in client.invoices.list(
        statuses=list(UNPAID_INVOICE_STATUSES), page_size=PAGE_SIZE
    ):
        row = invoice_row(invoice)
        if row is not None:
            items.append(row)
    requests = client.payment_requests.list(
        statuses=list(UNPAID_REQUEST_STATUSES), page_size=PAGE_SIZE
    )
    for request in requests:
        row = payment_request_row(request)
        if row is not None:
            items.append(row)
    return customers, _unique(items)


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # A debt that changes status while the pages are read can show up on two pages.
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for item in items:
        seen[(item["kind"], item["item_id"])] = item
    return list(seen.values())


def take_snapshot(
    client: BillingClient,
    ledger: Ledger,
    policy: Policy,
    *,
    biller: str,
    run_id: str,
    as_of: date,
) -> Snapshot:
    """Read the service, observe failures against the previous snapshot, store, and return it."""
    previous = ledger.delinquency_snapshot(biller, before_run=run_id)
    if previous is not None and as_of < previous.as_of:
        raise SnapshotError(
            f"the previous run ({previous.run_id}) looked at {previous.as_of.isoformat()}; a run "
            f"for the earlier day {as_of.isoformat()} would count days and failures backwards"
        )
    customers, items = read_service(client, policy)
    frame = item_frame(items)
    statuses = {} if previous is None else ledger.delinquency_request_statuses(previous.id)
    new = observe_failures(
        statuses, frame, as_of=as_of, failure_reason_codes=policy.failure_reason_codes
    )
    ledger.save_delinquency_snapshot(
        biller=biller,
        run_id=run_id,
        as_of=as_of,
        policy_name=policy.name,
        policy_digest=policy.digest,
        customers=[{**c, "tags": list(c["tags"])} for c in customers],
        items=_ledger_items(frame),
        failures=new.to_dict("records"),
    )
    return Snapshot(
        biller=biller,
        as_of=as_of,
        customers=customer_frame(customers),
        items=frame,
        failures=_failures(ledger, biller, policy, as_of),
    )


def load_snapshot(ledger: Ledger, policy: Policy, header: SnapshotHeader) -> Snapshot:
    """A stored snapshot, as the plan reads it (what the benchmark measures)."""
    customers, items = ledger.delinquency_snapshot_rows(header.id)
    customer_rows = pd.DataFrame.from_records(customers.rows, columns=list(customers.columns))
    item_rows = pd.DataFrame.from_records(items.rows, columns=list(items.columns))
    return Snapshot(
        biller=header.biller,
        as_of=header.as_of,
        customers=normalise_customers(customer_rows),
        items=normalise_items(item_rows),
        failures=_failures(ledger, header.biller, policy, header.as_of),
    )


def _failures(ledger: Ledger, biller: str, policy: Policy, as_of: date) -> pd.DataFrame:
    windows = [w for w in policy.failure_windows if w is not None]
    bounded = bool(windows) and len(windows) == len(policy.failure_windows)
    since = as_of - timedelta(days=max(windows)) if bounded else None
    return failure_frame(
        {
            "customer_id": f.customer_id,
            "payment_request_id": f.payment_request_id,
            "observed_on": f.observed_on,
            "evidence": f.evidence,
        }
        for f in ledger.delinquency_failures(biller, since=since)
    )


def _ledger_items(frame: pd.DataFrame) -> Rows:
    rows: Rows = frame.to_dict("records")
    for row in rows:
        due = row["due_on"]
        row["due_on"] = None if pd.isna(due) else due.date()
        row["due_pence"] = int(row["due_pence"])
        row["auto_paused"] = bool(row["auto_paused"])
    return rows
