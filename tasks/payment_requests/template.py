"""The starter file ``billops template payment-requests`` writes for finance teams to fill in."""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta

STARTER_HEADER = (
    "Customer",
    "Amount",
    "Description",
    "Reference",
    "Pay by",
    "Tax rate",
    "External ID",
)


def starter_payment_request_csv(today: date) -> bytes:
    """A header and two example rows (a customer by name, one by externalId), pay-by in 30 days.

    UTF-8 with a byte-order mark so Excel shows the ``£``; dates day first, as UK teams write
    them. The example customers are placeholders: replace them with the biller's own.
    """
    pay_by = (today + timedelta(days=30)).strftime("%d/%m/%Y")
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(STARTER_HEADER)
    writer.writerow(
        ["Acme Trading Ltd", "£1,250.00", "Consulting, June", "INV-1001", pay_by, "20", ""]
    )
    writer.writerow(["CUST-0042", "99.50", "Support plan", "INV-1002", pay_by, "0", ""])
    return buffer.getvalue().encode("utf-8-sig")
