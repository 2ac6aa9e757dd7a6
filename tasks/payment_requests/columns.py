"""The columns of a payment-request file, by the header names a finance person would use.

Headers are matched as ``tasks/common/finance_files`` does (case and punctuation ignored). The
contract's own column names (``totalAmount``, ``payByDate``...) are aliases too, so the service's
bulk file reads back as an input file.
"""

from __future__ import annotations

from tasks.common.finance_files import ColumnGroup, ColumnSpec

EXTERNAL_ID = "external_id"
CUSTOMER = "customer"  # any of id, externalId or exact name: tried in that order
CUSTOMER_ID = "customer_id"
CUSTOMER_EXTERNAL_ID = "customer_external_id"
CUSTOMER_NAME = "customer_name"
AMOUNT = "amount"
DESCRIPTION = "description"
REFERENCE = "reference"
PAY_BY_DATE = "pay_by_date"
TAX_RATE = "tax_rate"
CURRENCY = "currency"

CUSTOMER_COLUMNS = (CUSTOMER_ID, CUSTOMER_EXTERNAL_ID, CUSTOMER_NAME, CUSTOMER)
REQUIRED_COLUMNS = (AMOUNT, DESCRIPTION)

# Spelled as people write them; normalised when the table is built.
HEADER_ALIASES: dict[str, tuple[str, ...]] = {
    EXTERNAL_ID: ("External ID", "externalId", "External reference ID", "Unique ID", "Row ID"),
    CUSTOMER: ("Customer", "Client", "Payer", "Debtor", "Contact"),
    CUSTOMER_ID: ("Customer ID", "customerId", "Client ID", "Adfin customer ID"),
    CUSTOMER_EXTERNAL_ID: (
        "Customer external ID",
        "customerExternalId",
        "Customer ref",
        "Customer reference",
        "Customer code",
        "Account code",
        "Account ref",
        "Contact ID",
    ),
    CUSTOMER_NAME: ("Customer name", "Client name", "Contact name", "Account name", "Company name"),
    AMOUNT: (
        "Amount",
        "totalAmount",
        "Total",
        "Total amount",
        "Gross",
        "Gross amount",
        "Amount due",
        "Total due",
        "Amount inc VAT",
        "Total inc VAT",
        "Value",
    ),
    DESCRIPTION: ("Description", "Details", "Memo", "Narrative", "Item", "Item description"),
    REFERENCE: (
        "Reference",
        "Ref",
        "Payment reference",
        "Payment ref",
        "Invoice number",
        "Invoice no",
        "Invoice ref",
        "Invoice reference",
        "Your ref",
    ),
    PAY_BY_DATE: (
        "Pay by",
        "payByDate",
        "Pay by date",
        "Due date",
        "Due",
        "Due by",
        "Date due",
        "Payment due",
        "Payment due date",
    ),
    TAX_RATE: ("Tax rate", "taxRate", "Tax", "VAT", "VAT rate", "Tax percent", "VAT percent"),
    CURRENCY: ("Currency", "currencyCode", "Currency code", "CCY"),
}

SPEC = ColumnSpec(
    aliases=HEADER_ALIASES,
    required=REQUIRED_COLUMNS,
    groups=(ColumnGroup(CUSTOMER, CUSTOMER_COLUMNS),),
)
