"""What the service says about a biller's customers on one day, as columns (pandas frames).

A :class:`Snapshot` holds three frames, the only input of the policy's evaluation:

- ``customers``: one row per customer — id, external id, name, tags, current mandate and its
  status (``NONE`` without one);
- ``items``: one row per open debt — every invoice and payment request not yet paid, with its
  status, due date, amount due in **pence** (``int64``: exact, and summed by vectorised kernels;
  shown as ``Decimal`` pounds at the edges) and, for payment requests, its invoice, collection
  method and AUTO_COLLECT pause state (``paused``, ``source``, ``override``);
- ``failures``: failed direct-debit collections billops has observed (:func:`observe_failures`).

The service has no list of payments (``docs/service.md`` §7.4), so failures are seen the way a
person watching the console would: a payment request that goes back from ``SUBMITTED`` (the bank
refused the debit) or from ``PAID`` to unpaid (a late failure), between two snapshots; and, the
first time a payment request is seen, its status reason when the policy names it as a failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from billing_api.types import CollectionMethodState, Customer, Invoice, PaymentRequest

CUSTOMER_COLUMNS = ("customer_id", "external_id", "name", "tags", "mandate_id", "mandate_status")
ITEM_COLUMNS = (
    "kind",
    "item_id",
    "number",
    "customer_id",
    "status",
    "due_on",
    "due_pence",
    "invoice_id",
    "collection_method",
    "auto_paused",
    "auto_source",
    "auto_override",
    "reason_code",
)
FAILURE_COLUMNS = ("customer_id", "payment_request_id", "observed_on", "evidence")
INVOICE, PAYMENT_REQUEST = "invoice", "payment_request"
NO_MANDATE = "NONE"
# Statuses of debts that are settled or not yet sent: everything else with money due is unpaid,
# including statuses the service may add later (docs/service.md §7 Statuses: non-exclusive).
NOT_DEBT_STATUSES = frozenset({"DRAFT", "PAID", "SETTLED", "VOID"})
# The unpaid statuses the snapshot asks the service for (its list filters take known values).
UNPAID_INVOICE_STATUSES = ("UNPAID", "SCHEDULED", "SUBMITTED", "OVERDUE")
UNPAID_REQUEST_STATUSES = ("UNPAID", "SCHEDULED", "SUBMITTED")
PAID_STATUSES = frozenset({"PAID", "SETTLED"})
AUTO_COLLECT = "AUTO_COLLECT"


def to_pence(amount: Decimal | None) -> int:
    """Pounds (at most two decimals, as the service sends them) to whole pence, exactly."""
    if amount is None:
        return 0
    pence = amount * 100
    if pence != pence.to_integral_value():
        raise ValueError(f"amount {amount} has a fraction of a penny")
    return int(pence)


def to_pounds(pence: int) -> Decimal:
    """Whole pence back to ``Decimal`` pounds with two places."""
    return (Decimal(int(pence)) / 100).quantize(Decimal("0.01"))


@dataclass(frozen=True)
class Snapshot:
    """One biller's customers, open debts and observed failures on ``as_of`` (see the module)."""

    biller: str
    as_of: date
    customers: pd.DataFrame
    items: pd.DataFrame
    failures: pd.DataFrame

    @classmethod
    def from_records(
        cls,
        *,
        biller: str,
        as_of: date,
        customers: Iterable[Mapping[str, Any]],
        items: Iterable[Mapping[str, Any]] = (),
        failures: Iterable[Mapping[str, Any]] = (),
    ) -> Snapshot:
        """A snapshot from plain rows (the ledger's, or a test's); missing columns get defaults."""
        return cls(
            biller=biller,
            as_of=as_of,
            customers=customer_frame(customers),
            items=item_frame(items),
            failures=failure_frame(failures),
        )


def _frame(
    rows: Iterable[Mapping[str, Any]], columns: Sequence[str], defaults: dict[str, Any]
) -> pd.DataFrame:
    records = [{**defaults, **row} for row in rows]
    frame = pd.DataFrame.from_records(records, columns=list(columns))
    return frame


def customer_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The ``customers`` frame from rows with (some of) :data:`CUSTOMER_COLUMNS`."""
    defaults = {"external_id": "", "name": "", "tags": (), "mandate_id": "", "mandate_status": ""}
    return normalise_customers(_frame(rows, CUSTOMER_COLUMNS, defaults))


def normalise_customers(frame: pd.DataFrame) -> pd.DataFrame:
    """The ``customers`` columns in the types the evaluation expects (tags as tuples)."""
    frame = frame[list(CUSTOMER_COLUMNS)].copy()
    frame["tags"] = [tuple(t) if t else () for t in frame["tags"]]
    frame["mandate_status"] = frame["mandate_status"].replace("", NO_MANDATE).fillna(NO_MANDATE)
    for column in ("customer_id", "external_id", "name", "mandate_id"):
        frame[column] = frame[column].fillna("").astype(object)
    return frame.reset_index(drop=True)


def item_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The ``items`` frame from rows with (some of) :data:`ITEM_COLUMNS`."""
    defaults = {
        "number": "",
        "due_on": None,
        "invoice_id": "",
        "collection_method": "",
        "auto_paused": False,
        "auto_source": "NONE",
        "auto_override": "",
        "reason_code": "",
    }
    return normalise_items(_frame(rows, ITEM_COLUMNS, defaults))


