"""The biller record: its public shape, defaults and the rules a JSON Patch must keep."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox import ids
from sandbox.errors import VALIDATION_ERROR, ApiError
from sandbox.models import Biller
from sandbox.timefmt import iso

# Top-level fields the service owns; a patch that touches them is refused (READ_ONLY_FIELD).
READ_ONLY_FIELDS = frozenset({"id", "status", "channelBillerId", "creationTime", "lastUpdatedTime"})


class BillerDocument(BaseModel):
    """The editable biller fields (service-facts §3.12) and their limits."""

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
