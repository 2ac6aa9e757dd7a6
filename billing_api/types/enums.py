"""The contract's enums. Those marked ``x-extensible-enum`` accept unknown values (see
:class:`~billing_api.types._base.ExtensibleEnum`); the others are closed."""

from __future__ import annotations

from enum import StrEnum

from billing_api.types._base import ExtensibleEnum

__all__ = [
    "ActivationCollectionMethod",
    "AssociationType",
    "BulkImportItemStatus",
    "BulkImportJobStatus",
    "CardOnFileStatus",
    "CollectionMethod",
    "CollectionSource",
    "CustomerFinancialStatus",
    "DistributionCollectionMethod",
    "InvoiceStatus",
    "ItemsTaxType",
    "MandateStatus",
    "PaymentMethod",
    "PaymentRequestStatus",
    "PaymentStatus",
    "PayoutStatus",
    "RecurringInvoiceStatus",
    "RecurringPaymentRequestStatus",
    "WebhookEventKind",
    "WorkflowType",
]


class InvoiceStatus(ExtensibleEnum):
    """Invoice status (docs/service.md §7.1 Invoices); non-exclusive."""

    DRAFT = "DRAFT"
    UNPAID = "UNPAID"
    SCHEDULED = "SCHEDULED"
    SUBMITTED = "SUBMITTED"
    OVERDUE = "OVERDUE"
    PAID = "PAID"
    SETTLED = "SETTLED"
    VOID = "VOID"


class PaymentRequestStatus(ExtensibleEnum):
    """Payment-request status. The 2025-11 rename (REQUESTED -> UNPAID, CANCELLED -> VOID) is
    applied on read, so stale payloads and pages still compare equal to the current names."""

    DRAFT = "DRAFT"
    UNPAID = "UNPAID"
    SCHEDULED = "SCHEDULED"
    SUBMITTED = "SUBMITTED"
    PAID = "PAID"
    SETTLED = "SETTLED"
    VOID = "VOID"

    @classmethod
    def _renamed(cls) -> dict[str, str]:
        return {"REQUESTED": "UNPAID", "CANCELLED": "VOID"}


class MandateStatus(ExtensibleEnum):
    """Direct-debit mandate status."""

    CREATED = "CREATED"
    PENDING = "PENDING"
    ACTIVE = "ACTIVE"
    CANCELLED = "CANCELLED"
    MIGRATING = "MIGRATING"


class CustomerFinancialStatus(ExtensibleEnum):
    """A customer's financial position (with ``includeCustomerFinancialDetails``)."""

    DRAFT = "DRAFT"
    OUTSTANDING = "OUTSTANDING"
    PENDING_PAYMENTS = "PENDING_PAYMENTS"
    OVERDUE = "OVERDUE"
    FULLY_PAID = "FULLY_PAID"
    NO_INVOICES = "NO_INVOICES"


class CardOnFileStatus(ExtensibleEnum):
    """Status of a saved card."""

    ACTIVE = "ACTIVE"
    EXPIRED = "EXPIRED"
    REMOVED = "REMOVED"


class CollectionMethod(ExtensibleEnum):
    """A collection method that can be paused and resumed (contract convention 12)."""

    AUTO_COLLECT = "AUTO_COLLECT"
    ON_DEMAND = "ON_DEMAND"


class DistributionCollectionMethod(ExtensibleEnum):
    """How a payment request is collected once sent."""

    AUTO_COLLECT = "AUTO_COLLECT"
    ON_DEMAND = "ON_DEMAND"
    NONE = "NONE"


class ActivationCollectionMethod(ExtensibleEnum):
    """How an invoice or payment request is collected when activated."""

    ONE_TIME_PAYMENT = "ONE_TIME_PAYMENT"
    DIRECT_DEBIT_PAYMENT = "DIRECT_DEBIT_PAYMENT"
    NONE = "NONE"


class CollectionSource(StrEnum):
    """Where a method's paused state comes from."""

    PAYMENT_REQUEST = "PAYMENT_REQUEST"
    CUSTOMER = "CUSTOMER"
    NONE = "NONE"


class ItemsTaxType(StrEnum):
    """Whether line amounts exclude or include tax."""

    EXCLUSIVE = "EXCLUSIVE"
    INCLUSIVE = "INCLUSIVE"
    NONE = "NONE"


class AssociationType(ExtensibleEnum):
    """How a payment request relates to invoices."""

    SINGLE = "SINGLE"
    ONE_TO_ONE = "ONE_TO_ONE"
    PARTIAL = "PARTIAL"
    BATCH = "BATCH"


class PaymentStatus(ExtensibleEnum):
    """Payment status."""

    PENDING = "PENDING"
    SUBMITTED = "SUBMITTED"
    SENT = "SENT"
    SUCCESS = "SUCCESS"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    SETTLED = "SETTLED"


class PaymentMethod(ExtensibleEnum):
    """How a payment was made."""

    BANK_PAYMENT = "BANK_PAYMENT"
    CARD = "CARD"
    APPLE_PAY = "APPLE_PAY"
    GOOGLE_PAY = "GOOGLE_PAY"
    DIRECT_DEBIT = "DIRECT_DEBIT"
    IMPORTED = "IMPORTED"
    MANUAL_BANK_TRANSFER = "MANUAL_BANK_TRANSFER"
    BANK_TRANSFER = "BANK_TRANSFER"
    AMEX = "AMEX"


class PayoutStatus(ExtensibleEnum):
    """Payout status."""

    PENDING = "PENDING"
    IN_TRANSIT = "IN_TRANSIT"
    PAID = "PAID"
    FAILED = "FAILED"


class BulkImportJobStatus(ExtensibleEnum):
    """Status of a bulk import job."""

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    COMPLETED_WITH_ERRORS = "COMPLETED_WITH_ERRORS"
    FAILED = "FAILED"


class BulkImportItemStatus(ExtensibleEnum):
    """Status of one row of a bulk import."""

    PENDING = "PENDING"
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    UNCHANGED = "UNCHANGED"
    DELETED = "DELETED"
    FAILED = "FAILED"
    NOT_DELETED = "NOT_DELETED"


class RecurringInvoiceStatus(ExtensibleEnum):
    """Status of a recurring invoice schedule."""

    DRAFT = "DRAFT"
    ACTIVE = "ACTIVE"
    FINISHED = "FINISHED"
    CANCELLED = "CANCELLED"


class RecurringPaymentRequestStatus(ExtensibleEnum):
    """Status of a recurring payment-request schedule."""

    ACTIVE = "ACTIVE"
    FINISHED = "FINISHED"
    CANCELLED = "CANCELLED"


class WorkflowType(ExtensibleEnum):
    """Kind of workflow."""

    ONE_TIME_PAYMENT = "ONE_TIME_PAYMENT"
    DD_MANDATE_AUTHORISATION = "DD_MANDATE_AUTHORISATION"
    DD_PAYMENT = "DD_PAYMENT"
    CUSTOMER_STATEMENT = "CUSTOMER_STATEMENT"


class WebhookEventKind(ExtensibleEnum):
    """A webhook subscription's event kind (also the ``adfin-webhook-type`` header)."""

    PAYMENT = "payment"
    DD_MANDATE = "dd-mandate"
    INVOICE = "invoice"
    BILLER = "biller"
    CUSTOMER = "customer"
    PAYMENT_REQUEST = "payment-request"
    PAYOUT = "payout"
