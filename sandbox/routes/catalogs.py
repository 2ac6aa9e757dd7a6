"""``/catalogs``: the biller's tax rates and line-item catalogue (UK defaults on first use)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from sandbox.billing import catalogs
from sandbox.core.deps import BillerId, SessionDep
from sandbox.core.pagination import PageDep, paginate
from sandbox.core.validation import multi

router = APIRouter(prefix="/catalogs", tags=["catalogs"])
SearchText = Annotated[str | None, Query(alias="searchText")]


@router.get(
    "/tax_rates", operation_id="catalogs.list_tax_rates", summary="Retrieve tax rate options"
)
def list_tax_rates(
    biller_id: BillerId, session: SessionDep, page: PageDep, search_text: SearchText = None
) -> dict[str, Any]:
    listing = catalogs.tax_rates(session, biller_id, search_text)
    return paginate(session, listing, page, key="taxRates", render=catalogs.public_tax_rate)


@router.get(
    "/items",
    operation_id="catalogs.list_items",
    summary="Get line item catalogue items for a filter",
)
def list_items(
    biller_id: BillerId,
    session: SessionDep,
    page: PageDep,
    search_text: SearchText = None,
    codes: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:
    listing = catalogs.items(session, biller_id, search_text, multi(codes))
    return paginate(session, listing, page, key="items", render=catalogs.public_item)
