"""Models of the biller, customers and their settings, saved cards and direct-debit mandates."""

from __future__ import annotations

from datetime import date

from billing_api.types._base import ApiModel, Money, Timestamp
from billing_api.types.enums import (
    CardOnFileStatus,
    CollectionMethod,
    CustomerFinancialStatus,
    DistributionCollectionMethod,
    MandateStatus,
    PaymentMethod,
)

__all__ = [
    "Address",
    "AutopilotGuidance",
    "AutopilotSettings",
    "BankAccount",
    "Biller",
    "BillerPaymentDetail",
    "CardOnFile",
    "CardOnFileRequestResult",
    "Customer",
    "CustomerFinancialDetails",
    "CustomerMandateSummary",
    "CustomerPaymentSettings",
    "CustomerRef",
    "CustomerWorkflowSettings",
    "EntityRef",
    "ExternalData",
    "Mandate",
    "Person",
]


class ExternalData(ApiModel):
    """A reference in an accounting system or channel (Xero, QuickBooks, ...)."""

    connector_type: str | None = None
    id: str | None = None
    name: str | None = None


class EntityRef(ApiModel):
    """A reference to another resource by id (with its name where the service adds it)."""

    id: str
    name: str | None = None
    external_id: str | None = None


class CustomerRef(ApiModel):
    """A customer named by the service's id or by the biller's external id."""

    id: str | None = None
    external_id: str | None = None


class Person(ApiModel):
    """A contact person of a customer."""

    id: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    phone_no: str | None = None
    is_primary_contact: bool | None = None
    is_included_in_communications: bool | None = None


class Address(ApiModel):
    """A postal address."""

    id: str | None = None
    address_line1: str | None = None
    address_line2: str | None = None
    city: str | None = None
    postal_code: str | None = None
    country: str | None = None


class BillerPaymentDetail(ApiModel):
    """How the biller's customers can pay it directly."""

    type: str | None = None
    account_name: str | None = None
    sort_code: str | None = None
    account_number: str | None = None
    reference: str | None = None


class BankAccount(ApiModel):
    """A bank account of the biller (payouts go to the payout account)."""

    id: str | None = None
    account_name: str | None = None
    sort_code: str | None = None
    account_number_last4: str | None = None
    is_payout_account: bool | None = None


class Biller(ApiModel):
    """The biller of the authenticated user (``GET /biller``)."""

    id: str
    name: str
    status: str
    creation_time: Timestamp
    last_updated_time: Timestamp
    statement_name: str | None = None
    alias: str | None = None
    registration_no: str | None = None
    currency_code: str | None = None
    country_code: str | None = None
    timezone: str | None = None
    website: str | None = None
    vat_registration_no: str | None = None
    billing_email: str | None = None
    payment_details: list[BillerPaymentDetail] = []
    bank_accounts: list[BankAccount] = []
    locations: list[Address] = []


class CustomerMandateSummary(ApiModel):
    """The customer's current mandate, as embedded in the customer."""

    id: str | None = None
    status: MandateStatus | None = None
    url: str | None = None
    signed_time: Timestamp | None = None


class CustomerFinancialDetails(ApiModel):
    """Totals of a customer's invoices (money strings on the wire)."""

    financial_status: CustomerFinancialStatus | None = None
    outstanding_amount: Money | None = None
    overdue_amount: Money | None = None
    paid_amount: Money | None = None
    invoice_count: int | None = None


class Customer(ApiModel):
    """A customer of the biller."""

    id: str
    name: str
    creation_time: Timestamp
    last_updated_time: Timestamp
    external_id: str | None = None
    people: list[Person] = []
    addresses: list[Address] = []
    external_data: ExternalData | None = None
    timezone: str | None = None
    direct_debit_mandate: CustomerMandateSummary | None = None
    financial_details: CustomerFinancialDetails | None = None


class CustomerWorkflowSettings(ApiModel):
    """Which workflows apply to a customer."""

    customer_id: str
    on_demand_workflow_id: str | None = None
    auto_collect_workflow_id: str | None = None
    mandate_workflow_id: str | None = None
    statement_workflow_id: str | None = None
    reminders_enabled: bool | None = None
    last_updated_time: Timestamp | None = None


class CustomerPaymentSettings(ApiModel):
    """How a customer pays, and the customer-level collection pause."""

    customer_id: str
    default_collection_method: DistributionCollectionMethod | None = None
    allowed_payment_methods: list[PaymentMethod] = []
    dd_retry_count: int | None = None
    paused_collection_methods: list[CollectionMethod] = []
    collection_paused_until: date | None = None
    last_updated_time: Timestamp | None = None


class AutopilotGuidance(ApiModel):
    """The free-text guidance for the AI collections agent."""

    id: str | None = None
    guidance: str | None = None
    creation_time: Timestamp | None = None
    last_updated_time: Timestamp | None = None


class AutopilotSettings(ApiModel):
    """A customer's autopilot settings."""

    customer_id: str
    settings: AutopilotGuidance


class CardOnFile(ApiModel):
    """A saved card of a customer."""

    id: str
    customer_id: str
    brand: str
    last4: str
    expiry_month: int
    expiry_year: int
    status: CardOnFileStatus
    creation_time: Timestamp


class CardOnFileRequestResult(ApiModel):
    """A card-detail request sent to a customer."""

    customer_id: str
    url: str
    sent_to: list[str] = []
    requested_time: Timestamp
    expires_at: Timestamp | None = None


class Mandate(ApiModel):
    """A Bacs direct-debit mandate. Note the service's ``lastUpdateTime`` (not ``lastUpdated``)."""

    id: str
    status: MandateStatus
    creation_time: Timestamp
    last_update_time: Timestamp
    customer_id: str | None = None
    customer: EntityRef | None = None
    status_reason_code: str | None = None
    failure_reason: str | None = None
    can_be_reinstated: bool | None = None
    url: str | None = None
    redirect_url: str | None = None
    bank_account_number: str | None = None
    distribution_time: Timestamp | None = None
    authorisation_time: Timestamp | None = None
    submission_time: Timestamp | None = None
    last_seen_time: Timestamp | None = None
