"""Pagination over a real list endpoint (issue 5 §1 "Pagination"): 25 customers, pages of 4.

Concurrency of the async pager is proven by counting requests in flight with httpx event hooks,
while the sandbox adds latency (so pages overlap) with jitter (so they finish out of order).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from billing_api._base_client import AsyncAPIClient, SyncAPIClient
from billing_api._exceptions import UnexpectedResponse
from tests.billing_api.conftest import StaticBearer, fault_counts, plan_faults
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
    with SyncAPIClient(f"{faulty.root}/api", StaticBearer(tokens.access_token)) as client:
        for number in range(CUSTOMERS):
            body = {"name": f"Paged {number:02d} {uuid.uuid4().hex[:6]}"}
            client.request("customers.create", json=body)
        listed = client.request_json("customers.list", params={"size": 200})["customers"]
    return Populated(faulty, tokens, [customer["id"] for customer in listed])


@pytest.fixture
def sync_client(populated: Populated) -> Iterator[SyncAPIClient]:
    with SyncAPIClient(populated.api, StaticBearer(populated.tokens.access_token)) as client:
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

    with SyncAPIClient(f"{sandbox}/api", StaticBearer(tokens.access_token)) as client:
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


# --- async --------------------------------------------------------------------------------------


class InFlight:
    """Counts requests between their sending and their answer (httpx event hooks)."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self.pages: list[str] = []

    async def sent(self, request: httpx.Request) -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)
        self.pages.append(request.url.params.get("page", ""))

    async def answered(self, response: httpx.Response) -> None:
        self.now -= 1


async def _collect(populated: Populated, max_concurrency: int, counter: InFlight) -> list[str]:
    hooks: dict[str, list[Callable[..., Any]]] = {
        "request": [counter.sent],
        "response": [counter.answered],
    }
    async with (
        httpx.AsyncClient(event_hooks=hooks) as http,
        AsyncAPIClient(
            populated.api,
            StaticBearer(populated.tokens.access_token),
            http_client=http,
            max_concurrency=max_concurrency,
        ) as client,
    ):
        pager = client.paginate(
            "customers.list", items_key="customers", parse=_customer_id, page_size=4
        )
        return [item async for item in pager]


@pytest.mark.usefixtures("no_faults_after")
def test_async_pager_fetches_concurrently_within_the_bound_in_order(
    populated: Populated, faulty: SandboxAdmin
) -> None:
    rule = {"pathPrefix": "/customers", "method": "GET", "latencyMs": 60, "jitterMs": 60}
    plan_faults(faulty, rule)
    counter = InFlight()

    ids = asyncio.run(_collect(populated, 3, counter))

    assert ids == populated.ids
    assert counter.peak == 3  # pages overlapped, and never more than max_concurrency
    assert sorted(counter.pages, key=int) == [str(n) for n in range(7)]
    assert counter.pages[0] == "0"  # the first page alone tells how many follow
    assert fault_counts(faulty)["requests"] == 7


def test_async_pager_with_a_bound_of_one_is_sequential(populated: Populated) -> None:
    counter = InFlight()

    ids = asyncio.run(_collect(populated, 1, counter))

    assert ids == populated.ids
    assert counter.peak == 1
    assert counter.pages == [str(n) for n in range(7)]


def test_async_pager_stopped_early_leaves_nothing_running(populated: Populated) -> None:
    async def first_five() -> tuple[list[str], int]:
        async with AsyncAPIClient(
            populated.api, StaticBearer(populated.tokens.access_token), max_concurrency=4
        ) as client:
            pager = client.paginate(
                "customers.list", items_key="customers", parse=_customer_id, page_size=4
            )
            taken: list[str] = []
            async for item in pager:
                taken.append(item)
                if len(taken) == 5:
                    break
            await pager.aclose()
            current = asyncio.current_task()
            return taken, len([task for task in asyncio.all_tasks() if task is not current])

    taken, still_running = asyncio.run(first_five())

    assert taken == populated.ids[:5]
    assert still_running == 0


def test_max_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_concurrency must be at least 1, got 0"):
        AsyncAPIClient("http://127.0.0.1:1/api", max_concurrency=0)
