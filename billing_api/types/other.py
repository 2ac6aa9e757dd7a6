"""Models of schedules, catalogues, workflows, webhook subscriptions and OAuth answers.

Secrets in answers (access and refresh tokens, authorization codes, the webhook signing secret)
are ``SecretStr``: they never show in a repr, a log line or an exception message.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, SecretStr

from billing_api.types._base import ApiModel, Money, Timestamp
from billing_api.types.billing import Distribution
from billing_api.types.customers import CustomerRef, EntityRef
from billing_api.types.enums import (
    ItemsTaxType,
    RecurringInvoiceStatus,
    RecurringPaymentRequestStatus,
    WebhookEventKind,
    WorkflowType,
)

__all__ = [
    "AppAuthorization",
    "AuthorizeResponse",
    "CatalogItem",
    "InvoiceItemInput",
    "PaymentTerm",
    "RecurringInvoice",
    "RecurringInvoiceDetails",
    "RecurringPaymentRequest",
    "RecurringPaymentRequestDetails",
    "ScheduleActivation",
    "ScheduleCadence",
    "TaxRate",
    "OAuthTokenResponse",
    "Webhook",
    "WebhookAuthResponse",
    "WebhookSecret",
    "Workflow",
    "WorkflowEvent",
]


def _id_text(value: object) -> object:
    # Schedule ids are strings or integers in the contract; callers always get text.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


ScheduleId = Annotated[str, BeforeValidator(_id_text)]


class ScheduleCadence(ApiModel):
    """How often a schedule generates."""

    time_unit: str
    frequency: int
    start_date: date
    end_date: date | None = None


class PaymentTerm(ApiModel):
    """Days from generation until payment is due."""

    time_unit: str
    value: int


class InvoiceItemInput(ApiModel):
    """A line as sent to the service (no computed totals)."""

    description: str
    quantity: Money
    unit_amount: Money
    tax_rate: Money | None = None
    tax_rate_id: str | None = None
    product_id: str | None = None
    account_code_id: str | None = None


class ScheduleActivation(ApiModel):
    """How generated invoices are activated."""

    collection_method: str
    custom_message: str | None = None
    template_id: str | None = None


class RecurringInvoiceDetails(ApiModel):
    """The invoice a schedule generates."""

    customer: CustomerRef
    items: list[InvoiceItemInput]
    description: str | None = None
    currency_code: str | None = None
    items_tax_type: ItemsTaxType | None = None
    payment_term: PaymentTerm | None = None
    auto_send: bool | None = None
    activation: ScheduleActivation | None = None


class RecurringInvoice(ApiModel):
    """A recurring invoice schedule (``SCH-n``)."""

    id: ScheduleId
    recurring_invoice_no: str
    status: RecurringInvoiceStatus
    cadence: ScheduleCadence
    invoice_details: RecurringInvoiceDetails
    creation_time: Timestamp
    last_updated_time: Timestamp
    next_date: date | None = None
    total_amount: Money | None = None
    number_of_occurrences: int | None = None
    generated_count: int | None = None


class RecurringPaymentRequestDetails(ApiModel):
    """The payment request a schedule generates."""

    customer: CustomerRef
    amount: Money
    currency_code: str
    description: str
    payment_term: PaymentTerm | None = None
    distribution: Distribution | None = None
    tax_rate: Money | None = None
    reference: str | None = None


class RecurringPaymentRequest(ApiModel):
    """A recurring payment-request schedule (``SCH-n``)."""

    id: ScheduleId
    recurring_payment_request_no: str
    status: RecurringPaymentRequestStatus
    cadence: ScheduleCadence
    payment_request_details: RecurringPaymentRequestDetails
    creation_time: Timestamp
    last_updated_time: Timestamp
    next_date: date | None = None
    number_of_occurrences: int | None = None
    generated_count: int | None = None


class TaxRate(ApiModel):
    """A tax rate of the biller's catalogue (a percentage)."""

    id: str
    name: str
    rate: Money
    is_default: bool


class CatalogItem(ApiModel):
    """A product or service of the biller's catalogue."""

    id: str
    code: str
    name: str
    description: str | None = None
    unit_amount: Money | None = None
    tax_rate_id: str | None = None
    account_code_id: str | None = None


class WorkflowEvent(ApiModel):
    """One step of a workflow."""

    action: str
    trigger: str
    id: str | None = None
    offset_days: int | None = None
    repeat_every_days: int | None = None
    stop_after_days: int | None = None
    template_id: str | None = None


class Workflow(ApiModel):
    """A workflow configuration (reminders, direct-debit retries)."""

    id: str
    name: str
    type: WorkflowType
    creation_time: Timestamp
    last_updated_time: Timestamp
    template_id: str | None = None
    customer_details: EntityRef | None = None
    invoice_details: EntityRef | None = None
    events: list[WorkflowEvent] = []
    is_template: bool | None = None


class Webhook(ApiModel):
    """A webhook subscription of an app."""

    id: str
    client_id: str
    url: str
    events: list[WebhookEventKind]
    enabled: bool
    creation_time: Timestamp
    last_updated_time: Timestamp
    name: str | None = None
    description: str | None = None


class WebhookSecret(ApiModel):
    """The app's new signing secret (the "digest key")."""

    secret_key: SecretStr


class WebhookAuthResponse(ApiModel):
    """The answer to setting the target credentials."""

    status_code: str


class OAuthTokenResponse(ApiModel):
    """An OAuth token answer (RFC 6749 names, so no camelCase aliases)."""

    model_config = ConfigDict(alias_generator=None)

    access_token: SecretStr
    token_type: str
    expires_in: int
    refresh_token: SecretStr | None = None
    scope: str | None = None


class AuthorizeResponse(ApiModel):
    """An authorization code issued for an app (the code is a credential: kept secret)."""

    code: SecretStr
    expires_in: int
    redirect_uri: SecretStr


class AppAuthorization(ApiModel):
    """Whether the caller's biller authorized an app."""

    client_id: str
    app_name: str
    biller_id: str
    authorized: bool
    scopes: list[str] = []
    redirect_uris: list[str] = []
    authorized_at: Timestamp | None = None