def normalise_items(frame: pd.DataFrame) -> pd.DataFrame:
    """The ``items`` columns in the types the evaluation expects (dates, pence as int64)."""
    frame = frame[list(ITEM_COLUMNS)].copy()
    frame["due_on"] = pd.to_datetime(frame["due_on"]).astype("datetime64[s]")
    frame["due_pence"] = frame["due_pence"].fillna(0).astype(np.int64)
    frame["auto_paused"] = frame["auto_paused"].fillna(False).astype(bool)
    for column in ("number", "invoice_id", "collection_method", "auto_override", "reason_code"):
        frame[column] = frame[column].fillna("").astype(object)
    return frame.reset_index(drop=True)


def failure_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The ``failures`` frame from rows with :data:`FAILURE_COLUMNS`."""
    frame = _frame(rows, FAILURE_COLUMNS, {"evidence": ""})
    frame["observed_on"] = pd.to_datetime(frame["observed_on"]).astype("datetime64[s]")
    return frame.reset_index(drop=True)


# --- from the service's models ----------------------------------------------------------------


def customer_row(customer: Customer, tags: Sequence[str] = ()) -> dict[str, Any]:
    """One ``customers`` row from the service's customer (its embedded current mandate)."""
    mandate = customer.direct_debit_mandate
    status = str(mandate.status) if mandate is not None and mandate.status is not None else ""
    return {
        "customer_id": customer.id,
        "external_id": customer.external_id or "",
        "name": customer.name,
        "tags": tuple(tags),
        "mandate_id": (mandate.id or "") if mandate is not None else "",
        "mandate_status": status or NO_MANDATE,
    }


def invoice_row(invoice: Invoice) -> dict[str, Any] | None:
    """One ``items`` row for an invoice (None for an invoice without a customer)."""
    if invoice.customer is None:
        return None
    return {
        "kind": INVOICE,
        "item_id": invoice.id,
        "number": invoice.invoice_no,
        "customer_id": invoice.customer.id,
        "status": str(invoice.status),
        "due_on": invoice.due_date,
        "due_pence": to_pence(invoice.due_amount),
    }


def auto_collect_state(request: PaymentRequest) -> CollectionMethodState | None:
    """The payment request's AUTO_COLLECT pause state, when the service says it."""
    methods = request.collection.methods if request.collection else []
    return next((m for m in methods if m.method == AUTO_COLLECT), None)


def payment_request_row(request: PaymentRequest) -> dict[str, Any] | None:
    """One ``items`` row for a payment request (None without a customer)."""
    if request.customer is None:
        return None
    auto = auto_collect_state(request)
    distributed = request.distribution.collection_method if request.distribution else None
    method = str(distributed or request.workflow_type or "")
    due = request.due_amount
    if due is None:
        due = request.total_amount - (request.paid_amount or Decimal(0))
    return {
        "kind": PAYMENT_REQUEST,
        "item_id": request.id,
        "number": request.payment_request_no,
        "customer_id": request.customer.id,
        "status": str(request.status),
        "due_on": request.pay_by_date,
        "due_pence": to_pence(due),
        "invoice_id": request.invoice_ids[0] if request.invoice_ids else "",
        "collection_method": method,
        "auto_paused": bool(auto and auto.paused),
        "auto_source": str(auto.source) if auto and auto.source else "NONE",
        "auto_override": str(auto.override or "") if auto else "",
        "reason_code": request.status_reason_code or "",
    }


def observe_failures(
    previous: Mapping[str, tuple[str, str]],
    items: pd.DataFrame,
    *,
    as_of: date,
    failure_reason_codes: Sequence[str],
) -> pd.DataFrame:
    """Failed collections seen in ``items`` compared with the ``previous`` snapshot's payment
    requests (id → (status, status reason); empty on the first run).

    - ``SUBMITTED`` before and unpaid now: the bank refused the debit;
    - ``PAID``/``SETTLED`` before and unpaid now: a late failure (the payment was reversed);
    - a status reason in ``failure_reason_codes`` now, and not before (or not seen before): a
      failure between the two runs, whose ``SUBMITTED`` days no run saw.

    Runs at least every few working days see every failure (a debit is ``SUBMITTED`` for three
    working days, retries are seven apart); a failure and its retry's failure both between two
    runs count as one.
    """
    requests = items[items["kind"] == PAYMENT_REQUEST]
    seen = requests["item_id"].map(previous)
    before = seen.map(lambda p: p[0] if isinstance(p, tuple) else None)
    reason_before = seen.map(lambda p: p[1] if isinstance(p, tuple) else None)
    codes = list(failure_reason_codes)
    unpaid = (~requests["status"].isin(NOT_DEBT_STATUSES)) & (requests["status"] != "SUBMITTED")
    unpaid &= requests["due_pence"] > 0
    bounced = unpaid & (before == "SUBMITTED")
    reversed_ = unpaid & before.isin(PAID_STATUSES)
    newly = requests["reason_code"].isin(codes) & ~reason_before.isin(codes)
    newly &= requests["due_pence"] > 0
    found = requests[(bounced | reversed_ | newly).to_numpy()]
    rows = []
    for row, was in zip(found.itertuples(index=False), before[found.index], strict=True):
        if was == "SUBMITTED":
            evidence = f"debit refused (SUBMITTED → {row.status})"
        elif was in PAID_STATUSES:
            evidence = f"paid, then reversed ({was} → {row.status})"
        elif was is None:
            evidence = f"status reason {row.reason_code} when first seen"
        else:
            evidence = f"status reason {row.reason_code} since the previous run"
        rows.append(
            {
                "customer_id": row.customer_id,
                "payment_request_id": row.item_id,
                "observed_on": as_of,
                "evidence": evidence,
            }
        )
    return failure_frame(rows)
