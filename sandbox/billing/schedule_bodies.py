"""Request bodies of the schedule operations (recurring invoices and payment requests).

Bodies are read exactly (:func:`sandbox.core.bodies.read_json`: JSON numbers become ``Decimal``) and
checked with these models by :func:`sandbox.core.validation.parse_body` (422 naming each offending
field as ``items[0].quantity``). Rules that need the database or several fields (the customer,
the payment term for direct debit, the end date) are checked by :mod:`sandbox.billing.schedules`.
Unknown fields are ignored (the contract's models allow additional properties).
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    field_validator,
)

from sandbox.core.bodies import MAX_MONEY
from sandbox.core.validation import JsonInt

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _iso_date(value: object) -> object:
    """Only ``YYYY-MM-DD`` text (pydantic alone would also take numbers as timestamps)."""
    if isinstance(value, str) and _DATE.match(value):
        return date.fromisoformat(value)
    if isinstance(value, date):
        return value
    raise ValueError("must be a date YYYY-MM-DD")


IsoDate = Annotated[date, BeforeValidator(_iso_date)]
Money = Annotated[
    Decimal, Field(decimal_places=2, allow_inf_nan=False, le=MAX_MONEY, ge=-MAX_MONEY)
]
PositiveMoney = Annotated[Decimal, Field(gt=0, decimal_places=2, allow_inf_nan=False, le=MAX_MONEY)]
TaxRate = Annotated[Decimal, Field(ge=0, le=100, decimal_places=4, allow_inf_nan=False)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=False)


def _gbp_only(value: str) -> str:
    if value != "GBP":
        raise ValueError("only GBP is accepted")
    return value


class Cadence(_Body):
    time_unit: Literal["WEEKS", "MONTHS", "YEARS"] = Field(alias="timeUnit")
    frequency: JsonInt = Field(ge=1)
    start_date: IsoDate = Field(alias="startDate")
    end_date: IsoDate | None = Field(None, alias="endDate")


class CustomerRef(_Body):
    id: str | None = Field(None, min_length=1)
    external_id: str | None = Field(None, alias="externalId", min_length=1)


class PaymentTerm(_Body):
    time_unit: Literal["DAYS"] = Field(alias="timeUnit")
    value: JsonInt = Field(ge=0, le=365)


# Without a payment term, generated documents are due 30 days after their date, as an invoice
# created without a due date is [I].
DEFAULT_TERM_DAYS = 30


def _default_term() -> PaymentTerm:
    return PaymentTerm.model_validate({"timeUnit": "DAYS", "value": DEFAULT_TERM_DAYS})


class ItemInput(_Body):
    description: str = Field(min_length=1, max_length=4000)
    quantity: Decimal = Field(gt=0, decimal_places=4, allow_inf_nan=False, le=MAX_MONEY)
    unit_amount: Money = Field(alias="unitAmount")
    tax_rate: TaxRate | None = Field(None, alias="taxRate")
    tax_rate_id: str | None = Field(None, alias="taxRateId")
    product_id: str | None = Field(None, alias="productId")
    account_code_id: str | None = Field(None, alias="accountCodeId")


class Activation(_Body):
    collection_method: Literal["ONE_TIME_PAYMENT", "DIRECT_DEBIT_PAYMENT", "NONE"] = Field(
        alias="collectionMethod"
    )
    custom_message: str | None = Field(None, alias="customMessage", max_length=1000)
    template_id: str | None = Field(None, alias="templateId")


class InvoiceDetails(_Body):
    customer: CustomerRef
    description: str | None = Field(None, max_length=4000)
    currency_code: str = Field("GBP", alias="currencyCode")
    items_tax_type: Literal["EXCLUSIVE", "INCLUSIVE", "NONE"] = Field(
        "EXCLUSIVE", alias="itemsTaxType"
    )
    items: list[ItemInput] = Field(min_length=1, max_length=500)
    payment_term: PaymentTerm = Field(default_factory=_default_term, alias="paymentTerm")
    auto_send: StrictBool = Field(False, alias="autoSend")
    activation: Activation | None = None

    _currency = field_validator("currency_code")(_gbp_only)


class Distribution(_Body):
    collection_method: Literal["AUTO_COLLECT", "ON_DEMAND", "NONE"] | None = Field(
        None, alias="collectionMethod"
    )
    custom_message: str | None = Field(None, alias="customMessage", max_length=1000)
    template_id: str | None = Field(None, alias="templateId")
    # The contract's Distribution allows null here and reads it as false.
    approved_for_sending: StrictBool | None = Field(False, alias="approvedForSending")


class PaymentRequestDetails(_Body):
    customer: CustomerRef
    payment_term: PaymentTerm = Field(default_factory=_default_term, alias="paymentTerm")
    distribution: Distribution | None = None
    amount: PositiveMoney
    tax_rate: TaxRate | None = Field(None, alias="taxRate")
    currency_code: str = Field(alias="currencyCode")
    description: str = Field(min_length=1, max_length=4000)
    reference: str | None = Field(None, max_length=255)

    _currency = field_validator("currency_code")(_gbp_only)


class RecurringInvoiceBody(_Body):
    """``RecurringInvoiceCreate`` / ``RecurringInvoiceUpdate``."""

    cadence: Cadence
    invoice_details: InvoiceDetails = Field(alias="invoiceDetails")


class RecurringPaymentRequestBody(_Body):
    """``RecurringPaymentRequestCreate`` / ``RecurringPaymentRequestUpdate``."""

    cadence: Cadence
    payment_request_details: PaymentRequestDetails = Field(alias="paymentRequestDetails")
