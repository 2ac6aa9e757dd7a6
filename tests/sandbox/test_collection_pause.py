"""Collection pause and resume of payment requests and invoices: the spec's five numbered rules
and its States table, with the effective state read back as the contract's ``collection``."""

from __future__ import annotations

import uuid

import pytest

from tests.support.billing import (
    activate_invoice,
    error_of,
    get,
    methods,
    new_customer,
    new_invoice,
    new_payment_request,
    ok,
    pause_customer,
    sent_invoice,
)
from tests.support.sandbox_admin import SandboxAdmin

AUTO, ON_DEMAND = "AUTO_COLLECT", "ON_DEMAND"
PLAN = {"cadence": {"type": "INTERVAL_COUNT", "timeUnit": "MONTH", "count": 3}}


def _call(admin, tokens, kind, target_id, action, *names, body=None):
    body = {"collectionMethods": list(names)} if body is None else body
    return admin.api.put(f"/{kind}/{target_id}:{action}", headers=tokens.headers, json=body)


def pr_pause(admin, tokens, pr_id, *names):
    return _call(admin, tokens, "payment_requests", pr_id, "pause_collection", *names)


def pr_resume(admin, tokens, pr_id, *names):
    return _call(admin, tokens, "payment_requests", pr_id, "resume_collection", *names)


def state_of(admin, tokens, pr_id) -> dict:
    return methods(get(admin, tokens, f"/payment_requests/{pr_id}"))


def _triple(entry: dict) -> tuple:
    return entry["paused"], entry["source"], entry["override"]


@pytest.fixture
def customer(admin: SandboxAdmin, biller_token) -> dict:
    return new_customer(admin, biller_token, mandate="ACTIVE")


@pytest.fixture
def pr(admin: SandboxAdmin, biller_token, customer) -> dict:
    distribution = {"approvedForSending": True}
    return new_payment_request(admin, biller_token, customer["id"], distribution=distribution)


# --- rule 1 and the States table ---------------------------------------------------------------


def test_pause_answers_204_and_overrides_only_the_named_method(admin, biller_token, pr):
    response = pr_pause(admin, biller_token, pr["id"], AUTO)

    assert response.status_code == 204 and response.content == b""
    state = state_of(admin, biller_token, pr["id"])
    assert _triple(state[AUTO]) == (True, "PAYMENT_REQUEST", "PAUSED")
    assert _triple(state[ON_DEMAND]) == (False, "NONE", None)


def test_a_method_already_paused_stays_paused(admin, biller_token, pr):
    assert pr_pause(admin, biller_token, pr["id"], AUTO).status_code == 204
    assert pr_pause(admin, biller_token, pr["id"], AUTO, ON_DEMAND).status_code == 204

    state = state_of(admin, biller_token, pr["id"])
    assert state[AUTO]["paused"] and state[ON_DEMAND]["paused"]


def test_methods_not_named_keep_their_state(admin, biller_token, pr):
    assert pr_pause(admin, biller_token, pr["id"], ON_DEMAND, AUTO).status_code == 204

    assert pr_resume(admin, biller_token, pr["id"], AUTO).status_code == 204

    state = state_of(admin, biller_token, pr["id"])
    assert _triple(state[AUTO]) == (False, "PAYMENT_REQUEST", "RESUMED")
    assert _triple(state[ON_DEMAND]) == (True, "PAYMENT_REQUEST", "PAUSED")


def test_the_customers_pause_applies_until_the_request_decides(admin, biller_token, customer, pr):
    pause_customer(admin, biller_token, customer["id"], AUTO, ON_DEMAND)
    assert _triple(state_of(admin, biller_token, pr["id"])[AUTO]) == (True, "CUSTOMER", None)

    # Its own resume keeps it collecting while the customer as a whole is paused.
    assert pr_resume(admin, biller_token, pr["id"], AUTO).status_code == 204

    state = state_of(admin, biller_token, pr["id"])
    assert _triple(state[AUTO]) == (False, "PAYMENT_REQUEST", "RESUMED")
    assert _triple(state[ON_DEMAND]) == (True, "CUSTOMER", None)


