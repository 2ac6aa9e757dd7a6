"""``/catalogs``: the biller's tax rates and line-item catalogue (UK defaults on first use)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from sandbox import catalogs, state
from sandbox.customer_models import CatalogItem, TaxRate
from sandbox.deps import SessionDep
from sandbox.pagination import PageDep, paginate
from sandbox.routes.common import BillerId
from sandbox.validation import column, default_sort, multi

router = APIRouter(prefix="/catalogs", tags=["catalogs"])


@router.get(
    "/tax_rates", operation_id="catalogs.list_tax_rates", summary="Retrieve tax rate options"
)
def list_tax_rates(
    biller_id: BillerId,
    session: SessionDep,
    page: PageDep,
    search_text: Annotated[str | None, Query(alias="searchText")] = None,
) -> dict[str, Any]:
    catalogs.ensure_catalog(session, biller_id, state.now(session))
    return paginate(
        session,
        catalogs.tax_rate_query(biller_id, search_text),
        default_sort(page, "creationTime,asc"),
        key="taxRates",
        sortable=catalogs.TAX_RATE_SORTABLE,
        tiebreak=column(TaxRate.id),
        render=catalogs.public_tax_rate,
    )


@router.get(
    "/items",
    operation_id="catalogs.list_items",
    summary="Get line item catalogue items for a filter",
)
def list_items(
    biller_id: BillerId,
    session: SessionDep,
    page: PageDep,
    search_text: Annotated[str | None, Query(alias="searchText")] = None,
    codes: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:
    catalogs.ensure_catalog(session, biller_id, state.now(session))
    return paginate(
        session,
        catalogs.item_query(biller_id, search_text, multi(codes)),
        default_sort(page, "creationTime,asc"),
        key="items",
        sortable=catalogs.ITEM_SORTABLE,
        tiebreak=column(CatalogItem.id),
        render=catalogs.public_item,
    )
