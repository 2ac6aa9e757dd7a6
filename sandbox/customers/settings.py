"""A customer's workflow settings, payment settings (with the customer-level collection pause)
and autopilot guidance.

Both settings objects are stored camelCase on the customer row (``Customer.workflow_settings``,
``Customer.payment_settings``) without ``customerId``; an upsert replaces the whole object and
fields left out go back to their defaults. :func:`sandbox.customers.lookup.paused_methods` reads
the pause.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator
from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.billing.workflows import workflow_type
from sandbox.core import ids
from sandbox.core.errors import BAD_REQUEST, NOT_FOUND, ApiError
from sandbox.core.timefmt import iso
from sandbox.core.validation import JsonInt, ValidationFailed, invalid, parse_body
from sandbox.customers.lookup import current_mandate, get_customer, paused_methods
from sandbox.models.billing import Customer
from sandbox.models.customers import AutopilotSettings
from sandbox.webhooks import events

COLLECTION_METHODS = ("AUTO_COLLECT", "ON_DEMAND")
COLLECTION_METHOD_NOT_ELIGIBLE = "COLLECTION_METHOD_NOT_ELIGIBLE"
DEFAULT_DD_RETRY_COUNT = 3
PaymentMethod = Literal[
    "BANK_PAYMENT",
    "CARD",
    "APPLE_PAY",
    "GOOGLE_PAY",
    "DIRECT_DEBIT",
    "IMPORTED",
    "MANUAL_BANK_TRANSFER",
    "BANK_TRANSFER",
    "AMEX",
]

# Which workflow type each workflow-settings field must name.
WORKFLOW_FIELDS = {
    "onDemandWorkflowId": "ONE_TIME_PAYMENT",
    "autoCollectWorkflowId": "DD_PAYMENT",
    "mandateWorkflowId": "DD_MANDATE_AUTHORISATION",
    "statementWorkflowId": "CUSTOMER_STATEMENT",
}


def _customer_id(body: Any) -> str:
    value = body.get("customerId") if isinstance(body, dict) else None
    if not isinstance(value, str) or not value:
        raise invalid("customerId", "customerId is required")
    return value


# --- workflow settings -------------------------------------------------------------------------


class WorkflowSettingsIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    customerId: str = Field(min_length=1)
    onDemandWorkflowId: str | None = None
    autoCollectWorkflowId: str | None = None
    mandateWorkflowId: str | None = None
    statementWorkflowId: str | None = None
    remindersEnabled: StrictBool = True


def upsert_workflow_settings(
    session: Session, biller_id: str, body: Any, now: datetime
) -> Customer:
    """Replace the settings of the customer ``customerId`` names (404 when not the biller's)."""
    customer = get_customer(session, biller_id, _customer_id(body))
    data = parse_body(WorkflowSettingsIn, body)
    problems: list[tuple[str | None, str]] = []
    for field, kind in WORKFLOW_FIELDS.items():
        workflow_id = getattr(data, field)
        if workflow_id is None:
            continue
        found = workflow_type(session, biller_id, workflow_id)
        if found is None:
            problems.append((field, "no workflow or template has this id"))
        elif found != kind:
            problems.append((field, f"must name a {kind} workflow, not a {found} one"))
    if problems:
        raise ValidationFailed(problems)
    stored = data.model_dump(mode="json", exclude={"customerId"})
    customer.workflow_settings = {**stored, "lastUpdatedTime": iso(now)}
    return customer


def public_workflow_settings(customer: Customer) -> dict[str, Any]:
    stored = customer.workflow_settings or {}
    return {
        "customerId": customer.id,
        **{field: stored.get(field) for field in WORKFLOW_FIELDS},
        "remindersEnabled": stored.get("remindersEnabled", True),
        "lastUpdatedTime": stored.get("lastUpdatedTime"),
    }


# --- payment settings --------------------------------------------------------------------------


class PaymentSettingsIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    customerId: str = Field(min_length=1)
    defaultCollectionMethod: Literal["AUTO_COLLECT", "ON_DEMAND", "NONE"] | None = None
    allowedPaymentMethods: list[PaymentMethod] = Field(default_factory=list)
    ddRetryCount: JsonInt | None = Field(None, ge=0, le=3)
    pausedCollectionMethods: list[str] = Field(default_factory=list)
    collectionPausedUntil: date | None = None

    @field_validator("pausedCollectionMethods")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a collection method is listed twice")
        return value


def _check_methods(body: Any) -> None:
    """An unrecognised collection method is 400 ``BAD_REQUEST``, as on the pause endpoints."""
    methods = body.get("pausedCollectionMethods") if isinstance(body, dict) else None
    if not isinstance(methods, list):
        return
    for index, method in enumerate(methods):
        if method not in COLLECTION_METHODS:
            raise ApiError(
                400,
                BAD_REQUEST,
                f"unrecognised collection method {method!r}; use AUTO_COLLECT or ON_DEMAND",
                field=f"pausedCollectionMethods[{index}]",
            )


def upsert_payment_settings(session: Session, biller_id: str, body: Any, now: datetime) -> Customer:
    """Replace the payment settings (and so the customer-level pause) of ``customerId``."""
    customer = get_customer(session, biller_id, _customer_id(body))
    _check_methods(body)
    data = parse_body(PaymentSettingsIn, body)
    today = now.date()
    if data.collectionPausedUntil is not None and data.collectionPausedUntil < today:
        raise invalid("collectionPausedUntil", "must be today or later")
    paused = list(data.pausedCollectionMethods)
    before = paused_methods(customer, today)
    newly = set(paused) - before
    if "AUTO_COLLECT" in newly:
        mandate = current_mandate(session, customer.id)
        if mandate is None or mandate.status == "CANCELLED":
            raise ApiError(
                400,
                COLLECTION_METHOD_NOT_ELIGIBLE,
                "AUTO_COLLECT cannot be paused for a customer without a direct debit mandate",
                field="pausedCollectionMethods",
            )
    customer.payment_settings = {
        "defaultCollectionMethod": data.defaultCollectionMethod,
        "allowedPaymentMethods": list(data.allowedPaymentMethods),
        "ddRetryCount": data.ddRetryCount,
        "pausedCollectionMethods": paused,
        # The end date means nothing while nothing is paused.
        "collectionPausedUntil": data.collectionPausedUntil.isoformat()
        if paused and data.collectionPausedUntil
        else None,
        "lastUpdatedTime": iso(now),
    }
    # The customer-level pause is an event of its own (the contract's customer catalogue).
    ids_ = {"customerId": customer.id}
    if newly:
        events.emit(
            session,
            biller_id=biller_id,
            kind="customer",
            type="CUSTOMER_COLLECTION_PAUSED",
            ids=ids_,
        )
    if before - set(paused):
        events.emit(
            session,
            biller_id=biller_id,
            kind="customer",
            type="CUSTOMER_COLLECTION_RESUMED",
            ids=ids_,
        )
    return customer


def public_payment_settings(customer: Customer, today: date) -> dict[str, Any]:
    """The settings as they stand today: a pause whose last day has passed shows as cleared."""
    stored = customer.payment_settings or {}
    paused = sorted(paused_methods(customer, today), key=COLLECTION_METHODS.index)
    return {
        "customerId": customer.id,
        "defaultCollectionMethod": stored.get("defaultCollectionMethod"),
        "allowedPaymentMethods": list(stored.get("allowedPaymentMethods") or []),
        "ddRetryCount": stored.get("ddRetryCount"),
        "pausedCollectionMethods": paused,
        "collectionPausedUntil": stored.get("collectionPausedUntil") if paused else None,
        "lastUpdatedTime": stored.get("lastUpdatedTime"),
    }


def dd_retry_count(customer: Customer) -> int:
    """Direct-debit retries after a failure for this customer (the default is 3 [C])."""
    value = (customer.payment_settings or {}).get("ddRetryCount")
    return DEFAULT_DD_RETRY_COUNT if value is None else int(value)


# --- autopilot ---------------------------------------------------------------------------------


class AutopilotIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    guidance: str = Field(min_length=1, max_length=5000)

    @field_validator("guidance")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("guidance must not be blank")
        return value


def autopilot_of(session: Session, customer: Customer) -> AutopilotSettings | None:
    return session.scalars(
        select(AutopilotSettings).where(AutopilotSettings.customer_id == customer.id)
    ).first()


def upsert_autopilot(
    session: Session, customer: Customer, body: Any, now: datetime
) -> AutopilotSettings:
    data = parse_body(AutopilotIn, body)
    settings = autopilot_of(session, customer)
    if settings is None:
        settings = AutopilotSettings(
            id=ids.new_uuid(),
            biller_id=customer.biller_id,
            customer_id=customer.id,
            created_at=now,
        )
        session.add(settings)
    if settings.guidance != data.guidance or settings.updated_at is None:
        settings.updated_at = now
    settings.guidance = data.guidance
    return settings


def delete_autopilot(session: Session, customer: Customer) -> None:
    """Forget the customer's autopilot guidance (nothing to forget is fine: 204 either way)."""
    settings = autopilot_of(session, customer)
    if settings is not None:
        session.delete(settings)


def require_autopilot(session: Session, customer: Customer) -> AutopilotSettings:
    settings = autopilot_of(session, customer)
    if settings is None:
        raise ApiError(404, NOT_FOUND, "no autopilot settings for this customer")
    return settings


def public_autopilot(settings: AutopilotSettings) -> dict[str, Any]:
    return {
        "customerId": settings.customer_id,
        "settings": {
            "id": settings.id,
            "guidance": settings.guidance,
            "creationTime": iso(settings.created_at),
            "lastUpdatedTime": iso(settings.updated_at),
        },
    }
