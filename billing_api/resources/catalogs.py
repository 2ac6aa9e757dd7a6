"""``client.catalogs``: the biller's tax rates and line-item catalogue."""

from __future__ import annotations

from collections.abc import Sequence

from billing_api.resources._common import Sort
from billing_api.resources._core import (
    ListCall,
    SyncResource,
    list_call,
    query,
    sync_list,
)
from billing_api.types import CatalogItem, TaxRate

__all__ = ["Catalogs"]


def list_tax_rates(
    *, search_text: str | None = None, sort: Sort = None, page_size: int | None = None
) -> ListCall[TaxRate]:
    """Every tax rate."""
    return list_call(
        "catalogs.list_tax_rates",
        "taxRates",
        TaxRate,
        params=query(search_text=search_text, sort=sort),
        page_size=page_size,
    )


def list_items(
    *,
    search_text: str | None = None,
    codes: Sequence[str] | None = None,
    sort: Sort = None,
    page_size: int | None = None,
) -> ListCall[CatalogItem]:
    """Every catalogue item."""
    return list_call(
        "catalogs.list_items",
        "items",
        CatalogItem,
        params=query(search_text=search_text, codes=codes, sort=sort),
        page_size=page_size,
    )


class Catalogs(SyncResource):
    """Catalogues (blocking)."""

    list_tax_rates = sync_list(list_tax_rates)
    list_items = sync_list(list_items)
