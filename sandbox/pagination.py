"""The Spring-style list envelope of the contract.

Query: ``page`` (from 0), ``size`` (1..200, default 20), ``sort=property,asc|desc`` (repeatable).
Answer: ``{<key>: [...], "page": info, "pagination": info}`` where info is
``{page, size, totalPages, totalElements, numberOfElements, sort}`` (service-facts §0.3 and §7).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Query
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session

from sandbox.errors import BAD_REQUEST, ApiError

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 20


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


def _order_by(
    request: PageRequest, sortable: Mapping[str, ColumnElement[Any]]
) -> tuple[list[Any], list[str]]:
    clauses: list[Any] = []
    shown: list[str] = []
    for item in request.sort:
        prop, _, direction = item.partition(",")
        column = sortable.get(prop.strip())
        direction = (direction.strip() or "asc").lower()
        if column is None or direction not in ("asc", "desc"):
            allowed = ", ".join(sorted(sortable))
            raise ApiError(
                400, BAD_REQUEST, f"sort {item!r}: use property,asc|desc with one of {allowed}"
            )
        clauses.append(column.desc() if direction == "desc" else column.asc())
        shown.append(f"{prop.strip()},{direction.upper()}")
    return clauses, shown


def paginate(
    session: Session,
    query: Select[Any],
    request: PageRequest,
    *,
    key: str,
    sortable: Mapping[str, ColumnElement[Any]],
    tiebreak: ColumnElement[Any],
    render: Callable[[Any], dict[str, Any]],
) -> dict[str, Any]:
    """One page of ``query``, ordered by the requested sort then ``tiebreak`` (stable pages)."""
    clauses, shown = _order_by(request, sortable)
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
