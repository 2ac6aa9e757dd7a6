"""Set-up helpers for the invoice, payment-request and collection tests (all over HTTP).

Customers are created with ``POST /customers`` (their create is idempotent by body, so each gets a
unique name); a mandate state is forced with the admin API's
``PUT /_sandbox/customers/{id}/mandate``.
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

WIDGET = {"description": "Widget", "quantity": 3, "unitAmount": 19.99, "taxRate": 20}


def ok(response: Any, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return dict(response.json()) if response.content else {}


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The single error of an error answer, after checking the status."""
    assert response.status_code == status, response.text
    errors = response.json()["errors"]
    assert len(errors) >= 1
    return dict(errors[0])


def new_customer(
    admin: SandboxAdmin, tokens: BillerTokens, mandate: str | None = None, **fields: Any
) -> dict[str, Any]:
    body = {
        "name": f"Customer {uuid.uuid4().hex[:8]}",
        "people": [{"firstName": "Pat", "email": "pat@example.com"}],
        **fields,
    }
    customer = ok(admin.api.post("/customers", headers=tokens.headers, json=body), 201)
    if mandate is not None:
        set_mandate(admin, customer["id"], mandate)
    return customer


def set_mandate(admin: SandboxAdmin, customer_id: str, status: str) -> None:
    response = admin.http.put(f"/_sandbox/customers/{customer_id}/mandate", json={"status": status})
    assert response.status_code == 200, response.text


def pause_customer(admin: SandboxAdmin, tokens: BillerTokens, customer_id: str, *methods: str):
    body = {"customerId": customer_id, "pausedCollectionMethods": list(methods)}
    return ok(admin.api.put("/customers/payment_settings", headers=tokens.headers, json=body))


def new_invoice(
    admin: SandboxAdmin, tokens: BillerTokens, customer_id: str, **fields: Any
) -> dict[str, Any]:
    body = {"customer": {"id": customer_id}, "items": [WIDGET], **fields}
    return ok(admin.api.post("/invoices", headers=tokens.headers, json=body), 201)


def activate_invoice(
    admin: SandboxAdmin, tokens: BillerTokens, invoice_id: str, method: str = "ONE_TIME_PAYMENT"
) -> dict[str, Any]:
    body = {"collectionMethod": method}
    return ok(admin.api.put(f"/invoices/{invoice_id}:activate", headers=tokens.headers, json=body))


def sent_invoice(
    admin: SandboxAdmin, tokens: BillerTokens, customer_id: str, **fields: Any
) -> dict[str, Any]:
    """An invoice created and activated with the payment link (UNPAID, one request)."""
    return activate_invoice(admin, tokens, new_invoice(admin, tokens, customer_id, **fields)["id"])


def new_payment_request(
    admin: SandboxAdmin, tokens: BillerTokens, customer_id: str, **fields: Any
) -> dict[str, Any]:
    body = {
        "customer": {"id": customer_id},
        "description": "Consulting",
        "totalAmount": 100,
        "currencyCode": "GBP",
        **fields,
    }
    return ok(admin.api.post("/payment_requests", headers=tokens.headers, json=body), 201)


def get(admin: SandboxAdmin, tokens: BillerTokens, path: str) -> dict[str, Any]:
    return ok(admin.api.get(path, headers=tokens.headers))


def methods(resource: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``collection.methods`` keyed by method name."""
    return {entry["method"]: entry for entry in resource["collection"]["methods"]}
