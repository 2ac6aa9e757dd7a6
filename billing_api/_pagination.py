"""Iterators over the contract's list envelopes (contract convention 6).

A list answers ``{<resourceKey>: [...], page: PageInfo, pagination: PageInfo}`` with the zero-based
``page`` and ``size`` query parameters. :class:`SyncPager` walks pages one after another.

Stopping rule (contract): the last page is reached when ``page >= totalPages - 1`` or
``numberOfElements < size``. An answer without PageInfo is taken as the only page, so a server that
ignores ``page`` can never make the iterator loop forever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from billing_api._exceptions import UnexpectedResponse

__all__ = ["Page", "SyncPager", "parse_page"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list: its parsed items and the PageInfo numbers (``None`` when absent)."""

    items: list[T]
    number: int
    size: int | None
    total_pages: int | None
    total_elements: int | None
    number_of_elements: int

    @property
    def is_last(self) -> bool:
        """True when the contract's stopping rule says no page follows this one."""
        if self.total_pages is None or self.size is None:
            return True
        return self.number >= self.total_pages - 1 or self.number_of_elements < self.size


def _int_field(info: dict[str, Any], name: str, where: str) -> int | None:
    value = info.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnexpectedResponse(f"{where}: PageInfo field {name!r} is not an integer: {value!r}")
    return value


def parse_page(
    body: Any, *, items_key: str, parse: Callable[[Any], T], number: int, where: str
) -> Page[T]:
    """Read one list envelope; ``where`` names the operation and page for error messages."""
    if not isinstance(body, dict):
        raise UnexpectedResponse(f"{where}: expected a JSON object, got {type(body).__name__}")
    raw_items = body.get(items_key)
    if not isinstance(raw_items, list):
        keys = ", ".join(sorted(body)) or "none"
        raise UnexpectedResponse(f"{where}: no list under {items_key!r} (keys: {keys})")
    info = body.get("page")
    if not isinstance(info, dict):
        info = body.get("pagination")
    info = info if isinstance(info, dict) else {}
    reported = _int_field(info, "page", where)
    elements = _int_field(info, "numberOfElements", where)
    return Page(
        items=[parse(item) for item in raw_items],
        number=reported if reported is not None else number,
        size=_int_field(info, "size", where),
        total_pages=_int_field(info, "totalPages", where),
        total_elements=_int_field(info, "totalElements", where),
        number_of_elements=elements if elements is not None else len(raw_items),
    )


class SyncPager(Iterator[T]):
    """All items of all pages, fetched lazily one page at a time; ``pages()`` gives the pages."""

    def __init__(self, fetch_page: Callable[[int], Page[T]]) -> None:
        self._fetch_page = fetch_page
        self._items: Iterator[T] | None = None

    def pages(self) -> Iterator[Page[T]]:
        """Every page in order, starting at page 0 (a new walk each call)."""
        number = 0
        while True:
            page = self._fetch_page(number)
            yield page
            if page.is_last or not page.items:
                return
            number = page.number + 1

    def __iter__(self) -> SyncPager[T]:
        return self

    def __next__(self) -> T:
        if self._items is None:
            self._items = (item for page in self.pages() for item in page.items)
        return next(self._items)
