"""Workflows (``PUT /workflows``) and the templates every biller starts with.

Templates are fixed (the same ids for every biller, listed in :data:`TEMPLATES`): a workflow's
``templateId`` copies a template's events, and a customer's workflow settings may name a template
or one of the biller's own workflows of the matching type.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy.orm import Session

from sandbox.core import ids
from sandbox.core.errors import not_found
from sandbox.core.timefmt import iso
from sandbox.core.validation import JsonInt, invalid, parse_body
from sandbox.models.billing import Customer, Invoice
from sandbox.models.customers import Workflow

WORKFLOW_TYPES = (
    "ONE_TIME_PAYMENT",
    "DD_MANDATE_AUTHORISATION",
    "DD_PAYMENT",
    "CUSTOMER_STATEMENT",
)
WorkflowType = Literal[
    "ONE_TIME_PAYMENT", "DD_MANDATE_AUTHORISATION", "DD_PAYMENT", "CUSTOMER_STATEMENT"
]
Action = Literal["SEND_EMAIL", "SEND_SMS", "RETRY_DIRECT_DEBIT", "SWITCH_TO_ON_DEMAND", "STOP"]
Trigger = Literal["BEFORE_DUE", "ON_DUE", "AFTER_DUE", "AFTER_FAILURE", "AFTER_SENT"]


def _event(action: str, trigger: str, offset: int, **extra: Any) -> dict[str, Any]:
    return {
        "action": action,
        "trigger": trigger,
        "offsetDays": offset,
        "repeatEveryDays": extra.get("repeat"),
        "stopAfterDays": extra.get("stop"),
        "templateId": None,
    }


# After the real console's defaults (docs/service.md §17.3): reminders around the due date,
# mandate chasing every 7 days for 180 days, three direct-debit retries 7 days apart then the
# on-demand fallback, a monthly statement.
TEMPLATES: dict[str, dict[str, Any]] = {
    "tmpl-one-time-payment": {
        "name": "Standard reminders",
        "type": "ONE_TIME_PAYMENT",
        "events": [
            _event("SEND_EMAIL", "BEFORE_DUE", 3),
            _event("SEND_EMAIL", "ON_DUE", 0),
            _event("SEND_EMAIL", "AFTER_DUE", 7, repeat=7, stop=60),
        ],
    },
    "tmpl-dd-mandate-authorisation": {
        "name": "Mandate chasing",
        "type": "DD_MANDATE_AUTHORISATION",
        "events": [_event("SEND_EMAIL", "AFTER_SENT", 7, repeat=7, stop=180)],
    },
    "tmpl-dd-payment": {
        "name": "Direct debit retries",
        "type": "DD_PAYMENT",
        "events": [
            _event("RETRY_DIRECT_DEBIT", "AFTER_FAILURE", 7),
            _event("RETRY_DIRECT_DEBIT", "AFTER_FAILURE", 14),
            _event("RETRY_DIRECT_DEBIT", "AFTER_FAILURE", 21),
            _event("SWITCH_TO_ON_DEMAND", "AFTER_FAILURE", 22),
        ],
    },
    "tmpl-customer-statement": {
        "name": "Monthly statement",
        "type": "CUSTOMER_STATEMENT",
        "events": [_event("SEND_EMAIL", "AFTER_SENT", 30, repeat=30)],
    },
}


class EventIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = Field(None, min_length=1, max_length=36)
    action: Action
    trigger: Trigger
    offsetDays: JsonInt = Field(0, ge=0, le=365)
    repeatEveryDays: JsonInt | None = Field(None, ge=1, le=365)
    stopAfterDays: JsonInt | None = Field(None, ge=1, le=3650)
    templateId: str | None = Field(None, max_length=64)


class RefIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1, max_length=36)


class WorkflowIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = Field(None, min_length=1, max_length=36)
    templateId: str | None = Field(None, max_length=64)
    name: str
    type: WorkflowType
    customerDetails: RefIn | None = None
    invoiceDetails: RefIn | None = None
    events: list[EventIn] | None = None

    @field_validator("events", mode="before")
    @classmethod
    def _events_not_null(cls, value: Any) -> Any:
        # Absent keeps the steps (None by default); the contract's `events` is an array, not null.
        if value is None:
            raise ValueError("must be an array (leave it out to keep the steps)")
        return value

    @field_validator("name")
    @classmethod
    def _name_rule(cls, value: str) -> str:
        # At most 50 alphanumeric characters [C]; spaces allowed [I], but not a blank name.
        if not value.strip() or len(value) > 50:
            raise ValueError("name must be 1 to 50 characters")
        if not all(c == " " or (c.isascii() and c.isalnum()) for c in value):
            raise ValueError("name may contain only letters, digits and spaces")
        return value


def find(session: Session, biller_id: str, workflow_id: str) -> Workflow | None:
    workflow = session.get(Workflow, workflow_id)
    return workflow if workflow is not None and workflow.biller_id == biller_id else None


def workflow_type(session: Session, biller_id: str, workflow_id: str) -> str | None:
    """The type of a template or of one of the biller's workflows; None when there is none."""
    if workflow_id in TEMPLATES:
        return str(TEMPLATES[workflow_id]["type"])
    workflow = find(session, biller_id, workflow_id)
    return workflow.type if workflow is not None else None