def test_a_requests_own_pause_beats_a_customer_that_collects(admin, biller_token, customer, pr):
    assert pr_pause(admin, biller_token, pr["id"], ON_DEMAND).status_code == 204
    pause_customer(admin, biller_token, customer["id"])  # nothing paused at customer level

    assert _triple(state_of(admin, biller_token, pr["id"])[ON_DEMAND]) == (
        True,
        "PAYMENT_REQUEST",
        "PAUSED",
    )


# --- rule 2 (resume) and rule 3 (pause) ----------------------------------------------------------


@pytest.mark.parametrize("mandate", [None, "CREATED", "CANCELLED"])
def test_resume_of_auto_collect_without_direct_debit_resumes_nothing(admin, biller_token, mandate):
    customer = new_customer(admin, biller_token, mandate=mandate)
    pr = new_payment_request(admin, biller_token, customer["id"])
    assert pr_pause(admin, biller_token, pr["id"], ON_DEMAND).status_code == 204

    error = error_of(pr_resume(admin, biller_token, pr["id"], ON_DEMAND, AUTO), 400)

    assert error["type"] == "DIRECT_DEBIT_NOT_AVAILABLE"
    assert _triple(state_of(admin, biller_token, pr["id"])[ON_DEMAND]) == (
        True,
        "PAYMENT_REQUEST",
        "PAUSED",
    )


@pytest.mark.parametrize("mandate", [None, "CANCELLED"])
def test_pausing_auto_collect_without_a_mandate_pauses_nothing(admin, biller_token, mandate):
    customer = new_customer(admin, biller_token, mandate=mandate)
    pr = new_payment_request(admin, biller_token, customer["id"])

    error = error_of(pr_pause(admin, biller_token, pr["id"], ON_DEMAND, AUTO), 400)

    assert (error["type"], error["field"]) == (
        "COLLECTION_METHOD_NOT_ELIGIBLE",
        "collectionMethods",
    )
    state = state_of(admin, biller_token, pr["id"])
    assert not state[ON_DEMAND]["paused"] and state[ON_DEMAND]["override"] is None


def test_a_pending_mandate_allows_pausing_and_resuming_auto_collect(admin, biller_token):
    customer = new_customer(admin, biller_token, mandate="PENDING")
    pr = new_payment_request(admin, biller_token, customer["id"])
    assert pr_pause(admin, biller_token, pr["id"], AUTO).status_code == 204
    assert pr_resume(admin, biller_token, pr["id"], AUTO).status_code == 204


@pytest.mark.parametrize("action", [":void", ":mark-as-paid"])
def test_a_request_that_can_no_longer_collect_cannot_be_paused(admin, biller_token, pr, action):
    ok(admin.api.put(f"/payment_requests/{pr['id']}{action}", headers=biller_token.headers))

    error = error_of(pr_pause(admin, biller_token, pr["id"], ON_DEMAND), 400)
    assert error["type"] == "COLLECTION_METHOD_NOT_ELIGIBLE"
    # Resume never answers not-eligible: it records the override, to no effect.
    assert pr_resume(admin, biller_token, pr["id"], ON_DEMAND).status_code == 204


# --- rule 4: the body ----------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["pause_collection", "resume_collection"])
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"collectionMethods": []}, "collectionMethods"),
        ({"collectionMethods": ["CHEQUE"]}, "collectionMethods[0]"),
        ({"collectionMethods": [AUTO, "auto_collect"]}, "collectionMethods[1]"),
        ({"collectionMethods": AUTO}, "collectionMethods"),
        ({}, "collectionMethods"),
        ([AUTO], "collectionMethods"),
    ],
)
def test_an_empty_or_unknown_method_list_is_400(admin, biller_token, pr, action, body, field):
    invoice = sent_invoice(admin, biller_token, pr["customer"]["id"])
    for kind, target in (("payment_requests", pr["id"]), ("invoices", invoice["id"])):
        error = error_of(_call(admin, biller_token, kind, target, action, body=body), 400)
        assert (error["type"], error["field"]) == ("BAD_REQUEST", field)
    assert not state_of(admin, biller_token, pr["id"])[AUTO]["paused"]


