"""``/biller``: the biller behind the access token, read and updated by JSON Patch."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from sandbox.core.deps import BillerId, SessionDep
from sandbox.oauth import billers

router = APIRouter(prefix="/biller", tags=["biller"])


@router.get("", operation_id="biller.retrieve", summary="Retrieve the biller")
def retrieve_biller(biller_id: BillerId, session: SessionDep) -> dict[str, Any]:
    """The biller associated with the token; 404 when none exists [C]."""
    return billers.public(billers.get_biller(session, biller_id))


@router.patch("", operation_id="biller.update", summary="Update the biller (JSON Patch)")
def update_biller(
    biller_id: BillerId,
    session: SessionDep,
    operations: Annotated[list[dict[str, Any]], Body()],
) -> dict[str, Any]:
    """RFC 6902 operations on the biller; read-only fields refused, limits re-checked."""
    biller = billers.get_biller(session, biller_id)
    return billers.public(billers.patch_biller(session, biller, operations))
