"""Pagination over a real list endpoint: 25 customers, pages of 4."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from billing_api import StaticTokenAuth
from billing_api._base_client import SyncAPIClient
from billing_api._exceptions import UnexpectedResponse
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

CUSTOMERS = 25


@dataclass(frozen=True)
class Populated:
    admin: SandboxAdmin
    tokens: BillerTokens
    ids: list[str]  # in the service's default order (one page of 200)

    @property
    def api(self) -> str:
        return f"{self.admin.root}/api"

    def list_requests(self) -> int:
        return int(self.admin.biller_stats(self.tokens.biller_id)["requests"]["customers.list"])


@pytest.fixture(scope="module")
def populated(faulty: SandboxAdmin) -> Populated:
    tokens = faulty.connect_biller()
    with SyncAPIClient(f"{faulty.root}/api", StaticTokenAuth(tokens.access_token)) as client:
        for number in range(CUSTOMERS):
            body = {"name": f"Paged {number:02d} {uuid.uuid4().hex[:6]}"}
            client.request("customers.create", json=body)
        listed = client.request_json("customers.list", params={"size": 200})["customers"]
    return Populated(faulty, tokens, [customer["id"] for customer in listed])


@pytest.fixture
def sync_client(populated: Populated) -> Iterator[SyncAPIClient]:
    with SyncAPIClient(populated.api, StaticTokenAuth(populated.tokens.access_token)) as client:
        yield client


@pytest.fixture
def no_faults_after(faulty: SandboxAdmin) -> Iterator[None]:
    yield
    assert faulty.http.delete("/_sandbox/faults").status_code == 204


def _customer_id(item: Any) -> str:
    return str(item["id"])


# --- sync ---------------------------------------------------------------------------------------


def test_sync_pager_yields_every_item_once_in_order(
    populated: Populated, sync_client: SyncAPIClient
) -> None:
    before = populated.list_requests()

    pager = sync_client.paginate(
        "customers.list", items_key="customers", parse=_customer_id, page_size=4
    )

    assert len(populated.ids) == CUSTOMERS
    assert list(pager) == populated.ids
    assert populated.list_requests() - before == 7  # ceil(25 / 4), no request past the end


def test_sync_pages_carry_the_page_info(populated: Populated, sync_client: SyncAPIClient) -> None:
    pages = list(
        sync_client.paginate(
            "customers.list", items_key="customers", parse=_customer_id, page_size=4
        ).pages()
    )

    assert [page.number for page in pages] == list(range(7))
    assert [len(page.items) for page in pages] == [4] * 6 + [1]
    assert {(page.total_pages, page.total_elements, page.size) for page in pages} == {(7, 25, 4)}
    assert [page.is_last for page in pages] == [False] * 6 + [True]


def test_an_exact_multiple_stops_on_total_pages(
    populated: Populated, sync_client: SyncAPIClient
) -> None:
    before = populated.list_requests()

    ids = list(
        sync_client.paginate(
            "customers.list", items_key="customers", parse=_customer_id, page_size=5
        )
    )

    assert ids == populated.ids
    assert populated.list_requests() - before == 5


def test_filters_are_kept_on_every_page(populated: Populated, sync_client: SyncAPIClient) -> None:
    pager = sync_client.paginate(
        "customers.list",
        items_key="customers",
        parse=_customer_id,
        params={"sort": "name,desc"},
        page_size=4,
    )

    assert list(pager) == list(reversed(populated.ids))


def test_an_empty_list_is_one_request_and_no_items(sandbox: str, admin: SandboxAdmin) -> None:
    tokens = admin.connect_biller()

    with SyncAPIClient(f"{sandbox}/api", StaticTokenAuth(tokens.access_token)) as client:
        items = list(client.paginate("customers.list", items_key="customers", parse=_customer_id))

    assert items == []
    assert admin.biller_stats(tokens.biller_id)["requests"]["customers.list"] == 1


def test_a_wrong_items_key_names_the_operation_page_and_keys(sync_client: SyncAPIClient) -> None:
    pager = sync_client.paginate("customers.list", items_key="invoices", parse=_customer_id)

    with pytest.raises(UnexpectedResponse) as raised:
        next(pager)

    assert str(raised.value) == (
        "customers.list page 0: no list under 'invoices' (keys: customers, page, pagination)"
    )
