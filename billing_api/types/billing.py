"""Models of invoices, payment requests, payments, payouts and bulk imports.

Money: invoice aggregates arrive as JSON strings, everything else as JSON numbers; both are read
into ``Decimal`` (:data:`~billing_api.types._base.Money`).
"""

from __future__ import annotations

from datetime import date

from billing_api.types._base import ApiModel, Money, Timestamp
from billing_api.types.customers import Customer, EntityRef, ExternalData
from billing_api.types.enums import (
    AssociationType,
    BulkImportItemStatus,
    BulkImportJobStatus,
    CollectionMethod,
    CollectionSource,
    DistributionCollectionMethod,
    InvoiceStatus,
    ItemsTaxType,
    PaymentMethod,
    PaymentRequestStatus,
    PaymentStatus,
    PayoutStatus,
)

__all__ = [
    "BulkImportCount",
    "BulkImportItem",
    "BulkImportJob",
    "CollectionMethodState",
    "CollectionState",
    "CreditNote",
    "CustomField",
    "Distribution",
    "DistributionUpdateResponse",
    "ErrorItem",
    "Instalment",
    "InstalmentCadence",
    "InstalmentPlanDetails",
    "InstalmentPreview",
    "Invoice",
    "InvoiceItem",
    "InvoicePaymentRequest",
    "Payment",
    "PaymentImportResponse",
    "PaymentLink",
    "PaymentRequest",
    "Payout",
    "PayoutItem",
]


class ErrorItem(ApiModel):
    """One entry of an error list (``errors[]``), e.g. on a bulk-import row."""

    type: str
    detail: str | None = None
    field: str | None = None


class PaymentLink(ApiModel):
    """The hosted payment page of a payment request."""

    url: str


class CollectionMethodState(ApiModel):
    """Whether one collection method is paused, and why."""

    method: CollectionMethod
    paused: bool
    source: CollectionSource | None = None
    override: str | None = None


class CollectionState(ApiModel):
    """The effective pause state of every collection method."""

    methods: list[CollectionMethodState] = []

    def is_paused(self, method: CollectionMethod | str) -> bool:
        """True when ``method`` is listed as paused."""
        return any(state.method == method and state.paused for state in self.methods)


class InstalmentCadence(ApiModel):
    """How instalments are spread."""

    type: str
    time_unit: str | None = None
    frequency: int | None = None
    day_of_month: int | None = None
    dates: list[date] = []
    start_date: date | None = None
    end_date: date | None = None
    count: int | None = None


class InstalmentPlanDetails(ApiModel):
    """An invoice's instalment plan."""

    cadence: InstalmentCadence | None = None


class Instalment(ApiModel):
    """One instalment of a preview."""

    sequence: int
    due_date: date
    amount: Money


class InstalmentPreview(ApiModel):
    """The instalments an invoice would be split into."""

    invoice_id: str
    amount: Money
    currency_code: str
    instalments: list[Instalment]


class InvoiceItem(ApiModel):
    """A line of an invoice, with the tax and total the service computed."""

    description: str
    quantity: Money
    unit_amount: Money
    tax_amount: Money
    total_amount: Money
    id: str | None = None
    tax_rate: Money | None = None
    tax_rate_id: str | None = None
    product_id: str | None = None
    account_code_id: str | None = None
    external_data: list[ExternalData] = []


class CreditNote(ApiModel):
    """A credit note against an invoice."""

    id: str | None = None
    credit_note_no: str | None = None
    amount: Money | None = None
    issue_date: date | None = None


class InvoicePaymentRequest(ApiModel):
    """A payment request as embedded in its invoice."""

    id: str | None = None
    payment_request_no: str | None = None
    description: str | None = None
    amount: Money | None = None
    pay_by_date: date | None = None
    status: PaymentRequestStatus | None = None
    status_reason_code: str | None = None
    payment_link: PaymentLink | None = None
    collection: CollectionState | None = None
    creation_time: Timestamp | None = None
    last_updated_time: Timestamp | None = None


class Invoice(ApiModel):
    """An invoice."""

    id: str
    invoice_no: str
    status: InvoiceStatus
    total_amount: Money
    tax_amount: Money
    due_amount: Money
    creation_time: Timestamp
    last_updated_time: Timestamp
    description: str | None = None
    currency_code: str | None = None
    credit_notes_amount: Money | None = None
    paid_amount: Money | None = None
    issue_date: date | None = None
    due_date: date | None = None
    status_reason_code: str | None = None
    source: str | None = None
    items_tax_type: ItemsTaxType | None = None
    customer: Customer | None = None
    items: list[InvoiceItem] = []
    payment_requests: list[InvoicePaymentRequest] = []
    credit_notes: list[CreditNote] = []
    external_data: list[ExternalData] = []
    credit_control_status: str | None = None
    instalment_plan_details: InstalmentPlanDetails | None = None
    collection: CollectionState | None = None
    void_reason: str | None = None


