"""Customers over HTTP: create (validation, idempotent by body), both updates, get, list filters."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox


def _create(admin: SandboxAdmin, tokens: BillerTokens, **body: Any) -> dict[str, Any]:
    response = admin.api.post(
        "/customers", json={"name": "Acme Ltd", **body}, headers=tokens.headers
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def _error(response) -> dict[str, Any]:
    return dict(response.json()["errors"][0])


def _names(response) -> list[str]:
    assert response.status_code == 200, response.text
    return [customer["name"] for customer in response.json()["customers"]]


PERSON = {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com"}


def test_create_answers_201_with_the_customer(admin: SandboxAdmin, biller_token) -> None:
    body = {
        "name": "Acme Ltd",
        "externalId": "XERO-1",
        "people": [{**PERSON, "isPrimaryContact": True}],
        "addresses": [{"addressLine1": "1 High St", "city": "Leeds", "postalCode": "LS1 1AA"}],
        "externalData": {"connectorType": "XERO", "id": "c-1", "name": "Acme"},
    }
    response = admin.api.post("/customers", json=body, headers=biller_token.headers)

    assert response.status_code == 201, response.text
    customer = response.json()
    assert customer["name"] == "Acme Ltd"
    assert customer["externalId"] == "XERO-1"
    assert customer["people"][0]["id"]
    assert customer["people"][0]["email"] == "ada@example.com"
    assert customer["people"][0]["isIncludedInCommunications"] is True
    assert customer["addresses"][0]["city"] == "Leeds"
    assert customer["timezone"] == "Europe/London"
    assert customer["directDebitMandate"] is None
    assert customer["creationTime"].endswith("Z")
    fetched = admin.api.get(f"/customers/{customer['id']}", headers=biller_token.headers)
    assert fetched.json() == customer


def test_identical_body_returns_the_existing_customer_with_200(
    admin: SandboxAdmin, biller_token
) -> None:
    body = {"name": "Same Ltd", "people": [PERSON]}
    first = admin.api.post("/customers", json=body, headers=biller_token.headers)
    again = admin.api.post("/customers", json=body, headers=biller_token.headers)
    other = admin.api.post(
        "/customers", json={**body, "externalId": "X"}, headers=biller_token.headers
    )

    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert again.json()["id"] == first.json()["id"]
    assert other.json()["id"] != first.json()["id"]
    listed = admin.api.get("/customers", headers=biller_token.headers).json()
    assert listed["page"]["totalElements"] == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "A", "people": [{"email": "not-an-email"}]}, "people[0].email"),
        ({"name": "A", "people": [PERSON, {"email": "a@b"}]}, "people[1].email"),
        ({"people": [PERSON]}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "A", "addresses": [{"city": "Leeds"}, {"city": "York"}]}, "addresses"),
        ({"name": "A", "timezone": "Mars/Olympus"}, "timezone"),
        ({"name": "x" * 256}, "name"),
        ({"name": "A", "people": [{"isPrimaryContact": "maybe"}]}, "people[0].isPrimaryContact"),
        ({"name": "A", "id": "chosen-by-me"}, "id"),
    ],
)
def test_create_refuses_bad_bodies_and_creates_nothing(
    admin: SandboxAdmin, biller_token, body, field
) -> None:
    response = admin.api.post("/customers", json=body, headers=biller_token.headers)

    assert response.status_code == 422, response.text
    error = _error(response)
    assert (error["type"], error["field"]) == ("VALIDATION_ERROR", field)
    listed = admin.api.get("/customers", headers=biller_token.headers).json()
    assert listed["customers"] == []


def test_create_reports_every_problem(admin: SandboxAdmin, biller_token) -> None:
    body = {"people": [{"email": "bad"}], "addresses": [{}, {}]}
    response = admin.api.post("/customers", json=body, headers=biller_token.headers)

    assert response.status_code == 422
    fields = {error["field"] for error in response.json()["errors"]}
    assert fields == {"name", "people[0].email", "addresses"}


def test_external_id_is_unique_per_biller(admin: SandboxAdmin, biller_token) -> None:
    _create(admin, biller_token, externalId="EXT-1")
    response = admin.api.post(
        "/customers", json={"name": "Other", "externalId": "EXT-1"}, headers=biller_token.headers
    )
    assert response.status_code == 422
    assert _error(response)["field"] == "externalId"
    elsewhere = admin.connect_biller("Elsewhere Ltd")
    assert _create(admin, elsewhere, externalId="EXT-1")["externalId"] == "EXT-1"


def test_unreadable_body_is_400(admin: SandboxAdmin, biller_token) -> None:
    response = admin.api.post(
        "/customers",
        content=b'{"name": ',
        headers={**biller_token.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert _error(response)["type"] == "BAD_REQUEST"


def test_put_with_id_in_body_replaces_the_whole_customer(admin: SandboxAdmin, biller_token) -> None:
    customer = _create(
        admin,
        biller_token,
        externalId="E-9",
        people=[PERSON, {"firstName": "Bob", "email": "bob@example.com"}],
        addresses=[{"city": "Leeds"}],
    )
    kept = customer["people"][0]
    body = {"id": customer["id"], "name": "Acme Group", "people": [{**kept, "lastName": "King"}]}

    response = admin.api.put("/customers", json=body, headers=biller_token.headers)

    assert response.status_code == 200, response.text
    updated = admin.api.get(f"/customers/{customer['id']}", headers=biller_token.headers).json()
    assert updated["name"] == "Acme Group"
    assert updated["externalId"] is None  # left out: cleared
    assert updated["addresses"] == []
    assert [(p["id"], p["lastName"]) for p in updated["people"]] == [(kept["id"], "King")]
    assert updated["creationTime"] == customer["creationTime"]
    assert updated["lastUpdatedTime"] >= customer["lastUpdatedTime"]


def test_put_without_id_is_422_and_with_an_unknown_id_404(
    admin: SandboxAdmin, biller_token
) -> None:
    missing = admin.api.put("/customers", json={"name": "A"}, headers=biller_token.headers)
    unknown = admin.api.put(
        "/customers", json={"id": "no-such-customer", "name": "A"}, headers=biller_token.headers
    )
    assert missing.status_code == 422
    assert _error(missing)["field"] == "id"
    assert unknown.status_code == 404
    assert _error(unknown)["type"] == "NOT_FOUND"


def test_put_by_id_replaces_and_checks_the_body_id(admin: SandboxAdmin, biller_token) -> None:
    customer = _create(admin, biller_token, people=[PERSON])
    path = f"/customers/{customer['id']}"

    mismatch = admin.api.put(path, json={"id": "other", "name": "B"}, headers=biller_token.headers)
    bad_email = admin.api.put(
        path, json={"name": "B", "people": [{"email": "nope"}]}, headers=biller_token.headers
    )
    unknown_person = admin.api.put(
        path, json={"name": "B", "people": [{"id": "ghost"}]}, headers=biller_token.headers
    )
    ok = admin.api.put(path, json={"name": "Renamed"}, headers=biller_token.headers)

    assert (mismatch.status_code, _error(mismatch)["field"]) == (422, "id")
    assert (bad_email.status_code, _error(bad_email)["field"]) == (422, "people[0].email")
    assert (unknown_person.status_code, _error(unknown_person)["field"]) == (422, "people[0].id")
    assert ok.status_code == 200
    after = admin.api.get(path, headers=biller_token.headers).json()
    assert (after["name"], after["people"]) == ("Renamed", [])


def test_another_billers_customer_does_not_exist(admin: SandboxAdmin, biller_token) -> None:
    customer = _create(admin, biller_token)
    stranger = admin.connect_biller("Stranger Ltd")
    path = f"/customers/{customer['id']}"

    assert admin.api.get(path, headers=stranger.headers).status_code == 404
    assert admin.api.put(path, json={"name": "X"}, headers=stranger.headers).status_code == 404
    body = {"id": customer["id"], "name": "X"}
    assert admin.api.put("/customers", json=body, headers=stranger.headers).status_code == 404
    assert admin.api.get("/customers", headers=stranger.headers).json()["customers"] == []


def test_read_only_token_may_read_but_not_write(admin: SandboxAdmin) -> None:
    tokens = admin.connect_biller(read_only=True)
    assert admin.api.get("/customers", headers=tokens.headers).status_code == 200
    response = admin.api.post("/customers", json={"name": "A"}, headers=tokens.headers)
    assert response.status_code == 403
    assert _error(response)["type"] == "FORBIDDEN"


def test_list_pages_and_sorts(admin: SandboxAdmin, biller_token) -> None:
    for name in ("Charlie", "Alpha", "Bravo"):
        _create(admin, biller_token, name=name)
    headers = biller_token.headers

    default = admin.api.get("/customers", headers=headers)
    by_name = admin.api.get("/customers", params={"sort": "name,desc", "size": 2}, headers=headers)
    second = admin.api.get(
        "/customers", params={"sort": "name,DESC", "size": 2, "page": 1}, headers=headers
    )

    assert _names(default) == ["Charlie", "Alpha", "Bravo"]  # creation order
    assert _names(by_name) == ["Charlie", "Bravo"]
    assert _names(second) == ["Alpha"]
    info = second.json()["page"]
    assert info == second.json()["pagination"]
    assert (info["totalElements"], info["totalPages"], info["numberOfElements"]) == (3, 2, 1)
    assert info["sort"] == ["name,DESC"]


@pytest.mark.parametrize(
    "params",
    [
        {"sort": "favouriteColour,asc"},
        {"size": 0},
        {"ddMandateStatuses": "SIGNED"},
        {"financialStatuses": "RICH"},
        {"ddMandateSignedStartTime": "yesterday"},
    ],
)
def test_bad_list_parameters_are_400(admin: SandboxAdmin, biller_token, params) -> None:
    response = admin.api.get("/customers", params=params, headers=biller_token.headers)
    assert response.status_code == 400, response.text
    assert _error(response)["type"] == "BAD_REQUEST"


def test_search_text_matches_name_people_and_external_id(admin: SandboxAdmin, biller_token) -> None:
    _create(admin, biller_token, name="Northwind Traders", externalId="NW-001")
    _create(
        admin,
        biller_token,
        name="Contoso",
        people=[{"firstName": "Grace", "email": "g@hopper.io"}],
    )
    _create(admin, biller_token, name="Fabrikam 100%")
    headers = biller_token.headers

    def search(text: str) -> list[str]:
        return _names(admin.api.get("/customers", params={"searchText": text}, headers=headers))

    assert search("northwind") == ["Northwind Traders"]
    assert search("nw-0") == ["Northwind Traders"]
    assert search("HOPPER") == ["Contoso"]
    assert search("grace contoso") == ["Contoso"]
    assert search("100%") == ["Fabrikam 100%"]
    assert search("%") == ["Fabrikam 100%"]  # a LIKE wildcard is matched literally
    assert search("nobody") == []


def test_id_filters_accept_repeats_and_commas(admin: SandboxAdmin, biller_token) -> None:
    a = _create(admin, biller_token, name="A", externalId="ea")
    b = _create(admin, biller_token, name="B", externalId="eb")
    _create(admin, biller_token, name="C", externalId="ec")
    headers = biller_token.headers

    by_ids = admin.api.get(
        "/customers", params={"customerIds": f"{a['id']},{b['id']}"}, headers=headers
    )
    by_external = admin.api.get(
        "/customers", params=[("externalIds", "ea"), ("externalIds", "ec")], headers=headers
    )
    by_tags = admin.api.get("/customers", params={"tagIds": "vip"}, headers=headers)

    assert _names(by_ids) == ["A", "B"]
    assert _names(by_external) == ["A", "C"]
    assert _names(by_tags) == []  # customers carry no tags


def test_mandate_filters_and_activity(admin: SandboxAdmin, biller_token) -> None:
    headers = biller_token.headers
    signed = _create(admin, biller_token, name="Signed")
    waiting = _create(admin, biller_token, name="Waiting")
    _create(admin, biller_token, name="Idle")
    before = admin.http.get("/_sandbox/clock").json()["now"]
    admin.api.put(f"/customers/{waiting['id']}/directdebitmandates", headers=headers)
    forced = admin.http.put(
        f"/_sandbox/customers/{signed['id']}/mandate", json={"status": "ACTIVE"}
    )
    assert forced.status_code == 200, forced.text
    after = admin.http.get("/_sandbox/clock").json()["now"]

    def names(**params: Any) -> list[str]:
        return _names(admin.api.get("/customers", params=params, headers=headers))

    assert names(onlyCustomersWithActivity="true") == ["Signed", "Waiting"]
    assert names(ddMandateStatuses="ACTIVE") == ["Signed"]
    assert names(ddMandateStatuses="CREATED,ACTIVE") == ["Signed", "Waiting"]
    assert names(ddMandateSignedStartTime=before) == ["Signed"]
    assert names(ddMandateSignedStartTime=before, ddMandateSignedEndTime=after) == ["Signed"]
    assert names(ddMandateSignedEndTime="2000-01-01T00:00:00Z") == []
    listed = admin.api.get(f"/customers/{signed['id']}", headers=headers).json()
    summary = listed["directDebitMandate"]
    assert summary["status"] == "ACTIVE"
    assert summary["url"].endswith(f"/dd-mandate/{summary['id']}")
    assert summary["signedTime"].endswith("Z")


def test_financial_details_and_status_filter(admin: SandboxAdmin, biller_token) -> None:
    customer = _create(admin, biller_token, name="Quiet")
    headers = biller_token.headers

    listed = admin.api.get(
        "/customers", params={"includeCustomerFinancialDetails": "true"}, headers=headers
    )
    plain = admin.api.get("/customers", headers=headers).json()["customers"][0]
    one = admin.api.get(
        f"/customers/{customer['id']}",
        params={"includeCustomerFinancialDetails": "true"},
        headers=headers,
    ).json()

    details = listed.json()["customers"][0]["financialDetails"]
    assert details == {
        "financialStatus": "NO_INVOICES",
        "outstandingAmount": "0.00",
        "overdueAmount": "0.00",
        "paidAmount": "0.00",
        "invoiceCount": 0,
    }
    assert "financialDetails" not in plain
    assert one["financialDetails"] == details
    assert _names(
        admin.api.get("/customers", params={"financialStatuses": "NO_INVOICES"}, headers=headers)
    ) == ["Quiet"]
    assert (
        _names(
            admin.api.get("/customers", params={"financialStatuses": "OVERDUE"}, headers=headers)
        )
        == []
    )


def test_last_updated_filter(admin: SandboxAdmin, biller_token) -> None:
    old = _create(admin, biller_token, name="Old")
    _create(admin, biller_token, name="Other")
    headers = biller_token.headers
    renamed = admin.api.put(f"/customers/{old['id']}", json={"name": "Renamed"}, headers=headers)
    since = renamed.json()["lastUpdatedTime"]

    names = _names(
        admin.api.get("/customers", params={"lastUpdatedStartTime": since}, headers=headers)
    )

    assert names == ["Renamed"]


def test_activity_combines_with_mandate_filters(admin: SandboxAdmin, biller_token) -> None:
    headers = biller_token.headers
    active = _create(admin, biller_token, name="Active")
    _create(admin, biller_token, name="Idle")
    admin.http.put(f"/_sandbox/customers/{active['id']}/mandate", json={"status": "ACTIVE"})

    response = admin.api.get(
        "/customers",
        params={"onlyCustomersWithActivity": "true", "ddMandateStatuses": "ACTIVE"},
        headers=headers,
    )

    assert _names(response) == ["Active"]


def test_customer_area_queries_on_each_database(database_url) -> None:
    """The SQL the customer area builds (correlated subqueries, escaped LIKE, derived card
    status, lazy catalogue seeding) on SQLite and PostgreSQL."""
    with running_sandbox(database_url) as own:
        tokens = own.connect_biller()
        headers = tokens.headers
        signed = _create(own, tokens, name="Signed 50%", people=[PERSON])
        _create(own, tokens, name="Idle")
        own.http.put(f"/_sandbox/customers/{signed['id']}/mandate", json={"status": "ACTIVE"})
        expired = own.http.post(
            f"/_sandbox/customers/{signed['id']}/cards", json={"expiryYear": 2001}
        ).json()

        def names(**params: Any) -> list[str]:
            return _names(own.api.get("/customers", params=params, headers=headers))

        assert names(onlyCustomersWithActivity="true", ddMandateStatuses="ACTIVE") == ["Signed 50%"]
        assert names(searchText="50% LOVELACE") == ["Signed 50%"]
        assert names(financialStatuses="NO_INVOICES", sort="name,desc") == ["Signed 50%", "Idle"]
        cards = own.api.get(
            f"/customers/{signed['id']}/cards_on_file",
            params={"statuses": "EXPIRED"},
            headers=headers,
        )
        assert [card["id"] for card in cards.json()["cardsOnFile"]] == [expired["id"]]
        mandates = own.api.get(
            "/customers/directdebitmandates", params={"canBeReinstated": "false"}, headers=headers
        )
        assert mandates.json()["page"]["totalElements"] == 1
        rates = own.api.get("/catalogs/tax_rates", headers=headers).json()
        assert rates["page"]["totalElements"] == 5
        items = own.api.get("/catalogs/items", params={"searchText": "%"}, headers=headers)
        assert items.json()["items"] == []