def _template_events(session: Session, biller_id: str, data: WorkflowIn) -> list[dict[str, Any]]:
    assert data.templateId is not None
    kind = workflow_type(session, biller_id, data.templateId)
    if kind is None:
        raise invalid("templateId", "no template or workflow has this id")
    if kind != data.type:
        raise invalid("templateId", f"the template is a {kind} workflow, not {data.type}")
    source = TEMPLATES.get(data.templateId)
    own = find(session, biller_id, data.templateId)
    events: list[Any] = source["events"] if source else (own.events if own else [])
    return [dict(event) for event in events]


def _check_scope(session: Session, biller_id: str, data: WorkflowIn) -> None:
    if data.customerDetails is not None:
        customer = session.get(Customer, data.customerDetails.id)
        if customer is None or customer.biller_id != biller_id:
            raise invalid("customerDetails.id", "no customer has this id")
    if data.invoiceDetails is not None:
        invoice = session.get(Invoice, data.invoiceDetails.id)
        if invoice is None or invoice.biller_id != biller_id:
            raise invalid("invoiceDetails.id", "no invoice has this id")


def upsert(session: Session, biller_id: str, body: Any, now: datetime) -> Workflow:
    """Create a workflow, or replace the one ``id`` names (404 when it names none)."""
    data = parse_body(WorkflowIn, body)
    workflow = None
    if data.id is not None:
        workflow = find(session, biller_id, data.id)
        if workflow is None:
            raise not_found("workflow")
    _check_scope(session, biller_id, data)
    # Events sent replace the workflow's whole list [I]; without them a template's are copied.
    copied = _template_events(session, biller_id, data) if data.templateId is not None else []
    if data.events is not None:
        events = [event.model_dump(mode="json") for event in data.events]
    else:
        events = copied
    for event in events:
        event["id"] = event.get("id") or ids.new_uuid()
    if workflow is None:
        workflow = Workflow(id=ids.new_uuid(), biller_id=biller_id, created_at=now)
        session.add(workflow)
    workflow.name = data.name
    workflow.type = data.type
    workflow.template_id = data.templateId
    workflow.customer_id = data.customerDetails.id if data.customerDetails else None
    workflow.invoice_id = data.invoiceDetails.id if data.invoiceDetails else None
    workflow.events = events
    workflow.updated_at = now
    return workflow


def public(workflow: Workflow) -> dict[str, Any]:
    return {
        "id": workflow.id,
        "templateId": workflow.template_id,
        "name": workflow.name,
        "type": workflow.type,
        "customerDetails": {"id": workflow.customer_id} if workflow.customer_id else None,
        "invoiceDetails": {"id": workflow.invoice_id} if workflow.invoice_id else None,
        "events": list(workflow.events),
        "isTemplate": False,
        "creationTime": iso(workflow.created_at),
        "lastUpdatedTime": iso(workflow.updated_at),
    }
