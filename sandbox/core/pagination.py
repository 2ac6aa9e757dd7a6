"""The Spring-style list envelope of the contract.

Query: ``page`` (from 0), ``size`` (1..200, default 20), ``sort=property,asc|desc`` (repeatable).
Answer: ``{<key>: [...], "page": info, "pagination": info}`` where info is
``{page, size, totalPages, totalElements, numberOfElements, sort}`` (docs/service.md §5).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from fastapi import Depends, Query
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import QueryableAttribute, Session

from sandbox.core.errors import BAD_REQUEST, ApiError

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 20


@dataclass(frozen=True)
class Listing:
    """What a list operation pages over, built by the domain package that owns the table.

    ``sortable`` maps the contract's sort properties to columns; ``tiebreak`` orders rows the sort
    leaves equal (so pages are stable); ``default_sort`` applies when the client asks for none.
    """

    query: Select[Any]
    sortable: Mapping[str, ColumnElement[Any]]
    tiebreak: ColumnElement[Any]
    default_sort: Sequence[str] = ()


def sortable(**columns: QueryableAttribute[Any]) -> dict[str, ColumnElement[Any]]:
    """A :attr:`Listing.sortable` mapping: contract property names to ORM attributes."""
    return {name: column.expression for name, column in columns.items()}


def column(attribute: QueryableAttribute[Any]) -> ColumnElement[Any]:
    """An ORM attribute as the column expression a :attr:`Listing.tiebreak` takes."""
    return attribute.expression


@dataclass(frozen=True)
class PageRequest:
    page: int
    size: int
    sort: Sequence[str] = field(default_factory=tuple)


def page_request(
    page: Annotated[int, Query(ge=0)] = 0,
    size: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    sort: Annotated[list[str] | None, Query()] = None,
) -> PageRequest:
    return PageRequest(page=page, size=size, sort=tuple(sort or ()))


PageDep = Annotated[PageRequest, Depends(page_request)]


# ``property`` or ``property,asc|desc`` (direction in any case), exactly as the contract's
# per-list ``Sort*`` parameters write it: no spaces, no empty direction.
_SORT = re.compile(r"^(?P<prop>[A-Za-z][A-Za-z0-9_.]*)(,(?P<direction>(?i:asc|desc)))?$")


def _order_by(
    request: PageRequest, sortable: Mapping[str, ColumnElement[Any]]
) -> tuple[list[Any], list[str]]:
    clauses: list[Any] = []
    shown: list[str] = []
    for item in request.sort:
        match = _SORT.match(item)
        column = sortable.get(match["prop"]) if match else None
        if match is None or column is None:
            allowed = ", ".join(sorted(sortable))
            raise ApiError(
                400,
                BAD_REQUEST,
                f"sort {item!r}: use property,asc|desc with one of {allowed}",
                field="sort",
            )
        direction = (match["direction"] or "asc").lower()
        clauses.append(column.desc() if direction == "desc" else column.asc())
        shown.append(f"{match['prop']},{direction.upper()}")
    return clauses, shown


def paginate(
    session: Session,
    listing: Listing,
    request: PageRequest,
    *,
    key: str,
    render: Callable[[Any], dict[str, Any]],
) -> dict[str, Any]:
    """One page of the listing, ordered by the requested (or default) sort then its tiebreak."""
    if not request.sort:
        request = replace(request, sort=tuple(listing.default_sort))
    clauses, shown = _order_by(request, listing.sortable)
    query, tiebreak = listing.query, listing.tiebreak
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    offset = request.page * request.size
    # A page past the end is empty; an offset past what a database integer holds must not reach
    # the database (it answers an overflow error, not an empty page).
    rows = (
        session.scalars(query.order_by(*clauses, tiebreak).offset(offset).limit(request.size)).all()
        if offset < total
        else []
    )
    info = {
        "page": request.page,
        "size": request.size,
        "totalPages": math.ceil(total / request.size) if total else 0,
        "totalElements": total,
        "numberOfElements": len(rows),
        "sort": shown,
    }
    return {key: [render(row) for row in rows], "page": info, "pagination": dict(info)}
