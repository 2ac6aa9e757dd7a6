"""A customer's workflow settings, payment settings (the customer-level pause) and autopilot."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox


def _customer(admin: SandboxAdmin, tokens: BillerTokens, name: str = "Acme Ltd") -> str:
    response = admin.api.post("/customers", json={"name": name}, headers=tokens.headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _error(response) -> dict[str, Any]:
    return dict(response.json()["errors"][0])


def _today(admin: SandboxAdmin) -> date:
    return date.fromisoformat(admin.http.get("/_sandbox/clock").json()["now"][:10])


# --- workflow settings -------------------------------------------------------------------------


def test_workflow_settings_default_then_stored(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    path = f"/customers/{customer_id}/workflow_settings"
    headers = biller_token.headers

    before = admin.api.get(path, headers=headers)
    body = {
        "customerId": customer_id,
        "onDemandWorkflowId": "tmpl-one-time-payment",
        "autoCollectWorkflowId": "tmpl-dd-payment",
        "remindersEnabled": False,
    }
    stored = admin.api.put("/customers/workflow_settings", json=body, headers=headers)
    after = admin.api.get(path, headers=headers).json()

    assert before.status_code == 200
    assert before.json() == {
        "customerId": customer_id,
        "onDemandWorkflowId": None,
        "autoCollectWorkflowId": None,
        "mandateWorkflowId": None,
        "statementWorkflowId": None,
        "remindersEnabled": True,
        "lastUpdatedTime": None,
    }
    assert stored.status_code == 200, stored.text
    assert after == stored.json()
    assert after["autoCollectWorkflowId"] == "tmpl-dd-payment"
    assert after["remindersEnabled"] is False
    assert after["lastUpdatedTime"].endswith("Z")


def test_workflow_settings_take_the_billers_own_workflow(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    workflow = admin.api.put(
        "/workflows",
        json={"name": "Gentle", "type": "ONE_TIME_PAYMENT"},
        headers=biller_token.headers,
    ).json()
    body = {"customerId": customer_id, "onDemandWorkflowId": workflow["id"]}

    response = admin.api.put(
        "/customers/workflow_settings", json=body, headers=biller_token.headers
    )

    assert response.status_code == 200, response.text
    assert response.json()["onDemandWorkflowId"] == workflow["id"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"onDemandWorkflowId": "no-such-workflow"}, "onDemandWorkflowId"),
        ({"mandateWorkflowId": "tmpl-dd-payment"}, "mandateWorkflowId"),  # wrong type
        ({"remindersEnabled": "sometimes"}, "remindersEnabled"),
        ({"customerId": None}, "customerId"),
    ],
)
def test_bad_workflow_settings_are_422_and_change_nothing(
    admin: SandboxAdmin, biller_token, changes, field
) -> None:
    customer_id = _customer(admin, biller_token)
    body = {"customerId": customer_id, **changes}

    response = admin.api.put(
        "/customers/workflow_settings", json=body, headers=biller_token.headers
    )

    assert response.status_code == 422, response.text
    assert (_error(response)["type"], _error(response)["field"]) == ("VALIDATION_ERROR", field)
    stored = admin.api.get(
        f"/customers/{customer_id}/workflow_settings", headers=biller_token.headers
    )
    assert stored.json()["lastUpdatedTime"] is None


def test_settings_of_an_unknown_customer_are_404(admin: SandboxAdmin, biller_token) -> None:
    stranger_customer = _customer(admin, admin.connect_biller("Other Ltd"))
    headers = biller_token.headers
    for kind in ("workflow_settings", "payment_settings"):
        put = admin.api.put(
            f"/customers/{kind}", json={"customerId": stranger_customer}, headers=headers
        )
        get = admin.api.get(f"/customers/{stranger_customer}/{kind}", headers=headers)
        assert (put.status_code, get.status_code) == (404, 404)


# --- payment settings and the customer-level pause -----------------------------------------------


def test_payment_settings_default(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    response = admin.api.get(
        f"/customers/{customer_id}/payment_settings", headers=biller_token.headers
    )
    assert response.status_code == 200
    assert response.json() == {
        "customerId": customer_id,
        "defaultCollectionMethod": None,
        "allowedPaymentMethods": [],
        "ddRetryCount": None,
        "pausedCollectionMethods": [],
        "collectionPausedUntil": None,
        "lastUpdatedTime": None,
    }


def test_pause_and_resume_at_customer_level(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    headers = biller_token.headers
    until = (_today(admin) + timedelta(days=10)).isoformat()
    body = {
        "customerId": customer_id,
        "defaultCollectionMethod": "ON_DEMAND",
        "allowedPaymentMethods": ["CARD", "BANK_PAYMENT"],
        "ddRetryCount": 2,
        "pausedCollectionMethods": ["ON_DEMAND"],
        "collectionPausedUntil": until,
    }

    paused = admin.api.put("/customers/payment_settings", json=body, headers=headers)
    read = admin.api.get(f"/customers/{customer_id}/payment_settings", headers=headers).json()
    resumed = admin.api.put(
        "/customers/payment_settings",
        json={
            "customerId": customer_id,
            "pausedCollectionMethods": [],
            "collectionPausedUntil": until,
        },
        headers=headers,
    )

    assert paused.status_code == 200, paused.text
    assert read == paused.json()
    assert read["pausedCollectionMethods"] == ["ON_DEMAND"]
    assert read["collectionPausedUntil"] == until
    assert read["ddRetryCount"] == 2
    assert resumed.json()["pausedCollectionMethods"] == []
    assert resumed.json()["collectionPausedUntil"] is None  # meaningless without a pause
    assert resumed.json()["defaultCollectionMethod"] is None  # left out: back to the default


def test_auto_collect_pause_needs_a_usable_mandate(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    headers = biller_token.headers
    body = {"customerId": customer_id, "pausedCollectionMethods": ["AUTO_COLLECT"]}

    refused = admin.api.put("/customers/payment_settings", json=body, headers=headers)
    unchanged = admin.api.get(f"/customers/{customer_id}/payment_settings", headers=headers).json()
    mandate = admin.api.put(f"/customers/{customer_id}/directdebitmandates", headers=headers).json()
    accepted = admin.api.put("/customers/payment_settings", json=body, headers=headers)
    admin.api.put(f"/customers/directdebitmandates/{mandate['id']}:cancel", headers=headers)
    again = admin.api.put(
        "/customers/payment_settings",
        json={"customerId": customer_id, "pausedCollectionMethods": ["ON_DEMAND"]},
        headers=headers,
    )
    other = _customer(admin, biller_token, "Cancelled Ltd")
    admin.api.put(f"/customers/{other}/directdebitmandates", headers=headers)
    admin.http.put(f"/_sandbox/customers/{other}/mandate", json={"status": "CANCELLED"})
    cancelled = admin.api.put(
        "/customers/payment_settings",
        json={"customerId": other, "pausedCollectionMethods": ["AUTO_COLLECT"]},
        headers=headers,
    )

    assert refused.status_code == 400
    assert (_error(refused)["type"], _error(refused)["field"]) == (
        "COLLECTION_METHOD_NOT_ELIGIBLE",
        "pausedCollectionMethods",
    )
    assert unchanged["pausedCollectionMethods"] == []
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["pausedCollectionMethods"] == ["AUTO_COLLECT"]
    assert again.status_code == 200
    assert cancelled.status_code == 400
    assert _error(cancelled)["type"] == "COLLECTION_METHOD_NOT_ELIGIBLE"


@pytest.mark.parametrize(
    ("changes", "status", "error_type", "field"),
    [
        ({"pausedCollectionMethods": ["CHEQUE"]}, 400, "BAD_REQUEST", "pausedCollectionMethods[0]"),
        (
            {"pausedCollectionMethods": ["ON_DEMAND", "ON_DEMAND"]},
            422,
            "VALIDATION_ERROR",
            "pausedCollectionMethods",
        ),
        ({"collectionPausedUntil": "2001-01-01"}, 422, "VALIDATION_ERROR", "collectionPausedUntil"),
        ({"collectionPausedUntil": "soon"}, 422, "VALIDATION_ERROR", "collectionPausedUntil"),
        ({"ddRetryCount": 4}, 422, "VALIDATION_ERROR", "ddRetryCount"),
        ({"defaultCollectionMethod": "CHEQUE"}, 422, "VALIDATION_ERROR", "defaultCollectionMethod"),
        (
            {"allowedPaymentMethods": ["BITCOIN"]},
            422,
            "VALIDATION_ERROR",
            "allowedPaymentMethods[0]",
        ),
        ({"customerId": ""}, 422, "VALIDATION_ERROR", "customerId"),
    ],
)
def test_bad_payment_settings_are_refused(
    admin: SandboxAdmin, biller_token, changes, status, error_type, field
) -> None:
    customer_id = _customer(admin, biller_token)
    body = {"customerId": customer_id, "pausedCollectionMethods": ["ON_DEMAND"], **changes}

    response = admin.api.put("/customers/payment_settings", json=body, headers=biller_token.headers)

    assert response.status_code == status, response.text
    assert (_error(response)["type"], _error(response)["field"]) == (error_type, field)
    stored = admin.api.get(
        f"/customers/{customer_id}/payment_settings", headers=biller_token.headers
    )
    assert stored.json()["pausedCollectionMethods"] == []


def test_customer_pause_ends_after_its_last_day(tmp_path) -> None:
    # Tokens long enough to outlive the days the clock jumps.
    with running_sandbox(f"sqlite:///{tmp_path}/pause.db", access_token_ttl=30 * 86400) as own:
        tokens = own.connect_biller()
        customer_id = _customer(own, tokens)
        until = _today(own) + timedelta(days=2)
        body = {
            "customerId": customer_id,
            "pausedCollectionMethods": ["ON_DEMAND"],
            "collectionPausedUntil": until.isoformat(),
        }
        assert own.api.put(
            "/customers/payment_settings", json=body, headers=tokens.headers
        ).is_success
        path = f"/customers/{customer_id}/payment_settings"

        own.advance_clock(until=until.isoformat())
        on_last_day = own.api.get(path, headers=tokens.headers).json()
        own.advance_clock(days=1)
        after = own.api.get(path, headers=tokens.headers).json()

    assert on_last_day["pausedCollectionMethods"] == ["ON_DEMAND"]
    assert after["pausedCollectionMethods"] == []
    assert after["collectionPausedUntil"] is None


# --- autopilot -----------------------------------------------------------------------------------


def test_autopilot_lifecycle(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    path = f"/customers/{customer_id}/autopilot_settings"
    headers = biller_token.headers

    missing = admin.api.get(path, headers=headers)
    created = admin.api.put(path, json={"guidance": "Be gentle; they pay late."}, headers=headers)
    updated = admin.api.put(path, json={"guidance": "Call before emailing."}, headers=headers)
    read = admin.api.get(path, headers=headers)
    deleted = admin.api.delete(path, headers=headers)
    gone = admin.api.get(path, headers=headers)
    deleted_again = admin.api.delete(path, headers=headers)

    assert missing.status_code == 404
    assert _error(missing)["type"] == "NOT_FOUND"
    assert created.status_code == 200, created.text
    assert created.json()["customerId"] == customer_id
    first, second = created.json()["settings"], updated.json()["settings"]
    assert second["id"] == first["id"]
    assert second["creationTime"] == first["creationTime"]
    assert second["guidance"] == "Call before emailing."
    assert read.json() == updated.json()
    assert (deleted.status_code, gone.status_code, deleted_again.status_code) == (204, 404, 204)


@pytest.mark.parametrize(
    "body", [{}, {"guidance": ""}, {"guidance": "  "}, {"guidance": "x" * 5001}]
)
def test_bad_autopilot_guidance_is_422(admin: SandboxAdmin, biller_token, body) -> None:
    customer_id = _customer(admin, biller_token)
    response = admin.api.put(
        f"/customers/{customer_id}/autopilot_settings", json=body, headers=biller_token.headers
    )
    assert response.status_code == 422
    assert _error(response)["field"] == "guidance"


def test_autopilot_of_an_unknown_customer_is_404(admin: SandboxAdmin, biller_token) -> None:
    path = "/customers/no-such-customer/autopilot_settings"
    headers = biller_token.headers
    assert admin.api.get(path, headers=headers).status_code == 404
    assert admin.api.put(path, json={"guidance": "x"}, headers=headers).status_code == 404
    assert admin.api.delete(path, headers=headers).status_code == 404