def test_a_missing_or_unreadable_body_is_400(admin, biller_token, pr):
    path = f"/payment_requests/{pr['id']}:pause_collection"
    assert error_of(admin.api.put(path, headers=biller_token.headers), 400)
    headers = {**biller_token.headers, "Content-Type": "application/json"}
    response = admin.api.put(path, headers=headers, content=b"{")
    assert error_of(response, 400)["type"] == "BAD_REQUEST"


# --- rule 5: who may call, and on what -----------------------------------------------------------


@pytest.mark.parametrize("kind", ["payment_requests", "invoices"])
@pytest.mark.parametrize("action", ["pause_collection", "resume_collection"])
def test_authentication_permission_and_existence(admin, biller_token, customer, kind, action):
    pr = new_payment_request(admin, biller_token, customer["id"])
    invoice = new_invoice(admin, biller_token, customer["id"])
    target = pr["id"] if kind == "payment_requests" else invoice["id"]
    path = f"/{kind}/{target}:{action}"
    body = {"collectionMethods": [ON_DEMAND]}

    assert error_of(admin.api.put(path, json=body), 401)["type"] == "UNAUTHORIZED"
    read_only = admin.connect_biller(read_only=True)
    assert error_of(admin.api.put(path, headers=read_only.headers, json=body), 403)
    platform = admin.platform_token()
    assert error_of(admin.api.put(path, headers=platform.headers, json=body), 403)
    other = admin.connect_biller("Other Ltd")
    assert error_of(admin.api.put(path, headers=other.headers, json=body), 404)
    unknown = f"/{kind}/{uuid.uuid4()}:{action}"
    assert error_of(admin.api.put(unknown, headers=biller_token.headers, json=body), 404)


def test_a_payment_request_id_must_be_a_uuid(admin, biller_token):
    response = pr_pause(admin, biller_token, "PR-1", ON_DEMAND)
    assert error_of(response, 400)["type"] == "BAD_REQUEST"


# --- invoice level -------------------------------------------------------------------------------


def _plan_invoice(admin, tokens, customer_id, method="DIRECT_DEBIT_PAYMENT") -> dict:
    plan = {"cadence": {**PLAN["cadence"], "startDate": "2031-01-15"}}
    invoice = new_invoice(admin, tokens, customer_id, instalmentPlanDetails=plan)
    return activate_invoice(admin, tokens, invoice["id"], method)


def inv_call(admin, tokens, invoice_id, action, *names):
    return _call(admin, tokens, "invoices", invoice_id, action, *names)


def test_invoice_pause_applies_to_every_request_of_that_invoice_only(admin, biller_token, customer):
    invoice = _plan_invoice(admin, biller_token, customer["id"])
    other = sent_invoice(admin, biller_token, customer["id"])

    assert inv_call(admin, biller_token, invoice["id"], "pause_collection", AUTO).status_code == 204

    after = get(admin, biller_token, f"/invoices/{invoice['id']}")
    assert len(after["paymentRequests"]) == 3
    for embedded in after["paymentRequests"]:
        assert _triple(methods(embedded)[AUTO]) == (True, "PAYMENT_REQUEST", "PAUSED")
        assert _triple(state_of(admin, biller_token, embedded["id"])[AUTO])[0] is True
    assert _triple(methods(after)[AUTO]) == (True, "PAYMENT_REQUEST", "PAUSED")
    assert _triple(methods(after)[ON_DEMAND]) == (False, "NONE", None)
    untouched = get(admin, biller_token, f"/invoices/{other['id']}")
    assert _triple(methods(untouched)[AUTO]) == (False, "NONE", None)
    assert not methods(untouched["paymentRequests"][0])[AUTO]["paused"]


