"""Catalogues (tax rates, items: UK defaults per biller) and ``PUT /workflows``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.sandbox_admin import SandboxAdmin


def _error(response) -> dict[str, Any]:
    return dict(response.json()["errors"][0])


# --- catalogues ------------------------------------------------------------------------------


def test_a_new_biller_has_uk_tax_rates(admin: SandboxAdmin, biller_token) -> None:
    response = admin.api.get("/catalogs/tax_rates", headers=biller_token.headers)

    assert response.status_code == 200, response.text
    rates = response.json()["taxRates"]
    assert [(r["name"], r["rate"]) for r in rates] == [
        ("20% (VAT on Income)", 20),
        ("5% (VAT on Income)", 5),
        ("Zero Rated Income", 0),
        ("Exempt Income", 0),
        ("No VAT", 0),
    ]
    assert [r["name"] for r in rates if r["isDefault"]] == ["20% (VAT on Income)"]
    again = admin.api.get("/catalogs/tax_rates", headers=biller_token.headers).json()
    assert again["taxRates"] == rates  # seeded once


def test_tax_rates_search_and_page(admin: SandboxAdmin, biller_token) -> None:
    headers = biller_token.headers
    vat = admin.api.get("/catalogs/tax_rates", params={"searchText": "vat on"}, headers=headers)
    paged = admin.api.get(
        "/catalogs/tax_rates", params={"size": 2, "page": 2, "sort": "name,asc"}, headers=headers
    )

    assert [r["rate"] for r in vat.json()["taxRates"]] == [20, 5]
    assert [r["name"] for r in paged.json()["taxRates"]] == ["Zero Rated Income"]
    assert paged.json()["page"]["totalPages"] == 3
    bad = admin.api.get("/catalogs/tax_rates", params={"sort": "rate,asc"}, headers=headers)
    assert bad.status_code == 400


def test_items_reference_the_billers_tax_rates(admin: SandboxAdmin, biller_token) -> None:
    headers = biller_token.headers
    items = admin.api.get("/catalogs/items", headers=headers)
    rates = admin.api.get("/catalogs/tax_rates", headers=headers).json()["taxRates"]

    assert items.status_code == 200, items.text
    listed = items.json()["items"]
    assert len(listed) >= 3
    assert {item["taxRateId"] for item in listed} <= {rate["id"] for rate in rates}
    consulting = next(item for item in listed if item["code"] == "CONSULT-HR")
    assert consulting["unitAmount"] == 120
    assert consulting["name"] == "Consulting"


def test_items_filters(admin: SandboxAdmin, biller_token) -> None:
    headers = biller_token.headers

    def codes(**params: Any) -> list[str]:
        response = admin.api.get("/catalogs/items", params=params, headers=headers)
        assert response.status_code == 200, response.text
        return [item["code"] for item in response.json()["items"]]

    assert codes(codes="BOOK") == ["BOOK"]
    assert codes(codes="BOOK,TRAINING-D") == ["TRAINING-D", "BOOK"]
    assert codes(codes=["BOOK", "LICENCE-Y"]) == ["BOOK", "LICENCE-Y"]
    assert codes(searchText="licence") == ["LICENCE-Y"]
    assert codes(searchText="per hour") == ["CONSULT-HR"]  # the description
    assert codes(searchText="consult", codes="BOOK") == []
    assert codes(codes="NOPE") == []
    assert codes(sort="unitAmount,desc", size=1) == ["LICENCE-Y"]


def test_catalogues_belong_to_their_biller(admin: SandboxAdmin, biller_token) -> None:
    other = admin.connect_biller("Other Ltd")
    mine = admin.api.get("/catalogs/items", headers=biller_token.headers).json()["items"]
    theirs = admin.api.get("/catalogs/items", headers=other.headers).json()["items"]
    assert {i["id"] for i in mine}.isdisjoint({i["id"] for i in theirs})


# --- workflows -------------------------------------------------------------------------------


def _upsert(admin: SandboxAdmin, tokens, **body: Any):
    return admin.api.put("/workflows", json=body, headers=tokens.headers)


def test_create_then_update_a_workflow(admin: SandboxAdmin, biller_token) -> None:
    events = [{"action": "SEND_EMAIL", "trigger": "AFTER_DUE", "offsetDays": 3}]
    created = _upsert(
        admin, biller_token, name="Late payers 2", type="ONE_TIME_PAYMENT", events=events
    )

    assert created.status_code == 200, created.text
    workflow = created.json()
    assert workflow["name"] == "Late payers 2"
    assert workflow["events"][0]["id"]
    assert workflow["events"][0]["offsetDays"] == 3

    updated = _upsert(
        admin, biller_token, id=workflow["id"], name="Late payers", type="ONE_TIME_PAYMENT"
    )
    another = _upsert(admin, biller_token, name="Late payers", type="ONE_TIME_PAYMENT")

    assert updated.status_code == 200
    assert updated.json()["id"] == workflow["id"]
    assert updated.json()["name"] == "Late payers"
    assert updated.json()["events"] == []  # replaced whole
    assert updated.json()["creationTime"] == workflow["creationTime"]
    assert another.json()["id"] != workflow["id"]  # without id, every call creates


def test_template_events_are_copied(admin: SandboxAdmin, biller_token) -> None:
    response = _upsert(
        admin,
        biller_token,
        name="Chasing",
        type="DD_MANDATE_AUTHORISATION",
        templateId="tmpl-dd-mandate-authorisation",
    )
    assert response.status_code == 200, response.text
    (event,) = response.json()["events"]
    assert (event["repeatEveryDays"], event["stopAfterDays"]) == (7, 180)
    copy = _upsert(
        admin,
        biller_token,
        name="Copy",
        type="DD_MANDATE_AUTHORISATION",
        templateId=response.json()["id"],
    )
    assert [e["action"] for e in copy.json()["events"]] == ["SEND_EMAIL"]


def test_workflow_scoped_to_a_customer(admin: SandboxAdmin, biller_token) -> None:
    customer = admin.api.post(
        "/customers", json={"name": "Scoped"}, headers=biller_token.headers
    ).json()
    response = _upsert(
        admin,
        biller_token,
        name="Just them",
        type="DD_PAYMENT",
        customerDetails={"id": customer["id"]},
    )
    assert response.status_code == 200, response.text
    assert response.json()["customerDetails"] == {"id": customer["id"]}
    assert response.json()["invoiceDetails"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x" * 51, "type": "DD_PAYMENT"}, "name"),
        ({"name": "Late-payers!", "type": "DD_PAYMENT"}, "name"),
        ({"name": "   ", "type": "DD_PAYMENT"}, "name"),
        ({"name": "", "type": "DD_PAYMENT"}, "name"),
        ({"type": "DD_PAYMENT"}, "name"),
        ({"name": "Ok"}, "type"),
        ({"name": "Ok", "type": "SMOKE_SIGNALS"}, "type"),
        ({"name": "Ok", "type": "DD_PAYMENT", "templateId": "nope"}, "templateId"),
        ({"name": "Ok", "type": "DD_PAYMENT", "templateId": "tmpl-one-time-payment"}, "templateId"),
        (
            {"name": "Ok", "type": "DD_PAYMENT", "customerDetails": {"id": "ghost"}},
            "customerDetails.id",
        ),
        (
            {"name": "Ok", "type": "DD_PAYMENT", "invoiceDetails": {"id": "ghost"}},
            "invoiceDetails.id",
        ),
        (
            {
                "name": "Ok",
                "type": "DD_PAYMENT",
                "events": [{"action": "DANCE", "trigger": "ON_DUE"}],
            },
            "events[0].action",
        ),
        (
            {
                "name": "Ok",
                "type": "DD_PAYMENT",
                "events": [{"action": "STOP", "trigger": "ON_DUE", "offsetDays": 400}],
            },
            "events[0].offsetDays",
        ),
    ],
)
def test_bad_workflows_are_422(admin: SandboxAdmin, biller_token, body, field) -> None:
    response = admin.api.put("/workflows", json=body, headers=biller_token.headers)
    assert response.status_code == 422, response.text
    assert (_error(response)["type"], _error(response)["field"]) == ("VALIDATION_ERROR", field)


def test_update_of_an_unknown_or_foreign_workflow_is_404(admin: SandboxAdmin, biller_token) -> None:
    workflow = _upsert(admin, biller_token, name="Mine", type="DD_PAYMENT").json()
    stranger = admin.connect_biller("Stranger Ltd")

    foreign = _upsert(admin, stranger, id=workflow["id"], name="Theirs", type="DD_PAYMENT")
    unknown = _upsert(admin, biller_token, id="no-such-workflow", name="X", type="DD_PAYMENT")

    assert (foreign.status_code, unknown.status_code) == (404, 404)
    assert _error(unknown)["type"] == "NOT_FOUND"


def test_read_only_token_cannot_write_workflows(admin: SandboxAdmin) -> None:
    tokens = admin.connect_biller(read_only=True)
    response = _upsert(admin, tokens, name="Nope", type="DD_PAYMENT")
    assert response.status_code == 403