class Distribution(ApiModel):
    """How and whether a payment request is sent."""

    collection_method: DistributionCollectionMethod | None = None
    custom_message: str | None = None
    template_id: str | None = None
    approved_for_sending: bool | None = None


class CustomField(ApiModel):
    """A named custom value on a payment request."""

    name: str | None = None
    value: str | None = None


class PaymentRequest(ApiModel):
    """A payment request (standalone, or raised for an invoice)."""

    id: str
    payment_request_no: str
    status: PaymentRequestStatus
    total_amount: Money
    currency_code: str
    creation_time: Timestamp
    external_id: str | None = None
    reference: str | None = None
    description: str | None = None
    customer: EntityRef | None = None
    invoice_ids: list[str] = []
    tax_amount: Money | None = None
    paid_amount: Money | None = None
    due_amount: Money | None = None
    tax_rate: Money | None = None
    pay_by_date: date | None = None
    status_reason_code: str | None = None
    source: str | None = None
    credit_control_status: str | None = None
    association_type: AssociationType | None = None
    workflow_type: str | None = None
    distribution: Distribution | None = None
    payment_link: PaymentLink | None = None
    collection: CollectionState | None = None
    cancel_collection_on_failure: bool | None = None
    direct_debit_initiation_date: date | None = None
    custom_fields: list[CustomField] = []
    last_updated_time: Timestamp | None = None
    distribution_time: Timestamp | None = None
    last_notification_sent_time: Timestamp | None = None
    paid_time: Timestamp | None = None


class DistributionUpdateResponse(ApiModel):
    """The payment requests whose distribution was updated."""

    payment_requests: list[PaymentRequest]


class Payment(ApiModel):
    """A payment."""

    id: str
    amount: Money
    status: PaymentStatus
    payment_method: PaymentMethod
    creation_time: Timestamp
    payment_request_id: str | None = None
    invoice_id: str | None = None
    currency_code: str | None = None
    reference: str | None = None
    failure_reason: str | None = None
    channel_payment_id: str | None = None
    channel_payment_url: str | None = None
    channel_reference_id: str | None = None
    external_data: list[ExternalData] = []
    payment_time: Timestamp | None = None
    last_updated_time: Timestamp | None = None


class PaymentImportResponse(ApiModel):
    """What ``payments:import`` recorded."""

    payments: list[Payment]


class PayoutItem(ApiModel):
    """A payment paid out, or a deduction (a late failure), in a payout."""

    type: str
    amount: Money
    payment_id: str | None = None
    payment_request_id: str | None = None
    invoice_id: str | None = None
    description: str | None = None


class Payout(ApiModel):
    """A payout to the biller's bank (only carried by ``payout`` webhook events)."""

    id: str
    reference: str
    arrival_date: date
    amount: Money
    currency_code: str
    status: PayoutStatus
    items: list[PayoutItem] = []
    creation_time: Timestamp | None = None
    last_updated_time: Timestamp | None = None


class BulkImportCount(ApiModel):
    """How many rows of a job are in one status."""

    status: BulkImportItemStatus
    count: int


class BulkImportJob(ApiModel):
    """A bulk import of payment requests (processed in the background)."""

    job_id: str
    type: str
    status: BulkImportJobStatus
    creation_time: Timestamp
    counts_by_item_status: list[BulkImportCount] = []
    last_updated_time: Timestamp | None = None
    completion_time: Timestamp | None = None
    collection_method: DistributionCollectionMethod | None = None
    delete_missing_payment_requests: bool | None = None
    file_name: str | None = None
    total_rows: int | None = None
    errors: list[ErrorItem] = []

    @property
    def is_finished(self) -> bool:
        """True once the job will not change any more."""
        return self.status in (
            BulkImportJobStatus.COMPLETED,
            BulkImportJobStatus.COMPLETED_WITH_ERRORS,
            BulkImportJobStatus.FAILED,
        )


class BulkImportItem(ApiModel):
    """The outcome of one row of a bulk import."""

    id: str
    job_id: str
    status: BulkImportItemStatus
    row_number: int | None = None
    external_id: str | None = None
    payment_request_id: str | None = None
    errors: list[ErrorItem] = []