def test_invoice_resume_keeps_collecting_while_the_customer_is_paused(
    admin, biller_token, customer
):
    invoice = _plan_invoice(admin, biller_token, customer["id"])
    pause_customer(admin, biller_token, customer["id"], AUTO)
    assert _triple(methods(get(admin, biller_token, f"/invoices/{invoice['id']}"))[AUTO]) == (
        True,
        "CUSTOMER",
        None,
    )

    assert inv_call(admin, biller_token, invoice["id"], "resume_collection", AUTO).status_code == (
        204
    )

    after = get(admin, biller_token, f"/invoices/{invoice['id']}")
    assert _triple(methods(after)[AUTO]) == (False, "PAYMENT_REQUEST", "RESUMED")
    assert {methods(pr)[AUTO]["paused"] for pr in after["paymentRequests"]} == {False}


def test_the_invoice_summary_has_no_override_when_its_requests_disagree(
    admin, biller_token, customer
):
    invoice = _plan_invoice(admin, biller_token, customer["id"])
    first = invoice["paymentRequests"][0]["id"]
    assert pr_pause(admin, biller_token, first, ON_DEMAND).status_code == 204

    summary = methods(get(admin, biller_token, f"/invoices/{invoice['id']}"))[ON_DEMAND]

    assert _triple(summary) == (False, "NONE", None)


def test_invoice_pause_needs_a_request_that_can_still_collect(admin, biller_token, customer):
    draft = new_invoice(admin, biller_token, customer["id"])
    error = error_of(inv_call(admin, biller_token, draft["id"], "pause_collection", ON_DEMAND), 400)
    assert error["type"] == "COLLECTION_METHOD_NOT_ELIGIBLE"


def test_invoice_pause_of_auto_collect_needs_a_mandate(admin, biller_token):
    customer = new_customer(admin, biller_token)
    invoice = sent_invoice(admin, biller_token, customer["id"])

    error = error_of(inv_call(admin, biller_token, invoice["id"], "pause_collection", AUTO), 400)

    assert error["type"] == "COLLECTION_METHOD_NOT_ELIGIBLE"
    assert not methods(get(admin, biller_token, f"/invoices/{invoice['id']}"))[AUTO]["paused"]


def test_invoice_resume_of_auto_collect_needs_direct_debit(admin, biller_token):
    customer = new_customer(admin, biller_token, mandate="ACTIVE")
    invoice = sent_invoice(admin, biller_token, customer["id"])
    assert inv_call(
        admin, biller_token, invoice["id"], "pause_collection", ON_DEMAND
    ).status_code == (204)
    admin.http.put(f"/_sandbox/customers/{customer['id']}/mandate", json={"status": "CANCELLED"})

    response = inv_call(admin, biller_token, invoice["id"], "resume_collection", ON_DEMAND, AUTO)

    assert error_of(response, 400)["type"] == "DIRECT_DEBIT_NOT_AVAILABLE"
    assert methods(get(admin, biller_token, f"/invoices/{invoice['id']}"))[ON_DEMAND]["paused"]


def test_a_change_shows_in_last_updated_time_and_a_repeat_does_not(admin, biller_token, pr):
    before = get(admin, biller_token, f"/payment_requests/{pr['id']}")["lastUpdatedTime"]

    assert pr_pause(admin, biller_token, pr["id"], ON_DEMAND).status_code == 204
    changed = get(admin, biller_token, f"/payment_requests/{pr['id']}")["lastUpdatedTime"]
    assert pr_pause(admin, biller_token, pr["id"], ON_DEMAND).status_code == 204
    repeated = get(admin, biller_token, f"/payment_requests/{pr['id']}")["lastUpdatedTime"]

    assert changed > before
    assert repeated == changed
