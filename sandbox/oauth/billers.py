"""The biller record: its public shape, defaults, creation, and the JSON Patch that updates it
(with the rules a patch must keep)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import jsonpatch
import jsonpointer
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.orm import Session

from sandbox.core import ids, state
from sandbox.core.errors import BAD_REQUEST, READ_ONLY_FIELD, VALIDATION_ERROR, ApiError, not_found
from sandbox.core.timefmt import iso
from sandbox.models import Biller
from sandbox.webhooks import events

# Top-level fields the service owns; a patch that touches them is refused (READ_ONLY_FIELD).
READ_ONLY_FIELDS = frozenset({"id", "status", "channelBillerId", "creationTime", "lastUpdatedTime"})


class BillerDocument(BaseModel):
    """The editable biller fields (docs/service.md §17.4) and their limits."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=255)
    statementName: str | None = Field(None, max_length=22)  # noqa: N815 - the contract's names
    alias: str | None = Field(None, max_length=50)
    registrationNo: str | None = None  # noqa: N815
    currencyCode: str = Field("GBP", pattern=r"^[A-Z]{3}$")  # noqa: N815
    countryCode: str = Field("GB", pattern=r"^[A-Z]{2}$")  # noqa: N815
    timezone: str = "Europe/London"
    website: str | None = None
    categoryCode: str | None = None  # noqa: N815
    industryCode: str | None = None  # noqa: N815
    legalEntityType: str | None = "organization"  # noqa: N815
    vatRegistrationNo: str | None = None  # noqa: N815
    billingEmail: str | None = Field(None, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")  # noqa: N815
    emailDomain: str | None = None  # noqa: N815
    paymentDetails: list[dict[str, Any]] = Field(default_factory=list)  # noqa: N815
    bankAccounts: list[dict[str, Any]] = Field(default_factory=list)  # noqa: N815
    locations: list[dict[str, Any]] = Field(default_factory=list)


def validate_document(document: dict[str, Any]) -> dict[str, Any]:
    """The validated document, or a 422 naming the first offending field."""
    try:
        return BillerDocument.model_validate(document).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise ApiError(422, VALIDATION_ERROR, first["msg"], field=field) from exc


def new_biller(name: str, extra: dict[str, Any], now: datetime) -> Biller:
    return Biller(
        id=ids.new_uuid(),
        status="ACTIVE",
        channel_biller_id="ch_" + ids.random_string("0123456789abcdef", 16),
        document=validate_document({"name": name, **extra}),
        created_at=now,
        updated_at=now,
    )


def public(biller: Biller) -> dict[str, Any]:
    return {
        "id": biller.id,
        **biller.document,
        "status": biller.status,
        "channelBillerId": biller.channel_biller_id,
        "creationTime": iso(biller.created_at),
        "lastUpdatedTime": iso(biller.updated_at),
    }


def get_biller(session: Session, biller_id: str | None) -> Biller:
    """The biller, or 404 (a token whose biller is gone, an unknown id on the admin API)."""
    biller = session.get(Biller, biller_id) if biller_id and "\x00" not in biller_id else None
    if biller is None:
        raise not_found("biller")
    return biller


def create_biller(session: Session, name: str, extra: dict[str, Any]) -> Biller:
    """A new biller (admin API), announced by ``BILLER_CREATED``."""
    biller = new_biller(name, extra, state.now(session))
    session.add(biller)
    session.flush()
    events.emit(session, biller_id=biller.id, kind="biller", type="BILLER_CREATED", ids={})
    return biller


def _refuse_read_only(operations: list[dict[str, Any]]) -> None:
    for op in operations:
        for key in ("path", "from"):
            pointer = op.get(key)
            if key == "path" and pointer in ("", "/"):
                raise ApiError(400, BAD_REQUEST, "patch the biller's fields, not the whole record")
            if isinstance(pointer, str) and op.get("op") != "test":
                top = pointer.lstrip("/").split("/", 1)[0]
                if top in READ_ONLY_FIELDS:
                    raise ApiError(400, READ_ONLY_FIELD, f"{top} cannot be changed", field=top)


def patch_biller(session: Session, biller: Biller, operations: list[dict[str, Any]]) -> Biller:
    """RFC 6902 operations on the biller; read-only fields refused, limits re-checked."""
    if not operations:
        raise ApiError(400, BAD_REQUEST, "send at least one JSON Patch operation")
    _refuse_read_only(operations)
    try:
        patched = jsonpatch.apply_patch(public(biller), operations)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise ApiError(400, BAD_REQUEST, f"the patch cannot be applied: {exc}") from exc
    for field in READ_ONLY_FIELDS:
        patched.pop(field, None)
    document = validate_document(patched)
    if document != biller.document:
        events.emit(session, biller_id=biller.id, kind="biller", type="BILLER_UPDATED", ids={})
    biller.document = document
    biller.updated_at = state.now(session)
    return biller
