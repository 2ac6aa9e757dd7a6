"""``/biller``: the biller behind the access token, read and updated by JSON Patch."""

from __future__ import annotations

from typing import Annotated, Any

import jsonpatch
import jsonpointer
from fastapi import APIRouter, Body

from sandbox import billers, events, state
from sandbox.deps import BillerDep, SessionDep
from sandbox.errors import BAD_REQUEST, READ_ONLY_FIELD, ApiError, not_found
from sandbox.models import Biller

router = APIRouter(prefix="/biller", tags=["biller"])


def _load(session: SessionDep, biller_id: str | None) -> Biller:
    biller = session.get(Biller, biller_id) if biller_id else None
    if biller is None:
        raise not_found("biller")
    return biller


@router.get("", operation_id="biller.retrieve", summary="Retrieve the biller")
def retrieve_biller(principal: BillerDep, session: SessionDep) -> dict[str, Any]:
    """The biller associated with the token; 404 when none exists [C]."""
    return billers.public(_load(session, principal.biller_id))


def _refuse_read_only(operations: list[dict[str, Any]]) -> None:
    for op in operations:
        for key in ("path", "from"):
            pointer = op.get(key)
            if key == "path" and pointer in ("", "/"):
                raise ApiError(400, BAD_REQUEST, "patch the biller's fields, not the whole record")
            if isinstance(pointer, str) and op.get("op") != "test":
                top = pointer.lstrip("/").split("/", 1)[0]
                if top in billers.READ_ONLY_FIELDS:
                    raise ApiError(400, READ_ONLY_FIELD, f"{top} cannot be changed", field=top)


@router.patch("", operation_id="biller.update", summary="Update the biller (JSON Patch)")
def update_biller(
    principal: BillerDep,
    session: SessionDep,
    operations: Annotated[list[dict[str, Any]], Body()],
) -> dict[str, Any]:
    """RFC 6902 operations on the biller; read-only fields refused, limits re-checked."""
    _refuse_read_only(operations)
    biller = _load(session, principal.biller_id)
    try:
        patched = jsonpatch.apply_patch(billers.public(biller), operations)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise ApiError(400, BAD_REQUEST, f"the patch cannot be applied: {exc}") from exc
    for field in billers.READ_ONLY_FIELDS:
        patched.pop(field, None)
    document = billers.validate_document(patched)
    if document != biller.document:
        events.emit(session, biller_id=biller.id, kind="biller", type="BILLER_UPDATED", ids={})
    biller.document = document
    biller.updated_at = state.now(session)
    return billers.public(biller)
