"""Routes of the contract's `payments` operations: only ``POST /payments:import`` exists [C]."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sandbox.billing.payments import import_payment, public_payment
from sandbox.core.bodies import JsonBody, json_object
from sandbox.core.deps import BillerId, SessionDep

router = APIRouter(tags=["payments"])


@router.post(
    "/payments:import",
    operation_id="payments.import_payment",
    summary="Import a payment against an invoice",
)
def import_(biller_id: BillerId, session: SessionDep, body: JsonBody) -> dict[str, Any]:
    """200 ``{payments: [...]}``: the IMPORTED payment(s) recorded against the invoice [C]."""
    payments = import_payment(session, biller_id, json_object(body))
    return {"payments": [public_payment(payment) for payment in payments]}
