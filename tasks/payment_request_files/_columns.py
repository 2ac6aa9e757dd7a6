"""Header names a finance person would use, mapped to billops' canonical columns.

Headers are compared after lower-casing and dropping everything but letters and digits, so
``Pay by``, ``pay_by``, ``PAY-BY`` and ``Pay by (dd/mm/yyyy)``-style decorations such as
``Amount (£)`` or ``VAT %`` all match. The contract's own column names (``totalAmount``,
``payByDate``...) are aliases too, so the service's bulk file reads back as an input file.
"""

from __future__ import annotations

import re

from tasks.payment_request_files._model import InputFileError

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

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def normalise_header(name: str) -> str:
    """The comparison key of a header: lower case, letters and digits only."""
    return _NOT_ALNUM.sub("", name.casefold())


ALIAS_TABLE: dict[str, str] = {
    normalise_header(alias): canonical
    for canonical, aliases in HEADER_ALIASES.items()
    for alias in aliases
}


def recognised(header: list[str]) -> int:
    """How many cells of a candidate header row are known column names."""
    return sum(1 for name in header if normalise_header(name) in ALIAS_TABLE)


def map_header(header: list[str], *, where: str) -> dict[str, int]:
    """Canonical column → position in the row, or :class:`InputFileError` naming what is wrong."""
    positions: dict[str, int] = {}
    for position, name in enumerate(header):
        canonical = ALIAS_TABLE.get(normalise_header(name))
        if canonical is None:
            continue
        if canonical in positions:
            first = header[positions[canonical]]
            raise InputFileError(
                f"{where}: columns {first!r} and {name!r} both mean {canonical}; "
                "keep one of them (or rename the other to something billops does not read)"
            )
        positions[canonical] = position
    missing = [column for column in REQUIRED_COLUMNS if column not in positions]
    if not any(column in positions for column in CUSTOMER_COLUMNS):
        missing.insert(0, CUSTOMER)
    if missing:
        found = ", ".join(repr(name) for name in header if name) or "nothing"
        wanted = "; ".join(
            f"{column} (e.g. {', '.join(repr(a) for a in HEADER_ALIASES[column][:3])})"
            for column in missing
        )
        raise InputFileError(
            f"{where}: required column missing: {wanted}. The header row has: {found}"
        )
    return positions
