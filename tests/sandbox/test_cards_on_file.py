"""Cards on file: the admin API adds test cards; list, ``:remove`` and ``card_on_file:request``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.sandbox_admin import BillerTokens, SandboxAdmin


def _customer(admin: SandboxAdmin, tokens: BillerTokens, **body: Any) -> str:
    response = admin.api.post(
        "/customers", json={"name": "Card Payer Ltd", **body}, headers=tokens.headers
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _add_card(admin: SandboxAdmin, customer_id: str, **card: Any) -> dict[str, Any]:
    response = admin.http.post(f"/_sandbox/customers/{customer_id}/cards", json=card)
    assert response.status_code == 201, response.text
    return dict(response.json())


def _error(response) -> dict[str, Any]:
    return dict(response.json()["errors"][0])


def test_admin_card_is_listed(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    card = _add_card(admin, customer_id, brand="MASTERCARD", last4="4444", expiryYear=2099)

    response = admin.api.get(
        f"/customers/{customer_id}/cards_on_file", headers=biller_token.headers
    )

    assert response.status_code == 200, response.text
    listed = response.json()
    assert listed["cardsOnFile"] == [card]
    assert card["brand"] == "MASTERCARD"
    assert (card["last4"], card["expiryYear"], card["status"]) == ("4444", 2099, "ACTIVE")
    assert listed["page"]["totalElements"] == 1


def test_admin_card_rejects_bad_fields(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    response = admin.http.post(f"/_sandbox/customers/{customer_id}/cards", json={"last4": "12"})
    assert response.status_code == 422
    assert _error(response)["field"] == "last4"
    assert admin.http.post("/_sandbox/customers/nobody/cards", json={}).status_code == 404


def test_remove_card_and_status_filter(admin: SandboxAdmin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    keep = _add_card(admin, customer_id)
    drop = _add_card(admin, customer_id, last4="0005")
    old = _add_card(admin, customer_id, last4="1111", expiryMonth=1, expiryYear=2020)
    headers = biller_token.headers
    path = f"/customers/{customer_id}/cards_on_file"

    removed = admin.api.put(f"{path}/{drop['id']}:remove", headers=headers)
    again = admin.api.put(f"{path}/{drop['id']}:remove", headers=headers)

    def ids(**params: Any) -> list[str]:
        page = admin.api.get(path, params=params, headers=headers)
        assert page.status_code == 200, page.text
        return [card["id"] for card in page.json()["cardsOnFile"]]

    assert removed.status_code == 200
    assert removed.json()["status"] == "REMOVED"
    assert again.status_code == 200 and again.json() == removed.json()
    assert ids() == [keep["id"], drop["id"], old["id"]]  # removed cards included
    assert ids(statuses="ACTIVE") == [keep["id"]]
    assert ids(statuses="REMOVED") == [drop["id"]]
    assert ids(statuses="EXPIRED") == [old["id"]]
    assert ids(statuses="ACTIVE,EXPIRED") == [keep["id"], old["id"]]
    bad = admin.api.get(path, params={"statuses": "LOST"}, headers=headers)
    assert (bad.status_code, _error(bad)["field"]) == (400, "statuses")


def test_unknown_or_foreign_card_is_404(admin: SandboxAdmin, biller_token) -> None:
    mine = _customer(admin, biller_token)
    other = _customer(admin, biller_token, externalId="other")
    card = _add_card(admin, other)
    headers = biller_token.headers

    wrong_customer = admin.api.put(
        f"/customers/{mine}/cards_on_file/{card['id']}:remove", headers=headers
    )
    unknown = admin.api.put(f"/customers/{mine}/cards_on_file/nope:remove", headers=headers)
    stranger = admin.connect_biller("Stranger Ltd")
    foreign = admin.api.get(f"/customers/{other}/cards_on_file", headers=stranger.headers)

    assert (wrong_customer.status_code, unknown.status_code, foreign.status_code) == (404, 404, 404)
    listed = admin.api.get(f"/customers/{other}/cards_on_file", headers=headers).json()
    assert listed["cardsOnFile"][0]["status"] == "ACTIVE"


def test_card_request_is_sent_to_the_primary_contact(admin: SandboxAdmin, biller_token) -> None:
    people = [
        {"email": "accounts@example.com", "isPrimaryContact": True},
        {"email": "boss@example.com"},
        {
            "email": "quiet@example.com",
            "isPrimaryContact": True,
            "isIncludedInCommunications": False,
        },
    ]
    customer_id = _customer(admin, biller_token, people=people)
    path = f"/customers/{customer_id}/card_on_file:request"

    without_body = admin.api.put(path, headers=biller_token.headers)
    with_body = admin.api.put(
        path,
        json={"redirectUrl": "https://biller.example/thanks", "customMessage": "Please add a card"},
        headers=biller_token.headers,
    )

    assert without_body.status_code == 200, without_body.text
    sent = without_body.json()
    assert sent["customerId"] == customer_id
    assert sent["sentTo"] == ["accounts@example.com"]
    assert sent["url"].startswith(f"{admin.root}/pay/card-on-file/")
    assert sent["expiresAt"] > sent["requestedTime"]
    assert with_body.status_code == 200
    assert with_body.json()["url"] != sent["url"]  # every call sends a new request


def test_card_request_without_primary_goes_to_everyone_included(
    admin: SandboxAdmin, biller_token
) -> None:
    people = [{"email": "a@example.com"}, {"firstName": "No Email"}, {"email": "b@example.com"}]
    customer_id = _customer(admin, biller_token, people=people)
    response = admin.api.put(
        f"/customers/{customer_id}/card_on_file:request", headers=biller_token.headers
    )
    assert response.json()["sentTo"] == ["a@example.com", "b@example.com"]


@pytest.mark.parametrize(
    ("people", "body", "field"),
    [
        ([], None, "people"),
        ([{"firstName": "Ada"}], None, "people"),
        ([{"email": "a@example.com", "isIncludedInCommunications": False}], None, "people"),
        ([{"email": "a@example.com"}], {"redirectUrl": "http://insecure.example"}, "redirectUrl"),
        ([{"email": "a@example.com"}], {"customMessage": "x" * 1001}, "customMessage"),
    ],
)
def test_card_request_refusals_are_422(
    admin: SandboxAdmin, biller_token, people, body, field
) -> None:
    customer_id = _customer(admin, biller_token, people=people)
    response = admin.api.put(
        f"/customers/{customer_id}/card_on_file:request", json=body, headers=biller_token.headers
    )
    assert response.status_code == 422, response.text
    assert (_error(response)["type"], _error(response)["field"]) == ("VALIDATION_ERROR", field)


def test_card_request_for_an_unknown_customer_is_404(admin: SandboxAdmin, biller_token) -> None:
    response = admin.api.put("/customers/nobody/card_on_file:request", headers=biller_token.headers)
    assert response.status_code == 404
