"""Direct-debit mandates: create-if-missing, list per customer, search, get, cancel, reinstate."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.sandbox_admin import BillerTokens, SandboxAdmin


def _customer(admin: SandboxAdmin, tokens: BillerTokens, name: str = "Payer Ltd") -> str:
    response = admin.api.post("/customers", json={"name": name}, headers=tokens.headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _mandate(admin: SandboxAdmin, tokens: BillerTokens, customer_id: str, **body: Any):
    return admin.api.put(
        f"/customers/{customer_id}/directdebitmandates", json=body or None, headers=tokens.headers
    )


def _force(admin: SandboxAdmin, customer_id: str, **body: Any) -> dict[str, Any]:
    response = admin.http.put(f"/_sandbox/customers/{customer_id}/mandate", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _action(admin: SandboxAdmin, tokens: BillerTokens, mandate_id: str, action: str):
    return admin.api.put(
        f"/customers/directdebitmandates/{mandate_id}:{action}", headers=tokens.headers
    )


def _error(response) -> dict[str, Any]:
    return dict(response.json()["errors"][0])


def test_create_returns_a_new_mandate_with_its_signing_url(
    admin: SandboxAdmin, biller_token
) -> None:
    customer_id = _customer(admin, biller_token)

    response = _mandate(admin, biller_token, customer_id)

    assert response.status_code == 200, response.text
    mandate = response.json()
    assert re.fullmatch(r"[A-Za-z0-9]{18}", mandate["id"])
    assert mandate["status"] == "CREATED"
    assert mandate["url"] == f"{admin.root}/dd-mandate/{mandate['id']}"
    assert mandate["customer"] == {"id": customer_id, "name": "Payer Ltd"}
    assert mandate["sender"]["name"] == "Test Biller Ltd"
    assert mandate["canBeReinstated"] is False
    assert mandate["authorisationTime"] is None
    customer = admin.api.get(f"/customers/{customer_id}", headers=biller_token.headers).json()
    assert customer["directDebitMandate"]["id"] == mandate["id"]
    assert customer["directDebitMandate"]["url"] == mandate["url"]


def test_create_again_returns_the_live_mandate(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    first = _mandate(admin, biller_token, customer_id).json()

    again = _mandate(admin, biller_token, customer_id)
    redirected = _mandate(admin, biller_token, customer_id, redirectUrl="https://biller.example/ok")
    unchanged = _mandate(admin, biller_token, customer_id)

    assert again.json() == first
    assert redirected.json()["id"] == first["id"]
    assert redirected.json()["redirectUrl"] == "https://biller.example/ok"
    assert unchanged.json()["redirectUrl"] == "https://biller.example/ok"
    listed = admin.api.get(
        f"/customers/{customer_id}/directdebitmandates", headers=biller_token.headers
    )
    assert [m["id"] for m in listed.json()["mandates"]] == [first["id"]]


@pytest.mark.parametrize(
    "body", [{"redirectUrl": "http://biller.example/ok"}, {"redirectUrl": "not a url"}]
)
def test_create_refuses_a_redirect_that_is_not_https(
    admin: SandboxAdmin, biller_token, body
) -> None:
    customer_id = _customer(admin, biller_token)
    response = _mandate(admin, biller_token, customer_id, **body)
    assert response.status_code == 422
    assert (_error(response)["type"], _error(response)["field"]) == (
        "VALIDATION_ERROR",
        "redirectUrl",
    )
    listed = admin.api.get(
        f"/customers/{customer_id}/directdebitmandates", headers=biller_token.headers
    )
    assert listed.json()["mandates"] == []


def test_create_ignores_bank_details(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    response = _mandate(
        admin, biller_token, customer_id, accountNumber="12345678", sortCode="000000"
    )
    assert response.status_code == 200
    assert response.json()["bankAccountNumber"] is None


def test_unknown_or_foreign_ids_are_404(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    mandate = _mandate(admin, biller_token, customer_id).json()
    stranger = admin.connect_biller("Stranger Ltd")

    assert _mandate(admin, stranger, customer_id).status_code == 404
    assert (
        admin.api.get(
            f"/customers/directdebitmandates/{mandate['id']}", headers=stranger.headers
        ).status_code
        == 404
    )
    assert _action(admin, stranger, mandate["id"], "cancel").status_code == 404
    assert _action(admin, biller_token, "nope", "reinstate").status_code == 404
    searched = admin.api.get(
        "/customers/directdebitmandates",
        params={"customerId": customer_id},
        headers=stranger.headers,
    )
    assert searched.json()["mandates"] == []


def test_get_returns_the_mandate(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    mandate = _mandate(admin, biller_token, customer_id).json()
    response = admin.api.get(
        f"/customers/directdebitmandates/{mandate['id']}", headers=biller_token.headers
    )
    assert response.status_code == 200
    assert response.json() == mandate


def test_cancel_then_reinstate_a_signed_mandate(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    active = _force(admin, customer_id, status="ACTIVE")
    assert active["authorisationTime"] and active["bankAccountNumber"].startswith("****")

    cancelled = _action(admin, biller_token, active["id"], "cancel")
    cancelled_again = _action(admin, biller_token, active["id"], "cancel")
    reinstated = _action(admin, biller_token, active["id"], "reinstate")
    reinstated_again = _action(admin, biller_token, active["id"], "reinstate")

    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "CANCELLED"
    assert cancelled.json()["statusReasonCode"] == "CANCELLED_ON_DEMAND"
    assert cancelled.json()["canBeReinstated"] is True
    assert cancelled_again.json() == cancelled.json()
    assert reinstated.status_code == 200, reinstated.text
    assert reinstated.json()["status"] == "PENDING"
    assert reinstated.json()["statusReasonCode"] == "REINSTATED"
    assert reinstated.json()["canBeReinstated"] is False
    assert reinstated_again.status_code == 200
    assert reinstated_again.json() == reinstated.json()


def test_reinstate_refuses_what_cannot_be_reinstated(admin: SandboxAdmin, biller_token) -> None:
    headers = biller_token.headers
    unsigned = _customer(admin, biller_token, "Unsigned")
    created = _mandate(admin, biller_token, unsigned).json()
    closed = _customer(admin, biller_token, "Closed")
    _force(admin, closed, status="ACTIVE")
    closed_mandate = _force(admin, closed, status="CANCELLED", statusReasonCode="ACCOUNT_CLOSED")
    migrating = _force(admin, _customer(admin, biller_token, "Migrating"), status="MIGRATING")

    while_created = _action(admin, biller_token, created["id"], "reinstate")
    cancelled_unsigned = _action(admin, biller_token, created["id"], "cancel")
    after_unsigned_cancel = _action(admin, biller_token, created["id"], "reinstate")
    after_account_closed = _action(admin, biller_token, closed_mandate["id"], "reinstate")
    while_migrating = _action(admin, biller_token, migrating["id"], "reinstate")
    cancel_migrating = _action(admin, biller_token, migrating["id"], "cancel")

    for response in (
        while_created,
        after_unsigned_cancel,
        after_account_closed,
        while_migrating,
        cancel_migrating,
    ):
        assert response.status_code == 400, response.text
        assert _error(response)["type"] == "INVALID_STATE"
    assert cancelled_unsigned.json()["canBeReinstated"] is False
    assert closed_mandate["canBeReinstated"] is False
    still = admin.api.get(f"/customers/directdebitmandates/{migrating['id']}", headers=headers)
    assert still.json()["status"] == "MIGRATING"


def test_new_mandate_after_cancel_supersedes_the_old_one(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    old = _force(admin, customer_id, status="ACTIVE")
    _action(admin, biller_token, old["id"], "cancel")

    new = _mandate(admin, biller_token, customer_id).json()
    old_now = admin.api.get(
        f"/customers/directdebitmandates/{old['id']}", headers=biller_token.headers
    )
    listed = admin.api.get(
        f"/customers/{customer_id}/directdebitmandates", headers=biller_token.headers
    )
    reinstate_old = _action(admin, biller_token, old["id"], "reinstate")

    assert new["id"] != old["id"] and new["status"] == "CREATED"
    assert old_now.json()["canBeReinstated"] is False
    assert [m["id"] for m in listed.json()["mandates"]] == [new["id"], old["id"]]  # newest first
    assert reinstate_old.status_code == 400
    customer = admin.api.get(f"/customers/{customer_id}", headers=biller_token.headers).json()
    assert customer["directDebitMandate"]["id"] == new["id"]


def test_search_filters(admin: SandboxAdmin, biller_token) -> None:
    headers = biller_token.headers
    a, b, c = (_customer(admin, biller_token, name) for name in ("A", "B", "C"))
    created = _mandate(admin, biller_token, a).json()
    active = _force(admin, b, status="ACTIVE")
    _force(admin, c, status="ACTIVE")
    payer_cancelled = _force(admin, c, status="CANCELLED")
    closed_customer = _customer(admin, biller_token, "D")
    _force(admin, closed_customer, status="ACTIVE")
    closed = _force(admin, closed_customer, status="CANCELLED", statusReasonCode="ACCOUNT_CLOSED")

    def ids(**params: Any) -> list[str]:
        response = admin.api.get("/customers/directdebitmandates", params=params, headers=headers)
        assert response.status_code == 200, response.text
        return [mandate["id"] for mandate in response.json()["mandates"]]

    assert ids() == [created["id"], active["id"], payer_cancelled["id"], closed["id"]]
    assert ids(customerId=b) == [active["id"]]
    assert ids(statuses="ACTIVE") == [active["id"]]
    assert ids(statuses=["CREATED", "ACTIVE"]) == [created["id"], active["id"]]
    assert ids(statusReasonCodes="ACCOUNT_CLOSED") == [closed["id"]]
    assert payer_cancelled["statusReasonCode"] == "INSTRUCTION_CANCELLED_BY_PAYER"
    assert ids(canBeReinstated="true") == [payer_cancelled["id"]]
    assert ids(canBeReinstated="false") == [created["id"], active["id"], closed["id"]]
    assert ids(sort="creationTime,desc", size=1) == [closed["id"]]


@pytest.mark.parametrize(
    "params",
    [{"statuses": "SIGNED"}, {"statusReasonCodes": "BORED"}, {"canBeReinstated": "perhaps"}],
)
def test_search_refuses_unknown_filter_values(admin: SandboxAdmin, biller_token, params) -> None:
    response = admin.api.get(
        "/customers/directdebitmandates", params=params, headers=biller_token.headers
    )
    assert response.status_code == 400
    assert _error(response)["type"] == "BAD_REQUEST"


def test_admin_force_refuses_unknown_states(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    path = f"/_sandbox/customers/{customer_id}/mandate"
    assert admin.http.put(path, json={"status": "SIGNED"}).status_code == 422
    assert (
        admin.http.put(path, json={"status": "CANCELLED", "statusReasonCode": "X"}).status_code
        == 422
    )
    assert (
        admin.http.put("/_sandbox/customers/nobody/mandate", json={"status": "ACTIVE"}).status_code
        == 404
    )
